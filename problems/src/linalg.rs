//! Thin sparse-matrix layer over [`faer`]'s compressed-sparse-column storage.
//!
//! All of cpbench talks to sparse matrices through [`CscMatrix`], so that a faer version bump
//! touches this file only. The Delassus matrix `N` of an instance is stored in *full* (not
//! triangular) symmetric form, so column `j` is also row `j`: the symmetric product
//! [`CscMatrix::sym_matvec`] gathers along columns and parallelises over rows without atomics.

use crate::error::{ProblemError, Result};
use faer::sparse::{SparseColMat, SparseColMatRef, Triplet};
use rayon::prelude::*;

/// Number of stored entries above which [`CscMatrix::sym_matvec`] runs on the rayon pool.
///
/// Below it the fork/join overhead (a few microseconds) exceeds the work; see `benches/`.
pub const PAR_NNZ_THRESHOLD: usize = 100_000;

/// A real sparse matrix in compressed-sparse-column form with sorted, unique row indices.
///
/// Invariants (checked by every constructor): indices in range, all values finite, no duplicate
/// entries (duplicates in input triplets are summed).
#[derive(Clone, Debug)]
pub struct CscMatrix {
    inner: SparseColMat<usize, f64>,
}

impl CscMatrix {
    /// Build an `nrows x ncols` matrix from `(row, col, value)` triplets (0-based).
    ///
    /// Duplicate entries are summed. Errors: [`ProblemError::IndexOutOfRange`] for an index
    /// outside the dimensions, [`ProblemError::NonFinite`] for a NaN or infinite value, given
    /// or made by summing duplicates.
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        triplets: &[(usize, usize, f64)],
    ) -> Result<Self> {
        let mut entries = Vec::with_capacity(triplets.len());
        for &(i, j, v) in triplets {
            if i >= nrows || j >= ncols {
                return Err(ProblemError::IndexOutOfRange {
                    what: "matrix".into(),
                    row: i,
                    col: j,
                    nrows,
                    ncols,
                });
            }
            if !v.is_finite() {
                return Err(ProblemError::NonFinite {
                    what: "matrix".into(),
                    position: format!("({i}, {j})"),
                    value: v,
                });
            }
            entries.push(Triplet::new(i, j, v));
        }
        let inner = SparseColMat::try_new_from_triplets(nrows, ncols, &entries).map_err(|e| {
            ProblemError::Factorization(format!("sparse assembly failed: {}", plain_debug(&e)))
        })?;
        // finite entries may sum to an infinite one (`1e308` twice; found by fuzzing)
        let m = Self { inner };
        if let Some((i, j, v)) = (0..ncols).find_map(|j| {
            let (rows, vals) = m.col(j);
            rows.iter()
                .zip(vals)
                .find(|(_, v)| !v.is_finite())
                .map(|(&i, &v)| (i, j, v))
        }) {
            return Err(ProblemError::NonFinite {
                what: "matrix (duplicate entries summed)".into(),
                position: format!("({i}, {j})"),
                value: v,
            });
        }
        Ok(m)
    }

    /// Build an `nrows x ncols` matrix from compressed-sparse-column arrays, taking ownership
    /// (no copy, no sort): `col_ptr` (length `ncols + 1`, non-decreasing, `col_ptr[0] = 0`,
    /// `col_ptr[ncols] = nnz`), `row_idx` (length `nnz`, strictly increasing within each
    /// column, `< nrows`) and `values` (length `nnz`, finite). O(nnz) checks.
    ///
    /// This is the fast path for generators that know the structure (e.g. the granular
    /// stepper's Delassus assembly); [`CscMatrix::from_triplets`] sorts and is slower.
    /// Errors: [`ProblemError::SizeMismatch`] for inconsistent lengths or pointers,
    /// [`ProblemError::IndexOutOfRange`] for a row index out of range or out of order,
    /// [`ProblemError::NonFinite`] for a NaN or infinite value.
    pub fn from_csc_parts(
        nrows: usize,
        ncols: usize,
        col_ptr: Vec<usize>,
        row_idx: Vec<usize>,
        values: Vec<f64>,
    ) -> Result<Self> {
        if col_ptr.len() != ncols + 1 {
            return Err(ProblemError::SizeMismatch {
                what: "col_ptr".into(),
                expected: ncols + 1,
                found: col_ptr.len(),
            });
        }
        let nnz = row_idx.len();
        if values.len() != nnz {
            return Err(ProblemError::SizeMismatch {
                what: "values".into(),
                expected: nnz,
                found: values.len(),
            });
        }
        if col_ptr[0] != 0 || col_ptr[ncols] != nnz {
            return Err(ProblemError::SizeMismatch {
                what: "col_ptr[ncols]".into(),
                expected: nnz,
                found: col_ptr[ncols],
            });
        }
        for j in 0..ncols {
            let (a, b) = (col_ptr[j], col_ptr[j + 1]);
            if a > b || b > nnz {
                return Err(ProblemError::SizeMismatch {
                    what: format!("col_ptr[{}]", j + 1),
                    expected: a,
                    found: b,
                });
            }
            let mut prev = None;
            for k in a..b {
                let i = row_idx[k];
                if i >= nrows || prev.is_some_and(|p| i <= p) {
                    return Err(ProblemError::IndexOutOfRange {
                        what: "matrix (unsorted or out-of-range row index)".into(),
                        row: i,
                        col: j,
                        nrows,
                        ncols,
                    });
                }
                if !values[k].is_finite() {
                    return Err(ProblemError::NonFinite {
                        what: "matrix".into(),
                        position: format!("({i}, {j})"),
                        value: values[k],
                    });
                }
                prev = Some(i);
            }
        }
        let symbolic =
            faer::sparse::SymbolicSparseColMat::new_checked(nrows, ncols, col_ptr, None, row_idx);
        Ok(Self {
            inner: SparseColMat::new(symbolic, values),
        })
    }

    /// `A + diag(d)` for a square `A` (`d` of length `n`): the diagonal entries are added to,
    /// missing ones inserted in order (zeros of `d` are inserted too, so the pattern holds
    /// the whole diagonal). One pass over the entries. Errors: [`ProblemError::SizeMismatch`]
    /// (`d`'s length), [`ProblemError::NonFinite`] (a sum).
    pub fn plus_diagonal(&self, d: &[f64]) -> Result<Self> {
        let n = self.ncols();
        if d.len() != n || self.nrows() != n {
            return Err(ProblemError::SizeMismatch {
                what: "diagonal added to a matrix".into(),
                expected: self.nrows().min(n),
                found: d.len(),
            });
        }
        let nnz = self.nnz() + n;
        let (mut cp, mut ri, mut va) = (
            Vec::with_capacity(n + 1),
            Vec::with_capacity(nnz),
            Vec::with_capacity(nnz),
        );
        cp.push(0);
        for (j, &dj) in d.iter().enumerate() {
            let (rows, vals) = self.col(j);
            let mut done = false;
            for (&i, &v) in rows.iter().zip(vals) {
                if !done && i >= j {
                    if i == j {
                        ri.push(j);
                        va.push(v + dj);
                        done = true;
                        continue;
                    }
                    ri.push(j);
                    va.push(dj);
                    done = true;
                }
                ri.push(i);
                va.push(v);
            }
            if !done {
                ri.push(j);
                va.push(dj);
            }
            cp.push(ri.len());
        }
        Self::from_csc_parts(n, n, cp, ri, va)
    }

    /// Consume the matrix and return its compressed-sparse-column arrays `(col_ptr, row_idx,
    /// values)`, e.g. to reuse their storage for the next matrix of the same kind.
    pub fn into_csc_parts(self) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let (symbolic, values) = self.inner.into_parts();
        let (_, _, col_ptr, _, row_idx) = symbolic.into_parts();
        (col_ptr, row_idx, values)
    }

    /// Build from a dense matrix stored column-major (`values[i + j * nrows]`); exact zeros are
    /// not stored. Errors as [`CscMatrix::from_triplets`], plus [`ProblemError::SizeMismatch`].
    pub fn from_dense_col_major(nrows: usize, ncols: usize, values: &[f64]) -> Result<Self> {
        if values.len() != nrows * ncols {
            return Err(ProblemError::SizeMismatch {
                what: "dense matrix values".into(),
                expected: nrows * ncols,
                found: values.len(),
            });
        }
        let mut t = Vec::new();
        for j in 0..ncols {
            for i in 0..nrows {
                let v = values[i + j * nrows];
                if v != 0.0 || !v.is_finite() {
                    t.push((i, j, v));
                }
            }
        }
        Self::from_triplets(nrows, ncols, &t)
    }

    /// The `n x n` identity.
    pub fn identity(n: usize) -> Self {
        let t: Vec<_> = (0..n).map(|i| (i, i, 1.0)).collect();
        Self::from_triplets(n, n, &t).expect("identity is valid")
    }

    /// Wrap a faer matrix (values are checked for finiteness).
    pub fn from_faer(inner: SparseColMat<usize, f64>) -> Result<Self> {
        let m = Self { inner };
        for j in 0..m.ncols() {
            let (rows, vals) = m.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                if !v.is_finite() {
                    return Err(ProblemError::NonFinite {
                        what: "matrix".into(),
                        position: format!("({i}, {j})"),
                        value: v,
                    });
                }
            }
        }
        Ok(m)
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.inner.nrows()
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.inner.ncols()
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.inner.val().len()
    }

    /// Column pointers (length `ncols + 1`).
    #[inline]
    pub fn col_ptr(&self) -> &[usize] {
        self.inner.symbolic().col_ptr()
    }

    /// Row indices of all stored entries (length `nnz`), sorted within each column.
    #[inline]
    pub fn row_idx(&self) -> &[usize] {
        self.inner.symbolic().row_idx()
    }

    /// Values of all stored entries (length `nnz`).
    #[inline]
    pub fn values(&self) -> &[f64] {
        self.inner.val()
    }

    /// Row indices and values of column `j`. Panics if `j >= ncols` (internal use).
    #[inline]
    pub fn col(&self, j: usize) -> (&[usize], &[f64]) {
        let cp = self.col_ptr();
        let (a, b) = (cp[j], cp[j + 1]);
        (&self.row_idx()[a..b], &self.values()[a..b])
    }

    /// Borrow as a faer view (for factorisations).
    pub fn as_faer(&self) -> SparseColMatRef<'_, usize, f64> {
        self.inner.as_ref()
    }

    /// Entry `(i, j)` (0 when not stored). `O(log nnz_j)`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        let (rows, vals) = self.col(j);
        match rows.binary_search(&i) {
            Ok(k) => vals[k],
            Err(_) => 0.0,
        }
    }

    /// Diagonal entries (length `min(nrows, ncols)`).
    pub fn diag(&self) -> Vec<f64> {
        (0..self.nrows().min(self.ncols()))
            .map(|j| self.get(j, j))
            .collect()
    }

    /// `y = A x` for a general matrix (serial scatter). Shapes: `x` ncols, `y` nrows.
    pub fn matvec(&self, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), self.ncols());
        assert_eq!(y.len(), self.nrows());
        y.iter_mut().for_each(|v| *v = 0.0);
        for (j, &xj) in x.iter().enumerate() {
            if xj == 0.0 {
                continue;
            }
            let (rows, vals) = self.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                y[i] += v * xj;
            }
        }
    }

    /// `y = A x` for a matrix known to be symmetric (full storage): row `i` is column `i`, so
    /// each `y_i` is a dot product gathered along column `i`. Allocation free; runs in parallel
    /// when `nnz > PAR_NNZ_THRESHOLD`. Shapes: `x`, `y` of length `n`.
    #[inline]
    pub fn sym_matvec(&self, x: &[f64], y: &mut [f64]) {
        debug_assert_eq!(x.len(), self.ncols());
        debug_assert_eq!(y.len(), self.nrows());
        let cp = self.col_ptr();
        let ri = self.row_idx();
        let va = self.values();
        let row = |i: usize| -> f64 {
            let (a, b) = (cp[i], cp[i + 1]);
            let mut s = 0.0;
            for (&k, &v) in ri[a..b].iter().zip(&va[a..b]) {
                s += v * x[k];
            }
            s
        };
        fill_with(y, self.nnz() > PAR_NNZ_THRESHOLD, 64, row);
    }

    /// The transpose.
    pub fn transpose(&self) -> Self {
        let mut t = Vec::with_capacity(self.nnz());
        for j in 0..self.ncols() {
            let (rows, vals) = self.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                t.push((j, i, v));
            }
        }
        Self::from_triplets(self.ncols(), self.nrows(), &t).expect("transpose of a valid matrix")
    }

    /// Frobenius norm.
    pub fn frobenius_norm(&self) -> f64 {
        self.values().iter().map(|v| v * v).sum::<f64>().sqrt()
    }

    /// Asymmetry of a square matrix: `(||A - A^T||_F / ||A||_F, max |A_ij - A_ji|, i, j)`.
    /// The relative value is 0 for the zero matrix. O(nnz): the mirror `A_ji` of each stored
    /// `A_ij` is found with one forward-moving cursor per column (columns are visited in
    /// increasing order and rows are sorted), not by a search.
    pub fn asymmetry(&self) -> (f64, f64, usize, usize) {
        let n = self.ncols().min(self.nrows());
        let cp = self.col_ptr();
        let ri = self.row_idx();
        let va = self.values();
        let mut cursor: Vec<usize> = cp[..n].to_vec();
        let mut sum = 0.0;
        let (mut max_abs, mut mi, mut mj) = (0.0f64, 0, 0);
        for j in 0..self.ncols() {
            let (rows, vals) = self.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                // A_ji: row j of column i; the lookups into column i come with j increasing
                let mirror = if i < n && j < n {
                    let end = cp[i + 1];
                    let k = &mut cursor[i];
                    while *k < end && ri[*k] < j {
                        *k += 1;
                    }
                    if *k < end && ri[*k] == j {
                        va[*k]
                    } else {
                        0.0
                    }
                } else {
                    0.0
                };
                let d = v - mirror;
                sum += d * d;
                if d.abs() > max_abs {
                    max_abs = d.abs();
                    (mi, mj) = (i, j);
                }
            }
            // Entries (j, i) stored where (i, j) is not are visited from column i.
        }
        let nf = self.frobenius_norm();
        let rel = if nf > 0.0 { sum.sqrt() / nf } else { 0.0 };
        (rel, max_abs, mi, mj)
    }

    /// `(A + A^T) / 2` for a square matrix.
    pub fn symmetrized(&self) -> Self {
        let mut t = Vec::with_capacity(2 * self.nnz());
        for j in 0..self.ncols() {
            let (rows, vals) = self.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                t.push((i, j, 0.5 * v));
                t.push((j, i, 0.5 * v));
            }
        }
        Self::from_triplets(self.nrows(), self.ncols(), &t)
            .expect("symmetrisation of a valid matrix")
    }

    /// Principal submatrix `A[idx, idx]` (`idx` strictly increasing).
    pub fn principal_submatrix(&self, idx: &[usize]) -> Self {
        let mut map = vec![usize::MAX; self.nrows()];
        for (k, &i) in idx.iter().enumerate() {
            map[i] = k;
        }
        let mut t = Vec::new();
        for (kj, &j) in idx.iter().enumerate() {
            let (rows, vals) = self.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                if map[i] != usize::MAX {
                    t.push((map[i], kj, v));
                }
            }
        }
        Self::from_triplets(idx.len(), idx.len(), &t).expect("submatrix of a valid matrix")
    }

    /// Largest eigenvalue estimate of a symmetric PSD matrix by `iters` power iterations from
    /// the all-ones vector (returns 0 for the zero matrix). Costs `iters` products; see
    /// [`power_iteration`] with [`PowerRule::Fixed`].
    pub fn power_iteration(&self, iters: usize) -> f64 {
        let n = self.nrows();
        let (mut x, mut y) = (vec![0.0; n], vec![0.0; n]);
        let apply = |x: &[f64], y: &mut [f64]| self.sym_matvec(x, y);
        power_iteration(apply, &mut x, &mut y, PowerRule::Fixed { iters }).0
    }
}

/// The stopping and scaling rule of [`power_iteration`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PowerRule {
    /// Exactly `iters` iterations `x <- A x / ||A x||` from the normalised all-ones vector,
    /// `lambda = x^T A x` (`||x|| = 1`); stops early with `lambda = 0` when `A x = 0`.
    Fixed {
        /// Number of products.
        iters: usize,
    },
    /// PERMON's `MatGetMaxEigenvalue` (used by its MPGP to set the expansion step): start from
    /// the all-ones vector `v`, estimate `lambda_k = v^T A v / v^T v` (the Rayleigh quotient),
    /// stop when `|lambda_k - lambda_{k-1}| / |lambda_k| < rtol` or after `max_iter` products,
    /// else `v <- A v / ||v||`. PERMON's defaults are `rtol = 1e-4`, `max_iter = 50`. If the
    /// all-ones vector lies in the null space of `A` (`lambda_1 = 0`), the iteration restarts
    /// once from a fixed non-constant vector (PERMON draws a random one). The Rayleigh quotient
    /// never exceeds `lambda_max(A)`; stopped early it underestimates it.
    Relative {
        /// Largest number of products.
        max_iter: usize,
        /// Relative change of the estimate that stops the iteration.
        rtol: f64,
    },
}

/// Largest eigenvalue of a symmetric positive semidefinite operator by the power method: the
/// one power iteration of cpbench (the `lambda_max(N)` of [`CscMatrix::power_iteration`], the
/// solvers' step lengths, PERMON's MPRGP/MPGP expansion step).
///
/// `apply(x, y)` writes `y = A x` (shapes `n`); `x`, `y` are scratch vectors of length `n`
/// (overwritten; `x` ends as the last iterate). Returns `(lambda, products)`: the estimate,
/// clamped to `>= 0` (0 for a zero operator or `n = 0`), and the number of `apply` calls.
/// Allocates nothing.
// `!(relerr >= rtol)` is deliberate: a NaN change also stops the iteration (as in PERMON).
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub fn power_iteration(
    mut apply: impl FnMut(&[f64], &mut [f64]),
    x: &mut [f64],
    y: &mut [f64],
    rule: PowerRule,
) -> (f64, u64) {
    let (max_iter, start) = match rule {
        PowerRule::Fixed { iters } => (iters, 1.0 / (x.len().max(1) as f64).sqrt()),
        PowerRule::Relative { max_iter, .. } => (max_iter, 1.0),
    };
    x.iter_mut().for_each(|v| *v = start);
    let mut lam = 0.0f64;
    let mut products = 0u64;
    let mut restarted = false;
    while (products as usize) < max_iter {
        apply(x, y);
        products += 1;
        match rule {
            PowerRule::Fixed { .. } => {
                let ny = norm2(y);
                if ny == 0.0 {
                    return (0.0, products);
                }
                lam = dot(x, y);
                for (xi, yi) in x.iter_mut().zip(y.iter()) {
                    *xi = yi / ny;
                }
            }
            PowerRule::Relative { rtol, .. } => {
                let xx = dot(x, x);
                let lam_new = if xx > 0.0 { dot(x, y) / xx } else { 0.0 };
                if lam_new < f64::EPSILON && !restarted {
                    // hit the null space: restart from a fixed non-constant vector
                    restarted = true;
                    for (k, xi) in x.iter_mut().enumerate() {
                        *xi = ((k * 7919) % 104_729) as f64 / 104_729.0 - 0.5;
                    }
                    lam = 0.0;
                    continue;
                }
                let relerr = (lam_new - lam).abs() / lam_new.abs();
                lam = lam_new;
                if !(relerr >= rtol) {
                    break;
                }
                let s = 1.0 / xx.sqrt();
                for (xi, yi) in x.iter_mut().zip(y.iter()) {
                    *xi = yi * s;
                }
            }
        }
    }
    (lam.max(0.0), products)
}

/// Dot product of two slices of equal length.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Euclidean norm.
#[inline]
pub fn norm2(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// Euclidean distance `||a - b||` of two slices of equal length.
#[inline]
pub fn dist2(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// Maximum norm (0 for an empty slice).
#[inline]
pub fn norm_inf(a: &[f64]) -> f64 {
    a.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The `Debug` text of a library's error or status enum (faer's `NonPositivePivot { index: 3
/// }`, `Generic(OutOfMemory)`, hdf5's datatypes, Clarabel's statuses) in plain words for
/// messages: `non positive pivot (index = 3)`, `generic: out of memory`. Identifiers in
/// CamelCase become lower-case words, `X(Y)` becomes `x: y`, `{ a: b }` becomes `(a = b)`.
/// User-facing errors never print Rust's debug forms; this is the fallback for the variants
/// of another crate's type that are not worded one by one.
pub fn plain_debug(v: &impl std::fmt::Debug) -> String {
    let text = format!("{v:?}");
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev_lower = false;
    let mut braces = 0usize;
    for c in text.chars() {
        match c {
            'A'..='Z' => {
                if prev_lower {
                    out.push(' ');
                }
                out.push(c.to_ascii_lowercase());
                prev_lower = false;
                continue;
            }
            '(' => out.push_str(": "),
            ')' => {}
            '{' => {
                braces += 1;
                out.push('(');
            }
            '}' => {
                braces = braces.saturating_sub(1);
                while out.ends_with(' ') {
                    out.pop();
                }
                out.push(')');
            }
            ':' if braces > 0 => out.push_str(" ="),
            _ => out.push(c),
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    // `x (a = b)` reads better than `x ( a = b)`
    out.replace("( ", "(").replace("  ", " ").trim().to_string()
}

/// `out[i] = f(i)` for every `i`: in parallel (rayon, at least `min_len` entries a task) when
/// `parallel`, else in a plain loop. Each entry is computed the same way either way.
#[inline]
pub(crate) fn fill_with(
    out: &mut [f64],
    parallel: bool,
    min_len: usize,
    f: impl Fn(usize) -> f64 + Sync,
) {
    if parallel {
        out.par_iter_mut()
            .enumerate()
            .with_min_len(min_len)
            .for_each(|(i, o)| *o = f(i));
    } else {
        for (i, o) in out.iter_mut().enumerate() {
            *o = f(i);
        }
    }
}
