//! cpbench's binary instance file: NumPy `.npy` arrays in an uncompressed `.npz` (a ZIP
//! archive, method "stored"), readable by `numpy.load` and `scipy.sparse.load_npz` as they are.
//!
//! Members (`numpy.load(f)[key]`):
//!
//! | key | dtype, shape | content |
//! |---|---|---|
//! | `format` | `|S3`, `()` | `b"csc"`: `N` is stored as SciPy's compressed sparse column |
//! | `shape` | `int64`, `(2,)` | `(n, n)` |
//! | `indptr` | `int32` or `int64`, `(n + 1,)` | column pointers of `N` |
//! | `indices` | `int32` or `int64`, `(nnz,)` | row indices of `N`, increasing within a column |
//! | `data` | `float64`, `(nnz,)` | values of `N`, both triangles |
//! | `r` | `float64`, `(n,)` | the linear term `r` |
//! | `instance` | `uint8`, `(k,)` | the instance header: the bytes of a bundle's `instance.json` (class, `mu` or `lo`/`hi`, name, hash, provenance; `docs/formats.md`) |
//!
//! So `scipy.sparse.load_npz(f)` gives `N` (the first five keys are SciPy's own layout), and
//! `json.loads(numpy.load(f)["instance"].tobytes())` the header.
//!
//! A **matrix-free** instance (`N = D^T M^-1 D` never formed, e.g. `cpbench generate --operator
//! matrix-free`) has the header field `"matrix_storage": "matrix-free"` (its `nnz` is that of
//! `D`) and, instead of `format`, `shape`, `indptr`, `indices`, `data`:
//!
//! | key | dtype, shape | content |
//! |---|---|---|
//! | `D_shape` | `int64`, `(2,)` | `(m, n)`: `m` generalised velocities, `n` unknowns |
//! | `D_indptr` | `int32` or `int64`, `(n + 1,)` | column pointers of `D` |
//! | `D_indices` | `int32` or `int64`, `(nnz(D),)` | row indices of `D`, increasing within a column |
//! | `D_data` | `float64`, `(nnz(D),)` | values of `D` |
//! | `M_diag` | `float64`, `(m,)` | the diagonal of `M` (positive) |
//!
//! (`scipy.sparse.csc_array((f["D_data"], f["D_indices"], f["D_indptr"]), shape=f["D_shape"])`
//! gives `D`.) A general sparse `M` (a global friction problem kept matrix-free, `D = H`:
//! [`crate::operator::MatrixFree::with_sparse_mass`]) replaces `M_diag` by `M_shape` (`(m, m)`),
//! `M_indptr`, `M_indices`, `M_data` (both triangles, the same layout as `D_*`). Integer arrays are `int32`
//! when every value fits, else `int64` (SciPy's rule); both are read. The writer keeps `N`
//! exactly as stored, so a round trip is bit-exact and gives the same content hash.
//!
//! Errors name the file, the member (array) and, for bad entries, the index: a member that is
//! missing or of the wrong dtype or shape, `indptr` not starting at 0, decreasing or not ending
//! at `nnz`, a row index out of range or out of order, a non-finite value, a header that is not
//! valid JSON or whose counts disagree with the arrays.

use super::bundle::{assemble, header_json, parse_meta, Operand, Parts};
use super::{io_err, perr};
use crate::error::Result;
use crate::instance::{Instance, ValidationOptions};
use crate::linalg::CscMatrix;
use crate::operator::MatrixFree;
use npyz::WriterBuilder;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

/// The file signature of a ZIP archive (and so of an `.npz`).
pub const ZIP_MAGIC: &[u8; 4] = b"PK\x03\x04";

/// The signature an empty ZIP archive starts with (its end-of-central-directory record).
pub const EMPTY_ZIP_MAGIC: &[u8; 4] = b"PK\x05\x06";

/// A shape as NumPy prints it: `(3, 4)`, `(5,)`.
fn shape_name(shape: &[u64]) -> String {
    match shape {
        [k] => format!("({k},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A dtype as NumPy writes it (`<f8`, `|S3`), never Rust's debug form.
fn dtype_name(d: &npyz::DType) -> String {
    match d {
        npyz::DType::Plain(t) => format!("'{t}'"),
        npyz::DType::Array(..) => "a sub-array dtype".into(),
        npyz::DType::Record(..) => "a structured (record) dtype".into(),
    }
}

/// Write `instance` as an uncompressed `.npz` at `path` (module docs for the members).
/// Atomic: written to `path.tmp-<pid>` and renamed. Errors: [`crate::ProblemError::Io`]
/// naming the path.
pub fn write_npz(instance: &Instance, path: &Path) -> Result<()> {
    let tmp = path.with_extension(format!("npz.tmp-{}", std::process::id()));
    let result = write_to(instance, &tmp)
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| io_err(path, e)));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn write_to(instance: &Instance, path: &Path) -> Result<()> {
    let ioe = |e: std::io::Error| io_err(path, e);
    let zipe = |e: zip::result::ZipError| io_err(path, std::io::Error::other(e.to_string()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(ioe)?;
    }
    let file = std::fs::File::create(path).map_err(ioe)?;
    let mut zip = zip::ZipWriter::new(BufWriter::with_capacity(1 << 20, file));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    let n = instance.n();
    let storage = if let Some(op) = instance.matrix_free() {
        let d = op.d();
        zip.start_file("D_shape.npy", opts).map_err(zipe)?;
        write_array(&mut zip, &[2], [d.nrows() as i64, d.ncols() as i64]).map_err(ioe)?;
        write_sparse(&mut zip, opts, "D_", d).map_err(|e| io_err(path, e))?;
        match op.mass_matrix() {
            Some(m) => {
                zip.start_file("M_shape.npy", opts).map_err(zipe)?;
                write_array(&mut zip, &[2], [m.nrows() as i64, m.ncols() as i64]).map_err(ioe)?;
                write_sparse(&mut zip, opts, "M_", m).map_err(|e| io_err(path, e))?;
            }
            None => {
                zip.start_file("M_diag.npy", opts).map_err(zipe)?;
                write_array(&mut zip, &[op.m() as u64], op.mass_diagonal()).map_err(ioe)?;
            }
        }
        "matrix-free"
    } else {
        // formed for the writer (and dropped) on the block storage
        let n_mat = instance.csc();
        zip.start_file("format.npy", opts).map_err(zipe)?;
        write_bytes_scalar(&mut zip, *b"csc").map_err(ioe)?;
        zip.start_file("shape.npy", opts).map_err(zipe)?;
        write_array(&mut zip, &[2], [n as i64, n as i64]).map_err(ioe)?;
        write_sparse(&mut zip, opts, "", &n_mat).map_err(|e| io_err(path, e))?;
        "csc-full"
    };
    zip.start_file("r.npy", opts).map_err(zipe)?;
    write_array(&mut zip, &[n as u64], instance.r().iter().copied()).map_err(ioe)?;
    let header = header_json(instance, storage);
    zip.start_file("instance.npy", opts).map_err(zipe)?;
    write_array(&mut zip, &[header.len() as u64], header.iter().copied()).map_err(ioe)?;
    let mut w = zip.finish().map_err(zipe)?;
    w.flush().map_err(ioe)?;
    w.get_ref().sync_all().map_err(ioe)
}

/// `{prefix}indptr`, `{prefix}indices` (int32 when every index and pointer fits, SciPy's rule,
/// else int64) and `{prefix}data` of a CSC matrix.
fn write_sparse<W: Write + Seek>(
    zip: &mut zip::ZipWriter<W>,
    opts: zip::write::SimpleFileOptions,
    prefix: &str,
    a: &CscMatrix,
) -> std::io::Result<()> {
    let zipe = |e: zip::result::ZipError| std::io::Error::other(e.to_string());
    let small = a.nnz() <= i32::MAX as usize && a.nrows().max(a.ncols()) <= i32::MAX as usize;
    for (name, v) in [("indptr", a.col_ptr()), ("indices", a.row_idx())] {
        zip.start_file(format!("{prefix}{name}.npy"), opts)
            .map_err(zipe)?;
        let shape = [v.len() as u64];
        if small {
            write_array(zip, &shape, v.iter().map(|&x| x as i32))?;
        } else {
            write_array(zip, &shape, v.iter().map(|&x| x as i64))?;
        }
    }
    zip.start_file(format!("{prefix}data.npy"), opts)
        .map_err(zipe)?;
    write_array(zip, &[a.nnz() as u64], a.values().iter().copied())
}

/// Write a 0-d NumPy byte string (`|S3`) in `.npy` format into `w`, as SciPy writes the
/// `format` entry (`b"csc"`) of a sparse matrix. Errors: the writer's.
pub fn write_bytes_scalar<W: Write>(w: &mut W, value: [u8; 3]) -> std::io::Result<()> {
    let dtype = npyz::DType::Plain(
        "|S3"
            .parse::<npyz::TypeStr>()
            .map_err(std::io::Error::other)?,
    );
    let mut a = npyz::WriteOptions::<[u8]>::new()
        .dtype(dtype)
        .shape(&[])
        .writer(w)
        .begin_nd()?;
    a.push(&value[..])?;
    a.finish()
}

/// Write a NumPy array of `shape` (row-major, `prod(shape)` values) holding `values` in
/// their default dtype (`<f8` for `f64`, `<i8` for `i64`) in `.npy` format into `w`. Errors:
/// the writer's.
pub fn write_array<T: npyz::AutoSerialize, W: Write>(
    w: &mut W,
    shape: &[u64],
    values: impl IntoIterator<Item = T>,
) -> std::io::Result<()> {
    let mut a = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(w)
        .begin_nd()?;
    a.extend(values)?;
    a.finish()
}

/// Read an `.npz` written by [`write_npz`] (or by NumPy/SciPy in that layout, module docs)
/// and validate it into an [`Instance`] with `validation`. The instance name is the header's
/// `name`, else the file stem. Errors: see the module docs; validation errors of
/// [`Instance::new`] wrapped in [`crate::ProblemError::InFile`].
pub fn read_npz(path: &Path, validation: ValidationOptions) -> Result<Instance> {
    let file = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    read_npz_from(BufReader::with_capacity(1 << 20, file), path, validation)
}

/// [`read_npz`] from any seekable reader (e.g. the bytes of an embedded file); `path` names
/// it in messages and gives the default name.
pub fn read_npz_from<R: Read + Seek>(
    reader: R,
    path: &Path,
    validation: ValidationOptions,
) -> Result<Instance> {
    let mut zip = zip::ZipArchive::new(reader).map_err(|e| {
        perr(
            path,
            "ZIP directory",
            format!("not a readable .npz (ZIP) archive: {e}"),
        )
    })?;
    if zip.is_empty() {
        return Err(perr(
            path,
            "ZIP directory",
            "the archive is empty (an instance .npz holds format, shape, indptr, indices, data, \
             r and instance; see docs/formats.md)",
        ));
    }
    let header: Vec<u8> = read_vec(path, "instance", member(path, &mut zip, "instance")?)?;
    let mut meta = parse_meta(path, &header)?;
    if meta.name.is_none() {
        meta.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    }
    if meta.matrix_storage.as_deref() == Some("matrix-free") {
        return read_factors(path, &mut zip, meta, validation);
    }
    let format = member(path, &mut zip, "format")?;
    let fmt: Vec<u8> = match format.dtype() {
        npyz::DType::Plain(t) if t.to_string().starts_with("|S") => {
            let v: Vec<Vec<u8>> = read_any(path, "format", format)?;
            v.into_iter().next().unwrap_or_default()
        }
        other => {
            return Err(perr(
                path,
                "array 'format'",
                format!(
                    "expected a byte string b'csc', found dtype {}",
                    dtype_name(&other)
                ),
            ))
        }
    };
    if fmt != b"csc" {
        return Err(perr(
            path,
            "array 'format'",
            format!(
                "N is stored as '{}': this reader takes 'csc' (scipy.sparse.save_npz of a \
                 csc_matrix / csc_array)",
                String::from_utf8_lossy(&fmt)
            ),
        ));
    }
    let (n, _) = matrix_shape(path, &mut zip, "shape", true)?;
    let indptr = ints(path, "indptr", member(path, &mut zip, "indptr")?)?;
    let indices = ints(path, "indices", member(path, &mut zip, "indices")?)?;
    let data: Vec<f64> = read_vec(path, "data", member(path, &mut zip, "data")?)?;
    let r: Vec<f64> = read_vec(path, "r", member(path, &mut zip, "r")?)?;
    if r.len() != n {
        return Err(perr(
            path,
            "array 'r'",
            format!("r has {} entries but shape says n = {n}", r.len()),
        ));
    }
    check_csc(path, "", n, n, &indptr, &indices, data.len())?;
    let n_mat =
        CscMatrix::from_csc_parts(n, n, indptr, indices, data).map_err(|e| e.in_file(path))?;
    let parts = Parts {
        jpath: path,
        source: path,
        format: "npz",
        n_file: "the npz's N (data, indices, indptr)",
        r_file: "its 'r'",
    };
    assemble(meta, &parts, Operand::Matrix(n_mat), r, 0, validation)
}

/// The shape array `key` of a matrix, `(rows, columns)`. Errors: not two entries, or
/// `square` and the two differ.
fn matrix_shape<R: Read + Seek>(
    path: &Path,
    zip: &mut zip::ZipArchive<R>,
    key: &str,
    square: bool,
) -> Result<(usize, usize)> {
    let shape = ints(path, key, member(path, zip, key)?)?;
    match shape[..] {
        [a, b] if !square || a == b => Ok((a, b)),
        _ => Err(perr(
            path,
            format!("array '{key}'"),
            format!(
                "expected {}, found {}",
                if square { "(n, n)" } else { "(m, n)" },
                shape_name(&shape.iter().map(|&k| k as u64).collect::<Vec<_>>())
            ),
        )),
    }
}

/// The matrix-free members (`D_*`, `M_diag`, `r`) of an archive whose header says
/// `"matrix_storage": "matrix-free"` (module docs).
fn read_factors<R: Read + Seek>(
    path: &Path,
    zip: &mut zip::ZipArchive<R>,
    meta: super::bundle::InstanceJsonIn,
    validation: ValidationOptions,
) -> Result<Instance> {
    let (m, n) = matrix_shape(path, zip, "D_shape", false)?;
    let indptr = ints(path, "D_indptr", member(path, zip, "D_indptr")?)?;
    let indices = ints(path, "D_indices", member(path, zip, "D_indices")?)?;
    let data: Vec<f64> = read_vec(path, "D_data", member(path, zip, "D_data")?)?;
    let sparse_m = zip.index_for_name("M_indptr.npy").is_some();
    let m_diag: Vec<f64> = if sparse_m {
        Vec::new()
    } else {
        read_vec(path, "M_diag", member(path, zip, "M_diag")?)?
    };
    let r: Vec<f64> = read_vec(path, "r", member(path, zip, "r")?)?;
    if r.len() != n {
        return Err(perr(
            path,
            "array 'r'",
            format!("r has {} entries but D_shape says n = {n}", r.len()),
        ));
    }
    if !sparse_m && m_diag.len() != m {
        return Err(perr(
            path,
            "array 'M_diag'",
            format!(
                "M_diag has {} entries but D_shape says m = {m}",
                m_diag.len()
            ),
        ));
    }
    check_csc(path, "D_", m, n, &indptr, &indices, data.len())?;
    let d = CscMatrix::from_csc_parts(m, n, indptr, indices, data).map_err(|e| e.in_file(path))?;
    let op = if sparse_m {
        let (mr, mc) = matrix_shape(path, zip, "M_shape", true)?;
        if mr != m {
            return Err(perr(
                path,
                "array 'M_shape'",
                format!("M is {mr} x {mc} but D_shape says m = {m}: M must be m x m"),
            ));
        }
        let mp = ints(path, "M_indptr", member(path, zip, "M_indptr")?)?;
        let mi = ints(path, "M_indices", member(path, zip, "M_indices")?)?;
        let mv: Vec<f64> = read_vec(path, "M_data", member(path, zip, "M_data")?)?;
        check_csc(path, "M_", m, m, &mp, &mi, mv.len())?;
        let mm = CscMatrix::from_csc_parts(m, m, mp, mi, mv).map_err(|e| e.in_file(path))?;
        MatrixFree::with_sparse_mass(d, mm, meta.block_size())
    } else {
        MatrixFree::with_diagonal_mass(d, &m_diag)
    }
    .map_err(|e| e.in_file(path))?;
    let parts = Parts {
        jpath: path,
        source: path,
        format: "npz",
        n_file: "the npz's D (D_data, D_indices, D_indptr)",
        r_file: "its 'r'",
    };
    assemble(
        meta,
        &parts,
        Operand::MatrixFree(Box::new(op)),
        r,
        0,
        validation,
    )
}

/// The positioned checks of the CSC arrays `{prefix}indptr`, `{prefix}indices` of an
/// `nrows x ncols` matrix (before they are handed to [`CscMatrix`]): the pointer array's
/// length, start, monotonicity and end, and every row index below `nrows` and increasing
/// within its column.
fn check_csc(
    path: &Path,
    prefix: &str,
    nrows: usize,
    ncols: usize,
    indptr: &[usize],
    indices: &[usize],
    nnz: usize,
) -> Result<()> {
    let (ip, ix, dt) = (
        format!("{prefix}indptr"),
        format!("{prefix}indices"),
        format!("{prefix}data"),
    );
    if indptr.len() != ncols + 1 {
        return Err(perr(
            path,
            format!("array '{ip}'"),
            format!(
                "{ip} has {} entries, expected {} + 1 = {}",
                indptr.len(),
                if prefix.is_empty() { "n" } else { "columns" },
                ncols + 1
            ),
        ));
    }
    if indices.len() != nnz {
        return Err(perr(
            path,
            format!("array '{ix}'"),
            format!("{ix} has {} entries but {dt} has {nnz}", indices.len()),
        ));
    }
    if indptr[0] != 0 || indptr[ncols] != nnz {
        return Err(perr(
            path,
            format!("array '{ip}'"),
            format!(
                "{ip} must start at 0 and end at nnz = {nnz}, found {} .. {}",
                indptr[0], indptr[ncols]
            ),
        ));
    }
    for j in 0..ncols {
        let (a, b) = (indptr[j], indptr[j + 1]);
        if a > b {
            return Err(perr(
                path,
                format!("array '{ip}', index {}", j + 1),
                format!("{ip} decreases: {a} then {b}"),
            ));
        }
        for k in a..b {
            let i = indices[k];
            if i >= nrows || (k > a && i <= indices[k - 1]) {
                return Err(perr(
                    path,
                    format!("array '{ix}', index {k}"),
                    format!(
                        "row {i} in column {j}: row indices must be below {} {nrows} and \
                         increasing within a column (scipy: A.sort_indices(), \
                         A.sum_duplicates())",
                        if prefix.is_empty() { "n =" } else { "m =" }
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// An archive member with its `.npy` header parsed, positioned at the first data byte.
struct Member<'a, R: Read> {
    header: npyz::NpyHeader,
    reader: zip::read::ZipFile<'a, R>,
    /// Bytes of the member's data (after its `.npy` header), from the ZIP directory's size
    /// (checked against the bytes the archive holds).
    data: u64,
}

impl<R: Read> Member<'_, R> {
    fn dtype(&self) -> npyz::DType {
        self.header.dtype()
    }
    fn shape(&self) -> &[u64] {
        self.header.shape()
    }
}

/// Why an archive member cannot be read, with the hint on compressed archives.
fn unreadable(path: &Path, key: &str, e: impl std::fmt::Display) -> crate::error::ProblemError {
    perr(
        path,
        format!("array '{key}'"),
        format!(
            "cannot be read: {e} (cpbench reads uncompressed archives: numpy.savez, or \
             scipy.sparse.save_npz(..., compressed=False), not savez_compressed)"
        ),
    )
}

/// Member `key` (`key.npy`) of the archive, header parsed.
fn member<'a, R: Read + Seek>(
    path: &Path,
    zip: &'a mut zip::ZipArchive<R>,
    key: &str,
) -> Result<Member<'a, R>> {
    let name = format!("{key}.npy");
    // where the members' data end: a member's bytes lie between its local header and here,
    // whatever the directory claims
    let cd_start = zip.central_directory_start();
    let mut f = zip.by_name(&name).map_err(|e| match e {
        zip::result::ZipError::FileNotFound => perr(
            path,
            format!("array '{key}'"),
            "missing (an instance .npz holds format, shape, indptr, indices, data, r and \
             instance; see docs/formats.md)",
        ),
        e => unreadable(path, key, e),
    })?;
    if f.compression() != zip::CompressionMethod::Stored {
        return Err(unreadable(
            path,
            key,
            format!("the member is compressed ({})", f.compression()),
        ));
    }
    // the size the ZIP directory claims, checked against the bytes the archive really holds
    // for the member, before any allocation is sized by it
    let size = f.size();
    let present = cd_start.saturating_sub(f.header_start());
    if size > present {
        return Err(perr(
            path,
            format!("array '{key}'"),
            format!(
                "the ZIP directory claims {size} bytes for {name}, but the archive holds at \
                 most {present} bytes there (a damaged or forged archive)"
            ),
        ));
    }
    // the .npy header's own length field is checked against the member's bytes before npyz
    // allocates for it: a forged 3.6 GB header length was allocated (found by fuzzing)
    let not_npy = |e: String| {
        perr(
            path,
            format!("array '{key}'"),
            format!("not a .npy array: {e}"),
        )
    };
    let mut prefix = [0u8; 12];
    f.read_exact(&mut prefix[..8])
        .map_err(|e| not_npy(e.to_string()))?;
    let (len_bytes, header_len) = match prefix[6] {
        1 => {
            f.read_exact(&mut prefix[8..10])
                .map_err(|e| not_npy(e.to_string()))?;
            (2, u64::from(u16::from_le_bytes([prefix[8], prefix[9]])))
        }
        _ => {
            f.read_exact(&mut prefix[8..12])
                .map_err(|e| not_npy(e.to_string()))?;
            (
                4,
                u64::from(u32::from_le_bytes([
                    prefix[8], prefix[9], prefix[10], prefix[11],
                ])),
            )
        }
    };
    let head = 8 + len_bytes;
    if head as u64 + header_len > size {
        return Err(not_npy(format!(
            "its header claims {header_len} bytes, but the member holds {size} bytes in all"
        )));
    }
    let mut counted = Counted {
        inner: &mut f,
        bytes: head as u64,
    };
    let mut chained = std::io::Read::chain(&prefix[..head], &mut counted);
    let header = npyz::NpyHeader::from_reader(&mut chained).map_err(|e| {
        perr(
            path,
            format!("array '{key}'"),
            format!("not a .npy array: {e}"),
        )
    })?;
    let data = size.saturating_sub(counted.bytes);
    Ok(Member {
        header,
        reader: f,
        data,
    })
}

/// A reader that counts the bytes read through it (the `.npy` header's length).
struct Counted<'a, R: Read> {
    inner: &'a mut R,
    bytes: u64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.bytes += k as u64;
        Ok(k)
    }
}

/// Element types read straight from the archive's bytes when the member's dtype is theirs in
/// little-endian order (`<f8`, `<i4`, `<i8`): one copy, no per-element decoding.
trait Raw: npyz::Deserialize + bytemuck::Pod {
    /// The dtype's kind.
    const KIND: npyz::TypeChar;
}
impl Raw for f64 {
    const KIND: npyz::TypeChar = npyz::TypeChar::Float;
}
impl Raw for i32 {
    const KIND: npyz::TypeChar = npyz::TypeChar::Int;
}
impl Raw for i64 {
    const KIND: npyz::TypeChar = npyz::TypeChar::Int;
}

impl Raw for u8 {
    const KIND: npyz::TypeChar = npyz::TypeChar::Uint;
}

/// Check that `m` is 1-D and that the length its header declares fits in the member's bytes
/// (before anything is allocated for it).
fn check_1d(path: &Path, key: &str, m: &Member<'_, impl Read>) -> Result<()> {
    check_dims(path, key, m, 1)
}

/// [`check_1d`] for arrays of at most `max_dims` dimensions.
fn check_dims(path: &Path, key: &str, m: &Member<'_, impl Read>, max_dims: usize) -> Result<()> {
    if m.shape().len() > max_dims {
        return Err(perr(
            path,
            format!("array '{key}'"),
            format!(
                "expected an array of at most {max_dims} dimension(s), found shape {}",
                shape_name(m.shape())
            ),
        ));
    }
    let dtype = m.dtype();
    let item = match &dtype {
        npyz::DType::Plain(t) => t.num_bytes().unwrap_or(usize::MAX) as u64,
        _ => 1,
    };
    let len = m.header.len();
    if len.checked_mul(item).is_none_or(|b| b > m.data) {
        return Err(perr(
            path,
            format!("array '{key}'"),
            format!(
                "the .npy header declares {len} values of dtype {} ({} bytes), but the member \
                 holds {} bytes of data (a truncated or damaged member)",
                dtype_name(&dtype),
                len.saturating_mul(item),
                m.data
            ),
        ));
    }
    Ok(())
}

/// A 1-D member as `Vec<T>` for any `T` npyz decodes (byte strings included), value by
/// value.
fn read_any<T: npyz::Deserialize>(
    path: &Path,
    key: &str,
    m: Member<'_, impl Read>,
) -> Result<Vec<T>> {
    check_1d(path, key, &m)?;
    let dtype = m.dtype();
    npyz::NpyFile::with_header(m.header, m.reader)
        .into_vec::<T>()
        .map_err(|e| {
            perr(
                path,
                format!("array '{key}'"),
                format!(
                    "dtype {} does not match what cpbench expects here: {e}",
                    dtype_name(&dtype)
                ),
            )
        })
}

/// A 1-D member as `Vec<T>`, converting from any dtype npyz maps to `T` (big endian
/// included, [`read_any`]); little-endian data of `T`'s own dtype is read in one copy
/// ([`Raw`]).
fn read_vec<T: Raw>(path: &Path, key: &str, m: Member<'_, impl Read>) -> Result<Vec<T>> {
    check_1d(path, key, &m)?;
    let size = std::mem::size_of::<T>() as u64;
    let native = cfg!(target_endian = "little")
        && matches!(&m.dtype(), npyz::DType::Plain(t) if t.type_char() == T::KIND
            && t.size_field() == size
            && (t.endianness() == npyz::Endianness::Little
                || (size == 1 && t.endianness() == npyz::Endianness::Irrelevant)));
    if !native {
        return read_any(path, key, m);
    }
    let len = m.header.len() as usize;
    let mut v = crate::memory::try_with_capacity(len, &format!("array '{key}'"))
        .map_err(|e| e.in_file(path))?;
    v.resize(len, T::zeroed());
    let mut reader = m.reader;
    reader
        .read_exact(bytemuck::cast_slice_mut(&mut v))
        .map_err(|e| unreadable(path, key, e))?;
    Ok(v)
}

/// A 1-D integer array (`int32` or `int64`, little or big endian), as non-negative `usize`.
fn ints(path: &Path, key: &str, m: Member<'_, impl Read>) -> Result<Vec<usize>> {
    fn to_usize<T: Copy + std::fmt::Display + Sync>(
        path: &Path,
        key: &str,
        v: &[T],
    ) -> Result<Vec<usize>>
    where
        usize: TryFrom<T>,
    {
        use rayon::prelude::*;
        // parallel in chunks: on large arrays the time goes to first-touch page faults
        const CHUNK: usize = 1 << 16;
        let mut out = vec![0usize; v.len()];
        let ok = out
            .par_chunks_mut(CHUNK)
            .zip(v.par_chunks(CHUNK))
            .all(|(o, x)| {
                o.iter_mut().zip(x).all(|(o, &x)| match usize::try_from(x) {
                    Ok(u) => {
                        *o = u;
                        true
                    }
                    Err(_) => false,
                })
            });
        if ok {
            return Ok(out);
        }
        let k = v
            .iter()
            .position(|&x| usize::try_from(x).is_err())
            .unwrap_or_default();
        Err(perr(
            path,
            format!("array '{key}', index {k}"),
            format!("negative value {}", v[k]),
        ))
    }
    // one conversion pass from the stored width, no intermediate widened copy
    if matches!(m.dtype(), npyz::DType::Plain(t) if t.size_field() == 8) {
        to_usize(path, key, &read_vec::<i64>(path, key, m)?)
    } else {
        to_usize(path, key, &read_vec::<i32>(path, key, m)?)
    }
}

/// A dense `float64`-convertible array of at most 2 dimensions, its shape, and whether it is
/// stored in Fortran (column-major) order.
fn read_dense(
    path: &Path,
    key: &str,
    m: Member<'_, impl Read>,
) -> Result<(Vec<f64>, Vec<u64>, bool)> {
    check_dims(path, key, &m, 2)?;
    let shape = m.shape().to_vec();
    let fortran = m.header.order() == npyz::Order::Fortran;
    let dtype = m.dtype();
    let v = npyz::NpyFile::with_header(m.header, m.reader)
        .into_vec::<f64>()
        .map_err(|e| {
            perr(
                path,
                format!("array '{key}'"),
                format!(
                    "expected float64 values, found dtype {}: {e}",
                    dtype_name(&dtype)
                ),
            )
        })?;
    Ok((v, shape, fortran))
}

/// Whether the archive is one of ContactBench's problem files (members `G`, `g`, `mus` and no
/// cpbench `instance` header): [`read_contactbench_from`] reads it.
pub fn is_contactbench<R: Read + Seek>(zip: &zip::ZipArchive<R>) -> bool {
    let has = |k: &str| zip.index_for_name(&format!("{k}.npy")).is_some();
    has("G") && has("g") && has("mus") && !has("instance")
}

/// A contact problem of ContactBench (Le Lidec et al. 2024; `Simple-Robotics/ContactBench`,
/// `tests/python/data/*.npz`): `G` (`3 nc x 3 nc` Delassus matrix), `g` (free velocity, `(3 nc,)`
/// or `(3 nc, 1)`), `mus` (`(nc,)`), each contact's rows **tangential, tangential, normal**
/// (`lam0`, a start point, is not read). Returned as the friction problem `u = W r + q` in
/// cpbench's order, normal first: row `3c` of `W`, `q` is ContactBench's row `3c + 2`, rows
/// `3c + 1`, `3c + 2` its rows `3c`, `3c + 1` (the same permutation of rows and columns, so a
/// symmetric `G` stays symmetric and the cones are the same). `None` when the archive is not
/// ContactBench's ([`is_contactbench`]). Errors name the file and the member: shapes that
/// disagree (`G` not square, `n` not `3 len(mus)`, `g` of another length), values that are not
/// numbers.
pub fn read_contactbench_from<R: Read + Seek>(
    reader: R,
    path: &Path,
) -> Result<Option<super::FrictionProblem>> {
    let Ok(mut zip) = zip::ZipArchive::new(reader) else {
        return Ok(None);
    };
    if !is_contactbench(&zip) {
        return Ok(None);
    }
    let (g_mat, shape, fortran) = read_dense(path, "G", member(path, &mut zip, "G")?)?;
    let n = match shape[..] {
        [a, b] if a == b => a as usize,
        _ => {
            return Err(perr(
                path,
                "array 'G'",
                format!(
                    "expected a square (n, n) matrix, found shape {}",
                    shape_name(&shape)
                ),
            ))
        }
    };
    let (q, qshape, _) = read_dense(path, "g", member(path, &mut zip, "g")?)?;
    let mus: Vec<f64> = read_dense(path, "mus", member(path, &mut zip, "mus")?)?.0;
    if n != 3 * mus.len() {
        return Err(perr(
            path,
            "array 'G'",
            format!(
                "G is {n} x {n} but mus has {} contacts: expected n = 3 x {} (3 rows per contact)",
                mus.len(),
                mus.len()
            ),
        ));
    }
    if q.len() != n || !matches!(qshape[..], [_] | [_, 1]) {
        return Err(perr(
            path,
            "array 'g'",
            format!(
                "expected shape ({n},) or ({n}, 1), found {}",
                shape_name(&qshape)
            ),
        ));
    }
    // ours <- ContactBench's: normal first
    let old = |i: usize| 3 * (i / 3) + [2, 0, 1][i % 3];
    let at = |i: usize, j: usize| {
        if fortran {
            g_mat[i + j * n]
        } else {
            g_mat[i * n + j]
        }
    };
    let mut dense = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            dense[i + j * n] = at(old(i), old(j));
        }
    }
    let w = CscMatrix::from_dense_col_major(n, n, &dense).map_err(|e| e.in_file(path))?;
    Ok(Some(super::FrictionProblem {
        w,
        q: (0..n).map(|i| q[old(i)]).collect(),
        mu: mus,
        spacedim: 3,
    }))
}
