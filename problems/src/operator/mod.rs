//! How an instance stores its operator `N` (the Delassus matrix), and the automatic choice
//! between the storages.
//!
//! - [`OperatorKind::Csc`]: compressed sparse columns, full symmetric storage, `usize` indices
//!   (16 bytes per stored entry). Fastest on small instances, bit-identical to earlier results.
//! - [`OperatorKind::Block`]: symmetric block-sparse storage (3x3 blocks for 3-D cones, 2x2 for
//!   2-D (planar) cones, 1x1 for LCP and box QP), upper triangle only, `u32` block indices
//!   (about 76 bytes per stored 3x3 block, i.e. 4.2 bytes per entry of `N`; 36 bytes per 2x2
//!   block, 4.5 bytes per entry).
//! - [`OperatorKind::MatrixFree`]: `N = D^T M^-1 D` applied from `D` and `M`, never formed.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The storage behind an instance's `N`-products.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OperatorKind {
    /// Full symmetric compressed sparse columns.
    #[default]
    Csc,
    /// Upper-triangle block-sparse symmetric storage.
    Block,
    /// `D^T M^-1 D` from the factors.
    MatrixFree,
}

impl OperatorKind {
    /// The name used on the command line, in `info` and in manifests: `csc`, `block`,
    /// `matrix-free`.
    pub fn as_str(self) -> &'static str {
        match self {
            OperatorKind::Csc => "csc",
            OperatorKind::Block => "block",
            OperatorKind::MatrixFree => "matrix-free",
        }
    }

    /// The storage of a name ([`OperatorKind::as_str`]); `None` for any other text.
    pub fn parse(s: &str) -> Option<OperatorKind> {
        [
            OperatorKind::Csc,
            OperatorKind::Block,
            OperatorKind::MatrixFree,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

impl fmt::Display for OperatorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

mod block;
pub use block::{check_block_size, BlockSymMatrix, WholeRows, BLOCK_MIN_NNZ, BLOCK_SIZES};
mod matfree;
pub use matfree::{MassInverse, MatrixFree, MAX_MASS_BLOCK};
