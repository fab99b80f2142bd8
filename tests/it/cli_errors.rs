//! Errors a user can act on: a locked output folder, negative numbers after a space, empty
//! inputs and bad counts, malformed or oversized input files; every error printed once, exit
//! code 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cpbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cpbench"))
}

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2, stderr `error: ...` containing every one of `needles`, printed once.
fn assert_error(o: &Output, needles: &[&str]) -> String {
    let all = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    // progress lines may come first
    let at = all
        .find("error: ")
        .unwrap_or_else(|| panic!("no error line: {all}"));
    let err = all[at..].to_string();
    for n in needles {
        assert!(err.contains(n), "missing '{n}' in: {err}");
    }
    assert!(!err.contains("unexpected argument"), "{err}");
    let first = err.lines().next().unwrap().trim_start_matches("error: ");
    for l in err.lines().skip(1) {
        let cause = l.trim_start_matches("  caused by: ");
        assert!(!first.contains(cause), "cause printed twice: {err}");
    }
    err
}

fn host() -> String {
    cpbench_harness::manifest::host_name()
}

/// `cpbench CMD... ARGS... --out OUT`.
fn cli_with_out(cmd: &[&str], args: &[&str], out: &Path) -> Output {
    cpbench()
        .args(cmd)
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// A tiny run into `out` (one LCP fixture, PGS, no plots).
fn tiny_run(out: &Path) -> Output {
    cpbench()
        .args(["run", "--solvers", "pgs", "--no-plots", "--instances"])
        .arg(fixture("lcp/lcp_CPS_1.dat"))
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn a_locked_output_folder_is_refused_and_a_stale_lock_taken_over() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    std::fs::create_dir_all(&out).unwrap();
    let lock = out.join(".cpbench.lock");
    // held by this (live) test process
    let me = std::process::id();
    std::fs::write(
        &lock,
        format!(
            "pid={me}\nhost={}\nstarted=2026-01-01T00:00:00Z\ncommand=cpbench run\n",
            host()
        ),
    )
    .unwrap();
    let o = tiny_run(&out);
    let err = assert_error(
        &o,
        &[
            &format!("output folder {} is in use", out.display()),
            &format!("pid {me}"),
            &format!("remove {}", lock.display()),
        ],
    );
    assert!(!out.join("summary.csv").exists(), "{err}");
    for cmd in [
        &["merge", "--out"][..],
        &["generate", "--scene", "pile", "--size", "2", "--out"],
    ] {
        let mut c = cpbench();
        c.args(cmd).arg(&out);
        if cmd[0] == "merge" {
            c.arg(d.path());
        }
        assert_error(&c.output().unwrap(), &["is in use", &format!("pid {me}")]);
    }
    // a stale lock (a pid that cannot run) is taken over with a warning, and removed at the end
    std::fs::write(&lock, format!("pid=999999999\nhost={}\n", host())).unwrap();
    let o = tiny_run(&out);
    assert!(o.status.success(), "{}", stderr(&o));
    if cfg!(target_os = "linux") {
        assert!(
            stderr(&o).contains("taking over the stale lock of pid 999999999"),
            "{}",
            stderr(&o)
        );
    }
    assert!(!lock.exists());
    assert!(out.join("summary.csv").exists());
    // the report of a folder in use is refused too
    std::fs::write(&lock, format!("pid={me}\nhost={}\n", host())).unwrap();
    let o = cpbench().arg("report").arg(&out).output().unwrap();
    assert_error(&o, &["is in use"]);
    std::fs::remove_file(&lock).unwrap();
}

#[test]
fn two_concurrent_runs_do_not_both_write() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    let spawn = || {
        cpbench()
            .args(["run", "--solvers", "pgs,apgd", "--no-plots", "--symmetrize"])
            .arg("--instances")
            .arg(fixture("lcp"))
            .arg("--out")
            .arg(&out)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let ok = [&a, &b].iter().filter(|o| o.status.success()).count();
    // either they ran one after the other (the second skipped everything) or one was refused
    let rows = csv::Reader::from_path(out.join("summary.csv"))
        .unwrap()
        .records()
        .count();
    let instances = std::fs::read_dir(fixture("lcp"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "dat")
        })
        .count();
    assert_eq!(instances, 15);
    assert_eq!(rows, instances * 2, "{} / {}", stderr(&a), stderr(&b));
    if ok == 1 {
        let failed = if a.status.success() { &b } else { &a };
        assert_error(failed, &["is in use"]);
    } else {
        assert_eq!(ok, 2);
    }
}

#[test]
fn negative_numbers_reach_our_checks() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    let run = |args: &[&str]| cli_with_out(&["run"], args, &out);
    assert_error(
        &run(&["--tol", "-1"]),
        &["--tol -1: must be a positive finite number (the stopping tolerance)"],
    );
    assert_error(
        &run(&["--max-iter", "-5"]),
        &["--max-iter -5: must be at least 1"],
    );
    assert_error(
        &run(&["--time-limit", "-1"]),
        &["--time-limit -1: must be a positive finite number (seconds per solve)"],
    );
    assert_error(&run(&["--jobs", "-2"]), &["--jobs -2: must be at least 1"]);
    assert!(!out.exists());
    let gen =
        |args: &[&str]| cli_with_out(&["generate", "--scene", "pile", "--size", "2"], args, &out);
    assert_error(
        &gen(&["--tol", "-1"]),
        &["--tol -1: must be a positive finite number (the stopping tolerance of each step's solve)"],
    );
    assert_error(
        &gen(&["--max-iter", "-5"]),
        &["--max-iter -5: must be at least 1"],
    );
    assert_error(
        &gen(&["--steps", "-3"]),
        &["--steps -3: must be at least 1"],
    );
    assert!(!out.exists());
}

#[test]
fn empty_inputs_and_bad_counts() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    let run = |args: &[&str]| cli_with_out(&["run"], args, &out);
    assert_error(&run(&["--jobs", "0"]), &["--jobs 0: must be at least 1"]);
    assert_error(
        &run(&["--trace-every", "0"]),
        &["--trace-every 0: must be at least 1"],
    );
    let empty = d.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "not an instance").unwrap();
    let o = run(&["--instances", empty.to_str().unwrap()]);
    assert_error(
        &o,
        &[&empty.display().to_string(), "no instance in this folder"],
    );
    let suite = d.path().join("s.json");
    std::fs::write(&suite, r#"{"name": "nothing", "instances": []}"#).unwrap();
    let o = run(&["--suite", suite.to_str().unwrap()]);
    assert_error(&o, &["suite 'nothing' lists no instances"]);
    assert!(!out.exists());
    // more jobs than threads: capped with a warning, the run goes on
    let o = cpbench()
        .args(["run", "--solvers", "pgs", "--no-plots", "--jobs", "100000"])
        .arg("--instances")
        .arg(fixture("lcp/lcp_CPS_1.dat"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let limit = std::thread::available_parallelism().unwrap().get();
    assert!(
        stderr(&o).contains(&format!(
            "warning: --jobs 100000 is more than the {limit} threads"
        )),
        "{}",
        stderr(&o)
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["jobs"], limit);
}

#[test]
fn a_missing_file_is_reported_once() {
    let o = cpbench()
        .args(["info", "/nonexistent/x.dat"])
        .output()
        .unwrap();
    let err = assert_error(&o, &["/nonexistent/x.dat", "No such file"]);
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn info_refuses_devices_and_bad_headers_at_once() {
    if Path::new("/dev/zero").exists() {
        let t = std::time::Instant::now();
        let o = cpbench().args(["info", "/dev/zero"]).output().unwrap();
        assert_error(&o, &["/dev/zero: not a regular file"]);
        assert!(t.elapsed().as_secs() < 10);
    }
    let d = tempfile::tempdir().unwrap();
    for (name, text, needle) in [
        (
            "dim.dat",
            "4\n2\n0\n8\n8\n",
            "space dimension d = 4 is not supported",
        ),
        (
            "neg.dat",
            "3\n-2\n0\n-6\n-6\n",
            "negative number of contacts -2",
        ),
        ("size.dat", "3 2 0 5 5\n5 5\n", "W is 5 x 5, but 2 contacts"),
        (
            "storage.dat",
            "3 2 7 6 6\n",
            "storage type '7' is not supported",
        ),
        (
            "huge.dat",
            "3 100000 0 300000 300000\n300000 300000\n1\n",
            "the header declares 100000 contacts",
        ),
    ] {
        let f = d.path().join(name);
        std::fs::write(&f, text).unwrap();
        let o = cpbench().arg("info").arg(&f).output().unwrap();
        let err = assert_error(&o, &[name, needle, "(at line "]);
        assert!(!err.contains("unrecognised format"), "{err}");
    }
}

#[test]
fn info_counts_summed_duplicates_of_a_bundle() {
    let d = tempfile::tempdir().unwrap();
    let b = d.path().join("b");
    let o = cpbench()
        .args(["convert", "--symmetrize"])
        .arg(fixture("lcp/lcp_CPS_1.dat"))
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let info = |p: &Path| {
        let o = cpbench().arg("info").arg(p).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(info(&b).contains("duplicates      0 "), "{}", info(&b));
    // N = [[1, 1], [1, 1]]: store N_11 as 0.5 + 0.25 + 0.25 (two duplicates); the data, and so
    // the content hash recorded in instance.json, are unchanged
    let n = std::fs::read_to_string(b.join("N.mtx")).unwrap();
    let n = n.replace("2 2 3\n", "2 2 5\n").replace(
        "1 1 1.0000000000000000e0\n",
        "1 1 0.5\n1 1 0.25\n1 1 0.25\n",
    );
    std::fs::write(b.join("N.mtx"), n).unwrap();
    let text = info(&b);
    assert!(text.contains("duplicates      2 "), "{text}");
    assert!(text.contains("nnz(N)          4"), "{text}");
}
