"""Compare two cpbench solvers with a projected gradient written in Python.

Runnable as a script (``python compare.py [OUT_DIR]``; the figures go to OUT_DIR, default a
temporary folder) or cell by cell (``# %%``) in an editor, after ``pip install ./python``
(which brings pandas and matplotlib).
"""

# %% Setup: three instances shipped in the repository
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import cpbench

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="cpbench-compare-"))
out_dir.mkdir(parents=True, exist_ok=True)

instances = [
    cpbench.load(FIXTURES / "lcp" / "lcp_mmc.dat"),  # an LCP, n = 26
    cpbench.load(FIXTURES / "siconos-fc3d" / "NESpheres_10_1.dat"),  # a CCP on 3-D cones
    cpbench.load(FIXTURES / "fclib" / "Capsules-i125-1213.hdf5", symmetrize=True),  # 286 contacts
]
for inst in instances:
    print(inst)


# %% A Python solver: projected gradient, step 1/L from a power iteration
def project(g, cone):
    """Projection onto K: the nonnegative orthant, or the friction cones (2-D or 3-D)."""
    if cone["class"] == "lcp":
        return np.maximum(g, 0.0)
    mu, G = cone["mu"], g.reshape(-1, cone["dim"]).copy()
    n, t = G[:, 0], np.linalg.norm(G[:, 1:], axis=1)
    polar, inside = mu * t <= -n, t <= mu * n
    mid = ~(inside | polar)
    a = (mu * t + n) / (mu**2 + 1)
    G[mid, 0] = a[mid]
    G[mid, 1:] *= (mu * a / np.where(t > 0, t, 1.0))[mid, None]
    G[polar] = 0.0
    return G.ravel()


def projected_gradient(N, r, cone, settings, callback):
    x = np.ones(len(r))
    for _ in range(50):  # power iteration: L ~ lambda_max(N)
        x = N @ x
        x /= np.linalg.norm(x)
    L = 1.01 * float(x @ (N @ x))
    g = settings["gamma0"].copy()
    while callback(g := project(g - (N @ g + r) / L, cone)):
        pass  # the harness records every iterate and says when to stop
    return g


# %% Solve every instance with apgd, pgs and the Python solver
solvers = ["apgd", "pgs", projected_gradient]
results = {}
for inst in instances:
    for s in solvers:
        res = cpbench.solve(inst, s, tol=1e-6, max_iter=5000)
        results[(inst.name, res.solver)] = res
        print(f"{inst.name:28s} {res.solver:24s} {res.status:15s} success={res.success!s:5s} "
              f"iterations={res.iterations:5d} nat_map_rel_2={res.residuals['nat_map_rel_2']:.2e} "
              f"time={res.time * 1e3:.1f} ms")

# %% Plot the traces: the stopping residual against iterations, one panel per instance
fig, axes = plt.subplots(1, len(instances), figsize=(5 * len(instances), 4), constrained_layout=True)
for ax, inst in zip(axes, instances):
    for (name, solver), res in results.items():
        if name != inst.name:
            continue
        t = res.trace  # a pandas DataFrame: iteration, time_s, matvecs, residual columns
        ax.semilogy(t["iteration"], t[res.check_residual], label=solver)
    ax.axhline(1e-6, color="gray", lw=0.8, ls="--")
    ax.set_title(inst.name)
    ax.set_xlabel("iteration")
    ax.set_ylabel("nat_map_rel_2")
    ax.legend()
png = out_dir / "compare.png"
fig.savefig(png, dpi=100)
print(f"wrote {png}")

# %% The same comparison as a results folder (summary.csv, traces/, plots/), as `cpbench run`
summary = cpbench.run(
    [FIXTURES / "lcp" / "lcp_mmc.dat", FIXTURES / "siconos-fc3d" / "NESpheres_10_1.dat"],
    solvers=solvers,
    out=out_dir / "run",
    max_iter=5000,
)
print(summary[["instance", "solver", "status", "success", "iterations", "nat_map_rel_2"]])
