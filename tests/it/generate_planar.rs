//! The planar scenes (`disc-hopper`, `beam-impact`) through the generator driver
//! ([`cpbench_harness::generate_planar`]) and the CLI: exported fc2d instances (bundle, `.npz`
//! and 2-D fclib) load back with `cpbench_problems::io`, agree on their content hash across the
//! formats, have a symmetric `N` with a positive diagonal, and solve with every registry solver
//! that takes their class (the CCP with the QP solvers, the Coulomb problem on the same data
//! with NSGS, semismooth Newton and De Saxce's fixed point, the frictionless LCP with the LCP
//! solvers), the harness's own check confirming the residual.

use cpbench_granular::planar::PlanarSceneKind;
use cpbench_harness::generate::{ExportFormat, RunSettings};
use cpbench_harness::generate_planar::{
    generate_planar, PlanarGenerateConfig, PLANAR_TRAJECTORY_HEADER,
};
use cpbench_problems::io::{load, LoadOptions};
use cpbench_problems::{Instance, ProblemClass, ResidualKind};
use cpbench_solvers::ExecSettings;
use std::path::{Path, PathBuf};

use crate::support::{self, cpbench, error, stdout_of};
use cpbench_test_support::succeed;

fn config(
    scene: PlanarSceneKind,
    out: &Path,
    format: ExportFormat,
    frictionless: bool,
) -> PlanarGenerateConfig {
    let (size, steps, every) = match scene {
        PlanarSceneKind::DiscHopper => (40, 200, 50),
        PlanarSceneKind::BeamImpact => (12, 60, 20),
    };
    PlanarGenerateConfig {
        scene,
        size,
        seed: 5,
        frictionless,
        compliance: None,
        run: RunSettings {
            steps,
            export_every: every,
            out: out.to_path_buf(),
            solver: "apgd".into(),
            solver_settings: None,
            exec: ExecSettings {
                tol: 1e-8,
                ..Default::default()
            },
            export_format: format,
        },
        operator: None,
    }
}

/// [`solve_with_every_solver`] to 1e-6 within 50000 iterations.
fn solve_with_every_solver(inst: &Instance, residual: ResidualKind) -> usize {
    let exec = ExecSettings {
        tol: 1e-6,
        max_iter: 50_000,
        ..Default::default()
    };
    support::solve_with_every_solver(inst, residual, exec)
}

fn check_fc2d(inst: &Instance, frictionless: bool) {
    let p = inst.provenance();
    assert_eq!(p.parameters["spacedim"], "2");
    let nc: usize = p.parameters["contacts"].parse().unwrap();
    if frictionless {
        assert_eq!(inst.class(), ProblemClass::Lcp);
        assert_eq!(inst.n(), nc);
    } else {
        assert_eq!(inst.class(), ProblemClass::Ccp);
        assert_eq!(inst.constraints().cone_dim(), Some(2));
        assert_eq!(inst.n(), 2 * nc);
    }
    assert!(inst.is_symmetric());
    let m = inst.csc();
    for i in 0..inst.n() {
        assert!(m.get(i, i) > 0.0, "{}: N[{i},{i}]", inst.name());
    }
}

#[test]
fn planar_exports_load_back_and_solve_with_every_supporting_solver() {
    let dir = tempfile::tempdir().unwrap();
    for scene in PlanarSceneKind::ALL {
        for frictionless in [false, true] {
            let tag = format!("{}-{frictionless}", scene.as_str());
            let mut paths: Vec<Vec<PathBuf>> = Vec::new();
            let formats: &[ExportFormat] = if frictionless {
                &[ExportFormat::Bundle, ExportFormat::Npz]
            } else {
                &[ExportFormat::Bundle, ExportFormat::Npz, ExportFormat::Fclib]
            };
            for &format in formats {
                let out = dir.path().join(format!("{tag}-{format:?}"));
                let cfg = config(scene, &out, format, frictionless);
                let s = generate_planar(&cfg, |_| {}).unwrap();
                assert_eq!(s.steps.len() as u64, cfg.run.steps);
                let text = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
                let mut lines = text.lines();
                assert_eq!(lines.next().unwrap(), PLANAR_TRAJECTORY_HEADER);
                assert_eq!(lines.count() as u64, cfg.run.steps);
                assert!(s.steps.iter().all(|r| r.core.converged), "{tag}");
                paths.push(s.exported);
            }
            // the same instances in every format (generation is deterministic)
            let n = paths[0].len();
            assert!(n >= 2, "{tag}: {n} exports");
            for k in 0..n {
                let insts: Vec<Instance> = paths
                    .iter()
                    .map(|p| load(&p[k], &LoadOptions::default()).unwrap())
                    .collect();
                for i in &insts[1..] {
                    assert_eq!(i.hash(), insts[0].hash(), "{}", paths[0][k].display());
                }
                let inst = &insts[0];
                check_fc2d(inst, frictionless);
                // measured: 7 on the CCP (pgs, jacobi, apgd, spgqp, bb, mpgp, ipm), 11 or 12 on
                // the LCP (enum only for n <= 20)
                let want = if frictionless { 11 } else { 7 };
                let residual = ResidualKind::NatMapRel2;
                let solved = solve_with_every_solver(inst, residual);
                assert!(solved >= want, "{tag}: only {solved} solvers");
                eprintln!("{}: n = {}, {solved} solvers", inst.name(), inst.n());
                if !frictionless {
                    // the Coulomb problem on the same data (fc2d): nsgs, nsn-ac, desaxce-apgd,
                    // desaxce-spgqp
                    let coulomb = inst.clone().into_coulomb().unwrap();
                    assert_eq!(coulomb.class(), ProblemClass::Coulomb);
                    let solved = solve_with_every_solver(&coulomb, ResidualKind::Fc3dError);
                    assert!(solved >= 4, "{tag}: only {solved} Coulomb solvers");
                    eprintln!("{} as Coulomb: {solved} solvers", inst.name());
                }
            }
        }
    }
}

#[test]
fn cli_generates_both_planar_scenes() {
    let dir = tempfile::tempdir().unwrap();
    for (scene, size, steps, every) in [
        ("disc-hopper", "30", "150", "50"),
        ("beam-impact", "10", "40", "20"),
    ] {
        let out = dir.path().join(scene);
        let stdout = stdout_of(
            cpbench(&format!(
                "generate --scene {scene} --size {size} --steps {steps} --export-every {every} \
                 --solver pgs --format npz --print-every 0 --out"
            ))
            .arg(&out),
        );
        assert!(stdout.contains("per step (ms): detection"), "{stdout}");
        let name = format!(
            "{scene}-{size}_step{:04}__ccp.npz",
            steps.parse::<u32>().unwrap()
        );
        assert!(out.join(&name).exists(), "{name}: {stdout}");
        assert!(out.join("trajectory.csv").exists());
        let inst = load(&out.join(&name), &LoadOptions::default()).unwrap();
        check_fc2d(&inst, false);
        if scene == "beam-impact" {
            assert!(stdout.contains("bonds broken"), "{stdout}");
        } else {
            assert!(stdout.contains("discs below the orifice"), "{stdout}");
        }
    }
    // --operator: csc and block write the same first instance with contacts byte for byte
    // (the states agree until then, and the direct block assembly's entries are the CSC
    // path's); matrix-free is refused by the stepper
    let mut first = Vec::new();
    for op in ["csc", "block"] {
        let out = dir.path().join(format!("op-{op}"));
        succeed(
            cpbench(&format!(
                "generate --scene disc-hopper --size 30 --steps 150 --export-every 1 \
                 --solver pgs --format npz --print-every 0 --operator {op} --out"
            ))
            .arg(&out),
        );
        let mut names: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".npz"))
            .collect();
        names.sort();
        let name = names.first().expect("an exported step").clone();
        first.push((name.clone(), std::fs::read(out.join(name)).unwrap()));
    }
    assert_eq!(first[0].0, first[1].0);
    assert!(first[0].1 == first[1].1, "{}: files differ", first[0].0);
    // options of the 3-D stepper only, and bad sizes: typed errors (exit code 2), no panic
    for (args, out, needles) in [
        (
            "disc-hopper --size 10 --operator matrix-free",
            "bad4",
            &["operator", "matrix-free", "auto, csc or block"][..],
        ),
        (
            "disc-hopper --size 10 --vtk",
            "bad",
            &["--vtk is not available for the planar scene"][..],
        ),
        (
            "disc-hopper --size 10 --model penalty",
            "bad",
            &["--model penalty is not available"],
        ),
        (
            "disc-hoper --size 3",
            "bad3",
            &["unknown scene 'disc-hoper'", "disc-hopper"],
        ),
        ("beam-impact --size 3", "bad2", &["invalid parameter n = 3"]),
    ] {
        error(
            cpbench(&format!("generate --scene {args} --out")).arg(dir.path().join(out)),
            needles,
        );
    }
}
