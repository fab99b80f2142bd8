//! Solvers on bilateral (joint) blocks (issue 33 item 4; docs/formulation.md, "Bilateral
//! rows"): the hand-built instance of `cpbench_test_support::hand_jointed` (answers derived in
//! `problems/tests/it/joints.rs`), a random jointed instance against the reduced problem of
//! its Schur complement solved by the same solvers without joints, and the refusals.

use cpbench_problems::{ConstraintSet, CscMatrix, Instance, Provenance, ValidationOptions};
use cpbench_solvers::Status;
use cpbench_test_support::{
    assert_converged, hand_jointed, max_abs_diff, random_psd, solve, TestRng,
};
use nalgebra::{DMatrix, DVector};

/// The solvers that take joints on the CCP.
const CCP_SOLVERS: [&str; 8] = [
    "pgs", "jacobi", "apgd", "spgqp", "bb", "mpgp", "admm", "ipm",
];
/// The solvers that take joints on the Coulomb problem.
const COULOMB_SOLVERS: [&str; 2] = ["nsgs", "admm"];

/// `(-1.8, 0.4, 0 | 1.6, -0.8, 0)`: the CCP answer (derivation in `problems/tests/it/joints.rs`).
const CCP: [f64; 6] = [-1.8, 0.4, 0.0, 1.6, -0.8, 0.0];
/// `(-5/3, 1/3, 0 | 4/3, -2/3, 0)`: the Coulomb answer (sliding, `u_n = 0`).
const COULOMB: [f64; 6] = [-5.0 / 3.0, 1.0 / 3.0, 0.0, 4.0 / 3.0, -2.0 / 3.0, 0.0];

/// Each of `solvers` solves `inst` to `tol` (converged) and its answer is within `within` of
/// `want` (max norm).
fn agree(inst: &Instance, solvers: &[&str], tol: f64, want: &[f64], within: f64) {
    for s in solvers {
        let res = solve(s, inst, tol, 500_000);
        assert_converged(s, &res);
        let d = max_abs_diff(&res.gamma, want);
        assert!(
            d < within,
            "{s} on {}: {:?} ({d:.2e})",
            inst.name(),
            res.gamma
        );
    }
}

#[test]
fn every_joint_solver_finds_the_hand_answers() {
    agree(&hand_jointed(false), &CCP_SOLVERS, 1e-12, &CCP, 1e-9);
    agree(&hand_jointed(true), &COULOMB_SOLVERS, 1e-12, &COULOMB, 1e-9);
}

#[test]
fn gauss_seidel_solves_a_lone_joint_exactly_in_one_sweep() {
    // one joint block alone: N = 2 I, r = (2, -4, 1): the exact local solve gives
    // gamma = -r / 2 = (-1, 2, -0.5) in the first sweep (the residual then is rounding)
    let vals = [2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0];
    let inst = cpbench_test_support::dense(
        3,
        &vals,
        vec![2.0, -4.0, 1.0],
        ConstraintSet::coulomb_jointed(vec![0.0], 3, 1),
    );
    for s in ["pgs", "nsgs"] {
        let inst = if s == "nsgs" {
            inst.clone().into_coulomb().unwrap()
        } else {
            inst.clone()
        };
        let res = solve(s, &inst, 1e-14, 10);
        assert_eq!(res.iterations, 1, "{s}");
        assert_eq!(res.gamma, vec![-1.0, 2.0, -0.5], "{s}");
    }
}

/// A random jointed instance: `nj` joint blocks then `nc` cone blocks (`mu` in
/// `[0.2, 0.8]`), `N = B^T B + 0.5 I` positive definite, `r` uniform in `[-1, 1)`.
fn random_jointed(nj: usize, nc: usize, seed: u64) -> Instance {
    let n = 3 * (nj + nc);
    let mut rng = TestRng::new(seed);
    let vals = random_psd(n, n, 0.5, &mut rng);
    let r: Vec<f64> = (0..n).map(|_| rng.next()).collect();
    let mut mu = vec![0.0; nj];
    mu.extend((0..nc).map(|_| 0.5 + 0.3 * rng.next()));
    let m = CscMatrix::from_dense_col_major(n, n, &vals).unwrap();
    let k = ConstraintSet::coulomb_jointed(mu, 3, nj);
    let (p, o) = (Provenance::default(), ValidationOptions::default());
    Instance::new("random__ccp", m, r, k, p, o).unwrap()
}

/// The Schur complement of the joint rows of `inst` (the first `j = 3 joints` unknowns):
/// the reduced instance `(N_11 - N_10 N_00^-1 N_01, r_1 - N_10 N_00^-1 r_0)` on the cones
/// alone, of `inst`'s class, and the map back `x_1 -> x = (-N_00^-1 (r_0 + N_01 x_1), x_1)`.
fn schur(inst: &Instance) -> (Instance, impl Fn(&[f64]) -> Vec<f64>) {
    let n = inst.n();
    let j = 3 * inst.constraints().joints();
    let a = DMatrix::from_fn(n, n, |i, k| inst.n_mat().get(i, k));
    let r = DVector::from_column_slice(inst.r());
    let inv00 = a.view((0, 0), (j, j)).into_owned().try_inverse().unwrap();
    let a01 = a.view((0, j), (j, n - j)).into_owned();
    let a10 = a.view((j, 0), (n - j, j)).into_owned();
    let a11 = a.view((j, j), (n - j, n - j)).into_owned();
    let (r0, r1) = (r.rows(0, j).into_owned(), r.rows(j, n - j).into_owned());
    let red = &a11 - &a10 * &inv00 * &a01;
    let red = (&red + red.transpose()) * 0.5; // symmetric to rounding
    let rr = &r1 - &a10 * &inv00 * &r0;
    let mu = inst.constraints().friction().unwrap()[j / 3..].to_vec();
    let m = CscMatrix::from_dense_col_major(n - j, n - j, red.as_slice()).unwrap();
    let (p, o) = (Provenance::default(), ValidationOptions::default());
    let reduced = Instance::new(
        "reduced__ccp",
        m,
        rr.as_slice().to_vec(),
        ConstraintSet::coulomb(mu),
        p,
        o,
    )
    .unwrap();
    let reduced = if inst.class() == cpbench_problems::ProblemClass::Coulomb {
        reduced.into_coulomb().unwrap()
    } else {
        reduced
    };
    let back = move |x1: &[f64]| {
        let x1 = DVector::from_column_slice(x1);
        let x0 = -(&inv00 * (&r0 + &a01 * &x1));
        x0.iter().chain(x1.iter()).copied().collect()
    };
    (reduced, back)
}

#[test]
fn jointed_answers_agree_with_the_schur_complement_to_1e_8() {
    let inst = random_jointed(2, 5, 33);
    let (reduced, back) = schur(&inst);
    // the reference: the reduced CCP (no joints) by apgd, mapped back
    let red = solve("apgd", &reduced, 1e-13, 200_000);
    assert_converged("apgd on the reduced CCP", &red);
    let want = back(&red.gamma);
    assert!(want[..6].iter().any(|v| v.abs() > 0.1), "{want:?}");
    // 1e-10: spgqp's stall window ends it near 2.5e-11 on this instance
    agree(&inst, &CCP_SOLVERS, 1e-10, &want, 1e-8);
    // the Coulomb problem: the reduced one by nsgs, the jointed one by nsgs and admm
    let inst = inst.into_coulomb().unwrap();
    let (reduced, back) = schur(&inst);
    let red = solve("nsgs", &reduced, 1e-13, 200_000);
    assert_converged("nsgs on the reduced Coulomb problem", &red);
    let want = back(&red.gamma);
    agree(&inst, &COULOMB_SOLVERS, 1e-10, &want, 1e-8);
}

#[test]
fn the_other_solvers_refuse_joints_with_the_reason() {
    let ccp = hand_jointed(false);
    let coulomb = hand_jointed(true);
    for (s, inst) in [
        ("clarabel", &ccp),
        ("nsn-ac", &coulomb),
        ("vi-fpp", &coulomb),
        ("nsgs-admm", &coulomb),
        ("dsfp", &coulomb),
    ] {
        let res = solve(s, inst, 1e-8, 100);
        assert_eq!(res.status, Status::Unsupported, "{s}");
        let msg = res.message.unwrap_or_default();
        assert!(
            msg.contains("does not take bilateral (joint) rows") && msg.contains("use pgs"),
            "{s}: {msg}"
        );
    }
}
