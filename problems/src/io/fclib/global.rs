//! Reading the fclib global problem `/fclib_global/{M, H, vectors/{f, w, mu}, spacedim}`
//! (`M v = H r + f`, `u = H^T v + w`); condensation to the local problem is in
//! [`crate::io::condense`].

use super::h5::H5;
use super::Raw;
use crate::error::Result;
use crate::io::Notes;
use crate::linalg::CscMatrix;

/// Read `/fclib_global`: `M` square (symmetrised when stored as one triangle), `H` with as many
/// rows, `f` of `M`'s size, `w` of `H`'s column count, `mu` one per contact. Errors:
/// [`crate::ProblemError::Parse`] naming the HDF5 object.
pub(super) fn read(h: &H5<'_>) -> Result<Raw> {
    let spacedim = h.spacedim("/fclib_global/spacedim")?;
    let mut notes = Notes::new();
    let m = h.sparse("/fclib_global/M")?;
    let hm = h.sparse("/fclib_global/H")?;
    let f = h.floats("/fclib_global/vectors/f")?;
    let w = h.floats("/fclib_global/vectors/w")?;
    let mu = h.floats("/fclib_global/vectors/mu")?;
    let ndof = h.square_size("/fclib_global/M", "M", &m)?;
    if hm.nrows() != ndof {
        return Err(h.err(
            "/fclib_global/H",
            format!("H has {} rows, but M is {ndof} x {ndof}", hm.nrows()),
        ));
    }
    h.check_len("/fclib_global/vectors/f", f.len(), ndof, "the size of M")?;
    h.check_len(
        "/fclib_global/vectors/w",
        w.len(),
        hm.ncols(),
        "the column count of H",
    )?;
    h.check_cones("/fclib_global/vectors/mu", hm.ncols(), mu.len(), spacedim)?;
    let m = symmetrize_triangle(m, &mut notes);
    Ok(Raw::Global {
        m,
        h: hm,
        f,
        w,
        mu,
        spacedim,
        notes,
    })
}

/// If the square matrix `m` stores only one triangle `T` (and has off-diagonal entries), return
/// the full symmetric matrix `T + T^T - diag(T)` and note it in `notes`
/// (`m_upper_triangle_symmetrized` or `m_lower_triangle_symmetrized` set to `"true"`); a matrix
/// stored in both triangles, or diagonal, comes back unchanged. The fclib global reader applies
/// it to `M`, which fclib files may store as one triangle. Never fails.
pub fn symmetrize_triangle(m: CscMatrix, notes: &mut Notes) -> CscMatrix {
    let (mut upper, mut lower) = (0usize, 0usize);
    for j in 0..m.ncols() {
        for &i in m.col(j).0 {
            if i < j {
                upper += 1;
            } else if i > j {
                lower += 1;
            }
        }
    }
    if (upper == 0) == (lower == 0) {
        return m; // full storage, or diagonal
    }
    let key = if lower == 0 {
        "m_upper_triangle_symmetrized"
    } else {
        "m_lower_triangle_symmetrized"
    };
    notes.insert(key.into(), "true".into());
    let mut t = Vec::with_capacity(2 * m.nnz());
    for j in 0..m.ncols() {
        let (rows, vals) = m.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            t.push((i, j, v));
            if i != j {
                t.push((j, i, v));
            }
        }
    }
    CscMatrix::from_triplets(m.nrows(), m.ncols(), &t).expect("mirror of a valid matrix")
}
