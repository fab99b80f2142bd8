"""Shared fixtures of the Python package's tests: the repository's fixture files, the
``cpbench`` binary (env ``CPBENCH_BIN``, default ``<repo>/target/debug/cpbench``) and CLI
runs whose ``summary.csv`` the tests compare with the Python API."""

from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
EXT = Path(__file__).resolve().parent / "ext"


def fixture(rel: str) -> Path:
    """A file of tests/fixtures."""
    p = FIXTURES / rel
    assert p.exists(), p
    return p


def cpbench_bin() -> Path:
    """The cpbench binary the tests compare with; the test **fails** when it is missing (a
    skipped comparison would pass unnoticed), saying how to build it."""
    p = Path(os.environ.get("CPBENCH_BIN", REPO / "target" / "debug" / "cpbench"))
    if not p.exists():
        pytest.fail(
            f"cpbench binary not found at {p}: build it with `cargo build` at the repository "
            "root (or `cargo test --workspace`), or point CPBENCH_BIN at one"
        )
    return p


def cli(*args: str | os.PathLike) -> subprocess.CompletedProcess:
    """Run the cpbench binary; fails the test on a non-zero exit."""
    out = subprocess.run([str(cpbench_bin()), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


def read_rows(path: Path) -> list[dict[str, str]]:
    """summary.csv as rows of strings (floats parsed later with float(): exact)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="session")
def cli_runs(tmp_path_factory) -> dict[tuple[str, str], dict[str, str]]:
    """``cpbench run`` of apgd and pgs on four fixtures (LCP, CCP, symmetrised CCP, 2-D CCP),
    keyed by (instance, solver)."""
    out = tmp_path_factory.mktemp("cli") / "run"
    cli(
        "run",
        "--instances",
        fixture("lcp/lcp_mmc.dat"),
        fixture("siconos-fc3d/NESpheres_10_1.dat"),
        fixture("fclib/Capsules-i125-1213.hdf5"),
        fixture("fc2d/fc2d_granularflowonwall_00667_00000.dat"),
        "--symmetrize",
        "--solvers",
        "apgd,pgs",
        "--no-plots",
        "--out",
        out,
    )
    rows = {(r["instance"], r["solver"]): r for r in read_rows(out / "summary.csv")}
    rows["__out__"] = out
    return rows


def project(g, cone):
    """Projection onto K: the nonnegative orthant (LCP), a box, or Coulomb cones (2-D, 3-D)."""
    import numpy as np

    if cone["class"] == "lcp":
        return np.maximum(g, 0.0)
    if cone["class"] == "box":
        return np.clip(g, cone["lo"], cone["hi"])
    mu = cone["mu"]
    G = g.reshape(-1, cone["dim"]).copy()
    n, t = G[:, 0], np.linalg.norm(G[:, 1:], axis=1)
    polar = mu * t <= -n
    mid = ~(t <= mu * n) & ~polar
    a = (mu * t + n) / (mu**2 + 1)
    scale = mu * a / np.where(t > 0, t, 1.0)
    G[mid, 0] = a[mid]
    G[mid, 1:] *= scale[mid, None]
    G[polar] = 0.0
    return G.ravel()


def projected_gradient(N, r, cone, settings, callback):
    """A correct Python solver: projected gradient with step 1/L (L from a power iteration),
    every iterate reported; stops when the harness says so."""
    import numpy as np

    x = np.ones(len(r))
    for _ in range(100):
        x = N @ x
        x /= np.linalg.norm(x)
    L = 1.01 * float(x @ (N @ x))
    g = settings["gamma0"].copy()
    while True:
        g = project(g - (N @ g + r) / L, cone)
        if not callback(g):
            return g
