//! The STREAM-triad bandwidth measurement (`cpbench_harness::bandwidth`).

use cpbench_harness::bandwidth::{triad, triad_bandwidth};

/// A small triad gives a positive, finite rate and reports its sizes and the pool's
/// threads.
#[test]
fn triad_is_positive_and_finite() {
    let t = triad(1 << 18, 3);
    assert!(t.gbs.is_finite() && t.gbs > 0.0, "{t:?}");
    assert_eq!(t.len, 1 << 18);
    assert_eq!(t.repeats, 3);
    assert_eq!(t.threads, rayon::current_num_threads());
    // degenerate sizes are clamped, not a panic or a division by zero
    let t = triad(0, 0);
    assert!(t.gbs.is_finite() && t.gbs > 0.0 && t.len == 1 && t.repeats == 1);
    // on a one-thread pool the record says so
    let t = cpbench_test_support::on_threads(1, || triad(1 << 16, 2));
    assert_eq!(t.threads, 1);
    assert!(t.gbs > 0.0);
}

/// The full-size measurement is a plausible memory bandwidth (0.1 GB/s to 10 TB/s).
#[test]
fn default_triad_is_plausible() {
    let _g = super::memory::HEAVY
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let g = triad_bandwidth();
    assert!((0.1..1e4).contains(&g), "{g} GB/s");
}
