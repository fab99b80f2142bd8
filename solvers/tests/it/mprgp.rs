//! MPRGP and MPGP: known solutions, PERMON's step accounting, presets and settings, and the
//! two properties Dostal's analysis guarantees for `alpha <= 2/||N||`: every iterate is
//! feasible and the objective never increases.

use crate::support::traced;
use cpbench_problems::generators::boxqp::{permon_ex1, random_box_qp};
use cpbench_problems::{ConstraintSet, Instance, ProblemClass, ResidualKind};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, SolveResult, Status, TraceRecorder};
use cpbench_test_support::{counter, dense, max_abs_diff, random_psd, TestRng};
use proptest::prelude::*;

/// [`traced`] from zero.
fn run(
    name: &str,
    settings: Option<serde_json::Value>,
    inst: &Instance,
    exec: ExecSettings,
) -> (SolveResult, TraceRecorder) {
    traced(name, settings.as_ref(), inst, None, exec)
}

#[test]
fn proportioning_step_is_cut_at_the_opposite_bound() {
    // N = I, r = (-10, 0.5), box [0, 1]^2: solution (1, 0). From x = 0 both components are at
    // their lower bound, phi = 0, beta = (-10, 0): a proportioning step, whose line-search
    // length 1 would reach x_0 = 10; it is cut at x_0 = 1, the upper bound.
    let k = ConstraintSet::Box {
        lo: vec![0.0; 2],
        hi: vec![1.0; 2],
    };
    let inst = dense(2, &[1.0, 0.0, 0.0, 1.0], vec![-10.0, 0.5], k);
    let (res, rec) = run(
        "mprgp",
        None,
        &inst,
        ExecSettings {
            tol: 1e-14,
            ..Default::default()
        },
    );
    assert_eq!(res.status, Status::Converged);
    assert_eq!(res.gamma, vec![1.0, 0.0]);
    assert_eq!(res.iterations, 1);
    assert_eq!(counter(&res, "proportioning_steps"), 1.0);
    assert!(rec.records.iter().all(|r| r.residuals.primal_feas == 0.0));
    // f(1, 0) = 1/2 - 10
    assert_eq!(res.residuals.objective, -9.5);
}

#[test]
fn random_box_qps_are_solved_to_their_known_solution() {
    for (seed, kappa, frac) in [(1u64, 1e2, 0.4), (2, 1e4, 0.1), (3, 10.0, 0.9)] {
        let q = random_box_qp(60, kappa, frac, seed).unwrap();
        for name in ["mprgp", "mpgp", "mprgp:permon", "mprgp:permon-projcg"] {
            let (res, _) = run(
                name,
                None,
                &q.instance,
                ExecSettings {
                    tol: 1e-12,
                    residual: Some(ResidualKind::ProjGradRel),
                    max_iter: 5000,
                    ..Default::default()
                },
            );
            assert_eq!(res.status, Status::Converged, "{name} seed {seed}");
            let err = max_abs_diff(&res.gamma, &q.solution);
            assert!(err < 1e-8 * kappa, "{name} seed {seed}: |x - x*| = {err:e}");
            let rel = (res.residuals.objective - q.objective).abs() / q.objective.abs();
            assert!(
                rel < 1e-12,
                "{name} seed {seed}: objective rel. error {rel:e}"
            );
        }
    }
}

#[test]
fn step_accounting_follows_permon() {
    // PERMON counts one product for the initial gradient, one per iteration (N p, or N beta)
    // and one more per expansion (the fresh gradient); the power method comes on top.
    let inst = permon_ex1(100).unwrap();
    let (res, _) = run(
        "mprgp:permon",
        None,
        &inst,
        ExecSettings {
            tol: 1e-5,
            residual: Some(ResidualKind::ProjGradRel),
            ..Default::default()
        },
    );
    let (cg, exp, prop) = (
        counter(&res, "cg_steps"),
        counter(&res, "expansion_steps"),
        counter(&res, "proportioning_steps"),
    );
    let hm = counter(&res, "hessian_mults");
    assert_eq!(cg + exp + prop, res.iterations as f64);
    assert_eq!(hm, 1.0 + res.iterations as f64 + exp);
    assert_eq!(hm + counter(&res, "power_matvecs"), res.matvecs as f64);
    // PERMON's alpha = 2 / (Rayleigh quotient after at most 50 power iterations from ones)
    assert!((counter(&res, "alpha") * counter(&res, "lambda_max") - 2.0).abs() < 1e-14);
}

#[test]
fn presets_and_settings() {
    let b = build("mprgp:permon", None).unwrap();
    assert_eq!(b.settings["alpha_factor"], 2.0);
    assert_eq!(b.settings["proportioning"], "free");
    assert_eq!(b.settings["expansion"], "std");
    let b = build("mprgp:permon-opt", Some(&serde_json::json!({"gamma": 2.0}))).unwrap();
    assert_eq!(b.settings["expansion"], "opt");
    assert_eq!(b.settings["proportioning_constant"], 2.0);
    assert_eq!(b.settings["alpha_factor"], 2.0);
    let d = build("mprgp", None).unwrap();
    assert_eq!(d.settings["alpha_factor"], 1.95);
    assert_eq!(d.settings["proportioning"], "reduced");
    assert!(!d.solver.supports(ProblemClass::Ccp));
    assert!(build("mpgp", None)
        .unwrap()
        .solver
        .supports(ProblemClass::Ccp));
    assert!(build("mprgp:nope", None).is_err());
    assert!(build("pgs:permon", None).is_err());
    assert!(build("mprgp", Some(&serde_json::json!({"alpha_factor": -1.0}))).is_err());
    assert!(build("mprgp", Some(&serde_json::json!({"gama": 1.0}))).is_err());
    assert!(build("mpgp", Some(&serde_json::json!({"expansion": "opt"}))).is_err());
    assert!(build("mpgp", Some(&serde_json::json!({"power_max_iter": 0}))).is_err());
    assert!(build("mprgp", Some(&serde_json::json!({"lambda_max": 0.0}))).is_err());
}

/// Every recorded iterate is feasible and `f` never increases (up to rounding).
fn assert_feasible_and_monotone(rec: &TraceRecorder, what: &str) {
    for w in rec.records.windows(2) {
        let (a, b) = (&w[0].residuals, &w[1].residuals);
        assert_eq!(
            b.primal_feas, 0.0,
            "{what}: infeasible at {}",
            w[1].iteration
        );
        assert!(
            b.objective <= a.objective + 1e-12 * a.objective.abs().max(1.0),
            "{what}: f rose from {:e} to {:e} at iteration {}",
            a.objective,
            b.objective,
            w[1].iteration
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn mprgp_iterates_are_feasible_and_monotone(
        n in 2usize..14,
        m in 1usize..16,
        seed in any::<u64>(),
        two_sided in any::<bool>(),
    ) {
        let mut rng = TestRng::new(seed);
        let vals = random_psd(n, m, 1e-3, &mut rng);
        let r: Vec<f64> = (0..n).map(|_| 3.0 * rng.next()).collect();
        let lo: Vec<f64> = (0..n)
            .map(|i| if i % 5 == 4 { f64::NEG_INFINITY } else { -0.5 * rng.next().abs() })
            .collect();
        let hi: Vec<f64> = (0..n)
            .map(|_| if two_sided { 0.5 * rng.next().abs() + 0.1 } else { f64::INFINITY })
            .collect();
        let inst = dense(n, &vals, r, ConstraintSet::Box { lo, hi });
        let exec = ExecSettings { tol: 1e-13, max_iter: 400, stall_window: None, ..Default::default() };
        let (_, rec) = run("mprgp", None, &inst, exec);
        assert_feasible_and_monotone(&rec, "mprgp");
    }

    #[test]
    fn mpgp_on_cones_is_feasible_and_monotone(
        contacts in 1usize..5,
        seed in any::<u64>(),
    ) {
        let n = 3 * contacts;
        let mut rng = TestRng::new(seed);
        let vals = random_psd(n, n + 2, 1e-3, &mut rng);
        let r: Vec<f64> = (0..n).map(|_| 3.0 * rng.next()).collect();
        let mu: Vec<f64> = (0..contacts).map(|_| 0.8 * rng.next().abs()).collect();
        let inst = dense(n, &vals, r, ConstraintSet::coulomb(mu));
        let exec = ExecSettings { tol: 1e-13, max_iter: 400, stall_window: None, ..Default::default() };
        let (res, rec) = run("mpgp", None, &inst, exec);
        // cone projections are exact to rounding: allow dist(x, K) at the rounding level of the
        // iterates, 16 ulp of max(1, ||x||) with the answer's ||x|| (an absolute 1e-14 failed
        // the regression file's case: dist 2.5e-14 at ||x|| = 136)
        let scale = cpbench_problems::linalg::norm2(&res.gamma).max(1.0);
        for w in rec.records.windows(2) {
            let (a, b) = (&w[0].residuals, &w[1].residuals);
            prop_assert!(b.primal_feas <= 16.0 * f64::EPSILON * scale,
                "infeasible: {:e} (||x|| {:e})", b.primal_feas, scale);
            prop_assert!(b.objective <= a.objective + 1e-12 * a.objective.abs().max(1.0),
                "f rose from {:e} to {:e}", a.objective, b.objective);
        }
    }
}

/// The active-set geometry of MPRGP and MPGP (`solvers/src/mprgp/geometry.rs`): free / chopped gradient, reduced free gradient, feasible step, landing.
mod geometry {

    use cpbench_problems::ConstraintSet;

    #[test]
    fn split_gradient_box_and_fixed_component() {
        // x = (lo, hi, free, fixed), g = (-1, -1, 2, 5)
        let k = ConstraintSet::Box {
            lo: vec![0.0, 0.0, 0.0, 1.0],
            hi: vec![1.0, 1.0, 1.0, 1.0],
        };
        let x = [0.0, 1.0, 0.5, 1.0];
        let g = [-1.0, -1.0, 2.0, 5.0];
        let (mut phi, mut beta) = ([0.0; 4], [0.0; 4]);
        k.split_gradient(&x, &g, &mut phi, &mut beta);
        assert_eq!(phi, [0.0, 0.0, 2.0, 0.0]);
        // at lo: min(g, 0) = -1; at hi: max(g, 0) = 0; fixed: 0
        assert_eq!(beta, [-1.0, 0.0, 0.0, 0.0]);
        // reduced free gradient: min(phi, (x - lo)/alpha) = min(2, 0.5/0.5) = 1
        let mut r = [0.0; 4];
        k.reduced_free_gradient(&x, &phi, 0.5, &mut r);
        assert_eq!(r, [0.0, 0.0, 1.0, 0.0]);
        // largest feasible step along -d
        let d = [0.0, 0.0, 0.25, 0.0];
        assert_eq!(k.max_feasible_step(&x, &d), (2.0, Some(2)));
        let d = [0.0, 0.0, -1.0, 0.0];
        assert_eq!(k.max_feasible_step(&x, &d), (0.5, Some(2)));
        let mut xb = [0.5];
        k.land_on_boundary(2, &mut xb, &[-1.0]);
        assert_eq!(xb, [1.0]);
    }

    #[test]
    fn split_gradient_cone_sums_to_projected_gradient() {
        let k = ConstraintSet::coulomb(vec![0.5, 0.5, 0.5, 0.0]);
        // interior, surface, apex, mu = 0 half-line
        let x = [1.0, 0.1, 0.0, 2.0, 0.6, 0.8, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        let g = [
            0.3, -0.2, 0.7, -1.0, 0.5, 0.5, -1.0, 3.0, 0.0, 2.0, 1.0, -1.0,
        ];
        let (mut phi, mut beta) = ([0.0; 12], [0.0; 12]);
        k.split_gradient(&x, &g, &mut phi, &mut beta);
        assert_eq!(&phi[..3], &g[..3]);
        assert_eq!(&beta[..3], &[0.0; 3]);
        assert_eq!(&phi[3..9], &[0.0; 6]);
        assert_eq!(&phi[9..], &[2.0, 0.0, 0.0]);
        assert_eq!(&beta[9..], &[0.0; 3]);
        let mut gp = [0.0; 3];
        for b in 0..4 {
            let s = 3 * b..3 * b + 3;
            k.projected_gradient_block(b, &x[s.clone()], &g[s.clone()], &mut gp);
            for i in 0..3 {
                assert!((phi[3 * b + i] + beta[3 * b + i] - gp[i]).abs() < 1e-15);
            }
        }
        // surface block: -g^P is in the tangent half-space {a.d <= 0}, a = (-mu, x_t/|x_t|)
        let a = [-0.5, 0.6, 0.8];
        let ad: f64 = (0..3).map(|i| -a[i] * beta[3 + i]).sum();
        assert!(ad <= 1e-15);
        assert!(!k.block_is_free(1, &x[3..6]) && k.block_is_free(0, &x[..3]));
    }

    #[test]
    fn cone_max_feasible_step() {
        let k = ConstraintSet::coulomb(vec![0.5]);
        let x = [1.0, 0.0, 0.0];
        // y = (1, t, 0) leaves the cone at t = 0.5
        let (t, b) = k.max_feasible_step(&x, &[0.0, -1.0, 0.0]);
        assert!((t - 0.5).abs() < 1e-15 && b == Some(0));
        // y = (1 - t, 0, 0) reaches the apex at t = 1
        assert!((k.max_feasible_step(&x, &[1.0, 0.0, 0.0]).0 - 1.0).abs() < 1e-15);
        // y = (1 + t, 0, 0): never leaves
        assert_eq!(k.max_feasible_step(&x, &[-1.0, 0.0, 0.0]).0, f64::INFINITY);
        // y = (1 - t/2, -t/2, 0): t/2 <= (1 - t/2)/2 until t = 2/3
        let t = k.max_feasible_step(&x, &[0.5, 0.5, 0.0]).0;
        assert!((t - 2.0 / 3.0).abs() < 1e-15, "{t}");
        // after the step the point lies on the surface
        let mut y = [1.0 - t * 0.5, -t * 0.5, 0.0];
        k.land_on_boundary(0, &mut y, &[0.5, 0.5, 0.0]);
        assert!(!k.block_is_free(0, &y));
        // mu = 0: any tangential motion is blocked at once
        let k0 = ConstraintSet::coulomb(vec![0.0]);
        assert_eq!(k0.max_feasible_step(&x, &[0.0, 1.0, 0.0]).0, 0.0);
        assert_eq!(k0.max_feasible_step(&x, &[0.5, 0.0, 0.0]).0, 2.0);
    }
}
