//! # cpbench-problems
//!
//! Instances of the complementarity problems of contact dynamics, their constraint sets and
//! projections, the one residual module, and readers/writers for the file formats of other
//! projects (fclib HDF5, Siconos `.dat`, MatrixMarket bundles).
//!
//! Every problem is `min f(gamma) = 1/2 gamma^T N gamma + r^T gamma` over `gamma in K`, with `N`
//! the symmetric positive semidefinite Delassus matrix and `K` one of the sets of
//! [`ConstraintSet`] (docs/formulation.md sections 2-4).
#![deny(missing_docs)]

pub mod colouring;
pub mod constraints;
pub mod derive;
pub mod error;
pub mod fidelity;
pub mod generators;
pub mod instance;
pub mod io;
pub mod json;
pub mod linalg;
pub mod memory;
pub mod operator;
pub mod residual;
pub mod rng;

pub use constraints::{ConicPiece, ConstraintSet, ProblemClass, SetFamily};
pub use error::{ProblemError, Result};
pub use fidelity::{fidelity, Fidelity};
pub use instance::{
    CompactOperator, Definiteness, Instance, Provenance, RowState, ValidationOptions,
};
pub use linalg::CscMatrix;
pub use operator::OperatorKind;
pub use residual::{residuals, ResidualKind, ResidualWorkspace, Residuals};
