//! The reduced Newton system of the interior point, `K = N + G^T W^-2 G`, kept in one CSC
//! pattern (the lower triangle of `N`, its diagonal and the lower triangles of the 3x3 contact
//! blocks) so that one symbolic sparse Cholesky factorisation (faer, AMD ordering) serves every
//! iteration; the numeric factorisation writes into preallocated storage.
//!
//! Variables fixed by the constraints (`lo = hi`, tangents of a contact with `mu = 0`) get an
//! identity row and column, so their Newton step is zero.

use cpbench_problems::CscMatrix;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{LltParams, LltRegularization};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, LltRef, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side, Spec};

/// Factor size (stored entries of `L`) from which factorisation and solves use rayon.
const PARALLEL_MIN_FACTOR_NNZ: usize = 1 << 20;

/// Reduced system storage, symbolic factorisation and numeric factor.
pub(crate) struct Kkt {
    n: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Values of `K` (lower triangle).
    pub(crate) values: Vec<f64>,
    /// Values of the lower triangle of `N` in this pattern (copied into `values` first).
    n_values: Vec<f64>,
    /// Position of each diagonal entry.
    diag_pos: Vec<usize>,
    /// Positions of the lower-triangle entries of each 3x3 contact block, `[a][b]`, `a >= b`
    /// (upper entries unused).
    block_pos: Vec<[[usize; 3]; 3]>,
    /// Positions whose row or column is a fixed variable (zeroed after assembly).
    fixed_pos: Vec<usize>,
    fixed: Vec<bool>,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    mem: MemBuffer,
    par: Par,
    /// Largest diagonal of `N` (scale for the regularisation thresholds).
    pub(crate) diag_scale: f64,
}

impl Kkt {
    /// Pattern for `N` (full symmetric storage), `blocks` 3x3 diagonal blocks starting at the
    /// given indices, and the fixed variables.
    pub(crate) fn new(
        nmat: &CscMatrix,
        blocks: &[usize],
        fixed: Vec<bool>,
    ) -> Result<Self, String> {
        let n = nmat.nrows();
        let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (j, col) in cols.iter_mut().enumerate() {
            let (rows, _) = nmat.col(j);
            col.extend(rows.iter().copied().filter(|&i| i >= j));
            col.push(j);
        }
        for &b in blocks {
            for a in 0..3 {
                for c in 0..=a {
                    cols[b + c].push(b + a);
                }
            }
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for col in cols.iter_mut() {
            col.sort_unstable();
            col.dedup();
            row_idx.extend_from_slice(col);
            col_ptr.push(row_idx.len());
        }
        let find = |i: usize, j: usize| -> usize {
            let s = &row_idx[col_ptr[j]..col_ptr[j + 1]];
            col_ptr[j] + s.binary_search(&i).expect("entry in pattern")
        };
        let mut n_values = vec![0.0; row_idx.len()];
        for j in 0..n {
            let (rows, vals) = nmat.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                if i >= j {
                    n_values[find(i, j)] += v;
                }
            }
        }
        let diag_pos: Vec<usize> = (0..n).map(|j| find(j, j)).collect();
        let block_pos = blocks
            .iter()
            .map(|&b| {
                let mut p = [[0usize; 3]; 3];
                for (a, row) in p.iter_mut().enumerate() {
                    for (c, x) in row.iter_mut().enumerate().take(a + 1) {
                        *x = find(b + a, b + c);
                    }
                }
                p
            })
            .collect();
        let mut fixed_pos = Vec::new();
        for j in 0..n {
            for (k, &i) in row_idx[col_ptr[j]..col_ptr[j + 1]].iter().enumerate() {
                if i != j && (fixed[i] || fixed[j]) {
                    fixed_pos.push(col_ptr[j] + k);
                }
            }
        }
        let diag_scale = diag_pos
            .iter()
            .map(|&p| n_values[p].abs())
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(
            pattern,
            Side::Lower,
            SymmetricOrdering::Amd,
            Default::default(),
        )
        .map_err(|e| format!("symbolic Cholesky: {e:?}"))?;
        let l_values = vec![0.0; symbolic.len_val()];
        // Parallel supernodal factorisation (rayon) only where the factor is large enough.
        let par = if l_values.len() >= PARALLEL_MIN_FACTOR_NNZ {
            Par::rayon(0)
        } else {
            Par::Seq
        };
        let req = symbolic
            .factorize_numeric_llt_scratch::<f64>(par, Spec::<LltParams, f64>::default())
            .or(symbolic.solve_in_place_scratch::<f64>(1, par));
        let mem = MemBuffer::new(req);
        Ok(Self {
            n,
            col_ptr,
            row_idx,
            values: n_values.clone(),
            n_values,
            diag_pos,
            block_pos,
            fixed_pos,
            fixed,
            symbolic,
            l_values,
            mem,
            par,
            diag_scale,
        })
    }

    /// Stored entries of the Cholesky factor `L`.
    pub(crate) fn factor_nnz(&self) -> usize {
        self.l_values.len()
    }

    /// Which variables are fixed.
    pub(crate) fn fixed(&self) -> &[bool] {
        &self.fixed
    }

    /// Reset `values` to the lower triangle of `N`.
    pub(crate) fn reset(&mut self) {
        self.values.copy_from_slice(&self.n_values);
    }

    /// Add `d` to diagonal entry `j`.
    pub(crate) fn add_diag(&mut self, j: usize, d: f64) {
        self.values[self.diag_pos[j]] += d;
    }

    /// Add the symmetric 3x3 matrix `m` to contact block `c`.
    pub(crate) fn add_block(&mut self, c: usize, m: &[[f64; 3]; 3]) {
        let p = self.block_pos[c];
        for a in 0..3 {
            for b in 0..=a {
                self.values[p[a][b]] += m[a][b];
            }
        }
    }

    /// Impose identity rows/columns on fixed variables, add `static_reg` to the diagonal and
    /// factorise numerically. Pivots below `eps * diag_scale` are replaced by
    /// `delta * diag_scale` (faer's dynamic regularisation). Afterwards `values` holds `K`
    /// without the static term, for [`Kkt::matvec`] in iterative refinement. Errors: a
    /// non-positive pivot that the regularisation did not catch.
    pub(crate) fn factorize(
        &mut self,
        static_reg: f64,
        eps: f64,
        delta: f64,
    ) -> Result<(), String> {
        for &p in &self.fixed_pos {
            self.values[p] = 0.0;
        }
        for j in 0..self.n {
            let p = self.diag_pos[j];
            if self.fixed[j] {
                self.values[p] = 1.0;
            } else {
                self.values[p] += static_reg * self.diag_scale;
            }
        }
        let pattern = SymbolicSparseColMatRef::new_checked(
            self.n,
            self.n,
            &self.col_ptr,
            None,
            &self.row_idx,
        );
        let a = SparseColMatRef::new(pattern, &self.values);
        let reg = LltRegularization {
            dynamic_regularization_delta: delta * self.diag_scale,
            dynamic_regularization_epsilon: eps * self.diag_scale,
        };
        let stack = MemStack::new(&mut self.mem);
        let res = self
            .symbolic
            .factorize_numeric_llt(
                &mut self.l_values,
                a,
                Side::Lower,
                reg,
                self.par,
                stack,
                Spec::<LltParams, f64>::default(),
            )
            .map(|_| ())
            .map_err(|e| format!("{e:?}"));
        for j in 0..self.n {
            if !self.fixed[j] {
                self.values[self.diag_pos[j]] -= static_reg * self.diag_scale;
            }
        }
        res
    }

    /// Solve `K x = rhs` in place with the last factorisation.
    pub(crate) fn solve(&mut self, rhs: &mut [f64]) {
        let llt = LltRef::new(&self.symbolic, &self.l_values);
        let stack = MemStack::new(&mut self.mem);
        let m = MatMut::from_column_major_slice_mut(rhs, self.n, 1);
        llt.solve_in_place_with_conj(Conj::No, m, self.par, stack);
    }

    /// `y = K x` with the assembled values (lower triangle, symmetric product), for iterative
    /// refinement against the unregularised matrix.
    pub(crate) fn matvec(&self, x: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for j in 0..self.n {
            for k in self.col_ptr[j]..self.col_ptr[j + 1] {
                let i = self.row_idx[k];
                let v = self.values[k];
                y[i] += v * x[j];
                if i != j {
                    y[j] += v * x[i];
                }
            }
        }
    }
}
