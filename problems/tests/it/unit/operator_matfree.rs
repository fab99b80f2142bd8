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

// ---- a general sparse M (global friction problems, issue 34 item 5) ----

/// Dense `M` (row-major `m x m`) of a sparse one.
fn dense_of(a: &CscMatrix) -> Vec<f64> {
    let n = a.nrows();
    let mut out = vec![0.0; n * a.ncols()];
    for j in 0..a.ncols() {
        let (rows, vals) = a.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            out[i * a.ncols() + j] = v;
        }
    }
    out
}

/// `M^-1 B` by a dense Cholesky written out here (the reference: independent of faer).
/// `m` row-major `k x k` SPD, `b` column-major `k x ncols`.
fn dense_solve(m: &[f64], k: usize, b: &[f64]) -> Vec<f64> {
    let mut l = vec![0.0; k * k];
    for j in 0..k {
        let mut s = m[j * k + j];
        for p in 0..j {
            s -= l[j * k + p] * l[j * k + p];
        }
        assert!(s > 0.0, "reference Cholesky: pivot {j}");
        l[j * k + j] = s.sqrt();
        for i in j + 1..k {
            let mut s = m[i * k + j];
            for p in 0..j {
                s -= l[i * k + p] * l[j * k + p];
            }
            l[i * k + j] = s / l[j * k + j];
        }
    }
    let mut x = b.to_vec();
    for col in x.chunks_mut(k) {
        for i in 0..k {
            let s: f64 = (0..i).map(|p| l[i * k + p] * col[p]).sum();
            col[i] = (col[i] - s) / l[i * k + i];
        }
        for i in (0..k).rev() {
            let s: f64 = (i + 1..k).map(|p| l[p * k + i] * col[p]).sum();
            col[i] = (col[i] - s) / l[i * k + i];
        }
    }
    x
}

/// The reference `W = D^T M^-1 D` (row-major `n x n`).
fn dense_w(d: &CscMatrix, m: &CscMatrix) -> Vec<f64> {
    let (k, n) = (d.nrows(), d.ncols());
    let mut dd = vec![0.0; k * n];
    for j in 0..n {
        let (rows, vals) = d.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            dd[i + j * k] = v;
        }
    }
    let y = dense_solve(&dense_of(m), k, &dd);
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            w[i * n + j] = (0..k).map(|r| dd[r + i * k] * y[r + j * k]).sum();
        }
    }
    w
}

/// A block-diagonal SPD `M` of `nb` blocks of `k` rows: `A A^T + k I` per block.
fn block_mass(nb: usize, k: usize, seed: u64) -> CscMatrix {
    let mut rng = SplitMix64::new(seed);
    let mut t = Vec::new();
    for b in 0..nb {
        let a: Vec<f64> = (0..k * k).map(|_| rng.next_f64() - 0.5).collect();
        for i in 0..k {
            for j in 0..k {
                let mut v: f64 = (0..k).map(|p| a[i * k + p] * a[j * k + p]).sum();
                if i == j {
                    v += k as f64;
                }
                t.push((b * k + i, b * k + j, v));
            }
        }
    }
    CscMatrix::from_triplets(nb * k, nb * k, &t).unwrap()
}

/// A tridiagonal SPD `M` (a chain: one block of `m` rows, so not block diagonal).
fn chain_mass(m: usize) -> CscMatrix {
    let mut t = Vec::new();
    for i in 0..m {
        t.push((i, i, 2.5 + 0.1 * (i % 3) as f64));
        if i + 1 < m {
            t.push((i, i + 1, -1.0));
            t.push((i + 1, i, -1.0));
        }
    }
    CscMatrix::from_triplets(m, m, &t).unwrap()
}

/// Product, formed matrix, diagonal blocks, Gauss-Seidel rows and `M^-1 f` of `op` against
/// the dense reference, all to 1e-12 relative.
fn check_against_reference(op: &MatrixFree, d: &CscMatrix, m: &CscMatrix, bs: usize) {
    let n = d.ncols();
    let w = dense_w(d, m);
    let wmax = w.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(wmax > 0.1, "a non-trivial W: {wmax}");
    let tol = 1e-12 * wmax;
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos()).collect();
    let mut y = vec![0.0; n];
    op.matvec(&x, &mut y);
    for i in 0..n {
        let exact: f64 = (0..n).map(|j| w[i * n + j] * x[j]).sum();
        assert!(
            (y[i] - exact).abs() <= tol * n as f64,
            "N x [{i}]: {} {exact}",
            y[i]
        );
    }
    let formed = op.to_csc().unwrap();
    for i in 0..n {
        for j in 0..n {
            assert!(
                (formed.get(i, j) - w[i * n + j]).abs() <= tol,
                "W[{i}][{j}]"
            );
        }
    }
    for c in 0..n / bs {
        let b = op.diag_block(c, bs);
        for a in 0..bs {
            for e in 0..bs {
                let exact = w[(bs * c + a) * n + bs * c + e];
                assert!((b[a * bs + e] - exact).abs() <= tol, "block {c} ({a}, {e})");
            }
        }
    }
    // Gauss-Seidel: rows from v = M^-1 D gamma kept current by block_changed
    let mut gamma = x.clone();
    let mut v = vec![0.0; op.m()];
    op.velocity_of(&gamma, &mut v);
    let mut out = [0.0; 3];
    for c in 0..n / bs {
        op.block_row(c, bs, &v, &mut out[..bs]);
        for a in 0..bs {
            let exact: f64 = (0..n).map(|j| w[(bs * c + a) * n + j] * gamma[j]).sum();
            assert!((out[a] - exact).abs() <= tol * n as f64, "row {c}.{a}");
        }
        let delta = [0.25, -0.5, 0.75];
        for a in 0..bs {
            gamma[bs * c + a] += delta[a];
        }
        op.block_changed(c, bs, &delta[..bs], &mut v);
    }
    let mut v_new = vec![0.0; op.m()];
    op.velocity_of(&gamma, &mut v_new);
    assert!(cpbench_test_support::max_abs_diff(&v, &v_new) <= 1e-12);
    // M^-1 f
    let f: Vec<f64> = (0..op.m()).map(|k| (k as f64 * 0.3).sin()).collect();
    let y = op.solve_mass(&f);
    let exact = dense_solve(&dense_of(m), op.m(), &f);
    assert!(cpbench_test_support::max_abs_diff(&y, &exact) <= 1e-12);
}

#[test]
fn a_block_diagonal_mass_forms_m_inverse_d_and_matches_the_dense_reference() {
    // 8 rigid bodies (6x6 blocks), 10 contacts
    let m = block_mass(8, 6, 11);
    let d = random_d(48, 30, 12);
    let op = MatrixFree::with_sparse_mass(d.clone(), m.clone(), 3).unwrap();
    let MassInverse::BlockDiagonal(b) = op.mass_inverse() else {
        panic!("expected a block-diagonal M: {:?}", op.mass_inverse())
    };
    assert_eq!(b.blocks().len(), 8);
    assert!(b.blocks().iter().all(|&(s, e)| e - s == 6));
    // G has whole bodies: at most 6 entries per body a column touches
    assert!(b.g().nnz() <= 6 * d.nnz());
    assert!(op.row_access().is_ok() && op.has_row_access());
    assert_eq!(op.mass_matrix().unwrap().values(), m.values());
    check_against_reference(&op, &d, &m, 3);
}

#[test]
fn a_general_mass_uses_the_sparse_cholesky_and_refuses_row_access() {
    let m = chain_mass(40);
    let d = random_d(40, 24, 13);
    let op = MatrixFree::with_sparse_mass(d.clone(), m.clone(), 3).unwrap();
    let MassInverse::Cholesky(f) = op.mass_inverse() else {
        panic!("expected the sparse Cholesky: {:?}", op.mass_inverse())
    };
    // a tridiagonal M has a tridiagonal factor: 40 + 39 entries
    assert_eq!(f.factor_nnz(), 79);
    assert!(!op.has_row_access());
    let e = op.row_access().unwrap_err();
    assert!(
        matches!(e, ProblemError::OperatorUnavailable { .. })
            && e.to_string().contains("M (40 x 40) is not block diagonal"),
        "{e}"
    );
    // block_changed stays correct (a full solve) for callers that use it anyway
    check_against_reference(&op, &d, &m, 3);
    // the 2-D block size
    let op2 = MatrixFree::with_sparse_mass(d.clone(), m.clone(), 2).unwrap();
    check_against_reference(&op2, &d, &m, 2);
}

#[test]
fn a_mass_that_is_not_positive_definite_is_a_typed_error_naming_the_column() {
    // general M: a negative diagonal entry at row 17 of the chain
    let mut t = Vec::new();
    let c = chain_mass(40);
    for j in 0..40 {
        let (rows, vals) = c.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            t.push((i, j, if i == 17 && j == 17 { -5.0 } else { v }));
        }
    }
    let m = CscMatrix::from_triplets(40, 40, &t).unwrap();
    let e = MatrixFree::with_sparse_mass(random_d(40, 24, 13), m, 3).unwrap_err();
    let ProblemError::MassNotPositiveDefinite { size, column, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((*size, *column), (40, Some(17)), "{e}");
    assert!(
        e.to_string().contains("column 17 of M (M[17][17] = -5e0)"),
        "{e}"
    );
    // a star (a hub coupled to 20 leaves): AMD eliminates the leaves first and the hub last
    // (step 20); every diagonal entry is positive, the hub's Schur complement 10 - 20 is not
    // (hub at row 7, so that the permutation is not its own inverse)
    let mut t = vec![(7, 7, 10.0)];
    for k in (0..21).filter(|&k| k != 7) {
        t.extend([(k, k, 1.0), (7, k, 1.0), (k, 7, 1.0)]);
    }
    let m = CscMatrix::from_triplets(21, 21, &t).unwrap();
    let e = MatrixFree::with_sparse_mass(random_d(21, 6, 5), m, 3).unwrap_err();
    assert!(
        matches!(
            e,
            ProblemError::MassNotPositiveDefinite {
                size: 21,
                column: Some(7),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("step 20 of 21 (from 0), column 7 of M (M[7][7] = 1e1)"),
        "{e}"
    );
    // block-diagonal M: body 2 (rows 12..18) with a negative inertia at row 15
    let b = block_mass(4, 6, 3);
    let mut t = Vec::new();
    for j in 0..24 {
        let (rows, vals) = b.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            t.push((i, j, if i == 15 && j == 15 { -100.0 } else { v }));
        }
    }
    let m = CscMatrix::from_triplets(24, 24, &t).unwrap();
    let e = MatrixFree::with_sparse_mass(random_d(24, 9, 2), m, 3).unwrap_err();
    assert!(
        matches!(
            e,
            ProblemError::MassNotPositiveDefinite {
                size: 24,
                column: Some(15),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("block of rows 12..18"), "{e}");
    // not symmetric
    let m = CscMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, 1.0), (0, 1, 0.5)]).unwrap();
    let e = MatrixFree::with_sparse_mass(random_d(2, 3, 1), m, 3).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "the mass matrix M (2 x 2) is not symmetric positive definite (column 1): M is not \
             symmetric"
        ),
        "{e}"
    );
}
