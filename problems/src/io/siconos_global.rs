//! Siconos text global friction-contact problems (`.dat`: `GFC3D_*`, `gfc2d_*`), condensed to
//! the local problem.
//!
//! Siconos (`GlobalFrictionContactProblem.c`, `globalFrictionContact_newFromFile`) writes
//!
//! ```text
//! d nc  M  H  q  b  mu
//! ```
//!
//! with `d` the space dimension (2 or 3), `nc` the number of contacts, `M` an `ndof x ndof`
//! NumericsMatrix (the mass or iteration matrix), `H` an `ndof x d nc` NumericsMatrix (stored
//! with one **row per degree of freedom** and one column per contact unknown), `q` (`ndof`
//! numbers), `b` (`d nc` numbers: as many as `H` has columns, Siconos' `H->size1`) and `mu`
//! (`nc` numbers). Any NumericsMatrix storage is read: `0` dense, `1` sparse block, `2` sparse
//! (CSparse text; see [`super::siconos`]). The problem is
//!
//! ```text
//! M v = q + H r,   u = H^T v + b,   K* ∋ u + mu ||u_T|| e_n  ⊥  r ∈ K
//! ```
//!
//! (Siconos' `globalFrictionContact_computeGlobalVelocity` computes `v = M^-1 (q + H r)`; its
//! `globalFrictionContact_reformulation_FrictionContact` condenses as below). Eliminating `v`
//! gives the local problem `u = W r + q_loc` with
//!
//! ```text
//! W = H^T M^-1 H   (d nc x d nc),   q_loc = H^T M^-1 q + b,
//! ```
//!
//! computed by [`crate::io::condense::condense`], the function that condenses fclib global
//! problems (sparse Cholesky of `M`, sparse LU when `M` is not symmetric or not positive
//! definite). Contacts stay interleaved, normal first. The orientation of `H` and the signs
//! were checked against Siconos 4.4 itself (`scripts/peer_siconos_global.py`): `W`, `q_loc`
//! equal Siconos' reformulation and its `gfc3d_driver` solutions satisfy `u = W r + q_loc`.
//!
//! **Detection** ([`detect`]). The header `d nc type size0 size1` alone cannot tell a global
//! file from a local fc3d one (`GFC3D_Example00` has `ndof = d nc = 3`): the first matrix is
//! skipped structurally (without parsing its values) and what follows must be a second
//! NumericsMatrix header `type ndof d*nc` (`H`), which in a local file would be the first
//! numbers of `q` (printed `%32.24e`, never integers).

use super::siconos::{read_numerics_matrix_checked, short, Tokens};
use super::{perr, FrictionProblem, Notes};
use crate::error::{ProblemError, Result};
use crate::io::condense::condense;
use crate::linalg::CscMatrix;
use std::path::Path;

/// The raw global problem of a Siconos `.dat` file, before condensation.
#[derive(Clone, Debug)]
pub struct GlobalFile {
    /// Space dimension `d` (2 or 3).
    pub spacedim: usize,
    /// `M` (`ndof x ndof`, as stored).
    pub m: CscMatrix,
    /// `H` (`ndof x d nc`, as stored: rows are degrees of freedom).
    pub h: CscMatrix,
    /// `q` (length `ndof`): `M v = q + H r`.
    pub q: Vec<f64>,
    /// `b` (length `d nc`): `u = H^T v + b`.
    pub b: Vec<f64>,
    /// Friction coefficients (length `nc`).
    pub mu: Vec<f64>,
    /// Reader notes (`m_storage`, `h_storage`, `ignored_trailing_tokens`).
    pub notes: Notes,
}

impl GlobalFile {
    /// Number of degrees of freedom (the size of `M`).
    pub fn dofs(&self) -> usize {
        self.m.nrows()
    }

    /// Number of contacts.
    pub fn contacts(&self) -> usize {
        self.mu.len()
    }
}

/// A Siconos global file condensed to the local problem, with reader notes for the
/// provenance (`m_storage`, `h_storage`, `dofs`, `condensed`, `m_factorization`, ...).
#[derive(Clone, Debug)]
pub struct SiconosGlobalFile {
    /// `u = W r + q` with `W = H^T M^-1 H`, `q = H^T M^-1 q_glob + b`; `spacedim` is the
    /// file's `d` (2 or 3).
    pub problem: FrictionProblem,
    /// Reader and condensation notes.
    pub notes: Notes,
}

/// Provenance note of the condensation.
pub const CONDENSED_NOTE: &str =
    "W = H^T M^-1 H, q = H^T M^-1 q_glob + b (Siconos: M v = q_glob + H r, u = H^T v + b)";

/// Read the global problem (`d`, `nc`, `M`, `H`, `q`, `b`, `mu`) from the bytes of `path`,
/// without condensing it.
///
/// Shapes: `M` is `ndof x ndof`, `H` `ndof x d nc`, `q` has `ndof` entries, `b` `d nc`, `mu`
/// `nc`. Errors ([`ProblemError::Parse`] naming the file, line and token, and what was
/// expected): a missing or malformed number (truncated file), a non-finite value, `d` not 2 or
/// 3, a non-square `M`, an `H` whose shape is not `ndof x d nc`, an unsupported or inconsistent
/// NumericsMatrix, a negative friction coefficient.
pub fn read_global(path: &Path, bytes: &[u8]) -> Result<GlobalFile> {
    let mut t = Tokens::new(path, bytes);
    let d = t.usize("space dimension d")?;
    if d != 2 && d != 3 {
        return Err(t.err_prev(format!(
            "space dimension d = {d} is not supported: global friction problems are read for d \
             = 2 or 3"
        )));
    }
    // b and mu alone need d nc + nc numbers
    let (nc, nloc) = t.contacts(d, "the matrices M and H, q, b and mu")?;
    let mut notes = Notes::new();
    let m = read_numerics_matrix_checked(&mut t, "M", "m_storage", &mut notes, &|r, c| {
        (r != c).then(|| format!("M is {r} x {c}, but the mass matrix M must be square"))
    })?;
    let ndof = m.nrows();
    let h = read_numerics_matrix_checked(&mut t, "H", "h_storage", &mut notes, &|r, c| {
        (r != ndof || c != nloc).then(|| {
            format!(
                "H is {r} x {c}, but it must be {ndof} x {nloc} (one row per degree of freedom \
                 of M, one column per contact unknown: d * number of contacts = {d} * {nc})"
            )
        })
    })?;
    let q = t.f64_vec(ndof, &format!("q (one per degree of freedom, {ndof})"))?;
    let b = t.f64_vec(nloc, &format!("b (d * number of contacts = {nloc})"))?;
    let mu = t.f64_vec(nc, &format!("mu (one per contact, {nc})"))?;
    if let Some(c) = mu.iter().position(|&m| m < 0.0) {
        let k = t.pos - nc + c;
        return Err(t.err_at(
            k,
            format!(
                "mu [{c}]: negative friction coefficient {} ('{}')",
                mu[c],
                short(&String::from_utf8_lossy(t.toks[k].text))
            ),
        ));
    }
    let rest = t.remaining();
    if rest > 0 {
        notes.insert("ignored_trailing_tokens".into(), rest.to_string());
    }
    Ok(GlobalFile {
        spacedim: d,
        m,
        h,
        q,
        b,
        mu,
        notes,
    })
}

/// Read a Siconos global problem ([`read_global`]) and condense it to the local problem
/// `u = W r + q` (`W = H^T M^-1 H`, `q = H^T M^-1 q_glob + b`).
///
/// Shapes: `W` is `d nc x d nc`, `q` has `d nc` entries, `mu` `nc`; `spacedim = d`. Errors:
/// those of [`read_global`]; [`ProblemError::Factorization`] wrapped in
/// [`ProblemError::InFile`] when `M` is singular.
pub fn read_siconos_global(path: &Path, bytes: &[u8]) -> Result<SiconosGlobalFile> {
    let g = read_global(path, bytes)?;
    let ndof = g.dofs();
    let mut notes = g.notes;
    let (w, q) = condense(g.m, &g.h, &g.q, &g.b, &mut notes).map_err(|e| e.in_file(path))?;
    notes.insert("dofs".into(), ndof.to_string());
    notes.insert("condensed".into(), CONDENSED_NOTE.into());
    Ok(SiconosGlobalFile {
        problem: FrictionProblem {
            w,
            q,
            mu: g.mu,
            spacedim: g.spacedim,
        },
        notes,
    })
}

/// True when `bytes` (a whole file or its first bytes) hold a Siconos global problem: `d nc`
/// with `d in {2, 3}`, a square NumericsMatrix `M` (`ndof x ndof`, skipped structurally),
/// then the header of a NumericsMatrix `H` of size `ndof x d nc`; also when an integer header
/// of another size follows `M` and more numbers follow it than a local file holds there (a
/// global file with a bad `H`: its reader names the defect, the text is never read as local).
pub fn detect(bytes: &[u8]) -> bool {
    // a bad H still makes the text global: its reader names the defect, and the text is
    // never read as a local problem ([`diagnose`])
    matches!(sniff(bytes), Sniff::Global | Sniff::BadH { .. })
}

/// True when the text's first matrix runs past the end of `bytes` (a head cut before the end
/// of the file), its header is a plausible global header (`d in {2, 3}`, a square `M` of a
/// known storage) and `M`'s size differs from `d nc`, so that the text cannot be a local
/// friction problem. [`crate::io::detect_format_bytes`] uses it on heads of at least
/// [`crate::io::HEAD_BYTES`] bytes (`false` for a text that is not such a head).
pub fn cut_head_is_global(bytes: &[u8]) -> bool {
    matches!(sniff(bytes), Sniff::Short { square_other: true })
}

/// Explain why a text that looks like a global problem (a square first matrix followed by a
/// NumericsMatrix header) is not a readable one: `H`'s storage type or its shape. `None` when
/// the text does not look like a global problem or no such defect is found. The error names
/// the file, line and token.
pub fn diagnose(path: &Path, bytes: &[u8]) -> Option<ProblemError> {
    let Sniff::BadH {
        token,
        line,
        message,
    } = sniff(bytes)
    else {
        return None;
    };
    Some(perr(path, format!("line {line}, token {token}"), message))
}

/// Refuse, before the file is read whole, a global file whose header declares more numbers than
/// its `file_len` bytes can hold (2 bytes per number at least): `q` (`ndof`), `b` (`d nc`),
/// `mu` (`nc`), plus `ndof^2` when `M` is dense. Errors: [`ProblemError::Parse`] at the
/// contact count.
pub fn check_declared_size(path: &Path, head: &[u8], file_len: u64) -> Result<()> {
    let mut s = Scan::new(head);
    let (Some(d), Some(nc), Some(ty), Some(ndof)) = (s.int(), s.int(), s.int(), s.int()) else {
        return Ok(());
    };
    let (d, nc, ndof) = (d as u128, nc as u128, ndof as u128);
    let dense = if ty == 0 {
        ndof.saturating_mul(ndof)
    } else {
        0
    };
    let numbers = dense
        .saturating_add(ndof)
        .saturating_add(d.saturating_mul(nc))
        .saturating_add(nc);
    let bytes = numbers.saturating_mul(2).saturating_sub(1);
    if bytes > file_len as u128 {
        let t = Tokens::new(path, head);
        return Err(t.err_at(
            1,
            format!(
                "the header declares {nc} contacts and {ndof} degrees of freedom ({} M, H, q, b \
                 and mu): at least {numbers} numbers, which need at least {bytes} bytes, but the \
                 file has {file_len} bytes (truncated file or corrupt header)",
                if dense > 0 { "dense" } else { "sparse" }
            ),
        ));
    }
    Ok(())
}

/// What a structural scan of a text found.
#[derive(Debug, PartialEq)]
enum Sniff {
    /// Not a global problem.
    No,
    /// A global problem.
    Global,
    /// The text ended inside `M` or before `H`'s header; `square_other`: the header is a
    /// plausible global header whose `M` size differs from `d nc`.
    Short {
        /// See [`cut_head_is_global`].
        square_other: bool,
    },
    /// `M` was read and an integer header follows, but it is not `type ndof d*nc`.
    BadH {
        token: usize,
        line: usize,
        message: String,
    },
}

fn sniff(bytes: &[u8]) -> Sniff {
    let mut s = Scan::new(bytes);
    let Some(d) = s.int() else { return Sniff::No };
    if d != 2 && d != 3 {
        return Sniff::No;
    }
    let Some(nc) = s.int() else { return Sniff::No };
    let Some(nloc) = d.checked_mul(nc) else {
        return Sniff::No;
    };
    let size = match skip_matrix(&mut s) {
        Skip::Matrix(r, c) if r == c => r,
        Skip::Matrix(..) | Skip::Bad => return Sniff::No,
        Skip::Short(Some((r, c))) if r == c => {
            return Sniff::Short {
                square_other: r != nloc,
            }
        }
        Skip::Short(_) => {
            return Sniff::Short {
                square_other: false,
            }
        }
    };
    // H's header: three integers, or the local q (reals) of an fc3d file
    let at = s.count + 1;
    let line = s.next_line();
    let (Some(ty), Some(r), Some(c)) = (s.int(), s.int(), s.int()) else {
        return if s.ended() {
            Sniff::Short {
                square_other: size != nloc,
            }
        } else {
            Sniff::No
        };
    };
    if ty <= 2 && r == size && c == nloc {
        return Sniff::Global;
    }
    // an integer header that is not H's: a global file with a bad H only if more numbers
    // follow M than a local file holds there (q and mu: d nc + nc); a hand-made local file
    // whose q is written as integers (`0 0 0`) stops at exactly that many
    let after_m = 3 + s.b[s.i..]
        .split(|c| c.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
        .count() as u64;
    if after_m <= nloc.saturating_add(nc) {
        return Sniff::No;
    }
    let message = if ty > 2 {
        format!(
            "H: NumericsMatrix storage type '{ty}' is not supported (0 dense, 1 sparse block, 2 \
             sparse)"
        )
    } else {
        format!(
            "H is {r} x {c}, but it must be {size} x {nloc} (one row per degree of freedom of \
             M, one column per contact unknown: d * number of contacts = {d} * {nc})"
        )
    };
    let (token, line) = if ty > 2 { (at, line) } else { (at + 2, s.line) };
    Sniff::BadH {
        token,
        line,
        message,
    }
}

/// Outcome of [`skip_matrix`].
enum Skip {
    /// A whole NumericsMatrix of this shape was skipped.
    Matrix(u64, u64),
    /// The text ended inside the matrix (its shape, when read).
    Short(Option<(u64, u64)>),
    /// Not a NumericsMatrix.
    Bad,
}

/// Skip a NumericsMatrix without parsing its values: only the structural integers are read.
fn skip_matrix(s: &mut Scan<'_>) -> Skip {
    // counts read from the text size nothing beyond what the text can hold (each number
    // takes two bytes at least): `nbr = 709551615` asked for 5.7 GB (found by fuzzing)
    let most = s.b.len() / 2;
    let cap = |k: usize| k.min(most);
    macro_rules! int {
        ($shape:expr) => {
            match s.int() {
                Some(v) => v,
                None if s.ended() => return Skip::Short($shape),
                None => return Skip::Bad,
            }
        };
    }
    macro_rules! skip {
        ($n:expr, $shape:expr) => {
            if !s.skip($n) {
                return Skip::Short($shape);
            }
        };
    }
    let ty = int!(None);
    let r = int!(None);
    let c = int!(None);
    let shape = Some((r, c));
    match ty {
        0 => {
            let (r2, c2) = (int!(shape), int!(shape));
            if (r2, c2) != (r, c) {
                return Skip::Bad;
            }
            let Some(len) = r.checked_mul(c) else {
                return Skip::Bad;
            };
            skip!(len, shape);
        }
        1 => {
            let nb = int!(shape);
            let (nbr, nbc) = (int!(shape), int!(shape));
            if nbr > r || nbc > c || nb > nbr.saturating_mul(nbc) {
                return Skip::Bad;
            }
            let mut rows = Vec::with_capacity(cap(nbr as usize));
            for _ in 0..nbr {
                rows.push(int!(shape));
            }
            let mut cols = Vec::with_capacity(cap(nbc as usize));
            for _ in 0..nbc {
                cols.push(int!(shape));
            }
            let size = |v: &[u64], k: usize| -> Option<u64> {
                v.get(k)?
                    .checked_sub(if k == 0 { 0 } else { *v.get(k - 1)? })
            };
            let (f1, f2) = (int!(shape), int!(shape));
            if f1 != nbr + 1 || f2 != nb {
                return Skip::Bad;
            }
            let mut ptr = Vec::with_capacity(cap(f1 as usize));
            for _ in 0..f1 {
                ptr.push(int!(shape));
            }
            let mut idx = Vec::with_capacity(cap(f2 as usize));
            for _ in 0..f2 {
                idx.push(int!(shape));
            }
            for br in 0..nbr as usize {
                let (p0, p1) = (ptr[br] as usize, ptr[br + 1] as usize);
                if p0 > p1 || p1 > idx.len() {
                    return Skip::Bad;
                }
                for &bc in &idx[p0..p1] {
                    let (Some(rs), Some(cs)) = (size(&rows, br), size(&cols, bc as usize)) else {
                        return Skip::Bad;
                    };
                    let _block_index = int!(shape);
                    skip!(rs.saturating_mul(cs), shape);
                }
            }
        }
        2 => {
            let origin = int!(shape);
            if origin != 1 && origin != 2 {
                return Skip::Bad;
            }
            s.skip_rest_of_line(); // the origin's line
            s.skip_rest_of_line(); // the CSparse banner
            let mut head = match s.tok() {
                Some(t) => t,
                None => return Skip::Short(shape),
            };
            let triplet = head == b"triplet:";
            if triplet {
                head = match s.tok() {
                    Some(t) => t,
                    None => return Skip::Short(shape),
                };
            }
            if !head.windows(4).any(|w| w == b"-by-") {
                return Skip::Bad;
            }
            // nzmax: N nnz: K[,]
            if !s.skip(3) {
                return Skip::Short(shape);
            }
            let nnz = match s.tok() {
                Some(t) => match std::str::from_utf8(t.strip_suffix(b",").unwrap_or(t))
                    .ok()
                    .and_then(|x| x.parse::<u64>().ok())
                {
                    Some(v) => v,
                    None => return Skip::Bad,
                },
                None => return Skip::Short(shape),
            };
            if triplet {
                skip!(nnz.saturating_mul(4), shape);
            } else {
                // 1-norm: x, then per column 7 tokens, then 3 per entry
                skip!(2, shape);
                skip!(
                    c.saturating_mul(7).saturating_add(nnz.saturating_mul(3)),
                    shape
                );
            }
        }
        _ => return Skip::Bad,
    }
    Skip::Matrix(r, c)
}

/// A lazy whitespace tokenizer counting tokens and lines (no allocation per token).
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// Tokens read so far.
    count: usize,
    /// 1-based line of the last token read.
    line: usize,
    /// Line the cursor is on.
    cur_line: usize,
}

impl<'a> Scan<'a> {
    fn new(b: &'a [u8]) -> Self {
        Scan {
            b,
            i: 0,
            count: 0,
            line: 1,
            cur_line: 1,
        }
    }

    fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if !c.is_ascii_whitespace() {
                break;
            }
            if c == b'\n' {
                self.cur_line += 1;
            }
            self.i += 1;
        }
    }

    /// True when only whitespace is left.
    fn ended(&mut self) -> bool {
        self.skip_ws();
        self.i >= self.b.len()
    }

    /// The line of the next token.
    fn next_line(&mut self) -> usize {
        self.skip_ws();
        self.cur_line
    }

    fn tok(&mut self) -> Option<&'a [u8]> {
        self.skip_ws();
        let start = self.i;
        while self.i < self.b.len() && !self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        self.count += 1;
        self.line = self.cur_line;
        Some(&self.b[start..self.i])
    }

    /// The next token as a non-negative integer; `None` (nothing consumed is reported) when
    /// there is no token or it is not one.
    fn int(&mut self) -> Option<u64> {
        std::str::from_utf8(self.tok()?).ok()?.parse().ok()
    }

    /// Skip `n` tokens; false when the text ends first.
    fn skip(&mut self, n: u64) -> bool {
        for _ in 0..n {
            if self.tok().is_none() {
                return false;
            }
        }
        true
    }

    /// Move past the next newline (or to the end).
    fn skip_rest_of_line(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            if c == b'\n' {
                self.cur_line += 1;
                return;
            }
        }
    }
}
