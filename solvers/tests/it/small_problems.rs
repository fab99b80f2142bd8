//! Every solver on small problems with known solutions, and cross-solver agreement on random
//! PSD instances of every class.

use cpbench_problems::{ConstraintSet, Instance, ProblemClass};
use cpbench_solvers::registry::{build, SOLVER_NAMES};
use cpbench_solvers::{ExecSettings, Executor, ObserverMode, Status, TraceRecorder};
use cpbench_test_support::{dense, lcp2, random_psd, solve_with, TestRng};

fn solve(name: &str, inst: &Instance, tol: f64) -> cpbench_solvers::SolveResult {
    let exec = ExecSettings {
        tol,
        max_iter: 50_000,
        stall_window: None,
        ..Default::default()
    };
    solve_with(name, inst, exec)
}

/// The registered solvers that stop on the executor's tolerance. Clarabel stops on its own
/// tests (duality gap 1e-8 by default) whatever `tol` is; it has its own analytic tests in
/// `clarabel.rs`.
fn iterative_solvers() -> impl Iterator<Item = &'static str> {
    SOLVER_NAMES.into_iter().filter(|&n| n != "clarabel")
}

/// The registered iterative solvers that handle `class` (MPRGP is for bounds only).
/// The iterative solvers of `class`, but `sap` and `primal-cg`: they take only compliant
/// instances on the matrix-free storage (their tests: the root package's
/// tests/it/compliance.rs).
fn solvers_for(class: ProblemClass) -> Vec<&'static str> {
    iterative_solvers()
        .filter(|n| {
            !["sap", "primal-cg"].contains(n) && build(n, None).unwrap().solver.supports(class)
        })
        .collect()
}

#[test]
fn lcp_interior_solution() {
    // N = [[2,1],[1,2]], r = (-5,-6): z = (4/3, 7/3), w = 0
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-5.0, -6.0]);
    for name in solvers_for(inst.class()) {
        let res = solve(name, &inst, 1e-12);
        assert_eq!(res.status, Status::Converged, "{name}");
        assert!(
            (res.gamma[0] - 4.0 / 3.0).abs() < 1e-10,
            "{name}: {:?}",
            res.gamma
        );
        assert!(
            (res.gamma[1] - 7.0 / 3.0).abs() < 1e-10,
            "{name}: {:?}",
            res.gamma
        );
    }
}

#[test]
fn lcp_with_active_bound() {
    // N = [[1, 0.5],[0.5, 1]], r = (1, -1): z = (0, 1), w = (1.5, 0)
    let inst = lcp2([1.0, 0.5, 0.5, 1.0], [1.0, -1.0]);
    for name in solvers_for(inst.class()) {
        let res = solve(name, &inst, 1e-12);
        assert_eq!(res.status, Status::Converged, "{name}");
        assert!(
            res.gamma[0].abs() < 1e-12 && (res.gamma[1] - 1.0).abs() < 1e-10,
            "{name}: {:?}",
            res.gamma
        );
        assert!((res.residuals.objective + 0.5).abs() < 1e-12);
    }
}

#[test]
fn box_qp_known_solution() {
    // N = diag(1, 2, 4), r = (-3, 3, -2), box [-1, 1] x [-inf, 0.5] x [0, inf):
    // unconstrained minimiser (3, -1.5, 0.5) -> clamped (1, -1.5, 0.5)
    let k = ConstraintSet::Box {
        lo: vec![-1.0, f64::NEG_INFINITY, 0.0],
        hi: vec![1.0, 0.5, f64::INFINITY],
    };
    let mut d = vec![0.0; 9];
    d[0] = 1.0;
    d[4] = 2.0;
    d[8] = 4.0;
    let inst = dense(3, &d, vec![-3.0, 3.0, -2.0], k);
    for name in solvers_for(inst.class()) {
        let res = solve(name, &inst, 1e-12);
        assert_eq!(res.status, Status::Converged, "{name}");
        let want = [1.0, -1.5, 0.5];
        for (a, b) in res.gamma.iter().zip(want) {
            assert!((a - b).abs() < 1e-10, "{name}: {:?}", res.gamma);
        }
    }
}

#[test]
fn one_contact_sticking_and_sliding() {
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let k = ConstraintSet::coulomb(vec![0.5]);
    // sticking: minimiser (1, -0.2, 0) inside the cone
    let stick = dense(3, &eye, vec![-1.0, 0.2, 0.0], k.clone());
    // sliding: minimiser = P_K((1, -2, 0)) = (1.6, -0.8, 0) on the surface
    let slide = dense(3, &eye, vec![-1.0, 2.0, 0.0], k);
    assert!(solvers_for(ProblemClass::Ccp).contains(&"mpgp"));
    for name in solvers_for(ProblemClass::Ccp) {
        let a = solve(name, &stick, 1e-12);
        assert!(
            (a.gamma[0] - 1.0).abs() < 1e-10 && (a.gamma[1] + 0.2).abs() < 1e-10,
            "{name}"
        );
        let b = solve(name, &slide, 1e-12);
        assert!(
            (b.gamma[0] - 1.6).abs() < 1e-10 && (b.gamma[1] + 0.8).abs() < 1e-10,
            "{name}: {:?}",
            b.gamma
        );
        assert!(b.gamma[2].abs() < 1e-12);
    }
}

#[test]
fn random_instances_all_solvers_agree() {
    for (seed, class) in [(1u64, "lcp"), (2, "box"), (3, "ccp"), (4, "ccp-rankdef")] {
        let n = 30;
        let m = if class == "ccp-rankdef" { 20 } else { 40 };
        let vals = random_psd(n, m, 0.0, &mut TestRng::new(seed));
        let mut rng = TestRng::new(seed + 100);
        let r: Vec<f64> = (0..n).map(|_| rng.next() * 5.0).collect();
        let k = match class {
            "lcp" => ConstraintSet::NonNegative,
            "box" => ConstraintSet::Box {
                lo: (0..n)
                    .map(|i| if i % 3 == 0 { f64::NEG_INFINITY } else { -0.5 })
                    .collect(),
                hi: (0..n)
                    .map(|i| if i % 4 == 0 { f64::INFINITY } else { 0.7 })
                    .collect(),
            },
            _ => ConstraintSet::coulomb((0..n / 3).map(|c| 0.1 + 0.1 * (c % 5) as f64).collect()),
        };
        let inst = dense(n, &vals, r, k);
        // enum enumerates 2^n bases and refuses n = 30
        let objs: Vec<(String, f64)> = solvers_for(inst.class())
            .iter()
            .filter(|name| {
                let b = build(name, None).unwrap();
                cpbench_solvers::kernels::refusal(b.solver.as_ref(), &inst).is_none()
            })
            .map(|name| {
                let res = solve(name, &inst, 1e-9);
                assert_eq!(
                    res.status,
                    Status::Converged,
                    "{name} on {class}: {:?}",
                    res.residuals
                );
                assert!(res.residuals.nat_map_rel_2 <= 1e-9);
                (name.to_string(), res.residuals.objective)
            })
            .collect();
        let f0 = objs[0].1;
        for (name, f) in &objs {
            assert!(
                (f - f0).abs() <= 1e-8 * f0.abs().max(1.0),
                "{class}: {name} {f} vs {f0}"
            );
        }
    }
}

#[test]
fn executor_limits_warm_start_and_trace() {
    let vals = random_psd(12, 12, 0.0, &mut TestRng::new(7));
    let inst = dense(12, &vals, vec![-1.0; 12], ConstraintSet::NonNegative);
    // iteration cap
    let mut b = build("pgs", None).unwrap();
    let ex = Executor::new(ExecSettings {
        tol: 1e-14,
        max_iter: 3,
        ..Default::default()
    });
    let mut rec = TraceRecorder::new(ObserverMode::Always);
    let res = ex
        .run(b.solver.as_mut(), &inst, None, &mut [&mut rec])
        .unwrap();
    assert_eq!(res.status, Status::MaxIterations);
    assert_eq!(res.iterations, 3);
    assert_eq!(res.matvecs, 3);
    assert_eq!(rec.records.len(), 4);
    assert_eq!(rec.records[0].iteration, 0);
    // warm start from a converged answer: converged at iteration 0
    let sol = solve("apgd", &inst, 1e-10).gamma;
    let mut b = build("spgqp", None).unwrap();
    let ex = Executor::new(ExecSettings {
        tol: 1e-9,
        ..Default::default()
    });
    let res = ex
        .run(b.solver.as_mut(), &inst, Some(&sol), &mut [])
        .unwrap();
    assert_eq!(res.status, Status::Converged);
    assert_eq!(res.iterations, 0);
    // wrong warm-start size is an error
    assert!(ex
        .run(b.solver.as_mut(), &inst, Some(&sol[..3]), &mut [])
        .is_err());
}

#[test]
fn invalid_settings_are_rejected() {
    assert!(build("pgs", Some(&serde_json::json!({"omega": 2.5}))).is_err());
    assert!(build("pgs", Some(&serde_json::json!({"omeg": 1.0}))).is_err());
    assert!(build("spgqp", Some(&serde_json::json!({"m": 0}))).is_err());
    assert!(build("nope", None).is_err());
    let b = build("apgd", Some(&serde_json::json!({"shrink": 0.95}))).unwrap();
    assert_eq!(b.settings["shrink"], 0.95);
    assert_eq!(b.settings["backtrack"], 2.0);
}
