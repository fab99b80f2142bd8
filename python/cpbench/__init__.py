"""cpbench: the complementarity problems of contact dynamics from Python.

cpbench is a Rust workbench for the problems ``min 1/2 gamma^T N gamma + r^T gamma`` over
``gamma in K`` and their complementarity forms: linear complementarity problems (LCP, ``K``
the nonnegative orthant), box QPs, cone complementarity problems on Coulomb friction cones
(CCP) and the true Coulomb friction problem of fclib and Siconos. This package exposes its
readers, writers, solvers and harness:

- :func:`load` reads every format the ``cpbench`` command reads (fclib HDF5, Siconos
  ``.dat``, bundle folders, ``.npz``); :meth:`Instance.from_arrays` builds an instance from
  NumPy / SciPy arrays; :func:`save` writes bundles, fclib files and ``.npz``.
- :func:`solve` runs one solver (a registry name such as ``"apgd"``, an external program
  ``ext:NAME`` / ``siconos:NAME``, or a Python function) on one instance through the same
  executor as ``cpbench run``; the answer is checked by the harness (``Result.success``).
- :func:`residuals` computes every residual of an answer exactly as ``summary.csv`` does.
- :func:`run` runs a solver x instance matrix into a results folder (``summary.csv``,
  ``traces/``, ``manifest.json``, ``plots/``), as ``cpbench run`` does.

Arrays are NumPy float64 (indices int64). Arrays of an instance are read-only views of the
memory Rust holds (no copy); copy them to modify. Errors raise :class:`CpbenchError` (a
``ValueError``) or :class:`CpbenchFileNotFoundError` (also a ``FileNotFoundError``) with the
message the command line prints.

Python solvers are functions ``f(N, r, cone, settings, callback) -> gamma``:

- ``N``: ``scipy.sparse.csr_array`` (n x n), ``r``: ``numpy.ndarray`` (n,), both read-only;
- ``cone``: dict with ``class`` (``lcp``, ``box``, ``ccp``, ``coulomb``, ``blcp``), ``mu``
  (friction coefficients, (contacts,), or ``None``), ``lo`` / ``hi`` (box bounds, (n,), or
  ``None``), ``dim`` (unknowns per contact, 2 or 3, or ``None``), ``contacts`` (or ``None``);
- ``settings``: the ``settings`` dict given to :func:`solve` / :class:`PythonSolver`, plus the
  harness's ``tol``, ``max_iter``, ``time_limit`` (seconds or ``None``), ``residual`` (the
  stopping residual's column name) and ``gamma0`` (the start point, (n,), already in ``K``);
- ``callback(gamma)``: records ``gamma`` (n,) as an iterate; the harness computes its
  residuals and returns ``False`` when the solver should stop (converged to ``tol``,
  ``max_iter`` iterates recorded, time budget spent, diverged);
- return ``gamma`` (n,), or ``(gamma, info)`` with ``info`` optionally holding ``status``
  (the solver's claim: ``converged``, ``max_iterations``, ...), ``iterations`` and ``message``.

An exception raised by the function ends the solve with status ``crashed`` (its type, message
and where it was raised in ``message``); an iterate or answer of the wrong length or shape
with status ``bad_output``. Its name in results is ``py:<function __name__>``. Like every
solver's, its answer is checked by the harness: ``success`` is the harness's verdict, never
the function's claim. The time budget is enforced through the callback (a function that never
calls it is not interrupted). :func:`solve` hands the function the instance's own arrays;
:func:`run` (which loads its instances in Rust) a copy made once per solve.

The harness runs solves with the GIL released (``run(..., jobs=k)`` runs ``k`` at once on
worker threads); a Python solver takes the GIL for its own work.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

import numpy as np
import scipy.sparse as sp

from . import _cpbench
from ._errors import CpbenchError, CpbenchFileNotFoundError

__all__ = [
    "CpbenchError",
    "CpbenchFileNotFoundError",
    "Instance",
    "PythonSolver",
    "Result",
    "RESIDUAL_NAMES",
    "load",
    "replay",
    "residuals",
    "run",
    "save",
    "solve",
    "solver_names",
]

__version__: str = _cpbench.__version__

#: The residual columns of ``summary.csv`` and of traces, in their order (see
#: :func:`residuals` for their meaning).
RESIDUAL_NAMES: tuple[str, ...] = tuple(_cpbench.RESIDUAL_NAMES)

PathLike = Union[str, "os.PathLike[str]"]
SolverFunction = Callable[..., Any]


def _array(buf: Any) -> np.ndarray:
    """A read-only NumPy view of a Rust buffer (no copy; the buffer keeps its owner alive)."""
    return np.frombuffer(buf, dtype=buf.dtype)


def _dtype_of(v: Any) -> Any:
    """The dtype of an array, sparse matrix or array-like (NumPy's guess for a list)."""
    return v.dtype if hasattr(v, "dtype") else np.asarray(v).dtype


def _is_complex(v: Any) -> bool:
    """Whether ``v`` holds complex numbers (NumPy would drop their imaginary parts with only
    a warning when converting to float64)."""
    return np.dtype(_dtype_of(v)).kind == "c"


class Instance:
    """A problem instance ``(N, r, K)``: minimise ``1/2 gamma^T N gamma + r^T gamma`` over
    ``gamma in K`` (LCP, box QP, CCP), or the complementarity problem on the same data (a
    general LCP with a non-symmetric ``N``, the Coulomb problem, the boxed LCP).

    Made by :func:`load` or :meth:`Instance.from_arrays`; immutable. The arrays are read-only
    views of the memory the Rust instance owns (no copy), valid as long as any of them lives.
    """

    __slots__ = ("_raw", "_cache")

    def __init__(self, raw: _cpbench.RawInstance) -> None:
        """Wrap a ``cpbench._cpbench.RawInstance`` (use :func:`load` or
        :meth:`Instance.from_arrays` to make one)."""
        if not isinstance(raw, _cpbench.RawInstance):
            raise TypeError("Instance wraps a cpbench._cpbench.RawInstance: use cpbench.load "
                            "or Instance.from_arrays")
        self._raw = raw
        self._cache: dict[str, Any] = {}

    @staticmethod
    def from_arrays(
        N: Any,
        r: Any,
        mu: Any = None,
        lo: Any = None,
        hi: Any = None,
        cls: str | None = None,
        name: str = "python",
        *,
        cone_dim: int | None = None,
        symmetrize: bool = False,
        joints: Any = None,
    ) -> "Instance":
        """Build an instance from arrays (copied into Rust).

        Args:
            N: the matrix, ``n x n``: any ``scipy.sparse`` matrix or array, or a dense
                array-like. Duplicate entries are summed. Must be symmetric (up to a relative
                ``1e-12``, removed as rounding) unless ``symmetrize`` or the class keeps a
                non-symmetric matrix (a general LCP, ``coulomb``, ``blcp``).
            r: the vector, length ``n`` (the gradient is ``N gamma + r``).
            mu: friction coefficients, one per contact (length ``n / cone_dim``): Coulomb
                cones, a CCP (``cls="coulomb"``: the true Coulomb problem; ``cls="blcp"``:
                friction boxes, 3-D).
            lo, hi: box bounds, length ``n`` (``-inf`` / ``inf`` allowed): a box QP.
            cls: ``None`` for the class the arrays make (``mu`` -> ``ccp``,
                ``lo``/``hi`` -> ``box``, neither -> ``lcp``), or ``coulomb`` / ``blcp``.
            name: the instance name.
            cone_dim: unknowns per contact (2 or 3); default ``n / len(mu)`` when that is 2,
                else 3.
            symmetrize: replace a non-symmetric ``N`` by ``(N + N^T)/2`` (recorded in the
                provenance).
            joints: block indices (integers) of the bilateral (joint) blocks of the cones:
                free blocks whose velocity ``(N gamma + r)_b`` is 0 at a solution
                (docs/formulation.md, "Bilateral rows"). The storage keeps joints first, so
                they must be the blocks ``0..J`` (any order); ``mu`` has one entry per block,
                0 on the joints. ``cls="coulomb"`` keeps them, ``cls="blcp"`` refuses them;
                only the solvers that take joints run on them (``pgs``, ``jacobi``, ``nsgs``,
                ``apgd``, ``spgqp``, ``bb``, ``mpgp``, ``admm``, ``ipm``).

        Raises:
            CpbenchError: sizes that do not match, non-finite values, a non-symmetric ``N``
                where a symmetric one is needed, ``mu < 0``, ``lo > hi``, a joint block index
                that is not an integer, negative, out of range, given twice, or not among the
                leading blocks, joints without ``mu``, ``mu != 0`` on a joint, ...
        """
        for what, v in (("N", N), ("r", r), ("mu", mu), ("lo", lo), ("hi", hi)):
            if v is not None and _is_complex(v):
                raise CpbenchError(
                    f"{what} is complex (dtype {_dtype_of(v)}): the problems are real; pass "
                    f"{what}.real if the imaginary parts are only rounding"
                )
        if sp.issparse(N):
            A = sp.csc_array(N, dtype=np.float64, copy=True)
        else:
            dense = np.asarray(N, dtype=np.float64)
            if dense.ndim != 2:
                raise CpbenchError(f"N must be a matrix (2-D), got shape {dense.shape}")
            A = sp.csc_array(dense)
        if A.shape[0] != A.shape[1]:
            raise CpbenchError(f"matrix is not square: {A.shape[0]} x {A.shape[1]}")
        A.sum_duplicates()
        A.sort_indices()
        n = A.shape[0]
        vec = lambda v: None if v is None else np.ascontiguousarray(v, dtype=np.float64).ravel()
        mu_, lo_, hi_ = vec(mu), vec(lo), vec(hi)
        if (lo_ is None) != (hi_ is None):
            raise CpbenchError("a box needs both lo and hi")
        if cone_dim is None:
            cone_dim = 2 if (mu_ is not None and len(mu_) > 0 and 2 * len(mu_) == n) else 3
        joints_ = None
        if joints is not None:
            j = np.asarray(joints)
            if j.dtype.kind not in "iu" and not (j.size == 0 and j.dtype.kind == "f"):
                raise CpbenchError(
                    f"joints must be integer block indices, got dtype {j.dtype}: {joints!r}"
                )
            joints_ = np.ascontiguousarray(j, dtype=np.int64).ravel()
        raw = _cpbench.from_arrays(
            n,
            np.ascontiguousarray(A.indptr, dtype=np.int64),
            np.ascontiguousarray(A.indices, dtype=np.int64),
            np.ascontiguousarray(A.data, dtype=np.float64),
            vec(r),
            mu_,
            lo_,
            hi_,
            cls,
            name,
            cone_dim,
            symmetrize,
            joints_,
        )
        return Instance(raw)

    # -- the arrays ---------------------------------------------------------------------

    def _field(self, key: str) -> np.ndarray | None:
        if key not in self._cache:
            buf = self._raw.buffer(key)
            self._cache[key] = None if buf is None else _array(buf)
        return self._cache[key]

    @property
    def N(self) -> sp.csr_array:
        """The matrix ``N`` (``n x n``) as a ``scipy.sparse.csr_array`` whose ``data``,
        ``indices`` (int64) and ``indptr`` (int64) are read-only views of the Rust instance's
        memory, without a copy: ``N`` is stored in compressed columns with both triangles,
        which are the compressed rows of ``N^T``; for a symmetric ``N`` these are the rows of
        ``N`` itself, and for a non-symmetric ``N`` (a general LCP, a Coulomb ``W``) the
        instance's stored transpose (``Instance::row_matrix``) is shown, whose columns are the
        rows of ``N``. An instance held in block storage (large granular problems) forms its
        compressed arrays once, on first use, and keeps them."""
        if "N" not in self._cache:
            indptr = self._field("indptr")
            indices = self._field("indices")
            data = self._field("data")
            n = self.n
            A = sp.csr_array((data, indices, indptr), shape=(n, n), copy=False)
            # SciPy may narrow the index arrays to int32 (a copy): keep the shared ones
            if not np.shares_memory(A.indices, indices) or not np.shares_memory(A.indptr, indptr):
                A.indices = indices
                A.indptr = indptr
            A.has_sorted_indices = True
            A.has_canonical_format = True
            self._cache["N"] = A
        return self._cache["N"]

    @property
    def r(self) -> np.ndarray:
        """The vector ``r``, shape ``(n,)``, float64, read-only (the gradient is
        ``N gamma + r``; fclib's ``q``)."""
        out = self._field("r")
        assert out is not None
        return out

    @property
    def mu(self) -> np.ndarray | None:
        """Friction coefficients, shape ``(contacts,)``, read-only; ``None`` without friction
        (LCP, box QP)."""
        return self._field("mu")

    @property
    def lo(self) -> np.ndarray | None:
        """Lower bounds of a box QP, shape ``(n,)``, read-only; ``None`` for other classes."""
        return self._field("lo")

    @property
    def hi(self) -> np.ndarray | None:
        """Upper bounds of a box QP, shape ``(n,)``, read-only; ``None`` for other classes."""
        return self._field("hi")

    # -- scalars --------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """Number of unknowns."""
        return self._raw.n

    @property
    def nnz(self) -> int:
        """Stored entries of ``N`` (both triangles)."""
        return self._raw.nnz

    @property
    def cone_dim(self) -> int | None:
        """Unknowns per contact: 3 (or 2 for planar problems) for Coulomb cones, 3 for
        friction boxes; ``None`` for LCPs and box QPs."""
        return self._raw.cone_dim

    @property
    def contacts(self) -> int | None:
        """Number of contacts (``len(mu)``) of a frictional instance, else ``None``."""
        return self._raw.contacts

    @property
    def joints(self) -> int:
        """Number of bilateral (joint) blocks of the cones: blocks ``0..joints`` are free, their
        velocity is 0 at a solution (docs/formulation.md, "Bilateral rows"); 0 without."""
        return self._raw.joints

    @property
    def cls(self) -> str:
        """The class: ``lcp``, ``box``, ``ccp``, ``coulomb`` or ``blcp`` (the ``class``
        column of ``summary.csv``)."""
        return self._raw.cls

    @property
    def name(self) -> str:
        """The instance name (file stem plus the derivation suffix, e.g. ``Rover4396__ccp``)."""
        return self._raw.name

    @property
    def hash(self) -> str:
        """Content hash: SHA-256 (hex) of the class, ``N``, ``r`` and the constraint data;
        independent of the name and the file format."""
        return self._raw.hash

    @property
    def symmetric(self) -> bool:
        """Whether ``N`` is stored symmetric (false for a general LCP or a Coulomb problem
        that keeps a non-symmetric ``W``)."""
        return self._raw.symmetric

    @property
    def operator(self) -> str:
        """The storage behind products with ``N``: ``csc``, ``block`` or ``matrix-free``."""
        return self._raw.operator

    @property
    def provenance(self) -> dict[str, Any]:
        """Where the instance came from: ``source``, ``format``, ``derivation``,
        ``parameters``, ... (as in ``instance.json`` and manifests)."""
        return json.loads(self._raw.provenance_json)

    @property
    def cone(self) -> dict[str, Any]:
        """The set ``K`` as handed to Python solvers: ``class``, ``mu``, ``lo``, ``hi``,
        ``dim``, ``contacts`` (``None`` where not applicable)."""
        return {
            "class": self.cls,
            "mu": self.mu,
            "lo": self.lo,
            "hi": self.hi,
            "dim": self.cone_dim,
            "contacts": self.contacts,
        }

    @property
    def compliance(self) -> np.ndarray | None:
        """The diagonal compliance ``R`` already included in ``N`` (shape ``(n,)``, units of
        ``N``), ``None`` for a rigid problem; see :meth:`with_compliance`."""
        c = self._raw.compliance
        return None if c is None else np.asarray(c, dtype=np.float64)

    # -- operations -----------------------------------------------------------------------

    def with_compliance(self, compliance: Any) -> Instance:
        """The compliant problem ``(N + R, r)`` of a diagonal compliance ``R`` (shape
        ``(n,)``, entries ``>= 0``; MuJoCo's and Drake SAP's regularisation, docs/formulation.md
        "Compliant contact"), a new instance; ``R`` is added to ``N`` (every solver sees
        ``N + R``) and kept in :attr:`compliance`. Raises :class:`CpbenchError` for a wrong
        length or a negative or non-finite entry (named by its index)."""
        r = np.ascontiguousarray(compliance, dtype=np.float64)
        return Instance(self._raw.with_compliance(r))

    def project(self, gamma: Any) -> np.ndarray:
        """The projection of ``gamma`` (shape ``(n,)``) onto ``K`` (a new array), with the
        projections cpbench's solvers use. Raises :class:`CpbenchError` for a wrong length."""
        return _array(self._raw.project(np.ascontiguousarray(gamma, dtype=np.float64)))

    def residuals(self, gamma: Any) -> dict[str, float]:
        """:func:`residuals` of ``gamma`` for this instance."""
        return residuals(self, gamma)

    def __repr__(self) -> str:
        extra = f", contacts={self.contacts}" if self.contacts is not None else ""
        return f"Instance(name={self.name!r}, cls={self.cls!r}, n={self.n}, nnz={self.nnz}{extra})"


def solver_names() -> list[str]:
    """Names of cpbench's registry solvers and presets (``cpbench solvers`` describes each
    one's classes and settings)."""
    return list(_cpbench.solver_names())


def load(
    path: PathLike, cls: str | None = None, symmetrize: bool = False, operator: str | None = None
) -> Instance:
    """Read an instance file or bundle folder.

    Args:
        path: an fclib HDF5 file (local or global, condensed), a Siconos ``.dat`` (3-D / 2-D
            friction problem, LCP, global problem), a bundle folder (``N.mtx``, ``r.mtx``,
            ``instance.json``) or an ``.npz`` written by cpbench; the format is detected from
            the content.
        cls: how a frictional file is read, as ``cpbench --class``: ``ccp`` (default: the
            cones as they are, the CCP relaxation), ``lcp`` (the frictionless normal block),
            ``coulomb`` (the true Coulomb problem, ``W`` kept as read), ``blcp`` (friction
            boxes), ``lcp-pyramid[:k]`` (the friction-pyramid LCP with ``k`` facets).
        symmetrize: replace a non-symmetric ``N`` by ``(N + N^T)/2``, as ``--symmetrize``.
        operator: the storage of ``N``, as ``--operator``: ``auto`` (default), ``csc``,
            ``block``, or ``matrix-free`` (a global fclib or Siconos file read as a CCP keeps
            its ``M`` and ``H``: ``N = H^T M^-1 H`` is never formed; ``Instance.operator``
            says which storage was taken).

    Raises:
        CpbenchFileNotFoundError: the path does not exist.
        CpbenchError: an unreadable or inconsistent file, an invalid ``cls`` or ``operator``,
            a stored ``N`` asked to be matrix-free (the messages of ``cpbench info``).
    """
    return Instance(_cpbench.load(os.fspath(path), cls, symmetrize, operator))


def save(instance: Instance, path: PathLike, format: str | None = None) -> Path:
    """Write ``instance`` to ``path`` and return the path.

    Args:
        instance: the instance.
        path: a folder for a bundle (``N.mtx``, ``r.mtx``, ``instance.json``), a ``.hdf5`` /
            ``.h5`` file for an fclib local problem (Coulomb-cone instances only), an ``.npz``
            file for NumPy arrays (SciPy's CSC layout for ``N``).
        format: ``bundle``, ``fclib`` or ``npz`` to override the choice by extension (that of
            ``cpbench convert``).

    Raises:
        CpbenchError: a class the format cannot hold, an I/O error, an unknown format.
    """
    _cpbench.save(instance._raw, os.fspath(path), format)
    return Path(path)


def residuals(instance: Instance, gamma: Any) -> dict[str, float]:
    """Every residual of ``gamma`` (shape ``(n,)``) for ``instance``, keyed by the columns
    of ``summary.csv`` (:data:`RESIDUAL_NAMES`): natural-map residuals ``nat_map_*``
    (absolute, relative to ``||r||``, 2- and inf-norms), projected gradient ``proj_grad_*``,
    Chrono's ``res4``, feasibility ``primal_feas`` (``dist(gamma, K)``) and ``dual_feas``,
    ``complementarity`` (``|gamma^T g|``) and its largest per-contact term, the
    ``objective``, Siconos' ``fc3d_error`` and Heyn's ``res3``. The same function (and so the
    same floats, bit for bit) as the harness's check.

    Raises:
        CpbenchError: a wrong length.
    """
    return dict(_cpbench.residuals(instance._raw, np.ascontiguousarray(gamma, dtype=np.float64)))


class PythonSolver:
    """A Python function as a cpbench solver (for :func:`solve` and :func:`run`).

    ``func(N, r, cone, settings, callback) -> gamma`` (see the module documentation). Its
    results carry the name ``py:<name>`` (default: the function's ``__name__``) and, for the
    settings hash of result rows, ``settings`` as JSON (values JSON cannot hold are written
    with ``repr``).
    """

    __slots__ = ("func", "name", "settings", "_solver")

    def __init__(
        self,
        func: SolverFunction,
        name: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(func):
            raise TypeError("PythonSolver needs a callable")
        self.func = func
        self.name = name or getattr(func, "__name__", "solver")
        self.settings = dict(settings or {})
        qualname = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', self.name)}"
        self._solver = _cpbench.PySolver(
            func,
            self.name,
            self.settings,
            json.dumps(self.settings, sort_keys=True, default=repr),
            qualname,
        )

    def __repr__(self) -> str:
        return f"PythonSolver({self._solver.name!r})"


def _call_solver(
    func: SolverFunction,
    inst: Any,
    settings: Mapping[str, Any],
    exec_: Mapping[str, Any],
    callback: Any,
) -> dict[str, Any]:
    """Called by the Rust side of a Python solve: hand ``func`` the instance's arrays and
    normalise its answer for the executor (``gamma`` as a contiguous float64 1-D array, the
    optional claims, or ``bad_output`` with a reason)."""
    if isinstance(inst, _cpbench.RawInstance):
        inst = Instance(inst)
    s = dict(settings)
    s.update(
        tol=exec_["tol"],
        max_iter=exec_["max_iter"],
        time_limit=exec_["time_limit"],
        residual=exec_["residual"],
        gamma0=_array(exec_["gamma0"]),
    )
    out = func(inst.N, inst.r, inst.cone, s, callback)
    info: Mapping[str, Any] = {}
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Mapping):
        out, info = out
    if out is None:
        return {"gamma": None}
    try:
        gamma = np.ascontiguousarray(out, dtype=np.float64)
    except (TypeError, ValueError) as e:
        return {"bad_output": f"the answer is not an array of floats: {e}"}
    if gamma.ndim != 1:
        return {"bad_output": f"the answer has shape {gamma.shape}, expected ({inst.n},)"}
    return {
        "gamma": gamma,
        "status": info.get("status"),
        "iterations": info.get("iterations"),
        "message": info.get("message"),
    }


def _frame(columns: Sequence[tuple[str, Any]]) -> Any:
    """A pandas DataFrame of ``(name, buffer)`` columns, or a dict of arrays without pandas."""
    data = {k: _array(b) for k, b in columns}
    try:
        import pandas as pd
    except ImportError:
        return data
    return pd.DataFrame(data)


@dataclass(frozen=True)
class Result:
    """The outcome of :func:`solve`.

    Attributes:
        solver: the solver's name (``apgd``, ``py:my_solver``, ``ext:NAME``).
        gamma: the answer, shape ``(n,)`` (the best iterate for cpbench's solvers).
        status: the solver's claim (``converged``, ``max_iterations``, ``max_time``,
            ``stalled``, ``diverged``, ``numerical_error``, ``unsupported``, ``crashed``,
            ``bad_output``, ...), the ``status`` column of ``summary.csv``.
        success: the harness's own verdict on ``gamma``: residuals recomputed, the check
            residual ``<= tol`` and ``dist(gamma, K) <= tol max(1, ||gamma||)`` (the
            ``success`` column), whatever the solver claims.
        iterations: iterations run.
        matvecs: products with ``N`` counted (0 for Python and external solvers).
        time: solver time in seconds (monitoring excluded).
        residuals: every residual of ``gamma`` (:func:`residuals`), as ``summary.csv``.
        message: the solver's or the error's message ('' when none).
        trace: one row per recorded iterate (the start point is iteration 0) with the
            columns of ``traces/*.csv`` (``iteration``, ``time_s``, ``matvecs``, the residual
            columns, solver-specific extras): a pandas DataFrame, or a dict of NumPy arrays
            when pandas is not installed.
        best_iteration: the iteration that produced ``gamma``.
        check_residual: the residual ``success`` compares with ``tol``.
        counters: solver-specific counters at the end.
    """

    solver: str
    gamma: np.ndarray
    status: str
    success: bool
    iterations: int
    matvecs: int
    time: float
    residuals: dict[str, float]
    message: str
    trace: Any
    best_iteration: int = 0
    check_residual: str = "nat_map_rel_2"
    counters: dict[str, float] = field(default_factory=dict)


def _as_solver(solver: Any, name: str | None, settings: Mapping[str, Any] | None) -> Any:
    """What the Rust side takes for ``solver``: a name, or the ``PySolver`` of a callable."""
    if isinstance(solver, str):
        return solver
    if isinstance(solver, PythonSolver):
        return solver._solver
    if callable(solver):
        return PythonSolver(solver, name=name, settings=settings)._solver
    raise TypeError(f"a solver is a registry name (str), a function or a PythonSolver, not {type(solver).__name__}")


def _external_path(external: Any, keep: list[Any]) -> str | None:
    """The definition file of external solvers: a path as it is, a dict written to a
    temporary JSON file (kept alive through ``keep``)."""
    if external is None:
        return None
    if isinstance(external, Mapping):
        f = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="cpbench-external-", delete=False)
        with f:
            json.dump(external, f)
        keep.append(f.name)
        return f.name
    return os.fspath(external)


def solve(
    instance: Instance,
    solver: Any = "apgd",
    tol: float = 1e-6,
    max_iter: int = 20000,
    settings: Mapping[str, Any] | None = None,
    warm_start: Any = None,
    residual: str | None = None,
    time_limit: float | None = None,
    *,
    name: str | None = None,
    trace_every: int = 1,
    external: Any = None,
) -> Result:
    """Solve ``instance`` with one solver, as one ``cpbench run`` row does (same executor,
    same recording, same check), and return a :class:`Result`.

    Args:
        instance: the instance.
        solver: a registry name (``"apgd"``, ``"pgs"``, ``"mprgp:permon"``,
            ``"pgs@omega=0.8"``; :func:`solver_names`), an external solver (``"ext:NAME"``
            defined in ``external``, ``"siconos:nsgs"``, ...), a Python function
            ``f(N, r, cone, settings, callback)`` (see the module documentation) or a
            :class:`PythonSolver`.
        tol: stopping and check tolerance on the residual (``residual``).
        max_iter: iteration budget.
        settings: the solver's settings (a registry solver's fields as ``cpbench solvers``
            lists them; for a Python function, handed to it).
        warm_start: start point, shape ``(n,)`` (projected onto ``K``); default zero.
        residual: the stopping and check residual (a column name of :data:`RESIDUAL_NAMES`
            such as ``nat_map_rel_2``, ``fc3d_error``); default the class's (``fc3d_error``
            on Coulomb instances, ``nat_map_rel_2`` otherwise).
        time_limit: solver time budget in seconds (``None``: none).
        name: the name of a Python function solver (default its ``__name__``).
        trace_every: record every k-th iterate in ``trace`` (1: all).
        external: the definition file of ``ext:`` solvers (a path, or a dict as its JSON).

    Raises:
        CpbenchError: an unknown solver or setting, settings out of range, a warm start of
            the wrong size. A failing solve is not an exception: see ``Result.status``.
    """
    keep: list[Any] = []
    try:
        s = _as_solver(solver, name, settings)
        out = _cpbench.solve(
            instance._raw,
            s,
            tol=float(tol),
            max_iter=int(max_iter),
            settings=None if (settings is None or not isinstance(s, str)) else json.dumps(dict(settings)),
            warm_start=None if warm_start is None else np.ascontiguousarray(warm_start, dtype=np.float64),
            residual=residual,
            time_limit=None if time_limit is None else float(time_limit),
            trace_every=int(trace_every),
            external=_external_path(external, keep),
            py_instance=instance,
        )
    finally:
        for p in keep:
            os.unlink(p)
    return Result(
        solver=out["solver"],
        gamma=_array(out["gamma"]),
        status=out["status"],
        success=bool(out["success"]),
        iterations=int(out["iterations"]),
        matvecs=int(out["matvecs"]),
        time=float(out["time_s"]),
        residuals=dict(out["residuals"]),
        message=out["message"],
        trace=_frame(out["trace"]),
        best_iteration=int(out["best_iteration"]),
        check_residual=out["check_residual"],
        counters=dict(out["counters"]),
    )


_BUILTIN_SUITES = ("default", "permon", "lcp", "scale")


def _read_summary(path: Path) -> Any:
    """``summary.csv`` as a pandas DataFrame, or a list of dicts (strings) without pandas."""
    try:
        import pandas as pd
    except ImportError:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    # empty messages stay '' (pandas parses the shortest round-trip decimals exactly: the
    # tests compare the floats with the CLI's bit for bit)
    return pd.read_csv(path, keep_default_na=False, na_values=["NaN", "nan"])


def replay(
    trajectory: PathLike,
    solvers: Iterable[str] | None = None,
    out: PathLike | None = None,
    tol: float = 1e-6,
    max_iter: int = 20000,
    time_limit: float | None = None,
    cls: str | None = None,
) -> tuple[Any, Any]:
    """Replay a trajectory folder (``cpbench generate`` writes one: step instances, their
    contacts files and ``trajectory.json``) as ``cpbench run --trajectory`` does: every solver
    goes through the steps cold and warm-started from its own previous answer mapped by contact
    identity.

    Args:
        trajectory: the trajectory folder.
        solvers: registry solver names; ``None``: the registry's default list (a solver that
            refuses a step's class skips it).
        out: the folder for ``replay_steps.csv`` and ``replay_stats.csv`` (default
            ``results/runs/<UTC timestamp>``, as the CLI).
        tol: stopping and check tolerance of every step.
        max_iter: iteration budget per step.
        time_limit: time budget per step, seconds.
        cls: how the steps are read (``--class``: ``coulomb`` for the Coulomb solvers).

    Returns:
        ``(steps, stats)``: the two CSVs as pandas DataFrames (one row per solver, mode and
        step; one row per solver and mode with the p50 / p95 / max of iterations and time), or
        lists of dicts of strings without pandas; ``attrs["out"]`` is the folder.

    Raises:
        CpbenchError: as the CLI (a broken trajectory names its file and step, an unknown
            solver, invalid budgets).
    """
    out_dir = Path(out) if out is not None else Path(_cpbench.default_out_dir())
    _cpbench.replay(str(trajectory), str(out_dir), None if solvers is None else list(solvers),
                    tol, max_iter, time_limit, cls)
    steps = _read_summary(out_dir / "replay_steps.csv")
    stats = _read_summary(out_dir / "replay_stats.csv")
    for df in (steps, stats):
        if hasattr(df, "attrs"):
            df.attrs["out"] = out_dir
    return steps, stats


def run(
    suite_or_paths: Any = "default",
    solvers: Iterable[Any] | None = None,
    out: PathLike | None = None,
    tol: float | None = None,
    max_iter: int = 20000,
    cls: str | None = None,
    external: Any = None,
    time_limit: float | None = None,
    plots: bool = True,
    jobs: int = 1,
    *,
    residual: str | None = None,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
    variants: Mapping[str, Mapping[str, Any]] | None = None,
    symmetrize: bool = False,
    rerun: bool = False,
    trace_every: int = 1,
    fail_fast: bool = False,
    stall_window: int | str | None = None,
    check_every: int | None = None,
) -> Any:
    """Run solvers on a suite into a results folder, as ``cpbench run`` does, and return its
    summary.

    Args:
        suite_or_paths: a built-in suite (``default``, ``permon``, ``lcp``), a suite JSON
            file (``*.json``, a string or a path), or instance files / folders (a path or a list of paths, read
            with ``cls`` and ``symmetrize``, as ``--instances``).
        solvers: registry tokens (``apgd``, ``pgs@omega=0.6:1.4:0.2``, ...), ``ext:NAME`` /
            ``siconos:NAME``, Python functions or :class:`PythonSolver` objects; ``None``:
            the suite's default solvers, else cpbench's defaults.
        out: the results folder (default ``results/runs/<UTC timestamp>``, as the CLI);
            rows already present are skipped unless ``rerun``.
        tol: one profile ``custom`` with this tolerance, as ``--tol``; ``None``: the suite's
            tolerance, else profile ``default`` (1e-6).
        max_iter: iteration budget per solve.
        cls: how frictional files of ``suite_or_paths`` are read (``--class``).
        external: the definition file of ``ext:`` solvers (``--external``; a path, or a dict
            as its JSON, written to a temporary file: give absolute command paths then).
        time_limit: time budget per solve, seconds.
        plots: draw ``plots/``.
        jobs: runs executed concurrently (times are comparable only with 1).
        residual: the stopping and check residual (``--residual``).
        settings: ``{solver: {setting: value}}`` as ``--settings``.
        variants: ``{label: {"solver": base, setting: value}}`` as ``--variants``.
        symmetrize: as ``--symmetrize``.
        rerun: execute again the runs already in ``out``.
        trace_every: record every k-th iteration in the traces.
        fail_fast: raise on the first input that does not load (default: a ``load_error``
            row and a warning).
        stall_window: the executor's stall rule, as ``--stall-window``: ``None`` its default
            window (5000 iterations), ``"off"`` no stall rule (for comparisons at a cap with
            programs that have none, Siconos'), or a window of at least 1 iteration.
        check_every: monitor every k iterations (residual, trace, stall and divergence
            tests), as ``--check-every``; ``None``: every iteration.

    Returns:
        The folder's ``summary.csv`` (one row per instance x solver x profile, every row of
        the folder) as a pandas DataFrame (``df.attrs["out"]`` is the folder), or a list of
        dicts of strings when pandas is not installed.

    Raises:
        CpbenchError: as the CLI (unknown solver, bad settings, a locked folder, ...). A
            crash, time-out or bad output of a solver is a row, not an exception.
    """
    if (isinstance(suite_or_paths, str) and suite_or_paths in _BUILTIN_SUITES) or (
        isinstance(suite_or_paths, (str, os.PathLike))
        and os.fspath(suite_or_paths).endswith(".json")
    ):
        # a suite name, or a suite file given as text or as a path
        suite, paths = os.fspath(suite_or_paths), None
    elif isinstance(suite_or_paths, (str, os.PathLike)):
        suite, paths = None, [os.fspath(suite_or_paths)]
    else:
        suite, paths = None, [os.fspath(p) for p in suite_or_paths]
        if not paths:
            raise CpbenchError("no instances given: pass a suite name or a list of paths")
    items = None if solvers is None else [_as_solver(s, None, None) for s in solvers]
    out_dir = os.fspath(out) if out is not None else os.fspath(_cpbench.default_out_dir())
    keep: list[Any] = []
    try:
        outcome = _cpbench.run(
            out_dir,
            suite=suite,
            paths=paths,
            solvers=items,
            tol=None if tol is None else float(tol),
            max_iter=int(max_iter),
            cls=cls,
            symmetrize=symmetrize,
            external=_external_path(external, keep),
            time_limit=None if time_limit is None else float(time_limit),
            plots=plots,
            jobs=int(jobs),
            residual=residual,
            settings=None if settings is None else json.dumps(settings),
            variants=None if variants is None else json.dumps(variants),
            rerun=rerun,
            trace_every=int(trace_every),
            fail_fast=fail_fast,
            stall_window=None if stall_window is None else str(stall_window),
            check_every=None if check_every is None else int(check_every),
        )
    finally:
        for p in keep:
            os.unlink(p)
    errors = outcome["load_errors"]
    if errors:
        warnings.warn(
            f"{len(errors)} inputs did not load (rows with status load_error): "
            + "; ".join(f"{s}: {m}" for s, m in errors),
            stacklevel=2,
        )
    summary = _read_summary(Path(out_dir) / "summary.csv")
    # the file holds rows in the order the runs finished: put them in the canonical order
    rank = {tuple(k): i for i, k in enumerate(outcome["order"])}
    key = lambda inst, solver, prof: rank.get((inst, solver, prof), len(rank))
    if hasattr(summary, "attrs"):
        if len(summary):
            summary = summary.iloc[
                sorted(range(len(summary)), key=lambda i: key(
                    summary["instance"].iloc[i], summary["solver"].iloc[i], summary["profile"].iloc[i]))
            ].reset_index(drop=True)
        summary.attrs["out"] = Path(out_dir)
        summary.attrs["executed"] = outcome["executed"]
        summary.attrs["skipped"] = outcome["skipped"]
    else:
        summary.sort(key=lambda r: key(r["instance"], r["solver"], r["profile"]))
    return summary
