//! Siconos text problem files (`.dat`): friction-contact problems (fc3d) and LCPs.
//!
//! The files are written by Siconos numerics (`frictionContact_printInFile`,
//! `linearComplementarity_printInFile`, `NM_write_in_file`) and hold whitespace-separated
//! numbers; line breaks carry no meaning. They are read token by token, and every error names
//! the line and the token (1-based index in the file) where it was found.
//!
//! Layout (`tests/fixtures/README.md`):
//!
//! - fc3d / fc2d: `d` (space dimension: 3, or 2 for planar problems: one normal and one tangent
//!   per contact), `nc` (number of contacts), a NumericsMatrix of size `d nc x d nc` (`W`), `q`
//!   (`d nc` numbers), `mu` (`nc` numbers).
//!   Anything after `mu` (some files end with one more integer) is ignored.
//! - LCP: `n`, a NumericsMatrix of size `n x n` (`M`), `q` (`n` numbers). Anything after `q`
//!   (several files end with free text) is ignored.
//! - NumericsMatrix: storage type, `size0` (rows), `size1` (columns), then
//!   - `0` dense: `size0 size1` once more, then the `size0 * size1` values **column-major**
//!     (each text line of a square matrix is a column: Siconos writes and reads `matrix0`
//!     in order; for `Rover4396.dat`, `W[1,0]` is the second number of the first line);
//!   - `1` sparse block (SBM): number of blocks, number of block rows, number of block columns,
//!     the cumulative row sizes of the block rows, the cumulative column sizes of the block
//!     columns, `filled1` (= block rows + 1), `filled2` (= number of blocks), the block-row
//!     pointers (`filled1` numbers), the block-column index of each block (`filled2` numbers),
//!     then for each block in order its index `0, 1, ...` followed by its values, column-major;
//!   - `2` sparse: the origin (`1` triplet, `2` CSC), then CSparse's text print (a banner
//!     line, `[triplet:] m-by-n, nzmax: .. nnz: ..[, 1-norm: ..]`, then `i j : x` lines, or per
//!     column `col j : locations a to b` and `i : x` lines; values printed with `%g`).
//!
//! The NumericsMatrix reader is shared with the global reader ([`super::siconos_global`]),
//! which reads rectangular matrices (`H`).
//!
//! Numbers are parsed with Rust's correctly rounded `f64` parser (the same value as C's
//! `strtod` for the 25-digit values of these files); NaN and infinities are rejected.

use super::{perr, FrictionProblem, Notes};
use crate::error::Result;
use crate::io::Format;
use crate::linalg::CscMatrix;
use std::path::Path;

/// A Siconos fc3d (or fc2d) file as read: the raw problem and reader notes for the provenance.
#[derive(Clone, Debug)]
pub struct Fc3dFile {
    /// `u = W r + q` as stored (`W` not symmetrised), spacedim `d` (3, or 2 for fc2d files).
    pub problem: FrictionProblem,
    /// Reader notes (`matrix_storage`, `ignored_trailing_tokens`).
    pub notes: Notes,
}

/// A Siconos LCP file as read: `w = M z + q`, `0 <= z _|_ w >= 0`.
#[derive(Clone, Debug)]
pub struct LcpFile {
    /// `M` (`n x n`, as stored, possibly non-symmetric).
    pub m: CscMatrix,
    /// `q` (length `n`).
    pub q: Vec<f64>,
    /// Reader notes (`matrix_storage`, `ignored_trailing_tokens`).
    pub notes: Notes,
}

/// Classify the text by its first four tokens (see [`crate::io::detect_format_bytes`]):
/// `d nc type size0` with `d in {2, 3}`, `type in {0, 1, 2}`, `size0 = d nc` is
/// [`Format::SiconosFc3d`]; `n type size0 size1` with `type in {0, 1, 2}`, `size0 = size1 = n`
/// is [`Format::SiconosLcp`] (checked first; the two overlap only for `2 1 2 2`). `None`
/// otherwise.
pub fn detect(bytes: &[u8]) -> Option<Format> {
    let mut it = bytes
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| {
            std::str::from_utf8(t)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
        });
    let t0 = it.next()??;
    let t1 = it.next()??;
    let t2 = it.next()??;
    let t3 = it.next()??;
    if t1 <= 2 && t2 == t0 && t3 == t0 {
        return Some(Format::SiconosLcp);
    }
    if (t0 == 2 || t0 == 3) && t2 <= 2 && Some(t3) == t0.checked_mul(t1) {
        return Some(Format::SiconosFc3d);
    }
    None
}

/// The first (up to) 5 tokens of `bytes` as integers (`None` for a token that is not one).
fn header_ints(t: &Tokens<'_>) -> Vec<Option<i128>> {
    t.toks
        .iter()
        .take(5)
        .map(|k| {
            std::str::from_utf8(k.text)
                .ok()
                .and_then(|s| s.parse::<i128>().ok())
        })
        .collect()
}

/// Which header a text that [`detect`] refused was meant to have, from the shapes of its first
/// five integers: `n type size0 size1` with `size0 = size1` (LCP) or `d nc type size0 size1`
/// with `size0 = size1` (fc3d); `None` when the text does not look like a Siconos file.
fn intended(v: &[Option<i128>]) -> Option<Format> {
    let at = |k: usize| v.get(k).copied().flatten();
    let t0 = at(0)?;
    let lcp = at(1).is_some_and(|s| (0..=9).contains(&s)) && at(2).is_some() && at(2) == at(3);
    let fc3d = at(3).is_some() && at(3) == at(4);
    match (lcp, fc3d) {
        (true, true) if t0 == 2 || t0 == 3 => Some(Format::SiconosFc3d),
        (true, _) => Some(Format::SiconosLcp),
        (false, true) => Some(Format::SiconosFc3d),
        // a header of the right shape whose matrix is not square: `d nc type rows cols`
        // (d = 2 or 3 and a storage type in its place), else `n type rows cols`
        (false, false) => {
            let ints = |k: usize| (0..k).all(|i| at(i).is_some());
            if (t0 == 2 || t0 == 3) && at(2).is_some_and(|s| (0..=2).contains(&s)) && ints(5) {
                Some(Format::SiconosFc3d)
            } else if at(1).is_some_and(|s| (0..=2).contains(&s))
                && ints(4)
                && (at(2) == Some(t0) || at(3) == Some(t0))
            {
                Some(Format::SiconosLcp)
            } else {
                None
            }
        }
    }
}

/// Explain why the text `bytes` of `path` (its first bytes suffice), which [`detect`] did not
/// recognise, is not a readable Siconos file, when it looks like one: a space dimension other
/// than 3, a negative or non-integer contact count or size, a matrix size inconsistent with
/// `3 * contacts` (or `n`), an unknown NumericsMatrix storage type. The error
/// ([`crate::ProblemError::Parse`]) names the file, the line and the token. `None` when the
/// text does not look like a Siconos `.dat` at all or no such defect is found.
pub fn diagnose(path: &Path, bytes: &[u8]) -> Option<crate::ProblemError> {
    let t = Tokens::new(path, bytes);
    let v = header_ints(&t);
    let format = intended(&v)?;
    let at = |k: usize| v.get(k).copied().flatten();
    let text = |k: usize| {
        t.toks
            .get(k)
            .map(|x| short(&String::from_utf8_lossy(x.text)))
            .unwrap_or_default()
    };
    let storage = |k: usize, what: &str| -> Option<crate::ProblemError> {
        match at(k) {
            Some(0..=2) => None,
            _ => Some(t.err_at(
                k,
                format!(
                    "{what}: NumericsMatrix storage type '{}' is not supported (0 dense, 1 \
                     sparse block, 2 sparse)",
                    text(k)
                ),
            )),
        }
    };
    match format {
        Format::SiconosFc3d => {
            let d = at(0)?;
            if d != 3 && d != 2 {
                return Some(t.err_at(
                    0,
                    format!(
                        "space dimension d = {d} is not supported: only 3-D and 2-D friction \
                         problems (d = 3 or 2) can be read"
                    ),
                ));
            }
            let nc = match at(1) {
                Some(nc) if nc >= 0 => nc,
                Some(nc) => {
                    return Some(t.err_at(1, format!("negative number of contacts {nc}")));
                }
                None => {
                    return Some(t.err_at(
                        1,
                        format!(
                            "number of contacts: expected a non-negative integer, found '{}'",
                            text(1)
                        ),
                    ))
                }
            };
            if let Some(e) = storage(2, "W") {
                return Some(e);
            }
            let size = at(3)?;
            let cols = at(4).unwrap_or(size);
            let need = nc.saturating_mul(d);
            if size != need || cols != need {
                return Some(t.err_at(
                    if size != need { 3 } else { 4 },
                    format!(
                        "W is {size} x {cols}, but {nc} contacts in {d}-D need a {} x {} matrix \
                         ({d} * number of contacts): the contact count and the matrix size \
                         disagree",
                        need, need
                    ),
                ));
            }
            None
        }
        _ => {
            let n = at(0)?;
            if n < 0 {
                return Some(t.err_at(0, format!("negative problem size n = {n}")));
            }
            if let Some(e) = storage(1, "M") {
                return Some(e);
            }
            let size = at(2)?;
            let cols = at(3).unwrap_or(size);
            if size != n || cols != n {
                return Some(t.err_at(
                    if size != n { 2 } else { 3 },
                    format!("M is {size} x {cols}, but the header says n = {n} (M is n x n)"),
                ));
            }
            None
        }
    }
}

/// Refuse, before the file is read whole, a Siconos file (detected by [`detect`] from its first
/// bytes `head`) whose header declares more numbers than its `file_len` bytes can hold: every
/// number takes at least 2 bytes (a digit and a separator). An fc3d file needs `3 nc` values
/// of `q` and `nc` of `mu`, plus `(3 nc)^2` matrix values when `W` is dense; an LCP `n` values
/// of `q`, plus `n^2` when `M` is dense. Errors: [`crate::ProblemError::Parse`] at the count
/// token.
pub fn check_declared_size(path: &Path, head: &[u8], file_len: u64) -> Result<()> {
    let t = Tokens::new(path, head);
    let v = header_ints(&t);
    let at = |k: usize| -> u128 { v.get(k).copied().flatten().unwrap_or(0).max(0) as u128 };
    let (numbers, token, what) = match detect(head) {
        Some(Format::SiconosFc3d) => {
            let (nc, n) = (at(1), at(0).saturating_mul(at(1)));
            let dense = if at(2) == 0 { n.saturating_mul(n) } else { 0 };
            (
                dense.saturating_add(n).saturating_add(nc),
                1,
                format!(
                    "{nc} contacts ({n} x {n} {} W, q and mu)",
                    if dense > 0 { "dense" } else { "sparse" }
                ),
            )
        }
        Some(Format::SiconosLcp) => {
            let n = at(0);
            let dense = if at(1) == 0 { n.saturating_mul(n) } else { 0 };
            (
                dense.saturating_add(n),
                0,
                format!(
                    "n = {n} ({n} x {n} {} M and q)",
                    if dense > 0 { "dense" } else { "sparse" }
                ),
            )
        }
        _ => return Ok(()),
    };
    let bytes = numbers.saturating_mul(2).saturating_sub(1);
    if bytes > file_len as u128 {
        return Err(t.err_at(
            token,
            format!(
                "the header declares {what}: at least {numbers} numbers, which need at least \
                 {bytes} bytes, but the file has {file_len} bytes (truncated file or corrupt \
                 header)"
            ),
        ));
    }
    Ok(())
}

/// Read a Siconos friction problem (`d`, `nc`, `W`, `q`, `mu`) from the bytes of `path`: fc3d
/// (`d = 3`) or fc2d (`d = 2`).
///
/// Shapes: `W` is `d nc x d nc`, `q` has `d nc` entries, `mu` has `nc`. Errors
/// ([`crate::ProblemError::Parse`] with line and token): a missing or malformed number, a
/// non-finite value, `d` other than 2 or 3, a matrix size different from `d nc`, an
/// unsupported or inconsistent NumericsMatrix.
pub fn read_fc3d(path: &Path, bytes: &[u8]) -> Result<Fc3dFile> {
    let mut t = Tokens::new(path, bytes);
    let d = t.usize("space dimension d")?;
    if d != 3 && d != 2 {
        return Err(t.err_prev(format!(
            "space dimension d = {d} is not supported: only 3-D and 2-D friction problems \
             (d = 3 or 2) can be read"
        )));
    }
    // q and mu alone need n + nc numbers
    let (nc, n) = t.contacts(d, "the matrix W, q and mu")?;
    let mut notes = Notes::new();
    let w = read_numerics_matrix(&mut t, n, "W", &mut notes)?;
    let q = t.f64_vec(n, "q")?;
    let mu = t.f64_vec(nc, "mu")?;
    let rest = t.remaining();
    if rest > 0 {
        notes.insert("ignored_trailing_tokens".into(), rest.to_string());
    }
    Ok(Fc3dFile {
        problem: FrictionProblem {
            w,
            q,
            mu,
            spacedim: d,
        },
        notes,
    })
}

/// Read a Siconos LCP (`n`, `M`, `q`) from the bytes of `path`. Trailing free text is ignored.
///
/// Shapes: `M` is `n x n`, `q` has `n` entries. Errors as [`read_fc3d`].
pub fn read_lcp(path: &Path, bytes: &[u8]) -> Result<LcpFile> {
    let mut t = Tokens::new(path, bytes);
    let n = t.usize("problem size n")?;
    t.need(n, "the matrix M and q")?;
    let mut notes = Notes::new();
    let m = read_numerics_matrix(&mut t, n, "M", &mut notes)?;
    let q = t.f64_vec(n, "q")?;
    let rest = t.remaining();
    if rest > 0 {
        notes.insert("ignored_trailing_tokens".into(), rest.to_string());
    }
    Ok(LcpFile { m, q, notes })
}

/// Read a square NumericsMatrix that must be `n x n`.
fn read_numerics_matrix(
    t: &mut Tokens<'_>,
    n: usize,
    what: &str,
    notes: &mut Notes,
) -> Result<CscMatrix> {
    read_numerics_matrix_checked(t, what, "matrix_storage", notes, &|size0, size1| {
        (size0 != n || size1 != n).then(|| {
            format!(
                "{what} is {size0} x {size1}, but the header asks for {n} x {n} (d * number of \
                 contacts, or n)"
            )
        })
    })
}

/// Read a NumericsMatrix of any shape (`size0 x size1` as stored). `check(size0, size1)`
/// returns the error message for a shape the caller cannot use (the error is located at the
/// column-count token), `None` to accept it. Storage `0` dense (column-major), `1` sparse
/// block, `2` sparse (CSparse text print, triplet or CSC, [`read_csparse`]). The storage is
/// recorded in `notes[storage_key]`.
pub(crate) fn read_numerics_matrix_checked(
    t: &mut Tokens<'_>,
    what: &str,
    storage_key: &str,
    notes: &mut Notes,
    check: &dyn Fn(usize, usize) -> Option<String>,
) -> Result<CscMatrix> {
    let storage = t.usize(&format!("storage type of {what}"))?;
    let storage_tok = t.pos - 1;
    let size0 = t.usize(&format!("row count of {what}"))?;
    let size1 = t.usize(&format!("column count of {what}"))?;
    if let Some(msg) = check(size0, size1) {
        return Err(t.err_prev(msg));
    }
    let mut note = |v: &str| {
        notes.insert(storage_key.into(), v.into());
    };
    match storage {
        0 => {
            note("dense (column-major)");
            let r = t.usize(&format!("repeated row count of {what}"))?;
            let c = t.usize(&format!("repeated column count of {what}"))?;
            if r != size0 || c != size1 {
                return Err(t.err_prev(format!(
                    "dense {what}: repeated size {r} x {c} differs from {size0} x {size1}"
                )));
            }
            let len = size0
                .checked_mul(size1)
                .ok_or_else(|| t.err_prev("matrix is too large"))?;
            let vals = t.f64_vec(len, &format!("dense {what} (column-major)"))?;
            CscMatrix::from_dense_col_major(size0, size1, &vals).map_err(|e| e.in_file(t.path))
        }
        1 => {
            note("sparse block (SBM)");
            read_sbm(t, size0, size1, what)
        }
        2 => {
            let (m, kind) = read_csparse(t, size0, size1, what)?;
            note(kind);
            Ok(m)
        }
        s => Err(t.err_at(
            storage_tok,
            format!(
                "{what}: NumericsMatrix storage type {s} is not supported (0 dense, 1 sparse \
                 block, 2 sparse)"
            ),
        )),
    }
}

/// Read the sparse part (storage type `2`) of a `rows x cols` NumericsMatrix, as Siconos'
/// `NSM_write_in_file` prints it: the origin (`1` triplet, `2` CSC; `3`, CSR, is refused), the
/// CSparse banner line (`CSparse Version ...`, skipped), the header
/// `[triplet:] {m}-by-{n}, nzmax: {nzmax} nnz: {nnz}[, 1-norm: {norm}]`, then for a triplet
/// matrix `nnz` lines `i j : x`, for CSC, per column `col j : locations a to b` followed by
/// `b - a + 1` lines `i : x`. The values are printed with C's `%g` (6 significant digits):
/// that is the data Siconos reads back too. Duplicate triplets are summed. Returns the matrix
/// and a storage description for the notes.
fn read_csparse(
    t: &mut Tokens<'_>,
    rows: usize,
    cols: usize,
    what: &str,
) -> Result<(CscMatrix, &'static str)> {
    let origin = t.usize(&format!("{what}: sparse origin (1 triplet, 2 CSC)"))?;
    if origin != 1 && origin != 2 {
        return Err(t.err_prev(format!(
            "{what}: sparse origin {origin} is not supported (1 triplet, 2 CSC; 3 CSR is not \
             read)"
        )));
    }
    // the CSparse banner: every token of the line that starts with `CSparse`
    let (banner, k) = t.next(&format!("{what}: CSparse banner line"))?;
    if banner != "CSparse" {
        return Err(t.err_at(
            k,
            format!(
                "{what}: expected the CSparse banner line ('CSparse Version ...'), found '{}'",
                short(banner)
            ),
        ));
    }
    let line = t.toks[k].line;
    while t.toks.get(t.pos).is_some_and(|x| x.line == line) {
        t.pos += 1;
    }
    let (mut head, mut k) = t.next(&format!("{what}: CSparse header"))?;
    let triplet = head == "triplet:";
    if triplet {
        (head, k) = t.next(&format!("{what}: CSparse header"))?;
    }
    if triplet != (origin == 1) {
        return Err(t.err_at(
            k,
            format!(
                "{what}: sparse origin {origin} ({}) but the CSparse header {} 'triplet:'",
                if origin == 1 { "triplet" } else { "CSC" },
                if triplet { "says" } else { "lacks" }
            ),
        ));
    }
    let dims = head
        .strip_suffix(',')
        .and_then(|h| h.split_once("-by-"))
        .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)));
    match dims {
        Some((m, n)) if (m, n) == (rows, cols) => {}
        Some((m, n)) => {
            return Err(t.err_at(
                k,
                format!(
                    "{what}: the CSparse header says {m} x {n}, the NumericsMatrix header \
                     {rows} x {cols}"
                ),
            ))
        }
        None => {
            return Err(t.err_at(
                k,
                format!(
                    "{what}: expected the CSparse size '{{m}}-by-{{n}},', found '{}'",
                    short(head)
                ),
            ))
        }
    }
    t.keyword("nzmax:", what)?;
    t.usize(&format!("{what}: nzmax"))?;
    t.keyword("nnz:", what)?;
    let (nnz_text, k) = t.next(&format!("{what}: nnz"))?;
    let nnz = nnz_text
        .strip_suffix(',')
        .unwrap_or(nnz_text)
        .parse::<usize>()
        .map_err(|_| {
            t.err_at(
                k,
                format!(
                    "{what}: nnz: expected a non-negative integer, found '{}'",
                    short(nnz_text)
                ),
            )
        })?;
    let mut trip = Vec::new();
    if triplet {
        t.need(nnz.saturating_mul(4), &format!("{what}: {nnz} triplets"))?;
        trip.reserve(nnz);
        for p in 0..nnz {
            let i = t.index(rows, &format!("{what}: row index of entry {p}"))?;
            let j = t.index(cols, &format!("{what}: column index of entry {p}"))?;
            t.keyword(":", what)?;
            trip.push((i, j, t.f64(&format!("{what}: value of entry {p}"))?));
        }
        let m = CscMatrix::from_triplets(rows, cols, &trip).map_err(|e| e.in_file(t.path))?;
        return Ok((m, "sparse (CSparse triplet text)"));
    }
    t.keyword("1-norm:", what)?;
    t.f64(&format!("{what}: 1-norm"))?;
    t.need(nnz.saturating_mul(3), &format!("{what}: {nnz} entries"))?;
    trip.reserve(nnz);
    let mut at = 0usize;
    for j in 0..cols {
        t.keyword("col", what)?;
        let jj = t.usize(&format!("{what}: column number"))?;
        if jj != j {
            return Err(t.err_prev(format!("{what}: expected column {j}, found column {jj}")));
        }
        t.keyword(":", what)?;
        t.keyword("locations", what)?;
        let a = t.usize(&format!("{what}: first location of column {j}"))?;
        if a != at {
            return Err(t.err_prev(format!(
                "{what}: column {j} starts at location {a}, expected {at}"
            )));
        }
        t.keyword("to", what)?;
        // the last location is `a - 1` for an empty column (`-1` for an empty first column)
        let (b, k) = t.next(&format!("{what}: last location of column {j}"))?;
        let end = b
            .parse::<i128>()
            .ok()
            .filter(|&b| b + 1 >= a as i128 && b < nnz as i128)
            .ok_or_else(|| {
                t.err_at(
                    k,
                    format!(
                        "{what}: last location of column {j}: expected an integer from {} to {}, \
                         found '{}'",
                        a as i128 - 1,
                        nnz as i128 - 1,
                        short(b)
                    ),
                )
            })?;
        let count = (end + 1 - a as i128) as usize;
        for p in 0..count {
            let i = t.index(
                rows,
                &format!("{what}: row index of entry {} (column {j})", a + p),
            )?;
            t.keyword(":", what)?;
            trip.push((i, j, t.f64(&format!("{what}: value of entry {}", a + p))?));
        }
        at += count;
    }
    if at != nnz {
        return Err(t.err_prev(format!(
            "{what}: the columns hold {at} entries, the CSparse header says nnz = {nnz}"
        )));
    }
    let m = CscMatrix::from_triplets(rows, cols, &trip).map_err(|e| e.in_file(t.path))?;
    Ok((m, "sparse (CSparse CSC text)"))
}

/// Read the sparse-block part of an `nrows x ncols` NumericsMatrix (after storage type and
/// sizes).
fn read_sbm(t: &mut Tokens<'_>, nrows: usize, ncols: usize, what: &str) -> Result<CscMatrix> {
    let nbblocks = t.usize(&format!("{what}: number of blocks"))?;
    let nbr = t.usize(&format!("{what}: number of block rows"))?;
    let nbc = t.usize(&format!("{what}: number of block columns"))?;
    let rows = t.cumulative_sizes(nbr, nrows, &format!("{what}: cumulative block row sizes"))?;
    let cols = t.cumulative_sizes(
        nbc,
        ncols,
        &format!("{what}: cumulative block column sizes"),
    )?;
    let filled1 = t.usize(&format!("{what}: filled1 (block rows + 1)"))?;
    if filled1 != nbr + 1 {
        return Err(t.err_prev(format!(
            "{what}: filled1 = {filled1} must be the number of block rows + 1 = {}",
            nbr + 1
        )));
    }
    let filled2 = t.usize(&format!("{what}: filled2 (number of blocks)"))?;
    if filled2 != nbblocks {
        return Err(t.err_prev(format!(
            "{what}: filled2 = {filled2} differs from the number of blocks {nbblocks}"
        )));
    }
    t.need(filled1 + filled2, &format!("{what}: block index arrays"))?;
    let mut rowptr = Vec::with_capacity(filled1);
    for k in 0..filled1 {
        let p = t.usize(&format!("{what}: block row pointer {k}"))?;
        let ok = if k == 0 {
            p == 0
        } else {
            p >= rowptr[k - 1] && p <= nbblocks
        };
        if !ok || (k == filled1 - 1 && p != nbblocks) {
            return Err(t.err_prev(format!(
                "{what}: invalid block row pointer {p} (must start at 0, not decrease and end at \
                 the number of blocks {nbblocks})"
            )));
        }
        rowptr.push(p);
    }
    let mut colidx = Vec::with_capacity(filled2);
    for k in 0..filled2 {
        let c = t.usize(&format!("{what}: block column index {k}"))?;
        if c >= nbc {
            return Err(t.err_prev(format!(
                "{what}: block column index {c} out of range (there are {nbc} block columns)"
            )));
        }
        colidx.push(c);
    }
    let mut trip = Vec::new();
    for br in 0..nbr {
        let (r0, r1) = (if br == 0 { 0 } else { rows[br - 1] }, rows[br]);
        for (b, &bc) in colidx
            .iter()
            .enumerate()
            .take(rowptr[br + 1])
            .skip(rowptr[br])
        {
            let (c0, c1) = (if bc == 0 { 0 } else { cols[bc - 1] }, cols[bc]);
            let idx = t.usize(&format!("{what}: index of block {b}"))?;
            if idx != b {
                return Err(t.err_prev(format!(
                    "{what}: expected the index {b} of the next block, found {idx}"
                )));
            }
            let (nr, nc) = (r1 - r0, c1 - c0);
            let len = nr
                .checked_mul(nc)
                .ok_or_else(|| t.err_prev("block is too large"))?;
            let vals = t.f64_vec(len, &format!("{what}: values of block {b} (column-major)"))?;
            for j in 0..nc {
                for i in 0..nr {
                    let v = vals[i + j * nr];
                    if v != 0.0 {
                        trip.push((r0 + i, c0 + j, v));
                    }
                }
            }
        }
    }
    CscMatrix::from_triplets(nrows, ncols, &trip).map_err(|e| e.in_file(t.path))
}

/// One whitespace-separated token: its bytes and its 1-based line.
pub(crate) struct Tok<'a> {
    /// The token's bytes.
    pub(crate) text: &'a [u8],
    /// Its 1-based line.
    pub(crate) line: usize,
}

/// Token cursor over a whole text; errors name the line and the 1-based token index.
pub(crate) struct Tokens<'a> {
    /// The file, for error messages.
    pub(crate) path: &'a Path,
    /// Every token of the text.
    pub(crate) toks: Vec<Tok<'a>>,
    /// Index of the next token to read.
    pub(crate) pos: usize,
    last_line: usize,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(path: &'a Path, bytes: &'a [u8]) -> Self {
        let mut toks = Vec::new();
        let mut line = 1;
        let mut start = None;
        for (k, &b) in bytes.iter().enumerate() {
            if b.is_ascii_whitespace() {
                if let Some(s) = start.take() {
                    toks.push(Tok {
                        text: &bytes[s..k],
                        line,
                    });
                }
                if b == b'\n' {
                    line += 1;
                }
            } else if start.is_none() {
                start = Some(k);
            }
        }
        if let Some(s) = start {
            toks.push(Tok {
                text: &bytes[s..],
                line,
            });
        }
        Tokens {
            path,
            toks,
            pos: 0,
            last_line: line,
        }
    }

    pub(crate) fn location(&self, k: usize) -> String {
        match self.toks.get(k) {
            Some(tok) => format!("line {}, token {}", tok.line, k + 1),
            None => format!(
                "line {} (end of file, after {} tokens)",
                self.last_line,
                self.toks.len()
            ),
        }
    }

    pub(crate) fn err_at(&self, k: usize, msg: impl Into<String>) -> crate::ProblemError {
        perr(self.path, self.location(k), msg)
    }

    /// Error located at the token just read.
    pub(crate) fn err_prev(&self, msg: impl Into<String>) -> crate::ProblemError {
        self.err_at(self.pos.saturating_sub(1), msg)
    }

    pub(crate) fn remaining(&self) -> usize {
        self.toks.len() - self.pos
    }

    /// Fail early (before allocating) when fewer than `count` tokens are left.
    pub(crate) fn need(&self, count: usize, what: &str) -> Result<()> {
        if self.remaining() < count {
            return Err(self.err_at(
                self.toks.len(),
                format!(
                    "file ends early: {what} needs {count} more numbers, only {} tokens remain \
                     (truncated file or wrong sizes?)",
                    self.remaining()
                ),
            ));
        }
        Ok(())
    }

    /// The header's number of contacts `nc` (contacts of `d` unknowns each) and `n = d nc`;
    /// errors when `n` overflows, or when fewer than `n + nc` numbers are left (`what` names
    /// them): checked before anything is allocated, so that a corrupt header cannot make a
    /// matrix reader allocate for a size the file cannot hold.
    pub(crate) fn contacts(&mut self, d: usize, what: &str) -> Result<(usize, usize)> {
        let nc = self.usize("number of contacts")?;
        let n = nc
            .checked_mul(d)
            .ok_or_else(|| self.err_prev("number of contacts is too large"))?;
        self.need(n.saturating_add(nc), what)?;
        Ok((nc, n))
    }

    pub(crate) fn next(&mut self, what: &str) -> Result<(&'a str, usize)> {
        let k = self.pos;
        let Some(tok) = self.toks.get(k) else {
            return Err(self.err_at(k, format!("unexpected end of file while reading {what}")));
        };
        self.pos += 1;
        let s = std::str::from_utf8(tok.text)
            .map_err(|_| self.err_at(k, format!("{what}: token is not valid text")))?;
        Ok((s, k))
    }

    pub(crate) fn usize(&mut self, what: &str) -> Result<usize> {
        let (s, k) = self.next(what)?;
        s.parse::<usize>().map_err(|_| {
            self.err_at(
                k,
                format!(
                    "{what}: expected a non-negative integer, found '{}'",
                    short(s)
                ),
            )
        })
    }

    pub(crate) fn f64(&mut self, what: &str) -> Result<f64> {
        let (s, k) = self.next(what)?;
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            Ok(v) => Err(self.err_at(k, format!("{what}: non-finite value {v} ('{}')", short(s)))),
            Err(_) => Err(self.err_at(
                k,
                format!("{what}: expected a real number, found '{}'", short(s)),
            )),
        }
    }

    pub(crate) fn f64_vec(&mut self, count: usize, what: &str) -> Result<Vec<f64>> {
        self.need(count, what)?;
        let mut v = crate::memory::try_with_capacity(count, what)?;
        for i in 0..count {
            v.push(self.f64(&format!("{what} [{i}]"))?);
        }
        Ok(v)
    }

    /// The literal token `word` (a keyword of a CSparse print); error otherwise.
    pub(crate) fn keyword(&mut self, word: &str, what: &str) -> Result<()> {
        let (s, k) = self.next(&format!("{what}: '{word}'"))?;
        if s != word {
            return Err(self.err_at(
                k,
                format!("{what}: expected '{word}', found '{}'", short(s)),
            ));
        }
        Ok(())
    }

    /// An index `< bound`.
    pub(crate) fn index(&mut self, bound: usize, what: &str) -> Result<usize> {
        let i = self.usize(what)?;
        if i >= bound {
            return Err(self.err_prev(format!("{what}: {i} is out of range (must be < {bound})")));
        }
        Ok(i)
    }

    /// `count` strictly increasing positive sizes ending at `total`.
    pub(crate) fn cumulative_sizes(
        &mut self,
        count: usize,
        total: usize,
        what: &str,
    ) -> Result<Vec<usize>> {
        self.need(count, what)?;
        let mut v: Vec<usize> = Vec::with_capacity(count);
        for i in 0..count {
            let s = self.usize(&format!("{what} [{i}]"))?;
            let prev = v.last().copied().unwrap_or(0);
            if s <= prev || s > total || (i == count - 1 && s != total) {
                return Err(self.err_prev(format!(
                    "{what}: {s} must increase strictly and end at the matrix size {total}"
                )));
            }
            v.push(s);
        }
        if count == 0 && total != 0 {
            return Err(self.err_prev(format!("{what}: no blocks for a matrix of size {total}")));
        }
        Ok(v)
    }
}

/// At most 40 characters of a token, for error messages.
pub(crate) fn short(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}
