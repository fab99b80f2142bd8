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
    ipm_settings(inst, serde_json::json!({"linear_solver": "pcg"}), tol)
}

/// `ipm` with `settings`, at `tol` within 100 iterations (residual: the default).
fn ipm_settings(inst: &Instance, settings: serde_json::Value, tol: f64) -> SolveResult {
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

/// The block-Jacobi preconditioner of the `pcg` variant ([`cpbench_solvers::kernels::inv3_spd`]).
mod pcg {
    use cpbench_solvers::kernels::inv3_spd;

    #[test]
    fn inverse_of_an_spd_block_and_the_fallback() {
        let m = [4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0];
        let inv = inv3_spd(&m);
        for a in 0..3 {
            for b in 0..3 {
                let v: f64 = (0..3).map(|k| m[3 * a + k] * inv[3 * k + b]).sum();
                let want = if a == b { 1.0 } else { 0.0 };
                assert!((v - want).abs() < 1e-14, "({a},{b}) {v}");
            }
        }
        // indefinite: inverse diagonal, 1 for a non-positive entry
        let bad = [1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, -1.0];
        assert_eq!(
            inv3_spd(&bad),
            [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        );
    }
}

/// The reduced Newton system: predicted factor size, flops and bytes ([`cpbench_solvers::ipm::kkt`]).
mod kkt {
    use cpbench_problems::CscMatrix;
    use cpbench_solvers::ipm::kkt::{assembly_bytes, Kkt};

    /// Dense `n x n` SPD matrix `n I + 1 1^T` (every entry nonzero).
    fn dense_spd(n: usize) -> CscMatrix {
        let mut v = vec![1.0; n * n];
        for i in 0..n {
            v[i * n + i] += n as f64;
        }
        CscMatrix::from_dense_col_major(n, n, &v).unwrap()
    }

    #[test]
    fn predictions_of_a_dense_and_a_diagonal_factor() {
        // a dense K has a dense factor: sum_{k=1..n} k^2 flops, whether faer picks the
        // simplicial (n = 4: n(n+1)/2 stored entries) or the supernodal (n = 150: one
        // supernode, stored as a full n x n block) factorisation
        for (n, stored) in [(4usize, 10), (150, 150 * 150)] {
            let nmat = dense_spd(n);
            let kkt = Kkt::new(&nmat, &[], vec![false; n]).unwrap();
            assert_eq!(kkt.predicted_factor_nnz(), stored);
            let flops = (n * (n + 1) * (2 * n + 1) / 6) as f64;
            assert!(
                (kkt.factor_flops() - flops).abs() <= 1e-9 * flops,
                "n = {n}: {} vs {flops}",
                kkt.factor_flops()
            );
            let lower = (n * (n + 1) / 2) as u64;
            assert_eq!(assembly_bytes(&nmat, 0), 64 * lower + 112 * n as u64);
            // the factor's values are at least 8 bytes per entry of L, and nothing is
            // allocated before `allocate_numeric`
            let (factor, rest) = kkt.predicted_bytes();
            assert!(factor >= 8 * lower, "{factor}");
            assert!(rest >= 24 * lower, "{rest}");
            assert_eq!(kkt.factor_nnz(), 0);
        }
        // a diagonal N with one 3x3 block: L has the block's 6 entries and 1 per other
        // column; flops 3^2 + 2^2 + 1 + (n - 3)
        let n = 7;
        let mut v = vec![0.0; n * n];
        for i in 0..n {
            v[i * n + i] = 2.0;
        }
        let nmat = CscMatrix::from_dense_col_major(n, n, &v).unwrap();
        let mut kkt = Kkt::new(&nmat, &[2], vec![false; n]).unwrap();
        assert_eq!(kkt.predicted_factor_nnz(), 6 + (n - 3));
        assert_eq!(kkt.factor_flops(), (9 + 4 + 1 + (n - 3)) as f64);
        // N's diagonal (7) and the block's 6 entries (an upper estimate: the block's
        // diagonal is counted twice)
        assert_eq!(assembly_bytes(&nmat, 1), 64 * (7 + 6) + 112 * 7);
        kkt.allocate_numeric();
        assert_eq!(kkt.factor_nnz(), kkt.predicted_factor_nnz());
    }
}

/// Jordan algebra, Nesterov-Todd scaling and step to the boundary ([`cpbench_solvers::ipm::cone`]).
mod cone {
    use cpbench_solvers::ipm::cone::{
        jdiv, jprod, jsquare, nonneg_max_step, soc_max_step, SocScaling,
    };

    fn close(a: &[f64; 3], b: &[f64; 3], tol: f64) -> bool {
        a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
    }

    #[test]
    fn nt_scaling_maps_z_and_s_to_the_same_point() {
        let s = [2.0, 0.5, -1.2];
        let z = [1.5, -0.3, 0.9];
        let w = SocScaling::new(&s, &z).unwrap();
        let l1 = w.apply(&z);
        let l2 = w.apply_inv(&s);
        assert!(close(&l1, &l2, 1e-14), "{l1:?} {l2:?}");
        // W W^-1 = I.
        let v = [0.3, -0.7, 2.0];
        assert!(close(&w.apply(&w.apply_inv(&v)), &v, 1e-14));
        // W^-2 s = W^-2 W^2 z = ... : W^-2 applied to W^2 z gives z.
        let m = w.inv_squared();
        let w2z = w.apply(&w.apply(&z));
        let back: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| m[i][j] * w2z[j]).sum());
        assert!(close(&back, &z, 1e-13));
    }

    #[test]
    fn jordan_division_inverts_the_product() {
        let l = [3.0, 1.0, -2.0];
        let v = [0.4, 2.0, -1.0];
        let r = jprod(&l, &v);
        assert!(close(&jdiv(&l, &r), &v, 1e-14));
        assert!(close(&jsquare(&l), &jprod(&l, &l), 1e-15));
    }

    #[test]
    fn step_to_boundary_lands_on_the_cone() {
        let y = [2.0, 0.5, 0.5];
        let dy = [-1.0, 1.0, 0.0];
        let a = soc_max_step(&y, &dy);
        let p = [y[0] + a * dy[0], y[1] + a * dy[1], y[2] + a * dy[2]];
        assert!((p[0] - (p[1] * p[1] + p[2] * p[2]).sqrt()).abs() < 1e-14);
        assert!(p[0] > 0.0);
        assert_eq!(soc_max_step(&y, &[1.0, 0.5, 0.0]), f64::INFINITY);
        // Through the apex: y = (1, 0, 0), dy = (-1, 0, 0) reaches 0 at alpha = 1.
        assert!((soc_max_step(&[1.0, 0.0, 0.0], &[-1.0, 0.0, 0.0]) - 1.0).abs() < 1e-15);
        // Along the axis with numbers whose discriminant rounds to -8.7e-19 (b^2 - a c in
        // floating point): the step still stops at the apex, -y0 / dy0 (was +inf: a full step
        // left the cone, ipm's stalls on resting columns)
        let (y0, d0) = (0.09683195484885515, -0.6728580821563749);
        assert!((soc_max_step(&[y0, 0.0, 0.0], &[d0, 0.0, 0.0]) - (-y0 / d0)).abs() < 1e-15);
        assert_eq!(nonneg_max_step(2.0, -4.0), 0.5);
    }
}

/// `ipm` with `linear_solver = pcg`, preconditioner `pc`, at `tol` (residual: the default).
fn ipm_pcg_with(inst: &Instance, pc: &str, tol: f64) -> SolveResult {
    let settings = serde_json::json!({"linear_solver": "pcg", "pcg_preconditioner": pc});
    ipm_settings(inst, settings, tol)
}

/// fclib's Spheres-i099 (356 contacts, n = 1068) as a CCP, every fifth contact made
/// frictionless when `frictionless` (its tangents are then fixed variables of the interior
/// point, which the block preconditioners drop from their off-diagonal blocks).
fn spheres_ccp(frictionless: bool) -> Instance {
    let c = crate::support::coulomb_file(crate::support::SPHERES);
    let c = if frictionless {
        let mu: Vec<f64> = c
            .constraints()
            .friction()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, &m)| if i % 5 == 0 { 0.0 } else { m })
            .collect();
        Instance::new_coulomb(
            "spheres-mu0",
            c.n_mat().clone(),
            c.r().to_vec(),
            mu,
            Default::default(),
            Default::default(),
        )
        .unwrap()
    } else {
        c
    };
    c.ccp_relaxation().unwrap()
}

/// The block preconditioners of `pcg` (`block-sgs`, `block-ic0`) give Cholesky's answer to
/// 1e-8 on Spheres-i099 (CSC storage, converted to 3x3 blocks at init; the block storage;
/// frictionless contacts with fixed tangents), and block IC(0) needs fewer CG iterations than
/// block Jacobi. Measured at 1e-10 (release build): Cholesky 20 iterations; CG iterations
/// block-jacobi / block-sgs / block-ic0 15203 / 13415 / 7478 on CSC, 13955 / 12450 / 8254 on
/// the block storage; distances to Cholesky 2.4e-10 / 3.9e-11 / 7.3e-12.
#[test]
fn pcg_block_preconditioners_agree_with_cholesky() {
    use cpbench_problems::OperatorKind;
    for frictionless in [false, true] {
        let ccp = spheres_ccp(frictionless);
        let chol = ipm(&ccp, 1e-10);
        assert_eq!(chol.status, Status::Converged, "{:?}", chol.message);
        for op in [OperatorKind::Csc, OperatorKind::Block] {
            let inst = ccp.clone().with_operator(op).unwrap();
            let cg = |pc: &str| {
                let r = ipm_pcg_with(&inst, pc, 1e-10);
                let what = format!("{pc} on {op:?} (frictionless {frictionless})");
                assert_eq!(r.status, Status::Converged, "{what}: {:?}", r.message);
                assert_eq!(r.message, None, "{what}");
                let d = cpbench_test_support::max_abs_diff(&r.gamma, &chol.gamma);
                assert!(d <= 1e-8, "{what}: {d:e} from Cholesky's answer");
                if pc == "block-ic0" {
                    assert_eq!(counter(&r, "pc_ic_fallbacks"), 0.0, "{what}");
                }
                counter(&r, "cg_iterations")
            };
            let (bj, sgs, ic0) = (cg("block-jacobi"), cg("block-sgs"), cg("block-ic0"));
            assert!(sgs > 0.0, "{sgs}");
            assert!(
                ic0 <= 0.7 * bj,
                "{op:?}: IC(0) {ic0} vs block Jacobi {bj} CG iterations"
            );
        }
    }
}

/// Without Coulomb cones (an LCP) the block preconditioners fall back to block Jacobi and
/// say so in the message; the answer is the same.
#[test]
fn pcg_block_preconditioner_falls_back_without_cones() {
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-1.0, 1.0]);
    for pc in ["block-sgs", "block-ic0"] {
        let res = ipm_pcg_with(&inst, pc, 1e-10);
        assert_eq!(res.status, Status::Converged, "{:?}", res.message);
        assert_close(&res.gamma, &[0.5, 0.0], 1e-9);
        let msg = res.message.unwrap();
        assert!(
            msg.starts_with(&format!(
                "pcg_preconditioner = {pc}: needs 3x3 contact blocks"
            )) && msg.ends_with("block-jacobi used"),
            "{msg}"
        );
    }
    // unknown names are refused
    let bad = serde_json::json!({"linear_solver": "pcg", "pcg_preconditioner": "ilu"});
    assert!(build("ipm", Some(&bad)).is_err());
}

/// `block-ic0` is the default of `pcg`; under a memory limit its storage (predicted before
/// allocating) would pass, `pcg` uses block Jacobi (`O(n)`) and says so, with the same answer.
#[test]
fn pcg_ic0_is_the_default_and_gives_way_to_block_jacobi_under_a_memory_limit() {
    let inst = spheres_ccp(false);
    let run = |settings: serde_json::Value, limit: Option<u64>| {
        let mut b = build("ipm", Some(&settings)).unwrap();
        let ex = Executor::new(ExecSettings {
            tol: 1e-8,
            max_iter: 100,
            max_memory_bytes: limit,
            ..Default::default()
        });
        let r = ex.run(b.solver.as_mut(), &inst, None, &mut []).unwrap();
        assert_eq!(r.status, Status::Converged, "{:?}", r.message);
        r
    };
    let ic0 = run(serde_json::json!({"linear_solver": "pcg"}), None);
    assert_eq!(counter(&ic0, "pc_ic_fallbacks"), 0.0);
    assert_eq!(ic0.message, None);
    let bj = run(
        serde_json::json!({"linear_solver": "pcg", "pcg_preconditioner": "block-jacobi"}),
        None,
    );
    let (m_ic0, m_bj) = (
        counter(&ic0, "predicted_bytes") as u64,
        counter(&bj, "predicted_bytes") as u64,
    );
    // Spheres-i099 (CSC): the block copy of N and the factor's copies on top of the O(n)
    // iterates and scratch (measured 533,916 vs 385,548 bytes)
    assert!(m_ic0 > m_bj + 100_000, "{m_ic0} vs {m_bj}");
    let limited = run(serde_json::json!({"linear_solver": "pcg"}), Some(m_ic0 - 1));
    let msg = limited.message.clone().unwrap();
    assert!(
        msg.starts_with("pcg_preconditioner = block-ic0: predicted memory")
            && msg.contains(&format!("({m_ic0} bytes) > memory limit"))
            && msg.ends_with("block-jacobi used"),
        "{msg}"
    );
    assert_eq!(counter(&limited, "predicted_bytes") as u64, m_bj);
    assert_eq!(
        counter(&limited, "cg_iterations"),
        counter(&bj, "cg_iterations")
    );
    assert_eq!(limited.gamma, bj.gamma);
    let d = cpbench_test_support::max_abs_diff(&ic0.gamma, &bj.gamma);
    assert!(d <= 1e-6, "{d:e}");
}
