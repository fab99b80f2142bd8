//! SAP's Hessian `H = M + D G D^T` (`m x m`, symmetric positive definite: `M` symmetric
//! positive definite, diagonal or sparse, `G` positive semidefinite) in one CSC pattern, the
//! lower triangle of `M` (its diagonal when diagonal) and of every contact's `D_c G_c D_c^T`
//! (the generalised velocities the contact's three
//! columns of `D` touch: two bodies, at most 12), so that one symbolic sparse Cholesky
//! factorisation (faer, AMD ordering) serves every Newton iteration, as the interior point's
//! `Kkt` does. Memory: the pattern (at most `m + 78` entries per contact) and the factor.

use cpbench_problems::linalg::plain_debug;
use cpbench_problems::CscMatrix;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{LltParams, LltRegularization};
use faer::sparse::linalg::cholesky::{LltRef, SymbolicCholesky};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side, Spec};

/// One contact's part of the pattern: the generalised velocities its columns of `D` touch,
/// its local `D_c` (`rows.len() x 3`, row-major) and, for every local pair `(i, j)` with
/// `rows[i] >= rows[j]`, the position of `H[rows[i]][rows[j]]` in the values.
#[derive(Clone, Debug)]
struct ContactPart {
    rows: Vec<usize>,
    d_local: Vec<f64>,
    pos: Vec<(usize, usize, usize)>,
}

/// The Hessian's pattern, values, symbolic factorisation and numeric factor.
pub struct Hessian {
    m: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    values: Vec<f64>,
    diag_pos: Vec<usize>,
    /// A sparse `M`: for each entry of its lower triangle, its index in `M`'s values and its
    /// position in the values here (empty for a diagonal `M`).
    mass_pos: Vec<(usize, usize)>,
    parts: Vec<ContactPart>,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    mem: MemBuffer,
    /// `D_c G_c` of the contact being assembled (one row per local velocity).
    dg: Vec<[f64; 3]>,
}

impl Hessian {
    /// The pattern of `M + D G D^T` for `D` (`m x 3 nc`) and `M` (`mass`: a sparse `m x m`
    /// matrix, both triangles stored; `None` for a diagonal `M`), and its symbolic
    /// factorisation. Errors: faer's message when it refuses the pattern.
    pub fn new(d: &CscMatrix, mass: Option<&CscMatrix>) -> Result<Self, String> {
        let m = d.nrows();
        let nc = d.ncols() / 3;
        let mut cols: Vec<Vec<usize>> = (0..m).map(|j| vec![j]).collect();
        if let Some(mm) = mass {
            for (j, col) in cols.iter_mut().enumerate() {
                col.extend(mm.col(j).0.iter().filter(|&&i| i > j));
            }
        }
        let mut parts = Vec::with_capacity(nc);
        for c in 0..nc {
            let mut rows: Vec<usize> = (0..3).flat_map(|a| d.col(3 * c + a).0.to_vec()).collect();
            rows.sort_unstable();
            rows.dedup();
            let mut d_local = vec![0.0; 3 * rows.len()];
            for a in 0..3 {
                let (ri, va) = d.col(3 * c + a);
                for (&k, &v) in ri.iter().zip(va) {
                    let i = rows.binary_search(&k).expect("row of the column");
                    d_local[3 * i + a] = v;
                }
            }
            for (j, &l) in rows.iter().enumerate() {
                for &k in &rows[j..] {
                    cols[l].push(k);
                }
            }
            parts.push(ContactPart {
                rows,
                d_local,
                pos: Vec::new(),
            });
        }
        let (col_ptr, row_idx) = crate::kernels::csc_pattern(&mut cols);
        let find = |i, j| crate::kernels::pattern_position(&col_ptr, &row_idx, i, j);
        for p in &mut parts {
            for (j, &l) in p.rows.iter().enumerate() {
                for (i, &k) in p.rows.iter().enumerate().skip(j) {
                    p.pos.push((i, j, find(k, l)));
                }
            }
        }
        let diag_pos = (0..m).map(|j| find(j, j)).collect();
        let mut mass_pos = Vec::new();
        if let Some(mm) = mass {
            for (j, &start) in mm.col_ptr()[..m].iter().enumerate() {
                for (k, &i) in mm.col(j).0.iter().enumerate() {
                    if i >= j {
                        mass_pos.push((start + k, find(i, j)));
                    }
                }
            }
        }
        let symbolic = crate::kernels::symbolic_llt(m, &col_ptr, &row_idx)?;
        let req = symbolic
            .factorize_numeric_llt_scratch::<f64>(Par::Seq, Spec::<LltParams, f64>::default())
            .or(symbolic.solve_in_place_scratch::<f64>(1, Par::Seq));
        let nnz = row_idx.len();
        Ok(Self {
            m,
            col_ptr,
            row_idx,
            values: vec![0.0; nnz],
            diag_pos,
            mass_pos,
            parts,
            l_values: vec![0.0; symbolic.len_val()],
            symbolic,
            mem: MemBuffer::new(req),
            dg: Vec::new(),
        })
    }

    /// Stored entries of the factor `L`.
    pub fn factor_nnz(&self) -> usize {
        self.l_values.len()
    }

    /// Assemble `M + D G D^T` (`mass`: the values of the sparse `M` given to
    /// [`Hessian::new`], or the diagonal of a diagonal `M`; `g` the contacts' `G_c`, 9 numbers
    /// each, row-major) and factorise it. Errors: faer's message on a non-positive pivot.
    pub fn factorize(&mut self, mass: &[f64], g: &[f64]) -> Result<(), String> {
        self.values.fill(0.0);
        if self.mass_pos.is_empty() {
            for (j, &p) in self.diag_pos.iter().enumerate() {
                self.values[p] = mass[j];
            }
        } else {
            for &(k, p) in &self.mass_pos {
                self.values[p] += mass[k];
            }
        }
        for (c, p) in self.parts.iter().enumerate() {
            let gc = &g[9 * c..9 * c + 9];
            if gc.iter().all(|&x| x == 0.0) {
                continue;
            }
            // (D_c G_c)[i] for every local row i, then (D_c G_c D_c^T)[i][j]
            self.dg.clear();
            self.dg.extend(p.d_local.chunks_exact(3).map(|r| {
                let mut o = [0.0; 3];
                for (b, ob) in o.iter_mut().enumerate() {
                    *ob = (0..3).map(|a| r[a] * gc[3 * a + b]).sum();
                }
                o
            }));
            for &(i, j, pos) in &p.pos {
                let dj = &p.d_local[3 * j..3 * j + 3];
                self.values[pos] += (0..3).map(|b| self.dg[i][b] * dj[b]).sum::<f64>();
            }
        }
        let pattern = SymbolicSparseColMatRef::new_checked(
            self.m,
            self.m,
            &self.col_ptr,
            None,
            &self.row_idx,
        );
        let a = SparseColMatRef::new(pattern, &self.values);
        let stack = MemStack::new(&mut self.mem);
        self.symbolic
            .factorize_numeric_llt(
                &mut self.l_values,
                a,
                Side::Lower,
                LltRegularization::default(),
                Par::Seq,
                stack,
                Spec::<LltParams, f64>::default(),
            )
            .map(|_| ())
            .map_err(|e| format!("SAP Hessian Cholesky: {}", plain_debug(&e)))
    }

    /// Solve `H x = rhs` in place with the last factorisation.
    pub fn solve(&mut self, rhs: &mut [f64]) {
        let llt = LltRef::new(&self.symbolic, &self.l_values);
        let stack = MemStack::new(&mut self.mem);
        let x = MatMut::from_column_major_slice_mut(rhs, self.m, 1);
        llt.solve_in_place_with_conj(Conj::No, x, Par::Seq, stack);
    }
}
