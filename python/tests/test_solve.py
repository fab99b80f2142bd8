"""``cpbench.solve`` and ``cpbench.residuals`` against ``cpbench run`` rows (same iterations,
residuals equal bit for bit), Python callables checked by the harness, and solve errors."""

from __future__ import annotations

import subprocess

import time

import numpy as np
import pytest

import cpbench
from conftest import cpbench_bin, fixture, projected_gradient

# (fixture, load options, instance name in the CLI's summary)
INSTANCES = [
    ("lcp/lcp_mmc.dat", "lcp_mmc"),
    ("siconos-fc3d/NESpheres_10_1.dat", "NESpheres_10_1__ccp"),
    ("fclib/Capsules-i125-1213.hdf5", "Capsules-i125-1213__ccp"),
    ("fc2d/fc2d_granularflowonwall_00667_00000.dat", "fc2d_granularflowonwall_00667_00000__ccp"),
]


def same(a: float, b: float) -> bool:
    """Equal bit for bit (NaN equal to NaN)."""
    return np.float64(a).tobytes() == np.float64(b).tobytes()


@pytest.mark.parametrize("solver", ["apgd", "pgs"])
@pytest.mark.parametrize("rel,name", INSTANCES, ids=[i[1] for i in INSTANCES])
def test_solve_and_residuals_equal_the_cli_row(cli_runs, rel, name, solver):
    row = cli_runs[(name, solver)]
    inst = cpbench.load(fixture(rel), symmetrize=True)
    assert inst.name == name and inst.hash == row["instance_hash"]
    res = cpbench.solve(inst, solver)
    assert res.solver == solver
    assert res.iterations == int(row["iterations"])
    assert res.matvecs == int(row["matvecs"])
    assert res.status == row["status"]
    assert res.success == (row["success"] == "yes")
    assert res.best_iteration == int(row["best_iteration"])
    assert res.check_residual == row["check_residual"]
    again = cpbench.residuals(inst, res.gamma)
    assert list(again) == list(cpbench.RESIDUAL_NAMES)
    for k in cpbench.RESIDUAL_NAMES:
        assert same(again[k], float(row[k])), (k, again[k], row[k])
        assert same(res.residuals[k], float(row[k])), k
    # the trace: one row per iteration plus the start point
    t = res.trace
    assert list(t.columns[:3]) == ["iteration", "time_s", "matvecs"]
    assert len(t) == res.iterations + 1
    assert t["iteration"].iloc[-1] == res.iterations


def test_trace_equals_the_cli_trace(cli_runs):
    import csv

    row = cli_runs[("NESpheres_10_1__ccp", "apgd")]
    inst = cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"))
    res = cpbench.solve(inst, "apgd")
    out = cli_runs["__out__"]
    with open(out / "traces" / "NESpheres_10_1__ccp__apgd.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(res.trace) == int(row["iterations"]) + 1
    for k in ("nat_map_rel_2", "fc3d_error", "objective"):
        assert all(same(a, float(b[k])) for a, b in zip(res.trace[k], rows)), k
    assert [int(b["matvecs"]) for b in rows] == list(res.trace["matvecs"])


def test_python_solver_is_checked_by_the_harness():
    inst = cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"))
    ok = cpbench.solve(inst, projected_gradient, tol=1e-6, max_iter=20000)
    assert ok.solver == "py:projected_gradient"
    assert ok.status == "converged" and ok.success
    assert ok.residuals["nat_map_rel_2"] <= 1e-6
    assert ok.iterations > 1 and len(ok.trace) == ok.iterations + 1
    assert ok.matvecs == 0
    np.testing.assert_array_equal(ok.residuals["nat_map_rel_2"], ok.trace["nat_map_rel_2"].iloc[-1])

    def zeros(N, r, cone, settings, callback):
        return np.zeros(len(r))

    z = cpbench.solve(inst, zeros)
    assert not z.success and z.status == "stalled"  # it claims nothing; the harness says no
    assert z.residuals["nat_map_rel_2"] > 0.1

    def scaled(N, r, cone, settings, callback):
        return 2.0 * projected_gradient(N, r, cone, settings, lambda g: callback(g))

    s = cpbench.solve(inst, scaled)
    assert not s.success and s.residuals["nat_map_rel_2"] > 1e-3

    def liar(N, r, cone, settings, callback):
        return np.zeros(len(r)), {"status": "converged", "message": "trust me", "iterations": 5}

    lie = cpbench.solve(inst, liar)
    assert lie.status == "converged" and not lie.success
    # the solver's message first, then the harness's check says why the answer fails
    assert lie.message.startswith("trust me; check: nat_map_rel_2 = ") and lie.iterations == 5


def test_callback_stops_at_the_budget_and_after_the_solve():
    inst = cpbench.load(fixture("lcp/lcp_mmc.dat"))
    kept = []

    def forever(N, r, cone, settings, callback):
        kept.append(callback)
        g = np.zeros(len(r))
        assert settings["max_iter"] == 7 and settings["tol"] == 1e-9
        assert settings["residual"] == "nat_map_rel_2" and settings["time_limit"] is None
        assert settings["omega"] == 0.5  # the user's settings ride along
        while callback(g):
            pass
        assert callback.iterations == 7
        return g

    res = cpbench.solve(inst, forever, tol=1e-9, max_iter=7, settings={"omega": 0.5})
    assert res.iterations == 7 and res.status == "max_iterations"
    with pytest.raises(cpbench.CpbenchError, match="after its solve ended"):
        kept[0](np.zeros(inst.n))


def test_a_solver_without_callbacks_past_the_time_limit_is_max_time():
    # issue 30: it ran 4x past time_limit and its row said converged
    inst = cpbench.load(fixture("lcp/lcp_mmc.dat"))
    exact = cpbench.solve(inst, "lemke", tol=1e-12)

    def slow_exact(N, r, cone, settings, callback):
        time.sleep(0.4)
        return exact.gamma

    res = cpbench.solve(inst, slow_exact, time_limit=0.1)
    assert res.status == "max_time" and not res.success
    assert res.residuals["nat_map_rel_2"] <= 1e-9  # the answer itself is checked and right
    assert "past the time limit of 0.1 s, without reporting an iterate" in res.message
    assert "check: the run is past its time budget (status max_time)" in res.message
    assert res.time >= 0.4
    # within the limit it is judged on its answer as before
    assert cpbench.solve(inst, slow_exact, time_limit=5.0).status == "converged"


def test_python_solver_failures():
    inst = cpbench.load(fixture("lcp/lcp_mmc.dat"))

    def boom(N, r, cone, settings, callback):
        callback(np.zeros(len(r)))
        raise RuntimeError("boom at step 1")

    b = cpbench.solve(inst, boom)
    assert b.status == "crashed" and not b.success
    assert b.message.startswith("RuntimeError: boom at step 1 (raised at ")
    assert b.iterations == 1

    def short_iterate(N, r, cone, settings, callback):
        callback(np.zeros(3))
        return np.zeros(len(r))

    s = cpbench.solve(inst, short_iterate)
    assert s.status == "bad_output"
    assert s.message.startswith("iterate 1 has length 3, instance has n = 26; check: "), s.message

    def short_answer(N, r, cone, settings, callback):
        return np.zeros(len(r) - 1)

    a = cpbench.solve(inst, short_answer)
    assert a.status == "bad_output" and "the answer has length 25, instance has n = 26" in a.message

    def matrix_answer(N, r, cone, settings, callback):
        return np.zeros((len(r), 2))

    m = cpbench.solve(inst, matrix_answer)
    assert m.status == "bad_output" and "shape (26, 2)" in m.message

    def nothing(N, r, cone, settings, callback):
        return None

    assert cpbench.solve(inst, nothing).status == "bad_output"


def test_cone_and_arrays_handed_to_a_python_solver():
    inst = cpbench.load(fixture("fc2d/fc2d_granularflowonwall_00667_00000.dat"))
    seen = {}

    def look(N, r, cone, settings, callback):
        seen.update(cone=cone, N=N, r=r, gamma0=settings["gamma0"])
        return settings["gamma0"]

    warm = np.ones(inst.n)
    cpbench.solve(inst, look, warm_start=warm)
    assert seen["cone"]["class"] == "ccp" and seen["cone"]["dim"] == 2
    assert seen["cone"]["contacts"] == inst.contacts
    # the solve of a loaded instance hands its own arrays, not copies
    assert np.shares_memory(seen["r"], inst.r) and np.shares_memory(seen["N"].data, inst.N.data)
    np.testing.assert_array_equal(seen["gamma0"], inst.project(warm))


def test_warm_start_from_the_solution():
    inst = cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"))
    cold = cpbench.solve(inst, "apgd", tol=1e-8)
    warm = cpbench.solve(inst, "apgd", tol=1e-8, warm_start=cold.gamma)
    assert cold.success and warm.success and warm.iterations < cold.iterations
    with pytest.raises(cpbench.CpbenchError, match="warm start"):
        cpbench.solve(inst, "apgd", warm_start=np.zeros(3))


def test_solve_errors_carry_the_cli_message(tmp_path):
    inst = cpbench.load(fixture("lcp/lcp_mmc.dat"))
    with pytest.raises(cpbench.CpbenchError) as e:
        cpbench.solve(inst, "nosuchsolver")
    out = subprocess.run(
        [str(cpbench_bin()), "run", "--instances", str(fixture("lcp/lcp_mmc.dat")),
         "--solvers", "nosuchsolver", "--out", str(tmp_path / "x")],
        capture_output=True, text=True,
    )
    assert out.returncode == 2 and out.stderr == f"error: {e.value}\n"
    with pytest.raises(cpbench.CpbenchError, match="omega"):
        cpbench.solve(inst, "pgs", settings={"omega": 5.0})
    with pytest.raises(cpbench.CpbenchError, match="tol"):
        cpbench.solve(inst, "pgs", tol=-1.0)
    with pytest.raises(cpbench.CpbenchError, match="unknown residual 'res9'"):
        cpbench.solve(inst, "pgs", residual="res9")
    with pytest.raises(cpbench.CpbenchError, match="length"):
        cpbench.residuals(inst, np.zeros(3))
    # settings apply: a different omega, a different iteration count
    a = cpbench.solve(inst, "pgs", settings={"omega": 0.8})
    b = cpbench.solve(inst, "pgs@omega=0.8")
    c = cpbench.solve(inst, "pgs")
    assert a.iterations == b.iterations != c.iterations


def test_without_pandas(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    inst = cpbench.load(fixture("lcp/lcp_mmc.dat"))
    res = cpbench.solve(inst, "pgs")
    assert isinstance(res.trace, dict) and list(res.trace)[:3] == ["iteration", "time_s", "matvecs"]
    assert res.trace["iteration"].dtype == np.int64 and len(res.trace["iteration"]) == res.iterations + 1
    rows = cpbench.run([fixture("lcp/lcp_mmc.dat")], solvers=["pgs", "apgd"], out=tmp_path / "r",
                       plots=False, jobs=2)
    assert [r["solver"] for r in rows] == ["pgs", "apgd"]
    assert int(rows[0]["iterations"]) == res.iterations
