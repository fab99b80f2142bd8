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

/// A one-contact Coulomb problem `u = W r + q` on a `d`-D cone, `d = q.len()` (2 or 3), with
/// `W` given column-major (`d x d`) and friction coefficient `mu`.
pub fn one_contact(w: &[f64], q: &[f64], mu: f64) -> cpbench_problems::Instance {
    let d = q.len();
    let m = cpbench_problems::CscMatrix::from_dense_col_major(d, d, w).unwrap();
    cpbench_problems::Instance::new_coulomb_dim(
        "one",
        m,
        q.to_vec(),
        vec![mu],
        d,
        cpbench_problems::Provenance::default(),
        cpbench_problems::ValidationOptions::default(),
    )
    .unwrap()
}

/// The fixture `rel` read as a Coulomb problem (panics naming the file).
pub fn coulomb_file(rel: &str) -> cpbench_problems::Instance {
    let opts = cpbench_problems::io::LoadOptions {
        class: cpbench_problems::io::ClassChoice::Coulomb,
        ..Default::default()
    };
    cpbench_problems::io::load(&cpbench_test_support::fixture(rel), &opts)
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Fixture paths used by several tests.
pub const BOX_STACKS: &str = "fclib/Box_Stacks-i0122-82-5.hdf5";
/// fclib's `Spheres-i099-356-679` (fixture path).
pub const SPHERES: &str = "fclib/Spheres-i099-356-679.hdf5";
/// fclib's `Capsules-i125-1213` (fixture path).
pub const CAPSULES: &str = "fclib/Capsules-i125-1213.hdf5";
/// Siconos' `BoxesStack1-i100000-32` (fixture path).
pub const BOXES_STACK1: &str = "siconos-fc3d/BoxesStack1-i100000-32.hdf5.dat";
/// Siconos' 2-D `FC2D_SliderCrankLagrangian00000` (fixture path).
pub const SLIDER_CRANK: &str = "fc2d/FC2D_SliderCrankLagrangian00000.dat";

/// Each of `files` with its Coulomb problem ([`coulomb_file`]).
pub fn coulomb_files<'a>(files: &'a [&'a str]) -> impl Iterator<Item = (&'a str, Instance)> {
    files.iter().map(|&f| (f, coulomb_file(f)))
}

/// The velocities `u = W r + q` of the reactions `r` of `inst`.
pub fn velocity(inst: &Instance, r: &[f64]) -> Vec<f64> {
    let mut u = vec![0.0; inst.n()];
    inst.gradient(r, &mut u);
    u
}

/// How far the velocities of answer `r` of `inst` are from those of a reference answer
/// `r_ref` ([`cpbench_test_support::max_rel_diff`], relative to the reference's). The
/// reactions of a Coulomb problem need not be unique where `W` is singular; the velocities are.
pub fn velocity_gap(inst: &Instance, r_ref: &[f64], r: &[f64]) -> f64 {
    cpbench_test_support::max_rel_diff(&velocity(inst, r_ref), &velocity(inst, r))
}

/// Solve `inst` with registry solver `name` to `tol` within `max_iter` iterations
/// ([`cpbench_test_support::solve`]), asserting that it converges (the message names the
/// solver, the tolerance, `context` and the solver's message).
pub fn converged(
    name: &str,
    inst: &Instance,
    tol: f64,
    max_iter: u64,
    context: &str,
) -> SolveResult {
    let r = cpbench_test_support::solve(name, inst, tol, max_iter);
    assert_eq!(
        r.status,
        cpbench_solvers::Status::Converged,
        "{name} to {tol:e} ({context}): {:?}",
        r.message
    );
    r
}

/// Each of `breaks` (one setting out of its range each, applied to the defaults) makes `build`
/// fail, and the defaults themselves build.
pub fn assert_each_refused<S: Default + Clone + std::fmt::Debug, T, E>(
    breaks: &[fn(&mut S)],
    build: impl Fn(S) -> Result<T, E>,
) {
    assert!(build(S::default()).is_ok(), "the defaults must build");
    for set in breaks {
        let mut bad = S::default();
        set(&mut bad);
        assert!(build(bad.clone()).is_err(), "{bad:?}");
    }
}
