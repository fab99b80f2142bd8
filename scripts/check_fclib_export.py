#!/usr/bin/env python3
"""Check an fclib file written by `cpbench convert BUNDLE OUT.hdf5` against its bundle.

Reads OUT.hdf5 with h5py (that is, with the reference HDF5 C library), checks the layout of an
fclib local problem (int32 `m, n, nz, nzmax` of shape (1,), `nz = -2` CSR, int32 `p`, `i`,
float64 `x`, `vectors/q`, `vectors/mu`, int32 `spacedim` = 3, scalar fixed-length ASCII
`info/{title, description, math_info}`), rebuilds W with scipy.sparse.csr_matrix and compares
it with the bundle's N.mtx (scipy.io.mmread), q with r.mtx and mu with instance.json, bit for
bit. Not used by the tests; needs numpy, scipy and h5py (`pip install h5py scipy`).

    python3 scripts/check_fclib_export.py OUT.hdf5 BUNDLE_DIR [OUT2.hdf5 BUNDLE_DIR2 ...]

Exit status 0 when every pair matches exactly, 1 otherwise.
"""
import json
import sys
from pathlib import Path

import h5py
import numpy as np
import scipy.io
import scipy.sparse as sp


def check(h5path, bundle):
    errors = []
    with h5py.File(h5path, "r") as f:
        g = f["fclib_local"]
        for k in ("m", "n", "nz", "nzmax"):
            d = g["W"][k]
            if d.dtype != np.int32 or d.shape != (1,):
                errors.append(f"W/{k}: {d.dtype} {d.shape}, want int32 (1,)")
        m, n, nz, nzmax = (int(g["W"][k][0]) for k in ("m", "n", "nz", "nzmax"))
        if nz != -2:
            errors.append(f"W/nz = {nz}, want -2 (CSR)")
        p, i, x = g["W"]["p"][()], g["W"]["i"][()], g["W"]["x"][()]
        if p.dtype != np.int32 or i.dtype != np.int32 or x.dtype != np.float64:
            errors.append(f"W/p, i, x dtypes {p.dtype}, {i.dtype}, {x.dtype}")
        if p.shape != (m + 1,) or i.shape != (nzmax,) or x.shape != (nzmax,):
            errors.append(f"W shapes p {p.shape} i {i.shape} x {x.shape} for m {m} nzmax {nzmax}")
        w = sp.csr_matrix((x, i, p), shape=(m, n))
        q = g["vectors"]["q"][()]
        mu = g["vectors"]["mu"][()]
        spacedim = g["spacedim"][()]
        if spacedim.dtype != np.int32 or list(spacedim) != [3]:
            errors.append(f"spacedim {spacedim!r}")
        info = {}
        for k in ("title", "description", "math_info"):
            d = g["info"][k]
            t = d.id.get_type()
            ok = (d.shape == () and isinstance(t, h5py.h5t.TypeStringID) and not t.is_variable_str()
                  and t.get_cset() == h5py.h5t.CSET_ASCII and t.get_strpad() == h5py.h5t.STR_NULLTERM)
            if not ok:
                errors.append(f"info/{k}: not a scalar fixed-length ASCII NULLTERM string")
            info[k] = d[()].decode("ascii")
    n_mat = sp.csr_matrix(scipy.io.mmread(str(Path(bundle) / "N.mtx")))
    r = np.asarray(scipy.io.mmread(str(Path(bundle) / "r.mtx"))).ravel()
    meta = json.loads((Path(bundle) / "instance.json").read_text())
    want_mu = np.asarray(meta["mu"], dtype=np.float64)
    diff = abs(w - n_mat)
    dmax = diff.max() if diff.nnz else 0.0
    if w.shape != n_mat.shape or dmax != 0.0:
        errors.append(f"W differs from N.mtx: shapes {w.shape} {n_mat.shape}, max |diff| {dmax}")
    if w.nnz != meta["nnz"]:
        errors.append(f"W has {w.nnz} stored entries, instance.json says nnz = {meta['nnz']}")
    if not np.array_equal(q, r):
        errors.append(f"q differs from r.mtx: max |diff| {np.max(np.abs(q - r)) if q.shape == r.shape else 'shape'}")
    if not np.array_equal(mu, want_mu):
        errors.append("mu differs from instance.json")
    sym = abs(w - w.T).max() if w.nnz else 0.0
    print(f"{h5path}: {m} x {n}, nnz {w.nnz}, contacts {mu.size}, |W - W^T|_max {sym:.3e}, "
          f"title {info['title']!r}: {'OK' if not errors else 'FAILED'}")
    for e in errors:
        print(f"  {e}")
    return not errors


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__)
        return 2
    ok = all([check(argv[k], argv[k + 1]) for k in range(0, len(argv), 2)])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
