//! The Clarabel adapter on small problems with analytic solutions (every class, every cone
//! kind of its conic form), its conic form itself, its settings, claim, message and counters.
//! Clarabel runs at its default tolerances (duality gap and feasibility 1e-8), so answers are
//! compared to 1e-7.

use clarabel::solver::SupportedConeT;
use cpbench_problems::{ConstraintSet, Instance};
use cpbench_solvers::clarabel::{Clarabel, ClarabelSettings, ConicForm};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, Problem, SolveResult, Status};
use cpbench_test_support::{dense, lcp2, solve_with};

fn solve(inst: &Instance) -> SolveResult {
    solve_with("clarabel", inst, ExecSettings::default())
}

fn assert_close(name: &str, got: &[f64], want: &[f64], tol: f64) {
    for (a, b) in got.iter().zip(want) {
        assert!((a - b).abs() <= tol, "{name}: got {got:?}, want {want:?}");
    }
}

#[test]
fn lcp_interior_and_active_bound() {
    // N = [[2,1],[1,2]], r = (-5,-6): gamma = (4/3, 7/3), w = 0, f = 1/2 r^T gamma = -31/3
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-5.0, -6.0]);
    let res = solve(&inst);
    assert_eq!(res.status, Status::Converged);
    assert_eq!(res.iterations, 1);
    assert_close("interior", &res.gamma, &[4.0 / 3.0, 7.0 / 3.0], 1e-7);
    assert!((res.residuals.objective + 31.0 / 3.0).abs() < 1e-7);
    // N = [[1, 0.5],[0.5, 1]], r = (1, -1): gamma = (0, 1), w = (1.5, 0), f = -1/2
    let inst = lcp2([1.0, 0.5, 0.5, 1.0], [1.0, -1.0]);
    let res = solve(&inst);
    assert_eq!(res.status, Status::Converged);
    assert_close("active bound", &res.gamma, &[0.0, 1.0], 1e-7);
    assert!((res.residuals.objective + 0.5).abs() < 1e-7);
}

#[test]
fn box_qp_with_fixed_and_infinite_bounds() {
    // N = diag(1, 2, 4, 1), r = (-3, 3, -2, 5), box [-1, 1] x [-inf, 0.5] x [0, inf) x [2, 2]:
    // unconstrained minimiser (3, -1.5, 0.5, -5) -> (1, -1.5, 0.5, 2); component 3 is fixed
    // (a zero-cone row), component 1 has one finite bound.
    let k = ConstraintSet::Box {
        lo: vec![-1.0, f64::NEG_INFINITY, 0.0, 2.0],
        hi: vec![1.0, 0.5, f64::INFINITY, 2.0],
    };
    let mut d = vec![0.0; 16];
    for (i, v) in [1.0, 2.0, 4.0, 1.0].into_iter().enumerate() {
        d[i * 5] = v;
    }
    let inst = dense(4, &d, vec![-3.0, 3.0, -2.0, 5.0], k);
    let res = solve(&inst);
    assert_eq!(res.status, Status::Converged);
    assert_close("box", &res.gamma, &[1.0, -1.5, 0.5, 2.0], 1e-7);
    // f = 1/2 (1 + 2 * 2.25 + 4 * 0.25 + 4) + (-3 - 4.5 - 1 + 10) = 5.25 + 1.5
    assert!((res.residuals.objective - 6.75).abs() < 1e-7);
    // rows: one zero row (fixed component), then 2 + 1 + 1 non-negative rows
    let form = ConicForm::new(&Problem::new(&inst));
    assert_eq!(form.a.m, 5);
    assert!(matches!(
        form.cones[..],
        [
            SupportedConeT::ZeroConeT(1),
            SupportedConeT::NonnegativeConeT(4)
        ]
    ));
}

#[test]
fn one_contact_sticking_and_sliding() {
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let k = ConstraintSet::coulomb(vec![0.5]);
    // sticking: minimiser (1, -0.2, 0) inside the cone
    let stick = dense(3, &eye, vec![-1.0, 0.2, 0.0], k.clone());
    let a = solve(&stick);
    assert_eq!(a.status, Status::Converged);
    assert_close("stick", &a.gamma, &[1.0, -0.2, 0.0], 1e-7);
    // sliding: minimiser = P_K((1, -2, 0)) = (1.6, -0.8, 0) on the surface ||x_t|| = mu x_n
    let slide = dense(3, &eye, vec![-1.0, 2.0, 0.0], k);
    let b = solve(&slide);
    assert_eq!(b.status, Status::Converged);
    assert_close("slide", &b.gamma, &[1.6, -0.8, 0.0], 1e-7);
    let form = ConicForm::new(&Problem::new(&slide));
    assert!(matches!(
        form.cones[..],
        [SupportedConeT::SecondOrderConeT(3)]
    ));
}

#[test]
fn frictionless_and_frictional_contacts_mixed() {
    // Two decoupled contacts, N = I6: contact 0 has mu = 0 (K_0 = {x_n >= 0, x_t = 0}),
    // contact 1 mu = 0.5. r = (-1, 2, 1, -1, 2, 0): contact 0 -> (1, 0, 0); contact 1 slides,
    // (1.6, -0.8, 0) as in the single-contact case.
    let mut eye = vec![0.0; 36];
    for i in 0..6 {
        eye[i * 7] = 1.0;
    }
    let k = ConstraintSet::coulomb(vec![0.0, 0.5]);
    let inst = dense(6, &eye, vec![-1.0, 2.0, 1.0, -1.0, 2.0, 0.0], k);
    let res = solve(&inst);
    assert_eq!(res.status, Status::Converged);
    assert_close("mixed", &res.gamma, &[1.0, 0.0, 0.0, 1.6, -0.8, 0.0], 1e-7);
    let form = ConicForm::new(&Problem::new(&inst));
    assert!(matches!(
        form.cones[..],
        [
            SupportedConeT::ZeroConeT(2),
            SupportedConeT::NonnegativeConeT(1),
            SupportedConeT::SecondOrderConeT(3)
        ]
    ));
    // P is the upper triangle of N; A has one entry per row (6 rows, one per unknown)
    assert_eq!(form.p.nnz(), 6);
    assert_eq!(form.a.nnz(), 6);
    assert_eq!(form.b, vec![0.0; 6]);
}

#[test]
fn claim_message_and_counters() {
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-5.0, -6.0]);
    let res = solve(&inst);
    let msg = res.message.unwrap();
    assert!(msg.starts_with("clarabel: Solved in "), "{msg}");
    let get = |k: &str| res.counters.iter().find(|(n, _)| n == k).unwrap().1;
    let it = get("clarabel_iterations");
    assert!((1.0..=200.0).contains(&it));
    assert!(msg.contains(&format!("in {it} iterations")), "{msg}");
    // Clarabel's test: absolute or relative (to max(1, |f|)) gap below 1e-8
    assert!(get("clarabel_gap_abs") <= 1e-8 || get("clarabel_gap_rel") <= 1e-8);
    assert!(get("clarabel_res_primal") <= 1e-8 && get("clarabel_res_dual") <= 1e-8);
    assert!((get("clarabel_cost_primal") - res.residuals.objective).abs() < 1e-8);
    assert_eq!(res.matvecs, 0);
    // an iteration limit is claimed as such, and the harness residual is still computed
    let mut b = build("clarabel", Some(&serde_json::json!({"max_iter": 2}))).unwrap();
    let r2 = Executor::default()
        .run(b.solver.as_mut(), &inst, None, &mut [])
        .unwrap();
    assert_eq!(r2.status, Status::MaxIterations);
    assert!(r2.residuals.nat_map_rel_2 > 1e-6);
    assert!(r2.message.unwrap().contains("MaxIterations"));
    assert_eq!(
        Clarabel::claim(clarabel::solver::SolverStatus::AlmostSolved),
        Status::Converged
    );
    assert_eq!(
        Clarabel::claim(clarabel::solver::SolverStatus::InsufficientProgress),
        Status::Stalled
    );
    assert_eq!(
        Clarabel::claim(clarabel::solver::SolverStatus::PrimalInfeasible),
        Status::NumericalError
    );
}

#[test]
fn settings_defaults_and_validation() {
    let b = build("clarabel", None).unwrap();
    assert_eq!(b.settings["max_iter"], 200);
    assert_eq!(b.settings["tol_gap_abs"], 1e-8);
    assert_eq!(b.settings["tol_feas"], 1e-8);
    assert_eq!(b.settings["direct_solve_method"], "qdldl");
    assert_eq!(b.settings["verbose"], false);
    assert!(b.settings["time_limit_s"].is_null());
    let b = build("clarabel", Some(&serde_json::json!({"tol_gap_rel": 1e-10}))).unwrap();
    assert_eq!(b.settings["tol_gap_rel"], 1e-10);
    assert_eq!(b.settings["tol_gap_abs"], 1e-8);
    for bad in [
        serde_json::json!({"max_iter": 0}),
        serde_json::json!({"tol_gap_abs": 0.0}),
        serde_json::json!({"tol_feas": -1e-8}),
        serde_json::json!({"time_limit_s": 0.0}),
        serde_json::json!({"max_step_fraction": 1.5}),
        serde_json::json!({"direct_solve_method": "faer"}),
        serde_json::json!({"equilibrate_min_scaling": 1e5}),
        serde_json::json!({"tol_gap": 1e-8}),
    ] {
        assert!(build("clarabel", Some(&bad)).is_err(), "{bad}");
    }
    assert!(Clarabel::new(ClarabelSettings::default()).is_ok());
}
