//! The interior point on problems with analytic solutions: LCP, box QP (finite, one-sided and
//! fixed bounds), one Coulomb contact sticking / sliding / frictionless, a degenerate LCP
//! (strict complementarity fails) and singular PSD `N`.

use cpbench_problems::{ConstraintSet, Instance};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, ObserverMode, SolveResult, Status, TraceRecorder};
use cpbench_test_support::{counter, dense, lcp2, solve, solve_with};

fn ipm(inst: &Instance, tol: f64) -> SolveResult {
    solve("ipm", inst, tol, 100)
}

fn assert_close(x: &[f64], want: &[f64], tol: f64) {
    for (i, (a, b)) in x.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= tol,
            "component {i}: {a} vs {b} (x = {x:?})"
        );
    }
}

/// `N = I` (5 x 5), `r = (-3, 1, 5, -7, 0.5)` and every kind of bound (finite, one-sided,
/// fixed): the solution is `x = clamp(-r, lo, hi)` = [`EVERY_BOUND_X`].
fn every_bound_box_qp() -> Instance {
    let r = vec![-3.0, 1.0, 5.0, -7.0, 0.5];
    let lo = vec![0.0, 0.0, f64::NEG_INFINITY, 1.0, 0.25];
    let hi = vec![2.0, 2.0, 1.0, f64::INFINITY, 0.25];
    let mut id = vec![0.0; 25];
    for i in 0..5 {
        id[i * 6] = 1.0;
    }
    dense(5, &id, r, ConstraintSet::Box { lo, hi })
}

/// The solution of [`every_bound_box_qp`].
const EVERY_BOUND_X: [f64; 5] = [2.0, 0.0, -5.0, 7.0, 0.25];

#[test]
fn lcp_with_known_solution() {
    // N = [[2, 1], [1, 2]], r = (-1, 1): x = (1/2, 0), w = N x + r = (0, 3/2).
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-1.0, 1.0]);
    let res = ipm(&inst, 1e-10);
    assert_eq!(res.status, Status::Converged);
    assert!(res.iterations <= 20, "{} iterations", res.iterations);
    assert_close(&res.gamma, &[0.5, 0.0], 1e-9);
    assert!((inst.objective(&res.gamma) + 0.25).abs() < 1e-10);
}

#[test]
fn box_qp_with_every_kind_of_bound() {
    // N = I: x = clamp(-r, lo, hi) per component.
    let res = ipm(&every_bound_box_qp(), 1e-10);
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    assert_close(&res.gamma, &EVERY_BOUND_X, 1e-9);
}

#[test]
fn one_contact_sticking_sliding_and_frictionless() {
    let id3 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let cone = |mu: f64| ConstraintSet::coulomb(vec![mu]);
    // N = I: gamma = P_K(-r). Sticking: -r = (1, -0.1, 0) is inside K_0.5.
    let res = ipm(&dense(3, &id3, vec![-1.0, 0.1, 0.0], cone(0.5)), 1e-10);
    assert_eq!(res.status, Status::Converged);
    assert_close(&res.gamma, &[1.0, -0.1, 0.0], 1e-9);
    // Sliding: P_K(1, -2, 0) with mu = 0.5: x_n = (1 + 0.5 * 2) / 1.25 = 1.6, x_t = -0.8.
    let res = ipm(&dense(3, &id3, vec![-1.0, 2.0, 0.0], cone(0.5)), 1e-10);
    assert_eq!(res.status, Status::Converged);
    assert_close(&res.gamma, &[1.6, -0.8, 0.0], 1e-9);
    // Separating: -r = (-1, 0.3, 0.2) lies in the polar cone: gamma = 0.
    let res = ipm(&dense(3, &id3, vec![1.0, -0.3, -0.2], cone(0.5)), 1e-10);
    assert_eq!(res.status, Status::Converged);
    assert_close(&res.gamma, &[0.0, 0.0, 0.0], 1e-9);
    // mu = 0: tangents fixed at zero, normal an LCP.
    let res = ipm(&dense(3, &id3, vec![-1.0, 2.0, 3.0], cone(0.0)), 1e-10);
    assert_eq!(res.status, Status::Converged);
    assert_close(&res.gamma, &[1.0, 0.0, 0.0], 1e-9);
    assert_eq!(&res.gamma[1..], &[0.0, 0.0]);
}

#[test]
fn degenerate_lcp_without_strict_complementarity() {
    // x1 = w1 = 0 at the solution (x = (0, 1), w = (0, 0)): no strictly complementary pair.
    let inst = dense(
        3,
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0],
        vec![0.0, -1.0, 4.0],
        ConstraintSet::NonNegative,
    );
    let res = ipm(&inst, 1e-8);
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    assert!(res.iterations <= 50, "{} iterations", res.iterations);
    // The degenerate pair (x1, w1) both approach 0 like sqrt(mu), the strictly complementary
    // ones like mu: x1 is the least accurate component.
    assert_close(&res.gamma, &[0.0, 1.0, 0.0], 1e-7);
    assert!(res.residuals.nat_map_rel_2 <= 1e-8);
}

#[test]
fn singular_psd_matrix() {
    // N = [[1, 1], [1, 1]] (rank 1), r = (-1, -1): every x >= 0 with x1 + x2 = 1 is optimal,
    // objective -1/2, w = N x + r = 0.
    let inst = lcp2([1.0, 1.0, 1.0, 1.0], [-1.0, -1.0]);
    let res = ipm(&inst, 1e-10);
    assert_eq!(res.status, Status::Converged);
    assert!((res.gamma[0] + res.gamma[1] - 1.0).abs() < 1e-9);
    assert!(res.gamma.iter().all(|&v| v >= 0.0));
    assert!((inst.objective(&res.gamma) + 0.5).abs() < 1e-10);
    // A rank-2 Delassus matrix of two contacts sharing one body direction (N = D^T D,
    // D = [d1 d2 ...], 6 x 6 of rank 3): a CCP whose N has a 3-dimensional null space.
    let d: [[f64; 3]; 6] = [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.2, 0.0],
        [0.0, 1.0, 0.1],
        [0.3, 0.0, 1.0],
    ];
    let mut nmat = vec![0.0; 36];
    for i in 0..6 {
        for j in 0..6 {
            nmat[j * 6 + i] = (0..3).map(|k| d[i][k] * d[j][k]).sum();
        }
    }
    let inst = dense(
        6,
        &nmat,
        vec![-1.0, 0.2, 0.1, -0.5, -0.3, 0.2],
        ConstraintSet::coulomb(vec![0.4, 0.6]),
    );
    let res = ipm(&inst, 1e-8);
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    // Cross-check the optimal value with APGD run far beyond the tolerance.
    let mut b = build("apgd", None).unwrap();
    let ex = Executor::new(ExecSettings {
        tol: 1e-12,
        max_iter: 100_000,
        stall_window: None,
        ..Default::default()
    });
    let apgd = ex.run(b.solver.as_mut(), &inst, None, &mut []).unwrap();
    let (fi, fa) = (inst.objective(&res.gamma), inst.objective(&apgd.gamma));
    assert!((fi - fa).abs() <= 1e-9 * fa.abs().max(1.0), "{fi} vs {fa}");
}

#[test]
fn trace_records_barrier_and_step_lengths_and_warm_start_is_ignored() {
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-1.0, 1.0]);
    let mut b = build("ipm", None).unwrap();
    let ex = Executor::new(ExecSettings {
        tol: 1e-10,
        ..Default::default()
    });
    let mut rec = TraceRecorder::new(ObserverMode::Always);
    let res = ex
        .run(b.solver.as_mut(), &inst, Some(&[0.4, 0.1]), &mut [&mut rec])
        .unwrap();
    assert_eq!(res.status, Status::Converged);
    // The warm start is close to the solution, yet the interior point starts from its own
    // interior point: the first trace point after the start is not near the warm start.
    assert!(res.iterations > 3);
    assert!(res.message.unwrap().contains("warm start ignored"));
    let mus: Vec<f64> = rec.records[1..]
        .iter()
        .map(|r| {
            r.info
                .items()
                .iter()
                .find(|(k, _)| *k == "ipm_mu")
                .unwrap()
                .1
        })
        .collect();
    assert!(
        mus.windows(2).all(|w| w[1] < w[0]),
        "mu not decreasing: {mus:?}"
    );
    let counters: std::collections::HashMap<_, _> = res.counters.iter().cloned().collect();
    assert_eq!(counters["factorizations"], res.iterations as f64);
}

/// `ipm` with `linear_solver = pcg` (and otherwise default settings).
fn ipm_pcg(inst: &Instance, tol: f64) -> SolveResult {
    let settings = serde_json::json!({"linear_solver": "pcg"});
    let mut b = build("ipm", Some(&settings)).unwrap();
    let ex = Executor::new(ExecSettings {
        tol,
        max_iter: 100,
        ..Default::default()
    });
    ex.run(b.solver.as_mut(), inst, None, &mut []).unwrap()
}

#[test]
fn pcg_variant_reaches_the_analytic_solutions() {
    // LCP: x = (1/2, 0)
    let res = ipm_pcg(&lcp2([2.0, 1.0, 1.0, 2.0], [-1.0, 1.0]), 1e-10);
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    assert_close(&res.gamma, &[0.5, 0.0], 1e-9);
    // no factorisation; every CG iteration is a counted N-product (plus one per iteration
    // for the dual residual, plus warm starts)
    assert_eq!(counter(&res, "factorizations"), 0.0);
    let cg = counter(&res, "cg_iterations");
    assert!(cg >= res.iterations as f64, "{cg}");
    assert!(
        res.matvecs as f64 >= cg + res.iterations as f64,
        "{}",
        res.matvecs
    );
    // box QP with every kind of bound, a fixed variable included (x = clamp(-r, lo, hi))
    let res = ipm_pcg(&every_bound_box_qp(), 1e-10);
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    assert_close(&res.gamma, &EVERY_BOUND_X, 1e-9);
    // one contact: sliding (P_K(1, -2, 0), mu = 0.5) and mu = 0 (tangents fixed)
    let id3 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let cone = |mu: f64| ConstraintSet::coulomb(vec![mu]);
    let res = ipm_pcg(&dense(3, &id3, vec![-1.0, 2.0, 0.0], cone(0.5)), 1e-10);
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    assert_close(&res.gamma, &[1.6, -0.8, 0.0], 1e-9);
    let res = ipm_pcg(&dense(3, &id3, vec![-1.0, 2.0, 3.0], cone(0.0)), 1e-10);
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    assert_close(&res.gamma, &[1.0, 0.0, 0.0], 1e-9);
    // singular PSD N = [[1, 1], [1, 1]]: x1 + x2 = 1
    let res = ipm_pcg(&lcp2([1.0, 1.0, 1.0, 1.0], [-1.0, -1.0]), 1e-10);
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    assert!(
        (res.gamma[0] + res.gamma[1] - 1.0).abs() < 1e-9,
        "{:?}",
        res.gamma
    );
}

#[test]
fn memory_budget_refuses_the_factorisation_before_allocating() {
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-1.0, 1.0]);
    let exec = |bytes: u64| ExecSettings {
        tol: 1e-10,
        max_memory_bytes: Some(bytes),
        ..Default::default()
    };
    // 100 bytes: less than the iterates alone
    let res = solve_with("ipm", &inst, exec(100));
    assert_eq!(res.status, Status::Unsupported);
    assert_eq!(res.iterations, 0);
    let msg = res.message.unwrap();
    assert!(
        msg.starts_with("refused: ipm (linear_solver = cholesky)"),
        "{msg}"
    );
    assert!(msg.contains("> memory limit 100 bytes"), "{msg}");
    // the prediction is in the message, in bytes, and above the limit
    let predicted: u64 = msg
        .split("needs about ")
        .nth(1)
        .and_then(|t| t.split(" bytes").next())
        .and_then(|t| t.rsplit(['(', ' ']).next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no predicted bytes in {msg}"));
    assert!(predicted > 100 && predicted < 10_000, "{predicted}");
    // 1 MiB is plenty: converged, with the predicted bytes in the counters
    let res = solve_with("ipm", &inst, exec(1 << 20));
    assert_eq!(res.status, Status::Converged, "{:?}", res.message);
    let used = counter(&res, "predicted_bytes");
    assert!(used > 100.0 && used < (1 << 20) as f64, "{used}");
}

#[test]
fn a_spent_time_budget_stops_before_the_factorisation() {
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-1.0, 1.0]);
    // 1 ns: spent before the first step; the interior point does not factorise
    let res = solve_with(
        "ipm",
        &inst,
        ExecSettings {
            tol: 1e-10,
            max_time_s: Some(1e-9),
            ..Default::default()
        },
    );
    assert_eq!(res.status, Status::MaxTime, "{:?}", res.message);
    assert_eq!(res.iterations, 1);
    assert_eq!(counter(&res, "factorizations"), 0.0);
    let msg = res.message.unwrap();
    assert!(
        msg.contains("stopped before the numeric factorisation"),
        "{msg}"
    );
    assert!(msg.contains("flop/s assumed"), "{msg}");
}
