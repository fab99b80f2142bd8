//! Errors a user can act on: a locked output folder, negative numbers after a space, empty
//! inputs and bad counts, malformed or oversized input files; every error printed once, exit
//! code 2.

use cpbench_test_support::fixture;
use std::path::Path;
use std::process::Output;

use crate::support::{cpbench, lossy, manifest, output, stdout_of, temp_res};

fn stderr(o: &Output) -> String {
    lossy(&o.stderr)
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

/// `cpbench ARGS --out OUT` (`ARGS` split at white space).
fn cli_with_out(args: &str, out: &Path) -> Output {
    output(cpbench(args).arg("--out").arg(out))
}

/// The generator's command on a small pile, the start of the `generate` cases.
const GEN: &str = "generate --scene pile --size 2";

/// A tiny run into `out` (one LCP fixture, PGS, no plots) with the options `extra`.
fn tiny_run(out: &Path, extra: &str) -> Output {
    output(
        cpbench(&format!("run --solvers pgs --no-plots {extra} --instances"))
            .arg(fixture("lcp/lcp_CPS_1.dat"))
            .arg("--out")
            .arg(out),
    )
}

#[test]
fn a_locked_output_folder_is_refused_and_a_stale_lock_taken_over() {
    let (d, out) = temp_res();
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
    let o = tiny_run(&out, "");
    let err = assert_error(
        &o,
        &[
            &format!("output folder {} is in use", out.display()),
            &format!("pid {me}"),
            &format!("remove {}", lock.display()),
        ],
    );
    assert!(!out.join("summary.csv").exists(), "{err}");
    for cmd in ["merge --out", "generate --scene pile --size 2 --out"] {
        let mut c = cpbench(cmd);
        c.arg(&out);
        if cmd.starts_with("merge") {
            c.arg(d.path());
        }
        assert_error(&c.output().unwrap(), &["is in use", &format!("pid {me}")]);
    }
    // a stale lock (a pid that cannot run) is taken over with a warning, and removed at the end
    std::fs::write(&lock, format!("pid=999999999\nhost={}\n", host())).unwrap();
    let o = tiny_run(&out, "");
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
    let o = output(cpbench("report").arg(&out));
    assert_error(&o, &["is in use"]);
    std::fs::remove_file(&lock).unwrap();
}

#[test]
fn two_concurrent_runs_do_not_both_write() {
    let (_d, out) = temp_res();
    let spawn = || {
        cpbench("run --solvers pgs,apgd --no-plots --symmetrize --instances")
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
    let (_d, out) = temp_res();
    for (cmd, args, needle) in [
        (
            "run",
            "--tol -1",
            "--tol -1: must be a positive finite number (the stopping tolerance)",
        ),
        ("run", "--max-iter -5", "--max-iter -5: must be at least 1"),
        (
            "run",
            "--time-limit -1",
            "--time-limit -1: must be a positive finite number (seconds per solve)",
        ),
        ("run", "--jobs -2", "--jobs -2: must be at least 1"),
        (
            GEN,
            "--tol -1",
            "--tol -1: must be a positive finite number (the stopping tolerance of each step's solve)",
        ),
        (GEN, "--max-iter -5", "--max-iter -5: must be at least 1"),
        (GEN, "--steps -3", "--steps -3: must be at least 1"),
    ] {
        assert_error(&cli_with_out(&format!("{cmd} {args}"), &out), &[needle]);
        assert!(!out.exists(), "{cmd} {args}");
    }
}

#[test]
fn empty_inputs_and_bad_counts() {
    let (d, out) = temp_res();
    let empty = d.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "not an instance").unwrap();
    let suite = d.path().join("s.json");
    std::fs::write(&suite, r#"{"name": "nothing", "instances": []}"#).unwrap();
    let empty_shown = empty.display().to_string();
    for (args, path, needles) in [
        ("--jobs 0", None, &["--jobs 0: must be at least 1"][..]),
        (
            "--trace-every 0",
            None,
            &["--trace-every 0: must be at least 1"],
        ),
        (
            "--instances",
            Some(&empty),
            &[&empty_shown, "no instance in this folder"],
        ),
        (
            "--suite",
            Some(&suite),
            &["suite 'nothing' lists no instances"],
        ),
    ] {
        let o = output(
            cpbench(&format!("run {args}"))
                .args(path)
                .arg("--out")
                .arg(&out),
        );
        assert_error(&o, needles);
    }
    assert!(!out.exists());
    // more jobs than threads: capped with a warning, the run goes on
    let o = tiny_run(&out, "--jobs 100000");
    assert!(o.status.success(), "{}", stderr(&o));
    let limit = std::thread::available_parallelism().unwrap().get();
    assert!(
        stderr(&o).contains(&format!(
            "warning: --jobs 100000 is more than the {limit} threads"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(manifest(&out)["jobs"], limit);
}

#[test]
fn a_missing_file_is_reported_once() {
    let o = output(&mut cpbench("info /nonexistent/x.dat"));
    let err = assert_error(&o, &["/nonexistent/x.dat", "No such file"]);
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn info_refuses_devices_and_bad_headers_at_once() {
    if Path::new("/dev/zero").exists() {
        let t = std::time::Instant::now();
        let o = output(&mut cpbench("info /dev/zero"));
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
        let o = output(cpbench("info").arg(&f));
        let err = assert_error(&o, &[name, needle, "(at line "]);
        assert!(!err.contains("unrecognised format"), "{err}");
    }
}

#[test]
fn info_counts_summed_duplicates_of_a_bundle() {
    let d = tempfile::tempdir().unwrap();
    let b = d.path().join("b");
    stdout_of(
        cpbench("convert --symmetrize")
            .arg(fixture("lcp/lcp_CPS_1.dat"))
            .arg(&b),
    );
    let info = |p: &Path| stdout_of(cpbench("info").arg(p));
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
