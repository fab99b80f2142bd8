//! Helpers shared by the modules of this test binary: the `cpbench` command built from one
//! argument string, what it prints, the results folder it writes, and a solve of one instance
//! with every registry solver that takes it.

use cpbench_harness::check::{check, CheckSpec};
use cpbench_harness::results::{read_summary, SummaryRow};
use cpbench_problems::{Instance, ProblemClass, ResidualKind};
use cpbench_solvers::registry::{build, SOLVER_NAMES};
use cpbench_solvers::{ExecSettings, Executor, Status};
use cpbench_test_support::{fixture, succeed};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `cpbench ARGS`: the binary under test with the arguments of `args` split at white space
/// (none for `""`). Paths, and arguments with white space in them (inline JSON), follow with
/// `.arg` / `.args`.
pub fn cpbench(args: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cpbench"));
    c.args(args.split_whitespace());
    c
}

/// Bytes printed by a command, as text.
pub fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `cmd` to its end (whatever its exit status).
pub fn output(cmd: &mut Command) -> Output {
    cmd.output().expect("the command starts")
}

/// Runs `cmd`, asserts it succeeded (see [`succeed`]) and returns its
/// standard output as text.
pub fn stdout_of(cmd: &mut Command) -> String {
    lossy(&succeed(cmd).stdout)
}

/// Runs `cmd`, asserts it failed (any non-zero exit) and returns its exit code and standard
/// error; the failure message names the command.
pub fn failure(cmd: &mut Command) -> (Option<i32>, String) {
    let o = output(cmd);
    let err = lossy(&o.stderr);
    assert!(!o.status.success(), "{cmd:?} succeeded: {err}");
    (o.status.code(), err)
}

/// Runs `cmd`, asserts it ended with exit code 2 (a typed error) and that its standard error
/// contains every one of `needles`; returns the standard error. The failure messages name the
/// command or the missing needle, and carry the standard error.
pub fn error(cmd: &mut Command, needles: &[&str]) -> String {
    let o = output(cmd);
    assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", lossy(&o.stderr));
    typed_error(&o, needles)
}

/// Asserts that `o` is the output of a command that ended with exit code 2 (a typed error) and
/// that its standard error contains every one of `needles`; returns the standard error.
pub fn typed_error(o: &Output, needles: &[&str]) -> String {
    let err = lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "missing '{n}' in: {err}");
    }
    err
}

/// A fresh temporary folder (removed when the returned guard drops) and `res` inside it: a
/// run's output folder, not created yet.
pub fn temp_res() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    (dir, out)
}

/// Runs `cmd` (a `cpbench run` without its inputs and output folder) on the repository
/// fixtures `fixtures` (`--instances`) into `out`, asserting success; returns the output and
/// the rows of `out/summary.csv`.
pub fn run_fixtures(cmd: &mut Command, fixtures: &[&str], out: &Path) -> (Output, Vec<SummaryRow>) {
    cmd.arg("--instances");
    for f in fixtures {
        cmd.arg(fixture(f));
    }
    let o = succeed(cmd.arg("--out").arg(out));
    (o, summary_rows(out))
}

/// The rows of `DIR/summary.csv`, read by the harness.
pub fn summary_rows(dir: &Path) -> Vec<SummaryRow> {
    read_summary(&dir.join("summary.csv")).unwrap()
}

/// The row of `instance` and solver (label) `solver` among `rows`; panics naming the pair.
pub fn row<'a>(rows: &'a [SummaryRow], instance: &str, solver: &str) -> &'a SummaryRow {
    rows.iter()
        .find(|r| r.instance == instance && r.solver == solver)
        .unwrap_or_else(|| panic!("no row {instance} x {solver}"))
}

/// The header and the rows of `DIR/summary.csv`.
pub fn summary(dir: &Path) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut rdr = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let h = rdr.headers().unwrap().clone();
    (h, rdr.records().map(|r| r.unwrap()).collect())
}

/// The cell of column `name` (by header `h`) in row `r`; panics naming a missing column.
pub fn column<'a>(h: &csv::StringRecord, r: &'a csv::StringRecord, name: &str) -> &'a str {
    let i = h
        .iter()
        .position(|x| x == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    &r[i]
}

/// `DIR/manifest.json`, parsed.
pub fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// The class of a granular scene's exported problem: the LCP of the frictionless scene, else
/// the CCP.
pub fn frictionless_class(frictionless: bool) -> ProblemClass {
    if frictionless {
        ProblemClass::Lcp
    } else {
        ProblemClass::Ccp
    }
}

/// The harness's check of the relative natural-map residual (`nat_map_rel_2`) at `tol`.
pub fn nat_map_spec(tol: f64) -> CheckSpec {
    CheckSpec {
        residual: ResidualKind::NatMapRel2,
        tol,
    }
}

/// Solves `inst` with every registry solver that takes it under `exec` (Clarabel apart: it
/// stops on its own duality gap, tests/it/clarabel_oracle.rs), asserting that each converges
/// and that the harness's check of `residual` at 1e-6 agrees; returns how many solved it.
pub fn solve_with_every_solver(
    inst: &Instance,
    residual: ResidualKind,
    exec: ExecSettings,
) -> usize {
    let mut solved = 0;
    for name in SOLVER_NAMES.into_iter().filter(|&n| n != "clarabel") {
        let mut b = build(name, None).unwrap();
        // unsupported classes, and enum above n = 20
        if cpbench_solvers::kernels::refusal(b.solver.as_ref(), inst).is_some() {
            continue;
        }
        let res = Executor::new(exec.clone())
            .run(b.solver.as_mut(), inst, None, &mut [])
            .unwrap();
        assert_eq!(res.status, Status::Converged, "{name} on {}", inst.name());
        let v = check(
            inst,
            &res.gamma,
            CheckSpec {
                residual,
                tol: 1e-6,
            },
        );
        assert!(v.success, "{name} on {}: {:?}", inst.name(), v.residuals);
        solved += 1;
    }
    solved
}
