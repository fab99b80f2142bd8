//! Peak resident memory (`cpbench_harness::memory`): `VmHWM`, its reset, `getrusage`.

use cpbench_harness::memory::{reset_peak, rusage_max_rss, vm_hwm, vm_rss, PeakMethod, PeakRss};

/// Held by the tests that allocate large buffers (this module's, the full-size triad of
/// `bandwidth`), so that one does not move the high-water mark under another.
pub(crate) static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

/// After a reset, the peak covers a 64 MiB buffer touched during the measurement, and the
/// method says how it was measured.
#[test]
fn peak_covers_a_touched_allocation() {
    const BYTES: usize = 64 << 20;
    let _g = heavy();
    let m = PeakRss::start(true);
    let before = vm_rss().or_else(rusage_max_rss).unwrap_or(0);
    let mut v = vec![0u8; BYTES];
    for i in (0..BYTES).step_by(4096) {
        v[i] = (i % 251) as u8 + 1;
    }
    std::hint::black_box(&v);
    let peak = m.read();
    drop(v);
    if cfg!(target_os = "linux") {
        let peak = peak.expect("Linux reports VmHWM");
        assert!(
            peak + (16 << 20) >= before + BYTES as u64,
            "peak {peak} < resident before {before} + {BYTES}"
        );
        assert!(matches!(
            m.method(),
            Some(PeakMethod::VmhwmReset | PeakMethod::VmhwmProcess)
        ));
    }
    if let Some(p) = peak {
        assert!(p >= BYTES as u64);
    }
    assert_eq!(PeakMethod::VmhwmReset.as_str(), "vmhwm-reset");
}

/// The reset brings the mark down: a 96 MiB buffer touched and freed raises `VmHWM`, and
/// after a reset it is below that peak again (Linux with a writable `clear_refs` only).
#[test]
fn reset_lowers_the_mark() {
    let _g = heavy();
    if !reset_peak() {
        return; // not Linux, or refused: nothing to test here
    }
    const BYTES: usize = 96 << 20;
    let mut v = vec![0u8; BYTES];
    for i in (0..BYTES).step_by(4096) {
        v[i] = 1;
    }
    std::hint::black_box(&v);
    drop(v);
    let high = vm_hwm().unwrap();
    assert!(reset_peak());
    let low = vm_hwm().unwrap();
    assert!(
        low + (BYTES as u64) / 2 <= high,
        "reset left {low} (peak was {high})"
    );
    let r = rusage_max_rss().unwrap();
    assert!(r > 0);
}
