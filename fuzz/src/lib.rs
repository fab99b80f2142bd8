//! Shared pieces of cpbench's fuzz targets (docs/fuzzing.md).
//!
//! - [`HookedAlloc`], the global allocator of every target: the system allocator, reporting
//!   each allocation to libFuzzer's malloc hook. Without a sanitizer runtime nobody else
//!   provides `__sanitizer_install_malloc_and_free_hooks`, and libFuzzer's `-malloc_limit_mb`
//!   (a single allocation larger than the limit is an `oom-` finding, with the input saved)
//!   would silently do nothing; with it, the flag works on a plain stable build. A sanitizer
//!   build (nightly, `-Zsanitizer=address`) has its own hooks: build it with
//!   `--cfg cpbench_fuzz_no_hooks` to leave these out.
//! - [`scratch_dir`] and [`write_scratch`]: a private temporary folder per process (under
//!   `$TMPDIR`), where the targets that read files as the CLI does put the input. Nothing is
//!   written anywhere else; the folder is removed at a normal exit (`fuzz/run.sh` also gives
//!   each run a `TMPDIR` of its own and removes it).
//! - [`split_parts`]: one input holding several files (a bundle), separated by NUL bytes.
//! - [`options_for`]: the [`LoadOptions`] a target uses besides the CLI default.

use cpbench_problems::io::{ClassChoice, LoadOptions};
use cpbench_problems::ValidationOptions;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// malloc hooks for libFuzzer (-malloc_limit_mb without ASan)
// ---------------------------------------------------------------------------------------------

type MallocHook = unsafe extern "C" fn(*const c_void, usize);
type FreeHook = unsafe extern "C" fn(*const c_void);

static MALLOC_HOOK: AtomicUsize = AtomicUsize::new(0);
static FREE_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Allocations at least this large (the unit of `-malloc_limit_mb`) mark the thread while
/// libFuzzer's hook looks at them, so that [`__sanitizer_print_stack_trace`] (called by
/// libFuzzer when the hook reports an `out-of-memory (malloc(N))`) prints where the allocation
/// came from.
const BIG_ALLOCATION: usize = 1 << 20;

thread_local! {
    static IN_BIG_ALLOCATION: Cell<bool> = const { Cell::new(false) };
    /// Set while the backtrace is printed: its own (large) allocations are not reported.
    static PRINTING: Cell<bool> = const { Cell::new(false) };
}

/// Called by libFuzzer at start-up (it looks the symbol up as a weak function, as it does for
/// ASan's): remember its hooks. Left out with `--cfg cpbench_fuzz_no_hooks` (a sanitizer
/// build, whose runtime defines it).
///
/// # Safety
/// Called by libFuzzer with function pointers valid for the life of the process.
#[cfg(not(cpbench_fuzz_no_hooks))]
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_install_malloc_and_free_hooks(
    malloc_hook: Option<MallocHook>,
    free_hook: Option<FreeHook>,
) -> i32 {
    MALLOC_HOOK.store(malloc_hook.map_or(0, |f| f as usize), Ordering::Release);
    FREE_HOOK.store(free_hook.map_or(0, |f| f as usize), Ordering::Release);
    1
}

/// Called by libFuzzer where a sanitizer would print the stack: here only for an allocation
/// over `-malloc_limit_mb` (a normal context: no signal handler, no allocator lock held), with
/// the Rust backtrace of the allocation. Elsewhere (deadly signals, timeouts, in signal
/// handlers) it prints nothing: a panic's message and backtrace come from the panic hook
/// (`RUST_BACKTRACE=1`), and a timeout is reproduced by running the binary on the artifact.
#[cfg(not(cpbench_fuzz_no_hooks))]
#[no_mangle]
pub extern "C" fn __sanitizer_print_stack_trace() {
    if IN_BIG_ALLOCATION.with(|f| f.get()) {
        IN_BIG_ALLOCATION.with(|f| f.set(false));
        PRINTING.with(|f| f.set(true));
        eprintln!("{}", std::backtrace::Backtrace::force_capture());
        PRINTING.with(|f| f.set(false));
    }
}

#[inline]
fn after_alloc(ptr: *mut u8, size: usize) {
    let h = MALLOC_HOOK.load(Ordering::Acquire);
    if h != 0 && !ptr.is_null() && !PRINTING.with(|f| f.get()) {
        // SAFETY: `h` was stored from a valid `MallocHook` by libFuzzer.
        let hook: MallocHook = unsafe { std::mem::transmute::<usize, MallocHook>(h) };
        if size >= BIG_ALLOCATION {
            IN_BIG_ALLOCATION.with(|f| f.set(true));
            unsafe { hook(ptr as *const c_void, size) };
            IN_BIG_ALLOCATION.with(|f| f.set(false));
        } else {
            unsafe { hook(ptr as *const c_void, size) };
        }
    }
}

#[inline]
fn before_free(ptr: *mut u8) {
    let h = FREE_HOOK.load(Ordering::Acquire);
    if h != 0 {
        // SAFETY: `h` was stored from a valid `FreeHook` by libFuzzer.
        let hook: FreeHook = unsafe { std::mem::transmute::<usize, FreeHook>(h) };
        unsafe { hook(ptr as *const c_void) };
    }
}

/// The system allocator, telling libFuzzer of every allocation (see the module docs).
pub struct HookedAlloc;

unsafe impl GlobalAlloc for HookedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        after_alloc(p, layout.size());
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        after_alloc(p, layout.size());
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        before_free(ptr);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            before_free(ptr);
            after_alloc(p, new_size);
        }
        p
    }
}

#[cfg(not(cpbench_fuzz_no_hooks))]
#[global_allocator]
static GLOBAL: HookedAlloc = HookedAlloc;

// ---------------------------------------------------------------------------------------------
// scratch files
// ---------------------------------------------------------------------------------------------

extern "C" {
    fn atexit(cb: extern "C" fn()) -> i32;
}

extern "C" fn remove_scratch() {
    if let Some(d) = SCRATCH.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

static SCRATCH: OnceLock<PathBuf> = OnceLock::new();

/// This process's scratch folder, `$TMPDIR/cpbench-fuzz-<pid>`, created on first use and
/// removed at a normal exit.
pub fn scratch_dir() -> &'static Path {
    SCRATCH.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("cpbench-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("create the fuzz scratch folder under $TMPDIR");
        // SAFETY: registering a plain `extern "C" fn()`.
        unsafe { atexit(remove_scratch) };
        d
    })
}

/// Write `bytes` to `name` in the scratch folder (replacing it) and return its path.
pub fn write_scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch_dir().join(name);
    std::fs::write(&p, bytes).expect("write a fuzz scratch file");
    p
}

/// The parts of an input holding several files, separated by NUL bytes (text formats hold no
/// NUL, so nothing is lost for them); at most `max` parts, the last one keeping any further NULs.
pub fn split_parts(data: &[u8], max: usize) -> Vec<&[u8]> {
    data.splitn(max, |&b| b == 0).collect()
}

/// Read `class` and `symmetrize` choices a target tries besides the CLI default
/// ([`LoadOptions::default`]: `--class ccp`, no `--symmetrize`): picked from the input's
/// length, so a given input always gets the same one, and mutations that change the length
/// visit them all (the derivations: normal-block LCP, Coulomb problem, BLCP, pyramid LCP).
pub fn options_for(data: &[u8]) -> LoadOptions {
    const CLASSES: [ClassChoice; 6] = [
        ClassChoice::Lcp,
        ClassChoice::Ccp,
        ClassChoice::Coulomb,
        ClassChoice::Blcp,
        ClassChoice::LcpPyramid { k: 4 },
        ClassChoice::LcpPyramid { k: 3 },
    ];
    let i = data.len() % (2 * CLASSES.len());
    LoadOptions {
        class: CLASSES[i % CLASSES.len()],
        validation: ValidationOptions {
            symmetrize: i >= CLASSES.len(),
            ..Default::default()
        },
    }
}

/// What `cpbench info` does with an instance it loaded, in part, and the instance's invariants:
/// `r` of length `n` and finite; `N` in CSC form (formed from the block or matrix-free storage,
/// as `info` forms it), finite; one product with `N`; the constraint summary and the content
/// hash. An instance built inconsistent fails here, where the CLI would use it.
pub fn exercise(inst: &cpbench_problems::Instance) {
    let n = inst.n();
    assert_eq!(inst.r().len(), n, "r has n entries");
    assert!(
        inst.r().iter().all(|v| v.is_finite()),
        "instance '{}': r holds a non-finite entry",
        inst.name()
    );
    if n > 1 << 16 {
        return;
    }
    let x = vec![1.0; n];
    let mut y = vec![0.0; n];
    inst.matvec(&x, &mut y);
    let csc = inst.csc();
    assert_eq!((csc.nrows(), csc.ncols()), (n, n), "N is n x n");
    if let Some(v) = csc.values().iter().find(|v| !v.is_finite()) {
        panic!(
            "instance '{}' was built with a non-finite entry {v} in N (the invariant of \
             Instance and CscMatrix is finite values)",
            inst.name()
        );
    }
    let _ = csc.diag();
    let _ = inst.constraints().summary();
    let _ = inst.hash();
    let _ = (
        inst.class(),
        inst.name(),
        inst.provenance(),
        inst.operator_kind(),
    );
}

// ---------------------------------------------------------------------------------------------
// the ways an instance file is read
// ---------------------------------------------------------------------------------------------

use cpbench_problems::io::{load, load_bytes, Format};

/// The CLI's way (`cpbench info FILE`, `run --instances FILE`, suite entries on disk): the input
/// written to `file_name` in the scratch folder and read with [`load`] and the CLI's default
/// options (`--class ccp`, no `--symmetrize`): format detection from the first 64 KiB,
/// declared-size checks against the file length, then the reader.
#[inline(never)]
pub fn cli_load(file_name: &str, data: &[u8]) {
    let path = write_scratch(file_name, data);
    if let Ok(inst) = load(&path, &LoadOptions::default()) {
        exercise(&inst);
    }
}

/// The library's in-memory way ([`load_bytes`], as the built-in suites read embedded files):
/// the input read as `format` (whatever detection would say) with [`options_for`] the input.
#[inline(never)]
pub fn api_load_as(file_name: &str, data: &[u8], format: Format) {
    if let Ok(inst) = load_bytes(file_name, data, format, &options_for(data)) {
        exercise(&inst);
    }
}
