//! Hostile or careless input refused before any work, with a message that names the option,
//! the value and what was expected (issue 30, items 3 and 5; the sweeps, variants, JSON and
//! generator cases).

use cpbench_test_support::fixture;

use crate::support::{cpbench, error, lossy, output, typed_error};

/// `cpbench run --no-plots --instances lcp_mmc.dat ARGS --out OUT`: refused before anything
/// ran, with exit code 2 and a message containing every one of `needles`, within 20 s.
fn refused(args: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let t = std::time::Instant::now();
    let o = output(
        cpbench("run --no-plots --instances")
            .arg(fixture("lcp/lcp_mmc.dat"))
            .args(args)
            .arg("--out")
            .arg(&out),
    );
    assert!(
        !out.join("summary.csv").exists(),
        "ran anyway: {}",
        lossy(&o.stderr)
    );
    typed_error(&o, needles);
    assert!(t.elapsed().as_secs() < 20, "{args:?}: {:?}", t.elapsed());
}

#[test]
fn sweeps_that_make_no_sense_are_refused() {
    for (sweep, needle) in [
        // a product of two legal sweeps far beyond the cap: refused at once, with the count
        (
            "pgs@omega=0.002:1.998:0.002@lambda=0.001:1:0.001",
            "the sweeps give 999000 variants (omega: 999 x lambda: 1000)",
        ),
        // a step so small the count overflowed to zero before
        (
            "pgs@omega=0:1:1e-20",
            "gives 1.000e20 values (at most 1000)",
        ),
        // a sweep of one value, and a setting given twice
        ("pgs@omega=1:1:0.1", "gives one value"),
        (
            "pgs@omega=0.6:1.4:0.2@omega=1",
            "the setting 'omega' is given twice",
        ),
    ] {
        refused(&["--solvers", sweep], &[needle]);
    }
}

#[test]
fn json_with_a_key_twice_or_no_variants_is_refused() {
    for (args, needle) in [
        (
            [
                "--variants",
                r#"{"slow": {"solver": "pgs", "omega": 0.5}, "slow": {"solver": "pgs", "omega": 0.9}}"#,
            ],
            "the key \"slow\" is given twice",
        ),
        (
            ["--settings", r#"{"pgs": {"omega": 0.5, "omega": 0.9}}"#],
            "--settings (inline JSON): the key \"omega\" is given twice",
        ),
        (["--variants", "{}"], "no variants: the object is empty"),
    ] {
        refused(&args, &[needle]);
    }
}

#[test]
fn generator_sizes_are_checked_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    // negative sizes reach our validation (not clap's "unexpected argument")
    for (args, needle) in [
        ("--scene pile --size -1", "--size -1: must be at least 1"),
        ("--lcp psd --n -5", "--n -5: must be at least 1"),
    ] {
        error(
            cpbench(&format!("generate {args} --out")).arg(out),
            &[needle],
        );
    }
    // a billion unknowns: refused with the predicted size, no allocation abort
    let o = output(cpbench("generate --lcp psd --n 1000000000 --out").arg(out));
    if cpbench_solvers::ExecSettings::default()
        .memory_limit()
        .is_some()
    {
        typed_error(
            &o,
            &[
                "--n 1000000000 --density 0.1: the LCP needs about",
                "use a smaller --n or --density",
            ],
        );
    }
}

/// `generate --lcp` writes through `OutputFormat`: npz and bundle where asked, fclib refused,
/// `--fclib` against another `--format` refused by name.
#[test]
fn a_random_lcp_is_written_in_the_format_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    // `cpbench generate --lcp psd --n 6 ARGS --out OUT`
    let gen = |args: &str| {
        let mut c = cpbench(&format!("generate --lcp psd --n 6 {args} --out"));
        c.arg(out);
        c
    };
    let ok = |fmt: &str| {
        let o = output(&mut gen(&format!("--format {fmt}")));
        assert!(o.status.success(), "{}", lossy(&o.stderr));
        std::path::PathBuf::from(lossy(&o.stdout).trim())
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
    for (args, needle) in [
        ("--format fclib", "--lcp writes --format bundle or npz"),
        ("--fclib --format npz", "--fclib and --format npz disagree"),
    ] {
        error(&mut gen(args), &[needle]);
    }
}

/// Issue 30 item 1: a derived formulation is refused with its predicted size before it is
/// allocated (it asked for 45 GB and aborted); `--memory-limit` moves the budget.
#[test]
fn a_pyramid_lcp_beyond_the_memory_budget_is_refused_with_its_size() {
    let f = fixture("fclib/Spheres-i099-356-679.hdf5");
    let t = std::time::Instant::now();
    let o = output(cpbench("info --class lcp-pyramid:1024").arg(&f));
    if cpbench_problems::memory::memory_limit().is_some() {
        typed_error(
            &o,
            &[
                "the lcp-pyramid:1024 LCP of Spheres-i099-356-679__coulomb (356 contacts",
                "needs about 189.9 GB",
                "use a smaller k",
            ],
        );
    }
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    error(
        cpbench("info --class lcp-pyramid:8 --memory-limit 1M").arg(&f),
        &["needs about 8.1 MB (8117088 bytes), more than the memory budget of 1.0 MB (--memory-limit;"],
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
    let o = output(
        cpbench("run --no-plots --time-limit 5 --external")
            .arg(&path)
            .args(["--solvers", "ext:daemon", "--instances"])
            .arg(&inst)
            .arg("--out")
            .arg(&out),
    );
    let took = t.elapsed();
    assert!(took.as_secs_f64() < 5.0, "the run took {took:?}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary.contains("bad_output"),
        "{summary}\n{}",
        lossy(&o.stderr)
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        crate::external::dead(pid.trim().parse().unwrap()),
        "the setsid grandchild {} outlived the run",
        pid.trim()
    );
    // a bad_output run keeps its scratch folder for inspection and names it: remove it here
    let kept = summary
        .split("[scratch folder kept: ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("no kept scratch folder named in {summary}"));
    std::fs::remove_dir_all(kept).unwrap();
}
