//! Bilateral (joint) blocks in the cone set (issue 33 item 4; docs/formulation.md,
//! "Bilateral rows"): the set's projection, residuals and validation, the content hash, the
//! bundle and `.npz` round trips, the formats and derivations that refuse joints.
//!
//! The instance is `cpbench_test_support::hand_jointed`: `N = [[2 I, I], [I, 2 I]]`,
//! `r = (2, 0, 0, -1, 2, 0)`, block 0 a joint, block 1 a cone with `mu = 0.5`. Its answers,
//! derived by hand by eliminating the joint (`x_0 = -(r_0 + x_1) / 2`, reduced problem
//! `N' = 1.5 I`, `r' = (-2, 2, 0)`):
//! - CCP: `N'` is a multiple of `I`, so `x_1 = P_K(-r' / 1.5) = P_K((4/3, -4/3, 0))`: on the
//!   surface, `x_n = (4/3 + 0.5 * 4/3) / 1.25 = 1.6`, `x_t = -0.5 * 1.6 = -0.8`; then
//!   `x_0 = -(2 + 1.6, -0.8, 0) / 2 = (-1.8, 0.4, 0)`, `u_1 = 1.5 x_1 + r' = (0.4, 0.8, 0)`
//!   (`u_n = mu ||u_t||`, `x_1 . u_1 = 0.64 - 0.64 = 0`), `u_0 = 0`.
//! - Coulomb (sliding, `u_n = 0`): `x_n = 2 / 1.5 = 4/3`, `x_t = -mu x_n = -2/3` against
//!   `u_t = 1.5 x_t + 2 = 1 > 0`; `x_0 = -(2 + 4/3, -2/3, 0) / 2 = (-5/3, 1/3, 0)`.

use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::instance::ValidationOptions;
use cpbench_problems::io::{npz, read_bundle, write_bundle, OutputFormat};
use cpbench_problems::{residuals, ProblemClass, ProblemError};
use cpbench_test_support::{hand_jointed, max_abs_diff};

/// The CCP answer of the module documentation.
const CCP: [f64; 6] = [-1.8, 0.4, 0.0, 1.6, -0.8, 0.0];
/// The Coulomb answer of the module documentation.
const COULOMB: [f64; 6] = [-5.0 / 3.0, 1.0 / 3.0, 0.0, 4.0 / 3.0, -2.0 / 3.0, 0.0];

#[test]
fn the_projection_is_the_identity_on_joint_blocks() {
    let k = ConstraintSet::coulomb_jointed(vec![0.0, 0.5], 3, 1);
    let mut x = [-3.0, 7.0, -1.0, 1.0, -2.0, 0.0];
    k.project(&mut x);
    // the joint block untouched, the cone block onto the surface: (1 + 0.5 * 2) / 1.25 = 1.6
    assert_eq!(&x[..3], &[-3.0, 7.0, -1.0]);
    assert!(max_abs_diff(&x[3..], &[1.6, -0.8, 0.0]) < 1e-15, "{x:?}");
    let mut b = [-3.0, 7.0, -1.0];
    k.project_block(0, &mut b);
    assert_eq!(b, [-3.0, 7.0, -1.0]);
    assert!(k.block_is_free(0, &b));
    assert_eq!(k.joints(), 1);
    assert_eq!(ConstraintSet::coulomb(vec![0.5]).joints(), 0);
}

#[test]
fn the_hand_answers_have_zero_residuals() {
    let ccp = hand_jointed(false);
    let r = residuals(&ccp, &CCP);
    assert!(r.nat_map_abs_2 < 1e-14, "{r:?}");
    assert!(r.proj_grad_2 < 1e-14 && r.primal_feas < 1e-15, "{r:?}");
    let coulomb = hand_jointed(true);
    let r = residuals(&coulomb, &COULOMB);
    assert!(r.fc3d_error < 1e-15, "{r:?}");
    // the CCP answer is not the Coulomb one: u_n = 0.4 on the sliding contact
    assert!(residuals(&coulomb, &CCP).fc3d_error > 0.1);
}

#[test]
fn a_joint_block_contributes_its_velocity_to_the_natural_map() {
    // at gamma = 0, u = r: the joint block's term is r_0 = (2, 0, 0), squared 4; the cone
    // block's is -P_K(-r_1) = -P_K((1, -2, 0)) = -(1.6, -0.8, 0), squared 3.2
    let inst = hand_jointed(false);
    let r = residuals(&inst, &[0.0; 6]);
    assert!((r.nat_map_abs_2 - 7.2f64.sqrt()).abs() < 1e-14, "{r:?}");
    // dual feasibility: u_0 must vanish (K* = {0} there): 2; the cone block's u_1 = (-1, 2, 0)
    // against K* = K_2: projection ((-1 + 2 * 2) / 5 = 0.6, 1.2, 0), distance^2 = 1.6^2 + 0.8^2
    let want = (4.0f64 + 1.6 * 1.6 + 0.8 * 0.8).sqrt();
    assert!((r.dual_feas - want).abs() < 1e-14, "{r:?}");
}

#[test]
fn fidelity_leaves_joint_blocks_out() {
    // the joint's impulse (-1.8, 0.4, 0) lies far outside any cone: no violation is reported
    let f = cpbench_problems::fidelity(&hand_jointed(false), &CCP);
    assert!(f.cone_violation < 1e-15, "{f:?}");
    // the one contact: lambda_n u_n = 1.6 * 0.4
    assert!((f.signorini - 0.64).abs() < 1e-14, "{f:?}");
}

#[test]
fn validation_names_too_many_joints_and_joint_friction() {
    let k = ConstraintSet::coulomb_jointed(vec![0.0, 0.5], 3, 3);
    match k.validate(6) {
        Err(ProblemError::JointCount { joints, blocks }) => assert_eq!((joints, blocks), (3, 2)),
        other => panic!("{other:?}"),
    }
    let k = ConstraintSet::coulomb_jointed(vec![0.3, 0.5], 3, 1);
    match k.validate(6) {
        Err(ProblemError::JointFriction { block, value }) => assert_eq!((block, value), (0, 0.3)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_hash_and_json_of_sets_without_joints_are_unchanged() {
    let without = ConstraintSet::coulomb(vec![0.0, 0.5]);
    assert_eq!(
        serde_json::to_string(&without).unwrap(),
        r#"{"type":"coulomb_cones","mu":[0.0,0.5]}"#
    );
    let back: ConstraintSet =
        serde_json::from_str(r#"{"type":"coulomb_cones","mu":[0.0,0.5]}"#).unwrap();
    assert_eq!(back.joints(), 0);
    let with = ConstraintSet::coulomb_jointed(vec![0.0, 0.5], 3, 1);
    assert_eq!(
        serde_json::to_string(&with).unwrap(),
        r#"{"type":"coulomb_cones","mu":[0.0,0.5],"joints":1}"#
    );
    // same N, r and mu: the joints alone change the hash
    let jointed = hand_jointed(false);
    let plain = cpbench_problems::Instance::new(
        "plain",
        jointed.n_mat().clone(),
        jointed.r().to_vec(),
        without,
        Default::default(),
        ValidationOptions::default(),
    )
    .unwrap();
    assert_ne!(plain.hash(), jointed.hash());
    // joints = 0 spelt out is the set without joints: the same hash
    let zero = cpbench_problems::Instance::new(
        "zero",
        jointed.n_mat().clone(),
        jointed.r().to_vec(),
        ConstraintSet::coulomb_jointed(vec![0.0, 0.5], 3, 0),
        Default::default(),
        ValidationOptions::default(),
    )
    .unwrap();
    assert_eq!(plain.hash(), zero.hash());
}

#[test]
fn bundles_and_npz_files_carry_the_joints() {
    let dir = tempfile::tempdir().unwrap();
    for inst in [hand_jointed(false), hand_jointed(true)] {
        let b = dir.path().join(inst.name());
        write_bundle(&inst, &b).unwrap();
        let json = std::fs::read_to_string(b.join("instance.json")).unwrap();
        assert!(json.contains("\"joints\": 1"), "{json}");
        let back = read_bundle(&b, ValidationOptions::default()).unwrap();
        assert_eq!(back.constraints(), inst.constraints());
        assert_eq!((back.class(), back.hash()), (inst.class(), inst.hash()));
        let p = dir.path().join(format!("{}.npz", inst.name()));
        npz::write_npz(&inst, &p).unwrap();
        let back = npz::read_npz(&p, ValidationOptions::default()).unwrap();
        assert_eq!(back.constraints().joints(), 1);
        assert_eq!((back.class(), back.hash()), (inst.class(), inst.hash()));
    }
}

#[test]
fn fclib_refuses_joints_naming_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("j.hdf5");
    let e = OutputFormat::Fclib
        .write(&hand_jointed(false), &p)
        .unwrap_err();
    assert!(matches!(e, ProblemError::JointsUnsupported { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("fclib") && msg.contains("1 joint blocks"),
        "{msg}"
    );
    assert!(!p.exists());
}

#[test]
fn derivations_without_a_free_block_refuse_joints() {
    let inst = hand_jointed(false);
    for (what, e) in [
        ("blcp", inst.blcp().unwrap_err()),
        ("lcp", inst.normal_block_lcp().unwrap_err()),
        ("lcp-pyramid", inst.pyramid_lcp(4).unwrap_err()),
    ] {
        assert!(
            matches!(e, ProblemError::JointsUnsupported { .. }) && e.to_string().contains(what),
            "{what}: {e}"
        );
    }
    // the Coulomb problem and its CCP relaxation keep them
    let c = inst.clone().into_coulomb().unwrap();
    assert_eq!(
        (c.class(), c.constraints().joints()),
        (ProblemClass::Coulomb, 1)
    );
    assert_eq!(c.ccp_relaxation().unwrap().constraints().joints(), 1);
}

/// A bundle of the hand instance with `instance.json` = `json`; the parse error's location
/// and message.
fn bad_bundle(json: &str) -> (Option<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    write_bundle(&hand_jointed(false), &b).unwrap();
    std::fs::write(b.join("instance.json"), json).unwrap();
    match read_bundle(&b, ValidationOptions::default()) {
        Err(e @ ProblemError::Parse { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("instance.json"), "{msg}");
            match e {
                ProblemError::Parse { location, .. } => (location, msg),
                _ => unreachable!(),
            }
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn malformed_joint_fields_are_typed_errors_naming_file_and_field() {
    let (at, msg) = bad_bundle(r#"{"class": "ccp", "mu": 0.5, "joints": 3}"#);
    assert_eq!(at.as_deref(), Some("joints"), "{msg}");
    assert!(msg.contains("only 2 blocks"), "{msg}");
    let (at, msg) = bad_bundle(r#"{"class": "ccp", "mu": [0.2, 0.5], "joints": 1}"#);
    assert_eq!(at.as_deref(), Some("mu[0]"), "{msg}");
    let (at, msg) = bad_bundle(r#"{"class": "blcp", "mu": 0.5, "joints": 1}"#);
    assert_eq!(at.as_deref(), Some("joints"), "{msg}");
    let (at, _) = bad_bundle(r#"{"class": "ccp", "mu": 0.5, "joints": -1}"#);
    assert!(at.is_some());
    // one number for mu applies to the contacts: the joint block gets 0
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    write_bundle(&hand_jointed(false), &b).unwrap();
    std::fs::write(
        b.join("instance.json"),
        r#"{"class": "ccp", "mu": 0.5, "joints": 1}"#,
    )
    .unwrap();
    let inst = read_bundle(&b, ValidationOptions::default()).unwrap();
    assert_eq!(inst.constraints(), hand_jointed(false).constraints());
    assert_eq!(inst.hash(), hand_jointed(false).hash());
}
