#!/usr/bin/env python3
"""Siconos global friction problems (`.dat`: GFC3D_*, gfc2d_*) side by side with cpbench.

For every global `.dat` file given, reads the problem with Siconos itself
(siconos.numerics.globalFrictionContact_new_from_filename: M, H, q, b, mu), and

1. condenses it with numpy from Siconos' parsed data, W = H^T M^-1 H, q_loc = H^T M^-1 q + b
   (Siconos' convention M v = q + H r, u = H^T v + b; H is ndof x d nc), and, with
   `--cpbench BIN`, compares cpbench's condensed W and q (`BIN convert FILE BUNDLE
   --class coulomb`, N.mtx and r.mtx of the bundle) entry by entry: relative differences
   ||W_cpbench - W||_F / ||W||_F and ||q_cpbench - q_loc|| / ||q_loc||;
2. for d = 3, solves it with Siconos' gfc3d_driver (SICONOS_GLOBAL_FRICTION_3D_NSGS_WR, which
   condenses and runs the local NSGS, and SICONOS_GLOBAL_FRICTION_3D_NSGS, the global
   Gauss-Seidel) and prints r, u = H^T v + b and v = M^-1 (q + H r) recomputed with numpy from
   Siconos' r (Siconos 4.4's NSGS_WR returns a wrong v and u on sparse-block files: its
   reformulation inverts M in place), and Siconos' reported error, iterations and time;
3. with `--cpbench BIN`, runs `BIN run --instances FILE --class coulomb --solvers SOLVERS --tol
   TOL` and prints cpbench's fc3d error, iterations and time next to Siconos'. cpbench's
   reactions are compared with Siconos' r, u = H^T v + b and v = M^-1 (q + H r) (printed here
   by --print-solutions and written into the test) by solvers/tests/it/siconos_global.rs, which
   prints the relative differences with
   `cargo test --workspace --test siconos_global -- --nocapture`.

Writes one row per file and Siconos solver in cpbench's summary.csv format (solver
`siconos-gfc3d-nsgs-wr` / `siconos-gfc3d-nsgs`, class `coulomb`, instance `{stem}__coulomb`;
the residual columns computed with numpy on the condensed problem, as scripts/peer_siconos.py
does) to --out, and a table of the comparison to stderr. Not used by the tests.

    /usr/bin/python3 scripts/peer_siconos_global.py --cpbench target/debug/cpbench \
        --out peer_global.csv tests/fixtures/gfc3d/*.dat tests/fixtures/fc2d/gfc2d_*.dat
"""
import argparse
import contextlib
import csv
import glob
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_siconos import HEADER, ccp_residuals, fc3d_error  # noqa: E402

warnings.simplefilter("ignore")


@contextlib.contextmanager
def quiet_stdout():
    """Silence C-level stdout (Siconos' reformulation prints the local problem)."""
    sys.stdout.flush()
    fd = os.dup(1)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            os.dup2(fd, 1)
            os.close(fd)


def dense(sn, x, rows, cols):
    """A Siconos matrix field (numpy, scipy sparse or SparseBlockStructuredMatrix) as dense."""
    if isinstance(x, np.ndarray):
        return np.asarray(x, float).reshape(rows, cols)
    if hasattr(x, "toarray"):
        return x.toarray()
    return np.array([[sn.SBM_get_value(x, i, j) for j in range(cols)] for i in range(rows)])


class Global:
    """A global problem as Siconos reads it, dense, and its condensation."""

    def __init__(self, path, sn):
        p = sn.globalFrictionContact_new_from_filename(str(path))
        self.path, self.d, self.nc = Path(path), p.dimension, p.numberOfContacts
        self.q, self.b = np.array(p.q, float), np.array(p.b, float)
        self.ndof, self.m = self.q.size, self.b.size
        self.mu = np.array(p.mu, float) if self.nc > 0 else np.zeros(0)
        self.M = dense(sn, p.M, self.ndof, self.ndof)
        # Siconos 4.4's Python wrapper refuses an empty CSC H ("number of nnz is inconsistent")
        self.H = dense(sn, p.H, self.ndof, self.m) if self.m > 0 else np.zeros((self.ndof, 0))
        self.W = self.H.T @ np.linalg.solve(self.M, self.H)
        self.qloc = self.H.T @ np.linalg.solve(self.M, self.q) + self.b
        self.name = self.path.stem + "__coulomb"

    def v_of(self, r):
        return np.linalg.solve(self.M, self.q + self.H @ r)

    def u_of(self, r):
        return self.H.T @ self.v_of(r) + self.b


def rel(a, b):
    nb = np.linalg.norm(b)
    return np.linalg.norm(a - b) / (nb if nb > 0 else 1.0)


def cpbench_condensed(binary, path, tmp):
    out = Path(tmp) / (path.stem + "_bundle")
    res = subprocess.run([binary, "convert", str(path), str(out), "--class", "coulomb"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        return None, res.stderr.strip().splitlines()[-1] if res.stderr else "convert failed"
    w = sp.csr_matrix(scipy.io.mmread(str(out / "N.mtx"))).toarray()
    q = np.asarray(scipy.io.mmread(str(out / "r.mtx"))).ravel()
    return (w, q), None


def cpbench_solve(binary, path, solvers, tol, tmp):
    """{solver: (fc3d_error, time_s, iterations, status)} of `cpbench run` (summary.csv)."""
    out = Path(tmp) / (path.stem + "_run")
    res = subprocess.run([binary, "run", "--instances", str(path), "--class", "coulomb",
                          "--solvers", solvers, "--tol", f"{tol:g}", "--out", str(out),
                          "--no-plots"], capture_output=True, text=True)
    if not (out / "summary.csv").exists():
        raise RuntimeError(res.stderr)
    found = {}
    with open(out / "summary.csv") as f:
        for row in csv.DictReader(f):
            found[row["solver"]] = (float(row["fc3d_error"]), float(row["time_s"]),
                                    int(row["iterations"]), row["status"])
    return found


def siconos_solve(g, sn, sid, tol, max_iter):
    p = sn.globalFrictionContact_new_from_filename(str(g.path))
    so = sn.SolverOptions(sid)
    so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iter
    so.dparam[sn.SICONOS_DPARAM_TOL] = tol
    r, u, v = np.zeros(g.m), np.zeros(g.m), np.zeros(g.ndof)
    with quiet_stdout():
        t0 = time.perf_counter()
        info = sn.gfc3d_driver(p, r, u, v, so)
        elapsed = time.perf_counter() - t0
    return r, info, float(so.dparam[sn.SICONOS_DPARAM_RESIDU]), \
        int(so.iparam[sn.SICONOS_IPARAM_ITER_DONE]), elapsed


def summary_row(g, solver, sid_name, r, info, sic_err, iters, elapsed, tol, max_iter):
    err = fc3d_error(g.W, g.qloc, g.mu, r)
    res = ccp_residuals(g.W, g.qloc, g.mu, r)
    settings = {"solver": sid_name, "siconos": "4.4", "tol": tol, "max_iter": max_iter}
    shash = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    return {
        "instance": g.name, "class": "coulomb", "n": g.m, "nnz": int(np.count_nonzero(g.W)),
        "solver": solver, "settings_hash": shash,
        "status": "converged" if info == 0 else "max_iterations",
        "success": "yes" if err <= tol else "no", "iterations": iters, "matvecs": 0,
        "time_s": f"{elapsed:.6e}",
        **{k: ("NaN" if math.isnan(v) else f"{v:e}") for k, v in res.items()},
        "fc3d_error": f"{err:e}", "instance_hash": "", "best_iteration": iters,
        "check_residual": "fc3d_error", "tol": f"{tol:e}", "profile": "default", "jobs": 1,
        "message": "" if info == 0 else f"siconos info={info}",
        "counters": f"fc3d_error={err:.3e};siconos_error={sic_err:.3e};info={info};"
                    f"contacts={g.nc};dofs={g.ndof}",
    }, err


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", help="Siconos global .dat files")
    ap.add_argument("--tol", type=float, default=1e-10, help="tolerance (default 1e-10)")
    ap.add_argument("--max-iter", type=int, default=100000, help="Siconos iteration cap")
    ap.add_argument("--cpbench", help="cpbench binary: compare its condensation and solutions")
    ap.add_argument("--solvers", default="nsgs,nsn-ac", help="cpbench solvers (nsgs,nsn-ac)")
    ap.add_argument("--out", type=Path, help="summary.csv-format rows of Siconos' solves")
    ap.add_argument("--print-solutions", action="store_true",
                    help="print Siconos' r, u, v with 17 digits (for the tests)")
    a = ap.parse_args(argv)
    import siconos.numerics as sn
    rows = []
    e = sys.stderr
    with tempfile.TemporaryDirectory() as tmp:
        for path in map(Path, a.paths):
            g = Global(path, sn)
            print(f"== {path.name}: d = {g.d}, {g.nc} contacts, {g.ndof} dofs, "
                  f"||W||_F = {np.linalg.norm(g.W):.17g}, ||q_loc|| = "
                  f"{np.linalg.norm(g.qloc):.17g}", file=e)
            if a.cpbench:
                ours, why = cpbench_condensed(a.cpbench, path, tmp)
                if ours is None:
                    print(f"   cpbench convert: {why}", file=e)
                else:
                    print(f"   condensation: rel. diff. W {rel(ours[0], g.W):.3e}, "
                          f"q {rel(ours[1], g.qloc):.3e}", file=e)
            if g.d != 3 or g.nc == 0:
                continue
            sic = {}
            for solver, sid_name in [("siconos-gfc3d-nsgs-wr", "SICONOS_GLOBAL_FRICTION_3D_NSGS_WR"),
                                     ("siconos-gfc3d-nsgs", "SICONOS_GLOBAL_FRICTION_3D_NSGS")]:
                r, info, sic_err, iters, elapsed = siconos_solve(
                    g, sn, getattr(sn, sid_name), a.tol, a.max_iter)
                row, err = summary_row(g, solver, sid_name, r, info, sic_err, iters, elapsed,
                                       a.tol, a.max_iter)
                rows.append(row)
                sic[solver] = (r, err, info)
                print(f"   {solver:24s} info {info}  error {sic_err:9.3e} (fc3d {err:9.3e})  "
                      f"iterations {iters:6d}  time {1e3 * elapsed:9.3f} ms", file=e)
                if a.print_solutions:
                    fmt = lambda x: ", ".join(f"{y:.17e}" for y in x)  # noqa: E731
                    print(f"      r = [{fmt(r)}]\n      u = [{fmt(g.u_of(r))}]\n"
                          f"      v = [{fmt(g.v_of(r))}]", file=e)
            if a.cpbench:
                for solver, (err, t, it, status) in cpbench_solve(
                        a.cpbench, path, a.solvers, a.tol, tmp).items():
                    print(f"   cpbench {solver:16s} {status:10s} fc3d error {err:9.3e}  "
                          f"iterations {it:6d}  time {1e3 * t:9.3f} ms", file=e)
    if a.out:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, HEADER, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
