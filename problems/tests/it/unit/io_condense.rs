//! The tests of `cpbench_problems::io::condense` (until now its `#[cfg(test)]` module in
//! `problems/src/io/condense.rs`).

use cpbench_problems::error::ProblemError;
use cpbench_problems::io::condense::*;
use cpbench_problems::io::Notes;
use cpbench_problems::linalg::CscMatrix;

#[test]
fn condense_small_dense_example() {
    // M = diag(2, 4), H = [[1, 0], [1, 1]] (rows dof, columns unknowns)
    let m = CscMatrix::from_triplets(2, 2, &[(0, 0, 2.0), (1, 1, 4.0)]).unwrap();
    let h = CscMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 0, 1.0), (1, 1, 1.0)]).unwrap();
    let mut notes = Notes::new();
    let (w, q) = condense(m, &h, &[2.0, 4.0], &[0.5, 0.0], &mut notes).unwrap();
    // W = H^T M^-1 H = [[1/2 + 1/4, 1/4], [1/4, 1/4]] (up to the rounding of sqrt in LL^T)
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-15;
    assert!(close(w.get(0, 0), 0.75));
    assert!(close(w.get(0, 1), 0.25));
    assert!(close(w.get(1, 0), 0.25));
    assert!(close(w.get(1, 1), 0.25));
    // M^-1 f = (1, 1); H^T (1, 1) = (2, 1); + w
    assert!(close(q[0], 2.5) && close(q[1], 1.0), "{q:?}");
    assert!(notes["m_factorization"].contains("Cholesky"));
}

#[test]
fn singular_m_is_a_typed_error() {
    let m = CscMatrix::from_triplets(2, 2, &[(0, 0, 1.0)]).unwrap();
    let h = CscMatrix::from_triplets(2, 1, &[(1, 0, 1.0)]).unwrap();
    let e = condense(m, &h, &[0.0, 0.0], &[0.0], &mut Notes::new()).unwrap_err();
    assert!(matches!(e, ProblemError::Factorization(_)), "{e:?}");
}
