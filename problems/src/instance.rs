//! Problem instances `(N, r, K)`: minimise `f(gamma) = 1/2 gamma^T N gamma + r^T gamma` over
//! `gamma in K`, equivalently the complementarity problem `gamma in K`, `N gamma + r in K^*`,
//! `gamma^T (N gamma + r) = 0` (docs/formulation.md section 2).
//!
//! A Coulomb instance ([`ProblemClass::Coulomb`], built with [`Instance::new_coulomb`]) holds the
//! same data in fclib's naming, `W = N`, `q = r`, unknown `r` (fclib) `= gamma`, on the same
//! cones, but stands for the non-associated Coulomb law instead of the QP. Its `W` may be
//! non-symmetric (fclib's Capsules, Siconos' OneObject and Rover files): it is then kept as read,
//! and products `W x` are gathered along the columns of a stored `W^T`.

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
/// (full storage; a Coulomb instance may keep a non-symmetric `W`), finite; `r` finite of
/// length `n`; the constraint set valid for `n`.
#[derive(Clone, Debug)]
pub struct Instance {
    name: String,
    n_mat: CscMatrix,
    /// `N^T` when `N` is not symmetric (Coulomb instances only), else `None`.
    n_mat_t: Option<CscMatrix>,
    class: ProblemClass,
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
        check_parts(&n_mat, &r, &constraints)?;
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
        let class = constraints.qp_class();
        Ok(Self {
            name: name.into(),
            n_mat,
            n_mat_t: None,
            class,
            r,
            constraints,
            provenance,
            hash: std::sync::OnceLock::new(),
        })
    }

    /// Validate and build a Coulomb instance ([`ProblemClass::Coulomb`]): `u = W r + q` with
    /// `N = W` (`n x n`), `r = q` (length `n`), cones with `mu` (length `n / 3`).
    ///
    /// Unlike [`Instance::new`], a non-symmetric `W` is accepted and kept as read (Siconos solves
    /// the problem with `W` as stored); its relative asymmetry is recorded in the provenance
    /// parameter `asymmetry`. `opts.symmetrize` still replaces `W` by `(W + W^T)/2` (recorded in
    /// `symmetrized_from`), and an asymmetry within `opts.symmetry_tol` is removed as rounding.
    /// Errors: those of [`Instance::new`] except [`ProblemError::Asymmetric`].
    pub fn new_coulomb(
        name: impl Into<String>,
        w: CscMatrix,
        q: Vec<f64>,
        mu: Vec<f64>,
        mut provenance: Provenance,
        opts: ValidationOptions,
    ) -> Result<Self> {
        let k = ConstraintSet::CoulombCones { mu };
        check_parts(&w, &q, &k)?;
        let (rel, ..) = w.asymmetry();
        if rel > opts.symmetry_tol && !opts.symmetrize {
            provenance
                .parameters
                .insert("asymmetry".into(), format!("{rel:.3e}"));
            let n_mat_t = Some(w.transpose());
            return Ok(Self {
                name: name.into(),
                n_mat: w,
                n_mat_t,
                class: ProblemClass::Coulomb,
                r: q,
                constraints: k,
                provenance,
                hash: std::sync::OnceLock::new(),
            });
        }
        let mut inst = Instance::new(name, w, q, k, provenance, opts)?;
        inst.class = ProblemClass::Coulomb;
        Ok(inst)
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

    /// The Delassus matrix `N` (`n x n`, full storage; symmetric unless
    /// [`Instance::is_symmetric`] is false, possible only for a Coulomb instance).
    pub fn n_mat(&self) -> &CscMatrix {
        &self.n_mat
    }

    /// Consume the instance and return `N` and `r` (e.g. to reuse their storage).
    pub fn into_matrix_and_r(self) -> (CscMatrix, Vec<f64>) {
        (self.n_mat, self.r)
    }

    /// Replace `r` by `r_new` in place (no allocation), e.g. the shifted `r` of De Saxce's
    /// fixed point. Errors: [`ProblemError::SizeMismatch`], [`ProblemError::NonFinite`].
    pub fn replace_r(&mut self, r_new: &[f64]) -> Result<()> {
        if r_new.len() != self.r.len() {
            return Err(ProblemError::SizeMismatch {
                what: "r".into(),
                expected: self.r.len(),
                found: r_new.len(),
            });
        }
        if let Some((i, &v)) = r_new.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ProblemError::NonFinite {
                what: "r".into(),
                position: format!("[{i}]"),
                value: v,
            });
        }
        self.r.copy_from_slice(r_new);
        self.hash = std::sync::OnceLock::new();
        Ok(())
    }

    /// The vector `r` (length `n`); the gradient is `g = N gamma + r`.
    pub fn r(&self) -> &[f64] {
        &self.r
    }

    /// The constraint set `K`.
    pub fn constraints(&self) -> &ConstraintSet {
        &self.constraints
    }

    /// The problem class: that of the constraint set, or [`ProblemClass::Coulomb`] for an
    /// instance built with [`Instance::new_coulomb`] / [`Instance::into_coulomb`].
    pub fn class(&self) -> ProblemClass {
        self.class
    }

    /// Whether `N` is stored symmetric. Always true except for a Coulomb instance that kept a
    /// non-symmetric `W` ([`Instance::new_coulomb`]).
    pub fn is_symmetric(&self) -> bool {
        self.n_mat_t.is_none()
    }

    /// A matrix whose column `i` holds row `i` of `N`: `N` itself when symmetric, the stored
    /// `N^T` otherwise. Row products `(N x)_i` are dot products along its column `i`.
    pub fn row_matrix(&self) -> &CscMatrix {
        self.n_mat_t.as_ref().unwrap_or(&self.n_mat)
    }

    /// `y = N x` (one product; parallel gather, also for a non-symmetric `N`). Shapes: `n`.
    #[inline]
    pub fn matvec(&self, x: &[f64], y: &mut [f64]) {
        self.row_matrix().sym_matvec(x, y);
    }

    /// The Coulomb problem on this CCP instance's data ([`ProblemClass::Coulomb`]): same `N`,
    /// `r`, cones; name suffix `__ccp` replaced by `__coulomb` (added when absent); derivation
    /// `coulomb`. Errors: [`ProblemError::WrongClass`] when the instance is not a CCP.
    pub fn into_coulomb(mut self) -> Result<Instance> {
        if self.class != ProblemClass::Ccp {
            return Err(ProblemError::WrongClass {
                expected: "ccp".into(),
                found: self.class.to_string(),
            });
        }
        let base = self.name.strip_suffix("__ccp").unwrap_or(&self.name);
        self.name = format!("{base}__coulomb");
        self.class = ProblemClass::Coulomb;
        self.provenance.derivation = "coulomb".into();
        self.hash = std::sync::OnceLock::new();
        Ok(self)
    }

    /// The CCP relaxation of a Coulomb instance (Anitescu): same `N`, `r`, cones, class
    /// [`ProblemClass::Ccp`]; name suffix `__coulomb` replaced by `__ccp`, derivation
    /// `ccp-relaxation`. Errors: [`ProblemError::WrongClass`] when the instance is not a
    /// Coulomb problem, [`ProblemError::Asymmetric`] when its `W` is not symmetric (the QP
    /// needs a symmetric `N`; load with `symmetrize` to relax the symmetric part).
    pub fn ccp_relaxation(&self) -> Result<Instance> {
        if self.class != ProblemClass::Coulomb {
            return Err(ProblemError::WrongClass {
                expected: "coulomb".into(),
                found: self.class.to_string(),
            });
        }
        if !self.is_symmetric() {
            let (relative, max_abs, row, col) = self.n_mat.asymmetry();
            return Err(ProblemError::Asymmetric {
                relative,
                tol: 0.0,
                max_abs,
                row,
                col,
            });
        }
        let base = self.name.strip_suffix("__coulomb").unwrap_or(&self.name);
        let mut prov = self.provenance.clone();
        prov.derivation = "ccp-relaxation".into();
        Ok(Instance {
            name: format!("{base}__ccp"),
            n_mat: self.n_mat.clone(),
            n_mat_t: None,
            class: ProblemClass::Ccp,
            r: self.r.clone(),
            constraints: self.constraints.clone(),
            provenance: prov,
            hash: std::sync::OnceLock::new(),
        })
    }

    /// The storage behind `N`-products ([`crate::operator`]).
    pub fn operator_kind(&self) -> crate::OperatorKind {
        crate::OperatorKind::Csc
    }

    /// Bytes one `N`-product reads from the operator's arrays (values and indices; not `x`
    /// and `y`): the memory traffic a product cannot avoid, for bandwidth estimates.
    pub fn operator_bytes(&self) -> u64 {
        let m = self.row_matrix();
        (m.nnz() * (8 + std::mem::size_of::<usize>()) + m.col_ptr().len() * 8) as u64
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
            .get_or_init(|| content_hash(self.class, &self.n_mat, &self.r, &self.constraints))
    }

    /// `g = N gamma + r` into `g` (one `N`-product). Shapes: length `n`.
    #[inline]
    pub fn gradient(&self, gamma: &[f64], g: &mut [f64]) {
        self.matvec(gamma, g);
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

/// The checks of [`Instance::new`] other than symmetry.
fn check_parts(n_mat: &CscMatrix, r: &[f64], constraints: &ConstraintSet) -> Result<()> {
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
    Ok(())
}

fn content_hash(class: ProblemClass, n_mat: &CscMatrix, r: &[f64], k: &ConstraintSet) -> String {
    let mut h = Sha256::new();
    h.update(class.as_str().as_bytes());
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
    let (a, b) = k.parameters();
    for v in a.iter().chain(b) {
        h.update(v.to_bits().to_le_bytes());
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

    #[test]
    fn coulomb_keeps_a_nonsymmetric_w_and_multiplies_exactly() {
        // W = [[2, 1, 0], [0, 2, 0], [0, 0, 1]] (W[0][1] = 1, W[1][0] = 0)
        let w =
            CscMatrix::from_triplets(3, 3, &[(0, 0, 2.0), (0, 1, 1.0), (1, 1, 2.0), (2, 2, 1.0)])
                .unwrap();
        let i = Instance::new_coulomb(
            "c",
            w.clone(),
            vec![1.0, 0.0, 0.0],
            vec![0.5],
            Provenance::default(),
            ValidationOptions::default(),
        )
        .unwrap();
        assert_eq!(i.class(), ProblemClass::Coulomb);
        assert!(!i.is_symmetric());
        assert!(i.provenance().parameters.contains_key("asymmetry"));
        let mut g = [0.0; 3];
        i.gradient(&[1.0, 1.0, 1.0], &mut g);
        assert_eq!(g, [4.0, 2.0, 1.0]);
        // the CCP relaxation needs a symmetric N
        assert!(matches!(
            i.ccp_relaxation(),
            Err(ProblemError::Asymmetric { .. })
        ));
        // with symmetrize: (W + W^T)/2, and the class differs from the CCP's in the hash
        let s = Instance::new_coulomb(
            "c",
            w.clone(),
            vec![1.0, 0.0, 0.0],
            vec![0.5],
            Provenance::default(),
            ValidationOptions {
                symmetrize: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(s.is_symmetric() && s.n_mat().get(1, 0) == 0.5);
        let ccp = s.ccp_relaxation().unwrap();
        assert_eq!(ccp.class(), ProblemClass::Ccp);
        assert_ne!(ccp.hash(), s.hash());
        assert_eq!(ccp.clone().into_coulomb().unwrap().hash(), s.hash());
    }
}
