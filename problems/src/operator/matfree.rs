//! The matrix-free Delassus operator `N = D^T M^-1 D` (docs/formulation.md section 1), applied
//! from the contact Jacobian `D` (`m x n`: `m` generalised velocities, `n` contact unknowns) and
//! the mass matrix `M` (`m x m`), never formed. Instances whose `N` would not fit in memory still
//! run: `D` of a granular scene has at most 36 entries per contact (two bodies, 6 velocities, 3
//! directions) against about 200 entries per contact of `N` (pyramid scenes).
//!
//! # Product
//! `y = N x` is `t = M^-1 (D x)` then `y = D^T t`, both as parallel gathers: `D` is kept in
//! compressed columns (column `j` = unknown `j`, for `D^T t`) and in compressed rows (row `k` =
//! velocity `k`, for `D x`), i.e. twice its 12-16 bytes per entry. A buffer of length `m` comes
//! from a pool kept in the operator (no allocation per product after the first).
//!
//! # Row access (Gauss-Seidel)
//! Projected Gauss-Seidel on this form keeps the velocity `v = M^-1 D gamma` up to date per
//! contact, as Chrono, Bullet and ODE do: `(N gamma)_c = D_c^T v` and, after `gamma_c` changed by
//! `delta`, `v += M^-1 D_c delta`: O(nnz(D)) per sweep ([`MatrixFree::block_row`],
//! [`MatrixFree::block_changed`]). This needs `M^-1 D_c` column by column, so `M` must be
//! diagonal ([`MassInverse::Diagonal`]).

use crate::error::{ProblemError, Result};
use crate::linalg::{fill_with, CscMatrix};
use std::sync::Mutex;

/// Entries of `D` above which the products run on the rayon pool.
const PAR_MIN_NNZ: usize = 100_000;

/// How `M^-1` is applied.
#[derive(Clone, Debug, PartialEq)]
pub enum MassInverse {
    /// `M` diagonal: the inverse diagonal (length `m`, positive finite entries).
    Diagonal(Vec<f64>),
}

/// `N = D^T M^-1 D` applied from its factors (see the module documentation).
#[derive(Debug)]
pub struct MatrixFree {
    d: CscMatrix,
    /// `D^T` (`n x m`), whose columns are the rows of `D`.
    dt: CscMatrix,
    m_inv: MassInverse,
    /// The diagonal of `M` as given (`1 / (1 / m)` need not be `m` bit for bit).
    m_diag: Vec<f64>,
    /// A diagonal `R` added to `N` (a contact compliance, [`MatrixFree::with_shift`]):
    /// the operator is then `D^T M^-1 D + R`.
    shift: Option<Vec<f64>>,
    pool: Mutex<Vec<Vec<f64>>>,
}

impl Clone for MatrixFree {
    fn clone(&self) -> Self {
        Self {
            d: self.d.clone(),
            dt: self.dt.clone(),
            m_inv: self.m_inv.clone(),
            m_diag: self.m_diag.clone(),
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
            return Err(ProblemError::NonFinite {
                what: format!(
                    "N = D^T M^-1 D (its entries may reach 1e{:.0} from D and M_diag: beyond \
                     the range of double precision; scale the problem)",
                    log_bound / std::f64::consts::LN_10
                ),
                position: "D and M_diag".into(),
                value: f64::INFINITY,
            });
        }
        let dt = transpose_csc(&d)?;
        Ok(Self {
            d,
            dt,
            m_inv: MassInverse::Diagonal(m_diag.iter().map(|v| 1.0 / v).collect()),
            m_diag: m_diag.to_vec(),
            shift: None,
            pool: Mutex::new(Vec::new()),
        })
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
    /// [`MatrixFree::with_diagonal_mass`].
    pub fn mass_diagonal(&self) -> Vec<f64> {
        self.m_diag.clone()
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
    /// `M^-1`.
    pub fn bytes(&self) -> u64 {
        let ix = std::mem::size_of::<usize>();
        let shift = if self.shift.is_some() {
            self.n() * 8
        } else {
            0
        };
        (2 * self.d.nnz() * (8 + ix) + (self.n() + self.m()) * ix + self.m() * 8 + shift) as u64
    }

    /// `t = M^-1 D x` (length `m`).
    fn velocity(&self, x: &[f64], t: &mut [f64]) {
        let MassInverse::Diagonal(w) = &self.m_inv;
        let (cp, ri, va) = (self.dt.col_ptr(), self.dt.row_idx(), self.dt.values());
        let row = |k: usize| -> f64 {
            let mut s = 0.0;
            for (&j, &v) in ri[cp[k]..cp[k + 1]].iter().zip(&va[cp[k]..cp[k + 1]]) {
                s += v * x[j];
            }
            s * w[k]
        };
        fill_with(t, self.d.nnz() > PAR_MIN_NNZ, 256, row);
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

    /// `y = D^T M^-1 D x`. Shapes: `x`, `y` of length `n`.
    pub fn matvec(&self, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), self.n());
        assert_eq!(y.len(), self.n());
        let mut t = self
            .pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default();
        t.resize(self.m(), 0.0);
        self.velocity(x, &mut t);
        self.transpose_apply(&t, y);
        if let Ok(mut p) = self.pool.lock() {
            p.push(t);
        }
        if let Some(s) = &self.shift {
            for ((yi, xi), si) in y.iter_mut().zip(x).zip(s) {
                *yi += si * xi;
            }
        }
    }

    /// `v = M^-1 D gamma` (length `m`), the velocity Gauss-Seidel keeps up to date.
    pub fn velocity_of(&self, gamma: &[f64], v: &mut [f64]) {
        self.velocity(gamma, v);
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

    /// After `gamma_c` changed by `delta` (length `bs`): `v += M^-1 D_c delta`.
    #[inline]
    pub fn block_changed(&self, c: usize, bs: usize, delta: &[f64], v: &mut [f64]) {
        let MassInverse::Diagonal(w) = &self.m_inv;
        for (a, &da) in delta.iter().enumerate().take(bs) {
            if da == 0.0 {
                continue;
            }
            let (rows, vals) = self.d.col(bs * c + a);
            for (&k, &d) in rows.iter().zip(vals) {
                v[k] += w[k] * d * da;
            }
        }
    }

    /// The contacts (blocks of `bs` unknowns) that share a generalised velocity with contact
    /// `c` (`N_cd = D_c^T M^-1 D_d` can be non-zero only for those, `M` diagonal), appended
    /// to `out`, possibly with repeats (the caller deduplicates); `c` itself is left out.
    pub fn contact_neighbours(&self, c: usize, bs: usize, out: &mut Vec<u32>) {
        for a in 0..bs {
            for &k in self.d.col(bs * c + a).0 {
                for &u in self.dt.col(k).0 {
                    let d = u / bs;
                    if d != c {
                        out.push(d as u32);
                    }
                }
            }
        }
    }

    /// Diagonal block `c` of `N`: `D_c^T M^-1 D_c` (row-major, `bs^2` numbers).
    pub fn diag_block(&self, c: usize, bs: usize) -> [f64; 9] {
        let MassInverse::Diagonal(w) = &self.m_inv;
        let mut out = [0.0; 9];
        for a in 0..bs {
            for b in a..bs {
                let (ra, va) = self.d.col(bs * c + a);
                let (rb, vb) = self.d.col(bs * c + b);
                // sorted merge of the two columns
                let (mut i, mut j, mut s) = (0, 0, 0.0);
                while i < ra.len() && j < rb.len() {
                    match ra[i].cmp(&rb[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            s += va[i] * w[ra[i]] * vb[j];
                            i += 1;
                            j += 1;
                        }
                    }
                }
                out[a * bs + b] = s;
                out[b * bs + a] = s;
            }
            if let Some(sh) = &self.shift {
                out[a * bs + a] += sh[bs * c + a];
            }
        }
        out
    }

    /// Form `N = D^T M^-1 D` as a full symmetric CSC matrix (for solvers that factorise it).
    /// Cost: the sparse product; memory: `N` itself.
    pub fn to_csc(&self) -> Result<CscMatrix> {
        let MassInverse::Diagonal(w) = &self.m_inv;
        let n = self.n();
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        let mut values = Vec::new();
        let mut acc = vec![0.0; n];
        let mut mark = vec![usize::MAX; n];
        let mut list: Vec<usize> = Vec::new();
        col_ptr.push(0);
        for j in 0..n {
            list.clear();
            let (rows, vals) = self.d.col(j);
            for (&k, &dkj) in rows.iter().zip(vals) {
                let s = w[k] * dkj;
                let (cols, dv) = self.dt.col(k);
                for (&i, &dki) in cols.iter().zip(dv) {
                    if mark[i] != j {
                        mark[i] = j;
                        acc[i] = 0.0;
                        list.push(i);
                    }
                    acc[i] += dki * s;
                }
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
