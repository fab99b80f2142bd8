"""A correct external solver for the external-solver protocol (docs/external.md): projected
gradient on an LCP (gamma >= 0) or a CCP (3-D Coulomb cones), reading the instance as
``.npz`` and writing gamma (``.npy``), its own trace CSV and the info JSON.

usage: pg_solver.py INSTANCE.npz GAMMA.npy TRACE.csv INFO.json TOL MAX_ITER
"""

import json
import sys

import numpy as np
import scipy.sparse as sp


def project(g, cls, mu):
    if cls == "lcp":
        return np.maximum(g, 0.0)
    G = g.reshape(-1, 3).copy()
    n, t = G[:, 0], np.linalg.norm(G[:, 1:], axis=1)
    polar = mu * t <= -n
    mid = ~(t <= mu * n) & ~polar
    a = (mu * t + n) / (mu**2 + 1)
    scale = np.where(t > 0, mu * a / np.where(t > 0, t, 1.0), 0.0)
    G[mid, 0] = a[mid]
    G[mid, 1:] *= scale[mid, None]
    G[polar] = 0.0
    return G.ravel()


def main():
    inst, gamma_path, trace_path, info_path, tol, max_iter = sys.argv[1:7]
    tol, max_iter = float(tol), int(max_iter)
    z = np.load(inst)
    n = int(z["shape"][0])
    N = sp.csc_matrix((z["data"], z["indices"], z["indptr"]), shape=(n, n))
    r = z["r"]
    header = json.loads(z["instance"].tobytes())
    cls = header["class"]
    mu = np.asarray(header.get("mu", []), dtype=float)
    if mu.ndim == 0:
        mu = np.full(n // 3, float(mu))
    x = np.ones(n)
    for _ in range(100):
        x = N @ x
        x /= np.linalg.norm(x)
    L = 1.01 * float(x @ (N @ x))
    g = np.zeros(n)
    rows = []
    nr = max(np.linalg.norm(r), 1e-300)
    for k in range(1, max_iter + 1):
        new = project(g - (N @ g + r) / L, cls, mu)
        step = np.linalg.norm(new - g) * L / nr
        g = new
        rows.append((k, float(step)))
        if step <= tol * 1e-2:
            break
    np.save(gamma_path, g)
    with open(trace_path, "w") as f:
        f.write("iteration,residual\n")
        for k, s in rows:
            f.write(f"{k},{s!r}\n")
    with open(info_path, "w") as f:
        json.dump({"iterations": len(rows), "message": "projected gradient, own test"}, f)


main()
