//! ADMM (`admm` and its presets `admm:siconos`, `admm:chrono`, `admm:pinocchio`) on the true
//! Coulomb problem. (On the QP classes it is one of the solvers of
//! `small_problems::random_instances_all_solvers_agree`.)

use crate::coulomb::{assert_exact_answers, stick_and_slide};
use crate::support::{converged, coulomb_file, one_contact, traced, velocity_gap};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Status};
use cpbench_test_support::{counter, solve};

/// The one-contact sticking and sliding solutions (3-D, and the 2-D embedding of the sliding
/// one: `W = I`, `q = (-1, 2)`, `mu = 0.5` gives `r = (1, -0.5)`) and take-off (`r = 0`), to
/// 1e-10 for every preset.
#[test]
fn admm_presets_one_contact() {
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    for name in ["admm", "admm:siconos", "admm:chrono", "admm:pinocchio"] {
        assert_exact_answers(name, stick_and_slide(), 10_000);
        let planar = one_contact(&[1.0, 0.0, 0.0, 1.0], &[-1.0, 2.0], 0.5);
        let a = converged(name, &planar, 1e-12, 10_000, "2-D sliding");
        assert!((a.gamma[0] - 1.0).abs() < 1e-10 && (a.gamma[1] + 0.5).abs() < 1e-10);
        let takeoff = one_contact(&eye, &[0.5, 2.0, 1.0], 0.5);
        let a = converged(name, &takeoff, 1e-12, 10_000, "take-off");
        assert!(
            a.gamma.iter().all(|v| v.abs() < 1e-12),
            "{name}: {:?}",
            a.gamma
        );
    }
}

/// The default `admm` reaches 1e-8 from zero on nine public fixtures (measured, debug build:
/// OneObject 1492 iterations, BoxesStack1 238, Capsules-i125 319, local_problem_test 232; the
/// others under 300) with NSGS's velocities on Capsules-i125 to 1e-5 relative, factorising
/// only when `rho` changes; `admm:siconos` (Siconos 4.4's defaults: `rho = 1` constant,
/// acceleration with restart) reaches 1e-8 on local_problem_test too, in more iterations
/// (measured 1163, release build; Siconos' own ADMM 1190).
#[test]
fn admm_reaches_1e8_on_the_fixtures() {
    for f in [
        "siconos-fc3d/NESpheres_10_1.dat",
        "siconos-fc3d/Rover4396.dat",
        "siconos-fc3d/OneObject-i100000-499.hdf5.dat",
        "siconos-fc3d/BoxesStack1-i100000-32.hdf5.dat",
        "fclib/Spheres-i099-356-679.hdf5",
        "fclib/Box_Stacks-i0122-82-5.hdf5",
        "fclib/Capsules-i125-1213.hdf5",
        "fclib/local_problem_test.hdf5",
        "fclib/CubeH8.hdf5",
    ] {
        let inst = coulomb_file(f);
        let r = converged("admm", &inst, 1e-8, 3000, f);
        assert!(r.residuals.fc3d_error <= 1e-8, "{f}");
        let (fac, changes) = (counter(&r, "factorizations"), counter(&r, "rho_changes"));
        assert_eq!(fac, changes + 1.0, "{f}: one factorisation per rho");
        assert_eq!(counter(&r, "solves"), r.iterations as f64, "{f}");
        if f.contains("Capsules") {
            let g = solve("nsgs", &inst, 1e-10, 100_000);
            let d = velocity_gap(&inst, &g.gamma, &r.gamma);
            assert!(d < 1e-5, "admm on {f}: velocities {d:e} from nsgs's");
        }
    }
    let f = "fclib/local_problem_test.hdf5";
    let inst = coulomb_file(f);
    let a = converged("admm", &inst, 1e-8, 3000, f);
    let s = converged("admm:siconos", &inst, 1e-8, 3000, f);
    assert!(
        s.iterations > 2 * a.iterations,
        "{} vs {}",
        s.iterations,
        a.iterations
    );
}

/// Started at a solution (NSGS's at 1e-12), ADMM stays there: the multiplier starts at the
/// modified velocity, so the first iterate meets 1e-10 (one iteration, no change of `rho`).
/// `admm:siconos` starts it at zero, as Siconos does from its driver's zero velocity
/// (`dual_start = zero`), so it takes `dual_start = velocity` here.
#[test]
fn admm_warm_start_at_a_solution_is_a_fixed_point() {
    let f = "fclib/Box_Stacks-i0122-82-5.hdf5";
    let inst = coulomb_file(f);
    let g = converged("nsgs", &inst, 1e-12, 100_000, f);
    let velocity = serde_json::json!({"dual_start": "velocity"});
    for (name, v) in [
        ("admm", None),
        ("admm:siconos", Some(&velocity)),
        ("admm:chrono", None),
    ] {
        let exec = ExecSettings {
            tol: 1e-10,
            max_iter: 5,
            ..Default::default()
        };
        let (r, _) = traced(name, v, &inst, Some(&g.gamma), exec);
        assert_eq!(r.status, Status::Converged, "{name}: {:?}", r.residuals);
        assert!(r.iterations <= 1, "{name}: {} iterations", r.iterations);
    }
}

/// Settings out of range are refused, naming the field; the presets differ from the defaults.
#[test]
fn admm_settings_and_presets() {
    for bad in [
        r#"{"rho0": 0}"#,
        r#"{"eps": 0}"#,
        r#"{"eta": 1}"#,
        r#"{"adjust_every": 0}"#,
        r#"{"phi": 1}"#,
        r#"{"rho_strategy": "sometimes"}"#,
    ] {
        let v: serde_json::Value = serde_json::from_str(bad).unwrap();
        let e = build("admm", Some(&v)).err().expect(bad).to_string();
        let field = bad.split('"').nth(1).unwrap();
        assert!(e.contains(field), "{bad}: {e}");
    }
    let defaults = build("admm", None).unwrap().settings;
    for p in ["admm:siconos", "admm:chrono", "admm:pinocchio"] {
        let s = build(p, None).unwrap().settings;
        assert_ne!(s, defaults, "{p}");
    }
    let c = build("admm:chrono", None).unwrap().settings;
    assert_eq!(c["rho0"], 0.1);
    assert_eq!(c["eps"], 1e-6);
    assert_eq!(c["adjust_every"], 5);
}

/// A step rule that drives `rho` towards 0 on a rank-deficient `W` ends the solve with its own
/// status and message, not a panic: Siconos' scaled residual balancing on BoxesStack1, started
/// at `rho = ||W||_1` with the shift at `z` (measured: `N + rho I` numerically singular after
/// 97 iterations, 20 halvings of `rho`; the solve gives non-finite values, which the executor
/// reports).
#[test]
fn admm_singular_shift_ends_with_numerical_error() {
    let f = "siconos-fc3d/BoxesStack1-i100000-32.hdf5.dat";
    let inst = coulomb_file(f);
    let v = serde_json::json!({"rho_strategy": "scaled-residual-balancing",
        "rho_init": "norm-inf", "shift": "velocity", "dual_start": "velocity"});
    let exec = ExecSettings {
        tol: 1e-8,
        max_iter: 3000,
        ..Default::default()
    };
    let (r, _) = traced("admm:siconos", Some(&v), &inst, None, exec);
    assert_eq!(r.status, Status::NumericalError, "{:?}", r.message);
    let m = r.message.unwrap_or_default();
    assert!(m.contains("non-finite"), "{m}");
}

/// `nsgs-admm` (NSGS, then ADMM from its iterate) reaches 1e-8 on the public fixtures; where
/// NSGS converges fast it never hands over (Rover4396, NESpheres_10_1, Box_Stacks: 0
/// switches, 25, 9 and 18 sweeps measured) and where NSGS slows down ADMM finishes (BoxesStack1,
/// Capsules-i125, local_problem_test, OneObject: 1 switch, 264, 396, 423 and 1224 iterations
/// measured, release build) with NSGS's velocities on Capsules-i125 to 1e-5 relative.
#[test]
fn nsgs_admm_hands_over_only_when_nsgs_slows_down() {
    for (f, switches) in [
        ("siconos-fc3d/Rover4396.dat", 0.0),
        ("siconos-fc3d/NESpheres_10_1.dat", 0.0),
        ("fclib/Box_Stacks-i0122-82-5.hdf5", 0.0),
        ("siconos-fc3d/BoxesStack1-i100000-32.hdf5.dat", 1.0),
        ("siconos-fc3d/OneObject-i100000-499.hdf5.dat", 1.0),
        ("fclib/Capsules-i125-1213.hdf5", 1.0),
        ("fclib/local_problem_test.hdf5", 1.0),
    ] {
        let inst = coulomb_file(f);
        let r = converged("nsgs-admm", &inst, 1e-8, 5000, f);
        assert!(r.residuals.fc3d_error <= 1e-8, "{f}");
        assert_eq!(counter(&r, "switches"), switches, "{f}");
        let (sweeps, admm) = (counter(&r, "sweeps"), counter(&r, "admm_iterations"));
        assert_eq!(sweeps + admm, r.iterations as f64, "{f}");
        assert_eq!(admm == 0.0, switches == 0.0, "{f}: {admm} ADMM iterations");
        if f.contains("Capsules") {
            let g = solve("nsgs", &inst, 1e-10, 100_000);
            let d = velocity_gap(&inst, &g.gamma, &r.gamma);
            assert!(d < 1e-5, "nsgs-admm on {f}: velocities {d:e} from nsgs's");
        }
    }
}
