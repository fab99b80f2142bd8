//! Snapshots (`cpbench_granular::snapshot`): radii saved, old files without them still read.

use cpbench_granular::{SceneKind, SceneSpec, Snapshot};

#[test]
fn radii_are_saved_and_old_files_stay_readable() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/generated/fill-5_settled.json"
    );
    let old = std::fs::read_to_string(path).unwrap();
    assert!(!old.contains("\"radii\""));
    let snap = Snapshot::from_json(&old).unwrap();
    assert!(snap.radii.is_empty());
    let sim = snap.restore(false).unwrap();
    let nb = sim.world().bodies.len();
    assert_eq!(nb, 250);
    // captured again: radii written, one per body, equal to the scene's
    let spec = SceneSpec {
        kind: SceneKind::Fill,
        size: 5,
        seed: snap.seed,
        frictionless: false,
        aspect: None,
    };
    let again = Snapshot::capture(&sim, &spec, "t");
    assert_eq!(again.radii.len(), nb);
    assert_eq!(again.radii[0], sim.world().bodies[0].radius);
    let json = again.to_json();
    assert!(json.contains("\"radii\":["), "{}", &json[..200]);
    let back = Snapshot::from_json(&json).unwrap();
    assert_eq!(back, again);
    assert!(back.restore(false).is_ok());
    // radii that do not match the scene are refused
    let mut bad = back.clone();
    bad.radii[3] *= 2.0;
    let e = bad.restore(false).unwrap_err().to_string();
    assert!(e.contains("radii differ"), "{e}");
}
