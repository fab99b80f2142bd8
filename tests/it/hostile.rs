//! Hostile or careless input refused before any work, with a message that names the option,
//! the value and what was expected (issue 30, items 3 and 5; the sweeps, variants, JSON and
//! generator cases).

use cpbench_test_support::fixture;
use std::process::Command;

/// `cpbench ARGS`: the exit code and standard error.
fn fails(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_cpbench"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn run_with(solvers: &[&str]) -> (Option<i32>, String) {
    let inst = fixture("lcp/lcp_mmc.dat");
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["run", "--no-plots", "--instances", inst.to_str().unwrap()];
    args.extend(solvers);
    let out = dir.path().join("out");
    args.extend(["--out", out.to_str().unwrap()]);
    let r = fails(&args);
    assert!(!out.join("summary.csv").exists(), "ran anyway: {}", r.1);
    r
}

#[test]
fn sweeps_that_make_no_sense_are_refused() {
    let t = std::time::Instant::now();
    // a product of two legal sweeps far beyond the cap: refused at once, with the count
    let (code, err) = run_with(&[
        "--solvers",
        "pgs@omega=0.002:1.998:0.002@lambda=0.001:1:0.001",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("the sweeps give 999000 variants (omega: 999 x lambda: 1000)"),
        "{err}"
    );
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    // a step so small the count overflowed to zero before
    let (code, err) = run_with(&["--solvers", "pgs@omega=0:1:1e-20"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("gives 1.000e20 values (at most 1000)"),
        "{err}"
    );
    // a sweep of one value, and a setting given twice
    let (code, err) = run_with(&["--solvers", "pgs@omega=1:1:0.1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("gives one value"), "{err}");
    let (code, err) = run_with(&["--solvers", "pgs@omega=0.6:1.4:0.2@omega=1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the setting 'omega' is given twice"), "{err}");
}

#[test]
fn json_with_a_key_twice_or_no_variants_is_refused() {
    let (code, err) = run_with(&[
        "--variants",
        r#"{"slow": {"solver": "pgs", "omega": 0.5}, "slow": {"solver": "pgs", "omega": 0.9}}"#,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the key \"slow\" is given twice"), "{err}");
    let (code, err) = run_with(&["--settings", r#"{"pgs": {"omega": 0.5, "omega": 0.9}}"#]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--settings (inline JSON): the key \"omega\" is given twice"),
        "{err}"
    );
    let (code, err) = run_with(&["--variants", "{}"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no variants: the object is empty"), "{err}");
}

#[test]
fn generator_sizes_are_checked_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    // negative sizes reach our validation (not clap's "unexpected argument")
    let (code, err) = fails(&["generate", "--scene", "pile", "--size", "-1", "--out", out]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--size -1: must be at least 1"), "{err}");
    let (code, err) = fails(&["generate", "--lcp", "psd", "--n", "-5", "--out", out]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--n -5: must be at least 1"), "{err}");
    // a billion unknowns: refused with the predicted size, no allocation abort
    let (code, err) = fails(&[
        "generate",
        "--lcp",
        "psd",
        "--n",
        "1000000000",
        "--out",
        out,
    ]);
    if cpbench_solvers::ExecSettings::default()
        .memory_limit()
        .is_some()
    {
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("--n 1000000000 --density 0.1: the LCP needs about")
                && err.contains("use a smaller --n or --density"),
            "{err}"
        );
    }
}

/// `generate --lcp` writes through `OutputFormat`: npz and bundle where asked, fclib refused,
/// `--fclib` against another `--format` refused by name.
#[test]
fn a_random_lcp_is_written_in_the_format_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let ok = |fmt: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_cpbench"))
            .args([
                "generate", "--lcp", "psd", "--n", "6", "--format", fmt, "--out", out,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
    };
    let npz = ok("npz");
    assert_eq!(npz.extension().and_then(|e| e.to_str()), Some("npz"));
    assert!(npz.is_file(), "{}", npz.display());
    let bundle = ok("bundle");
    assert!(
        bundle.join("instance.json").is_file(),
        "{}",
        bundle.display()
    );
    let (code, err) = fails(&[
        "generate", "--lcp", "psd", "--n", "6", "--format", "fclib", "--out", out,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--lcp writes --format bundle or npz"), "{err}");
    let (code, err) = fails(&[
        "generate", "--lcp", "psd", "--n", "6", "--fclib", "--format", "npz", "--out", out,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--fclib and --format npz disagree"), "{err}");
}

/// Issue 30 item 1: a derived formulation is refused with its predicted size before it is
/// allocated (it asked for 45 GB and aborted); `--memory-limit` moves the budget.
#[test]
fn a_pyramid_lcp_beyond_the_memory_budget_is_refused_with_its_size() {
    let f = fixture("fclib/Spheres-i099-356-679.hdf5");
    let t = std::time::Instant::now();
    let (code, err) = fails(&["info", "--class", "lcp-pyramid:1024", f.to_str().unwrap()]);
    if cpbench_problems::memory::memory_limit().is_some() {
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("the lcp-pyramid:1024 LCP of Spheres-i099-356-679__coulomb (356 contacts")
                && err.contains("needs about 189.9 GB")
                && err.contains("use a smaller k"),
            "{err}"
        );
    }
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    let (code, err) = fails(&[
        "info",
        "--class",
        "lcp-pyramid:8",
        "--memory-limit",
        "1M",
        f.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("needs about 8.1 MB (8117088 bytes), more than the memory budget of 1.0 MB (--memory-limit;"),
        "{err}"
    );
}

/// Issue 30 item 2: a solver program that starts `setsid sleep 40 &` and exits: the run
/// waited 40 s (the grandchild held the pipes, outside the killed process group) and the
/// grandchild outlived it. Now the run ends at once and nothing it started is left.
#[test]
fn an_external_solver_s_setsid_grandchild_neither_holds_the_run_nor_outlives_it() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    let defs = serde_json::json!({"solvers": {"daemon": {
        "command": ["sh", "-c",
            "setsid sh -c 'echo $$ > \"$PIDFILE\"; exec sleep 40' & sleep 0.3; exit 0"],
        "format": "npz", "output": "npy",
        "env": {"PIDFILE": pidfile.display().to_string()}}}});
    let path = dir.path().join("defs.json");
    std::fs::write(&path, defs.to_string()).unwrap();
    let inst = fixture("lcp/lcp_mmc.dat");
    let out = dir.path().join("out");
    let t = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_cpbench"))
        .args(["run", "--no-plots", "--time-limit", "5", "--external"])
        .arg(&path)
        .args(["--solvers", "ext:daemon", "--instances"])
        .arg(&inst)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let took = t.elapsed();
    assert!(took.as_secs_f64() < 5.0, "the run took {took:?}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary.contains("bad_output"),
        "{summary}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        crate::external::dead(pid.trim().parse().unwrap()),
        "the setsid grandchild {} outlived the run",
        pid.trim()
    );
}
