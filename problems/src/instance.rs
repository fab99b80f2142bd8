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
use crate::operator::{BlockSymMatrix, MatrixFree, OperatorKind, BLOCK_MIN_NNZ};
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
    storage: Storage,
    /// `N` in CSC form when the storage is not CSC, formed on first use of [`Instance::n_mat`].
    csc: std::sync::OnceLock<CscMatrix>,
    /// `N^T` when `N` is not symmetric (Coulomb instances only), else `None`.
    n_mat_t: Option<CscMatrix>,
    class: ProblemClass,
    r: Vec<f64>,
    constraints: ConstraintSet,
    provenance: Provenance,
    /// Computed on first use (hashing a large `N` costs more than building it, and a
    /// time stepper builds an instance every step but exports few).
    hash: std::sync::OnceLock<String>,
    /// [`Instance::definiteness`], computed on first use.
    definiteness: std::sync::OnceLock<Definiteness>,
    /// The diagonal compliance `R` already added to `N` ([`Instance::with_compliance`]), kept
    /// for the record (writers, reports); `None` for a rigid problem.
    compliance: Option<Vec<f64>>,
}

/// Largest `n` for which [`Instance::definiteness`] computes the eigenvalues of the symmetric
/// part of `N` (a dense eigendecomposition: `8 n^2` bytes and `O(n^3)` flops, about 0.1 s at
/// `n = 1000` on one core).
pub const DEFINITENESS_MAX_N: usize = 1000;

/// Relative tolerance of [`Instance::definiteness`]: the symmetric part `S = (N + N^T)/2` counts
/// as positive semidefinite when `lambda_min(S) >= -DEFINITENESS_TOL max(1, |lambda|_max)`.
pub const DEFINITENESS_TOL: f64 = 1e-10;

/// What is known of the definiteness of the symmetric part `S = (N + N^T)/2` of `N`.
///
/// For an LCP `w = M z + q` this is the classic distinction (Cottle, Pang & Stone 1992, ch. 3):
/// a positive semidefinite `S` makes `M` a monotone (for symmetric `M`: convex QP) problem; an
/// indefinite one a non-monotone LCP that only pivoting or Newton methods attack.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Definiteness {
    /// `lambda_min(S) >= -DEFINITENESS_TOL max(1, |lambda|_max)`.
    PositiveSemidefinite {
        /// Smallest eigenvalue of `S`.
        min_eig: f64,
    },
    /// `S` has a clearly negative eigenvalue.
    Indefinite {
        /// Smallest eigenvalue of `S`.
        min_eig: f64,
    },
    /// Not computed: `n` above [`DEFINITENESS_MAX_N`], or a class whose `N` is positive
    /// semidefinite by construction or by assumption (box QP, CCP, Coulomb).
    Unknown,
}

impl Definiteness {
    /// `psd (min eig ...)`, `indefinite (min eig ...)` or `unknown`, for `cpbench info`.
    pub fn describe(&self) -> String {
        match self {
            Definiteness::PositiveSemidefinite { min_eig } => {
                format!("positive semidefinite (min eigenvalue {min_eig:.3e})")
            }
            Definiteness::Indefinite { min_eig } => {
                format!("indefinite (min eigenvalue {min_eig:.3e})")
            }
            Definiteness::Unknown => "not computed".into(),
        }
    }
}

impl Instance {
    /// Validate and build an instance.
    ///
    /// Errors: [`ProblemError::NotSquare`], [`ProblemError::SizeMismatch`] (`r` or the set),
    /// [`ProblemError::NonFinite`] (in `r`), [`ProblemError::Asymmetric`] (unless
    /// `opts.symmetrize`; never for an LCP), and the constraint-set errors of
    /// [`ConstraintSet::validate`].
    ///
    /// An LCP (`gamma >= 0`) is the general LCP `w = M z + q` of Cottle, Pang & Stone (1992)
    /// with `M = N`, `q = r`, `z = gamma`: any square `N` is valid, and a non-symmetric one is
    /// kept as read (its relative asymmetry `||N - N^T||_F / ||N||_F` recorded in the
    /// provenance parameter `asymmetry`) unless `opts.symmetrize`. The QP solvers refuse it
    /// (see [`Instance::definiteness`]); the LCP solvers (Lemke, Newton-FB, PSOR, ENUM) take it.
    pub fn new(
        name: impl Into<String>,
        n_mat: CscMatrix,
        r: Vec<f64>,
        constraints: ConstraintSet,
        mut provenance: Provenance,
        opts: ValidationOptions,
    ) -> Result<Self> {
        check_parts(&n_mat, &r, &constraints)?;
        let class = constraints.qp_class();
        // A large matrix: hash it while the symmetry check runs (the hash stands when the
        // matrix is kept as given, the usual case).
        let ((rel, max_abs, row, col), early_hash) = if n_mat.nnz() >= BLOCK_MIN_NNZ {
            rayon::join(
                || n_mat.asymmetry(),
                || Some(content_hash(class, &n_mat, &r, &constraints)),
            )
        } else {
            (n_mat.asymmetry(), None)
        };
        let hash = std::sync::OnceLock::new();
        if let Some(h) = early_hash.filter(|_| rel == 0.0) {
            let _ = hash.set(h);
        }
        let n_mat = if rel > 0.0 && (opts.symmetrize || rel <= opts.symmetry_tol) {
            // Small asymmetry (rounding) is removed silently but still recorded; a large one
            // only when asked.
            provenance.symmetrized_from = Some(rel);
            n_mat.symmetrized()
        } else if rel > 0.0 && constraints.qp_class() == ProblemClass::Lcp {
            // A general LCP: any square `M` is a valid problem, kept as read.
            return Ok(Self::keep_nonsymmetric(
                name.into(),
                n_mat,
                r,
                constraints,
                provenance,
                rel,
            ));
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
        let mut inst =
            Self::on_storage(name.into(), Storage::Csc(n_mat), r, constraints, provenance);
        inst.hash = hash;
        Ok(inst.with_auto_operator())
    }

    /// Build an instance on a compact storage of `N`, without forming the CSC matrix: the
    /// block storage ([`BlockSymMatrix`], symmetric by construction) or the matrix-free
    /// operator `N = D^T M^-1 D` ([`MatrixFree`], symmetric positive semidefinite by
    /// construction); either converts into a [`CompactOperator`]. Errors:
    /// [`ProblemError::SizeMismatch`] (`r`, the set, or a block storage's block size other
    /// than the set's), [`ProblemError::NonFinite`] (in `r`), and the constraint-set errors.
    pub fn on_operator(
        name: impl Into<String>,
        op: impl Into<CompactOperator>,
        r: Vec<f64>,
        constraints: ConstraintSet,
        provenance: Provenance,
    ) -> Result<Self> {
        let storage = match op.into() {
            CompactOperator::Block(b) => Storage::Block(b),
            CompactOperator::MatrixFree(m) => Storage::MatrixFree(m),
        };
        check_storage(&storage, &r, &constraints)?;
        Ok(Self::on_storage(
            name.into(),
            storage,
            r,
            constraints,
            provenance,
        ))
    }

    /// An instance of the set's class on `storage` (checked by the caller), with nothing
    /// derived yet: no formed CSC, no transpose, the hash computed on first use.
    fn on_storage(
        name: String,
        storage: Storage,
        r: Vec<f64>,
        constraints: ConstraintSet,
        provenance: Provenance,
    ) -> Self {
        Self {
            name,
            storage,
            csc: std::sync::OnceLock::new(),
            n_mat_t: None,
            class: constraints.qp_class(),
            r,
            constraints,
            provenance,
            hash: std::sync::OnceLock::new(),
            definiteness: std::sync::OnceLock::new(),
            compliance: None,
        }
    }

    /// An instance that keeps a non-symmetric `N` as read (general LCP, Coulomb `W`): `N^T`
    /// is stored for row access and products, the relative asymmetry `rel` is recorded in the
    /// provenance parameter `asymmetry`. The storage stays CSC.
    fn keep_nonsymmetric(
        name: String,
        n_mat: CscMatrix,
        r: Vec<f64>,
        constraints: ConstraintSet,
        mut provenance: Provenance,
        rel: f64,
    ) -> Self {
        provenance
            .parameters
            .insert("asymmetry".into(), format!("{rel:.3e}"));
        let n_mat_t = Some(n_mat.transpose());
        let mut inst = Self::on_storage(name, Storage::Csc(n_mat), r, constraints, provenance);
        inst.n_mat_t = n_mat_t;
        inst
    }

    /// The automatic storage choice: a symmetric CSC `N` with at least [`BLOCK_MIN_NNZ`]
    /// stored entries moves to the block storage (products 3-5x faster and 4x smaller on
    /// granular instances); smaller ones stay CSC (bit-identical to earlier results).
    fn with_auto_operator(mut self) -> Self {
        let bs = self.constraints.block_size();
        if let Storage::Csc(m) = &self.storage {
            if self.n_mat_t.is_none() && m.nnz() >= BLOCK_MIN_NNZ {
                // hash now, while the CSC arrays exist (afterwards it would form them again)
                let _ = self
                    .hash
                    .get_or_init(|| content_hash(self.class, m, &self.r, &self.constraints));
                // the conversion only fails on shapes the instance checks already excluded
                if let Ok(b) = BlockSymMatrix::from_csc(m, bs) {
                    self.storage = Storage::Block(b);
                }
            }
        }
        self
    }

    /// The same instance on another storage ([`OperatorKind`]): CSC and block convert both
    /// ways exactly (same entries, same content hash); a matrix-free instance can be formed
    /// into CSC or block storage. Errors: [`ProblemError::OperatorUnavailable`] for
    /// [`OperatorKind::MatrixFree`] from a stored matrix (its factors are not known) and for
    /// block storage of a non-symmetric `W`.
    pub fn with_operator(mut self, kind: OperatorKind) -> Result<Self> {
        if kind == self.operator_kind() {
            return Ok(self);
        }
        let unavailable = |reason: &str| ProblemError::OperatorUnavailable {
            kind: kind.to_string(),
            reason: reason.into(),
        };
        let bs = self.constraints.block_size();
        let storage = match (kind, &self.storage) {
            (OperatorKind::MatrixFree, _) => return Err(unavailable(
                "the instance holds N, not its factors D and M (export them with the generator; \
                 a global fclib or Siconos file keeps H and M when read with --operator \
                 matrix-free and --class ccp or coulomb)",
            )),
            (OperatorKind::Block, _) if self.n_mat_t.is_some() => {
                return Err(unavailable("block storage needs a symmetric N"))
            }
            (OperatorKind::Block, Storage::Csc(m)) => {
                Storage::Block(BlockSymMatrix::from_csc(m, bs)?)
            }
            (OperatorKind::Block, Storage::MatrixFree(op)) => {
                Storage::Block(BlockSymMatrix::from_csc(&op.to_csc()?, bs)?)
            }
            (OperatorKind::Csc, Storage::Block(b)) => Storage::Csc(b.to_csc()?),
            (OperatorKind::Csc, Storage::MatrixFree(op)) => Storage::Csc(op.to_csc()?),
            _ => return Ok(self),
        };
        if matches!(self.storage, Storage::MatrixFree(_)) {
            // a different operator representation: the hash follows the stored data
            self.hash = std::sync::OnceLock::new();
        }
        self.storage = storage;
        self.csc = std::sync::OnceLock::new();
        Ok(self)
    }

    /// The block storage of `N`, when that is the instance's storage.
    pub fn block_matrix(&self) -> Option<&BlockSymMatrix> {
        match &self.storage {
            Storage::Block(b) => Some(b),
            _ => None,
        }
    }

    /// The matrix-free operator, when that is the instance's storage.
    pub fn matrix_free(&self) -> Option<&MatrixFree> {
        match &self.storage {
            Storage::MatrixFree(op) => Some(op),
            _ => None,
        }
    }

    /// Diagonal block `c` of `N` (row-major, `bs^2` numbers of the first `bs^2` entries, `bs`
    /// the constraint set's block size). Cheap on every storage.
    #[inline]
    pub fn diag_block(&self, c: usize) -> [f64; 9] {
        let bs = self.constraints.block_size();
        match &self.storage {
            Storage::Csc(m) => {
                let mut out = [0.0; 9];
                for a in 0..bs {
                    for b in 0..bs {
                        out[a * bs + b] = m.get(bs * c + a, bs * c + b);
                    }
                }
                out
            }
            Storage::Block(bm) => bm.diag_block(c),
            Storage::MatrixFree(op) => op.diag_block(c, bs),
        }
    }

    /// State for Gauss-Seidel row access ([`Instance::block_row`]): the velocity
    /// `v = M^-1 D gamma` on the matrix-free storage (length `m`), empty otherwise. A
    /// matrix-free operator without row access (a general `M`, [`MatrixFree::row_access`])
    /// serves rows from the condensed `N = D^T M^-1 D` instead, formed here on first use and
    /// kept ([`Instance::n_mat`]; docs/cli.md, "Storage of N").
    pub fn row_state(&self, gamma: &[f64]) -> RowState {
        let mut st = RowState::default();
        self.refresh_row_state(gamma, &mut st);
        st
    }

    /// Bring a [`RowState`] up to date with `gamma` (one product's worth of work on the
    /// matrix-free storage, nothing otherwise; no allocation after the first call).
    #[inline]
    pub fn refresh_row_state(&self, gamma: &[f64], st: &mut RowState) {
        st.ordered = false;
        match &self.storage {
            Storage::MatrixFree(op) if op.has_row_access() => {
                st.v.resize(op.m(), 0.0);
                op.velocity_of(gamma, &mut st.v);
            }
            Storage::MatrixFree(_) => {
                // a general M: rows of the condensed W, formed once here
                let _ = self.n_mat();
            }
            Storage::Block(b) => b.prepare_rows(),
            Storage::Csc(_) => {}
        }
    }

    /// [`Instance::refresh_row_state`] for a sweep that will visit the blocks in increasing
    /// order and report each one done ([`Instance::block_done`]): on the block storage the
    /// lower terms of every row are then accumulated from the stored rows already visited
    /// ([`BlockSymMatrix::scatter_row`]) instead of read through the transposed index, so
    /// each stored block is read from memory once per sweep, in storage order; the rows'
    /// values are the same bit for bit. A row asked out of order ends the ordered sweep (the
    /// remaining rows are served through the transposed index, still exact). Other storages:
    /// the same as `refresh_row_state`. Allocation free after the first call.
    pub fn begin_ordered_sweep(&self, gamma: &[f64], st: &mut RowState) {
        self.refresh_row_state(gamma, st);
        if let Storage::Block(_) = &self.storage {
            st.lower.clear();
            st.lower.resize(self.n(), 0.0);
            st.next = 0;
            st.ordered = true;
        }
    }

    /// Block `c` of `gamma` holds its final value of the sweep (the ordered sweep of
    /// [`Instance::begin_ordered_sweep`]): on the block storage its terms are added to the
    /// lower terms of the later rows when `c` is the next row of the ordered sweep, and the
    /// ordered sweep ends otherwise. Nothing on the other storages or outside an ordered sweep.
    #[inline]
    pub fn block_done(&self, c: usize, gamma: &[f64], st: &mut RowState) {
        if let (true, Storage::Block(b)) = (st.ordered, &self.storage) {
            if c == st.next {
                b.scatter_row(c, gamma, &mut st.lower);
                st.next += 1;
            } else {
                st.ordered = false;
            }
        }
    }

    /// `out = (N gamma)_c` for block `c` (length `bs`) with the current `gamma`, on every
    /// storage: a column gather of the row matrix (CSC), the stored row plus the transposed
    /// index (block; the accumulated lower terms instead in an ordered sweep at its next row,
    /// [`Instance::begin_ordered_sweep`]), `D_c^T v` (matrix-free, `st` current).
    #[inline]
    pub fn block_row(&self, c: usize, gamma: &[f64], st: &RowState, out: &mut [f64]) {
        let bs = out.len();
        match &self.storage {
            Storage::MatrixFree(op) if !op.has_row_access() => {
                // a general M: the condensed W (formed by `refresh_row_state`), symmetric
                let rows = self.n_mat();
                for (a, o) in out.iter_mut().enumerate() {
                    let (ri, va) = rows.col(bs * c + a);
                    *o = ri.iter().zip(va).map(|(&k, &v)| v * gamma[k]).sum();
                }
            }
            Storage::Csc(_) => {
                let rows = self.row_matrix();
                for (a, o) in out.iter_mut().enumerate() {
                    let (ri, va) = rows.col(bs * c + a);
                    *o = ri.iter().zip(va).map(|(&k, &v)| v * gamma[k]).sum();
                }
            }
            Storage::Block(b) if st.ordered && c == st.next => {
                b.block_row_product_from(c, gamma, &st.lower, out)
            }
            Storage::Block(b) => b.block_row_product(c, gamma, out),
            Storage::MatrixFree(op) => {
                op.block_row(c, bs, &st.v, out);
                if let Some(s) = op.shift() {
                    for (a, o) in out.iter_mut().enumerate() {
                        *o += s[bs * c + a] * gamma[bs * c + a];
                    }
                }
            }
        }
    }

    /// The blocks coupled to block `c` (`N_cd != 0` or `N_dc != 0` can hold, `d != c`),
    /// sorted, without repeats, into `out` (cleared first): the stored pattern of the CSC
    /// storage (rows and columns of a non-symmetric `N`), the stored blocks of the block
    /// storage, the contacts sharing a generalised velocity on the matrix-free one. The graph
    /// behind [`crate::colouring`].
    pub fn block_neighbours(&self, c: usize, out: &mut Vec<u32>) {
        out.clear();
        let bs = self.constraints.block_size();
        match &self.storage {
            Storage::Csc(m) => {
                let mut push = |mat: &CscMatrix| {
                    for a in 0..bs {
                        for &k in mat.col(bs * c + a).0 {
                            if k / bs != c {
                                out.push((k / bs) as u32);
                            }
                        }
                    }
                };
                push(m);
                if let Some(t) = &self.n_mat_t {
                    push(t);
                }
            }
            Storage::Block(b) => b.block_neighbours(c, out),
            Storage::MatrixFree(op) if !op.has_row_access() => {
                // a general M: the pattern of the condensed W
                for a in 0..bs {
                    for &k in self.n_mat().col(bs * c + a).0 {
                        if k / bs != c {
                            out.push((k / bs) as u32);
                        }
                    }
                }
            }
            Storage::MatrixFree(op) => op.contact_neighbours(c, bs, out),
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Tell the row state that `gamma_c` changed by `delta` (length `bs`): `v += M^-1 D_c
    /// delta` on the matrix-free storage with row access, nothing otherwise.
    #[inline]
    pub fn block_changed(&self, c: usize, delta: &[f64], st: &mut RowState) {
        if let Storage::MatrixFree(op) = &self.storage {
            if op.has_row_access() {
                op.block_changed(c, delta.len(), delta, &mut st.v);
            }
        }
    }

    /// Validate and build a 3-D Coulomb instance ([`ProblemClass::Coulomb`]): `u = W r + q` with
    /// `N = W` (`n x n`), `r = q` (length `n`), cones with `mu` (length `n / 3`). The same as
    /// [`Instance::new_coulomb_dim`] with `dim = 3`.
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
        provenance: Provenance,
        opts: ValidationOptions,
    ) -> Result<Self> {
        Self::new_coulomb_dim(name, w, q, mu, 3, provenance, opts)
    }

    /// Validate and build a Coulomb instance on `dim`-D cones (`dim` 2 or 3 unknowns per
    /// contact, normal first): `N = W` (`n x n`), `r = q` (length `n`), `mu` (length
    /// `n / dim`). See [`Instance::new_coulomb`]; errors also
    /// [`ProblemError::UnsupportedConeDim`] and [`ProblemError::NotMultipleOfConeDim`].
    pub fn new_coulomb_dim(
        name: impl Into<String>,
        w: CscMatrix,
        q: Vec<f64>,
        mu: Vec<f64>,
        dim: usize,
        provenance: Provenance,
        opts: ValidationOptions,
    ) -> Result<Self> {
        let k = ConstraintSet::coulomb_dim(mu, dim);
        Self::new_coulomb_set(name, w, q, k, provenance, opts)
    }

    /// Validate and build a Coulomb instance on the cone set `k` (a
    /// [`ConstraintSet::CoulombCones`], possibly with joint blocks,
    /// [`ConstraintSet::coulomb_jointed`]): `N = W` (`n x n`), `r = q` (length `n`). See
    /// [`Instance::new_coulomb`]; errors also those of the set's validation
    /// ([`ProblemError::JointCount`], [`ProblemError::JointFriction`]) and
    /// [`ProblemError::WrongClass`] for a set that is not cones.
    pub fn new_coulomb_set(
        name: impl Into<String>,
        w: CscMatrix,
        q: Vec<f64>,
        k: ConstraintSet,
        provenance: Provenance,
        opts: ValidationOptions,
    ) -> Result<Self> {
        if k.cone_dim().is_none() {
            return Err(ProblemError::WrongClass {
                expected: "Coulomb cones".into(),
                found: k.qp_class().to_string(),
            });
        }
        Self::new_keeping_asymmetry(name, w, q, k, ProblemClass::Coulomb, provenance, opts)
    }

    /// The constructor of the classes that keep a non-symmetric `W` as read (Coulomb, BLCP):
    /// checks the parts, keeps `W` ([`Instance::keep_nonsymmetric`]) when its asymmetry
    /// exceeds `opts.symmetry_tol` and `opts.symmetrize` is off, otherwise builds through
    /// [`Instance::new`]; the instance then gets `class`.
    fn new_keeping_asymmetry(
        name: impl Into<String>,
        w: CscMatrix,
        q: Vec<f64>,
        k: ConstraintSet,
        class: ProblemClass,
        provenance: Provenance,
        opts: ValidationOptions,
    ) -> Result<Self> {
        check_parts(&w, &q, &k)?;
        let (rel, ..) = w.asymmetry();
        let mut inst = if rel > opts.symmetry_tol && !opts.symmetrize {
            Self::keep_nonsymmetric(name.into(), w, q, k, provenance, rel)
        } else {
            Instance::new(name, w, q, k, provenance, opts)?
        };
        inst.class = class;
        Ok(inst)
    }

    /// Validate and build a boxed LCP ([`ProblemClass::Blcp`], friction boxes
    /// [`ConstraintSet::FrictionBox`]): `u = W gamma + q` with `N = W` (`n x n`), `r = q`,
    /// `mu` of length `n / 3`. A non-symmetric `W` is kept as read, as by
    /// [`Instance::new_coulomb`] (same options, same errors).
    pub fn new_blcp(
        name: impl Into<String>,
        w: CscMatrix,
        q: Vec<f64>,
        mu: Vec<f64>,
        provenance: Provenance,
        opts: ValidationOptions,
    ) -> Result<Self> {
        let k = ConstraintSet::FrictionBox { mu };
        Self::new_keeping_asymmetry(name, w, q, k, ProblemClass::Blcp, provenance, opts)
    }

    /// The boxed LCP of ODE-style engines on this frictional instance's data (CCP or Coulomb):
    /// same `W` (kept as stored, also when non-symmetric), `q`, `mu`, on friction boxes
    /// `|gamma_t,i| <= mu gamma_n` ([`ProblemClass::Blcp`]); name suffix `__ccp` / `__coulomb`
    /// replaced by `__blcp` (added when absent), derivation `blcp` (parameter `source_class`).
    /// The unknowns are the contact impulses themselves (3 per contact, normal first), so a
    /// BLCP solution is compared with the other formulations as it is.
    /// Errors: [`ProblemError::WrongClass`] when the instance is not a CCP or Coulomb problem,
    /// [`ProblemError::JointsUnsupported`] when it has joint blocks.
    pub fn blcp(&self) -> Result<Instance> {
        self.constraints.refuse_joints(
            "the boxed LCP (--class blcp)",
            "friction boxes have no free blocks",
        )?;
        // 3-D Coulomb cones: the CCP or the Coulomb problem
        let mu = match (self.constraints.cone_dim(), self.constraints.friction()) {
            (Some(3), Some(mu)) => mu,
            _ => {
                return Err(ProblemError::WrongClass {
                    expected: "ccp or coulomb on 3-D cones (in 2-D the box is the cone: \
                               use --class coulomb)"
                        .into(),
                    found: self.class.to_string(),
                })
            }
        };
        let base = self
            .name
            .strip_suffix("__ccp")
            .or_else(|| self.name.strip_suffix("__coulomb"))
            .unwrap_or(&self.name);
        let mut prov = self.provenance.clone();
        prov.derivation = "blcp".into();
        prov.parameters
            .insert("source_class".into(), self.class.to_string());
        Ok(Instance {
            name: format!("{base}__blcp"),
            storage: self.storage.clone(),
            csc: self.csc.clone(),
            n_mat_t: self.n_mat_t.clone(),
            class: ProblemClass::Blcp,
            r: self.r.clone(),
            constraints: ConstraintSet::FrictionBox { mu: mu.to_vec() },
            provenance: prov,
            hash: std::sync::OnceLock::new(),
            definiteness: std::sync::OnceLock::new(),
            compliance: self.compliance.clone(),
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

    /// The Delassus matrix `N` (`n x n`, full storage; symmetric unless
    /// [`Instance::is_symmetric`] is false, possible for a Coulomb instance and a general LCP).
    ///
    /// On the block or matrix-free storage the CSC matrix is formed on first use and kept
    /// (memory: `16 nnz(N)` bytes): meant for solvers that factorise `N`. Writers that need it
    /// once use [`Instance::csc`].
    #[inline]
    pub fn n_mat(&self) -> &CscMatrix {
        match &self.storage {
            Storage::Csc(m) => m,
            _ => self.csc.get_or_init(|| self.form_csc()),
        }
    }

    /// `N` in CSC form, borrowed when that is the storage (or already formed), else formed
    /// for the caller and not kept.
    pub fn csc(&self) -> std::borrow::Cow<'_, CscMatrix> {
        match (&self.storage, self.csc.get()) {
            (Storage::Csc(m), _) => std::borrow::Cow::Borrowed(m),
            (_, Some(m)) => std::borrow::Cow::Borrowed(m),
            _ => std::borrow::Cow::Owned(self.form_csc()),
        }
    }

    fn form_csc(&self) -> CscMatrix {
        match &self.storage {
            Storage::Csc(m) => m.clone(),
            // both conversions only re-arrange validated finite entries
            Storage::Block(b) => b.to_csc().expect("block storage forms a valid CSC matrix"),
            Storage::MatrixFree(op) => op.to_csc().expect("D^T M^-1 D of finite factors"),
        }
    }

    /// Number of stored entries of `N` in CSC form (both triangles), without forming it on
    /// the block storage; for the matrix-free storage, that of `D`.
    pub fn nnz(&self) -> usize {
        match &self.storage {
            Storage::Csc(m) => m.nnz(),
            Storage::Block(b) => b.full_nnz(),
            Storage::MatrixFree(op) => op.d().nnz(),
        }
    }

    /// Consume the instance and return `N` and `r` (e.g. to reuse their storage).
    pub fn into_matrix_and_r(self) -> (CscMatrix, Vec<f64>) {
        match self.storage {
            Storage::Csc(m) => (m, self.r),
            _ => {
                let m = self.csc.get().cloned().unwrap_or_else(|| self.form_csc());
                (m, self.r)
            }
        }
    }

    /// Consume an instance on the block storage and return its matrix and `r` (e.g. to reuse
    /// their storage); any other instance is given back unchanged as `Err`.
    #[allow(clippy::result_large_err)]
    pub fn into_block_and_r(self) -> std::result::Result<(BlockSymMatrix, Vec<f64>), Self> {
        match self.storage {
            Storage::Block(b) => Ok((b, self.r)),
            storage => Err(Self { storage, ..self }),
        }
    }

    /// Replace `r` by `r_new` in place (no allocation), e.g. the shifted `r` of De Saxce's
    /// fixed point. Errors: [`ProblemError::SizeMismatch`], [`ProblemError::NonFinite`].
    pub fn replace_r(&mut self, r_new: &[f64]) -> Result<()> {
        check_r(self.r.len(), r_new)?;
        self.r.copy_from_slice(r_new);
        self.hash = std::sync::OnceLock::new();
        Ok(())
    }

    /// The vector `r` (length `n`); the gradient is `g = N gamma + r`.
    #[inline]
    pub fn r(&self) -> &[f64] {
        &self.r
    }

    /// The constraint set `K`.
    #[inline]
    pub fn constraints(&self) -> &ConstraintSet {
        &self.constraints
    }

    /// The problem class: that of the constraint set, or [`ProblemClass::Coulomb`] for an
    /// instance built with [`Instance::new_coulomb`] / [`Instance::into_coulomb`].
    pub fn class(&self) -> ProblemClass {
        self.class
    }

    /// The definiteness of the symmetric part `(N + N^T)/2` of an LCP's `N`
    /// ([`Definiteness`]), computed on first use from its dense eigenvalues when
    /// `n <= DEFINITENESS_MAX_N`; [`Definiteness::Unknown`] otherwise and for the other classes.
    /// The QP solvers refuse an LCP whose `N` is non-symmetric or indefinite.
    pub fn definiteness(&self) -> Definiteness {
        *self.definiteness.get_or_init(|| {
            if self.class != ProblemClass::Lcp || self.n() > DEFINITENESS_MAX_N {
                return Definiteness::Unknown;
            }
            let n = self.n();
            let m = self.csc();
            let mut s = faer::Mat::<f64>::zeros(n, n);
            for j in 0..n {
                let (ri, va) = m.col(j);
                for (&i, &v) in ri.iter().zip(va) {
                    s[(i, j)] += 0.5 * v;
                    s[(j, i)] += 0.5 * v;
                }
            }
            match s.self_adjoint_eigenvalues(faer::Side::Lower) {
                Ok(ev) if !ev.is_empty() => {
                    let min_eig = ev[0];
                    let scale = ev.iter().fold(1.0f64, |a, e| a.max(e.abs()));
                    if min_eig >= -DEFINITENESS_TOL * scale {
                        Definiteness::PositiveSemidefinite { min_eig }
                    } else {
                        Definiteness::Indefinite { min_eig }
                    }
                }
                _ => Definiteness::Unknown,
            }
        })
    }

    /// Whether `N` is stored symmetric. Always true except for a Coulomb instance that kept a
    /// non-symmetric `W` ([`Instance::new_coulomb`]) and a general LCP with a non-symmetric `M`
    /// ([`Instance::new`]).
    pub fn is_symmetric(&self) -> bool {
        self.n_mat_t.is_none()
    }

    /// A matrix whose column `i` holds row `i` of `N`: `N` itself when symmetric, the stored
    /// `N^T` otherwise. Row products `(N x)_i` are dot products along its column `i`.
    ///
    /// Forms `N` in CSC form on the block and matrix-free storages ([`Instance::n_mat`]);
    /// Gauss-Seidel solvers use [`Instance::block_row`] instead.
    #[inline]
    pub fn row_matrix(&self) -> &CscMatrix {
        self.n_mat_t.as_ref().unwrap_or_else(|| self.n_mat())
    }

    /// `y = N x` (one product; parallel, on whichever storage the instance holds; also for a
    /// non-symmetric `N`). Shapes: `n`.
    #[inline]
    pub fn matvec(&self, x: &[f64], y: &mut [f64]) {
        match &self.storage {
            Storage::Csc(m) => self.n_mat_t.as_ref().unwrap_or(m).sym_matvec(x, y),
            Storage::Block(b) => b.matvec(x, y),
            Storage::MatrixFree(op) => op.matvec(x, y),
        }
    }

    /// Largest eigenvalue of `N` by `iters` power iterations from the all-ones vector.
    pub fn power_iteration(&self, iters: usize) -> f64 {
        match &self.storage {
            Storage::Csc(m) => m.power_iteration(iters),
            Storage::Block(_) | Storage::MatrixFree(_) => {
                let n = self.n();
                let (mut x, mut y) = (vec![0.0; n], vec![0.0; n]);
                crate::linalg::power_iteration(
                    |x, y| self.matvec(x, y),
                    &mut x,
                    &mut y,
                    crate::linalg::PowerRule::Fixed { iters },
                )
                .0
            }
        }
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
        self.provenance.derivation = "coulomb".into();
        Ok(self.with_coulomb_class())
    }

    /// The same instance as the Coulomb problem (class [`ProblemClass::Coulomb`]), name and
    /// provenance kept: a reader's Coulomb problem on a compact (symmetric) storage, whose
    /// cones the caller checked.
    pub(crate) fn with_coulomb_class(mut self) -> Instance {
        self.class = ProblemClass::Coulomb;
        self.hash = std::sync::OnceLock::new();
        self
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
            let (relative, max_abs, row, col) = self.n_mat().asymmetry();
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
            storage: self.storage.clone(),
            csc: self.csc.clone(),
            n_mat_t: None,
            class: ProblemClass::Ccp,
            r: self.r.clone(),
            constraints: self.constraints.clone(),
            provenance: prov,
            hash: std::sync::OnceLock::new(),
            definiteness: self.definiteness.clone(),
            compliance: self.compliance.clone(),
        })
    }

    /// The storage behind `N`-products ([`crate::operator`]).
    #[inline]
    pub fn operator_kind(&self) -> OperatorKind {
        match &self.storage {
            Storage::Csc(_) => OperatorKind::Csc,
            Storage::Block(_) => OperatorKind::Block,
            Storage::MatrixFree(_) => OperatorKind::MatrixFree,
        }
    }

    /// Bytes one `N`-product reads from the operator's arrays (values and indices; not `x`
    /// and `y`): the memory traffic a product cannot avoid, for bandwidth estimates.
    pub fn operator_bytes(&self) -> u64 {
        match &self.storage {
            Storage::Csc(m) => {
                let m = self.n_mat_t.as_ref().unwrap_or(m);
                (m.nnz() * (8 + std::mem::size_of::<usize>()) + m.col_ptr().len() * 8) as u64
            }
            Storage::Block(b) => b.bytes(),
            Storage::MatrixFree(op) => op.bytes(),
        }
    }

    /// Number of unknowns `n`.
    #[inline]
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
    /// constraint data (with the joint count of a set that has joints). Independent of name
    /// and provenance.
    pub fn hash(&self) -> &str {
        self.hash.get_or_init(|| self.compute_hash())
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

    /// The frictionless normal block of a Coulomb-cone instance (CCP or Coulomb) as an LCP:
    /// `N_nn` (rows and columns `0, d, 2d, ...`, `d` the cone dimension), `r_n`, `gamma_n >= 0`. Name gets the suffix
    /// `__lcp`. A non-symmetric `W` gives a general LCP ([`Instance::new`]).
    /// Errors: [`ProblemError::WrongClass`] when the instance has no cones,
    /// [`ProblemError::JointsUnsupported`] when it has joint blocks.
    pub fn normal_block_lcp(&self) -> Result<Instance> {
        self.constraints.refuse_joints(
            "the normal-block LCP (--class lcp)",
            "a joint's rows are equalities, not gamma_n >= 0",
        )?;
        if !matches!(self.class(), ProblemClass::Ccp | ProblemClass::Coulomb) {
            return Err(ProblemError::WrongClass {
                expected: "ccp or coulomb".into(),
                found: self.class().to_string(),
            });
        }
        let idx: Vec<usize> = (0..self.n())
            .step_by(self.constraints.block_size())
            .collect();
        let n_mat = self.csc().principal_submatrix(&idx);
        let r = idx.iter().map(|&i| self.r[i]).collect();
        let mut prov = self.provenance.clone();
        prov.derivation = "normal-block-lcp".into();
        // the asymmetry of W is not that of its normal block (recorded anew if it has one)
        prov.parameters.remove("asymmetry");
        let base = self
            .name
            .strip_suffix("__ccp")
            .or_else(|| self.name.strip_suffix("__coulomb"))
            .unwrap_or(&self.name);
        let lcp = Instance::new(
            format!("{base}__lcp"),
            n_mat,
            r,
            ConstraintSet::NonNegative,
            prov,
            ValidationOptions::default(),
        )?;
        // the normal rows' compliance is already in N_nn: recorded, not added again
        match &self.compliance {
            Some(c) => lcp.with_compliance_included(idx.iter().map(|&i| c[i]).collect()),
            None => Ok(lcp),
        }
    }

    /// The compliant problem `(N + R, r)` of a diagonal compliance `R` (length `n`, entries
    /// `>= 0`; units those of `N`: velocity per impulse, m/(N s) in the stepper's data), the
    /// regularisation of MuJoCo's soft constraints and of Drake's SAP (Castro, Permenter & Han
    /// 2022, eq. 13: the dual `min 1/2 gamma^T (W + R) gamma + (v* - v_hat)^T gamma` over the
    /// cones); docs/formulation.md, "Compliant contact". `R` is added to the diagonal of the
    /// stored `N` (and of `N^T` for a non-symmetric `W`), so that every solver, residual and
    /// writer sees `N + R`; [`Instance::compliance`] keeps `R`. A second call adds to the first
    /// (the record is the sum); `R = 0` gives the rigid problem back with `R` recorded. The
    /// storage kind is kept (a matrix-free `N` keeps `R` as a diagonal shift beside `D` and
    /// `M`, [`MatrixFree::with_shift`]). The content hash covers `N + R`.
    /// Errors: [`ProblemError::SizeMismatch`] (length), [`ProblemError::NonFinite`] and
    /// [`ProblemError::NegativeCompliance`] naming the first bad entry.
    pub fn with_compliance(mut self, compliance: Vec<f64>) -> Result<Self> {
        check_compliance(self.n(), &compliance)?;
        let plus = |m: &CscMatrix| m.plus_diagonal(&compliance);
        let storage = match &self.storage {
            Storage::Csc(m) => Storage::Csc(plus(m)?),
            Storage::Block(b) => Storage::Block(BlockSymMatrix::from_csc(
                &plus(&b.to_csc()?)?,
                b.block_size(),
            )?),
            // kept beside the factors: a primal method (`sap`) needs D, M and R apart
            Storage::MatrixFree(op) => Storage::MatrixFree(op.clone().with_shift(&compliance)),
        };
        if let Some(t) = &self.n_mat_t {
            self.n_mat_t = Some(plus(t)?);
        }
        let total = match self.compliance.take() {
            Some(old) => old.iter().zip(&compliance).map(|(a, b)| a + b).collect(),
            None => compliance,
        };
        self.storage = storage;
        self.csc = std::sync::OnceLock::new();
        self.hash = std::sync::OnceLock::new();
        self.definiteness = std::sync::OnceLock::new();
        self.compliance = Some(total);
        Ok(self)
    }

    /// Record the compliance `R` of an instance whose `N` already holds it (a reader of a
    /// file written from a compliant instance: `N + R` stored with `R` beside it); `N` is not
    /// changed. Errors: those of [`Instance::with_compliance`].
    pub fn with_compliance_included(mut self, compliance: Vec<f64>) -> Result<Self> {
        check_compliance(self.n(), &compliance)?;
        self.compliance = Some(compliance);
        Ok(self)
    }

    /// The diagonal compliance `R` included in `N` ([`Instance::with_compliance`]; length
    /// `n`), `None` for a rigid problem.
    pub fn compliance(&self) -> Option<&[f64]> {
        self.compliance.as_deref()
    }
}

/// `R` has length `n` and finite entries `>= 0` ([`Instance::with_compliance`]).
fn check_compliance(n: usize, compliance: &[f64]) -> Result<()> {
    check_finite_vector("compliance R", n, compliance)?;
    match compliance.iter().position(|&v| v < 0.0) {
        Some(row) => Err(ProblemError::NegativeCompliance {
            row,
            value: compliance[row],
        }),
        None => Ok(()),
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

impl Instance {
    fn compute_hash(&self) -> String {
        match &self.storage {
            Storage::Csc(m) => content_hash(self.class, m, &self.r, &self.constraints),
            // the hash of the CSC form: independent of the storage
            Storage::Block(_) => content_hash(self.class, &self.csc(), &self.r, &self.constraints),
            Storage::MatrixFree(op) => {
                // its own data: D, the diagonal of M, r, the set
                let mut h = Sha256::new();
                h.update(b"matrix-free");
                h.update(content_hash(self.class, op.d(), &self.r, &self.constraints));
                match op.mass_matrix() {
                    // a general M (a global problem kept matrix-free): its CSC arrays
                    Some(m) => {
                        h.update(b"M");
                        h.update(content_hash(
                            self.class,
                            m,
                            &[],
                            &ConstraintSet::NonNegative,
                        ));
                    }
                    None => {
                        for v in op.mass_diagonal() {
                            h.update(v.to_bits().to_le_bytes());
                        }
                    }
                }
                for v in op.shift().unwrap_or_default() {
                    h.update(v.to_bits().to_le_bytes());
                }
                h.finalize().iter().map(|b| format!("{b:02x}")).collect()
            }
        }
    }
}

/// Gauss-Seidel row-access state of an instance ([`Instance::row_state`]).
#[derive(Clone, Debug, Default)]
pub struct RowState {
    /// `v = M^-1 D gamma` on the matrix-free storage; empty otherwise.
    v: Vec<f64>,
    /// Ordered sweep on the block storage ([`Instance::begin_ordered_sweep`]): the lower terms
    /// `sum_{K < I} N_IK gamma_K` accumulated for every row `I` (length `n`), else empty.
    lower: Vec<f64>,
    /// The next block row of the ordered sweep (the rows before it are done).
    next: usize,
    /// Whether the ordered sweep is on (cleared by any row out of order).
    ordered: bool,
}

impl RowState {
    /// The next block row of an ordered sweep ([`Instance::begin_ordered_sweep`]; the rows
    /// before it are done), `None` outside one or after a row out of order ended it.
    pub fn ordered_next(&self) -> Option<usize> {
        self.ordered.then_some(self.next)
    }
}

/// A compact storage of `N` that an instance can be built on without its CSC matrix
/// ([`Instance::on_operator`]).
#[derive(Debug)]
pub enum CompactOperator {
    /// The block storage ([`BlockSymMatrix`]).
    Block(BlockSymMatrix),
    /// The matrix-free operator `N = D^T M^-1 D` ([`MatrixFree`]).
    MatrixFree(MatrixFree),
}

impl From<BlockSymMatrix> for CompactOperator {
    fn from(b: BlockSymMatrix) -> Self {
        CompactOperator::Block(b)
    }
}

impl From<MatrixFree> for CompactOperator {
    fn from(m: MatrixFree) -> Self {
        CompactOperator::MatrixFree(m)
    }
}

/// The storage behind `N` ([`OperatorKind`]).
#[derive(Clone, Debug)]
enum Storage {
    Csc(CscMatrix),
    Block(BlockSymMatrix),
    MatrixFree(MatrixFree),
}

/// The checks of [`Instance::on_operator`].
fn check_storage(storage: &Storage, r: &[f64], constraints: &ConstraintSet) -> Result<()> {
    let n = match storage {
        Storage::Csc(m) => m.nrows(),
        Storage::Block(b) => b.n(),
        Storage::MatrixFree(op) => op.n(),
    };
    check_vector_and_set(n, r, constraints)?;
    match storage {
        Storage::Block(b) if b.block_size() != constraints.block_size() => {
            Err(ProblemError::SizeMismatch {
                what: "block size of N against the constraint set".into(),
                expected: constraints.block_size(),
                found: b.block_size(),
            })
        }
        _ => Ok(()),
    }
}

/// Checks of `r` and the set against `n`.
fn check_vector_and_set(n: usize, r: &[f64], constraints: &ConstraintSet) -> Result<()> {
    check_r(n, r)?;
    constraints.validate(n)?;
    Ok(())
}

/// `r` has length `n` ([`ProblemError::SizeMismatch`]) and finite entries
/// ([`ProblemError::NonFinite`], naming the first one).
fn check_r(n: usize, r: &[f64]) -> Result<()> {
    check_finite_vector("r", n, r)
}

/// The vector `what` has length `n` ([`ProblemError::SizeMismatch`]) and finite entries
/// ([`ProblemError::NonFinite`], naming the first one).
fn check_finite_vector(what: &str, n: usize, v: &[f64]) -> Result<()> {
    if v.len() != n {
        return Err(ProblemError::SizeMismatch {
            what: what.into(),
            expected: n,
            found: v.len(),
        });
    }
    if let Some((i, &x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(ProblemError::NonFinite {
            what: what.into(),
            position: format!("[{i}]"),
            value: x,
        });
    }
    Ok(())
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
    check_vector_and_set(n, r, constraints)
}

fn content_hash(class: ProblemClass, n_mat: &CscMatrix, r: &[f64], k: &ConstraintSet) -> String {
    let mut h = HashFeed::default();
    h.h.update(class.as_str().as_bytes());
    h.h.update((r.len() as u64).to_le_bytes());
    for &p in n_mat.col_ptr() {
        h.push((p as u64).to_le_bytes());
    }
    for &i in n_mat.row_idx() {
        h.push((i as u64).to_le_bytes());
    }
    for &v in n_mat.values() {
        h.push(v.to_bits().to_le_bytes());
    }
    for &v in r {
        h.push(v.to_bits().to_le_bytes());
    }
    let (a, b) = k.parameters();
    for v in a.iter().chain(b) {
        h.push(v.to_bits().to_le_bytes());
    }
    if k.cone_dim() == Some(2) {
        // only 2-D cones add their dimension: 3-D hashes stay those of earlier versions
        h.push(*b"conedim2");
    }
    if k.joints() > 0 {
        // only a set with bilateral blocks adds their count: other hashes stay as they were
        h.push(*b"joints\0\0");
        h.push((k.joints() as u64).to_le_bytes());
    }
    h.flush();
    h.h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 fed 8 bytes at a time through a 64 KiB buffer: the same digest as one `update`
/// per number, at memory speed instead of a function call per number.
struct HashFeed {
    h: Sha256,
    buf: Vec<u8>,
}

impl Default for HashFeed {
    fn default() -> Self {
        Self {
            h: Sha256::new(),
            buf: Vec::with_capacity(1 << 16),
        }
    }
}

impl HashFeed {
    #[inline]
    fn push(&mut self, b: [u8; 8]) {
        self.buf.extend_from_slice(&b);
        if self.buf.len() >= 1 << 16 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        self.h.update(&self.buf);
        self.buf.clear();
    }
}
