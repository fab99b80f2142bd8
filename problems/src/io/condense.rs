//! Condensation of a global friction problem to the local one: `W = H^T M^-1 H`,
//! `q = H^T M^-1 f + w` (fclib's `M v = H r + f`, `u = H^T v + w`; Siconos' global `.dat`,
//! `M v = q + H r`, `u = H^T v + b`, is the same with `f = q`, `w = b`). Used by the fclib
//! reader ([`super::fclib`]) and the Siconos global reader ([`super::siconos_global`]).
//!
//! `M` is factored with faer's sparse Cholesky (`LL^T`, AMD ordering), falling back to sparse
//! LU with partial pivoting when Cholesky fails or `M` is not symmetric; `M^-1 H` is formed
//! block of columns by block of columns (dense right-hand sides, reused), and column `j` of `W`
//! is `H^T y_j` with exact zeros dropped.

use crate::error::{ProblemError, Result};
use crate::io::Notes;
use crate::linalg::CscMatrix;
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, Lu};
use faer::{MatMut, Side};

/// Relative asymmetry of `M` above which Cholesky is not tried.
const M_SYMMETRY_TOL: f64 = 1e-12;

/// Right-hand sides solved at once when forming `M^-1 H`.
const RHS_BLOCK: usize = 32;

enum Factor {
    Llt(Llt<usize, f64>),
    Lu(Box<Lu<usize, f64>>),
}

impl Factor {
    fn solve(&self, rhs: MatMut<'_, f64>) {
        match self {
            Factor::Llt(f) => f.solve_in_place(rhs),
            Factor::Lu(f) => f.solve_in_place(rhs),
        }
    }
}

/// `W = H^T M^-1 H` (`m x m`, exact zeros dropped) and `q = H^T M^-1 f + w`.
///
/// Errors: [`ProblemError::Factorization`] when `M` cannot be factored or the solves give
/// non-finite values (singular `M`).
pub fn condense(
    m: CscMatrix,
    h: &CscMatrix,
    f: &[f64],
    w: &[f64],
    notes: &mut Notes,
) -> Result<(CscMatrix, Vec<f64>)> {
    let ndof = m.nrows();
    let nu = h.ncols();
    if ndof == 0 || nu == 0 {
        return Ok((CscMatrix::from_triplets(nu, nu, &[])?, w.to_vec()));
    }
    let (rel, ..) = m.asymmetry();
    let mut chol_err = None;
    let factor = if rel <= M_SYMMETRY_TOL {
        match m.as_faer().sp_cholesky(Side::Lower) {
            Ok(l) => Some(Factor::Llt(l)),
            Err(e) => {
                chol_err = Some(crate::linalg::plain_debug(&e));
                None
            }
        }
    } else {
        notes.insert("m_asymmetry".into(), format!("{rel:.3e}"));
        None
    };
    let factor = match factor {
        Some(f) => {
            notes.insert(
                "m_factorization".into(),
                "sparse Cholesky (faer LLT)".into(),
            );
            f
        }
        None => {
            let lu = m.as_faer().sp_lu().map_err(|e| {
                ProblemError::Factorization(format!(
                    "M ({ndof} x {ndof}) cannot be factored: {}LU failed: {}",
                    chol_err
                        .as_ref()
                        .map(|c| format!("Cholesky failed: {c}; "))
                        .unwrap_or_default(),
                    crate::linalg::plain_debug(&e)
                ))
            })?;
            let why = if chol_err.is_some() {
                "Cholesky failed"
            } else {
                "M not symmetric"
            };
            notes.insert(
                "m_factorization".into(),
                format!("sparse LU with partial pivoting (faer; {why})"),
            );
            Factor::Lu(Box::new(lu))
        }
    };
    let singular = |what: &str| {
        ProblemError::Factorization(format!(
            "M ({ndof} x {ndof}) is singular: solving with {what} gave non-finite values"
        ))
    };
    let mut buf = vec![0.0; ndof * RHS_BLOCK.min(nu)];
    let mut trip = Vec::new();
    for j0 in (0..nu).step_by(RHS_BLOCK) {
        let bs = RHS_BLOCK.min(nu - j0);
        let y = &mut buf[..ndof * bs];
        y.iter_mut().for_each(|v| *v = 0.0);
        for jj in 0..bs {
            let (rows, vals) = h.col(j0 + jj);
            for (&i, &v) in rows.iter().zip(vals) {
                y[i + jj * ndof] = v;
            }
        }
        factor.solve(MatMut::from_column_major_slice_mut(y, ndof, bs));
        for jj in 0..bs {
            let yj = &y[jj * ndof..(jj + 1) * ndof];
            if yj.iter().any(|v| !v.is_finite()) {
                return Err(singular(&format!("column {} of H", j0 + jj)));
            }
            for k in 0..nu {
                let (rows, vals) = h.col(k);
                let s: f64 = rows.iter().zip(vals).map(|(&i, &v)| v * yj[i]).sum();
                if s != 0.0 {
                    trip.push((k, j0 + jj, s));
                }
            }
        }
    }
    let wm = CscMatrix::from_triplets(nu, nu, &trip)?;
    let mut y = f.to_vec();
    factor.solve(MatMut::from_column_major_slice_mut(&mut y, ndof, 1));
    if y.iter().any(|v| !v.is_finite()) {
        return Err(singular("f"));
    }
    let q = (0..nu)
        .map(|k| {
            let (rows, vals) = h.col(k);
            let hy: f64 = rows.iter().zip(vals).map(|(&i, &v)| v * y[i]).sum();
            hy + w[k]
        })
        .collect();
    Ok((wm, q))
}
