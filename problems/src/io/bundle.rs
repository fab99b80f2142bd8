//! cpbench's native instance bundle: a directory holding
//!
//! - `N.mtx`: the matrix `N` (`n x n`) in MatrixMarket `coordinate real symmetric` form (lower
//!   triangle; [`super::mtx`]). An `N` whose stored structure is not exactly symmetric (possible
//!   only for explicit zeros) is written as `coordinate real general` so nothing is lost;
//! - `r.mtx`: the vector `r` (length `n`) as `array real general`, `n x 1`;
//! - `instance.json`:
//!
//! ```json
//! {
//!   "format_version": 1,
//!   "name": "Rover4396__ccp",
//!   "class": "ccp",
//!   "n": 6,
//!   "nnz": 36,
//!   "mu": [0.7, 0.7],
//!   "hash": "<Instance::hash(), 64 hex digits>",
//!   "sign_convention": "f = 1/2 x^T N x + r^T x, g = N x + r",
//!   "matrix_storage": "symmetric-lower",
//!   "provenance": { "source": "...", "format": "siconos-fc3d", "derivation": "ccp-relaxation", ... }
//! }
//! ```
//!
//! `class` is `lcp` (no further data), `ccp` (`mu`, one per contact), `coulomb` (the true
//! Coulomb problem on the same data, `mu`; its `N = W` may be non-symmetric and is then written
//! `general`) or `box` (`lo` and `hi`, `n` entries each). JSON has no infinities: an infinite bound is written as the string `"inf"` or
//! `"-inf"`; on reading, `null` is also accepted and means no bound (`-inf` in `lo`, `+inf` in
//! `hi`). Numbers are written in shortest round-trip form and read with correct rounding
//! (serde_json's `float_roundtrip`), and the matrix and vector with 17 significant digits, so a
//! written and re-read instance has the same [`Instance::hash`]. `nnz` counts the stored entries
//! of the full (not triangular) `N`. `hash` is checked on reading when present.
//! `provenance` is optional when reading: a hand-made bundle gets `source` = the directory,
//! `format` = `bundle`, `derivation` = `as-is`.

use super::{io_err, mtx, perr};
use crate::constraints::ConstraintSet;
use crate::error::Result;
use crate::instance::{Instance, Provenance, ValidationOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Version written to and expected in `instance.json`.
pub const BUNDLE_FORMAT_VERSION: u32 = 1;

/// Sign convention note written to every `instance.json`.
pub const BUNDLE_SIGN_CONVENTION: &str = "f = 1/2 x^T N x + r^T x, g = N x + r";

#[derive(Serialize, Deserialize)]
struct InstanceJson {
    format_version: u32,
    name: String,
    class: String,
    n: usize,
    nnz: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mu: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lo: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hi: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hash: Option<String>,
    #[serde(default)]
    sign_convention: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    matrix_storage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provenance: Option<Provenance>,
}

fn bound_to_json(v: f64) -> Value {
    if v == f64::INFINITY {
        Value::String("inf".into())
    } else if v == f64::NEG_INFINITY {
        Value::String("-inf".into())
    } else {
        // Finite by the invariants of `ConstraintSet::validate` (NaN is rejected there).
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

fn bound_from_json(path: &Path, what: &str, i: usize, v: &Value, default: f64) -> Result<f64> {
    match v {
        Value::Null => Ok(default),
        Value::Number(x) => x.as_f64().ok_or_else(|| {
            perr(
                path,
                format!("{what}[{i}]"),
                format!("number {x} is not representable"),
            )
        }),
        Value::String(s) if s == "inf" || s == "+inf" => Ok(f64::INFINITY),
        Value::String(s) if s == "-inf" => Ok(f64::NEG_INFINITY),
        other => Err(perr(
            path,
            format!("{what}[{i}]"),
            format!("expected a number, \"inf\", \"-inf\" or null, found {other}"),
        )),
    }
}

/// Write `instance` as a bundle directory `dir` (`N.mtx`, `r.mtx`, `instance.json`).
///
/// Atomic: the files are written (and synced) into a temporary directory next to `dir`, which
/// is then renamed to `dir`. An existing `dir` is replaced only when it is empty or a bundle
/// (holds `instance.json`); it is first renamed aside and removed after the new bundle is in
/// place. Parent directories are created. Errors: [`crate::ProblemError::Io`] naming the path.
pub fn write_bundle(instance: &Instance, dir: &Path) -> Result<()> {
    let name = dir.file_name().ok_or_else(|| {
        io_err(
            dir,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "bundle path has no directory name",
            ),
        )
    })?;
    let name = name.to_string_lossy();
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if dir.exists() {
        let replaceable = dir.is_dir()
            && (dir.join("instance.json").is_file()
                || std::fs::read_dir(dir)
                    .map(|mut d| d.next().is_none())
                    .unwrap_or(false));
        if !replaceable {
            return Err(io_err(
                dir,
                std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "exists and is not a cpbench bundle (no instance.json); refusing to replace it",
                ),
            ));
        }
    }
    std::fs::create_dir_all(&parent).map_err(|e| io_err(&parent, e))?;
    let tag = unique_tag();
    let tmp = parent.join(format!(".{name}.tmp-{tag}"));
    std::fs::create_dir(&tmp).map_err(|e| io_err(&tmp, e))?;
    let res =
        write_files(instance, &tmp).and_then(|()| swap_into_place(&tmp, dir, &parent, &name, &tag));
    if res.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    res
}

fn unique_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{nanos}", std::process::id())
}

fn swap_into_place(tmp: &Path, dir: &Path, parent: &Path, name: &str, tag: &str) -> Result<()> {
    if dir.exists() {
        let old = parent.join(format!(".{name}.old-{tag}"));
        std::fs::rename(dir, &old).map_err(|e| io_err(dir, e))?;
        if let Err(e) = std::fs::rename(tmp, dir) {
            let _ = std::fs::rename(&old, dir);
            return Err(io_err(dir, e));
        }
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(tmp, dir).map_err(|e| io_err(dir, e))?;
    }
    Ok(())
}

fn write_file(
    path: &Path,
    f: impl FnOnce(&mut BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| io_err(path, e))?;
    let mut w = BufWriter::new(file);
    f(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| io_err(path, e))?;
    let file = w.into_inner().map_err(|e| io_err(path, e.into_error()))?;
    file.sync_all().map_err(|e| io_err(path, e))
}

fn write_files(instance: &Instance, dir: &Path) -> Result<()> {
    let n_mat = instance.n_mat();
    let symmetric = mtx::is_exactly_symmetric(n_mat);
    write_file(&dir.join("N.mtx"), |w| {
        if symmetric {
            mtx::write_symmetric_lower(w, n_mat)
        } else {
            mtx::write_general(w, n_mat)
        }
    })?;
    write_file(&dir.join("r.mtx"), |w| mtx::write_vector(w, instance.r()))?;
    let (mu, lo, hi) = match instance.constraints() {
        ConstraintSet::NonNegative => (None, None, None),
        ConstraintSet::CoulombCones { mu } => (Some(mu.clone()), None, None),
        ConstraintSet::Box { lo, hi } => (
            None,
            Some(lo.iter().map(|&v| bound_to_json(v)).collect()),
            Some(hi.iter().map(|&v| bound_to_json(v)).collect()),
        ),
    };
    let json = InstanceJson {
        format_version: BUNDLE_FORMAT_VERSION,
        name: instance.name().to_string(),
        class: instance.class().as_str().to_string(),
        n: instance.n(),
        nnz: n_mat.nnz(),
        mu,
        lo,
        hi,
        hash: Some(instance.hash().to_string()),
        sign_convention: Some(BUNDLE_SIGN_CONVENTION.into()),
        matrix_storage: Some(
            if symmetric {
                "symmetric-lower"
            } else {
                "general"
            }
            .into(),
        ),
        provenance: Some(instance.provenance().clone()),
    };
    let path = dir.join("instance.json");
    write_file(&path, |w| {
        serde_json::to_writer_pretty(&mut *w, &json).map_err(std::io::Error::other)?;
        writeln!(w)
    })
}

/// Provenance parameter holding the number of duplicate entries of `N.mtx` that were summed
/// (as SciPy's `mmread` does; set only when there are any).
pub const DUPLICATES_KEY: &str = "n_mtx_duplicates_summed";

/// Read the bundle directory `dir` written by [`write_bundle`] (or by hand, see the module
/// documentation) and validate it into an [`Instance`] with `validation`.
///
/// Errors: [`crate::ProblemError::Io`] for a missing file, [`crate::ProblemError::Parse`] for malformed JSON
/// (with line and column) or MatrixMarket (with line), a missing class field, `n`/`nnz`
/// inconsistent with the files, a `hash` that does not match the data; validation errors of
/// [`Instance::new`] wrapped in [`crate::ProblemError::InFile`].
pub fn read_bundle(dir: &Path, validation: ValidationOptions) -> Result<Instance> {
    let jpath = dir.join("instance.json");
    let text = std::fs::read(&jpath).map_err(|e| io_err(&jpath, e))?;
    let meta: InstanceJson = serde_json::from_slice(&text).map_err(|e| {
        perr(
            &jpath,
            format!("line {}, column {}", e.line(), e.column()),
            e.to_string(),
        )
    })?;
    if meta.format_version != BUNDLE_FORMAT_VERSION {
        return Err(perr(
            &jpath,
            "format_version",
            format!(
                "unsupported bundle format_version {} (this reader knows {BUNDLE_FORMAT_VERSION})",
                meta.format_version
            ),
        ));
    }
    let npath = dir.join("N.mtx");
    let bytes = mtx::read_file(&npath)?;
    let (n_mat, duplicates) = mtx::read_matrix_counted(&npath, &bytes)?;
    let rpath = dir.join("r.mtx");
    let bytes = mtx::read_file(&rpath)?;
    let r = mtx::read_vector(&rpath, &bytes)?;
    if meta.n != r.len() || meta.n != n_mat.nrows() {
        return Err(perr(
            &jpath,
            "n",
            format!(
                "n = {} but N.mtx is {} x {} and r.mtx has {} entries",
                meta.n,
                n_mat.nrows(),
                n_mat.ncols(),
                r.len()
            ),
        ));
    }
    if meta.nnz != n_mat.nnz() {
        return Err(perr(
            &jpath,
            "nnz",
            format!(
                "nnz = {} but N.mtx holds {} entries (full storage)",
                meta.nnz,
                n_mat.nnz()
            ),
        ));
    }
    let missing = |f: &str| {
        perr(
            &jpath,
            f,
            format!("class '{}' needs the field '{f}'", meta.class),
        )
    };
    let constraints = match meta.class.as_str() {
        "lcp" => ConstraintSet::NonNegative,
        "ccp" | "coulomb" => ConstraintSet::CoulombCones {
            mu: meta.mu.clone().ok_or_else(|| missing("mu"))?,
        },
        "box" => {
            let conv = |what: &str, v: &Option<Vec<Value>>, default: f64| -> Result<Vec<f64>> {
                v.as_ref()
                    .ok_or_else(|| missing(what))?
                    .iter()
                    .enumerate()
                    .map(|(i, x)| bound_from_json(&jpath, what, i, x, default))
                    .collect()
            };
            ConstraintSet::Box {
                lo: conv("lo", &meta.lo, f64::NEG_INFINITY)?,
                hi: conv("hi", &meta.hi, f64::INFINITY)?,
            }
        }
        c => {
            return Err(perr(
                &jpath,
                "class",
                format!("unknown class '{c}' (expected lcp, box, ccp or coulomb)"),
            ))
        }
    };
    let mut provenance = meta.provenance.unwrap_or_else(|| Provenance {
        source: dir.display().to_string(),
        format: "bundle".into(),
        derivation: "as-is".into(),
        ..Provenance::default()
    });
    if duplicates > 0 {
        provenance
            .parameters
            .insert(DUPLICATES_KEY.into(), duplicates.to_string());
    }
    let inst = match (meta.class.as_str(), constraints) {
        ("coulomb", ConstraintSet::CoulombCones { mu }) => {
            Instance::new_coulomb(meta.name, n_mat, r, mu, provenance, validation)
        }
        (_, constraints) => Instance::new(meta.name, n_mat, r, constraints, provenance, validation),
    }
    .map_err(|e| e.in_file(dir))?;
    if let Some(h) = meta.hash.as_deref().filter(|h| !h.is_empty()) {
        if h != inst.hash() {
            return Err(perr(
                &jpath,
                "hash",
                format!(
                    "content hash mismatch: instance.json says {h}, the data gives {} (files \
                     edited or corrupted?)",
                    inst.hash()
                ),
            ));
        }
    }
    Ok(inst)
}
