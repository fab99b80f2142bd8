#!/usr/bin/env python3
"""Projected gradient through cpbench's external-solver protocol (docs/external.md).

    pg.py INSTANCE.npz GAMMA.npy TRACE.csv TOL MAX_ITER

min 1/2 gamma^T N gamma + r^T gamma over gamma in K (lcp: gamma >= 0; box: lo <= gamma <= hi;
ccp: 3-D Coulomb cones), step 1/L with L from power iterations; stops when
||gamma - P_K(gamma - g)|| / ||r|| <= TOL (cpbench's nat_map_rel_2), g = N gamma + r.
Needs numpy and scipy.
"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp

inst, gamma_path, trace_path, tol, max_iter = sys.argv[1:6]
tol, max_iter = float(tol), int(max_iter)
N = sp.load_npz(inst).tocsr()                      # SciPy's own layout in the .npz
with np.load(inst) as f:
    r, head = f["r"], json.loads(f["instance"].tobytes())


def bound(v, default):
    return default if v is None else float(v)     # "inf" / "-inf" strings included


def project(x):
    if head["class"] == "lcp":
        return np.maximum(x, 0.0)
    if head["class"] == "box":
        lo = np.array([bound(v, -np.inf) for v in head["lo"]])
        hi = np.array([bound(v, np.inf) for v in head["hi"]])
        return np.clip(x, lo, hi)
    mu = np.asarray(head["mu"], float)               # ccp: contact-interleaved, normal first
    y = x.reshape(-1, 3).copy()
    n, t = y[:, 0].copy(), np.linalg.norm(y[:, 1:], axis=1)
    a = (mu * t + n) / (1.0 + mu * mu)
    mid = (t > mu * n) & (mu * t > -n)
    y[mid, 0] = a[mid]
    y[mid, 1:] *= (mu * a / np.where(t > 0, t, 1.0))[mid, None]
    y[mu * t <= -n] = 0.0
    return y.ravel()


v = np.ones(r.size)
for _ in range(50):                                  # power iterations: L ~ ||N||_2
    v = N @ v / np.linalg.norm(N @ v)
step = 1.0 / (1.01 * np.linalg.norm(N @ v))
x, t0, scale = np.zeros(r.size), time.perf_counter(), max(np.linalg.norm(r), 1e-300)
with open(trace_path, "w") as trace:
    trace.write("iteration,time_s,residual\n")
    for k in range(1, max_iter + 1):
        x = project(x - step * (N @ x + r))
        res = np.linalg.norm(x - project(x - (N @ x + r))) / scale
        trace.write(f"{k},{time.perf_counter() - t0:.6e},{res:.6e}\n")
        if res <= tol:
            break
np.save(gamma_path, x)
