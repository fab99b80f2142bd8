//! # cpbench-harness
//!
//! Runs solver x instance matrices, checks every answer itself (recomputing the residuals from
//! the problem data, never trusting a solver's status), and writes tidy CSV, traces, a
//! manifest and convergence plots. Modelled on qpbenchmark (test sets x solvers x settings,
//! "success" vs claimed status) and argmin's observers.
#![warn(missing_docs)]

pub mod check;
pub mod error;
pub mod fsutil;
pub mod generate;
pub mod lock;
pub mod manifest;
pub mod merge;
pub mod names;
pub mod plot;
pub mod regression;
pub mod report;
pub mod results;
pub mod run;
pub mod suite;

pub use error::{HarnessError, Result};
pub use run::{run, Profile, RunConfig, Shard, SolverSpec};
pub use suite::Suite;
