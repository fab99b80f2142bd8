//! Projected SOR / projected Gauss-Seidel for the general LCP `w = M z + q >= 0, z >= 0,
//! z^T w = 0` with a square, possibly non-symmetric `M` (cpbench: `M = N`, `q = r`,
//! `z = gamma`); docs/formulation.md, "PSOR for the general LCP".
//!
//! One sweep, rows `i = 0..n` in order, with the latest values of `z`:
//!
//! ```text
//! z_i <- max(0, z_i - omega (M z + q)_i / M_ii)
//! ```
//!
//! Cryer (1971), "The solution of a quadratic programming problem using systematic
//! overrelaxation", SIAM J. Control 9, 385-392; Cottle, Pang & Stone (1992), "The Linear
//! Complementarity Problem", section 5.2 (Algorithm 5.2.1 with `E = diag(M)^-1`). Convergence:
//! for a symmetric positive definite `M` and `omega in (0, 2)` the iterates converge to the
//! solution (Cryer; CPS Theorem 5.2.?: the sweep is a descent method for the QP); for a
//! non-symmetric `M` CPS section 5.2 gives convergence for an H-matrix with positive diagonal
//! (e.g. strictly diagonally dominant) and `omega` small enough (`omega <= 1` always works
//! there); on other matrices the method may diverge or cycle, which the executor reports.
//!
//! Rows are read along the columns of [`cpbench_problems::Instance::row_matrix`] (row `i` of
//! `M` is its column `i`) through [`crate::kernels::RowSource`], so the sweep allocates
//! nothing; it is counted as one product (`FirstOrder` cost model). On a symmetric `M` with
//! `omega = 1` the arithmetic is that of `pgs` on an LCP, so the iterates are the same bit for
//! bit. `M` must have a positive diagonal: [`Psor::refusal`] refuses an instance with any
//! `M_ii <= 0` (the update divides by it).

use crate::coloured::{ColouredSweep, SweepOrder};
use crate::kernels::RowSource;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::{Instance, ProblemClass};
use serde::{Deserialize, Serialize};

/// Settings of [`Psor`]. Default: `omega = 1` (projected Gauss-Seidel).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PsorSettings {
    /// Relaxation `omega`, in `(0, 2)`.
    pub omega: f64,
    /// Sweep order, `sequential` (the default), `coloured` or `auto` (coloured from 50,000
    /// rows on).
    /// `sequential`: row order. `coloured`: colour after colour of the graph of `M`'s
    /// pattern, the rows of a colour in parallel ([`crate::coloured`]): other iterates than
    /// `sequential`, the same for any number of threads; on the block storage its rows come
    /// from a whole-row copy of `M` in colour order, about the storage's memory again
    /// (counter `colour_layout`; over the memory limit the copy is skipped and the solve's
    /// message says so).
    pub sweep: SweepOrder,
}

impl Default for PsorSettings {
    fn default() -> Self {
        Self {
            omega: 1.0,
            sweep: SweepOrder::Sequential,
        }
    }
}

impl SolverSettings for PsorSettings {
    const SOLVER: &'static str = "psor";

    fn check(&self, v: &mut Validator) {
        v.in_open("omega", self.omega, 0.0, 2.0);
    }
}

/// PSOR for the general LCP ([`ProblemClass::Lcp`] only).
#[derive(Clone, Debug)]
pub struct Psor {
    settings: PsorSettings,
    /// `omega / M_ii` per row.
    step: Vec<f64>,
    rows: cpbench_problems::RowState,
    /// The colouring when the sweep goes by colours ([`PsorSettings::sweep`]).
    coloured: Option<ColouredSweep>,
}

impl Psor {
    /// A PSOR solver; errors on invalid settings.
    pub fn new(settings: PsorSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            step: Vec::new(),
            rows: Default::default(),
            coloured: None,
        })
    }
}

/// The first row `i` with `M_ii <= 0` (or not finite) and its value.
fn first_nonpositive_diagonal(inst: &Instance) -> Option<(usize, f64)> {
    (0..inst.n())
        .map(|i| (i, inst.diag_block(i)[0]))
        .find(|&(_, d)| !(d > 0.0))
}

impl Solver for Psor {
    fn name(&self) -> &'static str {
        "psor"
    }

    /// Any square `M` (and so, by the trait's default, the LCP class alone).
    fn solves_general_lcp(&self) -> bool {
        true
    }

    fn refusal(&self, instance: &Instance) -> Option<String> {
        if instance.class() != ProblemClass::Lcp {
            return None;
        }
        first_nonpositive_diagonal(instance).map(|(i, d)| {
            format!(
                "psor divides by the diagonal of M, and M[{i}][{i}] = {d:e} is not positive \
                 (use newton-fb or a pivoting method)"
            )
        })
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        if let Some(reason) = self.refusal(inst) {
            return Err(SolverError::Refused(reason));
        }
        let omega = self.settings.omega;
        self.step = (0..inst.n())
            .map(|i| omega / inst.diag_block(i)[0])
            .collect();
        self.coloured = self
            .settings
            .sweep
            .is_coloured(inst.n())
            .then(|| ColouredSweep::new(inst, 1, problem.memory_limit()));
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let z = &mut state.gamma;
        if self.coloured.is_some() {
            inst.refresh_row_state(z, &mut self.rows);
        } else {
            inst.begin_ordered_sweep(z, &mut self.rows);
        }
        let rows = RowSource::new(inst);
        if let Some(col) = self.coloured.as_mut() {
            // the rows of a colour from the values of the colours before (the same arithmetic)
            let step = &self.step;
            col.sweep(z, &rows, &mut self.rows, |row, out| {
                let i = row.block();
                let mut g = [0.0f64; 1];
                row.gather(&mut g);
                out[0] = (row.gamma()[i] - step[i] * g[0]).max(0.0);
                0
            });
            problem.add_matvecs(1);
            return Ok(StepOutcome::Continue);
        }
        let mut g = [0.0f64; 1];
        for (i, &t) in self.step.iter().enumerate() {
            rows.gather(&self.rows, z, i, &mut g);
            let old = z[i];
            // the same expressions as `pgs` (`x - t g`, then `max(x, 0)`)
            let zi = (old - t * g[0]).max(0.0);
            z[i] = zi;
            if rows.tracks_changes() {
                rows.changed(i, &[zi - old], &mut self.rows);
            }
            rows.done(i, z, &mut self.rows);
        }
        crate::kernels::debug_assert_ordered(inst, &self.rows, self.step.len());
        problem.add_matvecs(1);
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        self.coloured
            .as_ref()
            .map_or_else(Vec::new, |col| col.counters().to_vec())
    }

    fn message(&self) -> Option<String> {
        self.coloured
            .as_ref()
            .and_then(|col| col.note())
            .map(str::to_string)
    }
}
