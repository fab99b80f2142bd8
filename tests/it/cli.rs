//! The CLI end to end: `cpbench run` on the default suite writes the documented results
//! folder; `info` and `convert` work on a fixture; bad input gives an error, not a panic.

use cpbench_test_support::{fixture, succeed};

use crate::support::{
    column, cpbench, error, failure, lossy, manifest, output, stdout_of, summary, temp_res,
};

#[test]
fn run_writes_summary_traces_manifest_and_plots() {
    let (_dir, out) = temp_res();
    // 2000 iterations keep the test short: every fixture converges within it, the settled
    // granular CCPs do not (tests/it/default_suite.rs documents them)
    succeed(cpbench("run --solvers pgs,apgd --max-iter 2000 --out").arg(&out));
    let (header, rows) = summary(&out);
    // the columns the library writes, in its order (docs/results.md lists them)
    assert_eq!(header, cpbench_harness::results::summary_header());
    assert_eq!((&header[0], &header[10]), ("instance", "time_s"));
    assert_eq!(&header[11], "nat_map_abs_2");
    assert_eq!(&header[23], "objective");
    // 24 instances x 2 solvers; the settled granular fill and ellipsoid-fill CCPs are known to be too hard for
    // PGS within 20000 iterations (see tests/it/default_suite.rs KNOWN_HARD): those rows must
    // say "no"; the two general LCPs (non-symmetric M) are refused to the QP solvers; all
    // others "yes".
    assert_eq!(rows.len(), 48);
    for r in &rows {
        // and PGS needs 2031 iterations on the disc-hopper CCP, above this run's cap of 2000
        let hard = (r[0].starts_with("fill-")
            || r[0].starts_with("ellipsoid-fill-")
            || r[0].starts_with("disc-hopper-"))
            && r[0].ends_with("__ccp");
        if r[0] == *"lcp_tobenna" || r[0] == *"lcp_CPS_4" {
            assert_eq!((&r[6], &r[7]), ("unsupported", "no"), "{r:?}");
        } else if hard {
            // the check agrees with the claim
            assert_eq!(&r[7] == "yes", &r[6] == "converged", "{r:?}");
        } else {
            assert_eq!(&r[7], "yes", "{r:?}");
        }
        let trace = out.join("traces").join(format!("{}__{}.csv", &r[0], &r[4]));
        assert!(trace.exists(), "{}", trace.display());
    }
    for f in [
        "manifest.json",
        "plots/Spheres-i099-356-679__ccp.png",
        "plots/Spheres-i099-356-679__ccp.svg",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let m = manifest(&out);
    assert_eq!(m["instances"].as_array().unwrap().len(), 24);
    assert_eq!(m["profiles"][0]["name"], "default");
    assert_eq!(m["profiles"][0]["tol"], 1e-6);
    // the stopping tolerance is each profile's: `exec` has no `tol` of its own
    assert!(m["exec"].get("tol").is_none(), "{}", m["exec"]);
    assert_eq!(m["exec"]["max_iter"], 2000);
}

/// Help texts that list solvers take the list from the registry (`run --help` names the
/// default run list, `ipm` included); `solvers NAME` shows one solver with each setting's type,
/// default, range and meaning; an unknown name is an error listing the known ones.
#[test]
fn help_and_solvers_come_from_the_registry() {
    let defaults = cpbench_solvers::registry::default_solvers().join(",");
    assert!(defaults.contains("ipm"), "{defaults}");
    let help = stdout_of(&mut cpbench("run --help"));
    assert!(
        help.contains(&format!("else {defaults}]")),
        "run --help lacks the registry's default list {defaults}:\n{help}"
    );
    let text = stdout_of(&mut cpbench("solvers pgs"));
    assert!(text.starts_with("pgs: "), "{text}");
    assert!(!text.contains("jacobi"), "{text}");
    assert!(
        text.contains("    omega: number = 1.0  [in (0, 2)]\n        Relaxation `omega`"),
        "{text}"
    );
    let o = succeed(&mut cpbench("solvers ipm --json"));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j.as_array().unwrap().len(), 1);
    let f = &j[0]["fields"][0];
    assert_eq!(f["name"], "max_iter");
    assert_eq!(f["type"], "integer");
    assert_eq!(f["default"], 200);
    assert_eq!(
        f["meaning"],
        "Own iteration cap (the executor's cap also applies)."
    );
    error(
        &mut cpbench("solvers pgz"),
        &["unknown solver 'pgz'; known solvers: pgs, jacobi, apgd, spgqp"],
    );
}

#[test]
fn info_convert_and_errors() {
    let fx = fixture("siconos-fc3d/Rover4396.dat");
    let text = stdout_of(cpbench("info").arg(&fx).arg("--symmetrize"));
    assert!(
        text.contains("class           ccp") && text.contains("n               6"),
        "{text}"
    );
    // without --symmetrize the asymmetric W is reported, naming the file
    let (_, err) = failure(cpbench("info").arg(&fx));
    assert!(
        err.contains("Rover4396.dat") && err.contains("not symmetric"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    succeed(
        cpbench("convert --symmetrize --class lcp")
            .arg(&fx)
            .arg(dir.path().join("b")),
    );
    assert!(dir.path().join("b/N.mtx").exists() && dir.path().join("b/instance.json").exists());
    let o = output(cpbench("info").arg(dir.path().join("b")));
    assert!(lossy(&o.stdout).contains("class           lcp"));
    // a missing file and an unknown solver are errors with exit code 2
    error(&mut cpbench("info /nonexistent/x.dat"), &[]);
    error(
        cpbench("run --solvers nope --no-plots --out").arg(dir.path().join("r")),
        &["unknown solver"],
    );
}

/// `cpbench convert IN OUT.hdf5` writes an fclib local problem that reads back bit for bit
/// (same content hash), from a Siconos file, an fclib file and a bundle; an LCP is refused.
#[test]
fn convert_to_fclib_round_trips() {
    use cpbench_problems::io::{load, LoadOptions};
    let dir = tempfile::tempdir().unwrap();
    let sym = LoadOptions {
        validation: cpbench_problems::ValidationOptions {
            symmetrize: true,
            ..Default::default()
        },
        ..Default::default()
    };
    for (k, src) in [
        "siconos-fc3d/Rover4396.dat",
        "fclib/Capsules-i125-1213.hdf5",
        "fclib/Box_Stacks-i0122-82-5.hdf5",
    ]
    .iter()
    .enumerate()
    {
        let src = fixture(src);
        let want = load(&src, &sym).unwrap();
        // file -> fclib
        let h1 = dir.path().join(format!("a{k}.hdf5"));
        succeed(cpbench("convert --symmetrize").arg(&src).arg(&h1));
        let got = load(&h1, &LoadOptions::default()).unwrap();
        assert_eq!(got.hash(), want.hash(), "{}", src.display());
        assert_eq!(got.n(), want.n());
        // file -> bundle -> fclib
        let b = dir.path().join(format!("b{k}"));
        let h2 = dir.path().join(format!("b{k}.h5"));
        for (i, o) in [(&src, &b), (&b, &h2)] {
            succeed(cpbench("convert --symmetrize").arg(i).arg(o));
        }
        assert!(b.join("instance.json").exists());
        let got = load(&h2, &LoadOptions::default()).unwrap();
        assert_eq!(got.hash(), want.hash(), "{}", src.display());
    }
    // an LCP has no fclib form: typed error, exit code 2, no file left behind
    let out = dir.path().join("lcp.hdf5");
    error(
        cpbench("convert --symmetrize --class lcp")
            .arg(fixture("siconos-fc3d/Rover4396.dat"))
            .arg(&out),
        &["needs a ccp", "found lcp"],
    );
    assert!(!out.exists());
}

#[test]
fn class_coulomb_loading_bundle_and_gap() {
    let text = stdout_of(
        cpbench("info --class coulomb --coulomb-gap")
            .arg(fixture("siconos-fc3d/NESpheres_10_1.dat")),
    );
    assert!(
        text.contains("name            NESpheres_10_1__coulomb")
            && text.contains("class           coulomb")
            && text.contains("coulomb (nsgs)  converged")
            && text.contains("gap u_n"),
        "{text}"
    );
    // a Coulomb bundle records its class; a non-symmetric W (Rover4396) is kept as read
    let dir = tempfile::tempdir().unwrap();
    succeed(
        cpbench("convert --class coulomb")
            .arg(fixture("siconos-fc3d/Rover4396.dat"))
            .arg(dir.path().join("b")),
    );
    let json = std::fs::read_to_string(dir.path().join("b/instance.json")).unwrap();
    assert!(
        json.contains("\"class\": \"coulomb\"") && json.contains("\"general\""),
        "{json}"
    );
    let text = stdout_of(cpbench("info").arg(dir.path().join("b")));
    assert!(text.contains("class           coulomb"));
    // `run` on it: see residual_default_is_per_class_and_an_explicit_one_is_honoured
}

/// `--residual` on a Coulomb instance: without it the stopping and check residual is the class
/// default `fc3d_error`; an explicit `nat_map_rel_2` is honoured (it used to be read as "the
/// default" and silently replaced by `fc3d_error`). On Rover4396 the Coulomb solution is not a
/// CCP solution: its natural map stays at 0.235, so that run cannot converge.
#[test]
fn residual_default_is_per_class_and_an_explicit_one_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, residual: Option<&str>| -> (csv::StringRecord, csv::StringRecord) {
        let out = dir.path().join(name);
        let mut c = cpbench(
            "run --class coulomb --solvers nsgs --tol 1e-8 --max-iter 200 --no-plots --instances",
        );
        c.arg(fixture("siconos-fc3d/Rover4396.dat"))
            .arg("--out")
            .arg(&out);
        if let Some(r) = residual {
            c.args(["--residual", r]);
        }
        succeed(&mut c);
        let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
        let check = format!("\"residual\": \"{}\"", residual.unwrap_or("class default"));
        assert!(manifest.contains(&check), "{manifest}");
        let (h, rows) = summary(&out);
        assert_eq!(rows.len(), 1);
        (h, rows[0].clone())
    };
    let num = |h: &csv::StringRecord, r: &csv::StringRecord, c: &str| -> f64 {
        column(h, r, c).parse().unwrap()
    };

    let (h, r) = run("default", None);
    assert_eq!(column(&h, &r, "class"), "coulomb");
    assert_eq!(column(&h, &r, "check_residual"), "fc3d_error");
    assert_eq!(column(&h, &r, "status"), "converged");
    assert_eq!(column(&h, &r, "success"), "yes");
    assert_eq!(num(&h, &r, "iterations"), 25.0);
    assert!(num(&h, &r, "fc3d_error") <= 1e-8);
    let ccp_residual = num(&h, &r, "nat_map_rel_2");
    assert!((ccp_residual - 0.2352).abs() < 1e-3, "{ccp_residual}");

    let (h, r) = run("explicit", Some("nat_map_rel_2"));
    assert_eq!(column(&h, &r, "check_residual"), "nat_map_rel_2");
    assert_eq!(column(&h, &r, "status"), "max_iterations");
    assert_eq!(column(&h, &r, "success"), "no");
    assert_eq!(num(&h, &r, "iterations"), 200.0);
    assert!((num(&h, &r, "nat_map_rel_2") - 0.2352).abs() < 1e-3);
}

#[test]
fn info_describes_a_global_file() {
    let text = stdout_of(
        cpbench("info")
            .arg(fixture("gfc3d/GFC3D_OneContact.dat"))
            .args(["--class", "coulomb"]),
    );
    for needle in [
        "class           coulomb",
        "n               3",
        "global problem  39 degrees of freedom, 1 contacts (spacedim 3)",
        "condensed       W = H^T M^-1 H",
        "M factorised    sparse Cholesky",
        "m storage       sparse block (SBM)",
        "(siconos-global, coulomb)",
    ] {
        assert!(text.contains(needle), "{needle}\n{text}");
    }
}

/// Issue 34 item 5: a global file read with `--operator matrix-free` keeps `H` and `M`
/// (`info` says how `M^-1` is applied), converts to an `.npz` with `M_*` members that reads
/// back matrix-free; `--class coulomb` keeps them too (the Coulomb problem on the same
/// storage), a derived class (`blcp`) is read condensed and refuses the matrix-free storage.
#[test]
fn a_global_file_is_kept_matrix_free() {
    let fx = fixture("fclib/CubeH8.hdf5");
    let text = stdout_of(cpbench("info --operator matrix-free").arg(&fx));
    for needle in [
        "n               3",
        "operator        matrix-free",
        "global problem  162 degrees of freedom, 1 contacts (spacedim 3)",
        "matrix-free     N = H^T M^-1 H never formed",
        "M^-1            sparse Cholesky (faer LLT, AMD ordering,",
    ] {
        assert!(text.contains(needle), "{needle}\n{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cube.npz");
    succeed(cpbench("convert --operator matrix-free").arg(&fx).arg(&out));
    let text = stdout_of(cpbench("info").arg(&out));
    assert!(text.contains("operator        matrix-free"), "{text}");
    let text = stdout_of(cpbench("info --class coulomb --operator matrix-free").arg(&fx));
    for needle in ["class           coulomb", "operator        matrix-free"] {
        assert!(text.contains(needle), "{needle}\n{text}");
    }
    error(
        cpbench("info --class blcp --operator matrix-free").arg(&fx),
        &[
            "operator matrix-free is not available",
            "--class ccp or coulomb",
        ],
    );
}

/// `run --operator matrix-free` reads a global file through the harness kept as `H` and `M`
/// (`RunRequest::global_form`): the summary's `operator` column says so, and `pgs` (rows of
/// `W` formed once: CubeH8's `M` is a general one) and `apgd` converge.
#[test]
fn run_solves_a_global_file_matrix_free() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    succeed(
        cpbench("run --no-plots --solvers pgs,apgd --operator matrix-free --instances")
            .arg(fixture("fclib/CubeH8.hdf5"))
            .arg("--out")
            .arg(&out),
    );
    let (h, rows) = summary(&out);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(column(&h, r, "operator"), "matrix-free");
        assert_eq!(column(&h, r, "status"), "converged", "{r:?}");
    }
}

/// The robotics formulations on the command line: `--class blcp` and `--class lcp-pyramid:k`
/// read a frictional file; malformed values are refused with the defect named (exit code 2);
/// `--formulations A,B` compares two formulations (the pyramid solved by lemke).
#[test]
fn robotics_classes_and_formulation_gap() {
    let fx = fixture("siconos-fc3d/NESpheres_10_1.dat");
    for (bad, needle) in [
        ("lcp-pyramid:0", "k = 0 facet directions"),
        ("lcp-pyramid:x", "must be an integer, found 'x'"),
        ("cone", "unknown class 'cone'"),
    ] {
        error(cpbench("info --class").arg(bad).arg(&fx), &[needle, bad]);
    }
    // `info ARGS FILE`: what it prints has every one of the needles
    let mut fidelity_lines = 0;
    for (args, needles) in [
        (
            "--class blcp",
            &[
                "name            NESpheres_10_1__blcp",
                "class           blcp",
                "n               27",
            ][..],
        ),
        (
            "--class lcp-pyramid:8",
            &[
                "name            NESpheres_10_1__lcp-pyramid-8",
                "class           lcp",
                "n               90",
                "symmetric       no",
                "symmetry error  ",
                "(siconos-fc3d, lcp-pyramid:8)",
            ],
        ),
        (
            "--formulations ccp,blcp",
            &[
                "ccp (apgd)      converged",
                "blcp (pgs)      converged",
                "gap u_n",
                "||u_n,ccp - u_n,blcp||",
            ],
        ),
        // lemke solves the pyramid LCP (non-symmetric, 90 unknowns)
        (
            "--formulations coulomb,lcp-pyramid:8",
            &["lcp-pyramid:8 (lemke) converged", "gap u_n"],
        ),
    ] {
        let text = stdout_of(cpbench(&format!("info {args}")).arg(&fx));
        for n in needles {
            assert!(text.contains(n), "info {args}: no '{n}' in {text}");
        }
        if args == "--class lcp-pyramid:8" {
            assert!(!text.contains("before symmetrisation"), "{text}");
        }
        // each formulation's physical fidelity in the Coulomb problem, the line after its run:
        // the CCP's force at a distance, the box's cone violation, the pyramid's dissipation
        // gap; Coulomb's answer meets them all (1 of the 9 contacts slides)
        for (head, big, small) in [
            ("ccp (apgd)", &[0, 1, 3][..], &[2, 4][..]),
            ("blcp (pgs)", &[4], &[0, 1, 2, 3]),
            ("coulomb (nsgs)", &[], &[0, 1, 2, 3, 4]),
            ("lcp-pyramid:8 (lemke)", &[1, 2], &[0, 3, 4]),
        ] {
            let Some(at) = text.find(head) else { continue };
            fidelity_lines += 1;
            let line = text[at..].lines().nth(1).unwrap();
            let v: Vec<f64> = line
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            assert_eq!(v.len(), 5, "{line}");
            assert!(big.iter().all(|&i| v[i] > 1e-4), "{head}: {line}");
            assert!(small.iter().all(|&i| v[i] < 1e-9), "{head}: {line}");
        }
    }
    assert_eq!(fidelity_lines, 4);
    let o = output(cpbench("info --formulations ccp").arg(&fx));
    assert!(lossy(&o.stderr).contains("two comma-separated values"));
}

/// `run --stall-window N|off`: with the default window (5000 iterations) `vi-fpp` on
/// Capsules-i125-1213 at 1e-8 ends `stalled` (measured: at iteration 9916, fc3d error 3.5e-7);
/// with `off` it converges (measured: iteration 10,383). The window is in the rows' executor
/// settings (`null` for `off`) and the manifest's, so the settings hashes differ; a bad value
/// is an error naming the option, the value and the form.
#[test]
fn stall_window_off_lets_a_slow_solver_finish() {
    let dir = tempfile::tempdir().unwrap();
    let capsules = fixture("fclib/Capsules-i125-1213.hdf5");
    let run = |window: Option<&str>, name: &str| {
        let out = dir.path().join(name);
        let mut cmd = cpbench(
            "run --no-plots --no-report --class coulomb --solvers vi-fpp --tol 1e-8 \
             --max-iter 20000 --instances",
        );
        cmd.arg(&capsules).arg("--out").arg(&out);
        if let Some(w) = window {
            cmd.args(["--stall-window", w]);
        }
        succeed(&mut cmd);
        let (h, rows) = summary(&out);
        let r = rows[0].clone();
        let cell = |c: &str| column(&h, &r, c).to_string();
        let settings: serde_json::Value = serde_json::from_str(&cell("settings")).unwrap();
        (
            cell("status"),
            cell("iterations").parse::<u64>().unwrap(),
            settings["exec"]["stall_window"].clone(),
            cell("settings_hash"),
            manifest(&out)["exec"]["stall_window"].clone(),
        )
    };
    let (status, iterations, window, hash, in_manifest) = run(None, "default");
    assert_eq!(status, "stalled");
    assert!(iterations < 10_383, "{iterations}");
    assert_eq!((window, in_manifest), (5000.into(), 5000.into()));
    let (status, iterations, window, hash_off, in_manifest) = run(Some("off"), "off");
    assert_eq!(status, "converged");
    assert!((10_000..=11_000).contains(&iterations), "{iterations}");
    assert_eq!(
        (window, in_manifest),
        (serde_json::Value::Null, serde_json::Value::Null)
    );
    assert_ne!(hash, hash_off);
    let (_, _, window, _, _) = run(Some("20000"), "wide");
    assert_eq!(window, 20000);
    for bad in ["0", "-3", "never", "1e4"] {
        error(
            cpbench("run --no-plots --solvers vi-fpp --instances")
                .arg(&capsules)
                .args(["--stall-window", bad]),
            &[
                &format!("--stall-window '{bad}': expected"),
                "at least 1, or 'off'",
            ],
        );
    }
}
