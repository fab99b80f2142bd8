//! fclib HDF5 problems (Acary, Brémond, Koziniec, Mercier, Dubois: "FCLIB: a collection of
//! discrete 3D frictional contact problems", 2014; <https://github.com/FrictionalContactLibrary/fclib>),
//! read with the pure-Rust `hdf5-reader` crate.
//!
//! Layout (`tests/fixtures/README.md`):
//!
//! - local problem `u = W r + q`: `/fclib_local/{W, vectors/{q, mu}, spacedim}`;
//! - global problem `M v = H r + f`, `u = H^T v + w`: `/fclib_global/{M, H, vectors/{f, w, mu},
//!   spacedim}`, condensed here to the local problem `W = H^T M^-1 H`, `q = H^T M^-1 f + w`;
//! - a sparse matrix is a group with `m`, `n`, `nz` (integer arrays of shape (1,)), `p`, `i`
//!   (integers) and `x` (reals): `nz = -2` is CSR (`p` the `m + 1` row pointers, `i` column
//!   indices), `nz = -1` CSC (`p` the `n + 1` column pointers, `i` row indices), `nz >= 0`
//!   triplets with `i` the **row** and `p` the **column** index (what the data shows; a
//!   comment in `fclib.h` says the reverse). Duplicate triplets are summed.
//!
//! Only `spacedim = 3` is supported (2 is 2-D friction, 5 rolling friction: typed error).
//! The `info` strings (which may hold non-UTF-8 bytes), `/solution` and `/guesses` are not read.
//!
//! A global `M` that stores only its upper (or lower) triangle, as `CubeH8.hdf5` does, is
//! symmetrised as `U + U^T - diag(U)` and the fact recorded in the provenance. `M` is factored
//! with faer's sparse Cholesky (`LL^T`, AMD ordering), falling back to sparse LU with partial
//! pivoting when Cholesky fails or `M` is not symmetric; `M^-1 H` is formed block of columns by
//! block of columns (dense right-hand sides, reused), and column `j` of `W` is `H^T y_j` with
//! exact zeros dropped.

use super::{perr, plausible_dim, FrictionProblem, Notes};
use crate::error::{ProblemError, Result};
use crate::linalg::CscMatrix;
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, Lu};
use faer::{MatMut, Side};
use hdf5_reader::{Datatype, H5Type, Hdf5File};
use std::path::Path;

/// Kind of fclib problem found in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FclibKind {
    /// `/fclib_local`: `u = W r + q` given directly.
    Local,
    /// `/fclib_global`: `M, H, f, w`, condensed to `W, q`.
    Global,
}

impl FclibKind {
    /// Provenance format name: `fclib-local` or `fclib-global`.
    pub fn format_name(self) -> &'static str {
        match self {
            FclibKind::Local => "fclib-local",
            FclibKind::Global => "fclib-global",
        }
    }
}

/// An fclib file as read: its kind, the (condensed) local problem, and reader notes for the
/// provenance (`condensed`, `m_factorization`, `m_upper_triangle_symmetrized`, `dof`, ...).
#[derive(Clone, Debug)]
pub struct FclibFile {
    /// Local or global.
    pub kind: FclibKind,
    /// `u = W r + q` (`W` as stored or as condensed, not symmetrised), spacedim 3.
    pub problem: FrictionProblem,
    /// Reader notes.
    pub notes: Notes,
}

/// Read an fclib HDF5 problem from the bytes of `path` (local, or global and condensed).
///
/// Shapes: `W` is `3 nc x 3 nc`, `q` has `3 nc` entries, `mu` `nc`. Errors:
/// [`ProblemError::Parse`] naming the HDF5 object (`/fclib_local/W/p`, ...) for an unreadable or
/// truncated file, a missing object, a wrong datatype, an index out of range, inconsistent
/// sizes, a non-finite value, or `spacedim != 3`; [`ProblemError::Factorization`] (wrapped in
/// [`ProblemError::InFile`]) when the global `M` is singular.
pub fn read_fclib(path: &Path, bytes: &[u8]) -> Result<FclibFile> {
    check_end_of_file(path, bytes)?;
    // The HDF5 decoder is hardened against malformed input; catching a panic all the same
    // keeps the promise that no file can crash a caller.
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_raw(path, bytes)));
    let raw = match res {
        Ok(r) => r?,
        Err(_) => {
            return Err(perr(
                path,
                "HDF5 file",
                "the HDF5 decoder failed on this file (malformed or truncated HDF5)",
            ))
        }
    };
    match raw {
        Raw::Local(problem) => Ok(FclibFile {
            kind: FclibKind::Local,
            problem,
            notes: Notes::new(),
        }),
        Raw::Global {
            m,
            h,
            f,
            w,
            mu,
            mut notes,
        } => {
            let (wm, q) = condense(m, &h, &f, &w, &mut notes).map_err(|e| e.in_file(path))?;
            notes.insert("dof".into(), h.nrows().to_string());
            notes.insert(
                "condensed".into(),
                "W = H^T M^-1 H, q = H^T M^-1 f + w".into(),
            );
            Ok(FclibFile {
                kind: FclibKind::Global,
                problem: FrictionProblem {
                    w: wm,
                    q,
                    mu,
                    spacedim: 3,
                },
                notes,
            })
        }
    }
}

enum Raw {
    Local(FrictionProblem),
    Global {
        m: CscMatrix,
        h: CscMatrix,
        f: Vec<f64>,
        w: Vec<f64>,
        mu: Vec<f64>,
        notes: Notes,
    },
}

/// A truncated file is an error: the HDF5 superblock at the start of the file (versions 0 to 3)
/// records the end-of-file address, and the file must be at least that long. (The decoder
/// alone accepts a file cut in unused trailing bytes.) Files whose superblock is elsewhere
/// (behind a user block) are left to the decoder.
fn check_end_of_file(path: &Path, bytes: &[u8]) -> Result<()> {
    const SIGNATURE: &[u8] = b"\x89HDF\r\n\x1a\n";
    if !bytes.starts_with(SIGNATURE) || bytes.len() < 16 {
        return Ok(());
    }
    // (size of offsets, position of the base address): version 0 and 1 keep the sizes at byte
    // 13, version 1 has 4 more bytes before the addresses; versions 2 and 3 at byte 9.
    let (size, base_at) = match bytes[8] {
        0 => (bytes[13] as usize, 24),
        1 => (bytes[13] as usize, 28),
        _ => (bytes[9] as usize, 12),
    };
    let addr = |at: usize| -> Option<u64> {
        let b = bytes.get(at..at + size)?;
        (size <= 8).then(|| b.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x)))
    };
    // base address, then (free space or superblock extension), then the end-of-file address
    let (Some(base), Some(eof)) = (addr(base_at), addr(base_at + 2 * size)) else {
        return Err(perr(
            path,
            "HDF5 superblock",
            "the file ends inside its superblock",
        ));
    };
    let needed = base.saturating_add(eof);
    if (bytes.len() as u64) < needed {
        return Err(perr(
            path,
            "HDF5 superblock",
            format!(
                "truncated file: the superblock gives {needed} bytes, the file has {}",
                bytes.len()
            ),
        ));
    }
    Ok(())
}

fn read_raw(path: &Path, bytes: &[u8]) -> Result<Raw> {
    let file = Hdf5File::from_vec(bytes.to_vec()).map_err(|e| {
        perr(
            path,
            "HDF5 superblock",
            format!("not a readable HDF5 file: {e}"),
        )
    })?;
    let h = H5 { path, file };
    let local = h.file.group("/fclib_local");
    let global = if local.is_err() {
        h.file.group("/fclib_global").map(|_| ())
    } else {
        Ok(())
    };
    if local.is_ok() {
        let spacedim = h.spacedim("/fclib_local/spacedim")?;
        let w = h.sparse("/fclib_local/W")?;
        let q = h.floats("/fclib_local/vectors/q")?;
        let mu = h.floats("/fclib_local/vectors/mu")?;
        let n = w.nrows();
        if w.ncols() != n {
            return Err(h.err(
                "/fclib_local/W",
                format!("W must be square, found {n} x {}", w.ncols()),
            ));
        }
        h.check_len("/fclib_local/vectors/q", q.len(), n, "the size of W")?;
        h.check_cones("/fclib_local/vectors/mu", n, mu.len())?;
        Ok(Raw::Local(FrictionProblem { w, q, mu, spacedim }))
    } else if global.is_ok() {
        let _ = h.spacedim("/fclib_global/spacedim")?;
        let mut notes = Notes::new();
        let m = h.sparse("/fclib_global/M")?;
        let hm = h.sparse("/fclib_global/H")?;
        let f = h.floats("/fclib_global/vectors/f")?;
        let w = h.floats("/fclib_global/vectors/w")?;
        let mu = h.floats("/fclib_global/vectors/mu")?;
        let ndof = m.nrows();
        if m.ncols() != ndof {
            return Err(h.err(
                "/fclib_global/M",
                format!("M must be square, found {ndof} x {}", m.ncols()),
            ));
        }
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
        h.check_cones("/fclib_global/vectors/mu", hm.ncols(), mu.len())?;
        let m = symmetrize_triangle(m, &mut notes);
        Ok(Raw::Global {
            m,
            h: hm,
            f,
            w,
            mu,
            notes,
        })
    } else {
        let (le, ge) = (
            local.err().map(|e| e.to_string()),
            global.err().map(|e| e.to_string()),
        );
        Err(perr(
            path,
            "HDF5 root group /",
            format!(
                "neither /fclib_local nor /fclib_global can be opened: not an fclib problem, or \
                 a damaged file (/fclib_local: {}; /fclib_global: {})",
                le.unwrap_or_default(),
                ge.unwrap_or_default()
            ),
        ))
    }
}

/// If `m` stores only one triangle (and has off-diagonal entries), return `T + T^T - diag(T)`.
fn symmetrize_triangle(m: CscMatrix, notes: &mut Notes) -> CscMatrix {
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
                chol_err = Some(format!("{e:?}"));
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
                    "M ({ndof} x {ndof}) cannot be factored: {}LU failed: {e:?}",
                    chol_err
                        .as_ref()
                        .map(|c| format!("Cholesky failed: {c}; "))
                        .unwrap_or_default()
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

/// An open HDF5 file and its path (for error messages).
struct H5<'a> {
    path: &'a Path,
    file: Hdf5File,
}

impl H5<'_> {
    fn err(&self, obj: &str, msg: impl Into<String>) -> ProblemError {
        perr(self.path, format!("HDF5 object {obj}"), msg)
    }

    fn read_as<T: H5Type + Default + Clone>(
        &self,
        ds: &hdf5_reader::Dataset,
        obj: &str,
    ) -> Result<Vec<T>> {
        let n = ds
            .num_elements()
            .map_err(|e| self.err(obj, format!("cannot read the dataspace: {e}")))?;
        // Every stored element takes at least one byte of the file (no filters are used by
        // fclib), so a larger count is a corrupt header; checked before allocating.
        if n > (self.file.storage().len().max(1 << 20)) * 8 {
            return Err(self.err(obj, format!("implausible element count {n}")));
        }
        let mut v = vec![T::default(); n as usize];
        ds.read_into(&mut v)
            .map_err(|e| self.err(obj, format!("cannot read the data: {e}")))?;
        Ok(v)
    }

    fn dataset(&self, obj: &str) -> Result<hdf5_reader::Dataset> {
        self.file
            .dataset(obj)
            .map_err(|e| self.err(obj, format!("missing or unreadable dataset: {e}")))
    }

    /// Integer dataset of any integer width, as `i64`.
    fn ints(&self, obj: &str) -> Result<Vec<i64>> {
        let ds = self.dataset(obj)?;
        match ds.dtype().clone() {
            Datatype::FixedPoint { size, signed, .. } => match (size, signed) {
                (1, true) => Ok(self
                    .read_as::<i8>(&ds, obj)?
                    .into_iter()
                    .map(i64::from)
                    .collect()),
                (1, false) => Ok(self
                    .read_as::<u8>(&ds, obj)?
                    .into_iter()
                    .map(i64::from)
                    .collect()),
                (2, true) => Ok(self
                    .read_as::<i16>(&ds, obj)?
                    .into_iter()
                    .map(i64::from)
                    .collect()),
                (2, false) => Ok(self
                    .read_as::<u16>(&ds, obj)?
                    .into_iter()
                    .map(i64::from)
                    .collect()),
                (4, true) => Ok(self
                    .read_as::<i32>(&ds, obj)?
                    .into_iter()
                    .map(i64::from)
                    .collect()),
                (4, false) => Ok(self
                    .read_as::<u32>(&ds, obj)?
                    .into_iter()
                    .map(i64::from)
                    .collect()),
                (8, true) => self.read_as::<i64>(&ds, obj),
                (8, false) => self
                    .read_as::<u64>(&ds, obj)?
                    .into_iter()
                    .map(|v| {
                        i64::try_from(v)
                            .map_err(|_| self.err(obj, format!("integer {v} too large")))
                    })
                    .collect(),
                _ => Err(self.err(obj, format!("unsupported integer size {size}"))),
            },
            other => Err(self.err(obj, format!("expected an integer dataset, found {other:?}"))),
        }
    }

    /// Real dataset (f64, f32 or integer), as finite `f64` values.
    fn floats(&self, obj: &str) -> Result<Vec<f64>> {
        let ds = self.dataset(obj)?;
        let v: Vec<f64> = match ds.dtype().clone() {
            Datatype::FloatingPoint { size: 8, .. } => self.read_as::<f64>(&ds, obj)?,
            Datatype::FloatingPoint { size: 4, .. } => self
                .read_as::<f32>(&ds, obj)?
                .into_iter()
                .map(f64::from)
                .collect(),
            Datatype::FixedPoint { .. } => self.ints(obj)?.into_iter().map(|v| v as f64).collect(),
            other => return Err(self.err(obj, format!("expected a real dataset, found {other:?}"))),
        };
        if let Some((k, x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(self.err(&format!("{obj}[{k}]"), format!("non-finite value {x}")));
        }
        Ok(v)
    }

    /// A single integer (shape `(1,)` or scalar).
    fn int(&self, obj: &str) -> Result<i64> {
        let v = self.ints(obj)?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(self.err(
                obj,
                format!("expected a single integer, found {} values", v.len()),
            )),
        }
    }

    fn spacedim(&self, obj: &str) -> Result<usize> {
        match self.int(obj)? {
            3 => Ok(3),
            d => Err(self.err(
                obj,
                format!(
                    "spacedim = {d} is not supported: only 3-D problems (spacedim 3) can be read{}",
                    match d {
                        2 => " (this is a 2-D friction problem)",
                        5 => " (this is a rolling-friction problem)",
                        _ => "",
                    }
                ),
            )),
        }
    }

    fn check_len(&self, obj: &str, found: usize, expected: usize, what: &str) -> Result<()> {
        if found != expected {
            return Err(self.err(
                obj,
                format!("has {found} entries, expected {expected} ({what})"),
            ));
        }
        Ok(())
    }

    fn check_cones(&self, obj: &str, n: usize, nmu: usize) -> Result<()> {
        if n % 3 != 0 || nmu != n / 3 {
            return Err(self.err(
                obj,
                format!("{nmu} friction coefficients for {n} unknowns (expected 3 per contact)"),
            ));
        }
        Ok(())
    }

    /// Read the sparse matrix group `g` (CSR, CSC or triplets, see the module documentation).
    fn sparse(&self, g: &str) -> Result<CscMatrix> {
        let dim = |name: &str| -> Result<usize> {
            let obj = format!("{g}/{name}");
            let v = self.int(&obj)?;
            usize::try_from(v).map_err(|_| self.err(&obj, format!("negative dimension {v}")))
        };
        let (m, n) = (dim("m")?, dim("n")?);
        let flen = self.file.storage().len() as usize;
        if !plausible_dim(m, flen) || !plausible_dim(n, flen) {
            return Err(self.err(
                g,
                format!("implausible size {m} x {n} for a file of {flen} bytes (corrupt header?)"),
            ));
        }
        let nz_obj = format!("{g}/nz");
        let nz = self.int(&nz_obj)?;
        let (p_obj, i_obj, x_obj) = (format!("{g}/p"), format!("{g}/i"), format!("{g}/x"));
        let p = self.ints(&p_obj)?;
        let i = self.ints(&i_obj)?;
        let x = self.floats(&x_obj)?;
        let index = |obj: &str, k: usize, v: i64, bound: usize, what: &str| -> Result<usize> {
            match usize::try_from(v) {
                Ok(u) if u < bound => Ok(u),
                _ => Err(self.err(
                    &format!("{obj}[{k}]"),
                    format!("{what} index {v} out of range 0..{bound} ({g} is {m} x {n})"),
                )),
            }
        };
        let mut trip = Vec::new();
        match nz {
            -2 | -1 => {
                // compressed: outer dimension `no` (rows for CSR, columns for CSC)
                let (no, ni) = if nz == -2 { (m, n) } else { (n, m) };
                let kind = if nz == -2 { "CSR row" } else { "CSC column" };
                if p.len() < no + 1 {
                    return Err(self.err(
                        &p_obj,
                        format!("{kind} pointers: {} entries, expected {}", p.len(), no + 1),
                    ));
                }
                let ptr = |k: usize| -> Result<usize> {
                    usize::try_from(p[k])
                        .ok()
                        .filter(|&u| u <= i.len() && u <= x.len())
                        .ok_or_else(|| {
                            self.err(
                                &format!("{p_obj}[{k}]"),
                                format!(
                                    "pointer {} outside the {} stored entries",
                                    p[k],
                                    i.len().min(x.len())
                                ),
                            )
                        })
                };
                trip.reserve(ptr(no)?.saturating_sub(ptr(0)?));
                for o in 0..no {
                    let (a, b) = (ptr(o)?, ptr(o + 1)?);
                    if b < a {
                        return Err(self.err(
                            &format!("{p_obj}[{}]", o + 1),
                            format!("{kind} pointers decrease ({a} then {b})"),
                        ));
                    }
                    for k in a..b {
                        let inner =
                            index(&i_obj, k, i[k], ni, if nz == -2 { "column" } else { "row" })?;
                        let (r, c) = if nz == -2 { (o, inner) } else { (inner, o) };
                        trip.push((r, c, x[k]));
                    }
                }
            }
            nz if nz >= 0 => {
                let nz = nz as usize;
                for (obj, len) in [(&p_obj, p.len()), (&i_obj, i.len()), (&x_obj, x.len())] {
                    if len < nz {
                        return Err(self.err(
                            obj,
                            format!("{len} entries, but nz = {nz} triplets are declared"),
                        ));
                    }
                }
                trip.reserve(nz);
                for k in 0..nz {
                    let r = index(&i_obj, k, i[k], m, "row")?;
                    let c = index(&p_obj, k, p[k], n, "column")?;
                    trip.push((r, c, x[k]));
                }
            }
            other => {
                return Err(self.err(
                    &nz_obj,
                    format!("unsupported storage nz = {other} (-2 CSR, -1 CSC, >= 0 triplets)"),
                ))
            }
        }
        CscMatrix::from_triplets(m, n, &trip).map_err(|e| self.err(g, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condense_small_dense_example() {
        // M = diag(2, 4), H = [[1, 0], [1, 1]] (rows dof, columns unknowns)
        let m = CscMatrix::from_triplets(2, 2, &[(0, 0, 2.0), (1, 1, 4.0)]).unwrap();
        let h = CscMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 0, 1.0), (1, 1, 1.0)]).unwrap();
        let mut notes = Notes::new();
        let (w, q) = condense(m, &h, &[2.0, 4.0], &[0.5, 0.0], &mut notes).unwrap();
        // W = H^T M^-1 H = [[1/2 + 1/4, 1/4], [1/4, 1/4]] (up to the rounding of sqrt in LL^T)
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-15;
        assert!(close(w.get(0, 0), 0.75));
        assert!(close(w.get(0, 1), 0.25));
        assert!(close(w.get(1, 0), 0.25));
        assert!(close(w.get(1, 1), 0.25));
        // M^-1 f = (1, 1); H^T (1, 1) = (2, 1); + w
        assert!(close(q[0], 2.5) && close(q[1], 1.0), "{q:?}");
        assert!(notes["m_factorization"].contains("Cholesky"));
    }

    #[test]
    fn singular_m_is_a_typed_error() {
        let m = CscMatrix::from_triplets(2, 2, &[(0, 0, 1.0)]).unwrap();
        let h = CscMatrix::from_triplets(2, 1, &[(1, 0, 1.0)]).unwrap();
        let e = condense(m, &h, &[0.0, 0.0], &[0.0], &mut Notes::new()).unwrap_err();
        assert!(matches!(e, ProblemError::Factorization(_)), "{e:?}");
    }

    #[test]
    fn upper_triangle_is_mirrored() {
        let u = CscMatrix::from_triplets(2, 2, &[(0, 0, 2.0), (0, 1, 1.0), (1, 1, 3.0)]).unwrap();
        let mut notes = Notes::new();
        let s = symmetrize_triangle(u, &mut notes);
        assert_eq!((s.get(1, 0), s.get(0, 1), s.get(0, 0)), (1.0, 1.0, 2.0));
        assert_eq!(notes["m_upper_triangle_symmetrized"], "true");
    }
}
