"""``cpbench.save`` / ``cpbench.load`` round trips (same content hash) in every format, and
``Instance.from_arrays`` for every class."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import cpbench
from conftest import cli, fixture


@pytest.mark.parametrize(
    "rel,opts,suffixes",
    [
        ("siconos-fc3d/NESpheres_10_1.dat", {}, ["bundle", ".npz", ".hdf5"]),
        ("fc2d/fc2d_granularflowonwall_00667_00000.dat", {}, ["bundle", ".npz", ".h5"]),
        ("fclib/Capsules-i125-1213.hdf5", {"cls": "coulomb"}, ["bundle", ".npz", ".hdf5"]),
        ("lcp/lcp_tobenna.dat", {}, ["bundle", ".npz"]),
        ("siconos-fc3d/NESpheres_10_1.dat", {"cls": "blcp"}, ["bundle", ".npz"]),
    ],
)
def test_round_trips_keep_the_hash(tmp_path, rel, opts, suffixes):
    inst = cpbench.load(fixture(rel), **opts)
    for suffix in suffixes:
        path = tmp_path / ("b" if suffix == "bundle" else f"i{suffix}")
        assert cpbench.save(inst, path) == path
        back = cpbench.load(path, **({"cls": "coulomb"} if inst.cls == "coulomb" else {}))
        assert back.hash == inst.hash, suffix
        assert back.cls == inst.cls and back.n == inst.n
        np.testing.assert_array_equal(back.r, inst.r)
        assert (back.N != inst.N).nnz == 0
    # the CLI reads what we wrote as the same instance
    info = cli("info", tmp_path / "b").stdout
    assert f"hash            {inst.hash}" in info


def test_save_errors_and_explicit_format(tmp_path):
    lcp = cpbench.load(fixture("lcp/lcp_mmc.dat"))
    with pytest.raises(cpbench.CpbenchError, match="(?i)cone|coulomb|fclib"):
        cpbench.save(lcp, tmp_path / "x.hdf5")
    with pytest.raises(cpbench.CpbenchError, match="unknown output format 'csv'"):
        cpbench.save(lcp, tmp_path / "x", format="csv")
    cpbench.save(lcp, tmp_path / "as-npz.bin", format="npz")
    assert cpbench.load(tmp_path / "as-npz.bin").hash == lcp.hash


def test_from_arrays_every_class():
    ccp = cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"))
    # the loaded arrays give the same instance (hash), from sparse and from dense N
    a = cpbench.Instance.from_arrays(ccp.N, ccp.r, mu=ccp.mu, name="again")
    b = cpbench.Instance.from_arrays(ccp.N.toarray(), ccp.r.tolist(), mu=ccp.mu)
    assert a.hash == ccp.hash and a.name == "again" and a.cls == "ccp"
    # a dense N stores no zeros (the structure, and so the hash, differs; the values do not)
    assert (b.N != ccp.N).nnz == 0 and b.nnz == np.count_nonzero(ccp.N.toarray()) < ccp.nnz
    c = cpbench.Instance.from_arrays(sp.coo_matrix(ccp.N), ccp.r, mu=ccp.mu, cls="coulomb")
    assert c.cls == "coulomb" and c.hash == cpbench.load(
        fixture("siconos-fc3d/NESpheres_10_1.dat"), cls="coulomb").hash
    blcp = cpbench.Instance.from_arrays(ccp.N, ccp.r, mu=ccp.mu, cls="blcp")
    assert blcp.cls == "blcp" and blcp.cone_dim == 3
    fc2 = cpbench.load(fixture("fc2d/fc2d_granularflowonwall_00667_00000.dat"))
    d2 = cpbench.Instance.from_arrays(fc2.N, fc2.r, mu=fc2.mu)
    assert d2.cone_dim == 2 and d2.hash == fc2.hash
    lcp = cpbench.load(fixture("lcp/lcp_tobenna.dat"))
    l2 = cpbench.Instance.from_arrays(lcp.N, lcp.r)
    assert l2.cls == "lcp" and not l2.symmetric and l2.hash == lcp.hash
    # a box QP, solved and checked
    n = 50
    T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    box = cpbench.Instance.from_arrays(T, -np.ones(n), lo=np.zeros(n), hi=np.full(n, 10.0))
    assert box.cls == "box" and box.mu is None
    np.testing.assert_array_equal(box.lo, 0.0)
    res = cpbench.solve(box, "mprgp", tol=1e-8)
    assert res.success and res.gamma.max() <= 10.0


def test_from_arrays_errors():
    with pytest.raises(cpbench.CpbenchError, match="not symmetric"):
        cpbench.Instance.from_arrays(np.array([[2.0, 1.0], [0.0, 2.0]]), [1.0, 1.0], mu=None,
                                     lo=[0, 0], hi=[1, 1])
    with pytest.raises(cpbench.CpbenchError, match="size mismatch: r"):
        cpbench.Instance.from_arrays(np.eye(3), [1.0, 2.0])
    with pytest.raises(cpbench.CpbenchError, match="negative friction"):
        cpbench.Instance.from_arrays(np.eye(3), [1.0, 2.0, 3.0], mu=[-0.5])
    with pytest.raises(cpbench.CpbenchError, match="non-finite"):
        cpbench.Instance.from_arrays(np.eye(2), [np.nan, 0.0])
    with pytest.raises(cpbench.CpbenchError, match="square"):
        cpbench.Instance.from_arrays(np.ones((2, 3)), [1.0, 2.0])
    with pytest.raises(cpbench.CpbenchError, match="both lo and hi"):
        cpbench.Instance.from_arrays(np.eye(2), [1.0, 2.0], lo=[0, 0])


def hand_jointed_arrays():
    """The hand-built jointed instance of the Rust joint tests (test-support's
    ``hand_jointed``): ``N = [[2 I, I], [I, 2 I]]``, ``r = (2, 0, 0, -1, 2, 0)``, block 0 a joint,
    block 1 a cone with ``mu = 0.5``. Eliminating the joint (``x_0 = -(r_0 + x_1) / 2``) leaves
    ``N' = 1.5 I``, ``r' = (-2, 2, 0)``: the CCP answer is ``x_1 = (1.6, -0.8, 0)`` (the
    projection of ``-r' / 1.5`` onto the cone, derived in problems/tests/it/joints.rs), so
    ``x_0 = (-1.8, 0.4, 0)``."""
    N = np.block([[2 * np.eye(3), np.eye(3)], [np.eye(3), 2 * np.eye(3)]])
    return N, np.array([2.0, 0.0, 0.0, -1.0, 2.0, 0.0]), np.array([0.0, 0.5])


def test_from_arrays_takes_joint_blocks():
    N, r, mu = hand_jointed_arrays()
    inst = cpbench.Instance.from_arrays(N, r, mu=mu, joints=[0])
    assert inst.joints == 1 and inst.cls == "ccp" and inst.contacts == 2
    assert cpbench.Instance.from_arrays(N, r, mu=mu).joints == 0
    assert cpbench.Instance.from_arrays(N, r, mu=mu, joints=np.array([], dtype=np.int64)).joints == 0
    want = np.array([-1.8, 0.4, 0.0, 1.6, -0.8, 0.0])
    for solver in ("pgs", "apgd", "bb", "mpgp", "admm"):
        res = cpbench.solve(inst, solver, tol=1e-12, max_iter=100000)
        assert res.success, (solver, res.status, res.message)
        np.testing.assert_allclose(res.gamma, want, atol=1e-9, err_msg=solver)
        # the joint's equality row: its velocity vanishes
        np.testing.assert_allclose((N @ res.gamma + r)[:3], 0.0, atol=1e-9, err_msg=solver)
    # a solver that does not take joints is refused with the reason
    res = cpbench.solve(inst, "clarabel", tol=1e-8)
    assert not res.success and res.status == "unsupported", res.status
    assert "joint" in res.message
    # the Coulomb problem keeps them; the bundle round-trip too
    assert cpbench.Instance.from_arrays(N, r, mu=mu, joints=[0], cls="coulomb").joints == 1


def test_from_arrays_joint_errors():
    N, r, mu = hand_jointed_arrays()
    cases = [
        ([2], r"block index 2 out of range \(the cones have 2 blocks\)"),
        ([-1], "negative block index -1"),
        ([0, 0], "block index 0 given twice"),
        ([1], "must be the first blocks 0..1.*block 0 is not a joint"),
        ([0.5], "joints must be integer block indices"),
    ]
    for joints, msg in cases:
        with pytest.raises(cpbench.CpbenchError, match=msg):
            cpbench.Instance.from_arrays(N, r, mu=mu, joints=joints)
    with pytest.raises(cpbench.CpbenchError, match="joints are blocks of Coulomb cones"):
        cpbench.Instance.from_arrays(N, r, joints=[0])
    # mu must be 0 on a joint (the validation's typed error)
    with pytest.raises(cpbench.CpbenchError, match="joint"):
        cpbench.Instance.from_arrays(N, r, mu=[0.3, 0.5], joints=[0])
    # friction boxes have no free block
    with pytest.raises(cpbench.CpbenchError, match="joint"):
        cpbench.Instance.from_arrays(N, r, mu=mu, joints=[0], cls="blcp")
