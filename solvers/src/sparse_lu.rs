//! A sparse LU in one fixed pattern, factorised many times: the symbolic analysis (COLAMD
//! column ordering, elimination structure) once, then a numeric factorisation with partial
//! pivoting and a solve per call, in scratch allocated once (faer's sparse LU,
//! `faer::sparse::linalg::lu`). Used by the semismooth Newton methods (`newton-fb`, `nsn-*`),
//! whose Newton matrices keep their pattern from one iteration to the next.

use crate::status::SolverError;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

/// An `n x n` matrix in a fixed CSC pattern (`col_ptr`, length `n + 1`; `row_idx`, sorted
/// within each column), its values (set by the caller through [`SparseLu::values_mut`]) and
/// its reusable factorisation.
pub(crate) struct SparseLu {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    symbolic: SymbolicLu<usize>,
    numeric: NumericLu<usize, f64>,
    mem: MemBuffer,
    /// Whether `numeric` holds a factorisation of the current pattern ([`SparseLu::factorize`]).
    factorised: bool,
}

impl SparseLu {
    /// The symbolic LU of the pattern and the scratch of the numeric factorisation and solve.
    /// Errors: [`SolverError::Numerical`] for a pattern faer rejects (not sorted, out of range)
    /// or scratch that cannot be allocated.
    pub(crate) fn new(
        n: usize,
        col_ptr: Vec<usize>,
        row_idx: Vec<usize>,
    ) -> Result<Self, SolverError> {
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_lu(sym, Default::default()).map_err(|e| {
            SolverError::Numerical(format!(
                "symbolic sparse LU: {}",
                cpbench_problems::linalg::plain_debug(&e)
            ))
        })?;
        let par = Par::Seq;
        let req = StackReq::any_of(&[
            symbolic.factorize_numeric_lu_scratch::<f64>(par, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, par),
        ]);
        let mem = MemBuffer::try_new(req)
            .map_err(|_| SolverError::Numerical("out of memory for the sparse LU".into()))?;
        let nnz = row_idx.len();
        Ok(Self {
            col_ptr,
            row_idx,
            values: vec![0.0; nnz],
            symbolic,
            numeric: NumericLu::new(),
            mem,
            factorised: false,
        })
    }

    /// Column pointers of the pattern (length `n + 1`).
    pub(crate) fn col_ptr(&self) -> &[usize] {
        &self.col_ptr
    }

    /// Row indices of the pattern, column by column.
    pub(crate) fn row_idx(&self) -> &[usize] {
        &self.row_idx
    }

    /// The values, one per pattern entry, in the pattern's order.
    pub(crate) fn values(&self) -> &[f64] {
        &self.values
    }

    /// The values to set before [`SparseLu::solve`].
    pub(crate) fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// Factorise the matrix (values as set) and solve `A x = rhs` in place; `false` when the
    /// factorisation finds `A` singular. A nearly singular `A` can give non-finite entries in
    /// `rhs`: callers check them. Allocates nothing.
    pub(crate) fn solve(&mut self, rhs: &mut [f64]) -> bool {
        self.factorize() && self.solve_factored(rhs)
    }

    /// Factorise the matrix (values as set) and keep the factors for
    /// [`SparseLu::solve_factored`]; `false` when `A` is singular. Allocates nothing.
    pub(crate) fn factorize(&mut self) -> bool {
        let n = self.col_ptr.len() - 1;
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let a = SparseColMatRef::new(sym, &self.values);
        let stack = MemStack::new(&mut self.mem);
        self.factorised = self
            .symbolic
            .factorize_numeric_lu(&mut self.numeric, a, Par::Seq, stack, Default::default())
            .is_ok();
        self.factorised
    }

    /// Solve `A x = rhs` in place with the factors of the last successful
    /// [`SparseLu::factorize`] (the values set since are ignored); `false` when there are none.
    /// Allocates nothing.
    pub(crate) fn solve_factored(&mut self, rhs: &mut [f64]) -> bool {
        if !self.factorised {
            return false;
        }
        let n = rhs.len();
        let lu = LuRef::new_unchecked(&self.symbolic, &self.numeric);
        let stack = MemStack::new(&mut self.mem);
        let x = MatMut::from_column_major_slice_mut(rhs, n, 1);
        lu.solve_in_place_with_conj(Conj::No, x, Par::Seq, stack);
        true
    }
}
