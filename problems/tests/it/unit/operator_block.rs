//! The tests of `cpbench_problems::operator::block` (until now its `#[cfg(test)]` module in
//! `problems/src/operator/block.rs`).

use cpbench_problems::error::ProblemError;
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::operator::*;
use cpbench_problems::rng::SplitMix64;

/// Random symmetric matrix with a block pattern (some blocks partly stored).
fn random_sym(nb: usize, bs: usize, seed: u64, density: f64) -> CscMatrix {
    let mut rng = SplitMix64::new(seed);
    let mut t = Vec::new();
    let n = nb * bs;
    for i in 0..n {
        t.push((i, i, 10.0 + rng.next_f64()));
    }
    for bi in 0..nb {
        for bj in bi + 1..nb {
            if rng.next_f64() < density {
                for a in 0..bs {
                    for b in 0..bs {
                        // leave a few entries out so masks are exercised
                        if rng.next_f64() < 0.85 {
                            let v = rng.next_f64() - 0.5;
                            t.push((bs * bi + a, bs * bj + b, v));
                            t.push((bs * bj + b, bs * bi + a, v));
                        }
                    }
                }
            }
        }
        // off-diagonal entries inside the diagonal block
        for a in 0..bs {
            for b in 0..a {
                let v = rng.next_f64();
                t.push((bs * bi + a, bs * bi + b, v));
                t.push((bs * bi + b, bs * bi + a, v));
            }
        }
    }
    CscMatrix::from_triplets(n, n, &t).unwrap()
}

fn check_products(m: &CscMatrix, b: &BlockSymMatrix) {
    let n = m.nrows();
    let mut rng = SplitMix64::new(9);
    let x: Vec<f64> = (0..n).map(|_| rng.next_f64() - 0.5).collect();
    let (mut y0, mut y1) = (vec![0.0; n], vec![0.0; n]);
    m.sym_matvec(&x, &mut y0);
    b.matvec(&x, &mut y1);
    let scale = y0.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for i in 0..n {
        assert!(
            (y0[i] - y1[i]).abs() <= 1e-13 * scale,
            "row {i}: {} vs {}",
            y0[i],
            y1[i]
        );
    }
    let bs = b.block_size();
    let mut out = [0.0; 3];
    for i in 0..b.n_block_rows() {
        b.block_row_product(i, &x, &mut out[..bs]);
        for a in 0..bs {
            assert!((out[a] - y0[bs * i + a]).abs() <= 1e-13 * scale);
        }
    }
}

#[test]
fn products_and_round_trip_bs3_and_bs1() {
    for (bs, nb) in [(3, 40), (1, 90)] {
        let m = random_sym(nb, bs, 5 + bs as u64, 0.15);
        let b = BlockSymMatrix::from_csc(&m, bs).unwrap();
        check_products(&m, &b);
        let back = b.to_csc().unwrap();
        assert_eq!(back.col_ptr(), m.col_ptr());
        assert_eq!(back.row_idx(), m.row_idx());
        assert_eq!(back.values(), m.values());
        assert_eq!(b.full_nnz(), m.nnz());
        assert_eq!(b.has_entry_masks(), bs == 3);
    }
}

#[test]
fn parallel_chunks_agree_with_serial() {
    let m = random_sym(400, 3, 3, 0.2);
    let b = BlockSymMatrix::from_csc(&m, 3).unwrap();
    // force four chunks whatever the pool size
    let nb = b.n_block_rows();
    let forced = b
        .clone()
        .with_chunk_bounds(&[0, nb / 4, nb / 2, 3 * nb / 4, nb]);
    check_products(&m, &forced);
    // a second product reuses the pooled buffer and gives the same bits
    let x: Vec<f64> = (0..m.nrows()).map(|i| (i as f64).sin()).collect();
    let (mut y1, mut y2) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    forced.matvec(&x, &mut y1);
    forced.matvec(&x, &mut y2);
    assert_eq!(y1, y2);
}

#[test]
fn bad_parts_are_refused() {
    let e = BlockSymMatrix::from_upper_parts(3, 2, vec![0, 1, 2], vec![1, 0], vec![0.0; 18]);
    assert!(matches!(
        e,
        Err(ProblemError::IndexOutOfRange { row: 1, col: 0, .. })
    ));
    let e = BlockSymMatrix::from_upper_parts(3, 2, vec![0, 1, 2], vec![0, 1], vec![0.0; 9]);
    assert!(matches!(e, Err(ProblemError::SizeMismatch { .. })));
    let mut v = vec![1.0; 18];
    v[10] = f64::NAN;
    let e = BlockSymMatrix::from_upper_parts(3, 2, vec![0, 1, 2], vec![0, 1], v);
    assert!(matches!(e, Err(ProblemError::NonFinite { .. })));
}
