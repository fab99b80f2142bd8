//! `cpbench generate` and the generator driver: exported bundles load back (as a directory
//! suite, like `cpbench run --instances DIR`) and solve with every registered solver; the
//! provenance records scene, parameters, seed, step and time; `trajectory.csv` has one row per
//! step; generation is deterministic; bad input is a typed error, not a panic.

use cpbench_granular::{SceneKind, SceneSpec};
use cpbench_harness::generate::{
    generate, ExportFormat, GenerateConfig, RunSettings, TRAJECTORY_HEADER,
};
use cpbench_harness::Suite;
use cpbench_problems::io::ClassChoice;
use cpbench_problems::ResidualKind;
use cpbench_solvers::ExecSettings;
use cpbench_test_support::succeed;
use std::path::Path;

use crate::support::{
    cpbench, error, frictionless_class, solve_with_every_solver, stdout_of, summary,
};

fn config(out: &Path, frictionless: bool) -> GenerateConfig {
    GenerateConfig {
        spec: SceneSpec {
            kind: SceneKind::Fill,
            size: 2,
            seed: 7,
            frictionless,
            aspect: None,
        },
        run: RunSettings {
            steps: 60,
            export_every: 20,
            out: out.to_path_buf(),
            solver: "apgd".into(),
            solver_settings: None,
            exec: ExecSettings {
                tol: 1e-6,
                ..Default::default()
            },
            export_format: ExportFormat::Bundle,
        },
        save_state: true,
        vtk: false,
        snapshots: false,
        view_every: None,
        operator: None,
        no_solve: false,
        restitution: None,
        restitution_threshold: None,
        rolling_friction: None,
        compliance: None,
    }
}

#[test]
fn exported_bundles_load_back_and_solve_with_every_solver() {
    let dir = tempfile::tempdir().unwrap();
    for frictionless in [false, true] {
        let out = dir.path().join(if frictionless { "lcp" } else { "ccp" });
        let summary = generate(&config(&out, frictionless), |_| {}).unwrap();
        assert_eq!(summary.steps.len(), 60);
        assert_eq!(summary.exported.len(), 3);
        let cls = if frictionless { "lcp" } else { "ccp" };
        for (k, d) in summary.exported.iter().enumerate() {
            let want = format!("fill-2_step{:04}__{cls}", 20 * (k + 1));
            assert_eq!(d.file_name().unwrap().to_str().unwrap(), want);
        }
        // trajectory.csv: header and one row per step
        let text = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), TRAJECTORY_HEADER);
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), 60);
        assert_eq!(rows[59][0], "60");
        assert!((rows[59][1].parse::<f64>().unwrap() - 0.6).abs() < 1e-12);
        assert!(out.join("state.json").exists());

        // the output folder is a suite (what `cpbench run --instances DIR` reads)
        let suite =
            Suite::from_paths("gen", std::slice::from_ref(&out), ClassChoice::Ccp, false).unwrap();
        let insts = suite.load().unwrap();
        assert_eq!(insts.len(), 3);
        for (k, inst) in insts.iter().enumerate() {
            let p = inst.provenance();
            let step = 20 * (k as u64 + 1);
            assert_eq!(p.seed, Some(7));
            assert_eq!(p.step, Some(step));
            assert_eq!(p.parameters["scene"], "fill");
            assert_eq!(p.parameters["bodies"], "40");
            let nc: usize = p.parameters["contacts"].parse().unwrap();
            assert_eq!(inst.n(), nc * if frictionless { 1 } else { 3 });
            let t: f64 = p.parameters["time_s"].parse().unwrap();
            assert!((t - (step - 1) as f64 * 0.01).abs() < 1e-12);
            // the row of that step in the trajectory has the same contact count
            assert_eq!(rows[step as usize - 1][3].parse::<usize>().unwrap(), nc);
            let class = inst.class();
            assert_eq!(class, frictionless_class(frictionless));
            let exec = ExecSettings {
                tol: 1e-6,
                ..Default::default()
            };
            let solved = solve_with_every_solver(inst, ResidualKind::NatMapRel2, exec);
            assert!(solved >= 4, "only {solved} solvers support {class}");
        }
    }
}

#[test]
fn generation_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let mut hashes = Vec::new();
    for k in 0..2 {
        let out = dir.path().join(format!("run{k}"));
        let mut cfg = config(&out, false);
        cfg.run.steps = 40;
        generate(&cfg, |_| {}).unwrap();
        let insts = Suite::from_paths("gen", &[out], ClassChoice::Ccp, false)
            .unwrap()
            .load()
            .unwrap();
        hashes.push(
            insts
                .iter()
                .map(|i| i.hash().to_string())
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(hashes[0].len(), 2);
    assert_eq!(hashes[0], hashes[1]);
}

#[test]
fn cli_generate_then_run_on_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let gen = dir.path().join("gen");
    let stdout = stdout_of(
        cpbench("generate --scene fill --size 2 --steps 40 --export-every 20 --frictionless --out")
            .arg(&gen),
    );
    assert!(stdout.contains("per step (ms): detection"), "{stdout}");
    assert!(gen.join("fill-2_step0040__lcp/instance.json").exists());
    let res = dir.path().join("res");
    succeed(
        cpbench("run --solvers pgs,apgd --no-plots --instances")
            .arg(&gen)
            .arg("--out")
            .arg(&res),
    );
    let (_, rows) = summary(&res);
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert!(r[0].starts_with("fill-2_step00"), "{r:?}");
        assert_eq!(&r[7], "yes", "{r:?}");
    }
    // bad input: typed error, exit code 2, no panic
    for (args, needle) in [
        ("--scene fill --size 0", "--size 0: must be at least 1"),
        ("--scene heap --size 3", "unknown scene"),
    ] {
        error(
            cpbench(&format!("generate {args} --out")).arg(dir.path().join("bad")),
            &[needle],
        );
    }
}

/// `generate --vtk --snapshots --settings FILE`: VTK files (one point per body, radii, forces)
/// and PNG views at the view steps; `--solver-settings` still works (hidden alias) and a bad
/// settings value is an error naming the flag.
#[test]
fn cli_generate_writes_vtk_and_png_views() {
    let dir = tempfile::tempdir().unwrap();
    let gen = dir.path().join("gen");
    let settings = dir.path().join("apgd.json");
    std::fs::write(&settings, r#"{"restart": false}"#).unwrap();
    let stdout = stdout_of(
        cpbench(
            "generate --scene fill --size 2 --steps 20 --export-every 20 --view-every 10 --vtk \
             --snapshots --save-state --settings",
        )
        .arg(&settings)
        .arg("--out")
        .arg(&gen),
    );
    assert!(stdout.contains("4 VTK files"), "{stdout}");
    assert!(stdout.contains("2 PNG views"), "{stdout}");
    for step in ["0010", "0020"] {
        assert!(gen.join(format!("snapshots/step_{step}.png")).is_file());
        let b = std::fs::read(gen.join(format!("vtk/bodies_{step}.vtk"))).unwrap();
        let head = String::from_utf8_lossy(&b[..200.min(b.len())]).into_owned();
        assert!(head.starts_with("# vtk DataFile Version 4.2"), "{head}");
        assert!(
            head.contains("UNSTRUCTURED_GRID") && head.contains("POINTS 40 double"),
            "{head}"
        );
        let text = String::from_utf8_lossy(&b).into_owned();
        assert!(text.contains("SCALARS radius double"), "no radius array");
        let c = std::fs::read(gen.join(format!("vtk/contacts_{step}.vtk"))).unwrap();
        assert!(String::from_utf8_lossy(&c).contains("VECTORS force double"));
    }
    // state.json has one radius per body (40 spheres of radius 0.4)
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gen.join("state.json")).unwrap()).unwrap();
    let radii = state["radii"].as_array().unwrap();
    assert_eq!(radii.len(), 40);
    assert_eq!(radii[0].as_f64(), Some(0.4));
    // the old flag, inline JSON
    succeed(
        cpbench("generate --scene fill --size 2 --steps 2 --export-every 0 --solver-settings")
            .arg(r#"{"restart": true}"#)
            .arg("--out")
            .arg(dir.path().join("old")),
    );
    error(
        cpbench("generate --scene fill --size 2 --steps 2 --settings")
            .arg(r#"{"restart": 3}"#)
            .arg("--out")
            .arg(dir.path().join("bad")),
        &[],
    );
    error(
        cpbench("generate --scene fill --size 2 --settings missing.json --out")
            .arg(dir.path().join("bad2")),
        &["--settings missing.json"],
    );
}

/// The default suite's generated instances are rebuilt from snapshots on every load: they must
/// come out bit for bit the same on every machine (no platform-dependent arithmetic in the
/// stepper), which the content hashes check. A change of the assembly that alters any bit of
/// `N` or `r` shows here first: then re-measure `KNOWN_HARD` and update these hashes.
#[test]
fn default_suite_generated_instances_are_bit_reproducible() {
    let want = [
        (
            "fill-5_step0601__ccp",
            "944d661b4d4e501d44894e6432561beb3ef0eb441b3d42cc6e0cdd7518a15dd4",
        ),
        (
            "fill-5_step0601__lcp",
            "382529e9901508c1acaa100df04b72b0332395c691b5aadf1bb10e657ae4eb17",
        ),
        (
            "fill-10_step0601__ccp",
            "ff366909fa756a79b329e22173269482d9b529014efe25175b414a1228fdc6c6",
        ),
        (
            "fill-10_step0601__lcp",
            "42971e2ccd2cf1c8663da182a9f744b3d185d67608ec893d35245ba9ba50855e",
        ),
        (
            "ellipsoid-fill-3_step0501__ccp",
            "016c0d1a83b307e10b8c0257985d47bbb93c38af181f1871e489519c1a908fc1",
        ),
        (
            "ellipsoid-fill-3_step0501__lcp",
            "89034b8c53426df5aa7d906300e92f6ee009c5366e5382c6e2095aeeedbb8aa8",
        ),
    ];
    let suite = Suite::default_suite();
    let generated: Vec<_> = suite
        .entries
        .iter()
        .filter(|e| {
            matches!(
                e.source,
                cpbench_harness::suite::InstanceSource::Generated { .. }
            )
        })
        .map(|e| e.load().unwrap())
        .collect();
    assert_eq!(generated.len(), want.len());
    for (inst, (name, hash)) in generated.iter().zip(want) {
        assert_eq!(inst.name(), name);
        assert_eq!(inst.hash(), hash, "{name}");
        let p = inst.provenance();
        let (scene, step) = if name.starts_with("ellipsoid-") {
            ("ellipsoid-fill", 501)
        } else {
            ("fill", 601)
        };
        assert_eq!((p.seed, p.step), (Some(1), Some(step)));
        assert_eq!(p.parameters["scene"], scene);
        assert_eq!(p.format, "granular");
        // settled: tiny overlaps
        let pen: f64 = p.parameters["max_penetration"].parse().unwrap();
        assert!(pen < 1e-6, "{name}: overlap {pen}");
    }
}

/// `--fclib` export: the same simulation written as fclib files reads back as the same
/// instances (names and content hashes) as its bundles; a frictionless scene is refused.
#[test]
fn fclib_export_matches_bundle_export() {
    let dir = tempfile::tempdir().unwrap();
    let b_out = dir.path().join("bundles");
    let f_out = dir.path().join("fclib");
    generate(&config(&b_out, false), |_| {}).unwrap();
    let mut cfg = config(&f_out, false);
    cfg.run.export_format = ExportFormat::Fclib;
    cfg.save_state = false;
    let s = generate(&cfg, |_| {}).unwrap();
    let files: Vec<String> = s
        .exported
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files,
        [
            "fill-2_step0020.hdf5",
            "fill-2_step0040.hdf5",
            "fill-2_step0060.hdf5"
        ]
    );
    let load = |d: &Path| {
        Suite::from_paths("gen", &[d.to_path_buf()], ClassChoice::Ccp, false)
            .unwrap()
            .load()
            .unwrap()
    };
    let (a, b) = (load(&b_out), load(&f_out));
    assert_eq!(a.len(), 3);
    assert_eq!(b.len(), 3);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.name(), y.name());
        assert_eq!(x.hash(), y.hash(), "{}", x.name());
        assert_eq!(y.provenance().format, "fclib-local");
        assert!(x.n() > 0);
    }

    let mut cfg = config(&dir.path().join("lcp"), true);
    cfg.run.export_format = ExportFormat::Fclib;
    let e = generate(&cfg, |_| {}).unwrap_err();
    assert!(e.to_string().contains("fclib"), "{e}");
}

/// `generate --restitution e --restitution-threshold v`: the impact law's parameters and the
/// number of impacting contacts are recorded in every exported instance's provenance (and
/// absent without `--restitution`); an `e` outside `[0, 1]` is a typed error (exit code 2).
#[test]
fn cli_generate_records_the_restitution() {
    let dir = tempfile::tempdir().unwrap();
    let params = |out: &Path, extra: &[&str]| {
        succeed(
            cpbench(
                "generate --scene fill --size 2 --steps 40 --export-every 40 --frictionless \
                 --print-every 0",
            )
            .args(extra)
            .arg("--out")
            .arg(out),
        );
        let text = std::fs::read_to_string(out.join("fill-2_step0040__lcp/instance.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["provenance"]["parameters"].clone()
    };
    let p = params(
        &dir.path().join("e"),
        &["--restitution", "0.8", "--restitution-threshold", "0.05"],
    );
    assert_eq!(p["restitution"], "0.8");
    assert_eq!(p["restitution_threshold"], "0.05");
    assert!(
        p["impacts"].as_str().unwrap().parse::<usize>().is_ok(),
        "{p}"
    );
    let p = params(&dir.path().join("plain"), &[]);
    for k in ["restitution", "restitution_threshold", "impacts"] {
        assert!(
            p.get(k).is_none(),
            "{k} recorded without --restitution: {p}"
        );
    }
    error(
        cpbench("generate --scene fill --size 2 --restitution 1.5 --out")
            .arg(dir.path().join("bad")),
        &["invalid parameter restitution"],
    );
}
