//! Solvers that drive their own loop: external programs ([`crate::external`]) and callables
//! of other languages (the Python package). They do not fit [`crate::Solver`]'s `init` /
//! `step` protocol, so the [`Executor`] runs them through [`Executor::run_driven`]: the solver
//! is handed a [`Monitor`] that records every iterate it reports (the harness computes every
//! residual of it, as for our own solvers), applies the executor's stopping test and limits
//! (its answer, `false`, asks the solver to stop), and the answer the solver finally returns is
//! what the harness checks, never a status the solver claims.
//!
//! What the executor does with a driven solver:
//! - the start point (warm start projected onto `K`, or zero) is record 0 of the trace, as for
//!   our solvers;
//! - each [`Monitor::iterate`] is one iteration: residuals computed here, observers called,
//!   `false` returned once the stopping residual is `<= tol`, the iteration budget or the time
//!   budget is spent, the residual diverged or is not finite;
//! - [`Monitor::record`] adds a row without an iterate (an external program's own trace: its
//!   iteration, time and own residual), with the harness's residual columns NaN;
//! - the returned [`DrivenAnswer::gamma`] is the answer: its residuals are computed here and
//!   recorded as the last trace row unless it is the last reported iterate; a wrong length is
//!   [`Status::BadOutput`], an error of the solver (a crash, a time-out, an exception) its
//!   status ([`SolverError::status`]) with the last reported iterate (or the start point) as
//!   the answer;
//! - `time_s` is the wall time of [`DrivenSolver::solve`] less the time spent in the monitor
//!   (residual evaluation and recording), as for our solvers;
//! - a solver that never called the monitor and returned past the time budget is
//!   [`Status::MaxTime`] whatever its answer (it could not be stopped at the limit), with a
//!   message that says so.

use crate::executor::{meets_tol, Begun, ExecSettings, Executor};
use crate::observer::{IterInfo, IterRecord, Observer};
use crate::result::SolveResult;
use crate::solver::CostModel;
use crate::status::{SolverError, Status};
use cpbench_problems::{Instance, ResidualKind, ResidualWorkspace, Residuals};
use std::time::{Duration, Instant};

/// A solver that runs its own loop and reports iterates through a [`Monitor`].
///
/// Implementations: [`crate::external::ExternalSolver`] (a program in any language, through
/// the external-solver protocol) and the Python package's callables. `Send + Sync`: the
/// harness shares one instance across its worker threads.
pub trait DrivenSolver: Send + Sync + std::fmt::Debug {
    /// The solver's name as result files show it (`ext:NAME`, `siconos:nsgs`, `py:my_solver`).
    fn name(&self) -> &str;

    /// Its settings as JSON (the command line, the tolerance mapping, ...), for the manifest
    /// and the settings hash of result rows.
    fn settings(&self) -> serde_json::Value;

    /// What an iteration costs, for reports ([`CostModel::External`] by default).
    fn cost(&self) -> CostModel {
        CostModel::External
    }

    /// Why the solver cannot take `instance` (a class it does not solve, a program that is not
    /// installed); `None` when it can. The executor ends such a solve before calling
    /// [`DrivenSolver::solve`] with status `unsupported` and this reason. Default: it takes
    /// every instance.
    fn refusal(&self, instance: &Instance) -> Option<String> {
        let _ = instance;
        None
    }

    /// Solve `instance` from `gamma0` (length `n`, already in `K`) under `exec` (tolerance,
    /// iteration cap, time budget), reporting iterates to `monitor` and stopping when it
    /// answers `false`. Errors end the solve with [`SolverError::status`]: a crash, a time-out
    /// ([`SolverError::External`]), a callable that raised.
    fn solve(
        &self,
        instance: &Instance,
        exec: &ExecSettings,
        gamma0: &[f64],
        monitor: &mut Monitor<'_, '_>,
    ) -> Result<DrivenAnswer, SolverError>;
}

/// What a [`DrivenSolver`] returns.
#[derive(Clone, Debug, Default)]
pub struct DrivenAnswer {
    /// The answer, length `n` (checked by the executor: another length is
    /// [`Status::BadOutput`]).
    pub gamma: Vec<f64>,
    /// The solver's own claim (`converged`, `max_iterations`, ...), if it makes one. Without a
    /// claim the executor's verdict on the answer is used: `converged` when the stopping
    /// residual is `<= tol`, else why the monitor stopped it, else `stalled` (the solver ended
    /// by itself above the tolerance).
    pub status: Option<Status>,
    /// Iterations by the solver's own count (an external program's info file), when it reports
    /// no iterates or counts otherwise; the larger of this and the iterates reported is the
    /// row's `iterations`.
    pub iterations: Option<u64>,
    /// A sentence for the `message` column.
    pub message: Option<String>,
    /// Counters for the `counters` column.
    pub counters: Vec<(String, f64)>,
    /// The solver's own time for the solve (s), when it measures one apart from its start-up
    /// (an external program's `info.time_s`, e.g. Siconos' driver call alone): the row's
    /// `time_s` is then this time, and the wall time of the whole call is kept as the counter
    /// `wall_time_s`. `None`: `time_s` is the wall time (less the monitor's overhead).
    pub time_s: Option<f64>,
}

/// Records the iterates of a [`DrivenSolver`] for the [`Executor`]: residuals, observers,
/// stopping test and limits. One per solve; made by [`Executor::run_driven`].
pub struct Monitor<'a, 'o> {
    instance: &'a Instance,
    exec: &'a ExecSettings,
    kind: ResidualKind,
    observers: &'a mut [&'o mut dyn Observer],
    ws: ResidualWorkspace,
    start: Instant,
    /// time spent inside the monitor (excluded from the solver's time)
    overhead: Duration,
    iteration: u64,
    best_value: f64,
    diverge_at: f64,
    last: Option<(Vec<f64>, Residuals)>,
    stop: Option<Status>,
}

impl Monitor<'_, '_> {
    /// Record `gamma` (length `n`) as the next iteration: compute its residuals, call the
    /// observers, and answer whether the solver should go on (`false` once the stopping
    /// residual is `<= tol` with a feasible iterate ([`meets_tol`]), the iteration or time
    /// budget is spent, the residual diverged or a value is not finite). Errors: a `gamma` of
    /// the wrong length ([`SolverError::External`] with [`Status::BadOutput`]).
    pub fn iterate(&mut self, gamma: &[f64]) -> Result<bool, SolverError> {
        let t = Instant::now();
        let n = self.instance.n();
        if gamma.len() != n {
            self.overhead += t.elapsed();
            return Err(SolverError::External {
                status: Status::BadOutput,
                message: format!(
                    "iterate {} has length {}, instance has n = {n}",
                    self.iteration + 1,
                    gamma.len()
                ),
            });
        }
        self.iteration += 1;
        let res = self.ws.compute(self.instance, gamma);
        let value = res.get(self.kind);
        let is_best = value < self.best_value;
        if is_best {
            self.best_value = value;
        }
        let time_s = self.solver_time(t);
        let rec = IterRecord {
            iteration: self.iteration,
            time_s,
            matvecs: 0,
            residuals: res,
            is_best,
            info: IterInfo::new(),
        };
        for o in self.observers.iter_mut() {
            o.iter(&rec);
        }
        match &mut self.last {
            Some((g, r)) => {
                g.copy_from_slice(gamma);
                *r = res;
            }
            None => self.last = Some((gamma.to_vec(), res)),
        }
        let e = self.exec;
        let stop = if !value.is_finite() || gamma.iter().any(|x| !x.is_finite()) {
            Some(Status::NumericalError)
        } else if meets_tol(&res, self.kind, gamma, e.tol) {
            Some(Status::Converged)
        } else if value > self.diverge_at {
            Some(Status::Diverged)
        } else if self.iteration >= e.max_iter {
            Some(Status::MaxIterations)
        } else if e.max_time_s.is_some_and(|m| time_s >= m) {
            Some(Status::MaxTime)
        } else {
            None
        };
        if stop.is_some() {
            self.stop = stop;
        }
        self.overhead += t.elapsed();
        Ok(stop.is_none())
    }

    /// Record a trace row without an iterate (an external program's own trace): `iteration`,
    /// its time in seconds since the solve started (`None`: now), and per-iteration values
    /// for the extra trace columns (e.g. the program's own residual as `ext_residual`). The
    /// harness's residual columns of the row are NaN: nothing was checked.
    pub fn record(&mut self, iteration: u64, time_s: Option<f64>, info: IterInfo) {
        let t = Instant::now();
        self.iteration = self.iteration.max(iteration);
        let rec = IterRecord {
            iteration,
            time_s: time_s.unwrap_or_else(|| self.solver_time(t)),
            matvecs: 0,
            residuals: Residuals::from_values([f64::NAN; Residuals::COUNT]),
            is_best: false,
            info,
        };
        for o in self.observers.iter_mut() {
            o.iter(&rec);
        }
        self.overhead += t.elapsed();
    }

    /// Exclude `d` from the solver's time: work of the driven solver that is not the solve
    /// itself (an external program's instance written and its answer read, around the
    /// program's run), so that `time_s` is the program's wall time.
    pub fn exclude(&mut self, d: Duration) {
        self.overhead += d;
    }

    /// Iterations recorded so far.
    pub fn iterations(&self) -> u64 {
        self.iteration
    }

    /// Why the monitor asked the solver to stop, if it did.
    pub fn stop_reason(&self) -> Option<Status> {
        self.stop
    }

    /// Seconds since the solve started, less the monitor's own time so far.
    pub fn elapsed_s(&self) -> f64 {
        self.solver_time(Instant::now())
    }

    /// The solver's time at `now`: wall time since the start less the monitor's time.
    fn solver_time(&self, now: Instant) -> f64 {
        (now.duration_since(self.start))
            .saturating_sub(self.overhead)
            .as_secs_f64()
    }
}

impl Executor {
    /// Solve `instance` with the driven solver `solver`, from `warm_start` (projected onto `K`)
    /// or from zero; see the [module documentation](self) for what is recorded and checked.
    /// Errors (before any solve): invalid executor settings, a warm start of the wrong size.
    /// The solver's own errors become the row's status ([`SolverError::status`]), never an
    /// error of this call.
    pub fn run_driven(
        &self,
        solver: &dyn DrivenSolver,
        instance: &Instance,
        warm_start: Option<&[f64]>,
        observers: &mut [&mut dyn Observer],
    ) -> Result<SolveResult, SolverError> {
        let Begun {
            kind,
            gamma0,
            ws,
            res0,
        } = self.begin(solver.name(), instance, warm_start, observers)?;
        let s = &self.settings;
        let n = instance.n();
        let result = |status: Status,
                      gamma: Vec<f64>,
                      residuals: Residuals,
                      iterations: u64,
                      time_s: f64,
                      counters: Vec<(String, f64)>,
                      message: Option<String>| SolveResult {
            solver: solver.name().to_string(),
            status,
            gamma,
            residuals,
            best_iteration: iterations,
            iterations,
            matvecs: 0,
            time_s,
            counters,
            message,
        };
        // no driven solver (external programs, Python callables) is told of joint blocks
        let refused = crate::kernels::joints_refusal(solver.name(), false, instance);
        if let Some(reason) = refused.or_else(|| solver.refusal(instance)) {
            let r = result(
                Status::Unsupported,
                gamma0,
                res0,
                0,
                0.0,
                vec![],
                Some(reason),
            );
            for o in observers.iter_mut() {
                o.finish(&r);
            }
            return Ok(r);
        }
        let diverge_at = s.divergence_factor * res0.get(kind).max(s.tol);
        let start = Instant::now();
        let (outcome, iterations, last, stop, overhead) = {
            let mut monitor = Monitor {
                instance,
                exec: s,
                kind,
                observers: &mut *observers,
                ws,
                start,
                overhead: Duration::ZERO,
                iteration: 0,
                best_value: res0.get(kind),
                diverge_at,
                last: None,
                stop: None,
            };
            let outcome = solver.solve(instance, s, &gamma0, &mut monitor);
            (
                outcome,
                monitor.iteration,
                monitor.last,
                monitor.stop,
                monitor.overhead,
            )
        };
        let time_s = start.elapsed().saturating_sub(overhead).as_secs_f64();
        let mut ws = ResidualWorkspace::new(instance);
        let r = match outcome {
            Err(e) => {
                // the last reported iterate (or the start point) is the answer
                let (gamma, res) = last.unwrap_or((gamma0, res0));
                result(
                    e.status(),
                    gamma,
                    res,
                    iterations,
                    time_s,
                    vec![],
                    Some(e.to_string()),
                )
            }
            Ok(ans) if ans.gamma.len() != n => {
                let msg = format!(
                    "the answer has length {}, instance has n = {n}{}",
                    ans.gamma.len(),
                    ans.message.map(|m| format!("; {m}")).unwrap_or_default()
                );
                let (gamma, res) = last.unwrap_or((gamma0, res0));
                let its = iterations.max(ans.iterations.unwrap_or(0));
                result(
                    Status::BadOutput,
                    gamma,
                    res,
                    its,
                    time_s,
                    ans.counters,
                    Some(msg),
                )
            }
            Ok(mut ans) => {
                let its = iterations.max(ans.iterations.unwrap_or(0));
                // a solver that never reported an iterate could not be stopped at the time
                // limit: past it, the run is `max_time` whatever its answer
                let past_limit = s
                    .max_time_s
                    .filter(|&m| iterations == 0 && time_s > m)
                    .map(|m| {
                        format!(
                            "ran {time_s:.3} s, past the time limit of {m} s, without reporting \
                             an iterate (the monitor, through which the limit stops a solver, \
                             was never called); its answer is checked but the run is max_time"
                        )
                    });
                // the solver's own time when it reports one, the wall time beside it
                let time_s = match ans.time_s.filter(|t| t.is_finite() && *t >= 0.0) {
                    Some(own) => {
                        ans.counters.push(("wall_time_s".to_string(), time_s));
                        own
                    }
                    None => time_s,
                };
                let same_as_last = last.as_ref().is_some_and(|(g, _)| *g == ans.gamma);
                let res = match &last {
                    Some((_, r)) if same_as_last => *r,
                    _ => ws.compute(instance, &ans.gamma),
                };
                if !same_as_last {
                    let rec = IterRecord {
                        iteration: its.max(1),
                        time_s,
                        matvecs: 0,
                        residuals: res,
                        is_best: false,
                        info: IterInfo::new(),
                    };
                    for o in observers.iter_mut() {
                        o.iter(&rec);
                    }
                }
                let value = res.get(kind);
                let status = ans
                    .status
                    .unwrap_or(if meets_tol(&res, kind, &ans.gamma, s.tol) {
                        Status::Converged
                    } else if ans.gamma.iter().any(|x| !x.is_finite()) || !value.is_finite() {
                        Status::NumericalError
                    } else {
                        stop.filter(|st| *st != Status::Converged)
                            .unwrap_or(Status::Stalled)
                    });
                let (status, message) = match past_limit {
                    Some(why) => (
                        Status::MaxTime,
                        Some(match ans.message {
                            Some(m) => format!("{why}; {m}"),
                            None => why,
                        }),
                    ),
                    None => (status, ans.message),
                };
                result(
                    status,
                    ans.gamma,
                    res,
                    its.max(1),
                    time_s,
                    ans.counters,
                    message,
                )
            }
        };
        for o in observers.iter_mut() {
            o.finish(&r);
        }
        Ok(r)
    }
}
