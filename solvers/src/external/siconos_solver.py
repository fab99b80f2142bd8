#!/usr/bin/env python3
"""cpbench's Siconos driver: the `siconos:*` solvers (solvers/src/external/siconos.rs) run this
script through the external-solver protocol (docs/external.md).

    python3 siconos_solver.py SOLVER INSTANCE.npz GAMMA.npy INFO.json TOL MAX_ITER [OPTIONS.json]

SOLVER is one of the keys of SOLVERS below. The instance is cpbench's `.npz` (SciPy's CSC layout
for N, `r`, and the JSON header with `mu`; docs/formats.md section 6), read as
scripts/peer_siconos.py reads the same problems, so that the iterations are the same:
  - 3-D Coulomb (fc3d_driver): W = N, q = r, mu; W given to Siconos as a sparse CSC matrix with
    int64 indices, or dense (column-major) when every entry is stored (a dense Siconos `.dat`);
  - 2-D Coulomb (fc2d_driver): W dense (Debian's Siconos 4.4 fc2d solvers want it dense);
  - LCP (linearComplementarity_driver): M = N dense, q = r.
The options get iparam[SICONOS_IPARAM_MAX_ITER] = MAX_ITER, dparam[SICONOS_DPARAM_TOL] = TOL and
the iparam values of the SOLVERS entry (nsn-jm: NSN_AC with the Jean-Moreau formulation),
then the options of OPTIONS.json, when given (the solver's settings, SiconosOptions in
siconos.rs): {"iparam": {INDEX: VALUE}, "dparam": {INDEX: NUMBER}}, INDEX the name of a
siconos.numerics constant, an iparam VALUE an integer or a constant's name; a name siconos.numerics
does not have ends the program with "siconos.numerics has no constant NAME" (a crashed row).
Output: GAMMA.npy (the reaction r, or z of the LCP; float64, length n) and INFO.json:
iterations = iparam[SICONOS_IPARAM_ITER_DONE], status `converged` when Siconos' info is 0 (and,
for a run that used every iteration, its own error is within the tolerance), else
`max_iterations`; time_s = the driver call alone (the row's time; the harness keeps the wall
time of the whole program as the counter wall_time_s); counters siconos_error
(dparam[SICONOS_DPARAM_RESIDU], Siconos' own error), siconos_info and siconos_time_s. Needs
Debian's python3-siconos (run with /usr/bin/python3).
"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp

import siconos.numerics as sn

# name: (kind, solver id, {iparam index name: value name}) -- the options set beside the
# tolerance and the iteration cap (Siconos' defaults otherwise). The 3-D Coulomb solvers by
# the suffix of their id, SICONOS_FRICTION_3D_<suffix>:
FC3D = ("nsgs NSGS, nsn-ac NSN_AC, nsn-jm NSN_AC, nsn-nm NSN_NM, nsn-fb NSN_FB, ppa PROX, "
        "tfp TFP, pfp PFP, dsfp DSFP, admm ADMM, vi-fpp VI_FPP, vi-eg VI_EG")
SOLVERS = {
    name: ("fc3d", "SICONOS_FRICTION_3D_" + suffix, {})
    for name, suffix in (entry.split() for entry in FC3D.split(", "))
}
# nsn-jm: NSN_AC with the Jean-Moreau formulation
SOLVERS["nsn-jm"][2]["SICONOS_FRICTION_3D_NSN_FORMULATION"] = \
    "SICONOS_FRICTION_3D_NSN_FORMULATION_JEANMOREAU_STD"
SOLVERS["fc2d-nsgs"] = ("fc2d", "SICONOS_FRICTION_2D_NSGS", {})
SOLVERS["lemke"] = ("lcp", "SICONOS_LCP_LEMKE", {})
SOLVERS["newton-fb"] = ("lcp", "SICONOS_LCP_NEWTON_FB_FBLSA", {})


def read_npz(path):
    with np.load(path) as f:
        header = json.loads(f["instance"].tobytes())
        if "data" not in f.files:
            raise SystemExit(f"{path}: a matrix-free instance (N not formed): Siconos needs N")
        n = int(f["shape"][0])
        w = sp.csc_matrix((f["data"], f["indices"], f["indptr"]), shape=(n, n))
        q = np.array(f["r"], dtype=float)
    return header, w, q


def constant(name):
    """The integer constant `name` of siconos.numerics; ends the program when there is none."""
    value = getattr(sn, name, None)
    if not isinstance(value, int) or isinstance(value, bool):
        raise SystemExit(f"siconos.numerics has no constant {name}")
    return value


def set_options(so, sid, options):
    """Set the iparam and dparam entries of `options` (read from OPTIONS.json) on `so`."""
    for key, convert in (("iparam", lambda v: v if isinstance(v, int) else constant(v)),
                         ("dparam", float)):
        array = getattr(so, key)
        for name, value in options.get(key, {}).items():
            index = constant(name)
            if not 0 <= index < len(array):
                raise SystemExit(f"{name} = {index} is not a {key} index of {sid} "
                                 f"({len(array)} entries)")
            array[index] = convert(value)


def main(argv):
    if len(argv) not in (6, 7) or argv[0] not in SOLVERS:
        raise SystemExit(f"usage: siconos_solver.py {{{','.join(SOLVERS)}}} INSTANCE.npz "
                         "GAMMA.npy INFO.json TOL MAX_ITER [OPTIONS.json]")
    key, inst, gamma_path, info_path = argv[:4]
    tol, max_iter = float(argv[4]), int(argv[5])
    kind, sid, options = SOLVERS[key]
    header, w, q = read_npz(inst)
    n = q.size
    if kind == "lcp":
        problem = sn.LCP(np.asarray(w.toarray()), q)
        driver = sn.linearComplementarity_driver
    else:
        dim = 3 if kind == "fc3d" else 2
        mu = np.asarray(header["mu"], dtype=float)
        if kind == "fc2d" or w.nnz == n * n:
            wm = np.asfortranarray(w.toarray())
        else:
            wm = sp.csc_matrix(w)
            wm.indices = wm.indices.astype(np.int64)
            wm.indptr = wm.indptr.astype(np.int64)
        problem = sn.FrictionContactProblem(dim, wm, q, mu)
        driver = sn.fc3d_driver if dim == 3 else sn.fc2d_driver
    so = sn.SolverOptions(getattr(sn, sid))
    so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iter
    so.dparam[sn.SICONOS_DPARAM_TOL] = tol
    for index, value in options.items():
        so.iparam[getattr(sn, index)] = getattr(sn, value)
    if len(argv) == 7:
        with open(argv[6]) as f:
            set_options(so, sid, json.load(f))
    x, y = np.zeros(n), np.zeros(n)
    t0 = time.perf_counter()
    info = int(driver(problem, x, y, so))
    elapsed = time.perf_counter() - t0
    np.save(gamma_path, np.ascontiguousarray(x, dtype=np.float64))
    iterations = int(so.iparam[sn.SICONOS_IPARAM_ITER_DONE])
    error = float(so.dparam[sn.SICONOS_DPARAM_RESIDU])
    # Siconos' info = 0 is its claim of convergence; a run that used every iteration is
    # called converged only when Siconos' own error is within the tolerance
    converged = info == 0 and (iterations < max_iter or error <= tol)
    if converged:
        message = ""
    elif info == 0:
        message = (f"{sid}: stopped at the iteration cap {max_iter} with siconos error "
                   f"{error:.3e} > tol {tol:.1e} (siconos info=0)")
    else:
        message = f"{sid}: siconos info={info}"
    with open(info_path, "w") as f:
        json.dump({
            "iterations": iterations,
            "status": "converged" if converged else "max_iterations",
            "message": message,
            # the driver call alone (no interpreter start-up, no reading): the row's time_s
            "time_s": elapsed,
            "counters": {
                "siconos_error": error,
                "siconos_info": info,
                "siconos_time_s": elapsed,
            },
        }, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
