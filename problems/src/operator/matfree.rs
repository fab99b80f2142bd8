//! The matrix-free Delassus operator `N = D^T M^-1 D` (docs/formulation.md section 1), applied
//! from the contact Jacobian `D` (`m x n`: `m` generalised velocities, `n` contact unknowns) and
//! the mass matrix `M` (`m x m`), never formed. Instances whose `N` would not fit in memory still
//! run: `D` of a granular scene has at most 36 entries per contact (two bodies, 6 velocities, 3
//! directions) against about 200 entries per contact of `N` (pyramid scenes). A global friction
//! problem (fclib `M v = H r + f`, `u = H^T v + w`; Siconos' global `.dat`) is the same operator
//! with `D = H`: `W = H^T M^-1 H` ([`crate::io::condense`] forms it, this module does not).
//!
//! # Mass matrix
//! [`MassInverse`]: a diagonal `M` ([`MatrixFree::with_diagonal_mass`]); or a general sparse
//! symmetric positive definite `M` ([`MatrixFree::with_sparse_mass`]), which is
//! - block diagonal (rigid bodies: one 6x6 or 3x3 block per body, any blocks of at most
//!   [`MAX_MASS_BLOCK`] rows): `G = M^-1 D` is formed once, body by body (each block inverted
//!   through faer's dense Cholesky), with the pattern of `D` widened to whole bodies; or
//! - anything else (finite elements, joints coupling bodies): faer's sparse Cholesky
//!   `P M P^T = L L^T` (AMD ordering; symbolic analysis and numeric factorisation once).
//!
//! # Product
//! `y = N x` is `t = M^-1 (D x)` then `y = D^T t`, both as parallel gathers: `D` is kept in
//! compressed columns (column `j` = unknown `j`, for `D^T t`) and in compressed rows (row `k` =
//! velocity `k`, for `D x`), i.e. twice its 12-16 bytes per entry. `M^-1` is a scaling
//! (diagonal), the gather `t = G x` (block diagonal) or two sparse triangular solves with `L`
//! (general). Buffers of length `m` (and faer's solve workspace) come from a pool kept in the
//! operator: no allocation per product after the first.
//!
//! # Row access (Gauss-Seidel)
//! Projected Gauss-Seidel on this form keeps the velocity `v = M^-1 D gamma` up to date per
//! contact, as Chrono, Bullet and ODE do: `(N gamma)_c = D_c^T v` and, after `gamma_c` changed by
//! `delta`, `v += M^-1 D_c delta`: O(nnz(D)) per sweep ([`MatrixFree::block_row`],
//! [`MatrixFree::block_changed`]) when `M^-1 D_c` is at hand column by column: a diagonal or
//! block-diagonal `M` (`G_c`, `nnz(G) <= 6 nnz(D)` for 6x6 bodies). A general `M` has no such
//! columns (`M^-1 D_c` is a full solve, and dense in general): [`MatrixFree::row_access`] says so
//! with a typed reason, and [`crate::Instance`] then serves Gauss-Seidel rows from the condensed
//! `W`, formed once on the first row access (docs/cli.md, "Storage of N").

use crate::error::{ProblemError, Result};
use crate::linalg::{fill_with, plain_debug, CscMatrix};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{LltParams, LltRegularization};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, LltRef, SymbolicCholesky, SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::{Conj, MatMut, Par, Side, Spec};
use std::sync::{Arc, Mutex};

/// Entries of `D` above which the products run on the rayon pool.
const PAR_MIN_NNZ: usize = 100_000;

/// Largest diagonal block of `M` (rows) treated as one body ([`MassInverse::BlockDiagonal`]);
/// a larger block (a finite-element mesh, bodies coupled by joints) is factorised whole
/// ([`MassInverse::Cholesky`]).
pub const MAX_MASS_BLOCK: usize = 12;

/// Relative asymmetry `||M - M^T||_F / ||M||_F` above which a mass matrix is refused.
const M_SYMMETRY_TOL: f64 = 1e-12;

/// Right-hand sides solved at once when the diagonal blocks of `N` or `N` itself are formed
/// through the sparse Cholesky factor.
const RHS_BLOCK: usize = 32;

/// How `M^-1` is applied.
#[derive(Clone, Debug)]
pub enum MassInverse {
    /// `M` diagonal: the inverse diagonal (length `m`, positive finite entries).
    Diagonal(Vec<f64>),
    /// `M` block diagonal (blocks of at most [`MAX_MASS_BLOCK`] rows): `G = M^-1 D`.
    BlockDiagonal(Box<BlockInverse>),
    /// `M` general symmetric positive definite: its sparse Cholesky factor.
    Cholesky(Arc<SparseCholesky>),
}

/// Same kind and the same numbers, bit for bit: the inverse diagonal; `G`, its pattern and
/// the block inverses; the factor `L` (values) of the same size.
impl PartialEq for MassInverse {
    fn eq(&self, other: &Self) -> bool {
        let csc_eq = |a: &CscMatrix, b: &CscMatrix| {
            a.nrows() == b.nrows()
                && a.col_ptr() == b.col_ptr()
                && a.row_idx() == b.row_idx()
                && a.values() == b.values()
        };
        match (self, other) {
            (MassInverse::Diagonal(a), MassInverse::Diagonal(b)) => a == b,
            (MassInverse::BlockDiagonal(a), MassInverse::BlockDiagonal(b)) => {
                a.blocks == b.blocks && a.inv == b.inv && csc_eq(&a.g, &b.g)
            }
            (MassInverse::Cholesky(a), MassInverse::Cholesky(b)) => {
                a.symbolic.nrows() == b.symbolic.nrows() && a.l_values == b.l_values
            }
            _ => false,
        }
    }
}

/// `G = M^-1 D` for a block-diagonal `M` ([`MassInverse::BlockDiagonal`]).
#[derive(Clone, Debug)]
pub struct BlockInverse {
    /// `G = M^-1 D` (`m x n`): column `j` covers every row of every block `D_:j` touches.
    g: CscMatrix,
    /// `G^T` (`n x m`), for the gather `t = G x`.
    gt: CscMatrix,
    /// Row ranges `[start, end)` of the diagonal blocks of `M`, in order.
    blocks: Vec<(usize, usize)>,
    /// The inverse of every block, dense column-major, one after the other.
    inv: Vec<f64>,
}

impl BlockInverse {
    /// `G = M^-1 D` (`m x n`).
    pub fn g(&self) -> &CscMatrix {
        &self.g
    }

    /// The diagonal blocks of `M` as row ranges `[start, end)`.
    pub fn blocks(&self) -> &[(usize, usize)] {
        &self.blocks
    }
}

/// The sparse Cholesky factor `P M P^T = L L^T` of a general SPD `M` (faer, AMD ordering).
#[derive(Debug)]
pub struct SparseCholesky {
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
}

impl SparseCholesky {
    /// Stored entries of `L`.
    pub fn factor_nnz(&self) -> usize {
        self.l_values.len()
    }

    /// Solve `M X = B` in place (`b` column-major, `m x ncols`) with the workspace `mem`.
    fn solve(&self, b: &mut [f64], m: usize, ncols: usize, mem: &mut MemBuffer) {
        let llt = LltRef::new(&self.symbolic, &self.l_values);
        let x = MatMut::from_column_major_slice_mut(b, m, ncols);
        llt.solve_in_place_with_conj(Conj::No, x, Par::Seq, MemStack::new(mem));
    }

    /// Workspace for `ncols` right-hand sides.
    fn workspace(&self, ncols: usize) -> MemBuffer {
        MemBuffer::new(self.symbolic.solve_in_place_scratch::<f64>(ncols, Par::Seq))
    }
}

/// A general sparse `M` ([`MatrixFree::with_sparse_mass`]) and the diagonal blocks of `N`.
#[derive(Clone, Debug)]
struct SparseMass {
    /// `M` as given (`m x m`, both triangles).
    m: CscMatrix,
    /// The diagonal blocks of `N` (general `M`: `bs^2` numbers per block, row-major), formed
    /// at construction, with their block size; `None` for a block-diagonal `M`.
    diag: Option<(usize, Vec<f64>)>,
}

/// Scratch of one product: a buffer of length `m` and (general `M`) faer's solve workspace.
struct Scratch {
    t: Vec<f64>,
    mem: Option<MemBuffer>,
}

/// `N = D^T M^-1 D` applied from its factors (see the module documentation).
pub struct MatrixFree {
    d: CscMatrix,
    /// `D^T` (`n x m`), whose columns are the rows of `D`.
    dt: CscMatrix,
    m_inv: MassInverse,
    /// The diagonal of `M` as given (`1 / (1 / m)` need not be `m` bit for bit); empty when
    /// `M` is given as a sparse matrix.
    m_diag: Vec<f64>,
    /// `M` as given to [`MatrixFree::with_sparse_mass`], with what is formed from it.
    sparse: Option<Box<SparseMass>>,
    /// A diagonal `R` added to `N` (a contact compliance, [`MatrixFree::with_shift`]):
    /// the operator is then `D^T M^-1 D + R`.
    shift: Option<Vec<f64>>,
    pool: Mutex<Vec<Scratch>>,
}

impl std::fmt::Debug for MatrixFree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatrixFree")
            .field("m", &self.m())
            .field("n", &self.n())
            .field("nnz(D)", &self.d.nnz())
            .field("m_inv", &self.m_inv)
            .field("shift", &self.shift.is_some())
            .finish()
    }
}

impl Clone for MatrixFree {
    fn clone(&self) -> Self {
        Self {
            d: self.d.clone(),
            dt: self.dt.clone(),
            m_inv: self.m_inv.clone(),
            m_diag: self.m_diag.clone(),
            sparse: self.sparse.clone(),
            shift: self.shift.clone(),
            pool: Mutex::new(Vec::new()),
        }
    }
}

/// `A^T` by a counting sort of the entries (O(nnz), rows stay sorted).
pub(crate) fn transpose_csc(a: &CscMatrix) -> Result<CscMatrix> {
    let (m, n) = (a.nrows(), a.ncols());
    let mut ptr = vec![0usize; m + 1];
    for &i in a.row_idx() {
        ptr[i + 1] += 1;
    }
    for i in 0..m {
        ptr[i + 1] += ptr[i];
    }
    let mut cursor = ptr.clone();
    let mut idx = vec![0usize; a.nnz()];
    let mut val = vec![0.0; a.nnz()];
    for j in 0..n {
        let (rows, vals) = a.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            idx[cursor[i]] = j;
            val[cursor[i]] = v;
            cursor[i] += 1;
        }
    }
    CscMatrix::from_csc_parts(n, m, ptr, idx, val)
}

/// The error for a mass matrix that is not symmetric positive definite.
fn not_spd(size: usize, column: Option<usize>, reason: String) -> ProblemError {
    ProblemError::MassNotPositiveDefinite {
        size,
        column,
        reason,
    }
}

/// The diagonal blocks of a square `M` as row ranges `[start, end)`: the finest partition into
/// consecutive ranges such that every stored entry lies in a diagonal block; `None` when a
/// block would exceed `max` rows.
fn diagonal_blocks(m: &CscMatrix, max: usize) -> Option<Vec<(usize, usize)>> {
    let n = m.ncols();
    // reach[j]: the largest index coupled to j (row or column), over both triangles
    let mut reach: Vec<usize> = (0..n).collect();
    for j in 0..n {
        for &i in m.col(j).0 {
            let (lo, hi) = (i.min(j), i.max(j));
            reach[lo] = reach[lo].max(hi);
        }
    }
    let mut blocks = Vec::new();
    let (mut start, mut end) = (0usize, 0usize);
    for (j, &rj) in reach.iter().enumerate() {
        end = end.max(rj);
        if end == j {
            if j + 1 - start > max {
                return None;
            }
            blocks.push((start, j + 1));
            start = j + 1;
        }
    }
    Some(blocks)
}

impl MatrixFree {
    /// Build from `D` (`m x n`) and the diagonal of `M` (length `m`, positive, in the units of
    /// `D`'s rows: mass for translations, inertia for rotations). Errors:
    /// [`ProblemError::SizeMismatch`] (lengths), [`ProblemError::NonFinite`] or
    /// [`ProblemError::InvalidParameter`] for a mass that is not positive and finite.
    pub fn with_diagonal_mass(d: CscMatrix, m_diag: &[f64]) -> Result<Self> {
        if m_diag.len() != d.nrows() {
            return Err(ProblemError::SizeMismatch {
                what: "M (diagonal) against the rows of D".into(),
                expected: d.nrows(),
                found: m_diag.len(),
            });
        }
        if let Some(k) = m_diag.iter().position(|&v| !(v.is_finite() && v > 0.0)) {
            let (what, position, value) = ("M (diagonal)".into(), format!("[{k}]"), m_diag[k]);
            return Err(if value.is_finite() {
                ProblemError::NotPositive {
                    what,
                    position,
                    value,
                }
            } else {
                ProblemError::NonFinite {
                    what,
                    position,
                    value,
                }
            });
        }
        // |N_ij| <= max_k(1 / m_k) ||D_:i|| ||D_:j||: a bound within f64's range makes every
        // entry of N, and every partial sum forming it, finite (D = 1e200 with M = 1e-200
        // passed and panicked where N was formed; found by fuzzing, issue 30)
        let log_bound = log_entry_bound(&d, m_diag);
        if log_bound > f64::MAX.ln() - 1.0 {
            return Err(out_of_range(log_bound, "D and M_diag"));
        }
        let dt = transpose_csc(&d)?;
        Ok(Self {
            d,
            dt,
            m_inv: MassInverse::Diagonal(m_diag.iter().map(|v| 1.0 / v).collect()),
            m_diag: m_diag.to_vec(),
            sparse: None,
            shift: None,
            pool: Mutex::new(Vec::new()),
        })
    }

    /// Build from `D` (`m x n`, for a global friction problem `D = H`) and a general sparse
    /// symmetric positive definite `M` (`m x m`, both triangles stored, as fclib's and Siconos'
    /// global readers give it). `bs` is the block size of the unknowns (3 for 3-D cones, 2 for
    /// 2-D, 1 otherwise; `n` a multiple of it): the diagonal blocks of `N` are formed here for
    /// a general `M` (one solve per unknown, `RHS_BLOCK` at a time), since every
    /// Gauss-Seidel and preconditioned solver asks for them.
    ///
    /// A diagonal `M` (fclib's granular scenes store one) gives [`MassInverse::Diagonal`], as
    /// [`MatrixFree::with_diagonal_mass`] does; `M` block diagonal with blocks of at most
    /// [`MAX_MASS_BLOCK`] rows (rigid bodies) gives [`MassInverse::BlockDiagonal`]
    /// (`G = M^-1 D` formed, `nnz(G) <= MAX_MASS_BLOCK nnz(D)`), any other `M`
    /// [`MassInverse::Cholesky`] (faer's sparse Cholesky, AMD ordering, symbolic and numeric
    /// once). Memory: `D` twice, `M`, and `G` twice or `L` and the diagonal blocks
    /// ([`MatrixFree::memory_bytes`]).
    ///
    /// Errors: [`ProblemError::SizeMismatch`] (shapes, `n` not a multiple of `bs`);
    /// [`ProblemError::MassNotPositiveDefinite`] for a non-symmetric `M` (relative asymmetry
    /// above 1e-12, naming the largest entry) or a Cholesky pivot that is not positive
    /// (naming the column of `M`); [`ProblemError::NonFinite`] when `N`'s entries may leave
    /// the range of double precision. The caller names the file ([`ProblemError::in_file`]).
    pub fn with_sparse_mass(d: CscMatrix, m: CscMatrix, bs: usize) -> Result<Self> {
        let size = d.nrows();
        if m.nrows() != size || m.ncols() != size {
            return Err(ProblemError::SizeMismatch {
                what: format!(
                    "M ({} x {}) against the rows of D ({size} x {})",
                    m.nrows(),
                    m.ncols(),
                    d.ncols()
                ),
                expected: size,
                found: if m.nrows() != size {
                    m.nrows()
                } else {
                    m.ncols()
                },
            });
        }
        if bs == 0 || d.ncols() % bs != 0 {
            return Err(ProblemError::SizeMismatch {
                what: format!("the columns of D against blocks of {bs} unknowns"),
                expected: d.ncols().next_multiple_of(bs.max(1)),
                found: d.ncols(),
            });
        }
        let (rel, max_abs, i, j) = m.asymmetry();
        if rel > M_SYMMETRY_TOL {
            return Err(not_spd(
                size,
                Some(j),
                format!(
                    "M is not symmetric: ||M - M^T||_F / ||M||_F = {rel:.3e} > {M_SYMMETRY_TOL:e} \
                     (largest |M_ij - M_ji| = {max_abs:.3e} at ({i}, {j}))"
                ),
            ));
        }
        let dt = transpose_csc(&d)?;
        let mut diag = None;
        let m_inv = match diagonal_blocks(&m, MAX_MASS_BLOCK) {
            // a diagonal M given as a matrix (fclib's granular scenes): the scaling
            Some(blocks) if blocks.iter().all(|&(s, e)| e == s + 1) => {
                let md = m.diag();
                if let Some(k) = md.iter().position(|&v| v <= 0.0) {
                    return Err(not_spd(
                        size,
                        Some(k),
                        format!(
                            "M is diagonal and M[{k}][{k}] = {:e} is not positive",
                            md[k]
                        ),
                    ));
                }
                let log_bound = log_entry_bound(&d, &md);
                if log_bound > f64::MAX.ln() - 1.0 {
                    return Err(out_of_range(log_bound, "D and the diagonal of M"));
                }
                MassInverse::Diagonal(md.iter().map(|v| 1.0 / v).collect())
            }
            Some(blocks) => {
                let (g, inv) = block_inverse_times(&m, &blocks, &d)?;
                let gt = transpose_csc(&g)?;
                MassInverse::BlockDiagonal(Box::new(BlockInverse { g, gt, blocks, inv }))
            }
            None => MassInverse::Cholesky(Arc::new(sparse_cholesky(&m)?)),
        };
        let mut op = Self {
            d,
            dt,
            m_inv,
            m_diag: Vec::new(),
            sparse: None,
            shift: None,
            pool: Mutex::new(Vec::new()),
        };
        match &op.m_inv {
            MassInverse::BlockDiagonal(b) => {
                // |N_ij| = |D_:i^T G_:j| <= max|D| max|G| max_j nnz(D_:j)
                let log = log_abs_max(&op.d) + log_abs_max(&b.g) + max_col_nnz(&op.d).ln();
                if log > f64::MAX.ln() - 1.0 {
                    return Err(out_of_range(log, "D and M^-1 D"));
                }
            }
            MassInverse::Cholesky(f) => {
                let f = f.clone();
                diag = Some((bs, op.cholesky_diag_blocks(&f, bs)?));
            }
            MassInverse::Diagonal(_) => {}
        }
        op.sparse = Some(Box::new(SparseMass { m, diag }));
        Ok(op)
    }

    /// The diagonal blocks `D_c^T M^-1 D_c` of `N` through the Cholesky factor (`bs^2` per
    /// block, row-major), `RHS_BLOCK` solves at a time; checks that `M^-1 D` and every
    /// entry of `N` (and its partial sums) stay finite.
    fn cholesky_diag_blocks(&self, f: &SparseCholesky, bs: usize) -> Result<Vec<f64>> {
        let (m, n) = (self.m(), self.n());
        let mut out = vec![0.0; n * bs];
        if m == 0 || n == 0 {
            return Ok(out);
        }
        let cols = (RHS_BLOCK / bs).max(1) * bs;
        let mut mem = f.workspace(cols);
        let mut y = vec![0.0; m * cols];
        let mut ymax = 0.0f64;
        for j0 in (0..n).step_by(cols) {
            let k = cols.min(n - j0);
            let y = &mut y[..m * k];
            self.scatter_columns(j0, k, y);
            f.solve(y, m, k, &mut mem);
            for jj in 0..k {
                let j = j0 + jj;
                let yj = &y[jj * m..(jj + 1) * m];
                if let Some(p) = yj.iter().position(|v| !v.is_finite()) {
                    return Err(ProblemError::NonFinite {
                        what: "M^-1 D (solved with the Cholesky factor of M)".into(),
                        position: format!("({p}, {j})"),
                        value: yj[p],
                    });
                }
                ymax = yj.iter().fold(ymax, |a, v| a.max(v.abs()));
                let (c, b) = (j / bs, j % bs);
                for a in 0..bs {
                    let (rows, vals) = self.d.col(bs * c + a);
                    out[bs * bs * c + a * bs + b] =
                        rows.iter().zip(vals).map(|(&r, &v)| v * yj[r]).sum();
                }
            }
        }
        let log = log_abs_max(&self.d) + ymax.ln() + max_col_nnz(&self.d).ln();
        if log > f64::MAX.ln() - 1.0 {
            return Err(out_of_range(log, "D and M^-1 D"));
        }
        // symmetric by construction up to rounding: average the two triangles, as `to_csc`
        for c in 0..n / bs {
            let o = &mut out[bs * bs * c..bs * bs * (c + 1)];
            for a in 0..bs {
                for b in a + 1..bs {
                    let s = 0.5 * (o[a * bs + b] + o[b * bs + a]);
                    o[a * bs + b] = s;
                    o[b * bs + a] = s;
                }
            }
        }
        Ok(out)
    }

    /// Columns `j0 .. j0 + k` of `D`, dense and column-major, into `y` (`m x k`).
    fn scatter_columns(&self, j0: usize, k: usize, y: &mut [f64]) {
        let m = self.m();
        y.fill(0.0);
        for jj in 0..k {
            let (rows, vals) = self.d.col(j0 + jj);
            for (&i, &v) in rows.iter().zip(vals) {
                y[i + jj * m] = v;
            }
        }
    }

    /// The operator `D^T M^-1 D + R` with the diagonal `r` (length `n`, checked by the caller)
    /// added to the present shift: a contact compliance kept beside the factors, so that a
    /// primal method still sees `D`, `M` and `R` apart (`sap`).
    pub fn with_shift(mut self, r: &[f64]) -> Self {
        self.shift = Some(match self.shift.take() {
            Some(s) => s.iter().zip(r).map(|(a, b)| a + b).collect(),
            None => r.to_vec(),
        });
        self
    }

    /// `M^-1 f` (`f` and the result of length `m`): a scaling (diagonal `M`), the block
    /// inverses (block diagonal) or one solve with the Cholesky factor (general). For the free
    /// velocity of a global problem, once per instance (allocates the result).
    pub fn solve_mass(&self, f: &[f64]) -> Vec<f64> {
        assert_eq!(f.len(), self.m());
        match &self.m_inv {
            MassInverse::Diagonal(w) => f.iter().zip(w).map(|(a, b)| a * b).collect(),
            MassInverse::BlockDiagonal(b) => {
                let mut y = vec![0.0; f.len()];
                let mut off = 0;
                for &(s, e) in &b.blocks {
                    let k = e - s;
                    let inv = &b.inv[off..off + k * k];
                    for i in 0..k {
                        y[s + i] = (0..k).map(|l| inv[i + l * k] * f[s + l]).sum();
                    }
                    off += k * k;
                }
                y
            }
            MassInverse::Cholesky(c) => {
                let mut y = f.to_vec();
                c.solve(&mut y, self.m(), 1, &mut c.workspace(1));
                y
            }
        }
    }

    /// The diagonal shift `R` ([`MatrixFree::with_shift`]), `None` without one.
    pub fn shift(&self) -> Option<&[f64]> {
        self.shift.as_deref()
    }

    /// `D` (`m x n`).
    pub fn d(&self) -> &CscMatrix {
        &self.d
    }

    /// `M^-1`.
    pub fn mass_inverse(&self) -> &MassInverse {
        &self.m_inv
    }

    /// The diagonal of `M` (length `m`), exactly as given to
    /// [`MatrixFree::with_diagonal_mass`]; for an `M` given as a sparse matrix
    /// ([`MatrixFree::mass_matrix`], which is then the whole of `M`) its diagonal entries.
    pub fn mass_diagonal(&self) -> Vec<f64> {
        match &self.sparse {
            Some(s) => s.m.diag(),
            None => self.m_diag.clone(),
        }
    }

    /// `M` (`m x m`), exactly as given to [`MatrixFree::with_sparse_mass`]; `None` for a
    /// diagonal `M` ([`MatrixFree::mass_diagonal`]).
    pub fn mass_matrix(&self) -> Option<&CscMatrix> {
        self.sparse.as_ref().map(|s| &s.m)
    }

    /// Number of unknowns `n` (columns of `D`).
    pub fn n(&self) -> usize {
        self.d.ncols()
    }

    /// Number of generalised velocities `m` (rows of `D`).
    pub fn m(&self) -> usize {
        self.d.nrows()
    }

    /// Bytes one product reads: `D` twice (both orientations, values and `usize` indices) and
    /// `M^-1` (the inverse diagonal; `G = M^-1 D` once, the gather `t = G x` reading `G^T`;
    /// or the Cholesky factor `L`, read twice by the two triangular solves, counted once).
    pub fn bytes(&self) -> u64 {
        let ix = std::mem::size_of::<usize>();
        let shift = if self.shift.is_some() {
            self.n() * 8
        } else {
            0
        };
        let mass = match &self.m_inv {
            MassInverse::Diagonal(_) => self.m() * 8,
            MassInverse::BlockDiagonal(b) => b.gt.nnz() * (8 + ix) + (self.n() + 1) * ix,
            MassInverse::Cholesky(f) => f.factor_nnz() * (8 + ix) + (self.m() + 1) * ix,
        };
        let d_rows = match &self.m_inv {
            // the gather reads G^T instead of D^T
            MassInverse::BlockDiagonal(_) => 0,
            _ => self.d.nnz() * (8 + ix) + self.n() * ix,
        };
        (self.d.nnz() * (8 + ix) + self.m() * ix + d_rows + mass + shift) as u64
    }

    /// Bytes the operator keeps: `D` and `D^T`, `M` as given, `G` and `G^T` or the factor
    /// `L` (values and indices), the diagonal blocks and the shift; not the scratch pool.
    pub fn memory_bytes(&self) -> u64 {
        let ix = std::mem::size_of::<usize>() as u64;
        let csc = |a: &CscMatrix| a.nnz() as u64 * (8 + ix) + (a.ncols() as u64 + 1) * ix;
        let mut b = csc(&self.d) + csc(&self.dt) + 8 * self.m_diag.len() as u64;
        b += self.sparse.as_ref().map_or(0, |s| csc(&s.m));
        b += match &self.m_inv {
            MassInverse::Diagonal(w) => 8 * w.len() as u64,
            MassInverse::BlockDiagonal(g) => csc(&g.g) + csc(&g.gt) + 8 * g.inv.len() as u64,
            MassInverse::Cholesky(f) => {
                // L's values and row indices, its column pointers and the AMD permutation
                f.factor_nnz() as u64 * (8 + ix) + 3 * (self.m() as u64 + 1) * ix
            }
        };
        b += self
            .sparse
            .as_ref()
            .and_then(|s| s.diag.as_ref())
            .map_or(0, |(_, v)| 8 * v.len() as u64);
        b + self.shift.as_ref().map_or(0, |s| 8 * s.len() as u64)
    }

    /// Whether Gauss-Seidel row access ([`MatrixFree::block_row`],
    /// [`MatrixFree::block_changed`]) runs in O(nnz(D)) per sweep. Errors:
    /// [`ProblemError::OperatorUnavailable`] for a general (not block-diagonal) `M`:
    /// `M^-1 D_c` is a full sparse solve per contact update, dense in general.
    /// [`crate::Instance`] then reads rows of the condensed `W` instead.
    pub fn row_access(&self) -> Result<()> {
        match &self.m_inv {
            MassInverse::Cholesky(f) => Err(ProblemError::OperatorUnavailable {
                kind: "matrix-free row access".into(),
                reason: format!(
                    "M ({m} x {m}) is not block diagonal with blocks of at most {MAX_MASS_BLOCK} \
                     rows: M^-1 D_c is a solve with the Cholesky factor ({} entries) per contact \
                     update, not a column of a precomputed M^-1 D",
                    f.factor_nnz(),
                    m = self.m()
                ),
            }),
            _ => Ok(()),
        }
    }

    /// [`MatrixFree::row_access`] as a flag, for hot loops (no message built).
    #[inline]
    pub fn has_row_access(&self) -> bool {
        !matches!(self.m_inv, MassInverse::Cholesky(_))
    }

    fn take_scratch(&self) -> Scratch {
        let mut s = self
            .pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or(Scratch {
                t: Vec::new(),
                mem: None,
            });
        if let (MassInverse::Cholesky(f), None) = (&self.m_inv, &s.mem) {
            s.mem = Some(f.workspace(1));
        }
        s.t.resize(self.m(), 0.0);
        s
    }

    fn give_scratch(&self, s: Scratch) {
        if let Ok(mut p) = self.pool.lock() {
            p.push(s);
        }
    }

    /// `t = M^-1 D x` (length `m`); `mem` is the solve workspace (general `M`).
    fn velocity(&self, x: &[f64], t: &mut [f64], mem: Option<&mut MemBuffer>) {
        let par = self.d.nnz() > PAR_MIN_NNZ;
        let gather = |m: &CscMatrix, w: Option<&[f64]>, t: &mut [f64]| {
            let (cp, ri, va) = (m.col_ptr(), m.row_idx(), m.values());
            let row = |k: usize| -> f64 {
                let mut s = 0.0;
                for (&j, &v) in ri[cp[k]..cp[k + 1]].iter().zip(&va[cp[k]..cp[k + 1]]) {
                    s += v * x[j];
                }
                match w {
                    Some(w) => s * w[k],
                    None => s,
                }
            };
            fill_with(t, par, 256, row);
        };
        match &self.m_inv {
            MassInverse::Diagonal(w) => gather(&self.dt, Some(w), t),
            MassInverse::BlockDiagonal(b) => gather(&b.gt, None, t),
            MassInverse::Cholesky(f) => {
                gather(&self.dt, None, t);
                match mem {
                    Some(mem) => f.solve(t, self.m(), 1, mem),
                    None => f.solve(t, self.m(), 1, &mut f.workspace(1)),
                }
            }
        }
    }

    /// `y = D^T t` (`t` of length `m`, `y` of length `n`): a parallel gather along the
    /// columns of `D` above 100,000 entries; without the shift.
    pub fn transpose_apply(&self, t: &[f64], y: &mut [f64]) {
        let (cp, ri, va) = (self.d.col_ptr(), self.d.row_idx(), self.d.values());
        let col = |j: usize| -> f64 {
            let mut s = 0.0;
            for (&k, &v) in ri[cp[j]..cp[j + 1]].iter().zip(&va[cp[j]..cp[j + 1]]) {
                s += v * t[k];
            }
            s
        };
        fill_with(y, self.d.nnz() > PAR_MIN_NNZ, 256, col);
    }

    /// `y = D^T M^-1 D x`. Shapes: `x`, `y` of length `n`. No allocation after the first
    /// product (the scratch comes from the operator's pool).
    pub fn matvec(&self, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), self.n());
        assert_eq!(y.len(), self.n());
        let mut s = self.take_scratch();
        self.velocity(x, &mut s.t, s.mem.as_mut());
        self.transpose_apply(&s.t, y);
        self.give_scratch(s);
        if let Some(s) = &self.shift {
            for ((yi, xi), si) in y.iter_mut().zip(x).zip(s) {
                *yi += si * xi;
            }
        }
    }

    /// `v = M^-1 D gamma` (length `m`), the velocity Gauss-Seidel keeps up to date.
    pub fn velocity_of(&self, gamma: &[f64], v: &mut [f64]) {
        let mut s = self.take_scratch();
        self.velocity(gamma, v, s.mem.as_mut());
        self.give_scratch(s);
    }

    /// `out = (D^T M^-1 D gamma)_c = D_c^T v` for the unknowns `bs c .. bs c + bs` (length
    /// `bs`), with `v = M^-1 D gamma` kept current; without the shift (the caller, who has
    /// `gamma`, adds `R_c gamma_c`).
    #[inline]
    pub fn block_row(&self, c: usize, bs: usize, v: &[f64], out: &mut [f64]) {
        for (a, o) in out.iter_mut().enumerate().take(bs) {
            let (rows, vals) = self.d.col(bs * c + a);
            *o = rows.iter().zip(vals).map(|(&k, &d)| d * v[k]).sum();
        }
    }

    /// After `gamma_c` changed by `delta` (length `bs`): `v += M^-1 D_c delta`. O(nnz(D_c))
    /// for a diagonal `M`, O(nnz(G_c)) for a block-diagonal one; for a general `M` a full
    /// solve with the Cholesky factor ([`MatrixFree::row_access`] refuses that case; this
    /// stays correct, allocation-free after the first call, and slow).
    #[inline]
    pub fn block_changed(&self, c: usize, bs: usize, delta: &[f64], v: &mut [f64]) {
        let axpy = |m: &CscMatrix, w: Option<&[f64]>, v: &mut [f64]| {
            for (a, &da) in delta.iter().enumerate().take(bs) {
                if da == 0.0 {
                    continue;
                }
                let (rows, vals) = m.col(bs * c + a);
                for (&k, &d) in rows.iter().zip(vals) {
                    v[k] += w.map_or(1.0, |w| w[k]) * d * da;
                }
            }
        };
        match &self.m_inv {
            MassInverse::Diagonal(w) => axpy(&self.d, Some(w), v),
            MassInverse::BlockDiagonal(b) => axpy(&b.g, None, v),
            MassInverse::Cholesky(f) => {
                let mut s = self.take_scratch();
                s.t.fill(0.0);
                for (a, &da) in delta.iter().enumerate().take(bs) {
                    let (rows, vals) = self.d.col(bs * c + a);
                    for (&k, &d) in rows.iter().zip(vals) {
                        s.t[k] += d * da;
                    }
                }
                if let Some(mem) = s.mem.as_mut() {
                    f.solve(&mut s.t, self.m(), 1, mem);
                }
                for (vk, tk) in v.iter_mut().zip(&s.t) {
                    *vk += tk;
                }
                self.give_scratch(s);
            }
        }
    }

    /// The contacts (blocks of `bs` unknowns) that share a generalised velocity with contact
    /// `c` (`N_cd = D_c^T M^-1 D_d` can be non-zero only for those, `M` diagonal; for a
    /// block-diagonal `M` those sharing a body, through the pattern of `G_c`), appended to
    /// `out`, possibly with repeats (the caller deduplicates); `c` itself is left out. For a
    /// general `M` every contact of the same connected component of `M` may couple: all
    /// contacts are listed (the instance uses the condensed pattern instead).
    pub fn contact_neighbours(&self, c: usize, bs: usize, out: &mut Vec<u32>) {
        let cols = match &self.m_inv {
            MassInverse::Diagonal(_) => &self.d,
            MassInverse::BlockDiagonal(b) => &b.g,
            MassInverse::Cholesky(_) => {
                out.extend((0..self.n() / bs).filter(|&d| d != c).map(|d| d as u32));
                return;
            }
        };
        for a in 0..bs {
            for &k in cols.col(bs * c + a).0 {
                for &u in self.dt.col(k).0 {
                    let d = u / bs;
                    if d != c {
                        out.push(d as u32);
                    }
                }
            }
        }
    }

    /// Diagonal block `c` of `N`: `D_c^T M^-1 D_c` (row-major, `bs^2` numbers), plus the
    /// shift. For a general `M` the blocks formed at construction (another `bs` is solved
    /// on the spot, allocating).
    pub fn diag_block(&self, c: usize, bs: usize) -> [f64; 9] {
        let mut out = [0.0; 9];
        let merge =
            |(ra, va): (&[usize], &[f64]), (rb, vb): (&[usize], &[f64]), w: Option<&[f64]>| {
                // sorted merge of the two columns
                let (mut i, mut j, mut s) = (0, 0, 0.0);
                while i < ra.len() && j < rb.len() {
                    match ra[i].cmp(&rb[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            s += va[i] * w.map_or(1.0, |w| w[ra[i]]) * vb[j];
                            i += 1;
                            j += 1;
                        }
                    }
                }
                s
            };
        match &self.m_inv {
            MassInverse::Diagonal(w) => {
                for a in 0..bs {
                    for b in a..bs {
                        let s = merge(self.d.col(bs * c + a), self.d.col(bs * c + b), Some(w));
                        out[a * bs + b] = s;
                        out[b * bs + a] = s;
                    }
                }
            }
            MassInverse::BlockDiagonal(g) => {
                for a in 0..bs {
                    for b in 0..bs {
                        out[a * bs + b] = merge(self.d.col(bs * c + a), g.g.col(bs * c + b), None);
                    }
                }
                for a in 0..bs {
                    for b in a + 1..bs {
                        let s = 0.5 * (out[a * bs + b] + out[b * bs + a]);
                        out[a * bs + b] = s;
                        out[b * bs + a] = s;
                    }
                }
            }
            MassInverse::Cholesky(f) => match self.sparse.as_ref().and_then(|s| s.diag.as_ref()) {
                Some((dbs, v)) if *dbs == bs => {
                    out[..bs * bs].copy_from_slice(&v[bs * bs * c..bs * bs * (c + 1)]);
                }
                _ => {
                    let m = self.m();
                    let mut y = vec![0.0; m * bs];
                    self.scatter_columns(bs * c, bs, &mut y);
                    f.solve(&mut y, m, bs, &mut f.workspace(bs));
                    for a in 0..bs {
                        let (rows, vals) = self.d.col(bs * c + a);
                        for b in 0..bs {
                            out[a * bs + b] =
                                rows.iter().zip(vals).map(|(&r, &v)| v * y[b * m + r]).sum();
                        }
                    }
                }
            },
        }
        if let Some(sh) = &self.shift {
            for a in 0..bs {
                out[a * bs + a] += sh[bs * c + a];
            }
        }
        out
    }

    /// Form `N = D^T M^-1 D` as a full symmetric CSC matrix (for solvers that factorise it).
    /// Cost: the sparse product (diagonal and block-diagonal `M`); `n` solves with the
    /// Cholesky factor, `RHS_BLOCK` at a time, and `n nnz(D)` multiply-adds (general `M`, as
    /// [`crate::io::condense::condense`]); memory: `N` itself. Exact zeros are kept only in
    /// the first two cases (the pattern of the product).
    pub fn to_csc(&self) -> Result<CscMatrix> {
        let n = self.n();
        if let MassInverse::Cholesky(f) = &self.m_inv {
            let m = self.m();
            let mut trip = Vec::new();
            if m > 0 && n > 0 {
                let mut mem = f.workspace(RHS_BLOCK);
                let mut y = vec![0.0; m * RHS_BLOCK.min(n)];
                for j0 in (0..n).step_by(RHS_BLOCK) {
                    let k = RHS_BLOCK.min(n - j0);
                    let y = &mut y[..m * k];
                    self.scatter_columns(j0, k, y);
                    f.solve(y, m, k, &mut mem);
                    for jj in 0..k {
                        let yj = &y[jj * m..(jj + 1) * m];
                        for i in 0..n {
                            let (rows, vals) = self.d.col(i);
                            let s: f64 = rows.iter().zip(vals).map(|(&r, &v)| v * yj[r]).sum();
                            if s != 0.0 {
                                trip.push((i, j0 + jj, s));
                            }
                        }
                    }
                }
            }
            let w = CscMatrix::from_triplets(n, n, &trip)?;
            return match &self.shift {
                Some(s) => w.symmetrized().plus_diagonal(s),
                None => Ok(w.symmetrized()),
            };
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        let mut values = Vec::new();
        let mut acc = vec![0.0; n];
        let mut mark = vec![usize::MAX; n];
        let mut list: Vec<usize> = Vec::new();
        col_ptr.push(0);
        for j in 0..n {
            list.clear();
            let mut add = |k: usize, s: f64| {
                let (cols, dv) = self.dt.col(k);
                for (&i, &dki) in cols.iter().zip(dv) {
                    if mark[i] != j {
                        mark[i] = j;
                        acc[i] = 0.0;
                        list.push(i);
                    }
                    acc[i] += dki * s;
                }
            };
            match &self.m_inv {
                MassInverse::Diagonal(w) => {
                    let (rows, vals) = self.d.col(j);
                    for (&k, &dkj) in rows.iter().zip(vals) {
                        add(k, w[k] * dkj);
                    }
                }
                MassInverse::BlockDiagonal(b) => {
                    let (rows, vals) = b.g.col(j);
                    for (&k, &gkj) in rows.iter().zip(vals) {
                        add(k, gkj);
                    }
                }
                MassInverse::Cholesky(_) => unreachable!("handled above"),
            }
            list.sort_unstable();
            for &i in &list {
                row_idx.push(i);
                values.push(acc[i]);
            }
            col_ptr.push(row_idx.len());
        }
        let m = CscMatrix::from_csc_parts(n, n, col_ptr, row_idx, values)?;
        // rounding can make the two triangles differ in the last bit: average them
        match &self.shift {
            Some(s) => m.symmetrized().plus_diagonal(s),
            None => Ok(m.symmetrized()),
        }
    }
}

/// `G = M^-1 D` for a block-diagonal `M` (`blocks` its row ranges): each block inverted by
/// faer's dense Cholesky (a non-positive pivot is [`ProblemError::MassNotPositiveDefinite`]
/// naming the column of `M`), then for every column of `D` the blocks it touches, whole.
/// Returns `G` and the block inverses (dense column-major, one after the other).
fn block_inverse_times(
    m: &CscMatrix,
    blocks: &[(usize, usize)],
    d: &CscMatrix,
) -> Result<(CscMatrix, Vec<f64>)> {
    let size = m.nrows();
    // the inverse of every block, dense column-major, and the block of every row
    let mut inv = Vec::with_capacity(blocks.len());
    let mut block_of = vec![0usize; size];
    for (b, &(s, e)) in blocks.iter().enumerate() {
        let k = e - s;
        block_of[s..e].iter_mut().for_each(|x| *x = b);
        let mut mb = faer::Mat::<f64>::zeros(k, k);
        for j in s..e {
            let (rows, vals) = m.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                mb[(i - s, j - s)] = v;
            }
        }
        let llt = mb.llt(Side::Lower).map_err(|err| {
            let col = match err {
                faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } => {
                    s + index
                }
            };
            not_spd(
                size,
                Some(col),
                format!(
                    "the diagonal block of rows {s}..{e} (a body) has a non-positive Cholesky \
                     pivot at column {col} (M[{col}][{col}] = {:e})",
                    m.get(col, col)
                ),
            )
        })?;
        let minv = faer::linalg::solvers::DenseSolveCore::inverse(&llt);
        let mut dense = vec![0.0; k * k];
        for j in 0..k {
            for i in 0..k {
                dense[i + j * k] = minv[(i, j)];
            }
        }
        inv.push(dense);
    }
    let mut col_ptr = Vec::with_capacity(d.ncols() + 1);
    let mut row_idx = Vec::new();
    let mut values = Vec::new();
    col_ptr.push(0);
    let mut touched: Vec<usize> = Vec::new();
    for j in 0..d.ncols() {
        let (rows, vals) = d.col(j);
        touched.clear();
        touched.extend(rows.iter().map(|&r| block_of[r]));
        touched.dedup(); // rows are sorted, so are their blocks
        let mut p = 0;
        for &b in &touched {
            let (s, e) = blocks[b];
            let k = e - s;
            let mut rhs = [0.0; MAX_MASS_BLOCK];
            while p < rows.len() && rows[p] < e {
                rhs[rows[p] - s] = vals[p];
                p += 1;
            }
            for i in 0..k {
                let v: f64 = (0..k).map(|l| inv[b][i + l * k] * rhs[l]).sum();
                if !v.is_finite() {
                    return Err(ProblemError::NonFinite {
                        what: "M^-1 D (block-diagonal M)".into(),
                        position: format!("({}, {j})", s + i),
                        value: v,
                    });
                }
                row_idx.push(s + i);
                values.push(v);
            }
        }
        col_ptr.push(row_idx.len());
    }
    let g = CscMatrix::from_csc_parts(size, d.ncols(), col_ptr, row_idx, values)?;
    Ok((g, inv.concat()))
}

/// faer's sparse Cholesky of `M` (lower triangle, AMD ordering); a non-positive pivot is
/// [`ProblemError::MassNotPositiveDefinite`] naming the column of `M` it belongs to.
fn sparse_cholesky(m: &CscMatrix) -> Result<SparseCholesky> {
    let size = m.nrows();
    let a = m.as_faer();
    let symbolic = factorize_symbolic_cholesky(
        a.symbolic(),
        Side::Lower,
        SymmetricOrdering::Amd,
        Default::default(),
    )
    .map_err(|e| {
        not_spd(
            size,
            None,
            format!("symbolic Cholesky: {}", plain_debug(&e)),
        )
    })?;
    let mut l_values = vec![0.0; symbolic.len_val()];
    let mut mem = MemBuffer::new(
        symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Spec::<LltParams, f64>::default()),
    );
    symbolic
        .factorize_numeric_llt(
            &mut l_values,
            a,
            Side::Lower,
            LltRegularization::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Spec::<LltParams, f64>::default(),
        )
        .map_err(|e| {
            let faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } = e;
            // faer 0.24 counts the failing pivot from 1 in its simplicial factorisation
            // (`index: k + 1`) and from 0 in the supernodal one (`index + s_start`)
            let step = match symbolic.raw() {
                SymbolicCholeskyRaw::Simplicial(_) => index.saturating_sub(1),
                SymbolicCholeskyRaw::Supernodal(_) => index,
            };
            // the pivot of the permuted matrix P M P^T: column perm[step] of M
            let col = symbolic
                .perm()
                .map_or(step, |p| p.arrays().0[step.min(size - 1)]);
            not_spd(
                size,
                Some(col),
                format!(
                    "sparse Cholesky (faer, AMD ordering): non-positive pivot at step {step} \
                     of {size} (from 0), column {col} of M (M[{col}][{col}] = {:e})",
                    m.get(col, col)
                ),
            )
        })?;
    Ok(SparseCholesky { symbolic, l_values })
}

/// `ln max |a_ij|` (`-inf` for a zero matrix).
fn log_abs_max(a: &CscMatrix) -> f64 {
    a.values().iter().fold(0.0f64, |m, v| m.max(v.abs())).ln()
}

/// The most entries in a column of `a` (at least 1).
fn max_col_nnz(a: &CscMatrix) -> f64 {
    (0..a.ncols())
        .map(|j| a.col(j).0.len())
        .max()
        .unwrap_or(1)
        .max(1) as f64
}

/// The error for factors whose `N` may leave the range of double precision (`log_bound` the
/// natural logarithm of a bound on its entries).
fn out_of_range(log_bound: f64, position: &str) -> ProblemError {
    ProblemError::NonFinite {
        what: format!(
            "N = D^T M^-1 D (its entries may reach 1e{:.0} from {position}: beyond the range of \
             double precision; scale the problem)",
            log_bound / std::f64::consts::LN_10
        ),
        position: position.into(),
        value: f64::INFINITY,
    }
}

/// `ln` of `max_k(1 / m_k) max_j ||D_:j||^2`, a bound on `|N_ij|` for `N = D^T M^-1 D`
/// (Cauchy-Schwarz), computed in logarithms so that it cannot overflow itself.
fn log_entry_bound(d: &CscMatrix, m_diag: &[f64]) -> f64 {
    let amax = (0..d.ncols())
        .flat_map(|j| d.col(j).1.iter())
        .fold(0.0f64, |a, v| a.max(v.abs()));
    let mmin = m_diag.iter().fold(f64::INFINITY, |a, &v| a.min(v));
    if amax == 0.0 || !mmin.is_finite() {
        return f64::NEG_INFINITY;
    }
    // ||D_:j||^2 = amax^2 sum (v / amax)^2, each term <= 1
    let smax = (0..d.ncols())
        .map(|j| d.col(j).1.iter().map(|v| (v / amax).powi(2)).sum::<f64>())
        .fold(0.0f64, f64::max);
    2.0 * amax.ln() + smax.ln() - mmin.ln()
}
