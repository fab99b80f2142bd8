//! `cpbench info`: what an instance file holds.

use crate::{AnyError, ReadArgs};
use cpbench_problems::io::load;
use cpbench_problems::linalg::norm2;
use cpbench_problems::ConstraintSet;

/// Print class, sizes, nnz, symmetry error, `mu` range and norms of the instance at `path`.
pub fn info(path: &std::path::Path, read: &ReadArgs) -> Result<(), AnyError> {
    let inst = load(path, &read.options())?;
    let n_mat = inst.n_mat();
    let diag = n_mat.diag();
    let (dmin, dmax) = diag
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &d| {
            (a.min(d), b.max(d))
        });
    println!("name            {}", inst.name());
    println!("class           {}", inst.class());
    println!("n               {}", inst.n());
    println!("blocks          {}", inst.n_blocks());
    println!("nnz(N)          {}", n_mat.nnz());
    println!(
        "density         {:.3e}",
        n_mat.nnz() as f64 / (inst.n() as f64 * inst.n() as f64).max(1.0)
    );
    match inst.provenance().symmetrized_from {
        Some(a) => {
            println!("symmetry error  {a:.3e} (||N - N^T||_F / ||N||_F before symmetrisation)")
        }
        None => println!("symmetry error  0"),
    }
    if let ConstraintSet::CoulombCones { mu } = inst.constraints() {
        let (lo, hi) = mu
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &m| {
                (a.min(m), b.max(m))
            });
        println!("mu range        [{lo}, {hi}]");
    }
    println!("||N||_F         {:.6e}", n_mat.frobenius_norm());
    println!(
        "lambda_max(N)   {:.6e} (50 power iterations)",
        n_mat.power_iteration(50)
    );
    println!("diag(N) range   [{dmin:.6e}, {dmax:.6e}]");
    println!("||r||_2         {:.6e}", norm2(inst.r()));
    println!("hash            {}", inst.hash());
    println!(
        "source          {} ({}, {})",
        inst.provenance().source,
        inst.provenance().format,
        inst.provenance().derivation
    );
    Ok(())
}
