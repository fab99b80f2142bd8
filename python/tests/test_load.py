"""Loaders on every fixture format, the arrays (zero-copy, equal to SciPy's reading) and
load errors, against the ``cpbench`` binary where it prints the same thing."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import cpbench
from cpbench import _cpbench
from conftest import cli, cpbench_bin, fixture


def cli_hash(path, *args) -> str:
    """The content hash `cpbench info` prints."""
    out = cli("info", path, *args).stdout
    return next(l.split()[1] for l in out.splitlines() if l.startswith("hash"))


# (file, load options, class, n, cone dim)
CASES = [
    ("bundles/scipy_ccp", {}, "ccp", 6, 3),
    ("siconos-fc3d/NESpheres_10_1.dat", {}, "ccp", None, 3),
    ("siconos-fc3d/Rover4396.dat", {"symmetrize": True}, "ccp", None, 3),
    ("lcp/lcp_mmc.dat", {}, "lcp", 26, None),
    ("lcp/lcp_deudeu_block.dat", {}, "lcp", None, None),
    ("lcp/lcp_tobenna.dat", {}, "lcp", None, None),
    ("fc2d/fc2d_granularflowonwall_00667_00000.dat", {}, "ccp", None, 2),
    ("fc2d/FC2D_SliderCrankLagrangian00000.dat", {"cls": "coulomb"}, "coulomb", None, 2),
    ("fclib/Capsules-i125-1213.hdf5", {"symmetrize": True}, "ccp", 858, 3),
    ("fclib/local_problem_test.hdf5", {"cls": "coulomb"}, "coulomb", None, 3),
    ("fclib/Box_Stacks-i0122-82-5.hdf5", {}, "ccp", None, 3),
    ("fclib/CubeH8.hdf5", {"cls": "lcp"}, "lcp", None, None),
    ("gfc3d/GFC3D_Example1.dat", {}, "ccp", None, 3),
    ("fc2d/gfc2d_granularflowonwall_00069_00350.dat", {}, "ccp", None, 2),
    ("siconos-fc3d/NESpheres_10_1.dat", {"cls": "blcp"}, "blcp", None, 3),
    ("siconos-fc3d/NESpheres_10_1.dat", {"cls": "lcp-pyramid:5"}, "lcp", None, None),
]


def cli_args(opts: dict) -> list[str]:
    args = []
    if opts.get("symmetrize"):
        args.append("--symmetrize")
    if "cls" in opts:
        args += ["--class", opts["cls"]]
    return args


@pytest.mark.parametrize("rel,opts,cls,n,dim", CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_every_loader(rel, opts, cls, n, dim):
    path = fixture(rel)
    inst = cpbench.load(path, **opts)
    assert inst.cls == cls
    assert inst.cone_dim == dim
    if n is not None:
        assert inst.n == n
    N = inst.N
    assert N.shape == (inst.n, inst.n)
    assert N.nnz == inst.nnz
    assert inst.r.shape == (inst.n,)
    if dim is not None:
        assert inst.contacts * dim == inst.n
        assert inst.mu.shape == (inst.contacts,)
        assert np.all(inst.mu >= 0)
    else:
        assert inst.mu is None and inst.contacts is None
    # the products of the SciPy matrix are the Rust instance's (rows of N, also non-symmetric)
    x = np.linspace(-1.0, 2.0, inst.n)
    y = np.frombuffer(inst._raw.matvec(x), dtype=np.float64)
    np.testing.assert_allclose(N @ x, y, rtol=1e-12, atol=1e-12 * np.abs(y).max())
    # the same instance as the command line reads (content hash)
    assert inst.hash == cli_hash(path, *cli_args(opts))


def test_npz_written_by_the_cli(tmp_path):
    src = fixture("siconos-fc3d/Rover4396.dat")
    npz = tmp_path / "rover.npz"
    cli("convert", src, npz, "--symmetrize")
    inst = cpbench.load(npz)
    assert inst.hash == cpbench.load(src, symmetrize=True).hash == cli_hash(npz)
    assert inst.name == "Rover4396__ccp" and inst.provenance["source"] == str(src)


def test_non_symmetric_n_is_shown_by_rows():
    inst = cpbench.load(fixture("lcp/lcp_tobenna.dat"))
    assert not inst.symmetric
    M = inst.N.toarray()
    assert np.abs(M - M.T).max() > 0
    e0 = np.zeros(inst.n)
    e0[0] = 1.0
    # column 0 of N, from the Rust product, is column 0 of the SciPy matrix
    col = np.frombuffer(inst._raw.matvec(e0), dtype=np.float64)
    np.testing.assert_array_equal(M[:, 0], col)


def test_arrays_are_zero_copy():
    inst = cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"))
    raw = inst._raw
    # two reads of one buffer share their memory: nothing was copied
    for name in ("r", "mu", "indptr", "indices", "data"):
        a = np.frombuffer(raw.buffer(name), dtype=raw.buffer(name).dtype)
        b = np.frombuffer(raw.buffer(name), dtype=raw.buffer(name).dtype)
        assert np.shares_memory(a, b), name
    assert isinstance(inst.r.base, _cpbench.Buffer)
    assert np.shares_memory(inst.N.data, np.frombuffer(raw.buffer("data")))
    assert np.shares_memory(inst.N.indices, np.frombuffer(raw.buffer("indices"), dtype=np.int64))
    assert np.shares_memory(inst.N.indptr, np.frombuffer(raw.buffer("indptr"), dtype=np.int64))
    assert inst.N.indices.dtype == np.int64
    assert not inst.r.flags.writeable
    with pytest.raises(ValueError):
        inst.r[0] = 1.0
    # the arrays keep the instance alive
    r, expected = inst.r, inst.r.copy()
    del inst, raw
    import gc

    gc.collect()
    np.testing.assert_array_equal(r, expected)


def test_arrays_equal_scipy_reading_of_the_bundle():
    b = fixture("bundles/scipy_ccp")
    inst = cpbench.load(b)
    N = scipy.io.mmread(b / "N.mtx")
    N = N.toarray() if sp.issparse(N) else N
    np.testing.assert_array_equal(inst.N.toarray(), N)
    np.testing.assert_array_equal(inst.r, np.asarray(scipy.io.mmread(b / "r.mtx")).ravel())
    header = json.loads((b / "instance.json").read_text())
    np.testing.assert_array_equal(inst.mu, [header["mu"]] * 2)
    assert inst.name == header["name"] == "scipy_ccp"


def test_load_errors_carry_the_cli_message(tmp_path):
    missing = tmp_path / "missing.dat"
    with pytest.raises(cpbench.CpbenchFileNotFoundError) as e:
        cpbench.load(missing)
    assert isinstance(e.value, FileNotFoundError)
    assert isinstance(e.value, cpbench.CpbenchError)
    bad = tmp_path / "bad.dat"
    bad.write_text("3 2 0 6 6\n1 2 x\n")
    with pytest.raises(cpbench.CpbenchError) as e2:
        cpbench.load(bad)
    for path, err in ((missing, e), (bad, e2)):
        out = subprocess.run([str(cpbench_bin()), "info", str(path)], capture_output=True, text=True)
        assert out.returncode == 2
        assert out.stderr == f"error: {err.value}\n"
    with pytest.raises(cpbench.CpbenchError, match="invalid class 'ccq'"):
        cpbench.load(fixture("lcp/lcp_mmc.dat"), cls="ccq")
    # a non-symmetric W read as a CCP without symmetrize
    with pytest.raises(cpbench.CpbenchError, match="not symmetric"):
        cpbench.load(fixture("fclib/Capsules-i125-1213.hdf5"))


def test_complex_arrays_are_refused():
    # issue 30: NumPy dropped the imaginary part with a warning only
    N = np.eye(3, dtype=complex) + 1e-3j
    with pytest.raises(cpbench.CpbenchError, match=r"N is complex \(dtype complex128\)"):
        cpbench.Instance.from_arrays(N, -np.ones(3))
    with pytest.raises(cpbench.CpbenchError, match="r is complex"):
        cpbench.Instance.from_arrays(np.eye(3), np.array([1, 2, 3j]))
    with pytest.raises(cpbench.CpbenchError, match="N is complex"):
        cpbench.Instance.from_arrays(sp.eye(3, dtype=complex, format="csr"), -np.ones(3))
    assert cpbench.Instance.from_arrays(np.eye(3), -np.ones(3)).n == 3


def test_compliance_adds_to_the_diagonal_and_survives_a_save(tmp_path):
    """``with_compliance`` gives ``N + R`` (off-diagonal entries unchanged), keeps ``R``, and an
    ``.npz`` written and read back has the same ``R`` and hash; a negative entry is refused by
    its row."""
    inst = cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"))
    assert inst.compliance is None
    rc = np.linspace(0.0, 0.26, inst.n)
    soft = inst.with_compliance(rc)
    np.testing.assert_array_equal(soft.compliance, rc)
    diff = (soft.N - inst.N).toarray()
    np.testing.assert_allclose(np.diag(diff), rc, rtol=0, atol=1e-15)
    assert np.abs(diff - np.diag(np.diag(diff))).max() == 0.0
    assert soft.hash != inst.hash
    back = cpbench.load(cpbench.save(soft, tmp_path / "soft.npz"))
    np.testing.assert_array_equal(back.compliance, rc)
    assert back.hash == soft.hash
    bad = rc.copy()
    bad[4] = -1.0
    with pytest.raises(cpbench.CpbenchError, match="compliance R at row 4 is -1"):
        inst.with_compliance(bad)


def test_a_global_file_loads_matrix_free_and_solves_as_condensed():
    # GFC3D_OneContact: a global Siconos file with a general (non-diagonal) M
    path = fixture("gfc3d/GFC3D_OneContact.dat")
    free = cpbench.load(path, operator="matrix-free")
    cond = cpbench.load(path)
    assert free.operator == "matrix-free"
    assert cond.operator == "csc"
    assert cpbench.load(path, operator="block").operator == "block"
    for solver in ("apgd", "pgs"):
        a = cpbench.solve(free, solver, tol=1e-10, max_iter=100000)
        b = cpbench.solve(cond, solver, tol=1e-10, max_iter=100000)
        assert a.success and b.success, (solver, a.status, b.status)
        np.testing.assert_allclose(a.gamma, b.gamma, atol=1e-8, err_msg=solver)
    # the Coulomb problem on the same storage: nsgs agrees with the condensed Coulomb reading
    cf = cpbench.load(path, cls="coulomb", operator="matrix-free")
    cc = cpbench.load(path, cls="coulomb")
    assert (cf.operator, cf.cls, cc.cls) == ("matrix-free", "coulomb", "coulomb")
    a = cpbench.solve(cf, "nsgs", tol=1e-10, max_iter=100000)
    b = cpbench.solve(cc, "nsgs", tol=1e-10, max_iter=100000)
    assert a.success and b.success, (a.status, b.status)
    np.testing.assert_allclose(a.gamma, b.gamma, atol=1e-8)
    with pytest.raises(cpbench.CpbenchError, match="invalid operator 'sparse'"):
        cpbench.load(path, operator="sparse")
    # a stored N cannot be made matrix-free
    with pytest.raises(cpbench.CpbenchError, match="matrix-free"):
        cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"), operator="matrix-free")
