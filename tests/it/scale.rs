//! Runs at scale and regression testing, end to end through the CLI:
//! a run killed with SIGKILL and rerun loses no finished row and ends with the same summary
//! as an uninterrupted run; `--shard 1/3..3/3` + `merge` gives exactly the rows of one
//! unsharded run; `check` passes quietly on unchanged code and fails, with a table of the
//! regressions naming the changed setting (`exec.max_iter 20000 -> 5`), on a weakened solver
//! (iteration cap 5); `report` writes report.md with its figures.

use cpbench_test_support::{fixture, succeed};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{cpbench, error, output};

/// A small suite of repository fixtures (fast in the dev profile; Capsules makes Jacobi slow
/// enough at 1e-8 for a kill to land mid-run), written into a new temporary folder. Returns
/// the folder and the suite file's path as a string.
fn small_suite() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let e = |p: &str, class: &str| serde_json::json!({"path": fixture(p), "class": class, "symmetrize": true});
    let suite = serde_json::json!({"name": "small", "instances": [
        e("fclib/Box_Stacks-i0122-82-5.hdf5", "ccp"),
        e("fclib/Box_Stacks-i0122-82-5.hdf5", "lcp"),
        e("siconos-fc3d/Rover4396.dat", "ccp"),
        e("siconos-fc3d/NESpheres_10_1.dat", "ccp"),
        e("fclib/Capsules-i125-1213.hdf5", "ccp"),
        e("lcp/lcp_mmc.dat", "lcp"),
    ]});
    let p = dir.path().join("small.json");
    std::fs::write(&p, suite.to_string()).unwrap();
    let p = p.to_string_lossy().into_owned();
    (dir, p)
}

/// Summary rows without the timing and memory columns (`time_s`, `jobs`, `peak_rss_bytes`,
/// `time_min_s`, `time_max_s`),
/// keyed and sorted by instance, solver and profile.
fn rows(dir: &Path) -> Vec<Vec<String>> {
    let mut rdr = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let h = rdr.headers().unwrap().clone();
    let drop: Vec<usize> = [
        "time_s",
        "jobs",
        "peak_rss_bytes",
        "time_min_s",
        "time_max_s",
    ]
    .iter()
    .map(|c| h.iter().position(|x| x == *c).unwrap())
    .collect();
    let mut out: Vec<Vec<String>> = rdr
        .records()
        .map(|r| {
            r.unwrap()
                .iter()
                .enumerate()
                .filter(|(i, _)| !drop.contains(i))
                .map(|(_, v)| v.to_string())
                .collect()
        })
        .collect();
    out.sort();
    out
}

/// `cpbench run --suite SUITE --solvers SOLVERS --no-plots EXTRA --out OUT`, the command every
/// test here starts from (`EXTRA` split at white space).
fn run(suite: &str, solvers: &str, extra: &str, out: &Path) -> Command {
    let mut c = cpbench("run --suite");
    c.arg(suite)
        .args(["--solvers", solvers, "--no-plots"])
        .args(extra.split_whitespace())
        .arg("--out")
        .arg(out);
    c
}

/// `cpbench check RUN --baseline BASELINE EXTRA`, run to its end.
fn check(run: &Path, baseline: &Path, extra: &str) -> std::process::Output {
    output(
        cpbench("check")
            .arg(run)
            .arg("--baseline")
            .arg(baseline)
            .args(extra.split_whitespace()),
    )
}

#[test]
fn killed_run_resumes_to_the_same_summary() {
    let (d, suite) = small_suite();
    let (solvers, extra) = (
        "pgs,jacobi,apgd,spgqp",
        "--profile high --max-iter 2000 --jobs 1",
    );
    // uninterrupted reference
    let full = d.path().join("full");
    succeed(&mut run(&suite, solvers, extra, &full));
    // interrupted: kill -9 once a few rows are on disk
    let part = d.path().join("part");
    let mut child = run(&suite, solvers, extra, &part)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let summary = part.join("summary.csv");
    loop {
        let lines = std::fs::read_to_string(&summary)
            .map(|s| s.lines().count())
            .unwrap_or(0);
        if lines >= 3 {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "no rows appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "run finished before it could be killed"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = rows(&part);
    assert!(!before.is_empty() && before.len() < rows(&full).len());
    // rerun into the same folder: finished rows are kept and skipped
    let o = succeed(&mut run(&suite, solvers, extra, &part));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("{} already present", before.len())),
        "{text}"
    );
    let after = rows(&part);
    for r in &before {
        assert!(after.contains(r), "row lost: {r:?}");
    }
    assert_eq!(after, rows(&full));
}

#[test]
fn shards_merge_to_the_unsharded_rows() {
    let (d, suite) = small_suite();
    let solvers = "pgs,apgd,spgqp";
    let whole = d.path().join("whole");
    succeed(&mut run(&suite, solvers, "", &whole));
    let mut dirs = Vec::new();
    for i in 1..=3 {
        let s = d.path().join(format!("s{i}"));
        succeed(&mut run(&suite, solvers, &format!("--shard {i}/3"), &s));
        dirs.push(s);
    }
    let sizes: Vec<usize> = dirs.iter().map(|p| rows(p).len()).collect();
    assert_eq!(sizes.iter().sum::<usize>(), rows(&whole).len());
    assert!(sizes.iter().all(|&n| n > 0));
    let merged = d.path().join("merged");
    succeed(cpbench("merge --out").arg(&merged).args(&dirs));
    assert_eq!(rows(&merged), rows(&whole));
    // canonical order: the merged file lists rows exactly in the unsharded run's order
    let names = |p: &Path| -> Vec<(String, String)> {
        let mut r = csv::Reader::from_path(p.join("summary.csv")).unwrap();
        r.records()
            .map(|x| x.unwrap())
            .map(|x| (x[0].to_string(), x[4].to_string()))
            .collect()
    };
    assert_eq!(names(&merged), names(&whole));
    assert!(merged.join("plots/Rover4396__ccp.png").exists());
}

#[test]
fn check_passes_unchanged_and_fails_on_a_weakened_solver() {
    let (d, suite) = small_suite();
    let a = d.path().join("a");
    succeed(&mut run(&suite, "pgs,apgd", "", &a));
    let baseline = d.path().join("baseline.csv");
    assert!(check(&a, &baseline, "--update").status.success());
    // unchanged code: a second run passes
    let b = d.path().join("b");
    succeed(&mut run(&suite, "pgs,apgd", "", &b));
    let o = check(&b, &baseline, "");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // nothing regressed: no table, only the count line
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "12 baseline rows: 0 regressed, 0 improved, 12 unchanged or within thresholds\n"
    );
    // a new variant that fails (over-relaxed Jacobi diverges) is named and fails the check,
    // unless --allow-new; the baseline's rows are still all unchanged
    succeed(&mut run(&suite, "jacobi@omega=1.9", "", &b));
    let o = check(&b, &baseline, "");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.starts_with("6 rows of the run are not in the baseline:"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("NEW FAIL")
            && l.contains("jacobi@omega=1.9")
            && l.contains("diverged")),
        "{text}"
    );
    assert!(text.contains("new rows failed: the check fails"), "{text}");
    assert!(
        text.ends_with(
            "12 baseline rows: 0 regressed, 0 improved, 12 unchanged or within thresholds\n"
        ),
        "{text}"
    );
    assert_eq!(check(&b, &baseline, "--allow-new").status.code(), Some(0));
    // a missing baseline says how to create one
    error(
        cpbench("check")
            .arg(&b)
            .arg("--baseline")
            .arg(d.path().join("none.csv")),
        &["none.csv: no such file", "--update`"],
    );
    // a weakened solver (iteration cap 5) fails with a readable table
    let w = d.path().join("w");
    succeed(&mut run(&suite, "pgs,apgd", "--max-iter 5", &w));
    let o = check(&w, &baseline, "");
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("REGRESSED") && text.contains("success -> failure"),
        "{text}"
    );
    assert!(text.contains("Capsules-i125-1213__ccp"), "{text}");
    // the regressions come first, right under the header, each naming the changed setting;
    // the rows within thresholds are one summary line (no `note` rows without --verbose)
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("verdict"), "{text}");
    let n_reg = lines[1..]
        .iter()
        .take_while(|l| l.starts_with("REGRESSED"))
        .count();
    assert!(n_reg >= 1, "{text}");
    assert_eq!(
        lines[1..=n_reg]
            .iter()
            .filter(|l| l.ends_with("settings changed: exec.max_iter 20000 -> 5"))
            .count(),
        n_reg,
        "{text}"
    );
    assert!(
        lines[n_reg + 1..].iter().all(|l| !l.starts_with("note")
            && !l.starts_with("improved")
            && !l.starts_with("REGRESSED")),
        "{text}"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with(&format!("12 baseline rows: {n_reg} regressed")),
        "{text}"
    );
    if n_reg < 12 {
        assert!(
            lines[n_reg + 1].contains("settings changed (exec.max_iter 20000 -> 5)"),
            "{text}"
        );
    }
}

#[test]
fn report_writes_markdown_profiles_and_plots() {
    let (d, suite) = small_suite();
    let a = d.path().join("a");
    succeed(&mut run(&suite, "pgs,apgd,spgqp", "", &a));
    succeed(cpbench("report").arg(&a).arg("--baseline").arg(&a));
    let md = std::fs::read_to_string(a.join("report.md")).unwrap();
    // one section per problem class: 4 CCPs and 2 LCPs, every solver takes them all
    for needle in [
        "Performance profiles",
        "shgeom iterations",
        "## Profile `default`, class `ccp`",
        "## Profile `default`, class `lcp`",
        "| apgd | 4 | 0 | 100% | 100% |",
        "| apgd | 2 | 0 | 100% | 100% |",
        "overview-ccp.png",
        "Compared with",
    ] {
        assert!(md.contains(needle), "report.md lacks '{needle}'");
    }
    for f in [
        "report/profile_time-ccp.png",
        "report/profile_iterations-lcp.svg",
        "report/profile_matvecs-ccp.csv",
        "report/shgeom-lcp.csv",
        "report/overview-ccp.png",
        "report/convergence/Rover4396__ccp__iterations.png",
        "report/convergence/Rover4396__ccp__matvecs.csv",
        "report/convergence/Rover4396__ccp__time.svg",
    ] {
        assert!(a.join(f).exists(), "{f}");
    }
    // --pool-classes: one section over both classes, files without the class suffix
    succeed(cpbench("report").arg(&a).arg("--pool-classes"));
    let md = std::fs::read_to_string(a.join("report.md")).unwrap();
    assert!(md.contains("| apgd | 6 | 0 | 100% | 100% |"), "{md}");
    assert!(!md.contains("class `ccp`"));
    for f in [
        "report/shgeom.csv",
        "report/overview.png",
        "report/profile_time.png",
    ] {
        assert!(a.join(f).exists(), "{f}");
    }
    // a report tolerance looser than the run's reads the cost from the traces
    assert!(output(cpbench("report").arg(&a).args(["--tol", "1e-3"]))
        .status
        .success());
    let csv = std::fs::read_to_string(a.join("report/shgeom-ccp.csv")).unwrap();
    assert!(csv.lines().count() == 4, "{csv}");
}
