//! Problem instances `(N, r, K)`: minimise `f(gamma) = 1/2 gamma^T N gamma + r^T gamma` over
//! `gamma in K`, equivalently the complementarity problem `gamma in K`, `N gamma + r in K^*`,
//! `gamma^T (N gamma + r) = 0` (formulation.md section 2).

use crate::constraints::{ConstraintSet, ProblemClass};
use crate::error::{ProblemError, Result};
use crate::linalg::CscMatrix;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Default relative symmetry tolerance `||N - N^T||_F / ||N||_F` accepted without `--symmetrize`.
pub const DEFAULT_SYMMETRY_TOL: f64 = 1e-12;

/// Where an instance came from. Written to `instance.json` and to result manifests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Source file (as given) or generator name.
    pub source: String,
    /// Source format: `fclib-local`, `fclib-global`, `siconos-fc3d`, `siconos-lcp`, `bundle`,
    /// or a generator name.
    pub format: String,
    /// How the instance was derived from its source: `as-is`, `ccp-relaxation`,
    /// `normal-block-lcp`.
    pub derivation: String,
    /// Generator parameters or reader notes (free-form key/value pairs).
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
    /// Random seed of a generator, if any.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Time-step index of a generated instance, if any.
    #[serde(default)]
    pub step: Option<u64>,
    /// When `N` was replaced by `(N + N^T)/2`: the relative asymmetry it had before.
    #[serde(default)]
    pub symmetrized_from: Option<f64>,
}

/// Options applied while validating a matrix into an instance.
#[derive(Clone, Copy, Debug)]
pub struct ValidationOptions {
    /// Relative asymmetry `||N - N^T||_F / ||N||_F` above which construction fails.
    pub symmetry_tol: f64,
    /// Replace an asymmetric `N` by `(N + N^T)/2` (and record the asymmetry) instead of failing.
    pub symmetrize: bool,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        Self {
            symmetry_tol: DEFAULT_SYMMETRY_TOL,
            symmetrize: false,
        }
    }
}

/// A validated instance. Fields are private so the invariants hold: `N` square, symmetric
/// (full storage), finite; `r` finite of length `n`; the constraint set valid for `n`.
#[derive(Clone, Debug)]
pub struct Instance {
    name: String,
    n_mat: CscMatrix,
    r: Vec<f64>,
    constraints: ConstraintSet,
    provenance: Provenance,
    /// Computed on first use (hashing a large `N` costs more than building it, and a
    /// time stepper builds an instance every step but exports few).
    hash: std::sync::OnceLock<String>,
}

impl Instance {
    /// Validate and build an instance.
    ///
    /// Errors: [`ProblemError::NotSquare`], [`ProblemError::SizeMismatch`] (`r` or the set),
    /// [`ProblemError::NonFinite`] (in `r`), [`ProblemError::Asymmetric`] (unless
    /// `opts.symmetrize`), and the constraint-set errors of [`ConstraintSet::validate`].
    pub fn new(
        name: impl Into<String>,
        n_mat: CscMatrix,
        r: Vec<f64>,
        constraints: ConstraintSet,
        mut provenance: Provenance,
        opts: ValidationOptions,
    ) -> Result<Self> {
        let n = n_mat.nrows();
        if n_mat.ncols() != n {
            return Err(ProblemError::NotSquare {
                nrows: n,
                ncols: n_mat.ncols(),
            });
        }
        if r.len() != n {
            return Err(ProblemError::SizeMismatch {
                what: "r".into(),
                expected: n,
                found: r.len(),
            });
        }
        if let Some((i, &v)) = r.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ProblemError::NonFinite {
                what: "r".into(),
                position: format!("[{i}]"),
                value: v,
            });
        }
        constraints.validate(n)?;
        let (rel, max_abs, row, col) = n_mat.asymmetry();
        let n_mat = if rel > 0.0 && (opts.symmetrize || rel <= opts.symmetry_tol) {
            // Small asymmetry (rounding) is removed silently but still recorded; a large one
            // only when asked.
            provenance.symmetrized_from = Some(rel);
            n_mat.symmetrized()
        } else if rel > 0.0 {
            return Err(ProblemError::Asymmetric {
                relative: rel,
                tol: opts.symmetry_tol,
                max_abs,
                row,
                col,
            });
        } else {
            n_mat
        };
        Ok(Self {
            name: name.into(),
            n_mat,
            r,
            constraints,
            provenance,
            hash: std::sync::OnceLock::new(),
        })
    }

    /// Instance name (file stem plus derivation suffix, e.g. `Rover4396__lcp`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Rename (keeps everything else).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The Delassus matrix `N` (`n x n`, symmetric, full storage).
    pub fn n_mat(&self) -> &CscMatrix {
        &self.n_mat
    }

    /// Consume the instance and return `N` and `r` (e.g. to reuse their storage).
    pub fn into_matrix_and_r(self) -> (CscMatrix, Vec<f64>) {
        (self.n_mat, self.r)
    }

    /// The vector `r` (length `n`); the gradient is `g = N gamma + r`.
    pub fn r(&self) -> &[f64] {
        &self.r
    }

    /// The constraint set `K`.
    pub fn constraints(&self) -> &ConstraintSet {
        &self.constraints
    }

    /// The problem class.
    pub fn class(&self) -> ProblemClass {
        self.constraints.class()
    }

    /// Number of unknowns `n`.
    pub fn n(&self) -> usize {
        self.r.len()
    }

    /// Number of blocks: contacts for cones, `n` otherwise.
    pub fn n_blocks(&self) -> usize {
        self.n() / self.constraints.block_size()
    }

    /// Provenance metadata.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// Content hash: SHA-256 (hex) of the class, `N` (structure and value bits), `r` and the
    /// constraint data. Independent of name and provenance.
    pub fn hash(&self) -> &str {
        self.hash
            .get_or_init(|| content_hash(&self.n_mat, &self.r, &self.constraints))
    }

    /// `g = N gamma + r` into `g` (one `N`-product). Shapes: length `n`.
    #[inline]
    pub fn gradient(&self, gamma: &[f64], g: &mut [f64]) {
        self.n_mat.sym_matvec(gamma, g);
        for (gi, ri) in g.iter_mut().zip(&self.r) {
            *gi += ri;
        }
    }

    /// Objective `f(gamma) = 1/2 gamma^T N gamma + r^T gamma` (one `N`-product, allocates).
    pub fn objective(&self, gamma: &[f64]) -> f64 {
        let mut g = vec![0.0; self.n()];
        self.gradient(gamma, &mut g);
        objective_from_gradient(gamma, &g, &self.r)
    }

    /// The frictionless normal block of a Coulomb-cone instance as an LCP: `N_nn` (rows and
    /// columns `0, 3, 6, ...`), `r_n`, `gamma_n >= 0`. Name gets the suffix `__lcp`.
    /// Errors: [`ProblemError::WrongClass`] when the instance has no cones.
    pub fn normal_block_lcp(&self) -> Result<Instance> {
        if self.class() != ProblemClass::Ccp {
            return Err(ProblemError::WrongClass {
                expected: "ccp".into(),
                found: self.class().to_string(),
            });
        }
        let idx: Vec<usize> = (0..self.n()).step_by(3).collect();
        let n_mat = self.n_mat.principal_submatrix(&idx);
        let r = idx.iter().map(|&i| self.r[i]).collect();
        let mut prov = self.provenance.clone();
        prov.derivation = "normal-block-lcp".into();
        let base = self.name.strip_suffix("__ccp").unwrap_or(&self.name);
        Instance::new(
            format!("{base}__lcp"),
            n_mat,
            r,
            ConstraintSet::NonNegative,
            prov,
            ValidationOptions::default(),
        )
    }
}

/// `f = 1/2 gamma^T N gamma + r^T gamma = 1/2 gamma^T (g + r)` given `g = N gamma + r`.
#[inline]
pub fn objective_from_gradient(gamma: &[f64], g: &[f64], r: &[f64]) -> f64 {
    gamma
        .iter()
        .zip(g)
        .zip(r)
        .map(|((x, gi), ri)| x * (gi + ri))
        .sum::<f64>()
        * 0.5
}

fn content_hash(n_mat: &CscMatrix, r: &[f64], k: &ConstraintSet) -> String {
    let mut h = Sha256::new();
    h.update(k.class().as_str().as_bytes());
    h.update((r.len() as u64).to_le_bytes());
    for &p in n_mat.col_ptr() {
        h.update((p as u64).to_le_bytes());
    }
    for &i in n_mat.row_idx() {
        h.update((i as u64).to_le_bytes());
    }
    for &v in n_mat.values() {
        h.update(v.to_bits().to_le_bytes());
    }
    for &v in r {
        h.update(v.to_bits().to_le_bytes());
    }
    match k {
        ConstraintSet::NonNegative => {}
        ConstraintSet::Box { lo, hi } => {
            for v in lo.iter().chain(hi) {
                h.update(v.to_bits().to_le_bytes());
            }
        }
        ConstraintSet::CoulombCones { mu } => {
            for v in mu {
                h.update(v.to_bits().to_le_bytes());
            }
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym2() -> CscMatrix {
        CscMatrix::from_triplets(2, 2, &[(0, 0, 2.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 2.0)])
            .unwrap()
    }

    #[test]
    fn validation_errors() {
        let p = Provenance::default();
        let o = ValidationOptions::default();
        let a = CscMatrix::from_triplets(2, 3, &[]).unwrap();
        assert!(matches!(
            Instance::new(
                "x",
                a,
                vec![0.0; 2],
                ConstraintSet::NonNegative,
                p.clone(),
                o
            ),
            Err(ProblemError::NotSquare { .. })
        ));
        assert!(matches!(
            Instance::new(
                "x",
                sym2(),
                vec![0.0; 3],
                ConstraintSet::NonNegative,
                p.clone(),
                o
            ),
            Err(ProblemError::SizeMismatch { .. })
        ));
        assert!(matches!(
            Instance::new(
                "x",
                sym2(),
                vec![0.0, f64::NAN],
                ConstraintSet::NonNegative,
                p.clone(),
                o
            ),
            Err(ProblemError::NonFinite { .. })
        ));
        let asym =
            CscMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (0, 1, 1.0), (1, 1, 1.0)]).unwrap();
        let e = Instance::new(
            "x",
            asym.clone(),
            vec![0.0; 2],
            ConstraintSet::NonNegative,
            p.clone(),
            o,
        );
        assert!(
            matches!(e, Err(ProblemError::Asymmetric { row: 0, col: 1, .. })),
            "{e:?}"
        );
        let s = Instance::new(
            "x",
            asym,
            vec![0.0; 2],
            ConstraintSet::NonNegative,
            p,
            ValidationOptions {
                symmetrize: true,
                ..o
            },
        )
        .unwrap();
        assert_eq!(s.n_mat().get(1, 0), 0.5);
        assert!(s.provenance().symmetrized_from.unwrap() > 0.5);
    }

    #[test]
    fn objective_and_hash() {
        let i = Instance::new(
            "x",
            sym2(),
            vec![-1.0, 1.0],
            ConstraintSet::NonNegative,
            Provenance::default(),
            ValidationOptions::default(),
        )
        .unwrap();
        // f(1, 2) = 1/2 (2 + 4 + 8) + (-1 + 2) = 8
        assert_eq!(i.objective(&[1.0, 2.0]), 8.0);
        assert_eq!(i.hash().len(), 64);
        let j = i.clone().with_name("y");
        assert_eq!(i.hash(), j.hash());
    }
}
