//! Seeded random general LCPs `w = M z + q >= 0, z >= 0, z^T w = 0` (cpbench: `N = M`,
//! `r = q`, [`ConstraintSet::NonNegative`]) with a known solution, in three families of the
//! classic LCP theory (Cottle, Pang & Stone 1992, "The Linear Complementarity Problem",
//! sections 3.1-3.3):
//!
//! | family | `M` | what is known |
//! |---|---|---|
//! | [`LcpFamily::PMatrix`] (`p-matrix`) | `diag(s) A`, `A` strictly row diagonally dominant with a positive diagonal, row scales `s_i = 10^U(-1, 1)` | a P-matrix (unique solution for every `q`), an H-matrix; not symmetric, its symmetric part often indefinite |
//! | [`LcpFamily::Psd`] (`psd`) | `B^T B + S`, `B = D + R` upper triangular with a positive diagonal, `S = C - C^T` skew | symmetric part `B^T B` positive definite: a monotone LCP, also a P-matrix |
//! | [`LcpFamily::Nonmonotone`] (`nonmonotone`) | `diag(s) A` as for `p-matrix` but a quarter of the row scales negative | indefinite, not a P-matrix (negative diagonal entries); the known solution is nondegenerate with a nonsingular active block |
//!
//! Every family then draws the solution: each index is in the support `A` with probability
//! 1/2; `z*_i ~ U(0.1, 1)` on `A` (`w*_i = 0`), `w*_i ~ U(0.1, 1)` off `A` (`z*_i = 0`), so
//! `z*` is strictly complementary (nondegenerate), and `q = w* - M z*`.
//!
//! Why these are what they say: a strictly row diagonally dominant matrix with a positive
//! diagonal is a P-matrix (each principal submatrix is again such a matrix, so its real
//! eigenvalues are positive by Gershgorin's theorem and its determinant, the product of the
//! eigenvalues, is positive); a positive row scaling keeps every principal minor's sign. For
//! `psd`, `x^T M x = ||B x||^2 > 0` for `x != 0` (`B` triangular with a positive diagonal is
//! nonsingular), so `M` is positive definite, hence a P-matrix and the LCP monotone. In the
//! `nonmonotone` family the active block `M_AA = diag(s_A) A_AA` is nonsingular, so `z*` is a
//! BD-regular solution at which Newton methods on the Fischer-Burmeister function converge
//! quadratically (De Luca, Facchinei & Kanzow 1996), but other solutions may exist.
//!
//! Sparsity: each row of the random pattern holds `k = max(1, round(density (n - 1)))`
//! distinct off-diagonal columns drawn uniformly (`density = 1`: all of them). Random numbers:
//! [`SplitMix64`] and Box-Muller only, so the instances are identical on every platform.
//! Provenance: format `random-lcp`, parameters `family`, `n`, `density`, the seed.

use crate::constraints::ConstraintSet;
use crate::error::{ProblemError, Result};
use crate::instance::{Instance, Provenance, ValidationOptions};
use crate::linalg::CscMatrix;
use crate::rng::SplitMix64;
use std::collections::BTreeMap;

/// A family of random LCPs (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LcpFamily {
    /// Row-scaled strictly row diagonally dominant matrix: a P-matrix.
    PMatrix,
    /// `B^T B + S` with `S` skew: positive definite symmetric part (monotone).
    Psd,
    /// Row-scaled diagonally dominant matrix with some negative rows: indefinite, not P.
    Nonmonotone,
}

impl LcpFamily {
    /// Every family, in the order of the module table.
    pub const ALL: [LcpFamily; 3] = [LcpFamily::PMatrix, LcpFamily::Psd, LcpFamily::Nonmonotone];

    /// The name used on the command line and in instance names: `p-matrix`, `psd`,
    /// `nonmonotone`.
    pub fn as_str(self) -> &'static str {
        match self {
            LcpFamily::PMatrix => "p-matrix",
            LcpFamily::Psd => "psd",
            LcpFamily::Nonmonotone => "nonmonotone",
        }
    }

    /// The family of a name ([`LcpFamily::as_str`]); `None` for any other string.
    pub fn parse(s: &str) -> Option<LcpFamily> {
        LcpFamily::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

impl std::fmt::Display for LcpFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A generated LCP and, when known, a solution.
#[derive(Clone, Debug)]
pub struct GeneratedLcp {
    /// The instance (class LCP).
    pub instance: Instance,
    /// A solution `z*` (length `n`): the unique one for the P-matrix families.
    pub solution: Option<Vec<f64>>,
}

fn invalid(name: &str, value: impl ToString, reason: &str) -> ProblemError {
    ProblemError::InvalidParameter {
        generator: "random-lcp".into(),
        name: name.into(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// The random off-diagonal pattern: for each row, `k` distinct columns other than the row
/// (partial Fisher-Yates on a running permutation of `0..n`).
fn pattern(rng: &mut SplitMix64, n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut perm: Vec<usize> = (0..n).collect();
    (0..n)
        .map(|i| {
            if k + 1 >= n {
                return (0..n).filter(|&j| j != i).collect();
            }
            let mut cols = Vec::with_capacity(k + 1);
            for a in 0..=k {
                let b = a + rng.index_to(n - 1 - a);
                perm.swap(a, b);
                cols.push(perm[a]);
            }
            // k + 1 distinct columns: drop the row itself, or else the last one
            match cols.iter().position(|&j| j == i) {
                Some(p) => {
                    cols.swap_remove(p);
                }
                None => {
                    cols.pop();
                }
            }
            cols.sort_unstable();
            cols
        })
        .collect()
}

/// Triplets of `diag(s) A`, `A` strictly row diagonally dominant (off-diagonal standard normal
/// on the pattern, `A_ii = (1 + u_i) sum_j |A_ij|`, `u_i ~ U(0.1, 1)`; `A_ii = 1 + u_i` on an
/// empty row), `s_i = sign_i 10^U(-1, 1)`, `sign_i = -1` with probability `neg_fraction`.
fn dominant(
    rng: &mut SplitMix64,
    pat: &[Vec<usize>],
    neg_fraction: f64,
) -> Vec<(usize, usize, f64)> {
    let mut t = Vec::new();
    for (i, cols) in pat.iter().enumerate() {
        let start = t.len();
        let mut off = 0.0;
        for &j in cols {
            let v = rng.normal();
            off += v.abs();
            t.push((i, j, v));
        }
        let u = rng.uniform(0.1, 1.0);
        let diag = if cols.is_empty() {
            1.0 + u
        } else {
            (1.0 + u) * off
        };
        t.push((i, i, diag));
        let mut s = 10f64.powf(rng.uniform(-1.0, 1.0));
        if neg_fraction > 0.0 && rng.next_f64() < neg_fraction {
            s = -s;
        }
        for e in &mut t[start..] {
            e.2 *= s;
        }
    }
    t
}

/// Triplets of `B^T B + (C - C^T)`: `B = D + R`, `D_ii ~ U(0.5, 1.5)`, `R` the strictly upper
/// part of the pattern with standard normal values over `sqrt(k + 1)`; `C` standard normal on
/// the pattern over `sqrt(k + 1)`.
fn monotone(rng: &mut SplitMix64, pat: &[Vec<usize>], k: usize) -> Vec<(usize, usize, f64)> {
    let scale = 1.0 / ((k + 1) as f64).sqrt();
    let mut t = Vec::new();
    let mut row = Vec::new();
    for (i, cols) in pat.iter().enumerate() {
        row.clear();
        row.push((i, rng.uniform(0.5, 1.5)));
        for &j in cols.iter().filter(|&&j| j > i) {
            row.push((j, scale * rng.normal()));
        }
        // row i of B contributes b_ia b_ib to (B^T B)_ab
        for &(a, va) in &row {
            for &(b, vb) in &row {
                t.push((a, b, va * vb));
            }
        }
    }
    for (i, cols) in pat.iter().enumerate() {
        for &j in cols {
            let c = scale * rng.normal();
            t.push((i, j, c));
            t.push((j, i, -c));
        }
    }
    t
}

/// A random LCP of `family` with `n` unknowns, off-diagonal `density` in `(0, 1]` (module
/// documentation) and `seed`, with its known solution. Named
/// `random-lcp-<family>-n<n>-d<density>-s<seed>`. Cost: `O(n k^2)` for `psd`, `O(n k)`
/// otherwise (`k` off-diagonal entries per row). Errors: [`ProblemError::InvalidParameter`]
/// for `n = 0` or a density outside `(0, 1]`.
pub fn random_lcp(family: LcpFamily, n: usize, density: f64, seed: u64) -> Result<GeneratedLcp> {
    if n == 0 {
        return Err(invalid("n", n, "must be at least 1"));
    }
    if !(density > 0.0 && density <= 1.0) {
        return Err(invalid("density", density, "must lie in (0, 1]"));
    }
    let mut rng = SplitMix64::new(seed);
    let k = if n == 1 {
        0
    } else {
        ((density * (n - 1) as f64).round() as usize).clamp(1, n - 1)
    };
    let pat = pattern(&mut rng, n, k);
    let t = match family {
        LcpFamily::PMatrix => dominant(&mut rng, &pat, 0.0),
        LcpFamily::Psd => monotone(&mut rng, &pat, k),
        LcpFamily::Nonmonotone => dominant(&mut rng, &pat, 0.25),
    };
    let m = CscMatrix::from_triplets(n, n, &t)?;
    let mut z = vec![0.0; n];
    let mut w = vec![0.0; n];
    for i in 0..n {
        let active = rng.next_f64() < 0.5;
        let v = rng.uniform(0.1, 1.0);
        if active {
            z[i] = v;
        } else {
            w[i] = v;
        }
    }
    // q = w* - M z*
    let mut q = w;
    for (j, &zj) in z.iter().enumerate() {
        let (ri, va) = m.col(j);
        for (&i, &v) in ri.iter().zip(va) {
            q[i] -= v * zj;
        }
    }
    let params: BTreeMap<String, String> = [
        ("family", family.as_str().to_string()),
        ("n", n.to_string()),
        ("density", density.to_string()),
        ("offdiag_per_row", k.to_string()),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b))
    .collect();
    let prov = Provenance {
        source: "random-lcp".into(),
        format: "random-lcp".into(),
        derivation: "as-is".into(),
        parameters: params,
        seed: Some(seed),
        ..Default::default()
    };
    let name = format!("random-lcp-{family}-n{n}-d{density}-s{seed}");
    let instance = Instance::new(
        name,
        m,
        q,
        ConstraintSet::NonNegative,
        prov,
        ValidationOptions::default(),
    )?;
    Ok(GeneratedLcp {
        instance,
        solution: Some(z),
    })
}
