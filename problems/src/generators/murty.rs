//! Murty's LCPs on which Lemke's complementary pivot method takes `2^n` pivots, as cpbench
//! [`Instance`]s of class LCP (`w = M z + q`, `M = N`, `q = r`, `z = gamma`).
//!
//! | generator | `M` | `q` | solution | source |
//! |---|---|---|---|---|
//! | [`murty`] | `L_n`: lower triangular, `1` on the diagonal, `2` below it (a P-matrix, not symmetric) | `-e` | `z = e_1` | Murty 1978; Murty 1988, ch. 6 |
//! | [`fathi`] | `L_n L_n^T`: symmetric positive definite | `-e` | `z = e_1` | Fathi 1979; Murty 1988, ch. 6 |
//!
//! With the covering vector `d = e` and the lexicographic ratio test (ties of the first ratio
//! test broken towards the largest index, the lexicographic minimum of `(q_i, e_i^T)`),
//! Lemke's method visits `2^n` almost-complementary bases: `2^n` pivots counting the first,
//! `z0`-entering one (cpbench's `lemke`), `2^n - 1` as Siconos' `lcp_lexicolemke` counts them.
//! These counts were checked in exact rational arithmetic for `n <= 9` while writing this module;
//! `solvers/tests/it/lcp_pivoting.rs` checks them for `n = 2..10`, and
//! `scripts/peer_siconos.py --lcp --murty 2-12` runs Siconos' Lemke on the same matrices.
//! The index order matters: the same matrix with the indices reversed (upper triangular,
//! `2` above the diagonal) is solved in two pivots under this tie rule.
//!
//! The form of `L_n` and `q = -e` is the one of Murty's "Computational complexity of
//! complementary pivot methods", Math. Programming Study 7 (1978) 61-73, as restated in
//! Murty, "Linear complementarity, linear and nonlinear programming" (Heldermann 1988), ch. 6;
//! `L_n L_n^T` is the symmetric positive definite family of Fathi, "Computational complexity of
//! LCPs associated with positive definite symmetric matrices", Math. Programming 17 (1979)
//! 335-344. Both have the unique solution `z = e_1`, `w = (0, 1, ..., 1)` (`L_n` is a P-matrix
//! and `L_n L_n^T` positive definite).

use crate::constraints::ConstraintSet;
use crate::error::{ProblemError, Result};
use crate::instance::{Instance, Provenance, ValidationOptions};
use crate::linalg::CscMatrix;
use std::collections::BTreeMap;

/// Largest `n` accepted (`2^n` pivots: `n = 30` is already 10^9).
pub const MURTY_MAX_N: usize = 30;

fn check_n(generator: &str, n: usize) -> Result<()> {
    if (1..=MURTY_MAX_N).contains(&n) {
        return Ok(());
    }
    Err(ProblemError::InvalidParameter {
        generator: generator.into(),
        name: "n".into(),
        value: n.to_string(),
        reason: format!("an integer in 1..={MURTY_MAX_N}"),
    })
}

fn instance(generator: &str, n: usize, t: Vec<(usize, usize, f64)>) -> Result<Instance> {
    let m = CscMatrix::from_triplets(n, n, &t)?;
    let prov = Provenance {
        source: generator.into(),
        format: generator.into(),
        derivation: "as-is".into(),
        parameters: BTreeMap::from([("n".to_string(), n.to_string())]),
        ..Default::default()
    };
    Instance::new(
        format!("{generator}-n{n}"),
        m,
        vec![-1.0; n],
        ConstraintSet::NonNegative,
        prov,
        ValidationOptions::default(),
    )
}

/// Murty's LCP of order `n` (named `murty-n<n>`): `M = L_n` with `L_ii = 1`, `L_ij = 2` for
/// `i > j`, `0` above the diagonal; `q = -e` (module documentation). Lemke's method with
/// `d = e` takes `2^n` pivots; the solution is `z = e_1`.
///
/// Errors: [`ProblemError::InvalidParameter`] unless `1 <= n <= MURTY_MAX_N`.
pub fn murty(n: usize) -> Result<Instance> {
    check_n("murty", n)?;
    let mut t = Vec::with_capacity(n * (n + 1) / 2);
    for j in 0..n {
        t.push((j, j, 1.0));
        for i in j + 1..n {
            t.push((i, j, 2.0));
        }
    }
    instance("murty", n, t)
}

/// Fathi's symmetric positive definite LCP of order `n` (named `fathi-n<n>`):
/// `M = L_n L_n^T`, i.e. `M_ii = 4(i - 1) + 1`, `M_ij = 4(min(i, j) - 1) + 2` for `i != j`
/// (1-based), `q = -e`. Lemke's method with `d = e` takes `2^n` pivots; the solution is
/// `z = e_1`. As a convex QP every QP solver can take it too.
///
/// Errors: [`ProblemError::InvalidParameter`] unless `1 <= n <= MURTY_MAX_N`.
pub fn fathi(n: usize) -> Result<Instance> {
    check_n("fathi", n)?;
    let mut t = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            let k = i.min(j) as f64; // 0-based min(i, j)
            let v = if i == j { 4.0 * k + 1.0 } else { 4.0 * k + 2.0 };
            t.push((i, j, v));
        }
    }
    instance("fathi", n, t)
}
