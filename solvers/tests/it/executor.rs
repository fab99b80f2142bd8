//! The executor's own paths, driven by a scripted test-only solver on the one-variable LCP
//! `N = [1]`, `r = [-1]` (solution `gamma = 1`), where the relative natural-map residual of an
//! iterate `gamma >= 0` is exactly `|gamma - 1|`: stall window, divergence factor, product and
//! time budgets, non-finite iterates, the best (not the last) iterate returned, and the
//! observer modes; and the stopping residual on a one-contact Coulomb instance (class default
//! or explicit).

use cpbench_problems::{
    ConstraintSet, CscMatrix, Instance, ProblemClass, Provenance, ResidualKind, ValidationOptions,
};
use cpbench_solvers::{
    ExecSettings, Executor, IterState, ObserverMode, Problem, SolveResult, Solver, SolverError,
    Status, StepOutcome, TraceRecorder,
};
use cpbench_test_support::dense;
use std::time::Duration;

/// Sets `gamma` to the next scripted point at each step (holding the last one), counting
/// `init_matvecs` products in `init` and `step_matvecs` per step, sleeping `sleep` per step.
struct Scripted {
    points: Vec<Vec<f64>>,
    next: usize,
    init_matvecs: u64,
    step_matvecs: u64,
    sleep: Duration,
}

impl Scripted {
    /// Points of one variable.
    fn new(values: &[f64]) -> Self {
        Self::points(values.iter().map(|&v| vec![v]).collect())
    }

    fn points(points: Vec<Vec<f64>>) -> Self {
        Self {
            points,
            next: 0,
            init_matvecs: 0,
            step_matvecs: 1,
            sleep: Duration::ZERO,
        }
    }
}

impl Solver for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn supports(&self, _class: ProblemClass) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        problem.add_matvecs(self.init_matvecs);
        self.next = 0;
        Ok(())
    }

    fn step(
        &mut self,
        problem: &Problem,
        state: &mut IterState,
    ) -> Result<StepOutcome, SolverError> {
        if !self.sleep.is_zero() {
            std::thread::sleep(self.sleep);
        }
        problem.add_matvecs(self.step_matvecs);
        state
            .gamma
            .copy_from_slice(&self.points[self.next.min(self.points.len() - 1)]);
        self.next += 1;
        Ok(StepOutcome::Continue)
    }
}

/// `min 1/2 x^2 - x, x >= 0`.
fn lcp1() -> Instance {
    dense(1, &[1.0], vec![-1.0], ConstraintSet::NonNegative)
}

fn exec(max_iter: u64) -> ExecSettings {
    ExecSettings {
        max_iter,
        stall_window: None,
        ..Default::default()
    }
}

fn run(
    settings: ExecSettings,
    solver: &mut Scripted,
    observers: &mut [&mut dyn cpbench_solvers::Observer],
) -> SolveResult {
    Executor::new(settings)
        .run(solver, &lcp1(), None, observers)
        .unwrap()
}

fn iterations_of(rec: &TraceRecorder) -> Vec<u64> {
    rec.records.iter().map(|r| r.iteration).collect()
}

#[test]
fn the_best_iterate_is_returned_and_observers_thin_the_trace() {
    // residuals 1 (start), 0.5, 0.1, 0.3, 0.2: the best is iteration 2, not the last
    let mut always = TraceRecorder::new(ObserverMode::Always);
    let mut new_best = TraceRecorder::new(ObserverMode::NewBest);
    let mut every2 = TraceRecorder::new(ObserverMode::Every(2));
    let mut every3 = TraceRecorder::new(ObserverMode::Every(3));
    let mut never = TraceRecorder::new(ObserverMode::Never);
    let mut s = Scripted::new(&[0.5, 0.9, 0.7, 0.8]);
    let res = run(
        exec(4),
        &mut s,
        &mut [
            &mut always,
            &mut new_best,
            &mut every2,
            &mut every3,
            &mut never,
        ],
    );
    assert_eq!(res.status, Status::MaxIterations);
    assert_eq!(res.iterations, 4);
    assert_eq!(res.matvecs, 4);
    assert_eq!(res.best_iteration, 2);
    assert_eq!(res.gamma, vec![0.9]);
    assert!((res.residuals.nat_map_rel_2 - 0.1).abs() < 1e-15);
    // the returned residuals are those recorded for the best iterate, bit for bit
    assert_eq!(iterations_of(&always), vec![0, 1, 2, 3, 4]);
    assert_eq!(always.records[2].residuals, res.residuals);
    let by_iter: Vec<f64> = always
        .records
        .iter()
        .map(|r| r.residuals.nat_map_rel_2)
        .collect();
    let want = [1.0, 0.5, 0.1, 0.3, 0.2];
    for (got, want) in by_iter.iter().zip(want) {
        assert!((got - want).abs() < 1e-15, "{by_iter:?}");
    }
    let best_flags: Vec<bool> = always.records.iter().map(|r| r.is_best).collect();
    assert_eq!(best_flags, vec![true, true, true, false, false]);
    assert_eq!(
        always.records.iter().map(|r| r.matvecs).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    // NewBest keeps the improvements and, at the end, the last iteration
    assert_eq!(iterations_of(&new_best), vec![0, 1, 2, 4]);
    assert_eq!(iterations_of(&every2), vec![0, 2, 4]);
    assert_eq!(iterations_of(&every3), vec![0, 3, 4]);
    assert!(never.records.is_empty());
}

#[test]
fn no_progress_stops_after_the_stall_window() {
    // residual 0.5 from iteration 1 on: the best stops improving by 1% at iteration 1
    let settings = ExecSettings {
        stall_window: Some(10),
        ..exec(1000)
    };
    let res = run(settings.clone(), &mut Scripted::new(&[0.5]), &mut []);
    assert_eq!(res.status, Status::Stalled);
    assert_eq!(res.iterations, 11);
    assert_eq!(res.best_iteration, 1);
    assert_eq!(res.gamma, vec![0.5]);
    // residual 0.5 * 0.995^(k-1) for 100 iterations, then constant: every third iteration
    // gains 1% on the reference (0.995^3 < 0.99 < 0.995^2), which restarts the window, the
    // last time at iteration 100; it stalls 10 iterations later
    let slow: Vec<f64> = (0..100).map(|k| 1.0 - 0.5 * 0.995f64.powi(k)).collect();
    let res = run(settings, &mut Scripted::new(&slow), &mut []);
    assert_eq!(res.status, Status::Stalled);
    assert_eq!(res.iterations, 110);
    assert_eq!(res.best_iteration, 100);
    // without a window the same run goes on to the iteration budget
    let res = run(exec(1000), &mut Scripted::new(&[0.5]), &mut []);
    assert_eq!(res.status, Status::MaxIterations);
    assert_eq!(res.iterations, 1000);
}

#[test]
fn growth_beyond_the_divergence_factor_is_diverged() {
    // residuals 10, 100, 1000, 10000 against the start's 1: factor 1e3 is passed at iteration 4
    let settings = ExecSettings {
        divergence_factor: 1e3,
        ..exec(1000)
    };
    let mut s = Scripted::new(&[11.0, 101.0, 1001.0, 10001.0]);
    let res = run(settings, &mut s, &mut []);
    assert_eq!(res.status, Status::Diverged);
    assert_eq!(res.iterations, 4);
    // the start point stays the best iterate
    assert_eq!(res.best_iteration, 0);
    assert_eq!(res.gamma, vec![0.0]);
    assert_eq!(res.residuals.nat_map_rel_2, 1.0);
}

#[test]
fn a_non_finite_iterate_is_a_numerical_error() {
    let res = run(exec(1000), &mut Scripted::new(&[0.5, f64::NAN]), &mut []);
    assert_eq!(res.status, Status::NumericalError);
    assert_eq!(res.iterations, 2);
    assert_eq!(res.best_iteration, 1);
    assert_eq!(res.gamma, vec![0.5]);
}

#[test]
fn the_product_budget_stops_as_max_iterations() {
    // 2 products in init, 3 per step: 5, 8, 11 >= 10 after step 3
    let mut settings = exec(1000);
    settings.max_matvecs = Some(10);
    let mut s = Scripted::new(&[0.5]);
    s.init_matvecs = 2;
    s.step_matvecs = 3;
    let res = run(settings, &mut s, &mut []);
    assert_eq!(res.status, Status::MaxIterations);
    assert_eq!(res.iterations, 3);
    assert_eq!(res.matvecs, 11);
}

#[test]
fn the_time_budget_stops_as_max_time() {
    // 2 ms per step against a 5 ms budget: at least 6 ms after 3 steps, so at most 3 steps
    let mut settings = exec(1000);
    settings.max_time_s = Some(0.005);
    let mut s = Scripted::new(&[0.5]);
    s.sleep = Duration::from_millis(2);
    let res = run(settings, &mut s, &mut []);
    assert_eq!(res.status, Status::MaxTime);
    assert!((1..=3).contains(&res.iterations), "{}", res.iterations);
    assert!(res.time_s >= 0.005, "{}", res.time_s);
}

#[test]
fn the_stopping_residual_is_the_class_default_or_the_explicit_choice() {
    // W = I, q = (-1, 2, 0), mu = 0.5: the Coulomb solution is (1, -0.5, 0) (fc3d error 0),
    // the CCP solution (1.6, -0.8, 0) (natural map 0, fc3d error sqrt(0.288 / 5) = 0.24; see
    // coulomb.rs). The script visits the CCP solution, then the Coulomb one.
    let eye = CscMatrix::from_dense_col_major(3, 3, &[1., 0., 0., 0., 1., 0., 0., 0., 1.]).unwrap();
    let inst = Instance::new_coulomb(
        "one",
        eye,
        vec![-1.0, 2.0, 0.0],
        vec![0.5],
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap();
    let script = || Scripted::points(vec![vec![1.6, -0.8, 0.0], vec![1.0, -0.5, 0.0]]);
    let solve = |residual: Option<ResidualKind>| {
        let settings = ExecSettings {
            residual,
            ..exec(10)
        };
        Executor::new(settings)
            .run(&mut script(), &inst, None, &mut [])
            .unwrap()
    };
    // no choice: Siconos' fc3d error, met at the Coulomb solution only
    let res = solve(None);
    assert_eq!(res.status, Status::Converged);
    assert_eq!(res.iterations, 2);
    assert_eq!(res.gamma, vec![1.0, -0.5, 0.0]);
    assert!(res.residuals.fc3d_error < 1e-15);
    // the same chosen explicitly
    assert_eq!(solve(Some(ResidualKind::Fc3dError)).iterations, 2);
    // an explicit natural map is honoured on a Coulomb instance: the CCP solution stops it
    let res = solve(Some(ResidualKind::NatMapRel2));
    assert_eq!(res.status, Status::Converged);
    assert_eq!(res.iterations, 1);
    assert_eq!(res.gamma, vec![1.6, -0.8, 0.0]);
    assert!((res.residuals.fc3d_error - (0.288f64 / 5.0).sqrt()).abs() < 1e-15);
}

/// The memory limit: `MemTotal` read in kB, the default fraction of the machine.
mod memory {
    use cpbench_solvers::executor::DEFAULT_MEMORY_FRACTION;
    use cpbench_solvers::ExecSettings;

    #[test]
    fn mem_total_is_read_in_kilobytes() {
        use cpbench_problems::memory::mem_total_bytes;
        let text = "MemFree:  100 kB\nMemTotal:       16318256 kB\nBuffers: 1 kB\n";
        assert_eq!(mem_total_bytes(text), Some(16_318_256 * 1024));
        assert_eq!(mem_total_bytes("MemFree: 5 kB\n"), None);
        assert_eq!(mem_total_bytes("MemTotal: 5 MB\n"), None);
    }

    #[test]
    fn memory_limit_defaults_to_a_fraction_of_the_machine() {
        let given = ExecSettings {
            max_memory_bytes: Some(12345),
            ..Default::default()
        };
        assert_eq!(given.memory_limit(), Some(12345));
        let total = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| cpbench_problems::memory::mem_total_bytes(&t));
        let expect = total.map(|t| (t as f64 * DEFAULT_MEMORY_FRACTION) as u64);
        assert_eq!(ExecSettings::default().memory_limit(), expect);
        let zero = ExecSettings {
            max_memory_bytes: Some(0),
            ..Default::default()
        };
        assert!(zero.validate().is_err());
    }
}

/// `check_every = 3`: the residual is evaluated at iterations 3, 6, ... and where the solve
/// ends, so the script 0.5, 0.9, 0.7, 0.9999, 1, ... (residuals 0.5, 0.1, 0.3, 1e-4, 0)
/// converges at the check of iteration 6 (it met the tolerance at 5, unseen), the trace holds
/// the start and iterations 3 and 6, and the best iterate is among the checked ones; at the
/// iteration budget the last iterate is checked; `check_every = 0` is refused.
#[test]
fn check_every_monitors_every_kth_iteration_and_the_end() {
    let script = [0.5, 0.9, 0.7, 0.9999, 1.0, 1.0];
    let mut always = TraceRecorder::new(ObserverMode::Always);
    let k3 = ExecSettings {
        check_every: Some(3),
        ..exec(100)
    };
    let res = run(k3.clone(), &mut Scripted::new(&script), &mut [&mut always]);
    assert_eq!(res.status, Status::Converged);
    assert_eq!((res.iterations, res.best_iteration), (6, 6));
    assert_eq!(iterations_of(&always), [0, 3, 6]);
    // every iteration (the default): converged at 5, traced at each
    let mut always = TraceRecorder::new(ObserverMode::Always);
    let res = run(exec(100), &mut Scripted::new(&script), &mut [&mut always]);
    assert_eq!((res.status, res.iterations), (Status::Converged, 5));
    assert_eq!(iterations_of(&always), [0, 1, 2, 3, 4, 5]);
    // at the iteration budget (4) the last iterate is checked: checks at 3 (0.3) and 4 (1e-4),
    // the best returned is iteration 4 (iteration 2's 0.1 was never seen)
    let mut always = TraceRecorder::new(ObserverMode::Always);
    let res = run(
        ExecSettings {
            tol: 1e-8,
            ..ExecSettings {
                max_iter: 4,
                ..k3.clone()
            }
        },
        &mut Scripted::new(&script),
        &mut [&mut always],
    );
    assert_eq!((res.status, res.iterations), (Status::MaxIterations, 4));
    assert_eq!(iterations_of(&always), [0, 3, 4]);
    assert_eq!(res.best_iteration, 4);
    // the settings JSON omits the default, so settings hashes of earlier runs stay
    let json = serde_json::to_string(&ExecSettings::default()).unwrap();
    assert!(!json.contains("check_every"), "{json}");
    assert!(serde_json::to_string(&k3)
        .unwrap()
        .contains("\"check_every\":3"));
    let bad = ExecSettings {
        check_every: Some(0),
        ..ExecSettings::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("check_every"));
}

/// Counts the records it is given; wants every third iteration only.
struct EveryThird {
    seen: Vec<u64>,
}

impl cpbench_solvers::Observer for EveryThird {
    fn wants(&self, iteration: u64, _is_best: bool) -> bool {
        iteration % 3 == 0
    }

    fn iter(&mut self, record: &cpbench_solvers::IterRecord) {
        assert!(record.residuals.is_finite(), "{record:?}");
        self.seen.push(record.iteration);
    }
}

/// Every residual is computed only for the iterations an observer wants and for the last one
/// (`Observer::wants`); the stopping test reads the light pass's value, so the iterations, the
/// best iterate and the status are those of a fully monitored run, and the best iterate's
/// residuals, when it was not recorded (iteration 2 here), are recomputed: complete, and bit
/// for bit those of a fully monitored run.
#[test]
fn observers_get_complete_residuals_for_the_iterations_they_want_and_the_last() {
    let mut third = EveryThird { seen: Vec::new() };
    let mut s = Scripted::new(&[0.5, 0.9, 0.7, 0.8]);
    let thin = run(exec(4), &mut s, &mut [&mut third]);
    assert_eq!(third.seen, vec![0, 3, 4]);
    let mut always = TraceRecorder::new(ObserverMode::Always);
    let mut s = Scripted::new(&[0.5, 0.9, 0.7, 0.8]);
    let full = run(exec(4), &mut s, &mut [&mut always]);
    assert_eq!(thin.best_iteration, 2);
    assert_eq!(
        (thin.status, thin.iterations, &thin.gamma),
        (full.status, full.iterations, &full.gamma)
    );
    assert!(thin.residuals.is_finite());
    assert_eq!(
        thin.residuals.values().map(f64::to_bits),
        full.residuals.values().map(f64::to_bits)
    );
}
