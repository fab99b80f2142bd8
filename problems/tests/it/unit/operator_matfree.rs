//! The tests of `cpbench_problems::operator::matfree` (until now its `#[cfg(test)]` module in
//! `problems/src/operator/matfree.rs`).

use cpbench_problems::error::ProblemError;
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::operator::*;
use cpbench_problems::rng::SplitMix64;

fn random_d(m: usize, n: usize, seed: u64) -> CscMatrix {
    let mut rng = SplitMix64::new(seed);
    let mut t = Vec::new();
    for j in 0..n {
        for _ in 0..4 {
            let k = (rng.next_f64() * m as f64) as usize % m;
            t.push((k, j, rng.next_f64() - 0.5));
        }
    }
    CscMatrix::from_triplets(m, n, &t).unwrap()
}

/// Found by fuzzing (issue 30): finite factors whose product overflows were accepted and
/// `N` panicked when formed.
#[test]
fn factors_whose_product_overflows_are_refused() {
    let d = CscMatrix::from_triplets(1, 1, &[(0, 0, 1e200)]).unwrap();
    let e = MatrixFree::with_diagonal_mass(d.clone(), &[1e-200]).unwrap_err();
    assert!(
        e.to_string()
            .contains("N = D^T M^-1 D (its entries may reach 1e600 from D and M_diag"),
        "{e}"
    );
    // large but in range: accepted, and N forms
    let op = MatrixFree::with_diagonal_mass(d, &[1e100]).unwrap();
    assert_eq!(op.to_csc().unwrap().col(0).1, &[1e300]);
}

/// Issue 30: a negative mass was called "non-finite".
#[test]
fn masses_that_are_not_positive_say_so() {
    let e = MatrixFree::with_diagonal_mass(random_d(3, 2, 1), &[1.0, -1.0, 1.0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "M (diagonal) at [1] is -1: expected a positive value"
    );
    let e = MatrixFree::with_diagonal_mass(random_d(3, 2, 1), &[1.0, 1.0, f64::NAN]).unwrap_err();
    assert_eq!(e.to_string(), "non-finite value NaN in M (diagonal) at [2]");
}

#[test]
fn product_rows_and_formed_matrix_agree() {
    let (m, n, bs) = (30, 24, 3);
    let d = random_d(m, n, 4);
    let mass: Vec<f64> = (0..m).map(|k| 1.0 + (k % 5) as f64).collect();
    let op = MatrixFree::with_diagonal_mass(d, &mass).unwrap();
    let nm = op.to_csc().unwrap();
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos()).collect();
    let (mut y0, mut y1) = (vec![0.0; n], vec![0.0; n]);
    nm.sym_matvec(&x, &mut y0);
    op.matvec(&x, &mut y1);
    for i in 0..n {
        assert!((y0[i] - y1[i]).abs() < 1e-13, "{i}");
    }
    // Gauss-Seidel access: rows with v, kept current through block_changed
    let mut v = vec![0.0; m];
    op.velocity_of(&x, &mut v);
    let mut out = [0.0; 3];
    let mut xx = x.clone();
    for c in 0..n / bs {
        op.block_row(c, bs, &v, &mut out);
        let mut exact = vec![0.0; n];
        nm.sym_matvec(&xx, &mut exact);
        for a in 0..bs {
            assert!((out[a] - exact[bs * c + a]).abs() < 1e-12);
        }
        let delta = [0.1, -0.2, 0.3];
        for a in 0..bs {
            xx[bs * c + a] += delta[a];
        }
        op.block_changed(c, bs, &delta, &mut v);
        let db = op.diag_block(c, bs);
        for a in 0..bs {
            for b in 0..bs {
                assert!((db[a * bs + b] - nm.get(bs * c + a, bs * c + b)).abs() < 1e-13);
            }
        }
    }
}

#[test]
fn bad_mass_is_refused() {
    let d = random_d(4, 3, 1);
    assert!(matches!(
        MatrixFree::with_diagonal_mass(d.clone(), &[1.0, 1.0]),
        Err(ProblemError::SizeMismatch { .. })
    ));
    assert!(matches!(
        MatrixFree::with_diagonal_mass(d, &[1.0, 0.0, 1.0, 1.0]),
        Err(ProblemError::NotPositive { .. })
    ));
}
