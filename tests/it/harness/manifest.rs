//! The typed `manifest.json` (`cpbench_harness::manifest`): committed, merged and old
//! manifests round-trip.

use cpbench_harness::manifest::{Manifest, MergedFrom, Profile, Shard, SolverEntry};
use serde_json::Value;
use std::path::Path;

/// A manifest written by an earlier version (the first committed
/// `results/siconos-side-by-side` run, kept as `tests/fixtures/manifests/`) reads into the
/// typed manifest and writes back as the same JSON (every field known, names and nesting
/// unchanged).
#[test]
fn committed_manifest_round_trips() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/manifests/siconos-side-by-side-v1.json");
    let text = std::fs::read_to_string(&src).unwrap();
    let raw: Value = serde_json::from_str(&text).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("manifest.json"), &text).unwrap();
    let dir = tmp.path();
    let m = Manifest::read(dir).unwrap();
    assert_eq!(m.suite, "instances");
    assert_eq!(m.machine.logical_cpus, 2);
    assert_eq!(m.check.residual, "nat_map_rel_2");
    assert_eq!(
        m.profiles,
        vec![Profile {
            name: "custom".into(),
            tol: 1e-8
        }]
    );
    assert_eq!(m.runs_executed, 39);
    assert_eq!(m.exec.max_iter, 20_000);
    assert_eq!(m.instances[0].n, 156);
    assert_eq!(m.instances[0].provenance.format, "siconos-fc3d");
    assert!(m.extra.is_empty(), "{:?}", m.extra.keys());
    // written back the same, but for the two fields this version writes differently: the
    // residual's name is the CLI's (`nat_map_rel2` read as an alias), and `exec.tol` (1e-6
    // under a 1e-8 profile) is gone: the tolerance is the profile's
    assert_eq!(raw["exec"]["residual"], "nat_map_rel2");
    assert_eq!(raw["exec"]["tol"], 1e-6);
    let mut expected = raw.clone();
    expected["exec"]["residual"] = "nat_map_rel_2".into();
    expected["exec"].as_object_mut().unwrap().remove("tol");
    assert_eq!(serde_json::to_value(&m).unwrap(), expected);
    // ... and that form reads back as the same manifest
    let again: Manifest = serde_json::from_value(serde_json::to_value(&m).unwrap()).unwrap();
    assert_eq!(again, m);
}

/// The committed manifest of `results/siconos-side-by-side` (a run with the external
/// solver `siconos:nsgs`) reads with every field known and round-trips.
#[test]
fn committed_siconos_manifest_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/siconos-side-by-side");
    let m = Manifest::read(&dir).unwrap();
    assert!(m.extra.is_empty(), "{:?}", m.extra.keys());
    assert_eq!(m.runs_executed, 39);
    assert_eq!(m.exec.max_iter, 100_000);
    let sic = m
        .solvers
        .iter()
        .find(|s| s.label() == "siconos:nsgs")
        .unwrap();
    assert_eq!(sic.settings["siconos_solver"], "SICONOS_FRICTION_3D_NSGS");
    let again: Manifest = serde_json::from_value(serde_json::to_value(&m).unwrap()).unwrap();
    assert_eq!(again, m);
}

/// A merged manifest (shard manifests nested under `merged_from`) written and read back is
/// the same; an older manifest without most fields reads with defaults and keeps the
/// fields this version does not know.
#[test]
fn merged_and_old_manifests_round_trip() {
    let shard = Manifest {
        suite: "default".into(),
        jobs: 2,
        shard: Some(Shard { index: 1, count: 2 }),
        profiles: vec![Profile::builtin("low").unwrap()],
        solvers: vec![SolverEntry {
            label: "pgs".into(),
            name: "pgs".into(),
            settings: serde_json::json!({"omega": 1.0}),
            settings_hash: [("low".to_string(), "0123456789abcdef".to_string())].into(),
        }],
        ..Manifest::default()
    };
    let merged = Manifest {
        shard: None,
        merged_from: vec![MergedFrom {
            folder: "s1".into(),
            manifest: shard.clone(),
        }],
        ..shard.clone()
    };
    let dir = tempfile::tempdir().unwrap();
    merged.write(dir.path()).unwrap();
    let back = Manifest::read(dir.path()).unwrap();
    assert_eq!(back, merged);
    let raw: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(raw["merged_from"][0]["manifest"]["shard"]["count"], 2);
    assert_eq!(raw["merged_from"][0]["folder"], "s1");
    assert!(raw["merged_from"][0]["manifest"]
        .get("merged_from")
        .is_none());
    assert_eq!(
        raw["solvers"][0]["settings_hash"]["low"],
        "0123456789abcdef"
    );

    std::fs::write(
        dir.path().join("manifest.json"),
        r#"{"suite": "old", "exec": {"max_iter": 50}, "future_field": [1, 2]}"#,
    )
    .unwrap();
    let old = Manifest::read(dir.path()).unwrap();
    assert_eq!(old.suite, "old");
    assert_eq!(old.exec.max_iter, 50);
    assert_eq!(old.exec.tol, 1e-6);
    assert!(old.instances.is_empty() && old.shard.is_none());
    assert_eq!(old.extra["future_field"], serde_json::json!([1, 2]));
    assert_eq!(serde_json::to_value(&old).unwrap()["future_field"][1], 2);
}
