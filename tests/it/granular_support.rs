//! Helpers shared by the granular stepper's integration tests (`tests/it/granular.rs`,
//! `tests/it/ellipsoids.rs`, and the pyramids of `tests/it/operators.rs` and
//! `tests/it/ipm_limits.rs`): a registry solver in the loop, stepper parameters, a simulation of
//! given bodies and a cannonball pyramid.

use cpbench_granular::scenes::PyramidParams;
use cpbench_granular::{Body, Plane, SimParams, Simulation, World};
use cpbench_harness::generate::RegistrySolver;
use cpbench_solvers::ExecSettings;
use std::collections::BTreeMap;

/// Gravity used by the scenes and tests (m/s^2).
pub const G: f64 = 9.81;

/// The registry solver `name` at tolerance `tol` with 20000 iterations, for the stepper.
pub fn solver(name: &str, tol: f64) -> RegistrySolver {
    RegistrySolver::new(
        name,
        None,
        ExecSettings {
            tol,
            max_iter: 20_000,
            ..Default::default()
        },
    )
    .unwrap()
}

/// The cannonball pyramid of `layers` layers (default parameters: bottom layer fixed,
/// `mu = 0.5`), seed 0, with friction, at its first step.
pub fn pyramid(layers: usize) -> Simulation {
    PyramidParams {
        layers,
        ..Default::default()
    }
    .build(0, false)
    .unwrap()
    .into_simulation()
    .unwrap()
}

/// Stepper parameters with time step `h`, friction `mu` and envelope `envelope`, the others
/// at their defaults.
pub fn params(h: f64, mu: f64, envelope: f64) -> SimParams {
    SimParams {
        h,
        mu,
        envelope,
        ..Default::default()
    }
}

/// A simulation labelled `test` of `bodies` and `planes` with `params`.
pub fn sim(bodies: Vec<Body>, planes: Vec<Plane>, params: SimParams) -> Simulation {
    Simulation::new(
        World {
            bodies,
            planes,
            params,
        },
        "test",
        BTreeMap::new(),
        None,
    )
    .unwrap()
}
