//! MatrixMarket exchange format (NIST; <https://math.nist.gov/MatrixMarket/formats.html>).
//!
//! Written here:
//!
//! - sparse matrices as `%%MatrixMarket matrix coordinate real symmetric` (lower triangle,
//!   `i >= j`) or `... coordinate real general` (all stored entries), 1-based indices;
//! - vectors as `%%MatrixMarket matrix array real general`, `n` rows and 1 column.
//!
//! Values are written with 17 significant digits (`{:.16e}`), which is enough to round-trip
//! every `f64` (subnormals and `-0.0` included); Rust's float parser is correctly rounded, so
//! `read(write(x))` reproduces `x` bit for bit. Explicit zeros stored in a matrix are written,
//! so the sparsity structure round-trips as well.
//!
//! Read here: `coordinate` with field `real` or `integer` and symmetry `general` or
//! `symmetric` (one triangle stored, lower or upper, not both; it is expanded to full storage),
//! `array real general` (column-major) and `array real symmetric` (the column-major lower
//! triangle, as SciPy's `mmwrite` writes a dense symmetric matrix). A vector may also be a
//! one-column (or one-row) `coordinate general` matrix. `%` comment lines and blank lines are skipped. Every
//! error is a [`ProblemError::Parse`] naming the file and the 1-based line.

use super::{perr, plausible_dim};
use crate::error::{ProblemError, Result};
use crate::linalg::CscMatrix;
use std::io::Write;
use std::path::Path;

/// Write the lower triangle (`i >= j`) of the square matrix `a`, which must be symmetric in
/// structure and values (not checked here: the upper triangle is simply not written), as
/// `coordinate real symmetric`. 1-based indices, values with `{:.16e}`.
pub fn write_symmetric_lower(out: &mut impl Write, a: &CscMatrix) -> std::io::Result<()> {
    let mut nnz = 0usize;
    for j in 0..a.ncols() {
        nnz += a.col(j).0.iter().filter(|&&i| i >= j).count();
    }
    writeln!(out, "%%MatrixMarket matrix coordinate real symmetric")?;
    writeln!(
        out,
        "% written by cpbench (lower triangle, 17 significant digits)"
    )?;
    writeln!(out, "{} {} {}", a.nrows(), a.ncols(), nnz)?;
    for j in 0..a.ncols() {
        let (rows, vals) = a.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            if i >= j {
                writeln!(out, "{} {} {:.16e}", i + 1, j + 1, v)?;
            }
        }
    }
    Ok(())
}

/// Write every stored entry of `a` (any shape) as `coordinate real general`, column by column.
pub fn write_general(out: &mut impl Write, a: &CscMatrix) -> std::io::Result<()> {
    writeln!(out, "%%MatrixMarket matrix coordinate real general")?;
    writeln!(out, "% written by cpbench (17 significant digits)")?;
    writeln!(out, "{} {} {}", a.nrows(), a.ncols(), a.nnz())?;
    for j in 0..a.ncols() {
        let (rows, vals) = a.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            writeln!(out, "{} {} {:.16e}", i + 1, j + 1, v)?;
        }
    }
    Ok(())
}

/// Write a vector of length `n` as `array real general` with `n` rows and 1 column.
pub fn write_vector(out: &mut impl Write, v: &[f64]) -> std::io::Result<()> {
    writeln!(out, "%%MatrixMarket matrix array real general")?;
    writeln!(out, "% written by cpbench (17 significant digits)")?;
    writeln!(out, "{} 1", v.len())?;
    for x in v {
        writeln!(out, "{x:.16e}")?;
    }
    Ok(())
}

/// True when every stored entry `(i, j)` of the square matrix `a` has a stored partner
/// `(j, i)` with the same value bits (so that [`write_symmetric_lower`] loses nothing).
pub fn is_exactly_symmetric(a: &CscMatrix) -> bool {
    if a.nrows() != a.ncols() {
        return false;
    }
    for j in 0..a.ncols() {
        let (rows, vals) = a.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            let (ri, vi) = a.col(i);
            match ri.binary_search(&j) {
                Ok(k) if vi[k].to_bits() == v.to_bits() => {}
                _ => return false,
            }
        }
    }
    true
}

/// Layout of a MatrixMarket file, from its banner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    CoordinateGeneral,
    CoordinateSymmetric,
    ArrayGeneral,
    /// Square, column-major lower triangle (`n (n + 1) / 2` values), as SciPy's `mmwrite`
    /// writes a dense symmetric matrix.
    ArraySymmetric,
}

/// Lines of the file with their 1-based numbers, comments and blank lines removed.
struct Lines<'a> {
    path: &'a Path,
    it: std::iter::Enumerate<std::str::Lines<'a>>,
    last: usize,
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Option<(usize, &'a str)> {
        for (k, l) in self.it.by_ref() {
            self.last = k + 1;
            let t = l.trim();
            if t.is_empty() || t.starts_with('%') {
                continue;
            }
            return Some((k + 1, t));
        }
        None
    }

    fn eof(&self, what: &str) -> ProblemError {
        perr(
            self.path,
            format!("line {} (end of file)", self.last),
            format!("unexpected end of file: {what} missing"),
        )
    }
}

fn parse_header<'a>(path: &'a Path, bytes: &'a [u8]) -> Result<(Layout, Lines<'a>)> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        perr(
            path,
            format!("line {line}"),
            "not a text file (invalid UTF-8)",
        )
    })?;
    let mut it = text.lines().enumerate();
    let banner = it.next().map(|(_, l)| l).unwrap_or("");
    let words: Vec<String> = banner
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    if words.len() != 5 || words[0] != "%%matrixmarket" || words[1] != "matrix" {
        return Err(perr(
            path,
            "line 1",
            "not a MatrixMarket file: the first line must be \
             `%%MatrixMarket matrix <format> <field> <symmetry>`",
        ));
    }
    if !matches!(words[3].as_str(), "real" | "double" | "integer") {
        return Err(perr(
            path,
            "line 1",
            format!(
                "unsupported MatrixMarket field '{}' (only real or integer)",
                words[3]
            ),
        ));
    }
    let layout = match (words[2].as_str(), words[4].as_str()) {
        ("coordinate", "general") => Layout::CoordinateGeneral,
        ("coordinate", "symmetric") => Layout::CoordinateSymmetric,
        ("array", "general") => Layout::ArrayGeneral,
        ("array", "symmetric") => Layout::ArraySymmetric,
        (f, s) => {
            return Err(perr(
                path,
                "line 1",
                format!(
                    "unsupported MatrixMarket layout '{f} {s}' (supported: coordinate general, \
                     coordinate symmetric, array general, array symmetric)"
                ),
            ))
        }
    };
    Ok((layout, Lines { path, it, last: 1 }))
}

fn parse_usizes<const K: usize>(
    path: &Path,
    line: usize,
    text: &str,
    what: &str,
) -> Result<[usize; K]> {
    let toks: Vec<&str> = text.split_whitespace().collect();
    let bad = || {
        perr(
            path,
            format!("line {line}"),
            format!("{what}: expected {K} non-negative integers, found '{text}'"),
        )
    };
    if toks.len() != K {
        return Err(bad());
    }
    let mut out = [0usize; K];
    for (o, t) in out.iter_mut().zip(&toks) {
        *o = t.parse().map_err(|_| bad())?;
    }
    Ok(out)
}

fn parse_value(path: &Path, line: usize, tok: &str) -> Result<f64> {
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(v) => Err(perr(
            path,
            format!("line {line}"),
            format!("non-finite value {v}"),
        )),
        Err(_) => Err(perr(
            path,
            format!("line {line}"),
            format!("expected a real number, found '{tok}'"),
        )),
    }
}

/// Read a sparse matrix from the MatrixMarket text `bytes` of `path`.
///
/// `coordinate general`: as stored; `coordinate symmetric`: the stored triangle is
/// mirrored into full storage; `array general`: column-major values, exact zeros not stored;
/// `array symmetric`: the column-major lower triangle, mirrored, exact zeros not stored.
/// Duplicate coordinate entries are summed, as SciPy's `mmread` does (their count is returned
/// by [`read_matrix_counted`]). Errors ([`ProblemError::Parse`] with the line):
/// bad banner or size line, an index outside `1..=nrows` / `1..=ncols`, an entry above the
/// diagonal of a symmetric file that also stores entries below it (or the reverse), a malformed
/// or non-finite value, a wrong number of entries.
pub fn read_matrix(path: &Path, bytes: &[u8]) -> Result<CscMatrix> {
    read_matrix_counted(path, bytes).map(|(m, _)| m)
}

/// [`read_matrix`], also returning the number of duplicate coordinate entries that were
/// summed into an earlier entry of the same position (0 for `array` files; for a symmetric
/// file, counted on the stored lower triangle).
pub fn read_matrix_counted(path: &Path, bytes: &[u8]) -> Result<(CscMatrix, usize)> {
    let (layout, mut lines) = parse_header(path, bytes)?;
    if layout == Layout::ArrayGeneral {
        let (nrows, ncols, vals) = read_array_body(&mut lines, false, bytes.len())?;
        return CscMatrix::from_dense_col_major(nrows, ncols, &vals)
            .map(|m| (m, 0))
            .map_err(|e| e.in_file(path));
    }
    if layout == Layout::ArraySymmetric {
        let (n, _, vals) = read_array_body(&mut lines, true, bytes.len())?;
        let mut trip = Vec::with_capacity(2 * vals.len());
        let mut k = 0;
        for j in 0..n {
            for i in j..n {
                let v = vals[k];
                k += 1;
                if v != 0.0 {
                    trip.push((i, j, v));
                    if i != j {
                        trip.push((j, i, v));
                    }
                }
            }
        }
        return CscMatrix::from_triplets(n, n, &trip)
            .map(|m| (m, 0))
            .map_err(|e| e.in_file(path));
    }
    let (sl, size) = lines
        .next()
        .ok_or_else(|| lines.eof("size line `rows cols entries`"))?;
    let [nrows, ncols, nnz] = parse_usizes::<3>(path, sl, size, "size line `rows cols entries`")?;
    if !plausible_dim(nrows, bytes.len()) || !plausible_dim(ncols, bytes.len()) {
        return Err(perr(
            path,
            format!("line {sl}"),
            format!(
                "implausible size {nrows} x {ncols} for a file of {} bytes",
                bytes.len()
            ),
        ));
    }
    let sym = layout == Layout::CoordinateSymmetric;
    if sym && nrows != ncols {
        return Err(perr(
            path,
            format!("line {sl}"),
            format!("a symmetric matrix must be square, found {nrows} x {ncols}"),
        ));
    }
    // Bounded by the file size, so a lying header cannot make us allocate much.
    let mut trip = Vec::with_capacity(nnz.min(bytes.len() / 6 + 1) * if sym { 2 } else { 1 });
    // which triangle a symmetric file stores (true: upper), and the line that showed it
    let mut side: Option<(bool, usize)> = None;
    for k in 0..nnz {
        let (l, text) = lines
            .next()
            .ok_or_else(|| lines.eof(&format!("entry {} of {nnz}", k + 1)))?;
        let toks: Vec<&str> = text.split_whitespace().collect();
        if toks.len() != 3 {
            return Err(perr(
                path,
                format!("line {l}"),
                format!("expected `row column value`, found '{text}'"),
            ));
        }
        let idx = |t: &str, what: &str, max: usize| -> Result<usize> {
            match t.parse::<usize>() {
                Ok(v) if (1..=max).contains(&v) => Ok(v - 1),
                _ => Err(perr(
                    path,
                    format!("line {l}"),
                    format!(
                        "{what} index '{t}' out of range: the matrix is {nrows} x {ncols} \
                         (indices are 1-based)"
                    ),
                )),
            }
        };
        let i = idx(toks[0], "row", nrows)?;
        let j = idx(toks[1], "column", ncols)?;
        let v = parse_value(path, l, toks[2])?;
        if sym && i != j {
            let upper = i < j;
            match side {
                None => side = Some((upper, l)),
                Some((u, first)) if u != upper => {
                    return Err(perr(
                        path,
                        format!("line {l}"),
                        format!(
                            "entry ({}, {}) is {} the diagonal but the entry on line {first} is \
                             {}: a symmetric file stores one triangle only",
                            i + 1,
                            j + 1,
                            if upper { "above" } else { "below" },
                            if u { "above" } else { "below" },
                        ),
                    ));
                }
                Some(_) => {}
            }
            trip.push((j, i, v));
        }
        trip.push((i, j, v));
    }
    if let Some((l, text)) = lines.next() {
        return Err(perr(
            path,
            format!("line {l}"),
            format!("more entries than the {nnz} declared: '{text}'"),
        ));
    }
    let mut stored: Vec<(usize, usize)> = trip
        .iter()
        .filter(|(i, j, _)| !sym || i >= j)
        .map(|&(i, j, _)| (i, j))
        .collect();
    let count = stored.len();
    stored.sort_unstable();
    stored.dedup();
    let duplicates = count - stored.len();
    CscMatrix::from_triplets(nrows, ncols, &trip)
        .map(|m| (m, duplicates))
        .map_err(|e| e.in_file(path))
}

/// Bytes read from the start of a MatrixMarket file to check its declared sizes.
const HEAD_BYTES: u64 = 64 * 1024;

/// Read the MatrixMarket file `path` after checking, from its first bytes only, that it is a
/// regular file and that its declared size can fit in the bytes after the size line:
/// `coordinate` entries take at least 6 bytes (`1 1 1` and a line break), `array` values at
/// least 2. So a corrupt header or a device
/// (`/dev/zero`) is refused at once instead of being read whole.
///
/// Errors: [`ProblemError::Io`], [`ProblemError::Parse`] for a file that is not a regular file,
/// a bad banner or size line, or a declared size larger than the file can hold.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| super::io_err(path, e))?;
    if !meta.is_file() {
        return Err(super::not_regular(path));
    }
    let head = super::read_head(path, HEAD_BYTES)?;
    let len = meta.len();
    // banner errors (not text, not MatrixMarket) are found in the head, at once
    let (layout, mut lines) = parse_header(path, valid_utf8_prefix(&head))?;
    {
        if let Some((sl, size)) = lines.next() {
            let toks: Vec<u64> = size
                .split_whitespace()
                .filter_map(|t| t.parse().ok())
                .collect();
            let (entries, per) = match (layout, toks.as_slice()) {
                (Layout::ArrayGeneral, [r, c]) => (r.saturating_mul(*c), 2u64),
                (Layout::ArraySymmetric, [r, _]) => {
                    (r.saturating_mul(r.saturating_add(1)) / 2, 2u64)
                }
                (Layout::CoordinateGeneral | Layout::CoordinateSymmetric, [_, _, nnz]) => {
                    (*nnz, 6u64)
                }
                _ => (0, 0),
            };
            let need = entries.saturating_mul(per).saturating_sub(1);
            // bytes after the size line
            let body_start: usize = head
                .split(|&b| b == b'\n')
                .take(sl)
                .map(|l| l.len() + 1)
                .sum();
            let body = len.saturating_sub(body_start as u64);
            if need > body {
                return Err(perr(
                    path,
                    format!("line {sl}"),
                    format!(
                        "the size line '{size}' declares {entries} entries, which need at least \
                         {need} bytes, but {body} bytes follow the size line (truncated file or \
                         corrupt header)"
                    ),
                ));
            }
        }
    }
    std::fs::read(path).map_err(|e| super::io_err(path, e))
}

/// `bytes` without a UTF-8 character cut at its end (a head cut inside a character stays
/// readable; invalid bytes elsewhere are kept, for the parser to report).
fn valid_utf8_prefix(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

/// The size line and values of an `array` file: all `rows * cols` values, or for `symmetric`
/// the `n (n + 1) / 2` values of the lower triangle (the array must be square).
fn read_array_body(
    lines: &mut Lines<'_>,
    symmetric: bool,
    file_len: usize,
) -> Result<(usize, usize, Vec<f64>)> {
    let path = lines.path;
    let (sl, size) = lines
        .next()
        .ok_or_else(|| lines.eof("size line `rows cols`"))?;
    let [nrows, ncols] = parse_usizes::<2>(path, sl, size, "size line `rows cols`")?;
    // a dimension is allocated for (column pointers) even when it holds no value: `0 x
    // 620292882` declares no number and asked for 5 GB (found by fuzzing, issue 30)
    if !plausible_dim(nrows, file_len) || !plausible_dim(ncols, file_len) {
        return Err(perr(
            path,
            format!("line {sl}"),
            format!("implausible size {nrows} x {ncols} for a file of {file_len} bytes"),
        ));
    }
    if symmetric && nrows != ncols {
        return Err(perr(
            path,
            format!("line {sl}"),
            format!("a symmetric matrix must be square, found {nrows} x {ncols}"),
        ));
    }
    let len = if symmetric {
        nrows
            .checked_add(1)
            .and_then(|m| m.checked_mul(nrows))
            .map(|m| m / 2)
    } else {
        nrows.checked_mul(ncols)
    }
    .ok_or_else(|| perr(path, format!("line {sl}"), "array size overflows"))?;
    let mut vals = Vec::with_capacity(len.min(1 << 16));
    while vals.len() < len {
        let (l, text) = lines
            .next()
            .ok_or_else(|| lines.eof(&format!("value {} of {len}", vals.len() + 1)))?;
        for tok in text.split_whitespace() {
            if vals.len() == len {
                return Err(perr(
                    path,
                    format!("line {l}"),
                    format!("more values than the {len} declared"),
                ));
            }
            vals.push(parse_value(path, l, tok)?);
        }
    }
    if let Some((l, text)) = lines.next() {
        return Err(perr(
            path,
            format!("line {l}"),
            format!("more values than the {len} declared: '{text}'"),
        ));
    }
    Ok((nrows, ncols, vals))
}

/// Read a vector from the MatrixMarket text `bytes` of `path`: `array real general` with one
/// column (or one row), or a `coordinate general` matrix with one column (or one row; absent
/// entries are 0, duplicates summed). Errors as [`read_matrix`], plus a shape that is not a
/// vector.
pub fn read_vector(path: &Path, bytes: &[u8]) -> Result<Vec<f64>> {
    let (layout, mut lines) = parse_header(path, bytes)?;
    let not_vector = |nrows: usize, ncols: usize| {
        perr(
            path,
            "line 2",
            format!("expected a vector (n x 1), found a {nrows} x {ncols} matrix"),
        )
    };
    match layout {
        Layout::ArrayGeneral => {
            let (nrows, ncols, vals) = read_array_body(&mut lines, false, bytes.len())?;
            if ncols != 1 && nrows != 1 {
                return Err(not_vector(nrows, ncols));
            }
            Ok(vals)
        }
        Layout::CoordinateGeneral => {
            let m = read_matrix(path, bytes)?;
            let (nrows, ncols) = (m.nrows(), m.ncols());
            if ncols != 1 && nrows != 1 {
                return Err(not_vector(nrows, ncols));
            }
            let mut v = vec![0.0; nrows.max(ncols)];
            for j in 0..ncols {
                let (rows, vals) = m.col(j);
                for (&i, &x) in rows.iter().zip(vals) {
                    v[i.max(j)] = x;
                }
            }
            Ok(v)
        }
        _ => Err(perr(
            path,
            "line 1",
            "a vector must be stored as `%%MatrixMarket matrix array real general` (n rows, 1 \
             column) or `coordinate real general`",
        )),
    }
}
