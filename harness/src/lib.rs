//! # cpbench-harness
//!
//! Runs solver x instance matrices, checks every answer itself (recomputing the residuals from
//! the problem data, never trusting a solver's status), and writes tidy CSV, traces, a
//! manifest and convergence plots. Modelled on qpbenchmark (test sets x solvers x settings,
//! "success" vs claimed status) and argmin's observers.
//!
//! ## Module layout
//!
//! The harness modules depend on each other as a DAG (an arrow reads "uses"; every module may
//! also use [`error`] and [`fsutil`]):
//!
//! ```text
//! results, plot, check, generate           (leaves: CSV files, drawing, the check, export)
//! generate_planar -> generate              planar (2-D, fc2d) scenes' export
//! bandwidth, memory                        (leaves: triad bandwidth, peak resident memory)
//! manifest  -> (none)                      typed manifest.json, Profile, Shard
//! lock      -> manifest                    folder lock (its start time)
//! suite     -> generate                    instance suites
//! names     -> results                     file stems, trace and plot paths
//! order     -> manifest, results           canonical row order
//! table     -> results                     terminal summary table
//! figures   -> names, plot, results        convergence plots, row groups, labels
//! regression -> results                    baseline comparison
//! solve     -> check                      one checked solve (the CLI's rows, Python's solve)
//! run       -> bandwidth, figures, lock, manifest, memory, names, order, results, solve
//! scale     -> manifest, order, run         the `scale` suite (pyramids, .npz cache)
//! merge     -> figures, lock, manifest, names, order, results
//! report    -> figures, lock, manifest, names, order, plot, regression, results
//! ```
//!
//! `run`, `merge` and `report` use none of each other.
#![deny(missing_docs)]

pub mod bandwidth;
pub mod check;
pub mod closed_loop;
pub mod error;
pub mod figures;
pub mod fsutil;
pub mod generate;
pub mod generate_planar;
pub use cpbench_problems::json;
pub mod load;
pub mod lock;
pub mod manifest;
pub mod memory;
pub mod merge;
pub mod names;
pub mod order;
pub mod plot;
pub mod regression;
pub mod report;
pub mod request;
pub mod results;
pub mod run;
pub mod scale;
pub mod simout;
pub mod solve;
pub mod suite;
pub mod table;
pub mod trajectory;
pub mod trajectory_plot;
pub mod trajectory_suite;
pub mod variants;

pub use error::{HarnessError, Result};
pub use run::{run, Profile, RunConfig, Shard, SolverSpec};
pub use suite::Suite;
