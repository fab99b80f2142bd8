//! The problem as a solver sees it: an [`Instance`] behind an operator that counts
//! `N`-products (argmin's counting wrapper). Solvers must obtain every product through it, so
//! that methods are compared by work, not only by iterations.

use cpbench_problems::{ConstraintSet, Instance};
use std::cell::Cell;
use std::time::{Duration, Instant};

/// An instance plus a product counter. Not `Sync`: one solve runs on one thread (parallel runs
/// each own a `Problem`); the product itself may still use the rayon pool.
pub struct Problem<'a> {
    instance: &'a Instance,
    matvecs: Cell<u64>,
    deadline: Cell<Option<Instant>>,
    memory_limit: Option<u64>,
    tol: Option<f64>,
    residual: Cell<f64>,
}

impl<'a> Problem<'a> {
    /// Wrap an instance with a zeroed counter.
    pub fn new(instance: &'a Instance) -> Self {
        Self {
            instance,
            matvecs: Cell::new(0),
            deadline: Cell::new(None),
            memory_limit: None,
            tol: None,
            residual: Cell::new(f64::NAN),
        }
    }

    /// The instance.
    pub fn instance(&self) -> &'a Instance {
        self.instance
    }

    /// The constraint set `K`.
    pub fn constraints(&self) -> &'a ConstraintSet {
        self.instance.constraints()
    }

    /// `n`.
    pub fn n(&self) -> usize {
        self.instance.n()
    }

    /// `y = N x` (counted). Shapes: `n`.
    #[inline]
    pub fn matvec(&self, x: &[f64], y: &mut [f64]) {
        self.matvecs.set(self.matvecs.get() + 1);
        self.instance.matvec(x, y);
    }

    /// `g = N x + r` (counted as one product). Shapes: `n`.
    #[inline]
    pub fn gradient(&self, x: &[f64], g: &mut [f64]) {
        self.matvecs.set(self.matvecs.get() + 1);
        self.instance.gradient(x, g);
    }

    /// Record `k` products done outside [`Problem::matvec`] (e.g. one Gauss-Seidel sweep, which
    /// touches every column of `N` once, counts as one product).
    pub fn add_matvecs(&self, k: u64) {
        self.matvecs.set(self.matvecs.get() + k);
    }

    /// Products counted so far.
    pub fn matvecs(&self) -> u64 {
        self.matvecs.get()
    }

    /// Largest eigenvalue of `N` by `iters` power iterations from the all-ones vector
    /// (counted as `iters` products).
    pub fn lambda_max(&self, iters: usize) -> f64 {
        self.add_matvecs(iters as u64);
        self.instance.power_iteration(iters)
    }

    /// Set the instant by which the current call into the solver (`init` or `step`) must
    /// return; the executor sets it from its time budget (`ExecSettings::max_time_s`) before
    /// each call, `None` without a budget. Solvers with long indivisible operations (a
    /// factorisation) compare their predicted duration with [`Problem::time_left`].
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        self.deadline.set(deadline);
    }

    /// The deadline set by [`Problem::set_deadline`] (`None`: no time budget).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline.get()
    }

    /// Time left until the deadline (zero once it has passed); `None` without a budget.
    pub fn time_left(&self) -> Option<Duration> {
        self.deadline
            .get()
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// Set the memory budget in bytes for the solver's own large allocations (factors,
    /// assembled matrices); the executor sets it from `ExecSettings::max_memory_bytes` before
    /// `init`. `None`: no budget.
    pub fn set_memory_limit(&mut self, bytes: Option<u64>) {
        self.memory_limit = bytes;
    }

    /// The memory budget in bytes (`None`: no budget).
    pub fn memory_limit(&self) -> Option<u64> {
        self.memory_limit
    }

    /// Set the tolerance the executor stops at (`ExecSettings::tol`, on its stopping
    /// residual); the executor sets it before `init`. Solvers must not stop on it (the
    /// executor owns stopping); a hybrid may use it to judge whether its current phase is about
    /// to finish. `None`: unknown.
    pub fn set_tol(&mut self, tol: Option<f64>) {
        self.tol = tol;
    }

    /// The tolerance set by [`Problem::set_tol`] (`None`: unknown).
    pub fn tol(&self) -> Option<f64> {
        self.tol
    }

    /// Record the executor's stopping residual of the current iterate (the start before
    /// `init`, then after every step).
    pub fn set_residual(&self, value: f64) {
        self.residual.set(value);
    }

    /// The executor's stopping residual of the iterate the next `step` starts from (NaN when
    /// the solver runs outside the executor). Like [`Problem::tol`], for a hybrid's judgement
    /// of its progress, never for stopping.
    pub fn residual(&self) -> f64 {
        self.residual.get()
    }
}
