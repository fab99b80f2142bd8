//! Typed errors of the `problems` crate.
//!
//! Every error names what is wrong and where (file, row, column, contact index), so that a user
//! who feeds a malformed file gets a message that points at the defect instead of a panic.

use std::path::PathBuf;

/// Errors raised while building, validating, reading or writing an [`crate::Instance`].
#[derive(Debug, thiserror::Error)]
pub enum ProblemError {
    /// The matrix is not square.
    #[error("matrix is not square: {nrows} x {ncols}")]
    NotSquare {
        /// Number of rows.
        nrows: usize,
        /// Number of columns.
        ncols: usize,
    },
    /// Two objects that must have matching sizes do not.
    #[error("size mismatch: {what} has length {found}, expected {expected}")]
    SizeMismatch {
        /// What has the wrong size (e.g. "r", "mu", "lo").
        what: String,
        /// Expected length.
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// A matrix entry or vector component is NaN or infinite.
    #[error("non-finite value {value} in {what} at {position}")]
    NonFinite {
        /// Which object ("N", "r", "mu", ...).
        what: String,
        /// Position, e.g. `(3, 7)` or `[12]`.
        position: String,
        /// The offending value.
        value: f64,
    },
    /// A formulation or array predicted to need more memory than the budget
    /// ([`crate::memory::check`]): refused before it is allocated.
    #[error("{message}")]
    OverBudget {
        /// What would be built.
        what: String,
        /// Predicted bytes.
        bytes: u64,
        /// The budget in bytes.
        limit: u64,
        /// The whole sentence (predicted size, budget, its source, what to change).
        message: String,
    },
    /// A value that must be positive (a mass) is zero or negative.
    #[error("{what} at {position} is {value}: expected a positive value")]
    NotPositive {
        /// Which object (`M (diagonal)`).
        what: String,
        /// Position, e.g. `[12]`.
        position: String,
        /// The offending value.
        value: f64,
    },
    /// An index lies outside the declared dimensions.
    #[error("index out of range in {what}: ({row}, {col}) for a {nrows} x {ncols} matrix")]
    IndexOutOfRange {
        /// Which object.
        what: String,
        /// Row index (0-based).
        row: usize,
        /// Column index (0-based).
        col: usize,
        /// Declared rows.
        nrows: usize,
        /// Declared columns.
        ncols: usize,
    },
    /// The matrix is not symmetric within the tolerance; `--symmetrize` replaces it by `(N + N^T)/2`.
    #[error(
        "matrix is not symmetric: ||N - N^T||_F / ||N||_F = {relative:.3e} > tolerance {tol:.1e}; \
         largest difference {max_abs:.3e} at ({row}, {col}) (use --symmetrize to replace N by (N + N^T)/2)"
    )]
    Asymmetric {
        /// Relative Frobenius asymmetry.
        relative: f64,
        /// Tolerance that was exceeded.
        tol: f64,
        /// Largest `|N_ij - N_ji|`.
        max_abs: f64,
        /// Row of the largest difference.
        row: usize,
        /// Column of the largest difference.
        col: usize,
    },
    /// An entry of a diagonal compliance `R` is negative ([`crate::Instance::with_compliance`]).
    #[error("compliance R at row {row} is {value}: expected a value >= 0")]
    NegativeCompliance {
        /// Row index (0-based).
        row: usize,
        /// The value.
        value: f64,
    },
    /// A friction coefficient is negative.
    #[error("negative friction coefficient mu = {value} at contact {contact}")]
    NegativeMu {
        /// Contact index (0-based).
        contact: usize,
        /// The value.
        value: f64,
    },
    /// More bilateral (joint) blocks than the set has blocks
    /// ([`crate::ConstraintSet::joints`]).
    #[error(
        "joints = {joints} but the set has only {blocks} blocks (joints count the first blocks)"
    )]
    JointCount {
        /// The joint blocks declared.
        joints: usize,
        /// The blocks of the set (`n / dim`).
        blocks: usize,
    },
    /// A joint (bilateral) block with a nonzero friction coefficient: joints have no friction,
    /// their `mu` is stored as 0.
    #[error(
        "joint block {block} has mu = {value}: a bilateral block has no friction (mu must be 0)"
    )]
    JointFriction {
        /// Block index (0-based, `< joints`).
        block: usize,
        /// The value.
        value: f64,
    },
    /// An instance with bilateral (joint) blocks given to something that cannot express or
    /// take equality rows (a file format, a derived formulation).
    #[error("{what} cannot take bilateral (joint) rows: {reason}")]
    JointsUnsupported {
        /// The format or operation (`fclib`, `siconos .dat`, `--class blcp`, ...).
        what: String,
        /// Why not.
        reason: String,
    },
    /// A box has `lo > hi`.
    #[error("empty box at index {index}: lo = {lo} > hi = {hi}")]
    EmptyBox {
        /// Component index.
        index: usize,
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// Coulomb cones need 3 unknowns per contact.
    #[error("Coulomb cones need 3 unknowns per contact, but n = {n} is not a multiple of 3")]
    NotMultipleOfThree {
        /// Problem size.
        n: usize,
    },
    /// 2-D Coulomb cones need 2 unknowns per contact (normal, tangent).
    #[error("{dim}-D Coulomb cones need {dim} unknowns per contact, but n = {n} is not a multiple of {dim}")]
    NotMultipleOfConeDim {
        /// Problem size.
        n: usize,
        /// Cone dimension (unknowns per contact).
        dim: usize,
    },
    /// A block size the symmetric block storage ([`crate::operator::BlockSymMatrix`]) does
    /// not take.
    #[error("block size {found} is not supported by the block storage (expected {expected})")]
    UnsupportedBlockSize {
        /// The block size given.
        found: usize,
        /// The block sizes taken, in words.
        expected: String,
    },
    /// A cone dimension other than 2 or 3.
    #[error("cone dimension {dim} is not supported (2 or 3 unknowns per contact)")]
    UnsupportedConeDim {
        /// The dimension given.
        dim: usize,
    },
    /// The operation needs a frictional (Coulomb-cone) instance.
    #[error("operation needs a {expected} instance, found {found}")]
    WrongClass {
        /// Class needed.
        expected: String,
        /// Class found.
        found: String,
    },
    /// A file could not be parsed.
    #[error("{}: {message}{}", path.display(), location.as_ref().map(|l| format!(" (at {l})")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line, token or HDF5 object where the problem was found.
        location: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// An HDF5 dataset declares more data than the whole file holds (a truncated or corrupt
    /// file): refused before anything is allocated or read.
    #[error(
        "{}: HDF5 dataset {dataset} declares {declared_bytes} bytes of data ({elements} \
         elements), more than the whole file ({file_bytes} bytes): truncated or corrupt file",
        path.display()
    )]
    DatasetTooLarge {
        /// The file.
        path: PathBuf,
        /// The HDF5 object path of the dataset (e.g. `/fclib_local/W/x`).
        dataset: String,
        /// Number of elements its dataspace declares.
        elements: u64,
        /// Bytes those elements take (elements times the element size).
        declared_bytes: u64,
        /// Length of the file in bytes.
        file_bytes: u64,
    },
    /// A file's data is inconsistent; wraps a validation error with the file name.
    #[error("{}: {source}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: Box<ProblemError>,
    },
    /// The file's format is not recognised.
    #[error("{}: unrecognised format ({hint})", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What was expected.
        hint: String,
    },
    /// An output format name that cpbench does not write ([`crate::io::OutputFormat`]).
    #[error("unknown output format '{value}' (expected one of {expected})")]
    UnknownOutputFormat {
        /// The name given.
        value: String,
        /// The names known.
        expected: String,
    },
    /// A mass matrix `M` given to the matrix-free operator (`N = H^T M^-1 H`,
    /// [`crate::operator::MatrixFree::with_sparse_mass`]) is not symmetric positive definite:
    /// not symmetric, or a Cholesky pivot that is not positive.
    #[error("the mass matrix M ({size} x {size}) is not symmetric positive definite{}: {reason}",
        column.map(|c| format!(" (column {c})")).unwrap_or_default())]
    MassNotPositiveDefinite {
        /// The size of `M`.
        size: usize,
        /// The column of `M` where the failure shows (the failing pivot's column, or the
        /// largest asymmetry's), when known.
        column: Option<usize>,
        /// What failed, with the value.
        reason: String,
    },
    /// A factorisation needed to condense a global problem failed.
    #[error("factorisation failed: {0}")]
    Factorization(String),
    /// A generator parameter is out of its valid range.
    #[error("invalid parameter {name} = {value} of generator {generator}: {reason}")]
    InvalidParameter {
        /// Generator name (e.g. `jbearing2`).
        generator: String,
        /// Parameter name.
        name: String,
        /// The value given.
        value: String,
        /// The valid range.
        reason: String,
    },
    /// The instance cannot be put on the requested operator storage.
    #[error("operator {kind} is not available for this instance: {reason}")]
    OperatorUnavailable {
        /// The requested storage (`csc`, `block`, `matrix-free`).
        kind: String,
        /// Why not.
        reason: String,
    },
    /// A `--class` value (or a suite file's `class`) that names no way of reading a file.
    #[error("invalid class '{value}': {reason} (expected lcp, ccp, coulomb, blcp or lcp-pyramid[:k], k >= 3)")]
    InvalidClass {
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Operating-system I/O error on a file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl ProblemError {
    /// Attach a file name to a validation error (no-op for errors that already name a file).
    pub fn in_file(self, path: impl Into<PathBuf>) -> Self {
        match self {
            e @ (ProblemError::Parse { .. }
            | ProblemError::InFile { .. }
            | ProblemError::DatasetTooLarge { .. }
            | ProblemError::UnknownFormat { .. }
            | ProblemError::Io { .. }) => e,
            e => ProblemError::InFile {
                path: path.into(),
                source: Box::new(e),
            },
        }
    }

    /// Build a [`ProblemError::Parse`].
    pub fn parse(
        path: impl Into<PathBuf>,
        location: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        ProblemError::Parse {
            path: path.into(),
            location,
            message: message.into(),
        }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, ProblemError>;
