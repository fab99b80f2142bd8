//! fclib HDF5 *writer*: a Coulomb-cone instance as an fclib local problem (Acary, Brémond,
//! Koziniec, Mercier, Dubois: "FCLIB: a collection of discrete 3D frictional contact problems",
//! 2014; <https://github.com/FrictionalContactLibrary/fclib>), encoded with the pure-Rust
//! `hdf5-pure` crate.
//!
//! Layout written (the one of the fclib files in `tests/fixtures/fclib/`, e.g.
//! `local_problem_test.hdf5`, objects, datatypes and shapes alike):
//!
//! | object | HDF5 type | shape |
//! |---|---|---|
//! | `/fclib_local/W/{m, n, nz, nzmax}` | int32 LE | `(1,)`; `nz = -2` (CSR), `nzmax` = stored entries |
//! | `/fclib_local/W/p` | int32 LE | `(m + 1,)`: row pointers |
//! | `/fclib_local/W/i` | int32 LE | `(nzmax,)`: column indices, increasing within a row |
//! | `/fclib_local/W/x` | float64 LE | `(nzmax,)`: values |
//! | `/fclib_local/vectors/q` | float64 LE | `(3 nc,)` |
//! | `/fclib_local/vectors/mu` | float64 LE | `(nc,)` |
//! | `/fclib_local/spacedim` | int32 LE | `(1,)`, the cone dimension: 3, or 2 for 2-D cones |
//! | `/fclib_local/info/{title, description, math_info}` | fixed-length ASCII string, `NULLTERM`, size = length + 1 | scalar |
//!
//! With cpbench's `g = N gamma + r` read as fclib's `u = W r + q` (see the sign-convention note
//! of [`super`]): `W = N` (full storage, both triangles), `q = r`, `mu` one per contact, unknowns
//! contact-interleaved with the normal component first. The file uses the HDF5 1.8 format
//! (superblock version 2), readable by HDF5 1.8 and later. Values are written bit for bit, so
//! reading the file back with [`crate::io::load`] gives an instance with the same
//! [`Instance::hash`].

use crate::error::{ProblemError, Result};
use crate::instance::Instance;
use crate::io::io_err;
use hdf5_pure::{CharacterSet, Datatype, FileBuilder, GroupBuilder, LibVer, StringPadding};
use std::path::Path;

/// The descriptive strings of `/fclib_local/info` (ASCII; other characters are replaced by `?`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FclibInfo {
    /// `/fclib_local/info/title`: a short name (e.g. the instance name).
    pub title: String,
    /// `/fclib_local/info/description`: where the problem comes from.
    pub description: String,
    /// `/fclib_local/info/math_info`: mathematical remarks (may be empty).
    pub math_info: String,
}

impl FclibInfo {
    /// The default strings for `inst`: title = its name; description = its provenance (source,
    /// format, derivation, seed and step when known) and content hash; math_info = the sign
    /// convention `u = W r + q` with `W = N`, `q = r`.
    pub fn for_instance(inst: &Instance) -> Self {
        let p = inst.provenance();
        let mut description = format!(
            "cpbench export of {}: source {}, format {}, derivation {}",
            inst.name(),
            if p.source.is_empty() { "-" } else { &p.source },
            if p.format.is_empty() { "-" } else { &p.format },
            if p.derivation.is_empty() {
                "-"
            } else {
                &p.derivation
            },
        );
        if let Some(s) = p.seed {
            description.push_str(&format!(", seed {s}"));
        }
        if let Some(s) = p.step {
            description.push_str(&format!(", step {s}"));
        }
        if let Some(a) = p.symmetrized_from {
            description.push_str(&format!(
                ", symmetrised (relative asymmetry before: {a:.3e})"
            ));
        }
        description.push_str(&format!("; cpbench instance hash {}", inst.hash()));
        Self {
            title: inst.name().to_string(),
            description,
            math_info: "u = W r + q, r in K (Coulomb cones), u + mu ||u_T|| e_n in K*; \
                        W = N, q = r of cpbench's g = N gamma + r"
                .into(),
        }
    }
}

/// Encode `inst` as the bytes of an fclib local-problem HDF5 file (layout in the module
/// documentation).
///
/// Shapes: `N` is `3 nc x 3 nc`, `r` has `3 nc` entries, `mu` `nc`. Errors:
/// [`ProblemError::WrongClass`] when `inst` has no Coulomb cones (not CCP or Coulomb; a BLCP's
/// friction boxes have no fclib form); [`ProblemError::JointsUnsupported`] when it has joint
/// (bilateral) blocks, which fclib cannot express;
/// [`ProblemError::Io`] naming `path` (used only in messages) when `n` or the number of stored
/// entries does not fit fclib's 32-bit integers, or the HDF5 encoder fails.
pub fn fclib_local_bytes(inst: &Instance, info: &FclibInfo, path: &Path) -> Result<Vec<u8>> {
    // Coulomb cones (the CCP or the Coulomb problem), of either dimension, without joints
    let k = inst.constraints();
    k.refuse_joints(
        "the fclib format",
        "fclib's local problem holds only Coulomb cones (no equality rows); write a bundle or \
         an .npz",
    )?;
    let (Some(_), Some(mu)) = (k.cone_dim(), k.friction()) else {
        return Err(ProblemError::WrongClass {
            expected:
                "ccp or coulomb (Coulomb cones: fclib holds only frictional contact problems)"
                    .into(),
            found: inst.class().as_str().into(),
        });
    };
    let n_mat = inst.n_mat();
    let n = n_mat.nrows();
    let too_large = |what: &str, v: usize| {
        io_err(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{what} = {v} does not fit fclib's 32-bit integers"),
            ),
        )
    };
    let to_i32 = |what: &str, v: usize| i32::try_from(v).map_err(|_| too_large(what, v));
    let m32 = to_i32("n", n)?;
    let nnz32 = to_i32("nnz", n_mat.nnz())?;
    // CSR of N = CSC arrays of N^T (equal to those of N for a symmetric structure, but the
    // transpose keeps the file right for any stored pattern).
    let t = n_mat.transpose();
    let p: Vec<i32> = t.col_ptr().iter().map(|&v| v as i32).collect();
    let i: Vec<i32> = t.row_idx().iter().map(|&v| v as i32).collect();

    let mut fb = FileBuilder::new();
    // HDF5 1.8 file format (superblock v2): readable by every HDF5 library since 1.8.
    fb.with_libver_bounds(LibVer::V18, LibVer::V18);
    let mut local = fb.create_group("fclib_local");
    let mut w = local.create_group("W");
    w.create_dataset("m").with_i32_data(&[m32]);
    w.create_dataset("n").with_i32_data(&[m32]);
    w.create_dataset("nz").with_i32_data(&[-2]);
    w.create_dataset("nzmax").with_i32_data(&[nnz32]);
    w.create_dataset("p").with_i32_data(&p);
    w.create_dataset("i").with_i32_data(&i);
    w.create_dataset("x").with_f64_data(t.values());
    local.add_group(w.finish());
    let mut vectors = local.create_group("vectors");
    vectors.create_dataset("q").with_f64_data(inst.r());
    vectors.create_dataset("mu").with_f64_data(mu);
    local.add_group(vectors.finish());
    let spacedim = inst.constraints().block_size() as i32;
    local.create_dataset("spacedim").with_i32_data(&[spacedim]);
    let mut ginfo = local.create_group("info");
    string_dataset(&mut ginfo, "title", &info.title);
    string_dataset(&mut ginfo, "description", &info.description);
    string_dataset(&mut ginfo, "math_info", &info.math_info);
    local.add_group(ginfo.finish());
    fb.add_group(local.finish());
    fb.finish().map_err(|e| {
        io_err(
            path,
            std::io::Error::other(format!("HDF5 encoding failed: {e}")),
        )
    })
}

/// Write `inst` to `path` as an fclib local problem ([`fclib_local_bytes`]); the file is
/// written to a temporary sibling and renamed into place, so a failed write leaves no partial
/// file. Errors: those of [`fclib_local_bytes`], [`ProblemError::Io`] for the file system.
pub fn write_fclib(inst: &Instance, info: &FclibInfo, path: &Path) -> Result<()> {
    let bytes = fclib_local_bytes(inst, info, path)?;
    crate::io::atomic::write_atomic(path, &bytes).map_err(|e| io_err(path, e))
}

/// A scalar fixed-length ASCII string dataset, `NULLTERM`, of size `len + 1` (what the fclib C
/// library's `H5LTmake_dataset_string` writes).
fn string_dataset(g: &mut GroupBuilder, name: &str, s: &str) {
    let mut raw: Vec<u8> = s
        .chars()
        .map(|c| {
            if c.is_ascii() && c != '\0' {
                c as u8
            } else {
                b'?'
            }
        })
        .collect();
    raw.push(0);
    let dt = Datatype::String {
        size: raw.len() as u32,
        padding: StringPadding::NullTerminate,
        charset: CharacterSet::Ascii,
    };
    g.create_dataset(name)
        .with_raw_data(dt, raw, 1)
        .with_shape(&[]);
}
