//! Iteration state kept by the executor, outside the solver (argmin's design): the current
//! iterate, and optionally its gradient when the solver has it fresh.

/// The state a solver's `init` and `step` update.
#[derive(Clone, Debug)]
pub struct IterState {
    /// Current iterate `gamma` (length `n`). After `step`, the solver's new candidate answer.
    pub gamma: Vec<f64>,
    /// Gradient `g = N gamma + r` at `gamma`, valid only when `grad_fresh` is true.
    pub grad: Vec<f64>,
    /// Set by a solver that computed `grad` as a fresh product `N gamma + r` in this step
    /// (not by a recurrence, whose rounding drift would make the monitored residual unchecked).
    /// The executor then skips its own monitoring product. Reset to `false` before each step.
    pub grad_fresh: bool,
    /// Iterations completed.
    pub iteration: u64,
}

impl IterState {
    /// State at `gamma0`.
    pub fn new(gamma0: Vec<f64>) -> Self {
        let n = gamma0.len();
        Self {
            gamma: gamma0,
            grad: vec![0.0; n],
            grad_fresh: false,
            iteration: 0,
        }
    }
}
