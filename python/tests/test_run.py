"""``cpbench.run``: the results folder of ``cpbench run``, Python callables beside registry
solvers, and the external-solver protocol (a correct program, a crash, a time-out and a
wrong-length answer in one run, none aborting it)."""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pytest

import cpbench
from conftest import EXT, fixture, projected_gradient


def same(a: float, b: float) -> bool:
    return np.float64(a).tobytes() == np.float64(b).tobytes()


def test_run_writes_the_cli_folder_and_equal_rows(cli_runs, tmp_path):
    out = tmp_path / "run"
    paths = [fixture("lcp/lcp_mmc.dat"), fixture("fclib/Capsules-i125-1213.hdf5")]
    df = cpbench.run(paths, solvers=["apgd", projected_gradient], out=out, symmetrize=True)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "plots", "summary.csv", "traces"]
    assert df.attrs["out"] == out and df.attrs["executed"] == 4
    assert list(df["solver"]) == ["apgd", "py:projected_gradient"] * 2
    for _, row in df[df["solver"] == "apgd"].iterrows():
        cli = cli_runs[(row["instance"], "apgd")]
        assert row["iterations"] == int(cli["iterations"])
        assert row["instance_hash"] == cli["instance_hash"]
        for k in cpbench.RESIDUAL_NAMES:
            assert same(row[k], float(cli[k])), k
    py = df[df["solver"] == "py:projected_gradient"]
    assert list(py["success"]) == ["yes", "yes"] and list(py["status"]) == ["converged"] * 2
    assert (py["base_solver"] == "py:projected_gradient").all()
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["label"] for s in manifest["solvers"]] == ["apgd", "py:projected_gradient"]
    trace = (out / "traces" / "lcp_mmc__py_projected_gradient.csv").read_text().splitlines()
    lcp_py = py[py["instance"] == "lcp_mmc"].iloc[0]
    assert len(trace) == 1 + lcp_py["iterations"] + 1  # header, start point, iterates
    assert any(p.suffix == ".png" for p in (out / "plots").iterdir())
    # a second run into the folder skips what is present
    again = cpbench.run(paths, solvers=["apgd"], out=out, symmetrize=True)
    assert again.attrs["executed"] == 0 and again.attrs["skipped"] == 2


def test_external_protocol_failures_are_rows(tmp_path, monkeypatch):
    # scratch folders (kept for failed solves) go under the test's folder
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    py = sys.executable
    defs = {
        "solvers": {
            "pg": {
                "command": [py, str(EXT / "pg_solver.py"), "{instance}", "{gamma}", "{trace}",
                            "{info}", "{tol}", "{max_iter}"],
                "format": "npz",
                "output": "npy",
                "classes": ["lcp", "ccp"],
            },
            "crash": {"command": [py, str(EXT / "crash.py")], "format": "npz", "output": "npy"},
            "sleep": {"command": [py, str(EXT / "sleeper.py")], "format": "npz", "output": "npy",
                      "time_limit": 1.0},
            "wrong": {"command": [py, str(EXT / "wrong_length.py"), "{gamma}", "{n}"],
                      "format": "npz", "output": "npy"},
        }
    }
    path = tmp_path / "defs.json"
    path.write_text(json.dumps(defs))
    out = tmp_path / "run"
    t0 = time.monotonic()
    df = cpbench.run(
        [fixture("lcp/lcp_mmc.dat"), fixture("siconos-fc3d/NESpheres_10_1.dat")],
        solvers=["ext:pg", "ext:crash", "ext:sleep", "ext:wrong", "pgs"],
        out=out, external=path, plots=False, tol=1e-6,
    )
    elapsed = time.monotonic() - t0
    assert len(df) == 10  # every pair is a row: nothing aborted the run
    rows = {(r["instance"], r["solver"]): r for _, r in df.iterrows()}
    for inst in ("lcp_mmc", "NESpheres_10_1__ccp"):
        pg = rows[(inst, "ext:pg")]
        assert pg["success"] == "yes", pg["message"]
        assert pg["iterations"] > 1 and pg["message"] == "projected gradient, own test"
        crash = rows[(inst, "ext:crash")]
        assert crash["status"] == "crashed" and crash["success"] == "no"
        assert "something went badly wrong" in crash["message"] and "3" in crash["message"]
        sleep = rows[(inst, "ext:sleep")]
        assert sleep["status"] == "max_time" and "time limit" in sleep["message"]
        assert sleep["time_s"] < 5.0
        wrong = rows[(inst, "ext:wrong")]
        assert wrong["status"] == "bad_output" and wrong["success"] == "no"
        assert rows[(inst, "pgs")]["success"] == "yes"
    assert elapsed < 20.0
    # the program's own trace is recorded (its residual in ext_residual)
    header = (out / "traces" / "lcp_mmc__ext_pg__custom.csv").read_text().splitlines()[0].split(",")
    assert "ext_residual" in header
    # the failed solves kept their scratch folders, named in their messages
    kept = sorted(p.name for p in scratch.iterdir())
    assert len(kept) == 4 and all(("crash" in k or "wrong" in k) for k in kept), kept
    # the same run from a dict definition
    with pytest.raises(cpbench.CpbenchError, match="ext:nope"):
        cpbench.run([fixture("lcp/lcp_mmc.dat")], solvers=["ext:nope"], out=tmp_path / "x",
                    external=defs)
    with pytest.raises(cpbench.CpbenchError, match="ext:pg"):
        cpbench.run([fixture("lcp/lcp_mmc.dat")], solvers=["ext:pg"], out=tmp_path / "y")


def test_run_errors(tmp_path):
    with pytest.raises(cpbench.CpbenchError, match="unknown solver or variant 'nope'"):
        cpbench.run([fixture("lcp/lcp_mmc.dat")], solvers=["nope"], out=tmp_path / "a")
    with pytest.raises(cpbench.CpbenchFileNotFoundError):
        cpbench.run("missing-suite.json", solvers=["pgs"], out=tmp_path / "b")
    with pytest.warns(UserWarning, match="did not load"):
        df = cpbench.run([fixture("lcp/lcp_mmc.dat"), tmp_path / "gone.dat"], solvers=["pgs"],
                         out=tmp_path / "c", plots=False)
    assert sorted(df["status"]) == ["converged", "load_error"]


def test_solve_external_and_parallel_python_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    defs = {"solvers": {"pg": {
        "command": [sys.executable, str(EXT / "pg_solver.py"), "{instance}", "{gamma}",
                    "{trace}", "{info}", "{tol}", "{max_iter}"],
        "format": "npz", "output": "npy"}}}
    inst = cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"))
    res = cpbench.solve(inst, "ext:pg", external=defs)
    assert res.solver == "ext:pg" and res.success and res.iterations > 1
    assert "ext_residual" in res.trace.columns
    np.testing.assert_allclose(res.gamma, cpbench.solve(inst, "apgd", tol=1e-10).gamma, atol=1e-4)
    # two Python solvers and a registry one on two worker threads
    df = cpbench.run(
        [fixture("lcp/lcp_mmc.dat"), fixture("siconos-fc3d/NESpheres_10_1.dat")],
        solvers=[projected_gradient, cpbench.PythonSolver(projected_gradient, name="pg2"), "apgd"],
        out=tmp_path / "par", jobs=2, plots=False,
    )
    assert list(df["success"]) == ["yes"] * 6
    assert sorted(set(df["solver"])) == ["apgd", "py:pg2", "py:projected_gradient"]
    a = df[df["solver"] == "py:pg2"]["iterations"].tolist()
    b = df[df["solver"] == "py:projected_gradient"]["iterations"].tolist()
    assert a == b  # deterministic, whatever thread ran them


def test_siconos_through_the_protocol():
    inst = cpbench.load(fixture("siconos-fc3d/NESpheres_10_1.dat"), cls="coulomb")
    res = cpbench.solve(inst, "siconos:nsgs", tol=1e-8, max_iter=10000)
    if res.status == "unsupported":
        pytest.skip(f"Siconos not available: {res.message}")
    assert res.solver == "siconos:nsgs" and res.success, res.message
    ours = cpbench.solve(inst, "nsgs", tol=1e-8, max_iter=10000)
    np.testing.assert_allclose(res.gamma, ours.gamma, atol=1e-5)


def test_replay_equals_the_cli_replay(tmp_path):
    """``cpbench.replay`` writes and returns the CLI's replay of the same trajectory: the same
    iterations per step and the same p50 / p95 / max per solver and mode."""
    from conftest import cli, read_rows

    traj = tmp_path / "traj"
    cli("generate", "--scene", "stack", "--size", "3", "--steps", "6", "--export-every", "1",
        "--format", "npz", "--out", traj)
    steps, stats = cpbench.replay(traj, solvers=["pgs", "apgd"], out=tmp_path / "py")
    cli("run", "--trajectory", traj, "--solvers", "pgs,apgd", "--no-plots", "--out",
        tmp_path / "cli")
    ref_steps = read_rows(tmp_path / "cli" / "replay_steps.csv")
    ref_stats = read_rows(tmp_path / "cli" / "replay_stats.csv")
    assert len(steps) == len(ref_steps) == 2 * 2 * 6
    assert [int(x) for x in steps["iterations"]] == [int(r["iterations"]) for r in ref_steps]
    assert list(stats["solver"]) == [r["solver"] for r in ref_stats]
    for col in ["iter_p50", "iter_p95", "iter_max", "failed"]:
        assert [int(x) for x in stats[col]] == [int(r[col]) for r in ref_stats], col
    # the warm start pays on the resting column: warm p50 below cold p50 for both solvers
    for s in ["pgs", "apgd"]:
        cold = stats[(stats["solver"] == s) & (stats["mode"] == "cold")]["iter_p50"].iloc[0]
        warm = stats[(stats["solver"] == s) & (stats["mode"] == "warm")]["iter_p50"].iloc[0]
        assert warm < cold, s
    with pytest.raises(cpbench.CpbenchError, match="trajectory.json"):
        cpbench.replay(tmp_path, solvers=["pgs"], out=tmp_path / "bad")
    # a suite file that lists the trajectory: cpbench.run refuses it, naming cpbench.replay
    suite = tmp_path / "suite.json"
    suite.write_text('{"name": "t", "trajectories": [{"path": "traj"}]}')
    with pytest.raises(cpbench.CpbenchError, match="cpbench.replay"):
        cpbench.run(suite, solvers=["pgs"], out=tmp_path / "suite-out")
    assert not (tmp_path / "suite-out").exists()


def test_run_takes_the_stall_window_and_the_check_period(tmp_path):
    """``stall_window`` and ``check_every`` reach the executor as ``--stall-window`` and
    ``--check-every`` do. APGD on Capsules-i125 (CCP, symmetrised) at 1e-6 converges in 255
    iterations with the default window and with ``"off"``; a window of 1 iteration stops it
    ``stalled`` at iteration 20 (APGD is not monotone). Monitoring every 5 iterations traces
    iterations 0, 5, 10, ... and the last. The rows' settings record both."""
    inst = [fixture("fclib/Capsules-i125-1213.hdf5")]

    def run(name, **kw):
        df = cpbench.run(inst, solvers=["apgd"], out=tmp_path / name, tol=1e-6,
                         symmetrize=True, plots=False, check_every=5, **kw)
        row = df.iloc[0]
        return row, json.loads(row["settings"])["exec"]

    row, exec_ = run("default")
    assert (row["status"], int(row["iterations"])) == ("converged", 255)
    assert exec_["stall_window"] == 5000 and exec_["check_every"] == 5
    row, exec_ = run("one", stall_window=1)
    assert (row["status"], int(row["iterations"])) == ("stalled", 20)
    assert exec_["stall_window"] == 1
    row, exec_ = run("off", stall_window="off")
    assert (row["status"], int(row["iterations"])) == ("converged", 255)
    assert exec_["stall_window"] is None
    trace = sorted((tmp_path / "off" / "traces").glob("*.csv"))[0].read_text().splitlines()
    its = [int(line.split(",")[0]) for line in trace[1:]]
    assert its[:4] == [0, 5, 10, 15] and its[-1] == 255
    for bad in [0, -3, "never"]:
        with pytest.raises(cpbench.CpbenchError, match="stall_window"):
            cpbench.run(inst, solvers=["apgd"], out=tmp_path / "bad", stall_window=bad)
    with pytest.raises(cpbench.CpbenchError, match="check_every"):
        cpbench.run(inst, solvers=["apgd"], out=tmp_path / "bad", check_every=0)
