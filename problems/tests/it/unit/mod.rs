//! The unit tests of `cpbench-problems`: one module per source file (`io_npz` holds the tests of
//! `src/io/npz.rs`), here rather than in `#[cfg(test)]` modules so that the library compiles
//! once, not twice (`[lib] test = false` in problems/Cargo.toml).

use cpbench_problems::{CscMatrix, Instance};

mod constraints;
mod constraints_cones;
mod constraints_friction_box;
mod derive;
mod generators_boxqp;
mod generators_lcp;
mod generators_murty;
mod instance;
mod io;
mod io_bundle;
mod io_condense;
mod io_fclib;
mod io_fclib_global;
mod io_fclib_write;
mod io_mtx;
mod io_npz;
mod io_output;
mod io_siconos;
mod io_siconos_global;
mod json;
mod linalg;
mod memory;
mod operator_block;
mod operator_matfree;
mod residual;
mod rng;

/// A matrix-free Coulomb CCP for the readers' tests: `D` a random `m x 3 nc` sparse matrix
/// (column by column, each entry present with probability 0.4, values uniform in
/// `[-0.5, 0.5)`, SplitMix64 from seed 7), masses `0.3 + 0.7 k / 3` (whose inverses do not
/// invert back exactly), `r_i = sin i`, `mu = 0.4`.
pub fn random_matrix_free(m: usize, nc: usize) -> Instance {
    let mut rng = cpbench_problems::rng::SplitMix64::new(7);
    let mut t = Vec::new();
    for j in 0..3 * nc {
        for k in 0..m {
            if rng.next_f64() < 0.4 {
                t.push((k, j, rng.next_f64() - 0.5));
            }
        }
    }
    let d = CscMatrix::from_triplets(m, 3 * nc, &t).unwrap();
    let mass: Vec<f64> = (0..m).map(|k| 0.3 + 0.7 * k as f64 / 3.0).collect();
    let op = cpbench_problems::operator::MatrixFree::with_diagonal_mass(d, &mass).unwrap();
    let r: Vec<f64> = (0..3 * nc).map(|i| (i as f64).sin()).collect();
    Instance::on_operator(
        "mf__ccp",
        op,
        r,
        cpbench_problems::constraints::ConstraintSet::coulomb(vec![0.4; nc]),
        cpbench_problems::instance::Provenance::default(),
    )
    .unwrap()
}

/// Asserts that `a` and `b` give the same products `N x`, bit for bit, for one `x`.
pub fn assert_same_products(a: &Instance, b: &Instance) {
    let n = a.n();
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).cos()).collect();
    let (mut ya, mut yb) = (vec![0.0; n], vec![0.0; n]);
    a.matvec(&x, &mut ya);
    b.matvec(&x, &mut yb);
    assert_eq!(ya, yb);
}
