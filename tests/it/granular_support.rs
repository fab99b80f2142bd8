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

/// The bound on a ball joint's drift after one step of `h` seconds (tests/it/joints.rs' module
/// documentation): `h ||u_j||` for the equality row's residual `uj`, plus, for each of the
/// joint's bodies that is not fixed, `h^2 w^2 |a| / 2 + h w e / 2` with `w` its angular speed,
/// `a` its anchor and `e` the joint's drift before the step.
pub fn joint_drift_bound(
    h: f64,
    uj: f64,
    j: &cpbench_granular::BallJoint,
    bodies: &[Body],
    before: f64,
) -> f64 {
    h * uj
        + [(j.a, j.anchor_a), (j.b, j.anchor_b)]
            .iter()
            .filter(|(i, _)| !bodies[*i].fixed)
            .map(|(i, a)| {
                let w = bodies[*i].omega.norm();
                h * h * w * w * a.norm() / 2.0 + h * w * before / 2.0
            })
            .sum::<f64>()
}

/// `inst` written as a bundle and as an `.npz` and read back keeps its constraint set (joint
/// blocks included) and its content hash.
pub fn assert_bundle_and_npz_round_trip(inst: &cpbench_problems::Instance) {
    use cpbench_problems::io::{npz, read_bundle, write_bundle};
    let opts = cpbench_problems::ValidationOptions::default();
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    write_bundle(inst, &b).unwrap();
    let back = read_bundle(&b, opts).unwrap();
    assert_eq!(back.constraints(), inst.constraints());
    assert_eq!(back.hash(), inst.hash());
    let z = dir.path().join("z.npz");
    npz::write_npz(inst, &z).unwrap();
    let back = npz::read_npz(&z, opts).unwrap();
    assert_eq!(back.constraints(), inst.constraints());
    assert_eq!(back.hash(), inst.hash());
}
