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
fn products_and_round_trip_bs3_bs2_and_bs1() {
    for (bs, nb) in [(3, 40), (2, 60), (1, 90)] {
        let m = random_sym(nb, bs, 5 + bs as u64, 0.15);
        let b = BlockSymMatrix::from_csc(&m, bs).unwrap();
        check_products(&m, &b);
        let back = b.to_csc().unwrap();
        assert_eq!(back.col_ptr(), m.col_ptr());
        assert_eq!(back.row_idx(), m.row_idx());
        assert_eq!(back.values(), m.values());
        assert_eq!(b.full_nnz(), m.nnz());
        assert_eq!(b.has_entry_masks(), bs > 1);
        assert_eq!(b.block_size(), bs);
        assert_eq!(b.n(), m.nrows());
        // diagonal blocks bit for bit, the rest of the 9 entries zero
        for i in [0, nb / 2, nb - 1] {
            let d = b.diag_block(i);
            for a in 0..bs {
                for c in 0..bs {
                    assert_eq!(d[a * bs + c], m.get(bs * i + a, bs * i + c), "bs {bs}");
                }
            }
            assert!(d[bs * bs..].iter().all(|&v| v == 0.0));
        }
        // bytes: values, u32 block columns and row pointers
        let blocks = b.cols().len();
        assert_eq!(
            b.bytes(),
            (blocks * bs * bs * 8 + blocks * 4 + (nb + 1) * 8) as u64
        );
    }
}

/// The product summed by hand in the order the storage documents (the order of the 3x3 and
/// 1x1 products before 2x2 blocks were added): row `a` of a block as `b_a0 x_0 + b_a1 x_1 +
/// ...` (left to right) before it is added; the scatters of the rows above first (in row
/// order), the own row's sum last. Bit for bit on one chunk, for every block size.
#[test]
fn product_follows_the_documented_summation_order() {
    for bs in [1, 2, 3] {
        let m = random_sym(50, bs, 21, 0.2);
        let b = BlockSymMatrix::from_csc(&m, bs).unwrap();
        let nb = b.n_block_rows();
        let x: Vec<f64> = (0..bs * nb).map(|i| (i as f64 * 0.37).cos()).collect();
        let mut want = vec![0.0; bs * nb];
        let (rp, cols, v) = (b.row_ptr(), b.cols(), b.values());
        for i in 0..nb {
            let mut yi = [0.0; 3];
            for p in rp[i]..rp[i + 1] {
                let j = cols[p] as usize;
                let blk = &v[bs * bs * p..bs * bs * (p + 1)];
                for a in 0..bs {
                    let mut s = blk[bs * a] * x[bs * j];
                    for k in 1..bs {
                        s += blk[bs * a + k] * x[bs * j + k];
                    }
                    yi[a] += s;
                }
                if j != i {
                    for a in 0..bs {
                        let mut s = blk[a] * x[bs * i];
                        for k in 1..bs {
                            s += blk[bs * k + a] * x[bs * i + k];
                        }
                        want[bs * j + a] += s;
                    }
                }
            }
            for a in 0..bs {
                want[bs * i + a] += yi[a];
            }
        }
        let one = b.clone().with_chunk_bounds(&[0, nb]);
        let mut y = vec![0.0; bs * nb];
        one.matvec(&x, &mut y);
        assert_eq!(y, want, "bs {bs}");
    }
}

#[test]
fn parallel_chunks_agree_with_serial() {
    for bs in [3, 2] {
        let m = random_sym(400, bs, 3, 0.2);
        let b = BlockSymMatrix::from_csc(&m, bs).unwrap();
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
        assert_eq!(y1, y2, "bs {bs}");
    }
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

#[test]
fn bad_block_sizes_name_the_value_and_the_sizes_taken() {
    for bs in [0, 4, 6] {
        let e = BlockSymMatrix::from_upper_parts(bs, 1, vec![0, 1], vec![0], vec![1.0; bs * bs]);
        match e {
            Err(ProblemError::UnsupportedBlockSize { found, expected }) => {
                assert_eq!(found, bs);
                assert_eq!(expected, "1, 2 or 3");
            }
            other => panic!("bs {bs}: {other:?}"),
        }
        let m = random_sym(4, 1, 1, 0.5);
        let e = BlockSymMatrix::from_csc(&m, bs).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&format!("block size {bs}")), "{msg}");
        assert!(msg.contains("1, 2 or 3"), "{msg}");
    }
    assert!(check_block_size(2).is_ok());
    assert_eq!(BLOCK_SIZES, [1, 2, 3]);
    // n odd for 2x2 blocks, n not a multiple of 3 for 3x3 blocks
    let m = random_sym(5, 1, 2, 0.5);
    assert!(matches!(
        BlockSymMatrix::from_csc(&m, 2),
        Err(ProblemError::NotMultipleOfConeDim { n: 5, dim: 2 })
    ));
    assert!(matches!(
        BlockSymMatrix::from_csc(&m, 3),
        Err(ProblemError::NotMultipleOfThree { n: 5 })
    ));
}

/// The ordered sweep (`Instance::begin_ordered_sweep`): a Gauss-Seidel-like sweep that changes
/// each block after reading its row gets, at every row, the value the transposed index gives
/// bit for bit (block sizes 3, 2, 1); a row skipped (not reported done) ends the ordered sweep
/// and the later rows are still exact; `scatter_row` from zero gives `block_row_product`'s
/// lower terms.
#[test]
fn ordered_sweep_rows_equal_the_transposed_index_bit_for_bit() {
    use cpbench_problems::constraints::ConstraintSet;
    use cpbench_problems::instance::{Instance, Provenance};
    for (bs, seed) in [(3usize, 31u64), (2, 32), (1, 33)] {
        let nb = 40;
        let m = random_sym(nb, bs, seed, 0.2);
        let set = match bs {
            3 => ConstraintSet::coulomb(vec![0.5; nb]),
            2 => ConstraintSet::coulomb_dim(vec![0.5; nb], 2),
            _ => ConstraintSet::NonNegative,
        };
        let r = vec![0.0; bs * nb];
        let b = BlockSymMatrix::from_csc(&m, bs).unwrap();
        let inst = Instance::on_operator("t", b, r, set, Provenance::default()).unwrap();
        for skip in [None, Some(17usize)] {
            let mut rng = SplitMix64::new(seed + 100);
            let mut x: Vec<f64> = (0..bs * nb).map(|_| rng.next_f64() - 0.5).collect();
            let (mut fast, mut slow) = (inst.row_state(&x), inst.row_state(&x));
            inst.begin_ordered_sweep(&x, &mut fast);
            let (mut a, mut e) = ([0.0; 3], [0.0; 3]);
            for c in 0..nb {
                inst.block_row(c, &x, &fast, &mut a[..bs]);
                inst.refresh_row_state(&x, &mut slow);
                inst.block_row(c, &x, &slow, &mut e[..bs]);
                assert_eq!(a[..bs], e[..bs], "bs {bs}, row {c}, skip {skip:?}");
                for v in &mut x[bs * c..bs * (c + 1)] {
                    *v = 0.5 * *v + rng.next_f64();
                }
                if skip != Some(c) {
                    inst.block_done(c, &x, &mut fast);
                }
            }
            // unskipped, every row took the accumulated lower terms; skipped, it ended
            let expect = if skip.is_none() { Some(nb) } else { None };
            assert_eq!(fast.ordered_next(), expect, "bs {bs}");
        }
        // scatter_row from zero over all rows = the lower terms of block_row_product
        let b = inst.block_matrix().unwrap();
        let x: Vec<f64> = (0..bs * nb).map(|i| (i as f64 * 0.7).sin()).collect();
        let mut lower = vec![0.0; bs * nb];
        let (mut a, mut e) = ([0.0; 3], [0.0; 3]);
        for c in 0..nb {
            b.block_row_product_from(c, &x, &lower, &mut a[..bs]);
            b.block_row_product(c, &x, &mut e[..bs]);
            assert_eq!(a[..bs], e[..bs], "bs {bs}, row {c}");
            b.scatter_row(c, &x, &mut lower);
        }
    }
}

/// The whole-row copy (`BlockSymMatrix::whole_rows`) in a shuffled row order gives at every
/// position the row of `block_row_product` bit for bit (block sizes 3, 2, 1, partly stored
/// blocks); its bytes are the predicted ones (the transposed index counted until it is
/// built); an order that is not a permutation is refused.
#[test]
fn whole_rows_equal_the_transposed_index_bit_for_bit() {
    for (bs, seed) in [(3usize, 41u64), (2, 42), (1, 43)] {
        let nb = 50;
        let m = random_sym(nb, bs, seed, 0.2);
        let b = BlockSymMatrix::from_csc(&m, bs).unwrap();
        let before = b.whole_rows_bytes();
        let mut rng = SplitMix64::new(seed + 7);
        let mut order: Vec<u32> = (0..nb as u32).collect();
        for i in (1..nb).rev() {
            order.swap(i, rng.index_to(i));
        }
        let w = b.whole_rows(&order).unwrap();
        assert_eq!(w.bytes(), b.whole_rows_bytes(), "bs {bs}");
        assert_eq!(
            before - w.bytes(),
            8 * (w.n_blocks() as u64 - b.cols().len() as u64) + 8 * (nb as u64 + 1),
            "bs {bs}: the index's bytes"
        );
        assert_eq!((w.block_size(), w.n_block_rows()), (bs, nb));
        // every block of N once: 2 stored - diagonal (every diagonal block is stored here)
        assert_eq!(w.n_blocks(), 2 * b.cols().len() - nb, "bs {bs}");
        let x: Vec<f64> = (0..bs * nb).map(|i| (i as f64 * 0.37).cos()).collect();
        let (mut a, mut e) = ([0.0; 3], [0.0; 3]);
        for (p, &i) in order.iter().enumerate() {
            w.row_product(p, &x, &mut a[..bs]);
            b.block_row_product(i as usize, &x, &mut e[..bs]);
            assert_eq!(a[..bs], e[..bs], "bs {bs}, row {i} at {p}");
        }
        let mut bad = order.clone();
        bad[1] = bad[0];
        assert!(b.whole_rows(&bad).is_err());
        assert!(b.whole_rows(&order[1..]).is_err());
    }
}
