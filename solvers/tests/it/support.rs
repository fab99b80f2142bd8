//! Helpers shared by the modules of this test binary.

use cpbench_problems::Instance;
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, ObserverMode, SolveResult, TraceRecorder};

/// Solve `inst` with registry solver `name` (`settings` over its defaults) from `start` (zero
/// for `None`) under `exec`, recording every iterate; returns the result and the trace.
pub fn traced(
    name: &str,
    settings: Option<&serde_json::Value>,
    inst: &Instance,
    start: Option<&[f64]>,
    exec: ExecSettings,
) -> (SolveResult, TraceRecorder) {
    let mut b = build(name, settings).unwrap();
    let mut rec = TraceRecorder::new(ObserverMode::Always);
    let res = Executor::new(exec)
        .run(b.solver.as_mut(), inst, start, &mut [&mut rec])
        .unwrap();
    (res, rec)
}
