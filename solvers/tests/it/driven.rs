//! The executor's protocol for driven solvers (`Executor::run_driven`): iterates recorded and
//! checked, the stopping test answered through the monitor, the returned answer (not the claim)
//! checked, errors and wrong lengths turned into statuses.

use cpbench_problems::{Instance, ResidualKind};
use cpbench_solvers::{
    DrivenAnswer, DrivenSolver, ExecSettings, Executor, Monitor, ObserverMode, SolverError, Status,
    TraceRecorder,
};
use cpbench_test_support::lcp2;

/// What the test solver returns after its loop.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// The last iterate.
    Last,
    /// The last iterate times two, claiming `converged`.
    WrongClaimingConverged,
    /// A vector one entry short.
    Short,
    /// An error (a crash) after two iterations.
    Crash,
}

/// Projected gradient on an LCP with step `1 / L`, `L` the largest eigenvalue of the 2x2 `N`
/// given, reporting every iterate.
#[derive(Debug)]
struct ProjGrad {
    lipschitz: f64,
    answer: Answer,
}

impl DrivenSolver for ProjGrad {
    fn name(&self) -> &str {
        "test:projgrad"
    }
    fn settings(&self) -> serde_json::Value {
        serde_json::json!({"lipschitz": self.lipschitz})
    }
    fn refusal(&self, instance: &Instance) -> Option<String> {
        (instance.n() != 2).then(|| "2 unknowns only".to_string())
    }
    fn solve(
        &self,
        inst: &Instance,
        _exec: &ExecSettings,
        gamma0: &[f64],
        monitor: &mut Monitor<'_, '_>,
    ) -> Result<DrivenAnswer, SolverError> {
        let mut g = gamma0.to_vec();
        let mut grad = vec![0.0; 2];
        for k in 0..100_000 {
            inst.gradient(&g, &mut grad);
            for (x, d) in g.iter_mut().zip(&grad) {
                *x = (*x - d / self.lipschitz).max(0.0);
            }
            if matches!(self.answer, Answer::Crash) && k == 2 {
                return Err(SolverError::External {
                    status: Status::Crashed,
                    message: "exception: boom".into(),
                });
            }
            if !monitor.iterate(&g)? {
                break;
            }
        }
        Ok(match self.answer {
            Answer::Last | Answer::Crash => DrivenAnswer {
                gamma: g,
                ..Default::default()
            },
            Answer::WrongClaimingConverged => DrivenAnswer {
                gamma: g.iter().map(|x| 2.0 * x).collect(),
                status: Some(Status::Converged),
                ..Default::default()
            },
            Answer::Short => DrivenAnswer {
                gamma: vec![1.0],
                ..Default::default()
            },
        })
    }
}

fn run(answer: Answer, tol: f64) -> (cpbench_solvers::SolveResult, TraceRecorder) {
    // N = [[2,1],[1,2]] (eigenvalues 1 and 3), r = (-5,-6): z = (4/3, 7/3)
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-5.0, -6.0]);
    let solver = ProjGrad {
        lipschitz: 3.0,
        answer,
    };
    let mut rec = TraceRecorder::new(ObserverMode::Always);
    let exec = ExecSettings {
        tol,
        ..Default::default()
    };
    let res = Executor::new(exec)
        .run_driven(&solver, &inst, None, &mut [&mut rec])
        .unwrap();
    (res, rec)
}

#[test]
fn converged_iterates_are_recorded_and_checked() {
    let (res, rec) = run(Answer::Last, 1e-10);
    assert_eq!(res.status, Status::Converged);
    assert!((res.gamma[0] - 4.0 / 3.0).abs() < 1e-9, "{:?}", res.gamma);
    assert!((res.gamma[1] - 7.0 / 3.0).abs() < 1e-9, "{:?}", res.gamma);
    let kind = ResidualKind::class_default(cpbench_problems::ProblemClass::Lcp);
    assert!(res.residuals.get(kind) <= 1e-10);
    // the start point, then one row per iterate; the monitor stopped the solver at the first
    // iterate below the tolerance, which is the answer (no extra row)
    assert_eq!(rec.records.len() as u64, res.iterations + 1);
    assert_eq!(rec.records[0].iteration, 0);
    assert!(
        res.iterations > 5 && res.iterations < 200,
        "{}",
        res.iterations
    );
    let last = rec.records.last().unwrap();
    assert_eq!(last.iteration, res.iterations);
    assert!(last.residuals.get(kind) <= 1e-10);
    assert!(rec.records[1].residuals.get(kind) > 1e-10);
    assert_eq!(res.matvecs, 0);
}

#[test]
fn a_wrong_answer_is_checked_not_trusted() {
    let (res, rec) = run(Answer::WrongClaimingConverged, 1e-8);
    // the claim is kept as the status; the residuals are those of the returned (wrong) answer,
    // recorded as one more trace row
    assert_eq!(res.status, Status::Converged);
    assert!((res.gamma[0] - 8.0 / 3.0).abs() < 1e-7);
    let kind = ResidualKind::class_default(cpbench_problems::ProblemClass::Lcp);
    assert!(res.residuals.get(kind) > 0.1, "{}", res.residuals.get(kind));
    assert_eq!(
        rec.records.last().unwrap().residuals.get(kind),
        res.residuals.get(kind)
    );
}

#[test]
fn iteration_cap_is_answered_through_the_monitor() {
    let inst = lcp2([2.0, 1.0, 1.0, 2.0], [-5.0, -6.0]);
    let solver = ProjGrad {
        lipschitz: 300.0, // a step 100 times too short: slow
        answer: Answer::Last,
    };
    let exec = ExecSettings {
        tol: 1e-12,
        max_iter: 7,
        ..Default::default()
    };
    let res = Executor::new(exec)
        .run_driven(&solver, &inst, None, &mut [])
        .unwrap();
    assert_eq!(res.iterations, 7);
    assert_eq!(res.status, Status::MaxIterations);
}

#[test]
fn errors_and_wrong_lengths_become_statuses() {
    let (res, _) = run(Answer::Crash, 1e-10);
    assert_eq!(res.status, Status::Crashed);
    assert_eq!(res.message.as_deref(), Some("exception: boom"));
    assert_eq!(res.iterations, 2);
    assert_eq!(res.gamma.len(), 2);

    let (res, _) = run(Answer::Short, 1e-10);
    assert_eq!(res.status, Status::BadOutput);
    assert!(
        res.message
            .as_deref()
            .unwrap()
            .contains("length 1, instance has n = 2"),
        "{:?}",
        res.message
    );
}

#[test]
fn refusal_is_unsupported() {
    let inst = cpbench_test_support::dense(
        1,
        &[1.0],
        vec![-1.0],
        cpbench_problems::ConstraintSet::NonNegative,
    );
    let solver = ProjGrad {
        lipschitz: 1.0,
        answer: Answer::Last,
    };
    let res = Executor::default()
        .run_driven(&solver, &inst, None, &mut [])
        .unwrap();
    assert_eq!(res.status, Status::Unsupported);
    assert_eq!(res.message.as_deref(), Some("2 unknowns only"));
}
