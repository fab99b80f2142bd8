#!/usr/bin/env python3
"""Write the checked-in seeds of fuzz/seeds/ that are derived, not hand-written:

- variants_json/solver-<name>.json: one variant per solver of docs/solvers.md with every
  setting at its documented default (so the fuzzer starts from valid field names and types),
  and settings-all.json, the same as a `--settings` map;
- npz/*.npz: small `.npz` instances (pure Python: zipfile and the .npy header by hand, as
  numpy.savez writes them) of every class, int32 and int64 indices, a matrix-free one.

Run from anywhere: python3 fuzz/seeds/make_seeds.py (standard library only).
"""
import io
import json
import os
import re
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def solver_defaults():
    text = open(os.path.join(ROOT, "docs", "solvers.md"), encoding="utf-8").read()
    out = {}
    for sec in re.split(r"^### ", text, flags=re.M)[1:]:
        name = sec.split("\n", 1)[0].strip()
        if not re.fullmatch(r"[a-z][a-z0-9:-]*", name):
            continue
        fields = {}
        for m in re.finditer(r"^\| `([a-z_0-9]+)`[^|]*\| [^|]*\| `([^`]*)` \|", sec, flags=re.M):
            try:
                fields[m.group(1)] = json.loads(m.group(2))
            except ValueError:
                fields[m.group(1)] = m.group(2)
        out[name] = fields
    return out


def write_variants():
    d = os.path.join(HERE, "variants_json")
    defaults = solver_defaults()
    for name, fields in defaults.items():
        v = {"v-" + name: dict({"solver": name}, **fields)}
        with open(os.path.join(d, "solver-%s.json" % name), "w") as f:
            json.dump(v, f, indent=1)
            f.write("\n")
    with open(os.path.join(d, "settings-all.json"), "w") as f:
        json.dump(defaults, f, indent=1)
        f.write("\n")


def npy(arr, dtype, shape):
    """The bytes of a .npy file (version 1.0) holding `arr` (a flat list or bytes)."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        dtype,
        "(%s)" % (", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")),
    )
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    out = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")
    if dtype == "|u1" or dtype.startswith("|S"):
        out += bytes(arr)
    else:
        fmt = {"<f8": "d", "<i4": "i", "<i8": "q"}[dtype]
        out += struct.pack("<%d%s" % (len(arr), fmt), *arr)
    return out


def savez(path, members):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(name + ".npy", data)


def csc(dense):
    """SciPy's CSC arrays of a dense matrix given as a list of rows (any shape)."""
    m, n = len(dense), len(dense[0])
    indptr, indices, data = [0], [], []
    for j in range(n):
        for i in range(m):
            if dense[i][j] != 0.0:
                indices.append(i)
                data.append(dense[i][j])
        indptr.append(len(indices))
    return indptr, indices, data


def instance_npz(path, dense, r, header, index_dtype="<i4"):
    indptr, indices, data = csc(dense)
    n = len(dense)
    h = json.dumps(header).encode()
    savez(
        path,
        [
            ("format", npy(b"csc", "|S3", ())),
            ("shape", npy([n, n], "<i8", (2,))),
            ("indptr", npy(indptr, index_dtype, (n + 1,))),
            ("indices", npy(indices, index_dtype, (len(indices),))),
            ("data", npy(data, "<f8", (len(data),))),
            ("r", npy(r, "<f8", (n,))),
            ("instance", npy(h, "|u1", (len(h),))),
        ],
    )


def write_npz():
    d = os.path.join(HERE, "npz")
    spd3 = [[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]]
    instance_npz(os.path.join(d, "lcp3.npz"), spd3, [-1.0, 0.5, -2.0], {"class": "lcp"})
    instance_npz(
        os.path.join(d, "box3_i64.npz"),
        spd3,
        [-1.0, 0.5, -2.0],
        {"format_version": 1, "name": "box3", "class": "box", "lo": [0, "-inf", None], "hi": [1, 2, "inf"]},
        index_dtype="<i8",
    )
    spd6 = [[0.0] * 6 for _ in range(6)]
    for i in range(6):
        spd6[i][i] = 2.0 + i
        if i + 1 < 6:
            spd6[i][i + 1] = spd6[i + 1][i] = 0.25
    instance_npz(os.path.join(d, "ccp2.npz"), spd6, [-1, 0.1, 0.2, -0.5, 0, 0.3], {"class": "ccp", "mu": [0.5, 0.3]})
    instance_npz(os.path.join(d, "coulomb2.npz"), spd6, [-1, 0.1, 0.2, -0.5, 0, 0.3], {"class": "coulomb", "mu": 0.4})
    instance_npz(
        os.path.join(d, "ccp_2d.npz"), spd6, [-1, 0.1, -0.5, 0, 0.2, 0.3], {"class": "ccp", "cone_dim": 2, "mu": 0.5}
    )
    # matrix-free: N = D^T M^-1 D, D 6 x 3 (one body, one contact)
    m, n = 6, 3
    dd = [[0.0] * n for _ in range(m)]
    for k in range(3):
        dd[k][k] = -1.0
        dd[3 + k][(k + 1) % 3] = 0.5
    indptr, indices, data = csc(dd)
    h = json.dumps({"class": "ccp", "mu": 0.5, "matrix_storage": "matrix-free", "nnz": len(data)}).encode()
    savez(
        os.path.join(d, "matrix_free.npz"),
        [
            ("D_shape", npy([m, n], "<i8", (2,))),
            ("D_indptr", npy(indptr, "<i4", (n + 1,))),
            ("D_indices", npy(indices, "<i4", (len(indices),))),
            ("D_data", npy(data, "<f8", (len(data),))),
            ("M_diag", npy([2.0, 2.0, 2.0, 0.5, 0.5, 0.5], "<f8", (m,))),
            ("r", npy([-1.0, 0.2, 0.1], "<f8", (n,))),
            ("instance", npy(h, "|u1", (len(h),))),
        ],
    )


if __name__ == "__main__":
    write_variants()
    write_npz()
