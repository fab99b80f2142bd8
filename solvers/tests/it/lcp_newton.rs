//! The general-LCP solvers `newton-fb` (semismooth Newton on the Fischer-Burmeister function)
//! and `psor`: Siconos' LCP files, the random families with known solutions, quadratic local
//! convergence, PSOR = PGS on a symmetric LCP, and PSOR's refusal of a zero diagonal.
//!
//! Siconos numbers quoted below were measured with Debian's python3-siconos 4.4
//! (`linearComplementarity_newFromFilename` + `linearComplementarity_driver`,
//! `SICONOS_LCP_NEWTON_FB_FBLSA` with tolerance 1e-10 and 1000 iterations,
//! `SICONOS_LCP_PSOR` with tolerance 1e-10 and 1e5 iterations; LCP error
//! `||z - max(0, z - w)|| / ||q||`).

use crate::support::traced;
use cpbench_problems::generators::lcp::{random_lcp, LcpFamily};
use cpbench_problems::io::{load, LoadOptions};
use cpbench_problems::{ConstraintSet, Instance};
use cpbench_solvers::{ExecSettings, SolveResult, Status, TraceRecorder};
use cpbench_test_support::{counter, dense, fixture, max_abs_diff, random_psd, TestRng};

fn exec(tol: f64, max_iter: u64) -> ExecSettings {
    ExecSettings {
        tol,
        max_iter,
        stall_window: None,
        ..Default::default()
    }
}

fn run(name: &str, inst: &Instance, ex: ExecSettings) -> (SolveResult, TraceRecorder) {
    traced(name, None, inst, None, ex)
}

fn lcp_file(name: &str) -> Instance {
    load(
        &fixture(&format!("lcp/{name}.dat")),
        &LoadOptions::default(),
    )
    .unwrap()
}

#[test]
fn newton_fb_solves_the_siconos_lcp_files() {
    // (file, Newton iterations we take, Siconos' Newton-FB iterations at tol 1e-10)
    let solved = [
        ("lcp_CPS_1", 5, 5),
        ("lcp_CPS_2", 9, 9),
        ("lcp_CPS_3", 5, 5),
        ("lcp_Pang_isolated_sol", 1, 1),
        ("lcp_deudeu", 5, 5),
        ("lcp_mmc", 8, 8),
        ("lcp_trivial", 5, 5),
    ];
    for (file, iters, _siconos) in solved {
        let inst = lcp_file(file);
        let (res, _) = run("newton-fb", &inst, exec(1e-10, 1000));
        assert_eq!(res.status, Status::Converged, "{file}: {:?}", res.residuals);
        assert!(res.residuals.fc3d_error <= 1e-10, "{file}");
        assert_eq!(res.iterations, iters, "{file}");
    }
}

#[test]
fn newton_fb_stalls_on_tobenna_like_siconos() {
    // lcp_tobenna (n = 40, non-symmetric, indefinite): Siconos 4.4's Newton-FB (FBLSA) stops
    // after its 1000 iterations at LCP error 4.47e-1 (info 1); ours ends short of the
    // tolerance as well.
    let inst = lcp_file("lcp_tobenna");
    let (res, _) = run("newton-fb", &inst, exec(1e-10, 1000));
    assert_ne!(res.status, Status::Converged);
    assert!(res.residuals.fc3d_error > 1e-3, "{:?}", res.residuals);
}

#[test]
fn both_solvers_find_the_known_solution_of_the_p_and_psd_families() {
    for family in [LcpFamily::PMatrix, LcpFamily::Psd] {
        for (n, density) in [(100, 0.1), (1000, 0.01)] {
            let g = random_lcp(family, n, density, 11).unwrap();
            let z = g.solution.as_ref().unwrap();
            let (res, _) = run("newton-fb", &g.instance, exec(1e-10, 200));
            assert_eq!(res.status, Status::Converged, "newton {family} {n}");
            assert!(res.residuals.fc3d_error <= 1e-10);
            let dz = max_abs_diff(&res.gamma, z);
            assert!(dz < 1e-9, "newton {family} {n}: |z - z*| = {dz:e}");
            assert!(counter(&res, "factorisations") >= res.iterations as f64);
            // omega = 1 diverges on the psd family (its skew part is as large as its
            // symmetric part, so M is no H-matrix); omega = 0.5 makes the symmetric part of
            // the splitting's B - C = (2/omega - 1) D + L - U positive definite here
            let omega = match family {
                LcpFamily::Psd => 0.5,
                _ => 1.0,
            };
            let settings = serde_json::json!({ "omega": omega });
            let (res, _) = traced(
                "psor",
                Some(&settings),
                &g.instance,
                None,
                exec(1e-8, 100_000),
            );
            assert_eq!(res.status, Status::Converged, "psor {family} {n}");
            assert!(res.residuals.fc3d_error <= 1e-8);
            let dz = max_abs_diff(&res.gamma, z);
            assert!(dz < 1e-6, "psor {family} {n}: |z - z*| = {dz:e}");
            // one sweep = one product
            assert_eq!(res.matvecs, res.iterations);
        }
    }
}

#[test]
fn newton_fb_converges_quadratically_near_the_solution() {
    let g = random_lcp(LcpFamily::PMatrix, 1000, 0.01, 5).unwrap();
    let (res, rec) = run("newton-fb", &g.instance, exec(1e-14, 100));
    assert_eq!(res.status, Status::Converged);
    let r: Vec<f64> = rec
        .records
        .iter()
        .map(|x| x.residuals.nat_map_abs_2)
        .collect();
    // measured (absolute natural map, ||q|| = 1.2e3): ... 8.1e-3, 1.5e-3, 2.0e-4, 2.6e-7,
    // 2.7e-13: from below 1e-3, r_{k+1} <= C r_k^2 with C = 6.4 and 4.0; the unit step is
    // accepted at the end. Steps from below 1e-10 are left out: the next residual is at the
    // rounding level (||q|| eps = 2.7e-13; measured 2.7e-13 -> 3.3e-14, the step the
    // executor takes because the iterate at 2.7e-13 is not yet feasible to 1e-14)
    let tail: Vec<(f64, f64)> = r
        .windows(2)
        .filter(|w| w[0] < 1e-3 && w[0] > 1e-10 && w[1] > 0.0)
        .map(|w| (w[0], w[1]))
        .collect();
    assert!(tail.len() >= 2, "{r:?}");
    for &(a, b) in &tail {
        assert!(b <= 10.0 * a * a, "r_k = {a:e}, r_k+1 = {b:e}; {r:?}");
    }
    let last = rec.records.last().unwrap();
    let step = last
        .info
        .items()
        .iter()
        .find(|(k, _)| *k == "step")
        .unwrap()
        .1;
    assert_eq!(step, 1.0);
}

#[test]
fn newton_fb_on_the_nonmonotone_family() {
    // n = 100, seed 2: from zero the iterates approach a stationary point of Psi that is no
    // solution (LCP error 4.6e-4; damped Newton steps that barely decrease Psi), and the solve
    // ends as stalled once Psi has not halved in stall_iterations = 100 iterations; from near
    // the known (nondegenerate, BD-regular) solution the Newton steps converge to it.
    let g = random_lcp(LcpFamily::Nonmonotone, 100, 0.1, 2).unwrap();
    let (res, _) = run("newton-fb", &g.instance, exec(1e-10, 20_000));
    assert_eq!(res.status, Status::Stalled, "{:?}", res.residuals);
    assert!(res.residuals.fc3d_error > 1e-4);
    assert!(res.iterations < 500, "{}", res.iterations);
    assert!(res.message.as_deref().unwrap().contains("stationary point"));
    eprintln!(
        "nonmonotone n=100 s2: {} iterations, {} gradient steps, {} halvings, error {:e}",
        res.iterations,
        counter(&res, "gradient_steps"),
        counter(&res, "line_search_steps"),
        res.residuals.fc3d_error
    );
    let z = g.solution.unwrap();
    let start: Vec<f64> = z
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if *v > 0.0 {
                v + 1e-3 * (i % 3) as f64
            } else {
                0.0
            }
        })
        .collect();
    let (res, _) = traced(
        "newton-fb",
        None,
        &g.instance,
        Some(&start),
        exec(1e-12, 50),
    );
    assert_eq!(res.status, Status::Converged);
    assert_eq!(counter(&res, "gradient_steps"), 0.0);
    assert!(max_abs_diff(&res.gamma, &z) < 1e-12);
}

#[test]
fn psor_with_omega_one_repeats_pgs_on_a_symmetric_lcp() {
    let mut rng = TestRng::new(3);
    let n = 30;
    let m = random_psd(n, n, 0.5, &mut rng);
    let r: Vec<f64> = (0..n).map(|_| rng.next() - 0.5).collect();
    let inst = dense(n, &m, r, ConstraintSet::NonNegative);
    let (a, ta) = run("psor", &inst, exec(1e-300, 40));
    let (b, tb) = run("pgs", &inst, exec(1e-300, 40));
    assert_eq!(a.iterations, 40);
    assert_eq!(a.gamma, b.gamma);
    assert_eq!(ta.records.len(), tb.records.len());
    for (x, y) in ta.records.iter().zip(&tb.records) {
        assert_eq!(x.residuals, y.residuals);
    }
}

#[test]
fn psor_refuses_a_zero_diagonal() {
    // M = [[0, 1], [-1, 1]] (skew plus a diagonal with a zero), q = (-1, 1)
    let inst = dense(
        2,
        &[0.0, -1.0, 1.0, 1.0],
        vec![-1.0, 1.0],
        ConstraintSet::NonNegative,
    );
    let (res, _) = run("psor", &inst, exec(1e-10, 100));
    assert_eq!(res.status, Status::Unsupported);
    let msg = res.message.unwrap();
    assert!(msg.contains("M[0][0] = 0e0 is not positive"), "{msg}");
    assert_eq!(res.iterations, 0);
    // Siconos' PSOR refuses lcp_CPS_2 too (info 2, zero diagonal)
    let cps2 = lcp_file("lcp_CPS_2");
    let (res, _) = run("psor", &cps2, exec(1e-10, 100));
    assert_eq!(res.status, Status::Unsupported);
    // newton-fb takes it: the unique solution is z = (2, 1), w = 0
    let (res, _) = run("newton-fb", &inst, exec(1e-12, 100));
    assert_eq!(res.status, Status::Converged);
    assert!(
        max_abs_diff(&res.gamma, &[2.0, 1.0]) < 1e-12,
        "{:?}",
        res.gamma
    );
}

/// `newton-fb`'s Fischer-Burmeister function and the pattern of its sparse Newton matrix.
mod parts {
    use cpbench_problems::CscMatrix;
    use cpbench_solvers::newton_fb::{fischer_burmeister, DiagonalPattern};

    #[test]
    fn fischer_burmeister_values() {
        assert_eq!(fischer_burmeister(0.0, 0.0), 0.0);
        assert_eq!(fischer_burmeister(0.0, 2.0), 0.0);
        assert_eq!(fischer_burmeister(3.0, 0.0), 0.0);
        // phi(3, 4) = 5 - 7 = -2, also by the cancellation-free form
        assert!((fischer_burmeister(3.0, 4.0) + 2.0).abs() < 1e-15);
        // phi(-1, 0) = 1 + 1 = 2
        assert_eq!(fischer_burmeister(-1.0, 0.0), 2.0);
        // tiny product: -2ab/(s + a + b) ~ -ab = -1e-20, where the naive form gives 0
        assert!((fischer_burmeister(1.0, 1e-20) + 1e-20).abs() < 1e-35);
    }

    #[test]
    fn sparse_pattern_holds_m_and_the_diagonal() {
        // M = [[0, 1, 0], [2, 0, 0], [0, 3, 4]]: diagonal entries 0 and 1 missing
        let m =
            CscMatrix::from_triplets(3, 3, &[(0, 1, 1.0), (1, 0, 2.0), (2, 1, 3.0), (2, 2, 4.0)])
                .unwrap();
        let lu = DiagonalPattern::of(&m);
        assert_eq!(lu.col_ptr, vec![0, 2, 5, 6]);
        assert_eq!(lu.row_idx, vec![0, 1, 0, 1, 2, 2]);
        assert_eq!(lu.diag_pos, vec![0, 3, 5]);
        assert_eq!(lu.m_pos, vec![1, 2, 4, 5]);
    }
}
