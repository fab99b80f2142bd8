//! One checked solve: a solver variant ([`SolverSpec`]: a registry solver with its settings,
//! or a driven one: an external program, a Python callable) run by the executor on one
//! instance, then its answer checked by the harness ([`crate::check::check`]). This is the one
//! solve path: every row of `cpbench run` ([`crate::run()`]) and every call of the Python
//! package's `cpbench.solve` go through [`checked_solve`], so their numbers are the same.

use crate::check::{check, CheckSpec, Verdict};
use crate::error::Result;
use cpbench_problems::{Instance, ResidualKind};
use cpbench_solvers::registry::build;
use cpbench_solvers::{
    DrivenSolver, ExecSettings, Executor, Observer, SolveResult, Solver, SolverError,
};
use std::sync::Arc;

/// A solver variant: a label, the registry solver behind it and its settings (a JSON object
/// of the solver's settings struct; `None` = defaults).
#[derive(Clone, Debug)]
pub struct SolverSpec {
    /// The variant's name, unique within a run: the `solver` column, legends, trace file
    /// names and baseline keys (`pgs`, `pgs@omega=0.8`, `pgs-slow`).
    pub label: String,
    /// Registry name (`pgs`, `mprgp:permon1`, `desaxce-apgd`).
    pub name: String,
    /// Settings overrides.
    pub settings: Option<serde_json::Value>,
    /// A solver that drives its own loop instead of a registry solver: an external program
    /// (`ext:NAME`, `siconos:*`, [`cpbench_solvers::external`]) or a callable of the Python
    /// package. `name` is then its name and `settings` unused; the executor runs it through
    /// [`Executor::run_driven`].
    pub driven: Option<Arc<dyn DrivenSolver>>,
}

impl SolverSpec {
    /// A solver with default settings, labelled by its registry name.
    pub fn named(name: &str) -> Self {
        Self {
            label: name.to_string(),
            name: name.to_string(),
            settings: None,
            driven: None,
        }
    }

    /// A driven solver (an external program, a Python callable), labelled by its name.
    pub fn driven(solver: Arc<dyn DrivenSolver>) -> Self {
        Self {
            label: solver.name().to_string(),
            name: solver.name().to_string(),
            settings: None,
            driven: Some(solver),
        }
    }

    /// The solver's effective settings as JSON (defaults filled in; a driven solver's own
    /// description). Errors: an unknown registry name or invalid settings.
    pub fn effective_settings(&self) -> Result<serde_json::Value> {
        Ok(match &self.driven {
            Some(d) => d.settings(),
            None => build(&self.name, self.settings.as_ref())?.settings,
        })
    }
}

/// A solver ready to run: a registry solver built afresh, or a shared driven one.
pub enum Runnable {
    /// A registry solver, built for this solve.
    Own(Box<dyn Solver + Send>),
    /// A driven solver (shared: it holds no state between solves).
    Driven(Arc<dyn DrivenSolver>),
}

impl Runnable {
    /// Build the solver of `spec` (a registry solver afresh; a driven one shared). Errors: an
    /// unknown registry name or invalid settings.
    pub fn of(spec: &SolverSpec) -> Result<Self> {
        Ok(match &spec.driven {
            Some(d) => Runnable::Driven(d.clone()),
            None => Runnable::Own(build(&spec.name, spec.settings.as_ref())?.solver),
        })
    }

    /// Why the solver refuses `inst` before running (its class, joint blocks it does not
    /// take, or its own test such as a non-symmetric `W`); `None` when it takes it.
    pub fn refusal(&self, inst: &Instance) -> Option<String> {
        match self {
            Runnable::Own(s) => cpbench_solvers::kernels::refusal(s.as_ref(), inst),
            // a driven solver takes no joint blocks (the driven executor's test)
            Runnable::Driven(d) => cpbench_solvers::kernels::joints_refusal(d.name(), false, inst)
                .or_else(|| d.refusal(inst)),
        }
    }

    /// Run the solver on `inst` under `exec` from `warm` (projected onto `K` by the
    /// executor) or zero. Errors: the executor's ([`SolverError`]).
    pub fn run(
        &mut self,
        exec: ExecSettings,
        inst: &Instance,
        warm: Option<&[f64]>,
        observers: &mut [&mut dyn Observer],
    ) -> std::result::Result<SolveResult, SolverError> {
        match self {
            Runnable::Own(s) => Executor::new(exec).run(s.as_mut(), inst, warm, observers),
            Runnable::Driven(d) => {
                Executor::new(exec).run_driven(d.as_ref(), inst, warm, observers)
            }
        }
    }
}

/// A solve and the harness's check of its answer.
#[derive(Clone, Debug)]
pub struct Checked {
    /// What the executor returned (the answer `gamma`, status claim, counts, time, counters).
    pub result: SolveResult,
    /// The harness's check of `result.gamma` ([`Verdict::for_status`] applied: a refusal is not
    /// a failed check).
    pub verdict: Verdict,
    /// The residual the check used: `check_residual`, or the class's default.
    pub check_residual: ResidualKind,
}

/// Run `runnable` on `inst` under `exec` from `warm` (or zero), then check the answer with
/// `check_residual` (the class's default when `None`) at `exec.tol`: the tolerance of the
/// profile the caller put into `exec`, one number for the stop and the check. Errors: the
/// executor's ([`SolverError`]); a failed check is a verdict, not an error.
pub fn checked_solve(
    runnable: &mut Runnable,
    exec: ExecSettings,
    inst: &Instance,
    warm: Option<&[f64]>,
    check_residual: Option<ResidualKind>,
    observers: &mut [&mut dyn Observer],
) -> std::result::Result<Checked, SolverError> {
    let tol = exec.tol;
    let result = runnable.run(exec, inst, warm, observers)?;
    let check_residual = ResidualKind::resolve(check_residual, inst.class());
    let verdict = check(
        inst,
        &result.gamma,
        CheckSpec {
            residual: check_residual,
            tol,
        },
    )
    .for_status(result.status.as_str());
    Ok(Checked {
        result,
        verdict,
        check_residual,
    })
}
