//! Scene construction (`cpbench_granular::scenes`): body counts, no overlap at the start,
//! determinism in the seed, typed parameter errors, and the ellipsoid scenes' random rotations
//! and spheroid axes.

use cpbench_granular::nalgebra::Vector3;
use cpbench_granular::rng::SplitMix64;
use cpbench_granular::scenes::{
    random_rotation, spheroid_axes, FillParams, PileParams, PyramidParams, TubeParams,
};
use cpbench_granular::{GranularError, Result, Scene, SceneKind, SceneSpec};

#[test]
fn scenes_build_with_expected_counts_and_no_overlap_at_start() {
    let fill = SceneSpec {
        kind: SceneKind::Fill,
        size: 3,
        seed: 1,
        frictionless: false,
        aspect: None,
    }
    .build()
    .unwrap();
    assert_eq!(fill.world.bodies.len(), 90);
    assert_eq!(fill.world.planes.len(), 6);
    let pyr = PyramidParams {
        layers: 4,
        ..Default::default()
    }
    .build(0, false)
    .unwrap();
    assert_eq!(pyr.world.bodies.len(), 16 + 9 + 4 + 1);
    assert_eq!(pyr.world.bodies.iter().filter(|b| b.fixed).count(), 16);
    for spec in [
        (SceneKind::Fill, 4),
        (SceneKind::Pile, 200),
        (SceneKind::Pyramid, 5),
        (SceneKind::Tube, 50),
        (SceneKind::Bounce, 3),
        (SceneKind::Cradle, 5),
    ] {
        let sc = SceneSpec {
            kind: spec.0,
            size: spec.1,
            seed: 3,
            frictionless: false,
            aspect: None,
        }
        .build()
        .unwrap();
        let mut sim = sc.into_simulation().unwrap();
        sim.detect();
        // touching is allowed (pyramid), overlapping beyond rounding is not
        assert!(
            sim.max_penetration() < 1e-12,
            "{:?}: overlap {}",
            spec.0,
            sim.max_penetration()
        );
    }
}

#[test]
fn same_seed_same_scene_other_seed_other_scene() {
    let a = FillParams::default().build(5, false).unwrap();
    let b = FillParams::default().build(5, false).unwrap();
    let c = FillParams::default().build(6, false).unwrap();
    assert_eq!(a.world.bodies, b.world.bodies);
    assert_ne!(a.world.bodies, c.world.bodies);
}

/// Asserts that `e` is the typed error for the parameter `field`.
fn rejects(e: Result<Scene>, field: &str) {
    match e {
        Err(GranularError::InvalidParameter { name, .. }) => assert_eq!(name, field),
        Err(other) => panic!("{field}: wrong error {other}"),
        Ok(_) => panic!("{field}: accepted"),
    }
}

#[test]
fn bad_parameters_are_typed_errors() {
    let spec = SceneSpec {
        kind: SceneKind::Fill,
        size: 0,
        seed: 0,
        frictionless: false,
        aspect: None,
    };
    rejects(spec.build(), "size");
    let fill = |p: FillParams| p.build(0, false);
    rejects(
        fill(FillParams {
            radius: -0.4,
            ..Default::default()
        }),
        "radius",
    );
    rejects(
        fill(FillParams {
            h: 0.0,
            ..Default::default()
        }),
        "h",
    );
    let pile = PileParams {
        r_max: 0.01,
        ..Default::default()
    };
    rejects(pile.build(0, false), "r_max");
    let e = TubeParams {
        angle_deg: 95.0,
        ..Default::default()
    }
    .build(0, false);
    assert!(e.is_err());
    assert!(matches!(
        SceneKind::parse("heap"),
        Err(GranularError::UnknownScene(_))
    ));
}

#[test]
fn random_rotations_are_unit_and_spread() {
    let mut rng = SplitMix64::new(3);
    let mut mean = Vector3::zeros();
    let n = 20_000;
    for _ in 0..n {
        let q = random_rotation(&mut rng);
        assert!((q.quaternion().norm() - 1.0).abs() < 1e-12);
        mean += q * Vector3::x();
    }
    // the rotated x axis is uniform on the sphere: its mean is 0 (+- 3/sqrt(3n))
    assert!((mean / n as f64).norm() < 0.03, "{mean:?}");
}

#[test]
fn spheroid_axes_keep_the_bound() {
    assert_eq!(
        spheroid_axes(0.4, 2.0).unwrap(),
        Vector3::new(0.4, 0.2, 0.2)
    );
    assert_eq!(
        spheroid_axes(0.4, 0.5).unwrap(),
        Vector3::new(0.2, 0.4, 0.4)
    );
    assert!(spheroid_axes(0.4, 0.0).is_err());
    assert!(spheroid_axes(0.4, f64::NAN).is_err());
}

#[test]
fn scenes_start_without_overlap() {
    for aspect in [0.5, 1.0, 3.0] {
        let s = FillParams {
            n: 3,
            layers: 3,
            ..FillParams::ellipsoids(aspect)
        }
        .build(1, false)
        .unwrap();
        assert_eq!(s.world.bodies.len(), 27);
        let p = PileParams {
            count: 40,
            ..PileParams::ellipsoids(aspect)
        }
        .build(1, false)
        .unwrap();
        for sc in [s, p] {
            let mut sim = sc.into_simulation().unwrap();
            sim.detect();
            assert!(sim.max_penetration() == 0.0, "aspect {aspect}");
        }
    }
}
