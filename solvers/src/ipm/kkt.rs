//! The reduced Newton system of the interior point, `K = N + G^T W^-2 G`, kept in one CSC
//! pattern (the lower triangle of `N`, its diagonal and the lower triangles of the 3x3 contact
//! blocks) so that one symbolic sparse Cholesky factorisation (faer, AMD ordering) serves every
//! iteration; the numeric factorisation writes into preallocated storage.
//!
//! Variables fixed by the constraints (`lo = hi`, tangents of a contact with `mu = 0`) get an
//! identity row and column, so their Newton step is zero.

use cpbench_problems::linalg::plain_debug;
use cpbench_problems::CscMatrix;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::{LltParams, LltRegularization};
use faer::sparse::linalg::cholesky::{LltRef, SymbolicCholesky, SymbolicCholeskyRaw};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side, Spec};

/// Estimated peak bytes of assembling the pattern of `K` and its symbolic factorisation
/// (before the numeric factor): from the number of entries of the lower triangle of `K`
/// (`N`'s lower triangle, its diagonal, 6 entries per 3x3 block), about 64 bytes per entry
/// (column lists, indices, two value arrays, the ordering's symmetric pattern) and 112 per
/// variable. Counts `N`'s lower triangle exactly (binary search per column).
pub fn assembly_bytes(nmat: &CscMatrix, n_blocks: usize) -> u64 {
    let n = nmat.nrows();
    let mut lower = 0u64;
    for j in 0..n {
        let (rows, _) = nmat.col(j);
        let k = rows.partition_point(|&i| i < j);
        lower += (rows.len() - k) as u64;
        if rows.get(k) != Some(&j) {
            lower += 1;
        }
    }
    lower += 6 * n_blocks as u64;
    64 * lower + 112 * n as u64
}

/// Floating-point operations of a numeric Cholesky factorisation with this symbolic
/// structure: the sum over the columns of `L` of the squared number of entries in the column
/// (diagonal included); for a supernode of `w` columns and `h` rows, `sum_{i<w} (h - i)^2`.
fn factor_flops(symbolic: &SymbolicCholesky<usize>) -> f64 {
    match symbolic.raw() {
        SymbolicCholeskyRaw::Simplicial(s) => s
            .col_ptr()
            .windows(2)
            .map(|w| ((w[1] - w[0]) as f64).powi(2))
            .sum(),
        SymbolicCholeskyRaw::Supernodal(s) => {
            let begin = s.supernode_begin();
            let end = s.supernode_end();
            let mut f = 0.0;
            for k in 0..s.n_supernodes() {
                let w = (end[k] - begin[k]) as f64;
                let h = w + s.supernode(k).pattern().len() as f64;
                // sum_{i=0}^{w-1} (h - i)^2
                f += w * h * h - h * w * (w - 1.0) + (w - 1.0) * w * (2.0 * w - 1.0) / 6.0;
            }
            f
        }
    }
}

/// Factor size (stored entries of `L`) from which factorisation and solves use rayon.
const PARALLEL_MIN_FACTOR_NNZ: usize = 1 << 20;

/// The reduced Newton system `K = N + G^T W^-2 G` of the interior point (module docs): its
/// CSC pattern (lower triangle), the symbolic Cholesky factorisation of that pattern and,
/// after [`Kkt::allocate_numeric`], the storage of the numeric factor. Before allocating, the
/// interior point checks [`Kkt::predicted_bytes`] and [`Kkt::factor_flops`] against its memory
/// and time budgets.
pub struct Kkt {
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
    /// Values of the factor (empty until [`Kkt::allocate_numeric`]).
    l_values: Vec<f64>,
    mem: MemBuffer,
    /// Scratch of the numeric factorisation and solves.
    req: StackReq,
    par: Par,
    /// Floating-point operations of one numeric factorisation (sum over the columns of `L`
    /// of the squared column count).
    flops: f64,
    /// Largest diagonal of `N` (scale for the regularisation thresholds).
    pub(crate) diag_scale: f64,
}

impl Kkt {
    /// The pattern and symbolic factorisation for `N` (`n x n`, full symmetric storage), the
    /// 3x3 diagonal contact blocks starting at the indices `blocks`, and the fixed variables
    /// (`fixed`, length `n`: identity rows and columns). Nothing numeric is allocated yet.
    /// Errors: the symbolic factorisation's message when faer refuses the pattern.
    pub fn new(nmat: &CscMatrix, blocks: &[usize], fixed: Vec<bool>) -> Result<Self, String> {
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
        let (col_ptr, row_idx) = crate::kernels::csc_pattern(&mut cols);
        let find = |i, j| crate::kernels::pattern_position(&col_ptr, &row_idx, i, j);
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
        let symbolic = crate::kernels::symbolic_llt(n, &col_ptr, &row_idx)?;
        // Parallel supernodal factorisation (rayon) only where the factor is large enough.
        let par = if symbolic.len_val() >= PARALLEL_MIN_FACTOR_NNZ {
            Par::rayon(0)
        } else {
            Par::Seq
        };
        let req = symbolic
            .factorize_numeric_llt_scratch::<f64>(par, Spec::<LltParams, f64>::default())
            .or(symbolic.solve_in_place_scratch::<f64>(1, par));
        let flops = factor_flops(&symbolic);
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
            l_values: Vec::new(),
            mem: MemBuffer::new(StackReq::EMPTY),
            req,
            par,
            flops,
            diag_scale,
        })
    }

    /// Allocate the numeric factor and the scratch (after [`Kkt::predicted_bytes`] was
    /// checked against the memory budget).
    pub fn allocate_numeric(&mut self) {
        self.l_values = vec![0.0; self.symbolic.len_val()];
        self.mem = MemBuffer::new(self.req);
    }

    /// Floating-point operations of one numeric factorisation.
    pub fn factor_flops(&self) -> f64 {
        self.flops
    }

    /// Stored entries of the Cholesky factor `L` predicted by the symbolic factorisation.
    pub fn predicted_factor_nnz(&self) -> usize {
        self.symbolic.len_val()
    }

    /// Bytes this system holds once [`Kkt::allocate_numeric`] ran: the numeric factor
    /// (`nnz(L)` values), the scratch, the assembled pattern and values and the symbolic
    /// factor (its row indices and permutation), as `(factor + scratch, the rest)`.
    pub fn predicted_bytes(&self) -> (u64, u64) {
        let w = std::mem::size_of::<usize>() as u64;
        let factor = 8 * self.symbolic.len_val() as u64 + self.req.size_bytes() as u64;
        let nnz = self.row_idx.len() as u64;
        let n = self.n as u64;
        let symbolic_idx = match self.symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(s) => (s.row_idx().len() + s.col_ptr().len()) as u64,
            SymbolicCholeskyRaw::Supernodal(s) => {
                // row indices, twice (the row-major copy), and four arrays per supernode
                2 * s.row_idx().len() as u64 + 4 * s.n_supernodes() as u64
            }
        };
        let assembled = nnz * (w + 16)
            + (n + 1) * w
            + n * (w + 1)
            + (self.block_pos.len() as u64) * 9 * w
            + self.fixed_pos.len() as u64 * w
            + (symbolic_idx + 2 * n) * w;
        (factor, assembled)
    }

    /// Stored entries of the Cholesky factor `L`.
    pub fn factor_nnz(&self) -> usize {
        self.l_values.len()
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
            .map_err(|e| plain_debug(&e));
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
