//! Global friction problems, matrix-free (`N = H^T M^-1 H` from `H` and `M`) against
//! condensed (`W` formed): the memory the operator keeps and the time of one product, the
//! median of 3 repeats of `PRODUCTS` products each (issue 34 item 5; numbers in docs/cli.md,
//! "Storage of N").
//!
//! Instances: the largest global fixture (`Spheres-i099-356-679.hdf5`: 12,000 degrees of
//! freedom, 356 contacts, diagonal `M`), the smallest general one (`CubeH8.hdf5`, a
//! finite-element `M`: sparse Cholesky), and the `scale` suite's pyramid (granular, diagonal
//! `M`) at `PYRAMID_CONTACTS` contacts in three global forms with the same `N`: its own
//! (`D`, diagonal `M`); velocities at a point off each body's centre of mass (`D' = T D`,
//! `M' = T M T^T` with `T` a per-body 6x6 change of coordinates: full 6x6 blocks, the
//! block-diagonal path); and `T` coupling each body to the next (a banded `M'`, the sparse
//! Cholesky). `D'^T M'^-1 D' = D^T M^-1 D` for every invertible `T`.
//!
//! Run: `nice -n 19 cargo bench --bench global` (plain timing, no Criterion).

use cpbench_harness::scale::{generate_pyramid, generate_pyramid_with, ScaleSize};
use cpbench_problems::io::{load, load_with, GlobalForm, LoadOptions};
use cpbench_problems::operator::{MassInverse, MatrixFree};
use cpbench_problems::rng::SplitMix64;
use cpbench_problems::{ConstraintSet, CscMatrix, Instance, OperatorKind, Provenance};
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

/// Products per timed repeat.
const PRODUCTS: usize = 200;
/// Contacts of the generated pyramid (nearest pyramid).
const PYRAMID_CONTACTS: f64 = 2e4;

/// Median over 3 repeats of the time of one product (seconds).
fn time_per_product(inst: &Instance) -> f64 {
    let n = inst.n();
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut y = vec![0.0; n];
    inst.matvec(&x, &mut y); // the pool's first buffers
    let mut t: Vec<f64> = (0..3)
        .map(|_| {
            let s = Instant::now();
            for _ in 0..PRODUCTS {
                inst.matvec(black_box(&x), &mut y);
            }
            s.elapsed().as_secs_f64() / PRODUCTS as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[1]
}

/// Bytes the instance's operator keeps: the stored `N` (CSC or block) or the factors.
fn memory(inst: &Instance) -> u64 {
    match inst.matrix_free() {
        Some(op) => op.memory_bytes(),
        None => inst.operator_bytes(),
    }
}

fn kind(inst: &Instance) -> String {
    match inst.matrix_free().map(|o| o.mass_inverse()) {
        None => inst.operator_kind().to_string(),
        Some(MassInverse::Diagonal(_)) => "matrix-free, M diagonal".into(),
        Some(MassInverse::BlockDiagonal(b)) => {
            format!(
                "matrix-free, M block diagonal ({} blocks)",
                b.blocks().len()
            )
        }
        Some(MassInverse::Cholesky(c)) => {
            format!(
                "matrix-free, M sparse Cholesky ({} entries in L)",
                c.factor_nnz()
            )
        }
    }
}

fn report(what: &str, inst: &Instance, build_s: f64) {
    println!(
        "{what:<44} {:<50} {:>12} B {:>11.3e} s/product (built in {build_s:.3} s)",
        kind(inst),
        memory(inst),
        time_per_product(inst)
    );
}

fn fixture(rel: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    let opts = LoadOptions::default();
    let s = Instant::now();
    let cond = load(&path, &opts).unwrap();
    let tc = s.elapsed().as_secs_f64();
    let s = Instant::now();
    let free = load_with(&path, &opts, GlobalForm::MatrixFree).unwrap();
    let tf = s.elapsed().as_secs_f64();
    println!(
        "{rel}: n = {}, {} degrees of freedom",
        cond.n(),
        free.matrix_free().unwrap().m()
    );
    report("  condensed W", &cond, tc);
    report("  matrix-free", &free, tf);
}

/// `D' = T D`, `M' = T M T^T` for the per-body change of coordinates `T` (6x6 blocks near
/// the identity; `chain`: each body also coupled to the next one).
fn transformed(d: &CscMatrix, m_diag: &[f64], chain: bool) -> (CscMatrix, CscMatrix) {
    let m = d.nrows();
    let nb = m / 6;
    let mut rng = SplitMix64::new(7);
    // T as triplets: identity + 0.3 random in each body's block (+ 0.2 to the next body)
    let mut t = Vec::new();
    for b in 0..nb {
        for i in 0..6 {
            for j in 0..6 {
                let v = if i == j {
                    1.0
                } else {
                    0.3 * (rng.next_f64() - 0.5)
                };
                t.push((6 * b + i, 6 * b + j, v));
                if chain && b + 1 < nb {
                    t.push((6 * b + i, 6 * (b + 1) + j, 0.2 * (rng.next_f64() - 0.5)));
                }
            }
        }
    }
    let tm = CscMatrix::from_triplets(m, m, &t).unwrap();
    // T D and T M T^T through dense columns (m is a few ten thousands: fine for a bench)
    let mul = |a: &CscMatrix, b_cols: &dyn Fn(usize) -> Vec<(usize, f64)>, ncols: usize| {
        let mut trip = Vec::new();
        let mut acc = vec![0.0; m];
        let mut touched = Vec::new();
        for j in 0..ncols {
            for (k, bkj) in b_cols(j) {
                let (rows, vals) = a.col(k);
                for (&i, &aik) in rows.iter().zip(vals) {
                    if acc[i] == 0.0 {
                        touched.push(i);
                    }
                    acc[i] += aik * bkj;
                }
            }
            for &i in &touched {
                if acc[i] != 0.0 {
                    trip.push((i, j, acc[i]));
                }
                acc[i] = 0.0;
            }
            touched.clear();
        }
        trip
    };
    let td = mul(
        &tm,
        &|j| {
            d.col(j)
                .0
                .iter()
                .copied()
                .zip(d.col(j).1.iter().copied())
                .collect()
        },
        d.ncols(),
    );
    let dprime = CscMatrix::from_triplets(m, d.ncols(), &td).unwrap();
    // M T^T: column j of T^T is row j of T, scaled by M
    let tt = tm.transpose();
    let tmt = mul(
        &tm,
        &|j| {
            let (rows, vals) = tt.col(j);
            rows.iter()
                .zip(vals)
                .map(|(&k, &v)| (k, m_diag[k] * v))
                .collect()
        },
        m,
    );
    let mprime = CscMatrix::from_triplets(m, m, &tmt).unwrap().symmetrized();
    (dprime, mprime)
}

fn pyramid() {
    let size = ScaleSize::for_target(PYRAMID_CONTACTS).unwrap();
    let s = Instant::now();
    let auto = generate_pyramid(&size).unwrap();
    let ta = s.elapsed().as_secs_f64();
    let s = Instant::now();
    let free = generate_pyramid_with(&size, Some(OperatorKind::MatrixFree)).unwrap();
    let tf = s.elapsed().as_secs_f64();
    let op = free.matrix_free().unwrap();
    println!(
        "pyramid-{}: {} contacts, n = {}, {} degrees of freedom",
        size.layers,
        size.contacts,
        auto.n(),
        op.m()
    );
    report("  N formed (generator's auto)", &auto, ta);
    let csc = auto.clone().with_operator(OperatorKind::Csc).unwrap();
    report("  N formed, CSC", &csc, 0.0);
    report("  D, M diagonal", &free, tf);
    let x: Vec<f64> = (0..free.n()).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut y0 = vec![0.0; free.n()];
    free.matvec(&x, &mut y0);
    for (what, chain) in [
        ("  D' = T D, M' = T M T^T (6x6 blocks)", false),
        ("  D', M' with T coupling bodies (banded)", true),
    ] {
        let (dp, mp) = transformed(op.d(), &op.mass_diagonal(), chain);
        let s = Instant::now();
        let opp = MatrixFree::with_sparse_mass(dp, mp, 3).unwrap();
        let inst = Instance::on_operator(
            "t",
            opp,
            free.r().to_vec(),
            ConstraintSet::clone(free.constraints()),
            Provenance::default(),
        )
        .unwrap();
        let tb = s.elapsed().as_secs_f64();
        let mut y1 = vec![0.0; free.n()];
        inst.matvec(&x, &mut y1);
        let scale = y0.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let diff = y0
            .iter()
            .zip(&y1)
            .fold(0.0f64, |a, (p, q)| a.max((p - q).abs()));
        report(what, &inst, tb);
        println!("{:<44} |N' x - N x| / |N x| = {:.1e}", "", diff / scale);
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benchmarks; nothing to list
    }
    fixture("fclib/Spheres-i099-356-679.hdf5");
    fixture("fclib/CubeH8.hdf5");
    pyramid();
}
