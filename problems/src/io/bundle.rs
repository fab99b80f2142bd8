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
//! The full schema, with an example per class, is `docs/formats.md`. `class` is `lcp` (no
//! further data), `ccp` (`mu`, one per contact), `coulomb` (the true Coulomb problem on the
//! same data, `mu`; its `N = W` may be non-symmetric and is then written `general`) or `box`
//! (`lo` and `hi`, `n` entries each). JSON has no infinities: an infinite bound is written as
//! the string `"inf"` or `"-inf"`; on reading, `null` is also accepted and means no bound
//! (`-inf` in `lo`, `+inf` in `hi`). Numbers are written in shortest round-trip form and read
//! with correct rounding (serde_json's `float_roundtrip`), and the matrix and vector with 17
//! significant digits, so a written and re-read instance has the same [`Instance::hash`].
//! `nnz` counts the stored entries of the full (not triangular) `N`. `hash` is checked on
//! reading when present.
//!
//! **Reading is forgiving** where nothing can be misread (a hand-made bundle needs only
//! `class`, and `mu` or `lo`/`hi` for its class): `format_version` omitted means 1, `name`
//! omitted means the directory name, `n` and `nnz` omitted are taken from the files (given,
//! they must match, and the error says the right value), a single number for `mu`, `lo` or
//! `hi` applies to every contact or unknown, `provenance` omitted gives `source` = the
//! directory, `format` = `bundle`, `derivation` = `as-is`. `N.mtx` may also store the upper
//! triangle, or be a dense `array` (general or symmetric, as SciPy's `mmwrite` writes a NumPy
//! array); `r.mtx` may be a one-column `coordinate` matrix. Unknown fields are ignored.
//!
//! **Matrix-free bundles** (`"matrix_storage": "matrix-free"`, written for an instance on the
//! matrix-free storage, [`crate::operator::MatrixFree`]) hold the factors of `N = D^T M^-1 D`
//! instead of `N`: `D.mtx` (`m x n`, `coordinate real general`), `M_diag.mtx` (the diagonal of
//! `M`, `array real general`, `m x 1`) and `r.mtx`; `nnz` counts the entries of `D`. They read
//! back as a matrix-free instance with the same hash, and `N` is never formed. A general sparse
//! `M` (a global friction problem kept matrix-free, `D = H`,
//! [`crate::operator::MatrixFree::with_sparse_mass`]) is `M.mtx` (`m x m`, `coordinate real
//! general`, both triangles) instead of `M_diag.mtx`.

use super::{io_err, mtx, perr};
use crate::constraints::ConstraintSet;
use crate::error::Result;
use crate::instance::{Instance, Provenance, ValidationOptions};
use crate::linalg::CscMatrix;
use crate::operator::MatrixFree;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Version written to and expected in `instance.json`.
pub const BUNDLE_FORMAT_VERSION: u32 = 1;

/// The version an `instance.json` without `format_version` has: always 1 (the first
/// version), also after later versions appear, so hand-made files keep their meaning.
pub const OMITTED_FORMAT_VERSION: u32 = 1;

/// Sign convention note written to every `instance.json`.
pub const BUNDLE_SIGN_CONVENTION: &str = "f = 1/2 x^T N x + r^T x, g = N x + r";

/// `instance.json` as written (every field).
#[derive(Serialize)]
struct InstanceJson {
    format_version: u32,
    name: String,
    class: String,
    n: usize,
    nnz: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mu: Option<Vec<f64>>,
    /// Unknowns per contact of a cone instance: written only for 2-D cones (absent: 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cone_dim: Option<usize>,
    /// Bilateral (joint) blocks at the start of a cone instance: written only when there are
    /// some (absent: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    joints: Option<usize>,
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
    /// The diagonal compliance `R` already included in the stored `N` (compliant instances
    /// only, [`Instance::with_compliance`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    compliance: Option<Vec<f64>>,
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
    if let Some(op) = instance.matrix_free() {
        // the factors, never N: D.mtx (general), M_diag.mtx (the diagonal of M) or M.mtx (a
        // general M, a global problem kept matrix-free: both triangles), r.mtx
        write_file(&dir.join("D.mtx"), |w| mtx::write_general(w, op.d()))?;
        match op.mass_matrix() {
            Some(m) => write_file(&dir.join("M.mtx"), |w| mtx::write_general(w, m))?,
            None => write_file(&dir.join("M_diag.mtx"), |w| {
                mtx::write_vector(w, &op.mass_diagonal())
            })?,
        }
        write_file(&dir.join("r.mtx"), |w| mtx::write_vector(w, instance.r()))?;
        let json = header(instance, "matrix-free");
        let path = dir.join("instance.json");
        return write_file(&path, |w| {
            serde_json::to_writer_pretty(&mut *w, &json).map_err(std::io::Error::other)?;
            writeln!(w)
        });
    }
    // formed for the writer and dropped on the block storage, not kept in the instance
    let n_mat = instance.csc();
    let n_mat = &*n_mat;
    let symmetric = mtx::is_exactly_symmetric(n_mat);
    write_file(&dir.join("N.mtx"), |w| {
        if symmetric {
            mtx::write_symmetric_lower(w, n_mat)
        } else {
            mtx::write_general(w, n_mat)
        }
    })?;
    write_file(&dir.join("r.mtx"), |w| mtx::write_vector(w, instance.r()))?;
    let json = header(
        instance,
        if symmetric {
            "symmetric-lower"
        } else {
            "general"
        },
    );
    let path = dir.join("instance.json");
    write_file(&path, |w| {
        serde_json::to_writer_pretty(&mut *w, &json).map_err(std::io::Error::other)?;
        writeln!(w)
    })
}

/// The instance header (the `instance.json` of a bundle, the `instance` member of an `.npz`):
/// every field, `matrix_storage` as given.
pub(crate) fn header_json(instance: &Instance, matrix_storage: &str) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(&header(instance, matrix_storage)).unwrap_or_default();
    v.push(b'\n');
    v
}

fn header(instance: &Instance, matrix_storage: &str) -> InstanceJson {
    // the set's data vectors by their field names (`mu`; `lo`, `hi` with infinite bounds as
    // strings)
    let k = instance.constraints();
    let mu = k.data_named("mu").map(<[f64]>::to_vec);
    let bounds = |name: &str| {
        k.data_named(name)
            .map(|v| v.iter().map(|&v| bound_to_json(v)).collect())
    };
    let (lo, hi) = (bounds("lo"), bounds("hi"));
    InstanceJson {
        format_version: BUNDLE_FORMAT_VERSION,
        name: instance.name().to_string(),
        class: instance.class().as_str().to_string(),
        n: instance.n(),
        // N's stored entries (D's for a matrix-free instance), without forming N
        nnz: instance.nnz(),
        mu,
        cone_dim: instance.constraints().cone_dim().filter(|&d| d != 3),
        joints: Some(instance.constraints().joints()).filter(|&j| j > 0),
        lo,
        hi,
        hash: Some(instance.hash().to_string()),
        sign_convention: Some(BUNDLE_SIGN_CONVENTION.into()),
        matrix_storage: Some(matrix_storage.into()),
        compliance: instance.compliance().map(<[f64]>::to_vec),
        provenance: Some(instance.provenance().clone()),
    }
}

/// Provenance parameter holding the number of duplicate entries of `N.mtx` that were summed
/// (as SciPy's `mmread` does; set only when there are any).
pub const DUPLICATES_KEY: &str = "n_mtx_duplicates_summed";

/// A present field kept as it is, `null` included (`Option<Value>` alone reads `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `instance.json` as read: everything but `class` may be omitted (see the module
/// documentation and `docs/formats.md`).
#[derive(Deserialize)]
pub(crate) struct InstanceJsonIn {
    #[serde(default)]
    format_version: Option<u32>,
    #[serde(default)]
    pub(crate) name: Option<String>,
    class: String,
    #[serde(default)]
    n: Option<usize>,
    #[serde(default)]
    nnz: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    mu: Option<Value>,
    #[serde(default)]
    cone_dim: Option<usize>,
    #[serde(default)]
    joints: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    lo: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    hi: Option<Value>,
    #[serde(default)]
    hash: Option<String>,
    #[serde(default)]
    pub(crate) matrix_storage: Option<String>,
    #[serde(default, deserialize_with = "present")]
    compliance: Option<Value>,
    #[serde(default)]
    provenance: Option<Provenance>,
}

impl InstanceJsonIn {
    /// Unknowns per block of the instance this header describes: the cone dimension (3 unless
    /// `cone_dim` says 2) for the cone and friction-box classes, 1 otherwise.
    pub(crate) fn block_size(&self) -> usize {
        match self.class.as_str() {
            "ccp" | "coulomb" | "blcp" => self.cone_dim.unwrap_or(3),
            _ => 1,
        }
    }
}

/// The operator of an instance as read: `N` itself, or the factors of `N = D^T M^-1 D`.
pub(crate) enum Operand {
    /// `N`, `n x n`.
    Matrix(CscMatrix),
    /// `D` and `M` ([`MatrixFree`]).
    MatrixFree(Box<MatrixFree>),
}

impl Operand {
    /// Stored entries: of `N`, or of `D`.
    fn nnz(&self) -> usize {
        match self {
            Operand::Matrix(m) => m.nnz(),
            Operand::MatrixFree(op) => op.d().nnz(),
        }
    }
}

/// Expand `v` (field `what` of `path`) to `len` numbers: a list must have `len` entries (`per`
/// names what one entry stands for in the error), anything else is one value repeated.
/// `default` is the value of `null` (a missing bound).
fn expand(
    path: &Path,
    what: &str,
    v: &Value,
    len: usize,
    per: &str,
    default: f64,
) -> Result<Vec<f64>> {
    match v {
        Value::Array(xs) => {
            if xs.len() != len {
                return Err(perr(
                    path,
                    what,
                    format!(
                        "{what} has {} entries but the instance needs {len} ({per}); give one \
                         number to use it for all",
                        xs.len()
                    ),
                ));
            }
            xs.iter()
                .enumerate()
                .map(|(i, x)| bound_from_json(path, what, i, x, default))
                .collect()
        }
        x => {
            let x = bound_from_json(path, what, 0, x, default).map_err(|_| {
                perr(
                    path,
                    what,
                    format!("{what} must be a number or a list of numbers, found {x}"),
                )
            })?;
            Ok(vec![x; len])
        }
    }
}

/// Read the bundle directory `dir` written by [`write_bundle`] (or by hand, see the module
/// documentation and `docs/formats.md`) and validate it into an [`Instance`] with `validation`.
///
/// Forgiving where nothing is lost: `format_version` omitted means 1, `name` omitted means the
/// directory name, `n` and `nnz` omitted are taken from the matrices, a single number for `mu`
/// (or for `lo`/`hi`) applies to every contact (unknown). `N.mtx` may be `coordinate` general or
/// symmetric (either triangle) or a dense `array` (general or symmetric); `r.mtx` an `array`
/// or a `coordinate` column.
///
/// Errors: [`crate::ProblemError::Io`] for a missing file, [`crate::ProblemError::Parse`]
/// naming `instance.json` (or the matrix file) and what was expected: malformed JSON (with
/// line and column) or MatrixMarket (with line), a missing `class` or class field, an
/// unsupported `format_version`, `n`/`nnz` or a list length inconsistent with the files, a
/// `hash` that does not match the data; validation errors of [`Instance::new`] wrapped in
/// [`crate::ProblemError::InFile`].
pub fn read_bundle(dir: &Path, validation: ValidationOptions) -> Result<Instance> {
    let jpath = dir.join("instance.json");
    let text = std::fs::read(&jpath).map_err(|e| io_err(&jpath, e))?;
    let meta = parse_meta(&jpath, &text)?;
    if meta.matrix_storage.as_deref() == Some("matrix-free") {
        return read_factors(dir, &jpath, meta, validation);
    }
    let npath = dir.join("N.mtx");
    let (n_mat, duplicates) = matrix_file(&npath)?;
    let rpath = dir.join("r.mtx");
    let r = vector_file(&rpath)?;
    if n_mat.nrows() != n_mat.ncols() || n_mat.nrows() != r.len() {
        return Err(perr(
            &npath,
            "line 2",
            format!(
                "N.mtx is {} x {} but r.mtx has {} entries: N must be n x n and r of length n",
                n_mat.nrows(),
                n_mat.ncols(),
                r.len()
            ),
        ));
    }
    let parts = Parts {
        jpath: &jpath,
        source: dir,
        format: "bundle",
        n_file: "N.mtx",
        r_file: "r.mtx",
    };
    assemble(
        meta,
        &parts,
        Operand::Matrix(n_mat),
        r,
        duplicates,
        validation,
    )
}

/// The Matrix Market matrix file `path` ([`mtx::read_file`], [`mtx::read_matrix_counted`]): the
/// matrix and its count of summed duplicate entries.
fn matrix_file(path: &Path) -> Result<(CscMatrix, usize)> {
    mtx::read_matrix_counted(path, &mtx::read_file(path)?)
}

/// The Matrix Market vector file `path` ([`mtx::read_file`], [`mtx::read_vector`]).
fn vector_file(path: &Path) -> Result<Vec<f64>> {
    mtx::read_vector(path, &mtx::read_file(path)?)
}

/// A matrix-free bundle (`"matrix_storage": "matrix-free"`): `D.mtx` (`m x n`), `M_diag.mtx`
/// (length `m`) or `M.mtx` (`m x m`, a general sparse SPD `M`, read when present), `r.mtx`
/// (length `n`); errors name the file and what its size should be.
fn read_factors(
    dir: &Path,
    jpath: &Path,
    meta: InstanceJsonIn,
    validation: ValidationOptions,
) -> Result<Instance> {
    let dpath = dir.join("D.mtx");
    let (d, duplicates) = matrix_file(&dpath)?;
    let rpath = dir.join("r.mtx");
    let r = vector_file(&rpath)?;
    let msparse = dir.join("M.mtx");
    let mpath = if msparse.exists() {
        msparse
    } else {
        dir.join("M_diag.mtx")
    };
    let op = if mpath.ends_with("M.mtx") {
        let (m, _) = matrix_file(&mpath)?;
        if m.nrows() != d.nrows() || m.ncols() != d.nrows() {
            return Err(perr(
                &mpath,
                "line 2",
                format!(
                    "M.mtx is {} x {} but D.mtx is {} x {}: M must be square with one row per \
                     row of D",
                    m.nrows(),
                    m.ncols(),
                    d.nrows(),
                    d.ncols()
                ),
            ));
        }
        Some(m)
    } else {
        None
    };
    let m_diag = if op.is_none() {
        vector_file(&mpath)?
    } else {
        Vec::new()
    };
    if op.is_none() && m_diag.len() != d.nrows() {
        return Err(perr(
            &mpath,
            "line 2",
            format!(
                "M_diag.mtx has {} entries but D.mtx is {} x {}: M_diag must have one entry \
                 per row of D",
                m_diag.len(),
                d.nrows(),
                d.ncols()
            ),
        ));
    }
    if r.len() != d.ncols() {
        return Err(perr(
            &rpath,
            "line 2",
            format!(
                "r.mtx has {} entries but D.mtx is {} x {}: r must have one entry per column \
                 of D",
                r.len(),
                d.nrows(),
                d.ncols()
            ),
        ));
    }
    let op = match op {
        Some(m) => MatrixFree::with_sparse_mass(d, m, meta.block_size()),
        None => MatrixFree::with_diagonal_mass(d, &m_diag),
    }
    .map_err(|e| e.in_file(&mpath))?;
    let parts = Parts {
        jpath,
        source: dir,
        format: "bundle",
        n_file: "D.mtx",
        r_file: "r.mtx",
    };
    assemble(
        meta,
        &parts,
        Operand::MatrixFree(Box::new(op)),
        r,
        duplicates,
        validation,
    )
}

/// Parse the instance header (`instance.json`, or the `instance` member of an `.npz`) and
/// check its `format_version`. Errors name `jpath` with the line and column.
pub(crate) fn parse_meta(jpath: &Path, text: &[u8]) -> Result<InstanceJsonIn> {
    let syntax = |line: usize, column: usize, message: String| {
        perr(
            jpath,
            format!("line {line}, column {column}"),
            format!(
                "{message} (instance.json needs at least \"class\": \"lcp\", \"box\", \"ccp\" \
                 or \"coulomb\"; see docs/formats.md)"
            ),
        )
    };
    let text = std::str::from_utf8(text).map_err(|e| {
        perr(
            jpath,
            format!("byte {}", e.valid_up_to()),
            "not UTF-8 text (instance.json is JSON)".to_string(),
        )
    })?;
    // a key given twice is an error (serde_json would keep the last)
    let value =
        crate::json::parse_strict(text).map_err(|e| syntax(e.line(), e.column(), e.to_string()))?;
    check_fields(jpath, &value)?;
    // read again typed, for the line and column of a wrong type
    let meta: InstanceJsonIn =
        serde_json::from_str(text).map_err(|e| syntax(e.line(), e.column(), e.to_string()))?;
    let version = meta.format_version.unwrap_or(OMITTED_FORMAT_VERSION);
    if version != BUNDLE_FORMAT_VERSION {
        return Err(perr(
            jpath,
            "format_version",
            format!(
                "unsupported bundle format_version {version} (this reader knows \
                 {BUNDLE_FORMAT_VERSION}; an omitted version means {OMITTED_FORMAT_VERSION})"
            ),
        ));
    }
    Ok(meta)
}

/// The fields `instance.json` may hold (what [`InstanceJsonIn`] reads, plus the
/// `sign_convention` note cpbench writes).
const INSTANCE_FIELDS: &[&str] = &[
    "format_version",
    "name",
    "class",
    "n",
    "nnz",
    "mu",
    "cone_dim",
    "joints",
    "lo",
    "hi",
    "hash",
    "sign_convention",
    "matrix_storage",
    "compliance",
    "provenance",
];

/// The fields of `provenance` (those of [`Provenance`]).
const PROVENANCE_FIELDS: &[&str] = &[
    "source",
    "format",
    "derivation",
    "parameters",
    "seed",
    "step",
    "symmetrized_from",
];

/// Refuse a field `instance.json` does not define (at the top or in `provenance`): a
/// misspelt `mu` would otherwise be dropped without a word.
fn check_fields(jpath: &Path, value: &Value) -> Result<()> {
    let unknown = |obj: &serde_json::Map<String, Value>, known: &[&str], at: &str| {
        obj.keys().find(|k| !known.contains(&k.as_str())).map(|k| {
            perr(
                jpath,
                format!("{at}{k}"),
                format!(
                    "unknown field '{at}{k}' (expected one of: {})",
                    known.join(", ")
                ),
            )
        })
    };
    let Some(obj) = value.as_object() else {
        return Ok(()); // the typed read names the wrong shape
    };
    if let Some(e) = unknown(obj, INSTANCE_FIELDS, "") {
        return Err(e);
    }
    if let Some(e) = obj
        .get("provenance")
        .and_then(Value::as_object)
        .and_then(|p| unknown(p, PROVENANCE_FIELDS, "provenance."))
    {
        return Err(e);
    }
    Ok(())
}

/// Refuse the fields that do not apply to the class (`mu` on an LCP, `lo` on a cone
/// problem, ...): the reader would otherwise ignore them, and the file says something the
/// instance does not mean.
fn check_class_fields(jpath: &Path, meta: &InstanceJsonIn) -> Result<()> {
    let present: [(&str, bool); 5] = [
        ("mu", meta.mu.is_some()),
        ("cone_dim", meta.cone_dim.is_some()),
        ("joints", meta.joints.is_some()),
        ("lo", meta.lo.is_some()),
        ("hi", meta.hi.is_some()),
    ];
    let applies: &[&str] = match meta.class.as_str() {
        "ccp" | "coulomb" => &["mu", "cone_dim", "joints"],
        "blcp" => &["mu", "cone_dim"],
        "box" => &["lo", "hi"],
        "lcp" => &[],
        _ => return Ok(()), // an unknown class is named by the caller
    };
    match present
        .iter()
        .find(|(f, there)| *there && !applies.contains(f))
    {
        Some((f, _)) => Err(perr(
            jpath,
            *f,
            format!(
                "the field '{f}' does not apply to class '{}' (its fields: {})",
                meta.class,
                if applies.is_empty() {
                    "none beyond n, nnz and the matrices".to_string()
                } else {
                    applies.join(", ")
                }
            ),
        )),
        None => Ok(()),
    }
}

/// Where the parts of an instance came from, for [`assemble`]'s messages and provenance.
pub(crate) struct Parts<'a> {
    /// The header (`instance.json`, or `X.npz` for its `instance` member).
    pub jpath: &'a Path,
    /// The bundle folder or `.npz` file (default name and provenance source).
    pub source: &'a Path,
    /// Provenance format (`bundle`, `npz`).
    pub format: &'a str,
    /// How messages name the matrix and the vector (`N.mtx`, `r.mtx`; `data/indices/indptr`, `r`).
    pub n_file: &'a str,
    /// See `n_file`.
    pub r_file: &'a str,
}

/// Build and validate the instance from its header and its `N` (`n x n`, checked by the
/// caller; or the factors of a matrix-free `N`, whose `nnz` is that of `D`) and `r`: the
/// count checks, the constraint set of the class, the provenance, the
/// content hash check. Shared by bundles and `.npz` files.
pub(crate) fn assemble(
    meta: InstanceJsonIn,
    parts: &Parts,
    op: Operand,
    r: Vec<f64>,
    duplicates: usize,
    validation: ValidationOptions,
) -> Result<Instance> {
    let jpath = parts.jpath.to_path_buf();
    let dir = parts.source;
    let (nf, rf) = (parts.n_file, parts.r_file);
    let n = r.len();
    if let Some(m) = meta.n.filter(|&m| m != n) {
        return Err(perr(
            &jpath,
            "n",
            format!(
                "n = {m} but {nf} is {n} x {n} and {rf} has {n} entries (n \
                 should be {n}, or omit it)"
            ),
        ));
    }
    if let Some(m) = meta.nnz.filter(|&m| m != op.nnz()) {
        return Err(perr(
            &jpath,
            "nnz",
            format!(
                "nnz = {m} but {nf} stores {} entries (both triangles count; \
                 nnz should be {}, or omit it)",
                op.nnz(),
                op.nnz()
            ),
        ));
    }
    let name = meta.name.clone().unwrap_or_else(|| {
        dir.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "bundle".into())
    });
    check_class_fields(&jpath, &meta)?;
    let missing = |f: &str, what: &str| {
        perr(
            &jpath,
            f,
            format!("class '{}' needs the field '{f}' ({what})", meta.class),
        )
    };
    let constraints = match meta.class.as_str() {
        "lcp" => ConstraintSet::NonNegative,
        "ccp" | "coulomb" | "blcp" => {
            let mu = meta.mu.as_ref().ok_or_else(|| {
                missing(
                    "mu",
                    "friction coefficients: one number, or one per contact",
                )
            })?;
            let dim = meta.cone_dim.unwrap_or(3);
            if dim != 2 && dim != 3 {
                return Err(perr(
                    &jpath,
                    "cone_dim",
                    format!("cone_dim = {dim}: expected 2 or 3 unknowns per contact"),
                ));
            }
            if n % dim != 0 {
                let what = if dim == 3 {
                    "3 unknowns per contact (normal, two tangential)"
                } else {
                    "2 unknowns per contact (normal, tangent; cone_dim 2)"
                };
                return Err(perr(
                    &jpath,
                    "n",
                    format!(
                        "class '{}' has {what}, but {nf} is {n} x {n} and {n} is not a \
                         multiple of {dim}",
                        meta.class
                    ),
                ));
            }
            let per = format!("one per contact, n / {dim}");
            let mut mu = expand(&jpath, "mu", mu, n / dim, &per, f64::NAN)?;
            let joints = meta.joints.unwrap_or(0);
            if joints > n / dim {
                return Err(perr(
                    &jpath,
                    "joints",
                    format!(
                        "joints = {joints} but the instance has only {} blocks of {dim} \
                         unknowns (n = {n}): the joints are the first blocks",
                        n / dim
                    ),
                ));
            }
            if !matches!(meta.mu, Some(Value::Array(_))) {
                // one number applies to the contacts: the joint blocks have no friction
                mu[..joints].iter_mut().for_each(|m| *m = 0.0);
            }
            if let Some(b) = mu[..joints].iter().position(|&m| m != 0.0) {
                return Err(perr(
                    &jpath,
                    format!("mu[{b}]"),
                    format!(
                        "mu[{b}] = {} but block {b} is a joint (joints = {joints}): joint \
                         blocks have no friction, their mu is 0",
                        mu[b]
                    ),
                ));
            }
            if meta.class == "blcp" {
                ConstraintSet::FrictionBox { mu }
            } else {
                ConstraintSet::coulomb_jointed(mu, dim, joints)
            }
        }
        "box" => {
            let conv = |what: &str, v: &Option<Value>, default: f64| -> Result<Vec<f64>> {
                let v = v
                    .as_ref()
                    .ok_or_else(|| missing(what, "bounds: one value, or one per unknown"))?;
                expand(&jpath, what, v, n, "one per unknown, n", default)
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
                format!("unknown class '{c}' (expected lcp, box, ccp, coulomb or blcp)"),
            ))
        }
    };
    let mut provenance = meta.provenance.unwrap_or_else(|| Provenance {
        source: dir.display().to_string(),
        format: parts.format.into(),
        derivation: "as-is".into(),
        ..Provenance::default()
    });
    if duplicates > 0 {
        provenance
            .parameters
            .insert(DUPLICATES_KEY.into(), duplicates.to_string());
    }
    let inst = match (meta.class.as_str(), constraints, op) {
        ("coulomb", k @ ConstraintSet::CoulombCones { .. }, Operand::MatrixFree(op)) => {
            // the Coulomb problem on D and M: W = D^T M^-1 D, symmetric by construction
            Instance::on_operator(name, *op, r, k, provenance).map(Instance::with_coulomb_class)
        }
        ("coulomb", k @ ConstraintSet::CoulombCones { .. }, Operand::Matrix(n_mat)) => {
            Instance::new_coulomb_set(name, n_mat, r, k, provenance, validation)
        }
        ("blcp", ConstraintSet::FrictionBox { mu }, Operand::Matrix(n_mat)) => {
            Instance::new_blcp(name, n_mat, r, mu, provenance, validation)
        }
        (_, constraints, Operand::Matrix(n_mat)) => {
            Instance::new(name, n_mat, r, constraints, provenance, validation)
        }
        (_, constraints, Operand::MatrixFree(op)) => {
            Instance::on_operator(name, *op, r, constraints, provenance)
        }
    }
    .map_err(|e| e.in_file(dir))?;
    // a compliant instance: R is already in a stored N, recorded beside it; the factors of a
    // matrix-free N do not hold it, so it is added to them
    let inst = match &meta.compliance {
        None => inst,
        Some(v) => {
            let c = expand(&jpath, "compliance", v, n, "one per unknown, n", f64::NAN)?;
            let with = if inst.matrix_free().is_some() {
                inst.with_compliance(c)
            } else {
                inst.with_compliance_included(c)
            };
            with.map_err(|e| perr(&jpath, "compliance", e.to_string()))?
        }
    };
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
