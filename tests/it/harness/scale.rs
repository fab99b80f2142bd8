//! The `scale` suite's sizes and its `.npz` instance cache (`cpbench_harness::scale`).

use cpbench_granular::scenes::PyramidParams;
use cpbench_harness::scale::{
    cache_path, pyramid_contacts, scale_instance, scale_sizes, ScaleSize, SCALE_SEED, SCALE_TARGETS,
};

/// The contact formula matches the brief's pyramid-40 count and a detection on small
/// pyramids; targets map to the nearest pyramid in ratio.
#[test]
fn sizes_and_contacts() {
    assert_eq!(pyramid_contacts(40), 121_680);
    assert_eq!(pyramid_contacts(1), 0);
    assert_eq!(pyramid_contacts(2), 4);
    let got: Vec<(usize, u64)> = SCALE_TARGETS
        .iter()
        .map(|&t| {
            let s = ScaleSize::for_target(t).unwrap();
            (s.layers, s.contacts)
        })
        .collect();
    assert_eq!(got, [(9, 1152), (18, 10_404), (38, 104_044), (80, 998_560)]);
    // the formula is what the stepper detects on the first step
    for l in [3, 5] {
        let mut sim = PyramidParams {
            layers: l,
            ..Default::default()
        }
        .build(SCALE_SEED, false)
        .unwrap()
        .into_simulation()
        .unwrap();
        assert_eq!(sim.detect() as u64, pyramid_contacts(l), "layers {l}");
    }
    // defaults, the cap, repeats, bad targets
    assert_eq!(scale_sizes(&[], None).unwrap().len(), 4);
    let s = scale_sizes(&[], Some(1e5)).unwrap();
    assert_eq!(s.iter().map(|s| s.layers).collect::<Vec<_>>(), [9, 18]);
    let s = scale_sizes(&[300.0, 1e2, 310.0], None).unwrap();
    assert_eq!(
        s.iter().map(|s| (s.layers, s.contacts)).collect::<Vec<_>>(),
        [(4, 72), (6, 300)]
    );
    assert!(scale_sizes(&[1e3], Some(10.0)).is_err());
    assert!(ScaleSize::for_target(0.0).is_err());
    assert!(ScaleSize::for_target(f64::NAN).is_err());
}

/// The first call generates and caches the instance, the second reads the same instance
/// (same hash) from the cache without generating.
#[test]
fn instances_are_cached() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let size = ScaleSize::for_target(72.0).unwrap();
    assert_eq!(size.layers, 4);
    let (a, generated) = scale_instance(&size, &cache).unwrap();
    assert!(generated);
    assert_eq!(a.n(), 3 * 72);
    assert_eq!(a.class().as_str(), "ccp");
    let file = cache_path(&cache, &size);
    assert!(file.exists());
    assert_eq!(
        file.file_name().unwrap().to_str().unwrap(),
        "pyramid-4_seed1__ccp.npz"
    );
    let stamp = std::fs::metadata(&file).unwrap().modified().unwrap();
    let (b, generated) = scale_instance(&size, &cache).unwrap();
    assert!(!generated);
    assert_eq!(a.hash(), b.hash());
    assert_eq!(a.name(), b.name());
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), stamp);
    // no temporary file left behind
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
}
