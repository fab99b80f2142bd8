"""Type stubs of the extension module ``cpbench._cpbench`` (Rust, PyO3). Use the public API
of ``cpbench`` instead; these are its building blocks."""

from os import PathLike
from typing import Any, Callable, Sequence

from numpy.typing import NDArray

__version__: str
#: The residual columns of summary.csv and traces, in their order.
RESIDUAL_NAMES: list[str]

class Buffer:
    """A read-only 1-D buffer over Rust-owned memory (format ``d`` or ``q``); wrap with
    ``numpy.frombuffer(buf, dtype=buf.dtype)`` (no copy)."""

    @property
    def dtype(self) -> str: ...
    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

class RawInstance:
    """A Rust instance shared with Python (wrapped by ``cpbench.Instance``)."""

    @property
    def n(self) -> int: ...
    @property
    def nnz(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def cls(self) -> str: ...
    @property
    def hash(self) -> str: ...
    @property
    def cone_dim(self) -> int | None: ...
    @property
    def contacts(self) -> int | None: ...
    @property
    def joints(self) -> int: ...
    @property
    def symmetric(self) -> bool: ...
    @property
    def operator(self) -> str: ...
    @property
    def provenance_json(self) -> str: ...
    @property
    def compliance(self) -> list[float] | None: ...
    def with_compliance(self, compliance: NDArray[Any]) -> RawInstance: ...
    def buffer(self, name: str) -> Buffer | None: ...
    def project(self, gamma: NDArray[Any]) -> Buffer: ...
    def matvec(self, x: NDArray[Any]) -> Buffer: ...

def replay(
    path: str,
    out: str,
    solvers: list[str] | None = ...,
    tol: float = ...,
    max_iter: int = ...,
    time_limit: float | None = ...,
    cls: str | None = ...,
) -> None: ...

class PySolver:
    """A Python callable as a driven solver (made by ``cpbench.PythonSolver``)."""

    def __init__(
        self,
        func: Callable[..., Any],
        name: str,
        settings: dict[str, Any],
        settings_json: str,
        qualname: str,
    ) -> None: ...
    @property
    def name(self) -> str: ...

class Callback:
    """``callback(gamma) -> bool`` handed to a Python solver."""

    def __call__(self, gamma: Any) -> bool: ...
    @property
    def iterations(self) -> int | None: ...
    @property
    def elapsed(self) -> float | None: ...

def load(path: str | PathLike[str], cls: str | None = None, symmetrize: bool = False) -> RawInstance: ...
def from_arrays(
    n: int,
    indptr: NDArray[Any],
    indices: NDArray[Any],
    data: NDArray[Any],
    r: NDArray[Any],
    mu: NDArray[Any] | None = None,
    lo: NDArray[Any] | None = None,
    hi: NDArray[Any] | None = None,
    cls: str | None = None,
    name: str = "python",
    cone_dim: int = 3,
    symmetrize: bool = False,
    joints: NDArray[Any] | None = None,
) -> RawInstance: ...
def save(inst: RawInstance, path: str | PathLike[str], format: str | None = None) -> str: ...
def residuals(inst: RawInstance, gamma: NDArray[Any]) -> dict[str, float]: ...
def solve(
    inst: RawInstance,
    solver: str | PySolver,
    tol: float = 1e-6,
    max_iter: int = 20000,
    settings: str | None = None,
    warm_start: NDArray[Any] | None = None,
    residual: str | None = None,
    time_limit: float | None = None,
    trace_every: int = 1,
    external: str | None = None,
    py_instance: Any = None,
) -> dict[str, Any]: ...
def run(
    out: str | PathLike[str],
    suite: str | None = None,
    paths: Sequence[str] | None = None,
    solvers: Sequence[str | PySolver] | None = None,
    tol: float | None = None,
    max_iter: int = 20000,
    cls: str | None = None,
    symmetrize: bool = False,
    external: str | None = None,
    time_limit: float | None = None,
    plots: bool = True,
    jobs: int = 1,
    residual: str | None = None,
    settings: str | None = None,
    variants: str | None = None,
    rerun: bool = False,
    trace_every: int = 1,
    fail_fast: bool = False,
    stall_window: str | None = None,
    check_every: int | None = None,
) -> dict[str, Any]: ...
def default_out_dir() -> str: ...
def solver_names() -> list[str]: ...
