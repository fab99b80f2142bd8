//! fclib HDF5 problems (Acary, Brémond, Koziniec, Mercier, Dubois: "FCLIB: a collection of
//! discrete 3D frictional contact problems", 2014; <https://github.com/FrictionalContactLibrary/fclib>),
//! read with the pure-Rust `hdf5-reader` crate.
//!
//! Layout (fclib's `fclib.h` and its data README):
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
//! `spacedim` 3 and 2 (2-D friction: one tangent per contact) are read; 5 (rolling
//! friction) is a typed error.
//! The `info` strings (which may hold non-UTF-8 bytes), `/solution` and `/guesses` are not read.
//!
//! A global `M` that stores only its upper (or lower) triangle, as `CubeH8.hdf5` does, is
//! symmetrised as `U + U^T - diag(U)` and the fact recorded in the provenance. `M` is factored
//! with faer's sparse Cholesky (`LL^T`, AMD ordering), falling back to sparse LU with partial
//! pivoting when Cholesky fails or `M` is not symmetric; `M^-1 H` is formed block of columns by
//! block of columns (dense right-hand sides, reused), and column `j` of `W` is `H^T y_j` with
//! exact zeros dropped.
//!
//! Submodules: `h5` (HDF5 access: typed datasets, sparse matrices, size checks), `local`
//! (the `/fclib_local` group), `global` (the `/fclib_global` group), `condense` (global to
//! local Delassus matrix; [`mod@crate::io::condense`], shared with the Siconos global reader),
//! `write` (an instance as an fclib local problem; also reachable as `io::fclib_write`).

mod global;
mod h5;
mod local;
pub mod write;

pub use global::symmetrize_triangle;

/// The condensation, shared with the Siconos global reader (now [`crate::io::condense`]).
pub use crate::io::condense::{self, condense};

use super::{perr, FrictionProblem, Notes};
use crate::error::Result;
use crate::linalg::CscMatrix;
use h5::H5;
use hdf5_reader::Hdf5File;
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
/// [`crate::ProblemError::Parse`] naming the HDF5 object (`/fclib_local/W/p`, ...) for an unreadable or
/// truncated file, a missing object, a wrong datatype, an index out of range, inconsistent
/// sizes, a non-finite value, or `spacedim != 3`; [`crate::ProblemError::Factorization`]
/// (wrapped in [`crate::ProblemError::InFile`]) when the global `M` is singular.
pub fn read_fclib(path: &Path, bytes: &[u8]) -> Result<FclibFile> {
    match read_raw_caught(path, bytes)? {
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
            spacedim,
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
                    spacedim,
                },
                notes,
            })
        }
    }
}

/// The global problem of an fclib file, not condensed (`M` symmetrised when stored as one
/// triangle), with the reader notes; `None` for a local file. Errors: those of
/// [`read_fclib`] except the condensation's.
pub fn read_fclib_global(
    path: &Path,
    bytes: &[u8],
) -> Result<Option<(crate::io::GlobalProblem, Notes)>> {
    Ok(match read_raw_caught(path, bytes)? {
        Raw::Local(_) => None,
        Raw::Global {
            m,
            h,
            f,
            w,
            mu,
            spacedim,
            mut notes,
        } => {
            notes.insert("dof".into(), h.nrows().to_string());
            Some((
                crate::io::GlobalProblem {
                    m,
                    h,
                    f,
                    w,
                    mu,
                    spacedim,
                },
                notes,
            ))
        }
    })
}

/// [`read_raw`] after the end-of-file check. The HDF5 decoder is hardened against malformed
/// input; catching a panic all the same keeps the promise that no file can crash a caller.
fn read_raw_caught(path: &Path, bytes: &[u8]) -> Result<Raw> {
    h5::check_end_of_file(path, bytes)?;
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_raw(path, bytes)));
    match res {
        Ok(r) => r,
        Err(_) => Err(perr(
            path,
            "HDF5 file",
            "the HDF5 decoder failed on this file (malformed or truncated HDF5)",
        )),
    }
}

/// The groups of an fclib file as read, before condensation.
pub(super) enum Raw {
    /// `/fclib_local`.
    Local(FrictionProblem),
    /// `/fclib_global`, `M` symmetrised if stored as one triangle.
    Global {
        m: CscMatrix,
        h: CscMatrix,
        f: Vec<f64>,
        w: Vec<f64>,
        mu: Vec<f64>,
        /// `spacedim` (3, or 2).
        spacedim: usize,
        notes: Notes,
    },
}

fn read_raw(path: &Path, bytes: &[u8]) -> Result<Raw> {
    let file = Hdf5File::from_vec(bytes.to_vec()).map_err(|e| {
        perr(
            path,
            "HDF5 superblock",
            format!("not a readable HDF5 file: {e}"),
        )
    })?;
    let h = H5::new(path, file);
    let local = h.file().group("/fclib_local");
    let global = if local.is_err() {
        h.file().group("/fclib_global").map(|_| ())
    } else {
        Ok(())
    };
    if local.is_ok() {
        local::read(&h)
    } else if global.is_ok() {
        global::read(&h)
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
