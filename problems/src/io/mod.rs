//! Readers and writers for the problem files of other projects and for cpbench's own bundles.
//!
//! | [`Format`] | reader | what it holds |
//! |---|---|---|
//! | [`Format::FclibHdf5`] | [`fclib`] | fclib HDF5 (`/fclib_local` or `/fclib_global`, condensed) |
//! | [`Format::SiconosFc3d`] | [`siconos`] | Siconos `.dat` friction-contact problem |
//! | [`Format::SiconosLcp`] | [`siconos`] | Siconos `.dat` LCP |
//! | [`Format::SiconosGlobal`] | [`siconos_global`] | Siconos `.dat` global friction problem (`M`, `H`, `q`, `b`, `mu`), condensed |
//! | [`Format::Bundle`] | [`bundle`] | cpbench bundle: a directory with `N.mtx`, `r.mtx`, `instance.json` |
//! | [`Format::Npz`] | [`npz`] | cpbench binary instance: `.npy` arrays in an uncompressed `.npz` (SciPy's CSC layout for `N`) |
//!
//! Global problems (fclib `/fclib_global`, Siconos' global `.dat`) are condensed to
//! `W = H^T M^-1 H`, or kept as `H` and `M` on the matrix-free storage by [`load_with`] with
//! [`GlobalForm::MatrixFree`] ([`GlobalProblem::into_matrix_free`]).
//!
//! The formats cpbench writes are [`OutputFormat`]'s (bundle, fclib, npz); a Coulomb-cone
//! instance is written as an fclib local problem by [`fclib_write`] ([`write_fclib`]). MatrixMarket reading and writing is in [`mtx`]. The layouts are described in
//! `tests/fixtures/README.md`; the sign conventions below.
//!
//! **Sign convention.** fclib and Siconos write a frictional problem as `u = W r + q` (unknown
//! `r`, velocity `u`). cpbench writes `g = N gamma + r`; a frictional file is therefore read with
//! `N = W` and `r = q` (unknown `gamma` = fclib's `r`). Unknowns stay contact-interleaved,
//! normal component first.
//!
//! **Instance names.** The file stem (the file name without its last extension:
//! `Rover4396.dat` gives `Rover4396`, `BoxesStack1-i100000-32.hdf5.dat` gives
//! `BoxesStack1-i100000-32.hdf5`), plus `__ccp`, `__lcp` or `__coulomb` for frictional files (see
//! [`ClassChoice`]). Plain LCP files get the stem alone; bundles the name in `instance.json`.
//!
//! **Errors.** Nothing here panics on malformed input: a file that cannot be read gives
//! [`ProblemError::Parse`] (naming the file and the line and token, or the HDF5 object),
//! [`ProblemError::Io`], [`ProblemError::UnknownFormat`], or a validation error of
//! [`Instance::new`] wrapped in [`ProblemError::InFile`].

pub mod atomic;
pub mod bundle;
pub mod condense;
pub mod fclib;
/// The fclib writer, at its former path (now [`fclib::write`]).
pub use fclib::write as fclib_write;
pub mod mtx;
pub mod npz;
pub mod output;
pub mod siconos;
pub mod siconos_global;

pub use atomic::write_atomic;
pub use bundle::{read_bundle, write_bundle};
pub use fclib::write::{write_fclib, FclibInfo};
pub use output::OutputFormat;

use crate::constraints::ConstraintSet;
use crate::error::{ProblemError, Result};
use crate::instance::{Instance, Provenance, ValidationOptions};
use crate::linalg::CscMatrix;
use fclib::FclibKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Sign convention note recorded in the provenance of every frictional instance.
pub const FRICTION_SIGN_CONVENTION: &str = "u = W r + q, g = N gamma + r with N = W, r = q";

/// How a frictional (Coulomb-cone) file is read. Spelled as on the command line (`--class`),
/// also in suite files and JSON: `lcp`, `ccp`, `coulomb`, `blcp`, `lcp-pyramid` or
/// `lcp-pyramid:k` ([`ClassChoice::from_str`](std::str::FromStr), [`std::fmt::Display`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ClassChoice {
    /// The frictionless normal block as an LCP: `N_nn` (rows and columns `0, 3, 6, ...` of `W`)
    /// and `r_n`, `gamma_n >= 0`. Name suffix `__lcp`, derivation `normal-block-lcp`
    /// (built with [`Instance::normal_block_lcp`]).
    Lcp,
    /// The cones as they are: Anitescu's convex relaxation (CCP) of the Coulomb problem.
    /// Name suffix `__ccp`, derivation `ccp-relaxation`.
    #[default]
    Ccp,
    /// The true Coulomb friction problem ([`crate::ProblemClass::Coulomb`], built with
    /// [`Instance::new_coulomb`]: a non-symmetric `W` is kept as read unless `symmetrize`).
    /// Name suffix `__coulomb`, derivation `coulomb`. A bundle holding a CCP is read as the
    /// Coulomb problem on its data ([`Instance::into_coulomb`]).
    Coulomb,
    /// The boxed LCP of ODE-style engines ([`crate::ProblemClass::Blcp`], friction boxes
    /// `|gamma_t,i| <= mu gamma_n`) on the Coulomb problem's data ([`Instance::blcp`]).
    /// Name suffix `__blcp`, derivation `blcp`.
    Blcp,
    /// The Stewart-Trinkle / Anitescu-Potra LCP of the friction pyramid with `k` facet
    /// directions ([`crate::derive`], [`Instance::pyramid_lcp`]) of the Coulomb problem's data:
    /// a general (non-symmetric) LCP of size `nc (k + 2)`. Name suffix `__lcp-pyramid-{k}`,
    /// derivation `lcp-pyramid:{k}`. `lcp-pyramid` alone means
    /// [`crate::derive::DEFAULT_PYRAMID_K`].
    LcpPyramid {
        /// Facet directions per contact, `3..=MAX_PYRAMID_K`.
        k: usize,
    },
}

impl ClassChoice {
    /// The instance of this choice derived from a frictional instance `inst` (CCP or
    /// Coulomb): its normal block, the Coulomb problem, the BLCP or the pyramid LCP; the CCP
    /// as it is for [`ClassChoice::Ccp`]. Errors: those of the derivations (e.g.
    /// [`ProblemError::WrongClass`]).
    pub fn derive_from(self, inst: Instance) -> Result<Instance> {
        match (self, inst.class()) {
            (ClassChoice::Lcp, _) => inst.normal_block_lcp(),
            (ClassChoice::Coulomb, crate::ProblemClass::Ccp) => inst.into_coulomb(),
            (ClassChoice::Blcp, _) => inst.blcp(),
            (ClassChoice::LcpPyramid { k }, _) => inst.pyramid_lcp(k),
            _ => Ok(inst),
        }
    }

    /// The contact impulses (length `3 nc`, normal first) of a solution `z` of the instance
    /// this choice derives ([`ClassChoice::derive_from`]): `z` itself for the CCP, Coulomb
    /// problem and BLCP (same unknowns); `(z_n, 0, 0)` per contact for the frictionless normal
    /// block; [`crate::derive::FrictionPyramid::impulse`] for the pyramid LCP. Errors:
    /// [`ProblemError::SizeMismatch`] for a pyramid vector whose length is not a multiple of
    /// `k + 2`, [`ProblemError::InvalidParameter`] for `k` out of range.
    pub fn impulses(self, z: &[f64]) -> Result<Vec<f64>> {
        Ok(match self {
            ClassChoice::Ccp | ClassChoice::Coulomb | ClassChoice::Blcp => z.to_vec(),
            ClassChoice::Lcp => z.iter().flat_map(|&n| [n, 0.0, 0.0]).collect(),
            ClassChoice::LcpPyramid { k } => crate::derive::FrictionPyramid::new(k)?.impulse(z)?,
        })
    }
}

impl ClassChoice {
    /// The family name: the `--class` spelling without the pyramid's `:k` (`lcp`, `ccp`,
    /// `coulomb`, `blcp`, `lcp-pyramid`).
    pub fn family(self) -> &'static str {
        match self {
            ClassChoice::Lcp => "lcp",
            ClassChoice::Ccp => "ccp",
            ClassChoice::Coulomb => "coulomb",
            ClassChoice::Blcp => "blcp",
            ClassChoice::LcpPyramid { .. } => "lcp-pyramid",
        }
    }
}

impl std::fmt::Display for ClassChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClassChoice::LcpPyramid { k } => write!(f, "lcp-pyramid:{k}"),
            c => f.write_str(c.family()),
        }
    }
}

impl std::str::FromStr for ClassChoice {
    type Err = ProblemError;

    /// Parse `lcp`, `ccp`, `coulomb`, `blcp`, `lcp-pyramid` or `lcp-pyramid:k` (also with `_`
    /// for `-`, as earlier JSON spelled names). Errors: [`ProblemError::InvalidClass`] naming the
    /// value and what is wrong (unknown name, `k` not an integer, `k` out of
    /// `3..=MAX_PYRAMID_K`).
    fn from_str(s: &str) -> Result<Self> {
        let invalid = |reason: String| ProblemError::InvalidClass {
            value: s.to_string(),
            reason,
        };
        let norm = s.trim().to_ascii_lowercase().replace('_', "-");
        let (head, arg) = match norm.split_once(':') {
            Some((h, a)) => (h, Some(a)),
            None => (norm.as_str(), None),
        };
        let choice = match (head, arg) {
            ("lcp", None) => ClassChoice::Lcp,
            ("ccp", None) => ClassChoice::Ccp,
            ("coulomb", None) => ClassChoice::Coulomb,
            ("blcp", None) => ClassChoice::Blcp,
            ("lcp-pyramid", None) => ClassChoice::LcpPyramid {
                k: crate::derive::DEFAULT_PYRAMID_K,
            },
            ("lcp-pyramid", Some(a)) => {
                let k: usize = a.parse().map_err(|_| {
                    invalid(format!(
                        "the number of facet directions after ':' must be an integer, found '{a}'"
                    ))
                })?;
                let (lo, hi) = (crate::derive::MIN_PYRAMID_K, crate::derive::MAX_PYRAMID_K);
                if !(lo..=hi).contains(&k) {
                    return Err(invalid(format!(
                        "k = {k} facet directions: a 3-D friction pyramid needs {lo}..={hi}"
                    )));
                }
                ClassChoice::LcpPyramid { k }
            }
            (h, Some(_)) => {
                return Err(invalid(format!(
                    "only lcp-pyramid takes a parameter (':k'), not '{h}'"
                )))
            }
            (h, None) => return Err(invalid(format!("unknown class '{h}'"))),
        };
        Ok(choice)
    }
}

impl TryFrom<String> for ClassChoice {
    type Error = ProblemError;

    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

impl From<ClassChoice> for String {
    fn from(c: ClassChoice) -> String {
        c.to_string()
    }
}

/// Options of [`load`] and [`load_bytes`].
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOptions {
    /// How frictional files are read (ignored for plain LCP files; for a bundle holding a CCP,
    /// [`ClassChoice::Lcp`] derives its normal block and [`ClassChoice::Coulomb`] reads it as
    /// the Coulomb problem; a bundle holding a Coulomb problem stays one).
    pub class: ClassChoice,
    /// Symmetry tolerance and `--symmetrize`, passed to [`Instance::new`].
    pub validation: ValidationOptions,
}

/// How a global friction problem (fclib `/fclib_global`, Siconos' global `.dat`) becomes an
/// instance: condensed to `W = H^T M^-1 H` (the default, [`load`]) or kept as `M` and `H`
/// on the matrix-free storage ([`load_with`]; `cpbench --operator matrix-free`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GlobalForm {
    /// `N = W = H^T M^-1 H` formed ([`condense::condense`]).
    #[default]
    Condensed,
    /// `N = H^T M^-1 H` applied from `H` and `M`
    /// ([`crate::operator::MatrixFree::with_sparse_mass`]), `W` never formed; for the CCP
    /// (`--class ccp`, the default) and the Coulomb problem (`--class coulomb`: the same
    /// storage, [`Instance::into_coulomb`]); the derived classes are read condensed.
    MatrixFree,
}

/// A global friction problem as read, before condensation: `M v = H r + f`, `u = H^T v + w`
/// (fclib's names; Siconos' `M v = q + H r`, `u = H^T v + b` is the same with `f = q`,
/// `w = b`).
///
/// Shapes: `m` is `ndof x ndof` (symmetric, both triangles), `h` `ndof x d nc`, `f` length
/// `ndof`, `w` length `d nc`, `mu` length `nc`, `spacedim = d` (2 or 3).
#[derive(Clone, Debug)]
pub struct GlobalProblem {
    /// The mass (iteration) matrix `M`.
    pub m: CscMatrix,
    /// `H`, one row per degree of freedom, one column per contact unknown.
    pub h: CscMatrix,
    /// `f` (Siconos' `q`).
    pub f: Vec<f64>,
    /// `w` (Siconos' `b`).
    pub w: Vec<f64>,
    /// Friction coefficients.
    pub mu: Vec<f64>,
    /// Unknowns per contact (2 or 3).
    pub spacedim: usize,
}

/// Provenance note of a global problem kept matrix-free.
pub const MATRIX_FREE_GLOBAL_NOTE: &str =
    "N = H^T M^-1 H never formed (matrix-free); q = H^T M^-1 f + w (one solve with M)";

impl GlobalProblem {
    /// The CCP instance `{stem}__ccp` on the matrix-free storage: `N = H^T M^-1 H` from `H`
    /// and `M` ([`crate::operator::MatrixFree::with_sparse_mass`]), `r = H^T M^-1 f + w`
    /// (one solve with `M`), Coulomb cones with `mu`; provenance as the condensed reading
    /// (`ccp-relaxation`, `sign_convention`, `spacedim`, `contacts`) plus `dofs`,
    /// `matrix_free` and `m_inverse` (block diagonal with its block count, or sparse Cholesky
    /// with the factor's entries). Errors: [`ProblemError::MassNotPositiveDefinite`] (naming
    /// the column), [`ProblemError::NonFinite`] (in `r`), and the instance checks; not yet
    /// wrapped with a file name.
    pub fn into_matrix_free(self, stem: &str, mut provenance: Provenance) -> Result<Instance> {
        use crate::operator::{MassInverse, MatrixFree};
        let (ndof, d) = (self.m.nrows(), self.spacedim);
        let op = MatrixFree::with_sparse_mass(self.h, self.m, d)?;
        let y = op.solve_mass(&self.f);
        if let Some(k) = y.iter().position(|v| !v.is_finite()) {
            return Err(ProblemError::NonFinite {
                what: "M^-1 f (the free velocity)".into(),
                position: format!("[{k}]"),
                value: y[k],
            });
        }
        let mut q = vec![0.0; op.n()];
        op.transpose_apply(&y, &mut q);
        for (qk, wk) in q.iter_mut().zip(&self.w) {
            *qk += wk;
        }
        provenance.derivation = "ccp-relaxation".into();
        let p = &mut provenance.parameters;
        p.insert("sign_convention".into(), FRICTION_SIGN_CONVENTION.into());
        p.insert("spacedim".into(), d.to_string());
        p.insert("contacts".into(), self.mu.len().to_string());
        p.insert("dofs".into(), ndof.to_string());
        p.insert("matrix_free".into(), MATRIX_FREE_GLOBAL_NOTE.into());
        p.insert(
            "m_inverse".into(),
            match op.mass_inverse() {
                MassInverse::BlockDiagonal(b) => format!(
                    "block diagonal ({} blocks): M^-1 H formed block by block",
                    b.blocks().len()
                ),
                MassInverse::Cholesky(c) => format!(
                    "sparse Cholesky (faer LLT, AMD ordering, {} entries in L)",
                    c.factor_nnz()
                ),
                MassInverse::Diagonal(_) => "diagonal".into(),
            },
        );
        Instance::on_operator(
            format!("{stem}__ccp"),
            op,
            q,
            ConstraintSet::coulomb_dim(self.mu, d),
            provenance,
        )
    }
}

/// A file format known to [`load`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// cpbench bundle directory ([`bundle`]).
    Bundle,
    /// fclib HDF5 file, local or global problem ([`fclib`]).
    FclibHdf5,
    /// Siconos text friction-contact problem (`d`, contacts, matrix, `q`, `mu`) ([`siconos`]).
    SiconosFc3d,
    /// Siconos text LCP (`n`, matrix, `q`) ([`siconos`]).
    SiconosLcp,
    /// Siconos text global friction-contact problem (`d`, contacts, `M`, `H`, `q`, `b`, `mu`),
    /// condensed to the local problem ([`siconos_global`]).
    SiconosGlobal,
    /// cpbench binary instance, an uncompressed `.npz` ([`npz`]); detected by the ZIP signature.
    Npz,
}

/// A raw frictional problem as read from a file, in fclib naming: `u = W r + q`.
///
/// Shapes: `w` is `n x n` with `n = spacedim * nc` (possibly non-symmetric, as stored),
/// `q` has length `n`, `mu` length `nc`. Unknowns are contact-interleaved, normal first.
#[derive(Clone, Debug)]
pub struct FrictionProblem {
    /// The Delassus operator `W` (`n x n`).
    pub w: CscMatrix,
    /// The free velocity `q` (length `n`).
    pub q: Vec<f64>,
    /// Friction coefficients (length `nc`).
    pub mu: Vec<f64>,
    /// Space dimension, the unknowns per contact: 3, or 2 for planar problems (Siconos' fc2d
    /// files, fclib `spacedim` 2).
    pub spacedim: usize,
}

impl FrictionProblem {
    /// Build the cpbench instance: `N = W`, `r = q`, Coulomb cones with `mu`, named
    /// `{stem}__ccp`, with derivation `ccp-relaxation`; for [`ClassChoice::Lcp`] then the
    /// normal block ([`Instance::normal_block_lcp`], name `{stem}__lcp`).
    ///
    /// `provenance` gets `derivation`, and the parameters `sign_convention`, `spacedim` and
    /// `contacts`. Errors: those of [`Instance::new`] with `opts.validation` (e.g.
    /// [`ProblemError::Asymmetric`]), not yet wrapped with a file name.
    pub fn into_instance(
        self,
        stem: &str,
        mut provenance: Provenance,
        opts: &LoadOptions,
    ) -> Result<Instance> {
        provenance.derivation = "ccp-relaxation".into();
        let p = &mut provenance.parameters;
        p.insert("sign_convention".into(), FRICTION_SIGN_CONVENTION.into());
        p.insert("spacedim".into(), self.spacedim.to_string());
        p.insert("contacts".into(), self.mu.len().to_string());
        if opts.class != ClassChoice::Ccp {
            // the Coulomb problem keeps a non-symmetric W as read, and so do the formulations
            // derived from it (the normal block, a general LCP; the BLCP; the pyramid LCP)
            provenance.derivation = "coulomb".into();
            let coulomb = Instance::new_coulomb_dim(
                format!("{stem}__coulomb"),
                self.w,
                self.q,
                self.mu,
                self.spacedim,
                provenance,
                opts.validation,
            )?;
            return opts.class.derive_from(coulomb);
        }
        let ccp = Instance::new(
            format!("{stem}__ccp"),
            self.w,
            self.q,
            ConstraintSet::coulomb_dim(self.mu, self.spacedim),
            provenance,
            opts.validation,
        )?;
        Ok(ccp)
    }
}

/// The HDF5 file signature (found at offset 0, or at 512, 1024, ... after a user block).
const HDF5_MAGIC: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// True when `bytes` hold the HDF5 signature at offset 0 or at a user-block offset
/// (512, 1024, 2048, ...).
fn has_hdf5_magic(bytes: &[u8]) -> bool {
    let mut off = 0usize;
    loop {
        if bytes.len() < off + 8 {
            return false;
        }
        if &bytes[off..off + 8] == HDF5_MAGIC {
            return true;
        }
        off = if off == 0 { 512 } else { off * 2 };
    }
}

/// Detect the format of a file's content (not for bundles, which are directories).
///
/// HDF5 signature => [`Format::FclibHdf5`]; a Siconos global problem (`d nc`, a square
/// NumericsMatrix `M` of any size, then the header of `H`, `type ndof d*nc`:
/// [`siconos_global::detect`]) => [`Format::SiconosGlobal`], also when `bytes` are at least
/// [`HEAD_BYTES`] long and end inside an `M` whose size is not `d nc`; otherwise the first four
/// whitespace-separated tokens of a Siconos `.dat` text decide ([`siconos::detect`]):
/// `d nc type size0` with `d in {2, 3}`, `type in {0, 1, 2}` and `size0 = d * nc` is a
/// friction problem, `n type size0 size1` with `size0 = size1 = n` an LCP. Returns `None` when
/// neither matches.
pub fn detect_format_bytes(bytes: &[u8]) -> Option<Format> {
    if has_hdf5_magic(bytes) {
        return Some(Format::FclibHdf5);
    }
    if bytes.starts_with(npz::ZIP_MAGIC) || bytes.starts_with(npz::EMPTY_ZIP_MAGIC) {
        return Some(Format::Npz);
    }
    if siconos_global::detect(bytes)
        || (bytes.len() as u64 >= HEAD_BYTES && siconos_global::cut_head_is_global(bytes))
    {
        return Some(Format::SiconosGlobal);
    }
    siconos::detect(bytes)
}

/// Detect the format of `path`: a directory is a [`Format::Bundle`]; a file is classified by
/// its content with [`detect_format_bytes`] (the extension is not used).
///
/// Errors: [`ProblemError::Io`] when the path cannot be read, [`ProblemError::UnknownFormat`]
/// when the content matches no format.
///
/// Only the first [`HEAD_BYTES`] of a file are read. Errors also: a path that is neither a
/// directory nor a regular file (a device such as `/dev/zero`, a FIFO), and for a text that
/// looks like a Siconos `.dat` but whose header is wrong, the [`siconos::diagnose`] error
/// (file, line and token) instead of [`ProblemError::UnknownFormat`].
pub fn detect_format(path: &Path) -> Result<Format> {
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if meta.is_dir() {
        return Ok(Format::Bundle);
    }
    if !meta.is_file() {
        return Err(not_regular(path));
    }
    let head = read_head(path, HEAD_BYTES)?;
    sniff(path, &head)
}

/// Bytes read from the start of a file to detect its format and check its declared sizes
/// before it is read whole.
pub const HEAD_BYTES: u64 = 64 * 1024;

/// The format of a file from its first bytes `head`; errors as [`detect_format`].
fn sniff(path: &Path, head: &[u8]) -> Result<Format> {
    if let Some(f) = detect_format_bytes(head) {
        return Ok(f);
    }
    if let Some(e) = siconos_global::diagnose(path, head) {
        return Err(e);
    }
    if let Some(e) = siconos::diagnose(path, head) {
        return Err(e);
    }
    if head
        .get(..14)
        .is_some_and(|b| b.eq_ignore_ascii_case(b"%%MatrixMarket"))
    {
        return Err(ProblemError::UnknownFormat {
            path: path.to_path_buf(),
            hint: "a MatrixMarket file holds one matrix, not an instance: put N.mtx, r.mtx and \
                   instance.json in a bundle folder (see `cpbench convert`)"
                .into(),
        });
    }
    Err(unknown(path))
}

/// At most `max` bytes from the start of the file `path`.
pub(crate) fn read_head(path: &Path, max: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    let mut head = Vec::new();
    f.take(max)
        .read_to_end(&mut head)
        .map_err(|e| io_err(path, e))?;
    Ok(head)
}

/// The error for a path that is neither a regular file nor a directory.
pub(crate) fn not_regular(path: &Path) -> ProblemError {
    ProblemError::Parse {
        path: path.to_path_buf(),
        location: None,
        message: "not a regular file (a device, FIFO or socket?): instances are read from \
                  regular files and bundle folders"
            .into(),
    }
}

/// Load an instance from a file or bundle directory of any supported [`Format`] (detected
/// with [`detect_format`] from the first [`HEAD_BYTES`]; a Siconos file whose header declares
/// more numbers than its length can hold is refused before it is read whole,
/// [`siconos::check_declared_size`]).
///
/// The instance name is the file stem plus `__ccp`/`__lcp` for frictional files (the stem
/// alone for LCP files, the stored name for bundles); `provenance.source` is `path` as given.
/// Errors: see the module documentation; validation errors are wrapped in
/// [`ProblemError::InFile`] naming `path`.
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Instance> {
    load_with(path, opts, GlobalForm::Condensed)
}

/// [`load`], with global friction problems read in the form `global` asks
/// ([`GlobalForm::MatrixFree`]: `M` and `H` kept, for `--class ccp` and `coulomb`; other
/// files and classes as [`load`]). Errors: those of [`load`]; for the matrix-free form of a global file,
/// [`ProblemError::MassNotPositiveDefinite`] wrapped in [`ProblemError::InFile`].
pub fn load_with(path: &Path, opts: &LoadOptions, global: GlobalForm) -> Result<Instance> {
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if meta.is_dir() {
        return with_class(read_bundle(path, opts.validation)?, opts, path);
    }
    if !meta.is_file() {
        return Err(not_regular(path));
    }
    // format and declared sizes from the first bytes, before the file is read whole
    let head = read_head(path, HEAD_BYTES)?;
    let mut format = sniff(path, &head)?;
    if matches!(format, Format::SiconosFc3d | Format::SiconosLcp) {
        siconos::check_declared_size(path, &head, meta.len())?;
    }
    if format == Format::SiconosGlobal {
        siconos_global::check_declared_size(path, &head, meta.len())?;
    }
    if format == Format::Npz {
        let file = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
        if let Some(p) = npz::read_contactbench_from(std::io::BufReader::new(file), path)? {
            return contactbench_instance(p, path, opts);
        }
        // streamed from the file: no second copy of the whole archive
        return with_class(npz::read_npz(path, opts.validation)?, opts, path);
    }
    let bytes = std::fs::read(path).map_err(|e| io_err(path, e))?;
    // a global file whose M (of size d nc) runs past the head reads like an fc3d header: look
    // at the whole text
    if format == Format::SiconosFc3d
        && (head.len() as u64) < meta.len()
        && siconos_global::detect(&bytes)
    {
        format = Format::SiconosGlobal;
    }
    load_impl(path, &bytes, format, opts, global)
}

/// Load an instance from the bytes of a file (e.g. embedded with `include_bytes!`) in the
/// given `format`. `file_name` is used for the instance name (its stem) and in error messages,
/// and becomes `provenance.source`.
///
/// Errors as [`load`]; [`ProblemError::UnknownFormat`] for [`Format::Bundle`] (a bundle is a
/// directory: use [`read_bundle`]).
pub fn load_bytes(
    file_name: &str,
    bytes: &[u8],
    format: Format,
    opts: &LoadOptions,
) -> Result<Instance> {
    load_impl(
        Path::new(file_name),
        bytes,
        format,
        opts,
        GlobalForm::Condensed,
    )
}

/// [`load_bytes`] with global friction problems read in the form `global` asks
/// ([`load_with`]).
pub fn load_bytes_with(
    file_name: &str,
    bytes: &[u8],
    format: Format,
    opts: &LoadOptions,
    global: GlobalForm,
) -> Result<Instance> {
    load_impl(Path::new(file_name), bytes, format, opts, global)
}

/// A stored instance read as `opts.class` asks: a CCP as its normal-block LCP (`lcp`) or as
/// the Coulomb problem (`coulomb`), a CCP or Coulomb problem as its BLCP (`blcp`) or pyramid
/// LCP (`lcp-pyramid:k`, also from a BLCP); any other pairing as stored.
/// The instance of a ContactBench problem file ([`npz::read_contactbench_from`]), like a
/// Siconos fc3d file's: the CCP by default, the class of `opts` otherwise; provenance format
/// `contactbench`.
fn contactbench_instance(p: FrictionProblem, path: &Path, opts: &LoadOptions) -> Result<Instance> {
    let prov = Provenance {
        source: path.display().to_string(),
        format: "contactbench".into(),
        ..Provenance::default()
    };
    p.into_instance(&file_stem(path), prov, opts)
        .map_err(|e| e.in_file(path))
}

fn with_class(inst: Instance, opts: &LoadOptions, path: &Path) -> Result<Instance> {
    use crate::ProblemClass as P;
    match (opts.class, inst.class()) {
        (ClassChoice::Lcp | ClassChoice::Coulomb, P::Ccp)
        | (ClassChoice::Blcp, P::Ccp | P::Coulomb)
        | (ClassChoice::LcpPyramid { .. }, P::Ccp | P::Coulomb | P::Blcp) => {
            opts.class.derive_from(inst).map_err(|e| e.in_file(path))
        }
        _ => Ok(inst),
    }
}

fn load_impl(
    path: &Path,
    bytes: &[u8],
    format: Format,
    opts: &LoadOptions,
    global: GlobalForm,
) -> Result<Instance> {
    let stem = file_stem(path);
    let mut prov = Provenance {
        source: path.display().to_string(),
        ..Provenance::default()
    };
    let keep_global = global == GlobalForm::MatrixFree
        && matches!(opts.class, ClassChoice::Ccp | ClassChoice::Coulomb);
    // the CCP on `M` and `H`, or the Coulomb problem on the same storage (its `W` is symmetric)
    let kept = |g: GlobalProblem, prov: Provenance| {
        let ccp = g.into_matrix_free(&stem, prov);
        match opts.class {
            ClassChoice::Coulomb => ccp.and_then(Instance::into_coulomb),
            _ => ccp,
        }
        .map_err(|e| e.in_file(path))
    };
    if keep_global && format == Format::FclibHdf5 {
        if let Some((g, notes)) = fclib::read_fclib_global(path, bytes)? {
            prov.format = FclibKind::Global.format_name().into();
            prov.parameters.extend(notes);
            return kept(g, prov);
        }
    }
    if keep_global && format == Format::SiconosGlobal {
        let g = siconos_global::read_global(path, bytes)?;
        prov.format = "siconos-global".into();
        prov.parameters.extend(g.notes);
        let g = GlobalProblem {
            m: g.m,
            h: g.h,
            f: g.q,
            w: g.b,
            mu: g.mu,
            spacedim: g.spacedim,
        };
        return kept(g, prov);
    }
    match format {
        Format::Bundle => Err(ProblemError::UnknownFormat {
            path: path.to_path_buf(),
            hint: "a bundle is a directory (N.mtx, r.mtx, instance.json); use read_bundle".into(),
        }),
        Format::Npz => {
            if let Some(p) = npz::read_contactbench_from(std::io::Cursor::new(bytes), path)? {
                return contactbench_instance(p, path, opts);
            }
            let inst = npz::read_npz_from(std::io::Cursor::new(bytes), path, opts.validation)?;
            with_class(inst, opts, path)
        }
        Format::FclibHdf5 | Format::SiconosFc3d => {
            let (problem, notes) = if let Format::FclibHdf5 = format {
                let f = fclib::read_fclib(path, bytes)?;
                prov.format = f.kind.format_name().into();
                (f.problem, f.notes)
            } else {
                let p = siconos::read_fc3d(path, bytes)?;
                prov.format = "siconos-fc3d".into();
                (p.problem, p.notes)
            };
            prov.parameters.extend(notes);
            problem
                .into_instance(&stem, prov, opts)
                .map_err(|e| e.in_file(path))
        }
        Format::SiconosGlobal => {
            let g = siconos_global::read_siconos_global(path, bytes)?;
            prov.format = "siconos-global".into();
            prov.parameters.extend(g.notes);
            g.problem
                .into_instance(&stem, prov, opts)
                .map_err(|e| e.in_file(path))
        }
        Format::SiconosLcp => {
            let p = siconos::read_lcp(path, bytes)?;
            prov.format = "siconos-lcp".into();
            prov.derivation = "as-is".into();
            prov.parameters.extend(p.notes);
            prov.parameters.insert(
                "sign_convention".into(),
                "w = M z + q, g = N gamma + r with N = M, r = q".into(),
            );
            Instance::new(
                stem,
                p.m,
                p.q,
                ConstraintSet::NonNegative,
                prov,
                opts.validation,
            )
            .map_err(|e| e.in_file(path))
        }
    }
}

/// File name without its last extension (`a.hdf5.dat` -> `a.hdf5`); the whole name when it has
/// no extension, `"instance"` when there is no file name at all. The readers name an instance
/// read from `path` with it.
pub fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "instance".into())
}

pub(crate) fn io_err(path: &Path, source: std::io::Error) -> ProblemError {
    ProblemError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn unknown(path: &Path) -> ProblemError {
    ProblemError::UnknownFormat {
        path: path.to_path_buf(),
        hint: "expected a bundle directory, an fclib HDF5 file (HDF5 signature), a cpbench \
               .npz (ZIP signature) or a Siconos .dat text (`d nc type size ...` for fc3d, `d nc` then matrices M and H for a \
               global problem, `n type size ...` for an LCP)"
            .into(),
    }
}

/// True when a matrix dimension `d` read from a file of `file_len` bytes is plausible:
/// `d <= max(2^24, 8 file_len)`. Larger dimensions come from corrupt headers; rejecting them
/// avoids allocating gigabytes for index arrays before the data is found to be missing.
pub(crate) fn plausible_dim(d: usize, file_len: usize) -> bool {
    d <= (1usize << 24).max(file_len.saturating_mul(8))
}

/// Reader notes, key to value, that end up in `Provenance::parameters` (e.g. `condensed`,
/// `m_factorization`, `m_upper_triangle_symmetrized`, `dof`): filled by the readers, by
/// [`condense::condense`] and by [`fclib::symmetrize_triangle`].
pub type Notes = BTreeMap<String, String>;

/// Build a [`ProblemError::Parse`] for `path` at `location`.
pub(crate) fn perr(
    path: &Path,
    location: impl Into<String>,
    msg: impl Into<String>,
) -> ProblemError {
    ProblemError::Parse {
        path: PathBuf::from(path),
        location: Some(location.into()),
        message: msg.into(),
    }
}
