//! The fuzz findings of `tests/fixtures/fuzz/` (issue 30): each input once made a reader
//! allocate gigabytes from a few bytes. Reading them must fail with an error and never ask for
//! a large block: a global allocator records the largest single request (its own test binary,
//! one test, so that no other test allocates meanwhile). With Linux's overcommit a 5 GB
//! request may well succeed, so the size is what is checked, not a crash.

use cpbench_problems::io::{load, mtx, LoadOptions};
use cpbench_test_support::fixture;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Largest = Largest;

/// At most this much in one allocation while reading a finding (the files are < 2 kB).
const CAP: usize = 64 << 20;

#[test]
fn fuzz_findings_fail_without_large_allocations() {
    let mut failed = Vec::new();
    let mut check = |name: &str, read: &dyn Fn() -> Result<(), String>| {
        LARGEST.store(0, Ordering::Relaxed);
        let outcome = read();
        let largest = LARGEST.load(Ordering::Relaxed);
        match outcome {
            Ok(()) => failed.push(format!("{name}: read without an error")),
            Err(e) if largest > CAP => {
                failed.push(format!("{name}: {largest} bytes in one allocation ({e})"))
            }
            Err(e) => eprintln!("{name}: {e} (largest allocation {largest} bytes)"),
        }
    };
    let path = fixture("fuzz/mtx-array-0-by-620292882.mtx");
    check("mtx array 0 x 620292882", &|| {
        let bytes = std::fs::read(&path).unwrap();
        mtx::read_matrix(&path, &bytes)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    for f in [
        "fuzz/siconos-global-block-count-1.dat",
        "fuzz/siconos-global-block-count-2.dat",
        "fuzz/npz-npy-header-length-3.6GB.npz",
    ] {
        let path = fixture(f);
        check(f, &|| {
            load(&path, &LoadOptions::default())
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
