//! The matrix-free product `N x = H^T (M^-1 (H x))` with a general `M` allocates nothing after
//! the first product (its scratch and faer's solve workspace come from the operator's pool;
//! issue 34 item 5): a counting global allocator, in its own test binary with one test, so no
//! other test allocates meanwhile.

use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::operator::{MassInverse, MatrixFree};
use cpbench_test_support::CountingAlloc;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// `D` (`m x n`) with 4 entries per column at deterministic rows.
fn d_of(m: usize, n: usize) -> CscMatrix {
    let t: Vec<_> = (0..n)
        .flat_map(|j| (0..4).map(move |k| ((7 * j + 11 * k) % m, j, 1.0 + (j + k) as f64 * 0.1)))
        .collect();
    CscMatrix::from_triplets(m, n, &t).unwrap()
}

#[test]
fn products_and_row_updates_do_not_allocate_after_the_first() {
    let m = 60;
    // a chain (general M: the sparse Cholesky) and 6x6 blocks (block diagonal: G = M^-1 D)
    let chain: Vec<_> = (0..m)
        .flat_map(|i| {
            let mut v = vec![(i, i, 3.0)];
            if i + 1 < m {
                v.extend([(i, i + 1, -1.0), (i + 1, i, -1.0)]);
            }
            v
        })
        .collect();
    let blocks: Vec<_> = (0..m)
        .flat_map(|i| {
            let b = i / 6 * 6;
            (b..b + 6).map(move |j| (i, j, if i == j { 4.0 } else { 0.5 }))
        })
        .collect();
    for (t, cholesky) in [(chain, true), (blocks, false)] {
        let mm = CscMatrix::from_triplets(m, m, &t).unwrap();
        let op = MatrixFree::with_sparse_mass(d_of(m, 45), mm, 3).unwrap();
        assert_eq!(
            matches!(op.mass_inverse(), MassInverse::Cholesky(_)),
            cholesky
        );
        let x: Vec<f64> = (0..45).map(|i| (i as f64).sin()).collect();
        let mut y = vec![0.0; 45];
        let mut v = vec![0.0; m];
        op.matvec(&x, &mut y); // the pool's scratch
        op.block_changed(0, 3, &[1.0, 0.0, 0.5], &mut v);
        let before = CountingAlloc::count();
        for _ in 0..100 {
            op.matvec(&x, &mut y);
            op.velocity_of(&x, &mut v);
            for c in 0..15 {
                op.block_changed(c, 3, &[0.1, -0.2, 0.3], &mut v);
            }
        }
        let allocated = CountingAlloc::count() - before;
        assert_eq!(allocated, 0, "cholesky = {cholesky}");
        assert!(y.iter().all(|v| v.is_finite()) && y.iter().any(|&v| v != 0.0));
    }
}
