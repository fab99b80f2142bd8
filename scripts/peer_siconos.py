#!/usr/bin/env python3
"""Siconos fc3d / fc2d solvers side by side with cpbench: rows in cpbench's summary.csv format.

Runs Siconos' nonsmooth Gauss-Seidel for the 3-D Coulomb friction problem
(SICONOS_FRICTION_3D_NSGS through siconos.numerics.fc3d_driver) on the instances cpbench reads,
and writes one row per instance with the columns of cpbench's `summary.csv`
(harness/src/results.rs), solver `siconos-nsgs`, so that

    cpbench report RESULTS_DIR --peer peer.csv

shows the Siconos rows next to cpbench's rows of the same instance name. Not used by the tests.

Inputs (any mix; a directory that is not a bundle is expanded one level, like
`cpbench run --instances DIR`):
  - cpbench bundles (directory with N.mtx, r.mtx, instance.json; class ccp or coulomb);
  - Siconos fc3d `.dat` files (read by Siconos itself, frictionContact_new_from_filename);
  - fclib `.hdf5` files (read with h5py; /fclib_local as stored, /fclib_global condensed to
    W = H^T M^-1 H, q = H^T M^-1 f + w with scipy's sparse LU, as cpbench does).
Instance names follow cpbench's Coulomb reading (`cpbench run --class coulomb`,
problems/src/io/mod.rs): the file stem plus `__coulomb` (`Rover4396.dat` ->
`Rover4396__coulomb`), the stored name for a bundle; the rows have class `coulomb`, the problem
Siconos' NSGS solves.

Siconos solves `u = W r + q` with W as stored (not symmetrised), as cpbench's Coulomb class
does; the asymmetry ||W - W^T||_F / ||W||_F is recorded in `counters`.

Columns filled (recomputed here with numpy from the data and Siconos' r, never taken from
Siconos): `time_s` = wall time of the fc3d_driver call only (time.perf_counter; loading
excluded); the CCP residuals of cpbench (problems/src/residual.rs) for gamma = r on
g = N r + q: natural-map residuals (5 columns), res4, primal_feas, dual_feas, complementarity,
complementarity_max, objective (N the matrix cpbench uses: W, or (W + W^T)/2 when W is
asymmetric). `proj_grad_2`, `proj_grad_rel` are NaN (not computed). `matvecs` is 0 (NSGS works
on rows, not N-products). The `fc3d_error` column (and `counters`) holds
  fc3d_error   = sqrt(sum_c ||r_c - P_K(r_c - (u_c + mu_c ||u_T,c|| e_n))||^2)
                 / max(||q||, ||r||, ||u||), u = W r + q (docs/formulation.md section 4; cpbench's
                 fc3d_error column; equal to Siconos 4.4's reported error on the Siconos/fclib files),
  siconos_error = Siconos' own reported error (dparam[SICONOS_DPARAM_RESIDU]), info, contacts, asymmetry;
`check_residual` is `fc3d_error` and `success` is `yes` when fc3d_error <= tol; `status` is
`converged` when Siconos returns info = 0, else `max_iterations`.

2-D problems (fc2d: Siconos `.dat` with d = 2, fclib spacedim 2, bundles with cone_dim 2) are
run through `fc2d_driver` with `--fc2d-solvers` (default `nsgs,lemke,enum`:
SICONOS_FRICTION_2D_NSGS, SICONOS_FRICTION_2D_LEMKE, SICONOS_FRICTION_2D_ENUM; `enum` only up to
10 contacts, `lemke` up to 1000: dense pivoting, 51 s on 667 contacts), one row per solver (`siconos-nsgs`, `siconos-lemke`, `siconos-enum`), with a dense
copy of W (Debian's Siconos 4.4 refuses the sparse fc2d files, "unknown storagetype": the
`.dat` storage 2, CSparse's print-out, is parsed here). The `fc3d_error` column then holds the
fc2d error (same formula with |u_t|, same divisor: it reproduces the error Siconos' Lemke and
ENUM report). Siconos' fc2d NSGS reports its own ||W r + q - u|| / ||q|| instead (in
`counters` as siconos_error), which can stay above the tolerance when the fc2d error is at 1e-15.

Requirements: Debian's `python3-siconos` (apt-get install python3-siconos python3-scipy
python3-h5py); it installs into the system interpreter, so run with /usr/bin/python3.

    /usr/bin/python3 scripts/peer_siconos.py --tol 1e-8 --max-iter 100000 --out peer.csv FILES...

LCP mode (`--lcp`): general LCPs w = M z + q >= 0, z >= 0, z^T w = 0, read from Siconos LCP
`.dat` files (by Siconos itself, linearComplementarity_newFromFilename) or cpbench bundles of
class lcp (N.mtx = M as stored, r.mtx = q), and Murty's exponential examples with `--murty A-B`
(M = L_n lower triangular, 1 on the diagonal, 2 below; q = -e; the definition of
problems/src/generators/murty.rs; `--fathi A-B` for L_n L_n^T). Each instance is solved by
linearComplementarity_driver with the Siconos solvers chosen by `--solvers` (default all four):

    siconos-lemke       SICONOS_LCP_LEMKE (lcp_lexicolemke; iterations = pivots after the
                        first, z0-entering one: cpbench's `lemke` counts that one too)
    siconos-newton-fb   SICONOS_LCP_NEWTON_FB_FBLSA
    siconos-enum        SICONOS_LCP_ENUM (first solution found; skipped for n > 20)
    siconos-psor        SICONOS_LCP_PSOR

Rows: instance = the file stem (cpbench's LCP name) or `murty-n<n>` / `fathi-n<n>`, class lcp,
`iterations` = iparam[ITER_DONE]; `fc3d_error` = the LCP error recomputed here,
||z - max(0, z - w)|| / ||q|| with w = M z + q (cpbench's fc3d_error column on an LCP); the
counters add Siconos' own reported error (dparam[RESIDU]), the value of Siconos'
lcp_compute_error on the returned z (which must equal fc3d_error: the script stops if they differ
by more than 1e-12 relative) and info. `--write-murty DIR` writes the Murty (and Fathi)
instances as Siconos LCP `.dat` files, dense, for `cpbench run --instances DIR`.

    /usr/bin/python3 scripts/peer_siconos.py --lcp --tol 1e-12 --out peer_lcp.csv DIR_OF_DAT
    /usr/bin/python3 scripts/peer_siconos.py --lcp --murty 2-12 --solvers siconos-lemke
"""
import argparse
import csv
import hashlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.coo  # noqa: F401  (siconos' NM_triplet needs it imported)
import scipy.sparse.linalg as spla

RESIDUAL_NAMES = [
    "nat_map_abs_2", "nat_map_abs_inf", "nat_map_rel_2", "nat_map_rel_inf",
    "nat_map_rel_max1_2", "proj_grad_2", "proj_grad_rel", "res4", "primal_feas", "dual_feas",
    "complementarity", "complementarity_max", "objective", "fc3d_error",
]
HEADER = (["instance", "class", "n", "nnz", "solver", "settings_hash", "status", "success",
           "iterations", "matvecs", "time_s"] + RESIDUAL_NAMES
          + ["instance_hash", "best_iteration", "check_residual", "tol", "profile", "jobs",
             "message", "counters"])


# --- reading --------------------------------------------------------------------------------

class Problem:
    """u = W r + q with Coulomb cones, W (d nc x d nc, scipy CSR, as stored), q, mu; d = 3 or 2."""

    def __init__(self, name, w, q, mu, siconos=None, dim=3):
        self.name, self.w, self.q, self.mu = name, sp.csr_matrix(w), np.asarray(q, float), \
            np.asarray(mu, float)
        self.siconos = siconos  # a FrictionContactProblem read by Siconos itself, if any
        self.dim = dim


def read_bundle(d):
    meta = json.loads((d / "instance.json").read_text())
    if meta.get("class") not in ("ccp", "coulomb"):
        raise ValueError(f"{d}: class {meta.get('class')}, Siconos fc3d needs Coulomb cones")
    w = sp.csr_matrix(scipy.io.mmread(str(d / "N.mtx")))
    q = np.asarray(scipy.io.mmread(str(d / "r.mtx"))).ravel()
    dim = int(meta.get("cone_dim", 3))
    mu = meta["mu"]
    if not isinstance(mu, list):
        mu = [mu] * (q.size // dim)
    return Problem(meta["name"], w, q, mu, dim=dim)


def read_dat_text(path):
    """A Siconos friction `.dat` parsed here (d, nc, W dense / storage 2 CSparse print-out, q,
    mu): for the 2-D files Siconos 4.4 cannot read."""
    tok = path.read_text().split()
    d, nc, st = int(tok[0]), int(tok[1]), int(tok[2])
    n = d * nc
    k = 5
    if st == 0:
        k += 2
        w = np.array(tok[k:k + n * n], float).reshape(n, n, order="F")
        k += n * n
    elif st == 2:
        origin = int(tok[k])
        k += 1
        while tok[k] not in ("triplet:",) and "-by-" not in tok[k]:
            k += 1
        rows, cols, vals = [], [], []
        if origin == 1:
            k += 1
            nnz = int(tok[k + 4].rstrip(","))
            k += 5
            for _ in range(nnz):
                rows.append(int(tok[k])), cols.append(int(tok[k + 1])), vals.append(float(tok[k + 3]))
                k += 4
        else:
            nnz = int(tok[k + 4].rstrip(","))
            k += 7
            for j in range(n):
                assert tok[k] == "col" and int(tok[k + 1]) == j, (path, k, tok[k])
                p0, p1 = int(tok[k + 4]), int(tok[k + 6])
                k += 7
                for _ in range(p1 - p0 + 1):
                    rows.append(int(tok[k])), cols.append(j), vals.append(float(tok[k + 2]))
                    k += 3
        w = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).toarray()
    else:
        raise ValueError(f"{path}: storage {st} is not parsed here")
    q = np.array(tok[k:k + n], float)
    mu = np.array(tok[k + n:k + n + nc], float)
    return d, w, q, mu


def read_dat(path, sn):
    with open(path) as f:
        d = int(f.read(16).split()[0])
    if d == 2:
        d, w, q, mu = read_dat_text(path)
        return Problem(path.stem + "__coulomb", w, q, mu, dim=2)
    fc = sn.frictionContact_new_from_filename(str(path))
    if fc.dimension != 3:
        raise ValueError(f"{path}: dimension {fc.dimension}, only 3-D and 2-D problems are run")
    w = sn.NM_triplet(fc.M).tocsr()
    return Problem(path.stem + "__coulomb", w, np.array(fc.q), np.array(fc.mu), siconos=fc)


def fclib_sparse(g):
    m, n, nz = int(g["m"][0]), int(g["n"][0]), int(g["nz"][0])
    p, i, x = g["p"][()].astype(np.int64), g["i"][()].astype(np.int64), g["x"][()]
    if nz == -2:
        return sp.csr_matrix((x, i, p), shape=(m, n))
    if nz == -1:
        return sp.csc_matrix((x, i, p), shape=(m, n)).tocsr()
    # triplets: i rows, p columns (what the data shows; duplicates summed)
    return sp.coo_matrix((x[:nz], (i[:nz], p[:nz])), shape=(m, n)).tocsr()


def read_hdf5(path):
    import h5py
    with h5py.File(path, "r") as f:
        dim = 3
        if "fclib_local" in f:
            g = f["fclib_local"]
            dim = int(g["spacedim"][0])
            if dim not in (2, 3):
                raise ValueError(f"{path}: spacedim {dim}, only 3 and 2 are run")
            w = fclib_sparse(g["W"])
            q, mu = g["vectors/q"][()], g["vectors/mu"][()]
        elif "fclib_global" in f:
            g = f["fclib_global"]
            if int(g["spacedim"][0]) != 3:
                raise ValueError(f"{path}: spacedim {int(g['spacedim'][0])}, only 3 is run")
            m, h = fclib_sparse(g["M"]).tocsc(), fclib_sparse(g["H"]).tocsc()
            up, lo = sp.triu(m, 1).nnz, sp.tril(m, -1).nnz
            if (up == 0) != (lo == 0):  # one triangle stored: mirror it (as cpbench does)
                m = (m + m.T - sp.diags(m.diagonal())).tocsc()
            lu = spla.splu(m)
            minv_h = lu.solve(h.toarray())
            w = sp.csr_matrix(h.T @ minv_h)
            w.eliminate_zeros()
            q = h.T @ lu.solve(g["vectors/f"][()]) + g["vectors/w"][()]
            mu = g["vectors/mu"][()]
        else:
            raise ValueError(f"{path}: neither /fclib_local nor /fclib_global")
    return Problem(path.stem + "__coulomb", w, q, mu, dim=dim)


def expand(paths):
    out = []
    for p in map(Path, paths):
        if p.is_dir() and not (p / "instance.json").exists():
            out += sorted(q for q in p.iterdir()
                          if (q / "instance.json").exists() or q.suffix in (".hdf5", ".h5", ".dat"))
        else:
            out.append(p)
    return out


def load(path, sn):
    if path.is_dir():
        return read_bundle(path)
    with open(path, "rb") as f:
        magic = f.read(8)
    if magic == b"\x89HDF\r\n\x1a\n":
        return read_hdf5(path)
    return read_dat(path, sn)


# --- residuals ------------------------------------------------------------------------------

def project_cones(x, mu, d=3):
    """P_K(x), K = prod_c {(n, t): ||t|| <= mu_c n}; x contact-interleaved, normal first, d
    unknowns per contact (3, or 2: |t| <= mu n)."""
    x = x.reshape(-1, d)
    xn, xt = x[:, 0], x[:, 1:]
    nt = np.linalg.norm(xt, axis=1)
    out = x.copy()
    inside = (nt <= mu * xn) & (xn >= 0)
    polar = mu * nt <= -xn
    mid = ~(inside | polar)
    a = (mu * nt + xn) / (mu * mu + 1.0)
    out[polar] = 0.0
    safe = np.where(nt > 0, nt, 1.0)
    out[mid, 0] = a[mid]
    out[mid, 1:] = (mu * a / safe)[mid, None] * xt[mid]
    return out.ravel()


def fc3d_error(w, q, mu, r, dim=3):
    """The Siconos fc3d error (docs/formulation.md section 4) relative to max(||q||, ||r||, ||u||),
    as cpbench's fc3d_error column and Siconos 4.4's reported error divide it; for dim = 2 the
    fc2d error (fc2d_compute_error, |u_t|), with the same divisor."""
    u = w @ r + q
    ub = u.reshape(-1, dim)
    shifted = ub.copy()
    shifted[:, 0] += mu * np.linalg.norm(ub[:, 1:], axis=1)
    d = r - project_cones(r - shifted.ravel(), mu, dim)
    scale = max(np.linalg.norm(q), np.linalg.norm(r), np.linalg.norm(u))
    return np.linalg.norm(d) / (scale if scale > 0 else 1.0)


def ccp_residuals(n_mat, rvec, mu, gamma, d=3):
    """cpbench's residuals (problems/src/residual.rs) of gamma on the CCP g = N gamma + r."""
    g = n_mat @ gamma + rvec
    nat = gamma - project_cones(gamma - g, mu, d)
    abs2, absinf = np.linalg.norm(nat), np.abs(nat).max(initial=0.0)
    rn = np.linalg.norm(rvec)
    rel = rn if rn > 0 else 1.0
    n = gamma.size
    eps = 1.0 / (n * n)
    res4 = np.linalg.norm((gamma - project_cones(gamma - eps * g, mu, d)) / eps)
    primal = np.linalg.norm(gamma - project_cones(gamma, mu, d))
    # K* = {(n, t): ||t|| <= n / mu}; P_{K*}(g) = g + P_K(-g)  (Moreau)
    dual = np.linalg.norm(project_cones(-g, mu, d))
    comp_c = np.abs((gamma * g).reshape(-1, d).sum(axis=1))
    return {
        "nat_map_abs_2": abs2, "nat_map_abs_inf": absinf, "nat_map_rel_2": abs2 / rel,
        "nat_map_rel_inf": absinf / rel, "nat_map_rel_max1_2": abs2 / max(1.0, rn),
        "proj_grad_2": math.nan, "proj_grad_rel": math.nan, "res4": res4,
        "primal_feas": primal, "dual_feas": dual, "complementarity": abs(gamma @ g),
        "complementarity_max": comp_c.max(initial=0.0),
        "objective": 0.5 * gamma @ (n_mat @ gamma) + rvec @ gamma,
    }


# --- running --------------------------------------------------------------------------------

FC2D_SOLVERS = {"nsgs": "SICONOS_FRICTION_2D_NSGS", "lemke": "SICONOS_FRICTION_2D_LEMKE",
                "enum": "SICONOS_FRICTION_2D_ENUM"}


def run_one(prob, sn, tol, max_iter, fc2d_solver="nsgs"):
    nc = prob.mu.size
    dim = prob.dim
    n = dim * nc
    if prob.w.shape != (n, n) or prob.q.size != n:
        raise ValueError(f"{prob.name}: W {prob.w.shape}, q {prob.q.size}, {nc} contacts")
    fro = sp.linalg.norm(prob.w)
    asym = sp.linalg.norm(prob.w - prob.w.T) / fro if fro > 0 else 0.0
    fc = prob.siconos
    if dim == 2:
        # fc2d_driver's solvers want a dense W
        fc = sn.FrictionContactProblem(2, np.asfortranarray(prob.w.toarray()), prob.q,
                                       prob.mu)
        sid_name = FC2D_SOLVERS[fc2d_solver]
    elif fc is None:
        wc = sp.csc_matrix(prob.w)
        wc.indices = wc.indices.astype(np.int64)
        wc.indptr = wc.indptr.astype(np.int64)
        fc = sn.FrictionContactProblem(3, wc, prob.q, prob.mu)
    if dim == 3:
        sid_name = "SICONOS_FRICTION_3D_NSGS"
    so = sn.SolverOptions(getattr(sn, sid_name))
    if sid_name.endswith("NSGS"):
        so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iter
        so.dparam[sn.SICONOS_DPARAM_TOL] = tol
    r, u = np.zeros(n), np.zeros(n)
    t0 = time.perf_counter()
    info = (sn.fc2d_driver if dim == 2 else sn.fc3d_driver)(fc, r, u, so)
    elapsed = time.perf_counter() - t0
    iters = int(so.iparam[sn.SICONOS_IPARAM_ITER_DONE])
    sic_err = float(so.dparam[sn.SICONOS_DPARAM_RESIDU])
    err = fc3d_error(prob.w, prob.q, prob.mu, r, dim)
    n_mat = prob.w if asym == 0.0 else sp.csr_matrix(0.5 * (prob.w + prob.w.T))
    res = ccp_residuals(n_mat, prob.q, prob.mu, r, dim)
    row = summary_row(
        prob.name, "coulomb", n, n_mat.nnz, "siconos-" + (fc2d_solver if dim == 2 else "nsgs"),
        sid_name, tol, max_iter, info, err, iters, elapsed, res,
        f"fc3d_error={err:.3e};siconos_error={sic_err:.3e};info={info};"
        f"contacts={nc};asymmetry={asym:.3e}")
    return row, err, sic_err


def summary_row(name, cls, n, nnz, solver, siconos_solver, tol, max_iter, info, err, iters,
                elapsed, res, counters):
    """One row of cpbench's summary.csv for a Siconos solve: `siconos_solver` (Siconos' name)
    with `tol`, `max_iter` makes the settings hash; `info` Siconos' return code, `err` its
    error as recomputed here (`fc3d_error`, or the LCP error), `res` cpbench's residuals."""
    import siconos.numerics as sn
    settings = {"solver": siconos_solver, "siconos": getattr(sn, "__version__", "4.4"),
                "tol": tol, "max_iter": max_iter}
    shash = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    return {
        "instance": name, "class": cls, "n": n, "nnz": nnz,
        "solver": solver, "settings_hash": shash,
        "status": "converged" if info == 0 else "max_iterations",
        "success": "yes" if err <= tol else "no", "iterations": iters, "matvecs": 0,
        "time_s": f"{elapsed:.6e}",
        **{k: ("NaN" if math.isnan(v) else f"{v:e}") for k, v in res.items()},
        "fc3d_error": f"{err:e}",
        "instance_hash": "", "best_iteration": iters, "check_residual": "fc3d_error",
        "tol": f"{tol:e}", "profile": "default", "jobs": 1,
        "message": "" if info == 0 else f"siconos info={info}",
        "counters": counters,
    }


# --- LCP mode -------------------------------------------------------------------------------

LCP_SOLVERS = {
    "siconos-lemke": "SICONOS_LCP_LEMKE",
    "siconos-newton-fb": "SICONOS_LCP_NEWTON_FB_FBLSA",
    "siconos-enum": "SICONOS_LCP_ENUM",
    "siconos-psor": "SICONOS_LCP_PSOR",
}


# ENUM visits 2^n bases: like cpbench's `enum`, larger problems are not run
ENUM_MAX_N = 20


class LcpProblem:
    """w = M z + q (M dense numpy, as stored), with a Siconos LCP object."""

    def __init__(self, name, m, q, sn, siconos=None):
        self.name, self.m, self.q = name, np.asarray(m, float), np.asarray(q, float).ravel()
        self.siconos = siconos if siconos is not None else sn.LCP(self.m, self.q)


def read_lcp(path, sn):
    if path.is_dir():
        meta = json.loads((path / "instance.json").read_text())
        if meta.get("class") != "lcp":
            raise ValueError(f"{path}: class {meta.get('class')}, the LCP mode needs class lcp")
        m = scipy.io.mmread(str(path / "N.mtx"))
        m = m.toarray() if sp.issparse(m) else np.asarray(m)
        q = np.asarray(scipy.io.mmread(str(path / "r.mtx"))).ravel()
        return LcpProblem(meta["name"], m, q, sn)
    lcp = sn.LCP(np.eye(1), np.zeros(1))
    if sn.linearComplementarity_newFromFilename(lcp, str(path)) != 1 and lcp.size == 1:
        raise ValueError(f"{path}: Siconos could not read it as an LCP")
    n, m = lcp.size, lcp.M
    if isinstance(m, np.ndarray):
        return LcpProblem(path.stem, m, np.array(lcp.q), sn, siconos=lcp)
    # a sparse-block file: Siconos' LCP drivers for that storage run only NSGS, so the solvers
    # get the same matrix dense (read entry by entry from Siconos' own block matrix)
    m = np.array([[sn.SBM_get_value(m, i, j) for j in range(n)] for i in range(n)])
    return LcpProblem(path.stem, m, np.array(lcp.q), sn)


def murty_matrix(n, fathi=False):
    """L_n: 1 on the diagonal, 2 below (problems/src/generators/murty.rs); L_n L_n^T for Fathi."""
    low = np.eye(n) + 2.0 * np.tril(np.ones((n, n)), -1)
    return low @ low.T if fathi else low


def parse_range(text):
    a, _, b = text.partition("-")
    return range(int(a), int(b or a) + 1)


def write_lcp_dat(path, m, q):
    """A Siconos LCP .dat file: n, a dense NumericsMatrix (values column by column), q."""
    n = q.size
    lines = [str(n), "0", str(n), str(n), f"{n}\t{n}"]
    lines += [" ".join(repr(float(v)) for v in m[:, j]) for j in range(n)]
    lines.append(" ".join(repr(float(v)) for v in q))
    path.write_text("\n".join(lines) + "\n")


def lcp_error(m, q, z):
    """||z - max(0, z - w)|| / ||q||, w = M z + q (Siconos 4.4 lcp_compute_error)."""
    w = m @ z + q
    nq = np.linalg.norm(q)
    e = np.linalg.norm(z - np.maximum(0.0, z - w))
    return e / nq if nq > np.finfo(float).eps else e


def lcp_residuals(m, q, z):
    """cpbench's residuals (problems/src/residual.rs) of z on K = R^n_+, g = M z + q."""
    g = m @ z + q
    nat = z - np.maximum(0.0, z - g)
    abs2, absinf = np.linalg.norm(nat), np.abs(nat).max(initial=0.0)
    rn = np.linalg.norm(q)
    rel = rn if rn > 0 else 1.0
    n = z.size
    eps = 1.0 / (n * n)
    res4 = np.linalg.norm((z - np.maximum(0.0, z - eps * g)) / eps)
    pg = np.where(z > 0, g, np.minimum(g, 0.0))
    return {
        "nat_map_abs_2": abs2, "nat_map_abs_inf": absinf, "nat_map_rel_2": abs2 / rel,
        "nat_map_rel_inf": absinf / rel, "nat_map_rel_max1_2": abs2 / max(1.0, rn),
        "proj_grad_2": np.linalg.norm(pg), "proj_grad_rel": np.linalg.norm(pg) / rel,
        "res4": res4, "primal_feas": np.linalg.norm(np.minimum(z, 0.0)),
        "dual_feas": np.linalg.norm(np.minimum(g, 0.0)), "complementarity": abs(z @ g),
        "complementarity_max": np.abs(z * g).max(initial=0.0),
        "objective": 0.5 * z @ (m @ z) + q @ z,
    }


def run_lcp(prob, solver, sn, tol, max_iter):
    n = prob.q.size
    so = sn.SolverOptions(getattr(sn, LCP_SOLVERS[solver]))
    so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iter
    so.dparam[sn.SICONOS_DPARAM_TOL] = tol
    z, w = np.zeros(n), np.zeros(n)
    t0 = time.perf_counter()
    info = sn.linearComplementarity_driver(prob.siconos, z, w, so)
    elapsed = time.perf_counter() - t0
    iters = int(so.iparam[sn.SICONOS_IPARAM_ITER_DONE])
    sic_err = float(so.dparam[sn.SICONOS_DPARAM_RESIDU])
    err = lcp_error(prob.m, prob.q, z)
    check = float(sn.lcp_compute_error(prob.siconos, z.copy(), np.zeros(n), tol))
    if abs(check - err) > 1e-12 * max(1.0, err):
        raise RuntimeError(f"{prob.name}: lcp_compute_error {check:e} != recomputed {err:e}")
    res = lcp_residuals(prob.m, prob.q, z)
    fro = np.linalg.norm(prob.m)
    asym = np.linalg.norm(prob.m - prob.m.T) / fro if fro > 0 else 0.0
    row = summary_row(
        prob.name, "lcp", n, int(np.count_nonzero(prob.m)), solver, LCP_SOLVERS[solver], tol,
        max_iter, info, err, iters, elapsed, res,
        f"lcp_error={err:.3e};siconos_error={sic_err:.3e};"
        f"siconos_lcp_compute_error={check:.3e};info={info};asymmetry={asym:.3e}")
    return row, err, sic_err, info


def main_lcp(a, sn):
    probs = []
    failed = 0
    for path in expand(a.paths):
        try:
            probs.append(read_lcp(path, sn))
        except (ValueError, OSError, KeyError, RuntimeError) as e:
            print(f"skipped {path}: {e}", file=sys.stderr)
            failed += 1
    for flag, fathi in ((a.murty, False), (a.fathi, True)):
        for n in parse_range(flag) if flag else []:
            m = murty_matrix(n, fathi)
            name = f"{'fathi' if fathi else 'murty'}-n{n}"
            probs.append(LcpProblem(name, m, -np.ones(n), sn))
            if a.write_murty:
                a.write_murty.mkdir(parents=True, exist_ok=True)
                write_lcp_dat(a.write_murty / f"{name}.dat", m, -np.ones(n))
    rows = []
    for prob in probs:
        for solver in a.solvers.split(","):
            if solver not in LCP_SOLVERS:
                raise SystemExit(f"unknown LCP solver {solver} (known: {', '.join(LCP_SOLVERS)})")
            if solver == "siconos-enum" and prob.q.size > ENUM_MAX_N:
                print(f"{prob.name:32s} {solver:18s} skipped: n = {prob.q.size} > {ENUM_MAX_N} "
                      f"(2^n bases)", file=sys.stderr)
                continue
            row, err, sic_err, info = run_lcp(prob, solver, sn, a.tol, a.max_iter)
            rows.append(row)
            print(f"{prob.name:32s} {solver:18s} n {prob.q.size:4d}  info {info}  iterations "
                  f"{row['iterations']:7d}  siconos error {sic_err:9.3e}  lcp error {err:9.3e}  "
                  f"time {1e3 * float(row['time_s']):9.3f} ms", file=sys.stderr)
    return rows, failed


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help="bundles, .dat, .hdf5 files or folders of them")
    ap.add_argument("--lcp", action="store_true", help="LCP mode (Siconos LCP .dat, lcp bundles)")
    ap.add_argument("--solvers", default=",".join(LCP_SOLVERS),
                    help="LCP mode: comma-separated Siconos solvers (default: all four)")
    ap.add_argument("--murty", help="LCP mode: add Murty's examples of orders A-B (e.g. 2-12)")
    ap.add_argument("--fathi", help="LCP mode: add Fathi's examples L_n L_n^T of orders A-B")
    ap.add_argument("--write-murty", type=Path,
                    help="LCP mode: write the --murty/--fathi instances as Siconos .dat files here")
    ap.add_argument("--tol", type=float, default=1e-8, help="Siconos tolerance (default 1e-8)")
    ap.add_argument("--max-iter", type=int, default=100000, help="iteration cap (default 1e5)")
    ap.add_argument("--out", type=Path, help="CSV file to write (default: stdout only)")
    ap.add_argument("--fc2d-solvers", default="nsgs,lemke,enum",
                    help="Siconos fc2d solvers for 2-D problems (nsgs, lemke, enum)")
    a = ap.parse_args(argv)
    import siconos.numerics as sn
    if a.lcp:
        rows, failed = main_lcp(a, sn)
        w = csv.DictWriter(open(a.out, "w", newline="") if a.out else sys.stdout, HEADER,
                           lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return 1 if failed and not rows else 0
    rows = []
    failed = 0
    for path in expand(a.paths):
        try:
            prob = load(path, sn)
            names = [s for s in a.fc2d_solvers.split(",") if s] if prob.dim == 2 else ["nsgs"]
            if prob.dim == 2 and prob.mu.size > 10:
                names = [s for s in names if s != "enum"]
            if prob.dim == 2 and prob.mu.size > 1000:
                # dense Lemke: 51 s on 667 contacts, cubic growth
                names = [s for s in names if s != "lemke"]
            runs = [(s,) + run_one(prob, sn, a.tol, a.max_iter, s) for s in names]
        except (ValueError, OSError, KeyError, RuntimeError) as e:
            print(f"skipped {path}: {e}", file=sys.stderr)
            failed += 1
            continue
        for s, row, err, sic_err in runs:
            rows.append(row)
            print(f"{row['instance']:40s} {row['solver']:14s} contacts {prob.mu.size:5d}  "
                  f"iterations {row['iterations']:7d}  siconos error {sic_err:9.3e}  "
                  f"fc{prob.dim}d error {err:9.3e}  time {1e3 * float(row['time_s']):10.3f} ms  "
                  f"{row['status']}", file=sys.stderr)
    w = csv.DictWriter(open(a.out, "w", newline="") if a.out else sys.stdout, HEADER,
                       lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return 1 if failed and not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
