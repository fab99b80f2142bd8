//! The outcome of one solve, produced by the [`crate::Executor`] and handed to every
//! [`crate::Observer`] (its own module, so that the executor and the observers both depend on
//! it and not on each other).

use crate::status::Status;
use cpbench_problems::Residuals;

/// Outcome of one solve.
#[derive(Clone, Debug)]
pub struct SolveResult {
    /// Solver name.
    pub solver: String,
    /// Claimed status.
    pub status: Status,
    /// The best iterate seen (smallest stopping residual), length `n`.
    pub gamma: Vec<f64>,
    /// All residuals of `gamma`, computed by the residual module.
    pub residuals: Residuals,
    /// Iteration at which `gamma` was produced (0 = the start point).
    pub best_iteration: u64,
    /// Iterations run.
    pub iterations: u64,
    /// `N`-products counted (solver work only; monitoring products are not counted).
    pub matvecs: u64,
    /// Solver time in seconds (init + steps; monitoring excluded).
    pub time_s: f64,
    /// Solver-specific counters at the end.
    pub counters: Vec<(String, f64)>,
    /// Error message when the solver failed, or the solver's own end-of-run message
    /// ([`crate::Solver::message`]).
    pub message: Option<String>,
}
