//! Helpers shared by the granular stepper's integration tests (`tests/it/granular.rs`,
//! `tests/it/ellipsoids.rs`): a registry solver in the loop and a simulation of given bodies.

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
