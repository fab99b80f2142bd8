//! Ball joints in the 3-D stepper (issue 33 item 4; `granular/src/joints.rs`,
//! docs/formulation.md "Bilateral rows"): the `chain` scene's joints hold at every step, its
//! length is kept, its instances round-trip through bundles and `.npz` files, `generate
//! --scene chain` and `--scene bridge` work, and a joint naming a missing body is a typed
//! error.
//!
//! The bound on the drift is the scheme's (derived in the module documentation of
//! `granular/src/joints.rs`): the joint rows ask the step to close the drift `e_k` of the
//! anchors, and the step leaves `e_{k+1} <= h |u_j| + sum over the two bodies of
//! (h^2 |omega|^2 |s| / 2 + h |omega| e_k / 2)`: the solver's residual `u_j` on the joint's rows
//! over the step, the linearised rotation of a lever arm `|s|` (the exact rotation by
//! `h |omega|` differs from `h omega x s` by at most `(h |omega|)^2 |s| / 2`), and the lever arm
//! taken at the anchors' midpoint (`e_k / 2` off).

use crate::granular_support::solver;
use crate::support::{cpbench, error, stdout_of};
use cpbench_granular::joints::BallJoint;
use cpbench_granular::nalgebra::Vector3;
use cpbench_granular::scenes::{ChainParams, SceneKind, SceneSpec};
use cpbench_granular::{GranularError, Simulation};
use cpbench_problems::instance::ValidationOptions;
use cpbench_problems::io::npz;

/// The chain of `links` links (default parameters: spacing 0.125 m, `h = 5e-3` s).
fn chain(links: usize) -> Simulation {
    SceneSpec::new(SceneKind::Chain, links, 0)
        .build()
        .unwrap()
        .into_simulation()
        .unwrap()
}

/// `|(N gamma + r)_b|` of joint block `b` of the last step's instance: the joint's
/// equality residual (its relative anchor velocity plus the stabilisation term).
fn joint_row_residual(sim: &Simulation, b: usize) -> f64 {
    let inst = sim.last_instance().unwrap();
    let mut u = vec![0.0; inst.n()];
    inst.gradient(sim.last_impulses(), &mut u);
    u[3 * b..3 * b + 3]
        .iter()
        .map(|v| v * v)
        .sum::<f64>()
        .sqrt()
}

#[test]
fn the_chain_joints_hold_and_its_length_is_kept_at_every_step() {
    let p = ChainParams::default();
    let (links, h, spacing) = (20, p.h, p.spacing);
    let tol = 1e-8;
    let mut sim = chain(links);
    let mut slv = solver("apgd", tol);
    let joints: Vec<BallJoint> = sim.joints().to_vec();
    assert_eq!(joints.len(), links);
    let mut drift: Vec<f64> = joints
        .iter()
        .map(|j| j.drift(&sim.world().bodies))
        .collect();
    let mut landed = false;
    for step in 1..=100 {
        let rep = sim.step(&mut slv).unwrap();
        assert!(rep.converged, "step {step}: {rep:?}");
        let inst = sim.last_instance().unwrap();
        assert_eq!(inst.constraints().joints(), links);
        let norm_r = inst.r().iter().map(|v| v * v).sum::<f64>().sqrt();
        let bodies = &sim.world().bodies;
        for (k, j) in joints.iter().enumerate() {
            // the equality residual: below the solve's tolerance (relative to ||r||)
            let uj = joint_row_residual(&sim, k);
            assert!(uj <= tol * norm_r, "step {step} joint {k}: {uj:e}");
            // the drift: the scheme's bound (module documentation)
            let bound = crate::granular_support::joint_drift_bound(h, uj, j, bodies, drift[k]);
            let e = j.drift(bodies);
            assert!(
                e <= bound + 1e-12,
                "step {step} joint {k}: drift {e:e} > {bound:e}"
            );
            drift[k] = e;
        }
        // the length through the joints: (links - 1) spacings, off by at most the drifts
        let mid: Vec<Vector3<f64>> = joints
            .iter()
            .map(|j| {
                let (a, b) = j.anchors(bodies);
                0.5 * (a + b)
            })
            .collect();
        let length: f64 = mid.windows(2).map(|w| (w[1] - w[0]).norm()).sum();
        let want = (links - 1) as f64 * spacing;
        let slack: f64 = drift.iter().sum();
        assert!(
            (length - want).abs() <= slack + 1e-12,
            "step {step}: {length} vs {want}"
        );
        landed |= rep.contacts > links;
    }
    // it swung down and met the floor (or itself): contacts besides the joints
    assert!(landed);
}

#[test]
fn chain_instances_round_trip_through_bundles_and_npz() {
    let mut sim = chain(5);
    let mut slv = solver("pgs", 1e-8);
    for _ in 0..3 {
        sim.step(&mut slv).unwrap();
    }
    let inst = sim.last_instance().unwrap().clone();
    assert_eq!(inst.constraints().joints(), 5);
    // the joints' identities (trajectory files): feature 1 + k, never a contact's 0
    let ids = sim.last_contact_ids();
    let features: Vec<u32> = ids.iter().map(|id| id.feature).collect();
    assert_eq!(&features[..5], &[1, 2, 3, 4, 5]);
    assert!(features[5..].iter().all(|&f| f == 0));
    assert_eq!(inst.provenance().parameters["joints"], "5");
    crate::granular_support::assert_bundle_and_npz_round_trip(&inst);
}

#[test]
fn a_joint_naming_a_missing_body_is_a_typed_error() {
    let scene = SceneSpec::new(SceneKind::Chain, 3, 0).build().unwrap();
    let nb = scene.world.bodies.len();
    let mut joints = scene.joints.clone();
    joints[1].b = nb + 5;
    let sim = Simulation::new(scene.world.clone(), "c", Default::default(), None).unwrap();
    match sim.with_joints(joints) {
        Err(e @ GranularError::BadJoint { joint: 1, .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("body b = {} does not exist", nb + 5)),
                "{msg}"
            );
        }
        other => panic!("{other:?}"),
    }
    // frictionless: no blocks of 3 rows for the joints
    let e = SceneSpec {
        frictionless: true,
        ..SceneSpec::new(SceneKind::Bridge, 3, 0)
    }
    .build()
    .unwrap_err();
    assert!(e.to_string().contains("frictionless"), "{e}");
}

#[test]
fn cli_generate_chain_and_bridge() {
    let dir = tempfile::tempdir().unwrap();
    for (scene, n) in [("chain", 5), ("bridge", 5)] {
        let out = dir.path().join(scene);
        let stdout = stdout_of(
            cpbench(&format!(
                "generate --scene {scene} --size {n} --steps 10 --export-every 5 --format npz \
                 --print-every 0 --out"
            ))
            .arg(&out),
        );
        let f = out.join(format!("{scene}-{n}_step0010__ccp.npz"));
        assert!(f.exists(), "{stdout}");
        let inst = npz::read_npz(&f, ValidationOptions::default()).unwrap();
        // chain: the pin and 4 joints between links; bridge: 4 between links and two pins
        let joints = if scene == "chain" { n } else { n + 1 };
        assert_eq!(inst.constraints().joints(), joints);
    }
    // fclib cannot hold equality rows: a typed error naming the format
    error(
        cpbench("generate --scene chain --size 3 --steps 2 --export-every 1 --format fclib --out")
            .arg(dir.path().join("fc")),
        &["fclib", "joint"],
    );
}
