"""Write a cpbench bundle with NumPy and SciPy: `python3 write_bundle.py DIR [ccp|lcp] [SEED]`.

A random symmetric positive definite N (6 x 6) and r: class "ccp" (2 contacts, mu = 0.5 for
both) or "lcp". Load it with `cpbench info DIR` or `cpbench run --instances DIR`. The format
is described in docs/formats.md.
"""
import json, os, sys
import numpy as np, scipy.io, scipy.sparse

out, cls = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "ccp")
rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
B = rng.standard_normal((6, 6))
N = B @ B.T + 6.0 * np.eye(6)                     # symmetric positive definite, n = 6
r = rng.standard_normal((6, 1))                   # a column: mmwrite needs a 2-D array
os.makedirs(out, exist_ok=True)
scipy.io.mmwrite(os.path.join(out, "N.mtx"), scipy.sparse.coo_matrix(N))  # symmetric, one triangle
scipy.io.mmwrite(os.path.join(out, "r.mtx"), r)                           # array real general
meta = {"format_version": 1, "name": os.path.basename(os.path.normpath(out)), "class": cls}
if cls == "ccp":
    meta["mu"] = 0.5                              # one number: every contact (n / 3 = 2)
with open(os.path.join(out, "instance.json"), "w") as f:
    json.dump(meta, f, indent=2)
