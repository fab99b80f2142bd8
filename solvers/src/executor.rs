//! The executor owns the iteration loop: limits, the stopping test on a chosen residual,
//! counted `N`-products, timing, observers, warm start, and the best iterate seen.

use crate::kernels::refusal;
use crate::observer::{IterInfo, IterRecord, Observer};
use crate::problem::Problem;
use crate::result::SolveResult;
use crate::settings::Validator;
use crate::solver::{Solver, StepOutcome};
use crate::state::IterState;
use crate::status::{SolverError, Status};
use cpbench_problems::residual::{residuals_with_gradient, stopping_residuals};
use cpbench_problems::{Instance, ResidualKind, ResidualWorkspace, Residuals};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The default tolerance of every run, `1e-6` (the `default` profile's; the executor's when
/// nothing else is given). The one place it is written.
pub const DEFAULT_TOL: f64 = 1e-6;
/// The default iteration budget per solve, 20000. The one place it is written.
pub const DEFAULT_MAX_ITER: u64 = 20_000;

/// The stopping test, the same two rules as the harness's check of an answer: the chosen
/// residual `res.get(kind) <= tol` and feasibility to `tol` relative to the iterate's size,
/// `dist(gamma, K) = res.primal_feas <= tol max(1, ||gamma||_2)`. A solver whose iterates may
/// leave `K` (semismooth Newton, the Tresca fixed point) can make a small residual at a point
/// outside `K`; such an iterate does not end the solve as converged. NaN meets neither rule.
pub fn meets_tol(res: &Residuals, kind: ResidualKind, gamma: &[f64], tol: f64) -> bool {
    res.get(kind) <= tol && res.primal_feas <= tol * cpbench_problems::linalg::norm2(gamma).max(1.0)
}

/// Limits and stopping test of a solve. Missing fields take the defaults when deserialised.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExecSettings {
    /// Stop when the chosen residual is `<= tol` and the iterate is feasible to `tol`
    /// ([`meets_tol`]; default [`DEFAULT_TOL`], `1e-6`).
    pub tol: f64,
    /// The stopping residual, always honoured when given; `None` (the default) means the
    /// instance's class default ([`ResidualKind::class_default`]: Siconos' fc3d error on a
    /// Coulomb instance, the relative natural map, 2-norm, otherwise).
    pub residual: Option<ResidualKind>,
    /// Iteration budget (default [`DEFAULT_MAX_ITER`], 20000).
    pub max_iter: u64,
    /// Budget of counted `N`-products (default: none).
    pub max_matvecs: Option<u64>,
    /// Budget of solver time in seconds, monitoring excluded (default: none).
    pub max_time_s: Option<f64>,
    /// Stop as [`Status::Stalled`] when the best residual has not decreased by 1% within this
    /// many iterations (default 5000; `None` disables).
    pub stall_window: Option<u64>,
    /// Stop as [`Status::Diverged`] when the residual exceeds this factor times the initial
    /// residual (default `1e12`).
    pub divergence_factor: f64,
    /// Budget of memory in bytes for a solver's own large allocations (a sparse factor, an
    /// assembled matrix); a solver that predicts more refuses before allocating it, with
    /// status `unsupported` and the predicted bytes in the message. `None` (the default):
    /// [`DEFAULT_MEMORY_FRACTION`] of the machine's total memory (`MemTotal` of
    /// `/proc/meminfo`), no budget where that cannot be read ([`ExecSettings::memory_limit`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory_bytes: Option<u64>,
    /// Monitor every `check_every` iterations (`>= 1`; `None`, the default: every iteration). The
    /// stopping residual, the trace row, the best iterate, the stall and divergence tests and
    /// [`Problem::residual`] are computed at iterations `k, 2k, ...` and whenever the solve
    /// ends (the solver's own end, an error, the iteration, product or time budget); between
    /// them the solver runs unmonitored, so a solve can run up to `k - 1` iterations past the
    /// one that met the tolerance, and its trace and best iterate come from the checked
    /// iterations only. Monitoring costs about one to three `N`-products' worth per check
    /// (every residual of the harness), which at scale can exceed the solver's own iteration
    /// (issue 34). Omitted from the settings JSON when `None`, so settings hashes stay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_every: Option<u64>,
}

impl Default for ExecSettings {
    fn default() -> Self {
        Self {
            tol: DEFAULT_TOL,
            residual: None,
            max_iter: DEFAULT_MAX_ITER,
            max_matvecs: None,
            max_time_s: None,
            stall_window: Some(5_000),
            divergence_factor: 1e12,
            max_memory_bytes: None,
            check_every: None,
        }
    }
}

impl ExecSettings {
    /// Check ranges: `tol > 0` finite, `max_iter >= 1`, `max_matvecs >= 1`, positive finite
    /// time budget, `stall_window >= 1`, `divergence_factor > 1`, `max_memory_bytes >= 1`.
    /// Errors:
    /// [`SolverError::OutOfRange`] naming `the executor`, the field, the value and the range.
    pub fn validate(&self) -> Result<(), SolverError> {
        let mut v = Validator::new("the executor");
        self.check(&mut v);
        v.finish()
    }

    /// The checks of [`ExecSettings::validate`], recording into `v`.
    pub fn check(&self, v: &mut Validator) {
        v.positive("tol", self.tol)
            .at_least("max_iter", self.max_iter, 1)
            .at_least_opt("max_matvecs", self.max_matvecs, 1)
            .positive_opt("max_time_s", self.max_time_s)
            .at_least_opt("stall_window", self.stall_window, 1)
            .greater("divergence_factor", self.divergence_factor, 1.0)
            .at_least_opt("max_memory_bytes", self.max_memory_bytes, 1)
            .at_least_opt("check_every", self.check_every, 1);
    }

    /// The memory budget a solve runs under: `max_memory_bytes` when given, else
    /// [`default_memory_limit`].
    pub fn memory_limit(&self) -> Option<u64> {
        self.max_memory_bytes.or_else(default_memory_limit)
    }
}

pub use cpbench_problems::memory::{default_memory_limit, DEFAULT_MEMORY_FRACTION};

/// The start point of a solve: `warm_start` projected onto `K`, or zero (length `n`).
/// Errors: [`SolverError::WarmStartSize`] for a warm start of another length.
pub fn start_point(
    instance: &Instance,
    warm_start: Option<&[f64]>,
) -> Result<Vec<f64>, SolverError> {
    let n = instance.n();
    let mut gamma0 = match warm_start {
        Some(w) if w.len() != n => {
            return Err(SolverError::WarmStartSize {
                expected: n,
                found: w.len(),
            })
        }
        Some(w) => w.to_vec(),
        None => vec![0.0; n],
    };
    instance.constraints().project(&mut gamma0);
    Ok(gamma0)
}

/// Runs a [`Solver`] on an instance under [`ExecSettings`].
#[derive(Clone, Debug, Default)]
pub struct Executor {
    /// Limits and stopping test.
    pub settings: ExecSettings,
}

/// The start of a run ([`Executor::begin`]).
pub(crate) struct Begun {
    /// The stopping residual.
    pub(crate) kind: ResidualKind,
    /// The start point (projected onto `K`).
    pub(crate) gamma0: Vec<f64>,
    /// The residual workspace of the run.
    pub(crate) ws: ResidualWorkspace,
    /// The residuals at the start point.
    pub(crate) res0: Residuals,
}

impl Executor {
    /// Executor with the given settings.
    pub fn new(settings: ExecSettings) -> Self {
        Self { settings }
    }

    /// What every run starts with ([`Executor::run`] and [`Executor::run_driven`]): the
    /// settings validated, the stopping residual resolved for the instance's class, the start
    /// point ([`start_point`]) and its residuals (in a workspace kept for the run), and the
    /// observers told: `init` with the solver's `name`, then the record of iteration 0.
    /// Errors: as [`Executor::run`].
    pub(crate) fn begin(
        &self,
        name: &str,
        instance: &Instance,
        warm_start: Option<&[f64]>,
        observers: &mut [&mut dyn Observer],
    ) -> Result<Begun, SolverError> {
        self.settings.validate()?;
        let kind = ResidualKind::resolve(self.settings.residual, instance.class());
        let gamma0 = start_point(instance, warm_start)?;
        let mut ws = ResidualWorkspace::new(instance);
        let res0 = ws.compute(instance, &gamma0);
        let rec0 = IterRecord {
            iteration: 0,
            time_s: 0.0,
            matvecs: 0,
            residuals: res0,
            is_best: true,
            info: IterInfo::new(),
        };
        for o in observers.iter_mut() {
            o.init(name, instance);
            o.iter(&rec0);
        }
        Ok(Begun {
            kind,
            gamma0,
            ws,
            res0,
        })
    }

    /// Solve `instance` with `solver`, from `warm_start` (projected onto `K`) or from zero.
    ///
    /// Every checked iterate's stopping residual and primal feasibility are computed here (one
    /// uncounted product per check unless the solver supplies a fresh gradient; one pass that
    /// skips the other residuals, [`stopping_residuals`]); every residual only for an iterate
    /// some observer wants ([`Observer::wants`]), which is then passed to the observers, for
    /// the last one, and for the best one, returned with its residuals (recomputed at the end
    /// from one uncounted product when it was not recorded). Errors: invalid executor settings
    /// ([`ExecSettings::validate`], [`SolverError::OutOfRange`]) and a warm start of the wrong
    /// size; solver failures become [`Status::NumericalError`] with a message.
    pub fn run(
        &self,
        solver: &mut dyn Solver,
        instance: &Instance,
        warm_start: Option<&[f64]>,
        observers: &mut [&mut dyn Observer],
    ) -> Result<SolveResult, SolverError> {
        let Begun {
            kind,
            gamma0,
            mut ws,
            res0,
        } = self.begin(solver.name(), instance, warm_start, observers)?;
        let s = &self.settings;
        let mut problem = Problem::new(instance);
        problem.set_memory_limit(s.memory_limit());
        problem.set_tol(Some(s.tol));
        // the instant by which the next solver call must return: the time budget less the
        // solver time spent so far (monitoring excluded, as in the budget itself)
        let deadline = |elapsed: Duration| {
            s.max_time_s.map(|m| {
                Instant::now() + Duration::from_secs_f64((m - elapsed.as_secs_f64()).max(0.0))
            })
        };
        let mut state = IterState::new(gamma0);
        let norm_r = cpbench_problems::linalg::norm2(instance.r());
        let mut best = Best {
            gamma: state.gamma.clone(),
            res: res0,
            complete: true,
            value: res0.get(kind),
            iteration: 0,
        };
        let finish = |status: Status,
                      best: Best,
                      state: &IterState,
                      time: Duration,
                      solver: &dyn Solver,
                      message: Option<String>,
                      observers: &mut [&mut dyn Observer]| {
            let result = SolveResult {
                solver: solver.name().to_string(),
                status,
                gamma: best.gamma,
                residuals: best.res,
                best_iteration: best.iteration,
                iterations: state.iteration,
                matvecs: problem.matvecs(),
                time_s: time.as_secs_f64(),
                counters: solver
                    .counters()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
                message,
            };
            for o in observers.iter_mut() {
                o.finish(&result);
            }
            result
        };

        // the ends before the first step: an unsupported class, a non-finite or already
        // converged start point, a failed init
        let mut elapsed = Duration::ZERO;
        let early = if let Some(reason) = refusal(solver, instance) {
            Some((Status::Unsupported, Some(reason)))
        } else if !res0.is_finite() {
            let msg = "non-finite residual at the start point";
            Some((Status::NumericalError, Some(msg.to_string())))
        } else if meets_tol(&res0, kind, &best.gamma, s.tol) {
            Some((Status::Converged, None))
        } else {
            problem.set_deadline(deadline(elapsed));
            problem.set_residual(best.value);
            let t = Instant::now();
            let init = solver.init(&problem, &mut state);
            elapsed += t.elapsed();
            init.err().map(|e| (e.status(), Some(e.to_string())))
        };
        if let Some((status, message)) = early {
            let r = finish(status, best, &state, elapsed, solver, message, observers);
            return Ok(r);
        }
        let diverge_at = s.divergence_factor * best.value.max(s.tol);
        let mut stall_ref = (best.value, 0u64);
        // a step's error ends the solve as a numerical error with its message
        let mut failure = None;
        let status = loop {
            state.grad_fresh = false;
            problem.set_deadline(deadline(elapsed));
            let t = Instant::now();
            let out = solver.step(&problem, &mut state);
            elapsed += t.elapsed();
            state.iteration += 1;
            let out = match out {
                Ok(o) => o,
                Err(e) => {
                    failure = Some(e.to_string());
                    break e.status();
                }
            };
            // between checks (`check_every`) the solver runs unmonitored, unless it ends
            let ends = out != StepOutcome::Continue
                || state.iteration >= s.max_iter
                || s.max_matvecs.is_some_and(|m| problem.matvecs() >= m)
                || s.max_time_s.is_some_and(|m| elapsed.as_secs_f64() >= m);
            if !ends && state.iteration % s.check_every.unwrap_or(1) != 0 {
                continue;
            }
            // the stopping test reads one residual and the primal feasibility; every residual
            // is computed only where it is recorded: an iteration an observer wants, the last
            // one, and the best one (at the end, if it was not recorded). An iteration some
            // observer wants whatever its residual is computed in full at once (one pass).
            let wanted = observers.iter().any(|o| o.wants(state.iteration, false));
            let light = match (wanted, state.grad_fresh) {
                (true, true) => {
                    residuals_with_gradient(instance, &state.gamma, &state.grad, norm_r)
                }
                (true, false) => ws.compute(instance, &state.gamma),
                (false, true) => {
                    stopping_residuals(instance, (&state.gamma, &state.grad, norm_r), kind)
                }
                (false, false) => ws.compute_stopping(instance, &state.gamma, kind),
            };
            let value = light.get(kind);
            problem.set_residual(value);
            let is_best = value < best.value;
            let end = 'end: {
                if !value.is_finite() || state.gamma.iter().any(|x| !x.is_finite()) {
                    failure = Some(format!(
                        "numerical error: the iterate or its {} became non-finite at \
                         iteration {}",
                        kind.as_str(),
                        state.iteration
                    ));
                    break 'end Some(Status::NumericalError);
                }
                if meets_tol(&light, kind, &state.gamma, s.tol) {
                    break 'end Some(Status::Converged);
                }
                if let StepOutcome::Finished(claim) = out {
                    break 'end Some(claim);
                }
                if value > diverge_at {
                    break 'end Some(Status::Diverged);
                }
                let best_value = if is_best { value } else { best.value };
                let best_iteration = if is_best {
                    state.iteration
                } else {
                    best.iteration
                };
                if out == StepOutcome::Stalled {
                    failure = Some(format!(
                        "stalled: the solver reported no further progress at iteration {} \
                         (best {} {:.3e} at iteration {}, tolerance {:.1e})",
                        state.iteration,
                        kind.as_str(),
                        best_value,
                        best_iteration,
                        s.tol
                    ));
                    break 'end Some(Status::Stalled);
                }
                if best_value < 0.99 * stall_ref.0 {
                    stall_ref = (best_value, state.iteration);
                } else if let Some(w) = s.stall_window {
                    if state.iteration - stall_ref.1 >= w {
                        failure = Some(format!(
                            "stalled: the best {} ({:.3e}, iteration {}) did not fall by 1% \
                             in {w} iterations (stall window); tolerance {:.1e}",
                            kind.as_str(),
                            best_value,
                            best_iteration,
                            s.tol
                        ));
                        break 'end Some(Status::Stalled);
                    }
                }
                if state.iteration >= s.max_iter
                    || s.max_matvecs.is_some_and(|m| problem.matvecs() >= m)
                {
                    break 'end Some(Status::MaxIterations);
                }
                if s.max_time_s.is_some_and(|m| elapsed.as_secs_f64() >= m) {
                    break 'end Some(Status::MaxTime);
                }
                None
            };
            let recorded = wanted
                || end.is_some()
                || observers.iter().any(|o| o.wants(state.iteration, is_best));
            let res = match (recorded && !wanted, state.grad_fresh) {
                (false, _) => light,
                (true, true) => {
                    residuals_with_gradient(instance, &state.gamma, &state.grad, norm_r)
                }
                (true, false) => ws.complete(instance, &state.gamma),
            };
            if is_best {
                best.gamma.copy_from_slice(&state.gamma);
                best.res = res;
                best.complete = recorded;
                best.value = value;
                best.iteration = state.iteration;
            }
            if recorded {
                let rec = IterRecord {
                    iteration: state.iteration,
                    time_s: elapsed.as_secs_f64(),
                    matvecs: problem.matvecs(),
                    residuals: res,
                    is_best,
                    info: solver.iter_info(),
                };
                for o in observers.iter_mut() {
                    o.iter(&rec);
                }
            }
            if let Some(status) = end {
                break status;
            }
        };
        if !best.complete {
            // the best iterate was not recorded: its residuals from one (uncounted) product
            best.res = ws.compute(instance, &best.gamma);
        }
        // the solver's own message first (it knows why it stopped), the executor's after it
        let message = match (solver.message(), failure) {
            (Some(m), Some(f)) if status == Status::Stalled => Some(format!("{m}; {f}")),
            (m, f) => f.or(m),
        };
        Ok(finish(
            status, best, &state, elapsed, solver, message, observers,
        ))
    }
}

struct Best {
    gamma: Vec<f64>,
    /// Every residual when `complete`, else those of [`stopping_residuals`].
    res: Residuals,
    complete: bool,
    value: f64,
    iteration: u64,
}
