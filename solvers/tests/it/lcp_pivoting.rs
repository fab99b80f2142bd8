//! The pivoting LCP solvers (`lemke`, `enum`) on Siconos' LCP files, Murty's and Fathi's
//! exponential examples, a random P-matrix LCP, an infeasible LCP and a larger sparse one.
//!
//! Siconos numbers are those of Siconos 4.4 (Debian python3-siconos) measured with
//! `scripts/peer_siconos.py --lcp --tol 1e-12` on the same files: Siconos' `lcp_lexicolemke`
//! reports the pivots after the first (z0-entering) one, so its count is ours minus one.

use cpbench_problems::generators::murty::{fathi, murty};
use cpbench_problems::io::{load, LoadOptions};
use cpbench_problems::{ConstraintSet, CscMatrix, Instance, Provenance, ValidationOptions};
use cpbench_solvers::enumerative::{EnumSettings, Enumerative};
use cpbench_solvers::lemke::{Lemke, LemkeSettings, LinearAlgebra};
use cpbench_solvers::{ExecSettings, Executor, SolveResult, Solver, Status};
use cpbench_test_support::{fixture, TestRng};

fn exec() -> Executor {
    Executor::new(ExecSettings {
        tol: 1e-14,
        max_iter: 1_000_000,
        stall_window: None,
        ..Default::default()
    })
}

fn run(solver: &mut dyn Solver, inst: &Instance) -> SolveResult {
    exec().run(solver, inst, None, &mut []).unwrap()
}

fn lemke() -> Lemke {
    Lemke::new(LemkeSettings::default()).unwrap()
}

fn enumerative() -> Enumerative {
    Enumerative::new(EnumSettings::default()).unwrap()
}

fn pivots(res: &SolveResult) -> u64 {
    res.counters.iter().find(|(k, _)| k == "pivots").unwrap().1 as u64
}

fn lcp_file(stem: &str) -> Instance {
    load(
        &fixture(&format!("lcp/{stem}.dat")),
        &LoadOptions::default(),
    )
    .unwrap()
}

fn general(n: usize, cols: &[f64], q: Vec<f64>) -> Instance {
    let m = CscMatrix::from_dense_col_major(n, n, cols).unwrap();
    let (p, o) = (Provenance::default(), ValidationOptions::default());
    Instance::new("t", m, q, ConstraintSet::NonNegative, p, o).unwrap()
}

/// `(file, Siconos Lemke iterations)` of every fixture LCP that has a solution.
const SOLVABLE: [(&str, u64); 13] = [
    ("lcp_CPS_1", 1),
    ("lcp_CPS_2", 4),
    ("lcp_CPS_4", 4),
    ("lcp_CPS_4bis", 5),
    ("lcp_CPS_5", 1),
    ("lcp_Pang_isolated_sol", 2),
    ("lcp_deudeu", 2),
    ("lcp_deudeu_block", 2),
    ("lcp_inf_sol_perturbed", 4),
    ("lcp_mmc", 22),
    ("lcp_tobenna", 126),
    ("lcp_trivial", 9),
    ("lcp_trivial_block", 9),
];

#[test]
fn lemke_and_enum_solve_every_solvable_fixture() {
    for (stem, siconos) in SOLVABLE {
        let inst = lcp_file(stem);
        let res = run(&mut lemke(), &inst);
        assert_eq!(
            res.status,
            Status::Converged,
            "lemke on {stem}: {:?}",
            res.message
        );
        assert!(
            res.residuals.fc3d_error <= 1e-10,
            "lemke on {stem}: LCP error {:e}",
            res.residuals.fc3d_error
        );
        // Siconos counts the pivots after the first; on lcp_CPS_4bis the last ratio test ties
        // z0 with z3 (a degenerate solution, z3 = 0 basic): we let z0 leave at once (CPS 4.4),
        // Siconos' lexicographic rule lets z3 leave first and needs one pivot more
        let want = if stem == "lcp_CPS_4bis" {
            5
        } else {
            siconos + 1
        };
        assert_eq!(pivots(&res), want, "lemke pivots on {stem}");
        if inst.n() <= 20 {
            let e = run(&mut enumerative(), &inst);
            assert_eq!(
                e.status,
                Status::Converged,
                "enum on {stem}: {:?}",
                e.message
            );
            assert!(e.residuals.fc3d_error <= 1e-10, "enum on {stem}");
        }
    }
}

#[test]
fn textbook_answers() {
    // CPS Example 4.4.7: M = [[0, -1, 2], [2, 0, -2], [-1, 1, 0]], q = (-3, 6, -1):
    // z = (0, 1, 3), w = (2, 0, 0)
    let inst = lcp_file("lcp_CPS_2");
    for res in [run(&mut lemke(), &inst), run(&mut enumerative(), &inst)] {
        assert_eq!(res.gamma, vec![0.0, 1.0, 3.0]);
    }
    // CPS Remark 4.1.14: M = [[1, 1], [1, 1]], q = -e: every z >= 0 with z1 + z2 = 1
    let inst = lcp_file("lcp_CPS_1");
    let z = run(&mut lemke(), &inst).gamma;
    assert!((z[0] + z[1] - 1.0).abs() < 1e-15 && z[0] >= 0.0 && z[1] >= 0.0);
    let mut e = enumerative();
    let res = run(&mut e, &inst);
    assert_eq!(e.solutions(), &[vec![1.0, 0.0], vec![0.0, 1.0]]);
    assert_eq!(res.message.as_deref(), Some("2 solutions: [1, 0], [0, 1]"));
    // [[2, 1], [1, 2]], q = (-5, -6): z = (4/3, 7/3)
    let z = run(&mut lemke(), &lcp_file("lcp_deudeu")).gamma;
    assert!((z[0] - 4.0 / 3.0).abs() < 1e-15 && (z[1] - 7.0 / 3.0).abs() < 1e-15);
}

#[test]
fn ray_termination_where_siconos_fails_too() {
    // CPS Example 4.4.23 (a bimatrix game, q = -e): Scheme I with d = e ends on a ray after
    // the first pivot (Siconos: info 1 after 1 iteration) although enum finds a solution
    let inst = lcp_file("lcp_CPS_3");
    let res = run(&mut lemke(), &inst);
    assert_eq!(res.status, Status::RayTermination);
    assert_eq!(pivots(&res), 1);
    assert_eq!(
        res.message.as_deref(),
        Some("secondary ray after 1 pivots: no blocking variable for entering z4 (dense)")
    );
    assert_eq!(run(&mut enumerative(), &inst).status, Status::Converged);
    // Pang's isolated solution perturbed: no solution at all (Siconos: Lemke info 1 after 4
    // iterations, ENUM info 1)
    let inst = lcp_file("lcp_Pang_isolated_sol_perturbed");
    let res = run(&mut lemke(), &inst);
    assert_eq!(res.status, Status::RayTermination);
    assert_eq!(pivots(&res), 4);
    let e = run(&mut enumerative(), &inst);
    assert_eq!(e.status, Status::Stalled);
    let msg = e.message.unwrap();
    assert!(msg.starts_with("no solution among the 2^n = 8"), "{msg}");
    // M = [[-1]], q = [-1]: w = -z - 1 < 0 for every z >= 0
    let inst = general(1, &[-1.0], vec![-1.0]);
    let res = run(&mut lemke(), &inst);
    assert_eq!(res.status, Status::RayTermination);
    assert_eq!(Status::RayTermination.as_str(), "ray_termination");
}

#[test]
fn enum_lists_all_three_solutions() {
    // M = [[1, 2], [2, 1]], q = -e: z = (1, 0), (0, 1) and (1/3, 1/3)
    let inst = general(2, &[1.0, 2.0, 2.0, 1.0], vec![-1.0, -1.0]);
    let mut e = enumerative();
    let res = run(&mut e, &inst);
    assert_eq!(res.status, Status::Converged);
    assert_eq!(res.gamma, vec![1.0, 0.0]);
    let s = e.solutions();
    assert_eq!(s.len(), 3);
    assert_eq!(
        (s[0].clone(), s[1].clone()),
        (vec![1.0, 0.0], vec![0.0, 1.0])
    );
    assert!(s[2].iter().all(|v| (v - 1.0 / 3.0).abs() < 1e-15));
    let msg = res.message.unwrap();
    assert!(
        msg.starts_with("3 solutions: [1, 0], [0, 1], [0.333333333333333"),
        "{msg}"
    );
    // n > 20 is refused with the reason
    let big = general(21, &vec![0.0; 441], vec![1.0; 21]);
    let res = run(&mut enumerative(), &big);
    assert_eq!(res.status, Status::Unsupported);
    let msg = res.message.unwrap();
    assert!(msg.contains("n <= 20; this LCP has n = 21"), "{msg}");
}

#[test]
fn murty_and_fathi_take_two_to_the_n_pivots() {
    for n in 2..=10 {
        for (inst, name) in [(murty(n).unwrap(), "murty"), (fathi(n).unwrap(), "fathi")] {
            let res = run(&mut lemke(), &inst);
            assert_eq!(res.status, Status::Converged, "{name} n = {n}");
            assert_eq!(pivots(&res), 1 << n, "{name} n = {n}");
            let mut e1 = vec![0.0; n];
            e1[0] = 1.0;
            assert_eq!(res.gamma, e1, "{name} n = {n}");
        }
    }
    // the sparse back end visits the same bases
    let s = LemkeSettings {
        linear_algebra: LinearAlgebra::Sparse,
        refactor_every: 7,
        ..Default::default()
    };
    let res = run(&mut Lemke::new(s).unwrap(), &fathi(9).unwrap());
    assert_eq!(pivots(&res), 512);
}

#[test]
fn lemke_agrees_with_enum_on_a_random_p_matrix() {
    // M = B^T B / n + 0.5 I + S, S skew-symmetric: positive definite, not symmetric, so a
    // P-matrix: one solution for every q
    let n = 10;
    let mut rng = TestRng::new(11);
    let b: Vec<f64> = (0..n * n).map(|_| rng.next()).collect();
    let s: Vec<f64> = (0..n * n).map(|_| rng.next()).collect();
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let btb: f64 = (0..n).map(|k| b[k * n + i] * b[k * n + j]).sum::<f64>() / n as f64;
            m[i + j * n] = btb
                + if i == j {
                    0.5
                } else {
                    s[i * n + j] - s[j * n + i]
                };
        }
    }
    let q: Vec<f64> = (0..n).map(|_| 3.0 * rng.next()).collect();
    let inst = general(n, &m, q);
    assert!(!inst.is_symmetric());
    let l = run(&mut lemke(), &inst);
    let e = run(&mut enumerative(), &inst);
    assert_eq!(l.status, Status::Converged);
    assert_eq!(e.status, Status::Converged);
    assert!(pivots(&l) >= 2);
    for (a, b) in l.gamma.iter().zip(&e.gamma) {
        assert!((a - b).abs() <= 1e-12, "{:?} vs {:?}", l.gamma, e.gamma);
    }
    assert!(l.gamma.iter().filter(|&&z| z > 0.0).count() >= 2);
}

#[test]
fn dense_and_sparse_back_ends_pivot_alike_on_a_sparse_lcp() {
    // n = 600, M pentadiagonal, non-symmetric, strictly diagonally dominant with a positive
    // diagonal (a P-matrix); q random
    let n = 600;
    let mut rng = TestRng::new(5);
    let mut t = Vec::new();
    for i in 0..n {
        t.push((i, i, 4.0 + rng.next().abs()));
        for d in [1usize, 2] {
            if i + d < n {
                t.push((i, i + d, 0.9 * rng.next()));
                t.push((i + d, i, 0.9 * rng.next()));
            }
        }
    }
    let m = CscMatrix::from_triplets(n, n, &t).unwrap();
    let q: Vec<f64> = (0..n).map(|_| rng.next()).collect();
    let (p, o) = (Provenance::default(), ValidationOptions::default());
    let inst = Instance::new("penta", m, q, ConstraintSet::NonNegative, p, o).unwrap();
    let mut out = Vec::new();
    for la in [LinearAlgebra::Dense, LinearAlgebra::Sparse] {
        let s = LemkeSettings {
            linear_algebra: la,
            ..Default::default()
        };
        let mut l = Lemke::new(s).unwrap();
        let res = run(&mut l, &inst);
        assert_eq!(l.is_dense(), la == LinearAlgebra::Dense);
        assert_eq!(res.status, Status::Converged, "{la:?}");
        assert!(res.residuals.fc3d_error <= 1e-12, "{la:?}");
        out.push(res);
    }
    assert_eq!(pivots(&out[0]), pivots(&out[1]));
    assert!(pivots(&out[0]) > 200, "{}", pivots(&out[0]));
    for (a, b) in out[0].gamma.iter().zip(&out[1].gamma) {
        assert!((a - b).abs() <= 1e-12);
    }
    // auto picks sparse above dense_max_n for this sparse matrix
    let mut l = lemke();
    run(&mut l, &inst);
    assert!(!l.is_dense());
}

#[test]
fn qp_solvers_refuse_general_lcps() {
    use cpbench_solvers::kernels::refusal;
    use cpbench_solvers::registry::build;
    let inst = lcp_file("lcp_CPS_2");
    for name in ["pgs", "apgd", "ipm"] {
        let b = build(name, None).unwrap();
        let why = refusal(b.solver.as_ref(), &inst).expect("refused");
        assert!(why.contains("not symmetric"), "{why}");
    }
    for name in ["lemke", "enum"] {
        let b = build(name, None).unwrap();
        assert_eq!(refusal(b.solver.as_ref(), &inst), None);
    }
}
