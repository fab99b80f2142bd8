//! The basis of Lemke's method and its two linear-algebra representations.
//!
//! The system is `w - M z - d z0 = q` (Cottle, Pang & Stone 1992, eq. 4.4.1 with the covering
//! vector `d`), with `2n + 1` variables numbered `v = 0..n` for `w_v`, `n..2n` for `z_(v-n)` and
//! `2n` for `z0`. The basis matrix `B` holds the columns of the `n` basic variables: `e_j` for
//! `w_j`, `-M e_j` for `z_j`, `-d` for `z0`. Both representations give `B^-1 a` (FTRAN), a
//! row `e_i^T B^-1` (for the lexicographic ratio test), `B^-1 q`, and follow a pivot:
//!
//! - [`Dense`]: the explicit inverse `B^-1` (column-major `n x n`), updated by one Gauss-Jordan
//!   pivot per exchange (`O(n^2)`) and recomputed from `B` (Gauss-Jordan with partial pivoting,
//!   `O(n^3)`) every `max(k, n)` exchanges to remove the drift of the updates;
//! - [`Sparse`]: a sparse LU of `B` (faer's supernodal/simplicial LU with partial pivoting and
//!   a COLAMD column order), refactorised every `k` exchanges, with the product-form (eta)
//!   update `B_new^-1 = E^-1 B^-1` in between (Dantzig & Orchard-Hays 1954): `E` is the identity
//!   with column `r` replaced by the FTRAN column of the entering variable.
//!
//! Nothing here allocates between refactorisations; a sparse refactorisation allocates its
//! new symbolic structure and scratch (faer's API), a dense one nothing.

use crate::status::SolverError;
use cpbench_problems::CscMatrix;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

/// The columns of `[I, -M, -d]`: `M` (CSC, `n x n`) and the covering vector `d` (length `n`).
pub(crate) struct System<'a> {
    /// `M` in CSC form (columns of `M`).
    pub m: &'a CscMatrix,
    /// The covering vector `d > 0`.
    pub d: &'a [f64],
}

impl System<'_> {
    fn n(&self) -> usize {
        self.d.len()
    }

    /// `out = a_v`, the column of variable `v` (dense, length `n`).
    pub fn scatter(&self, v: usize, out: &mut [f64]) {
        let n = self.n();
        out.fill(0.0);
        if v < n {
            out[v] = 1.0;
        } else if v < 2 * n {
            let (ri, va) = self.m.col(v - n);
            for (&i, &x) in ri.iter().zip(va) {
                out[i] = -x;
            }
        } else {
            for (o, &di) in out.iter_mut().zip(self.d) {
                *o = -di;
            }
        }
    }
}

/// The two representations of `B^-1`.
pub(crate) enum Basis {
    /// Explicit inverse.
    Dense(Dense),
    /// Sparse LU with eta updates.
    Sparse(Box<Sparse>),
}

impl Basis {
    /// `out = B^-1 a_v`.
    pub fn ftran(&mut self, sys: &System, v: usize, out: &mut [f64]) {
        match self {
            Basis::Dense(b) => b.ftran(sys, v, out),
            Basis::Sparse(b) => {
                sys.scatter(v, out);
                b.solve(out);
            }
        }
    }

    /// `x = B^-1 x` in place (`tmp`: scratch of length `n`).
    pub fn solve(&mut self, x: &mut [f64], tmp: &mut [f64]) {
        match self {
            Basis::Dense(b) => {
                b.apply_to(x, tmp);
                x.copy_from_slice(tmp);
            }
            Basis::Sparse(b) => b.solve(x),
        }
    }

    /// `out = e_i^T B^-1`, row `i` of the inverse.
    pub fn row(&mut self, i: usize, out: &mut [f64]) {
        match self {
            Basis::Dense(b) => b.row(i, out),
            Basis::Sparse(b) => b.row(i, out),
        }
    }

    /// Exchange: basic variable of row `r` replaced by the one whose FTRAN column is `col`.
    pub fn pivot(&mut self, r: usize, col: &[f64]) {
        match self {
            Basis::Dense(b) => b.pivot(r, col),
            Basis::Sparse(b) => b.push_eta(r, col),
        }
    }

    /// Whether the representation is due for a refactorisation.
    pub fn due(&self) -> bool {
        match self {
            Basis::Dense(b) => b.since >= b.every,
            Basis::Sparse(b) => b.eta_r.len() >= b.every,
        }
    }

    /// Factorise `B` of the basic variables `basis` (row `k` holds variable `basis[k]`) anew.
    /// Errors: [`SolverError::Numerical`] for a singular `B`.
    pub fn refactor(&mut self, sys: &System, basis: &[usize]) -> Result<(), SolverError> {
        match self {
            Basis::Dense(b) => b.refactor(sys, basis),
            Basis::Sparse(b) => b.refactor(sys, basis),
        }
    }
}

/// The explicit inverse `B^-1`, column-major.
pub(crate) struct Dense {
    n: usize,
    binv: Vec<f64>,
    work: Vec<f64>,
    col: Vec<f64>,
    since: usize,
    every: usize,
}

impl Dense {
    /// `B = I` (the all-`w` basis); re-inversion every `every` exchanges.
    pub fn new(n: usize, every: usize) -> Self {
        let mut binv = vec![0.0; n * n];
        for i in 0..n {
            binv[i + i * n] = 1.0;
        }
        Self {
            n,
            binv,
            work: vec![0.0; n * n],
            col: vec![0.0; n],
            since: 0,
            every: every.max(n).max(1),
        }
    }

    fn ftran(&mut self, sys: &System, v: usize, out: &mut [f64]) {
        let n = self.n;
        if v < n {
            out.copy_from_slice(&self.binv[v * n..(v + 1) * n]);
        } else if v < 2 * n {
            out.fill(0.0);
            let (ri, va) = sys.m.col(v - n);
            for (&k, &x) in ri.iter().zip(va) {
                let c = &self.binv[k * n..(k + 1) * n];
                for (o, &b) in out.iter_mut().zip(c) {
                    *o -= x * b;
                }
            }
        } else {
            let mut a = std::mem::take(&mut self.col);
            sys.scatter(v, &mut a);
            self.apply_to(&a, out);
            self.col = a;
        }
    }

    /// `out = B^-1 a`.
    fn apply_to(&self, a: &[f64], out: &mut [f64]) {
        let n = self.n;
        out.fill(0.0);
        for (k, &ak) in a.iter().enumerate() {
            if ak != 0.0 {
                let c = &self.binv[k * n..(k + 1) * n];
                for (o, &b) in out.iter_mut().zip(c) {
                    *o += ak * b;
                }
            }
        }
    }

    fn row(&self, i: usize, out: &mut [f64]) {
        let n = self.n;
        for (j, o) in out.iter_mut().enumerate() {
            *o = self.binv[i + j * n];
        }
    }

    fn pivot(&mut self, r: usize, col: &[f64]) {
        let n = self.n;
        let p = col[r];
        for j in 0..n {
            let c = &mut self.binv[j * n..(j + 1) * n];
            let t = c[r] / p;
            if t != 0.0 {
                for (b, &ci) in c.iter_mut().zip(col) {
                    *b -= ci * t;
                }
            }
            c[r] = t;
        }
        self.since += 1;
    }

    /// Gauss-Jordan inversion of `B` with partial pivoting, in the preallocated buffers.
    fn refactor(&mut self, sys: &System, basis: &[usize]) -> Result<(), SolverError> {
        let n = self.n;
        for (k, &v) in basis.iter().enumerate() {
            sys.scatter(v, &mut self.work[k * n..(k + 1) * n]);
        }
        self.binv.fill(0.0);
        for i in 0..n {
            self.binv[i + i * n] = 1.0;
        }
        let (w, b) = (&mut self.work, &mut self.binv);
        for k in 0..n {
            // pivot row: largest |W[i, k]|, i >= k
            let (mut p, mut best) = (k, 0.0f64);
            for i in k..n {
                let a = w[i + k * n].abs();
                if a > best {
                    (p, best) = (i, a);
                }
            }
            if best == 0.0 || !best.is_finite() {
                return Err(SolverError::Numerical(format!(
                    "Lemke: basis matrix singular at column {k} during refactorisation"
                )));
            }
            if p != k {
                for j in 0..n {
                    w.swap(p + j * n, k + j * n);
                    b.swap(p + j * n, k + j * n);
                }
            }
            let inv = 1.0 / w[k + k * n];
            for j in 0..n {
                w[k + j * n] *= inv;
                b[k + j * n] *= inv;
            }
            for j in 0..n {
                let (wkj, bkj) = (w[k + j * n], b[k + j * n]);
                if wkj == 0.0 && bkj == 0.0 {
                    continue;
                }
                for i in 0..n {
                    if i == k {
                        continue;
                    }
                    let f = w[i + k * n];
                    if f != 0.0 {
                        if j != k {
                            w[i + j * n] -= f * wkj;
                        }
                        b[i + j * n] -= f * bkj;
                    }
                }
            }
            for i in 0..n {
                if i != k {
                    w[i + k * n] = 0.0;
                }
            }
        }
        self.since = 0;
        Ok(())
    }
}

/// Sparse LU of `B` plus the eta file of the exchanges since.
pub(crate) struct Sparse {
    n: usize,
    every: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    symbolic: Option<SymbolicLu<usize>>,
    numeric: NumericLu<usize, f64>,
    stack: MemBuffer,
    /// Pivot row of each eta.
    eta_r: Vec<usize>,
    /// Pivot value `col[r]` of each eta.
    eta_p: Vec<f64>,
    /// Start of each eta's off-pivot entries in `eta_i` / `eta_v` (one more than etas).
    eta_ptr: Vec<usize>,
    eta_i: Vec<usize>,
    eta_v: Vec<f64>,
}

impl Sparse {
    /// An empty representation; [`Basis::refactor`] must run before use.
    pub fn new(n: usize, nnz_m: usize, every: usize) -> Self {
        let every = every.max(1);
        let cap = (nnz_m + 2 * n).max(1);
        Self {
            n,
            every,
            col_ptr: Vec::with_capacity(n + 1),
            row_idx: Vec::with_capacity(cap),
            values: Vec::with_capacity(cap),
            symbolic: None,
            numeric: NumericLu::new(),
            stack: MemBuffer::new(StackReq::EMPTY),
            eta_r: Vec::with_capacity(every),
            eta_p: Vec::with_capacity(every),
            eta_ptr: Vec::with_capacity(every + 1),
            eta_i: Vec::with_capacity(every * 8),
            eta_v: Vec::with_capacity(every * 8),
        }
    }

    fn refactor(&mut self, sys: &System, basis: &[usize]) -> Result<(), SolverError> {
        let n = self.n;
        self.col_ptr.clear();
        self.row_idx.clear();
        self.values.clear();
        self.col_ptr.push(0);
        for &v in basis {
            if v < n {
                self.row_idx.push(v);
                self.values.push(1.0);
            } else if v < 2 * n {
                let (ri, va) = sys.m.col(v - n);
                for (&i, &x) in ri.iter().zip(va) {
                    self.row_idx.push(i);
                    self.values.push(-x);
                }
            } else {
                for (i, &di) in sys.d.iter().enumerate() {
                    self.row_idx.push(i);
                    self.values.push(-di);
                }
            }
            self.col_ptr.push(self.row_idx.len());
        }
        let fail = |what: String| SolverError::Numerical(format!("Lemke: sparse LU: {what}"));
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let symbolic = factorize_symbolic_lu(sym, Default::default())
            .map_err(|e| fail(cpbench_problems::linalg::plain_debug(&e)))?;
        let mat = SparseColMatRef::new(sym, &self.values);
        let req = symbolic
            .factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default())
            .or(symbolic.solve_in_place_scratch::<f64>(1, Par::Seq));
        self.stack =
            MemBuffer::try_new(req).map_err(|e| fail(cpbench_problems::linalg::plain_debug(&e)))?;
        symbolic
            .factorize_numeric_lu(
                &mut self.numeric,
                mat,
                Par::Seq,
                MemStack::new(&mut self.stack),
                Default::default(),
            )
            .map_err(|e| {
                fail(format!(
                    "singular basis ({})",
                    cpbench_problems::linalg::plain_debug(&e)
                ))
            })?;
        self.symbolic = Some(symbolic);
        self.eta_r.clear();
        self.eta_p.clear();
        self.eta_ptr.clear();
        self.eta_ptr.push(0);
        self.eta_i.clear();
        self.eta_v.clear();
        Ok(())
    }

    /// `x = B^-1 x`: LU solve, then the etas in order.
    fn solve(&mut self, x: &mut [f64]) {
        self.lu_solve(x, false);
        for k in 0..self.eta_r.len() {
            let r = self.eta_r[k];
            let yr = x[r] / self.eta_p[k];
            x[r] = yr;
            if yr != 0.0 {
                let (a, b) = (self.eta_ptr[k], self.eta_ptr[k + 1]);
                for (&i, &v) in self.eta_i[a..b].iter().zip(&self.eta_v[a..b]) {
                    x[i] -= v * yr;
                }
            }
        }
    }

    /// `out = e_i^T B^-1`: the transposed etas in reverse order, then `B_0^-T`.
    fn row(&mut self, i: usize, out: &mut [f64]) {
        out.fill(0.0);
        out[i] = 1.0;
        for k in (0..self.eta_r.len()).rev() {
            let r = self.eta_r[k];
            let (a, b) = (self.eta_ptr[k], self.eta_ptr[k + 1]);
            let mut s = out[r];
            for (&j, &v) in self.eta_i[a..b].iter().zip(&self.eta_v[a..b]) {
                s -= v * out[j];
            }
            out[r] = s / self.eta_p[k];
        }
        self.lu_solve(out, true);
    }

    /// `x = B_0^-1 x` (`B_0^-T x` when `transpose`) with the LU factors of the last refactor.
    fn lu_solve(&mut self, x: &mut [f64], transpose: bool) {
        let s = self
            .symbolic
            .as_ref()
            .expect("refactor runs before any solve");
        let lu = LuRef::new_unchecked(s, &self.numeric);
        let x = MatMut::from_column_major_slice_mut(x, self.n, 1);
        let stack = MemStack::new(&mut self.stack);
        if transpose {
            lu.solve_transpose_in_place_with_conj(Conj::No, x, Par::Seq, stack);
        } else {
            lu.solve_in_place_with_conj(Conj::No, x, Par::Seq, stack);
        }
    }

    fn push_eta(&mut self, r: usize, col: &[f64]) {
        self.eta_r.push(r);
        self.eta_p.push(col[r]);
        for (i, &v) in col.iter().enumerate() {
            if i != r && v != 0.0 {
                self.eta_i.push(i);
                self.eta_v.push(v);
            }
        }
        self.eta_ptr.push(self.eta_i.len());
    }
}
