//! `vi-fpp` and `vi-eg`, the projection methods on the Coulomb VI: one-contact problems with
//! closed-form solutions (3-D and 2-D, sticking and sliding, a non-symmetric `W`), agreement
//! with `nsgs` on an fclib and an fc2d fixture, and the refusal of other classes.

use crate::support::{converged, coulomb_files, one_contact, velocity, BOX_STACKS, SLIDER_CRANK};
use cpbench_problems::{
    ConstraintSet, CscMatrix, Instance, ProblemClass, Provenance, ValidationOptions,
};
use cpbench_solvers::registry::build;
use cpbench_solvers::Status;
use cpbench_test_support::{counter, max_abs_diff, solve};

const VI: [&str; 2] = ["vi-fpp", "vi-eg"];

/// `||a - b|| / max(||a||, ||b||)`.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let n = |x: &[f64]| x.iter().map(|v| v * v).sum::<f64>().sqrt();
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    n(&d) / n(a).max(n(b)).max(f64::MIN_POSITIVE)
}

#[test]
fn one_contact_closed_forms_to_1e_10() {
    let s5 = 5f64.sqrt();
    let eye3 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    // a non-symmetric W (column-major): rows (2, 0.5, 0), (0.2, 1, 0), (0, 0.1, 1.5)
    let wns = [2.0, 0.2, 0.0, 0.5, 1.0, 0.1, 0.0, 0.0, 1.5];
    let r_ns = [1.0, 0.1, 0.05];
    let q_ns: Vec<f64> = (0..3)
        .map(|i| -(0..3).map(|j| wns[i + 3 * j] * r_ns[j]).sum::<f64>())
        .collect();
    let cases: Vec<(&str, Instance, Vec<f64>)> = vec![
        // W = I, sticking: u = 0, r = -q = (1, -0.1, -0.05), |r_T| = 0.11 < 0.5
        (
            "stick 3-D",
            one_contact(&eye3, &[-1.0, 0.1, 0.05], 0.5),
            vec![1.0, -0.1, -0.05],
        ),
        // W = I, sliding: u_n = 0 gives r_n = 1; r_T = -mu r_n u_T / |u_T| with u_T = q_T - r_T
        // along q_T = (2, 1): r_T = -0.5 (2, 1) / sqrt 5
        (
            "slide 3-D",
            one_contact(&eye3, &[-1.0, 2.0, 1.0], 0.5),
            vec![1.0, -1.0 / s5, -0.5 / s5],
        ),
        // non-symmetric W, sticking: q = -W r*, r* inside the cone
        (
            "stick 3-D, W non-symmetric",
            one_contact(&wns, &q_ns, 0.5),
            r_ns.to_vec(),
        ),
        // 2-D, W = I: sticking r = (1, -0.2); sliding r = (1, -0.5), u_t = 3 - 0.5 > 0
        (
            "stick 2-D",
            one_contact(&[1.0, 0.0, 0.0, 1.0], &[-1.0, 0.2], 0.5),
            vec![1.0, -0.2],
        ),
        (
            "slide 2-D",
            one_contact(&[1.0, 0.0, 0.0, 1.0], &[-1.0, 3.0], 0.5),
            vec![1.0, -0.5],
        ),
    ];
    for (what, inst, want) in &cases {
        assert_eq!(inst.class(), ProblemClass::Coulomb);
        for name in VI {
            let a = converged(name, inst, 1e-10, 10_000, "");
            assert!(a.residuals.fc3d_error <= 1e-10, "{name} {what}");
            assert!(
                max_abs_diff(&a.gamma, want) < 1e-9,
                "{name} {what}: {:?} vs {want:?}",
                a.gamma
            );
            assert!(counter(&a, "rho") > 0.0);
        }
    }
}

#[test]
fn agree_with_nsgs_on_fclib_and_fc2d_fixtures() {
    for (f, inst) in coulomb_files(&[BOX_STACKS, SLIDER_CRANK]) {
        let reference = converged("nsgs", &inst, 1e-8, 10_000, f);
        let u_ref = velocity(&inst, &reference.gamma);
        for name in VI {
            let a = converged(name, &inst, 1e-8, 20_000, f);
            assert!(a.residuals.fc3d_error <= 1e-8, "{name} {f}");
            // the velocities agree (measured: below 1e-7; the reactions need not, W may be
            // singular)
            let u = velocity(&inst, &a.gamma);
            let d = rel_diff(&u, &u_ref);
            assert!(d < 1e-6, "{name} {f}: relative velocity gap {d:.2e}");
        }
    }
}

#[test]
fn other_classes_are_refused() {
    let eye3 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let m = CscMatrix::from_dense_col_major(3, 3, &eye3).unwrap();
    let (p, o) = (Provenance::default(), ValidationOptions::default());
    let ccp = Instance::new(
        "ccp",
        m.clone(),
        vec![-1.0, 2.0, 0.0],
        ConstraintSet::coulomb(vec![0.5]),
        p.clone(),
        o,
    )
    .unwrap();
    let lcp = Instance::new("lcp", m, vec![-1.0; 3], ConstraintSet::NonNegative, p, o).unwrap();
    for name in VI {
        let b = build(name, None).unwrap();
        assert!(b.solver.supports(ProblemClass::Coulomb), "{name}");
        for inst in [&ccp, &lcp] {
            assert!(!b.solver.supports(inst.class()), "{name}");
            let a = solve(name, inst, 1e-8, 100);
            assert_eq!(a.status, Status::Unsupported, "{name} on {}", inst.class());
            assert!(a.message.unwrap().contains("coulomb"), "{name}");
        }
    }
}

#[test]
fn collapsing_step_reports_stalled() {
    // a floor above the starting step: the first step ends the solve as stalled
    let inst = one_contact(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        &[-1.0, 2.0, 1.0],
        0.5,
    );
    for name in VI {
        let settings = serde_json::json!({"rho0": 1e-3, "rho_min": 1.0, "tau": 0.5});
        let mut b = build(name, Some(&settings)).unwrap();
        let exec = cpbench_solvers::ExecSettings {
            tol: 1e-12,
            max_iter: 1000,
            ..Default::default()
        };
        let a = cpbench_solvers::Executor::new(exec)
            .run(b.solver.as_mut(), &inst, None, &mut [])
            .unwrap();
        assert_eq!(a.status, Status::Stalled, "{name}");
        assert_eq!(a.iterations, 1, "{name}");
        assert!(a.message.unwrap().contains("floor"), "{name}");
    }
}

/// The VI map's projection step and Khobotov's norms ([`cpbench_solvers::vi`]), and the settings.
mod parts {
    use cpbench_solvers::vi::{khobotov_norms, project_step, Vi, ViSettings};

    #[test]
    fn settings_validation() {
        assert!(Vi::fpp(ViSettings::default()).is_ok());
        // one setting out of its range each
        let breaks: [fn(&mut ViSettings); 5] = [
            |s| s.tau = 1.0,
            |s| s.l_min = 0.95,
            |s| s.grow = 1.0,
            |s| s.ls_max_iter = 0,
            |s| s.rho0 = 0.0,
        ];
        crate::support::assert_each_refused(&breaks, Vi::eg);
    }

    #[test]
    fn projection_step_and_norms_2d_and_3d() {
        // 3-D: x = 0, u = (-1, 2, 0), mu = 0.5, rho = 1: F = (-1 + 1, 2, 0) = (0, 2, 0);
        // x - F = (0, -2, 0) projects to ((0 + 0.5 * 2) / 1.25, ...) = (0.8, -0.4, 0)
        let mut out = [0.0; 3];
        project_step(&[0.0; 3], &[-1.0, 2.0, 0.0], 1.0, &[0.5], 3, &mut out);
        assert!((out[0] - 0.8).abs() < 1e-15 && (out[1] + 0.4).abs() < 1e-15);
        // 2-D: the same in the plane
        let mut out2 = [0.0; 2];
        project_step(&[0.0; 2], &[-1.0, 2.0], 1.0, &[0.5], 2, &mut out2);
        assert_eq!(out2, [out[0], out[1]]);
        // ||F(z) - F(r)||: the shifts 0.5 * 2 and 0.5 * 1 differ by 0.5 in the normal
        let (a1, a2) = khobotov_norms(
            &[1.0, 0.0],
            &[0.0, 0.0],
            &[0.0, 1.0],
            &[0.0, 2.0],
            &[0.5],
            2,
        );
        assert!((a1 - (0.25f64 + 1.0).sqrt()).abs() < 1e-15);
        assert_eq!(a2, 1.0);
    }
}

/// The corrector from the predictor (as Siconos' `VI_EG`; `vi-eg`'s default, also named by the
/// preset `vi-eg:siconos`): on Box_Stacks to the fc3d error 1e-8 it takes far fewer iterations
/// than Korpelevich's corrector (measured: 114 against 724; Siconos' own `siconos:vi-eg` 115),
/// with the velocities of `nsgs`'s answer to 1e-6 relative; the setting shows in the effective
/// settings, and the preset is the same solver as the default.
#[test]
fn siconos_corrector_preset() {
    use cpbench_solvers::{ExecSettings, Executor};
    let (f, inst) = coulomb_files(&[BOX_STACKS]).next().unwrap();
    let reference = converged("nsgs", &inst, 1e-8, 10_000, f);
    let u_ref = velocity(&inst, &reference.gamma);
    let run = |name: &str, settings: Option<&serde_json::Value>| {
        let mut b = build(name, settings).unwrap();
        let exec = ExecSettings {
            tol: 1e-8,
            max_iter: 20_000,
            ..Default::default()
        };
        let r = Executor::new(exec)
            .run(b.solver.as_mut(), &inst, None, &mut [])
            .unwrap();
        (r, b.settings)
    };
    let (sic, settings) = run("vi-eg:siconos", None);
    assert_eq!(sic.status, Status::Converged, "{:?}", sic.message);
    assert_eq!(settings["corrector"], "predictor");
    assert_eq!(build("vi-eg", None).unwrap().settings, settings);
    let (korpelevich, _) = run(
        "vi-eg",
        Some(&serde_json::json!({"corrector": "korpelevich"})),
    );
    assert_eq!(korpelevich.status, Status::Converged);
    assert!(
        (100..=130).contains(&sic.iterations) && korpelevich.iterations > 5 * sic.iterations,
        "vi-eg:siconos {} iterations, korpelevich {}",
        sic.iterations,
        korpelevich.iterations
    );
    let d = rel_diff(&velocity(&inst, &sic.gamma), &u_ref);
    assert!(d < 1e-6, "vi-eg:siconos: relative velocity gap {d:.2e}");
    let (same, _) = run("vi-eg", None);
    assert_eq!(same.iterations, sic.iterations);
    assert_eq!(same.gamma, sic.gamma);
    // an unknown corrector is refused, naming the field
    let e = build("vi-eg", Some(&serde_json::json!({"corrector": "middle"})))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("corrector") || e.contains("middle"), "{e}");
}
