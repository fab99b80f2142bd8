//! # cpbench-test-support
//!
//! Helpers shared by the test suites of the workspace (`problems/tests`, `solvers/tests`,
//! `tests/`), so that each exists once: the repository's fixture folder, small dense instances,
//! a deterministic pseudo-random generator and random PSD matrices, and one-call solves through
//! the registry and the executor. Test-only (`publish = false`); every helper panics on misuse,
//! as a test should.
#![deny(missing_docs)]

use cpbench_problems::rng::SplitMix64;
use cpbench_problems::{ConstraintSet, CscMatrix, Instance, Provenance, ValidationOptions};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, SolveResult};
use std::path::{Path, PathBuf};

/// The repository's fixture folder `tests/fixtures` (origin and licences in its `NOTICE`,
/// layouts in its `README.md`), as an absolute path.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A file of [`fixtures`], e.g. `fixture("siconos-fc3d/Rover4396.dat")`.
pub fn fixture(rel: &str) -> PathBuf {
    fixtures().join(rel)
}

/// Instance `"t"` with the dense `n x n` matrix `vals` (column-major, `n * n` entries), linear
/// term `r` (length `n`) and constraint set `k`, validated with the default options.
/// Panics when the data are invalid (non-finite, not symmetric, wrong sizes).
pub fn dense(n: usize, vals: &[f64], r: Vec<f64>, k: ConstraintSet) -> Instance {
    let m = CscMatrix::from_dense_col_major(n, n, vals).unwrap();
    Instance::new(
        "t",
        m,
        r,
        k,
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

/// Deterministic pseudo-random numbers in `[-1, 1)` for the tests: the project's one seeded
/// generator ([`cpbench_problems::rng::SplitMix64`]) behind a small test-facing API.
#[derive(Clone, Debug)]
pub struct TestRng(SplitMix64);

impl TestRng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(SplitMix64::new(seed))
    }

    /// The next number, uniform in `[-1, 1)`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> f64 {
        self.0.uniform(-1.0, 1.0)
    }
}

/// `N = B^T B + shift I`, `n x n` column-major, with `B` (`m x n`) drawn from `rng` row by row:
/// PSD of rank `min(m, n)` for `shift = 0`, positive definite for `shift > 0`.
pub fn random_psd(n: usize, m: usize, shift: f64, rng: &mut TestRng) -> Vec<f64> {
    let b: Vec<f64> = (0..m * n).map(|_| rng.next()).collect();
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            out[i + j * n] = (0..m).map(|k| b[k * n + i] * b[k * n + j]).sum();
        }
        out[i + i * n] += shift;
    }
    out
}

/// Solve `inst` from zero with registry solver `name` (default settings) under `exec`, no
/// observers. Panics on an unknown solver or a warm-start error (none here).
pub fn solve_with(name: &str, inst: &Instance, exec: ExecSettings) -> SolveResult {
    let mut b = build(name, None).unwrap();
    Executor::new(exec)
        .run(b.solver.as_mut(), inst, None, &mut [])
        .unwrap()
}

/// [`solve_with`] to tolerance `tol` within `max_iter` iterations, other executor settings at
/// their defaults.
pub fn solve(name: &str, inst: &Instance, tol: f64, max_iter: u64) -> SolveResult {
    solve_with(
        name,
        inst,
        ExecSettings {
            tol,
            max_iter,
            ..Default::default()
        },
    )
}

/// The value of counter `name` in `res`; panics naming the counter and listing those there
/// are when it is missing.
pub fn counter(res: &SolveResult, name: &str) -> f64 {
    res.counters
        .iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no counter {name} in {:?}", res.counters))
        .1
}

/// `max_i |a_i - b_i|` over the common length of `a` and `b` (0 for none; a NaN difference is
/// passed over, as `f64::max` does).
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `||a - b||_2 / ||b||_2` over the common length (`b`, the reference, at least the smallest
/// positive number).
pub fn rel_l2_diff(a: &[f64], b: &[f64]) -> f64 {
    let d = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>();
    let n = b.iter().map(|x| x * x).sum::<f64>();
    d.sqrt() / n.sqrt().max(f64::MIN_POSITIVE)
}

/// [`max_abs_diff`] relative to `max_i |a_i|` (NaN when `a` is empty or all zero).
pub fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    max_abs_diff(a, b) / a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

/// Runs `cmd` (a CLI invocation) to its end and asserts it succeeded; the failure message
/// names the command and carries its stderr. Returns the output (stdout, stderr, status).
pub fn succeed(cmd: &mut std::process::Command) -> std::process::Output {
    let o = cmd.output().expect("the command starts");
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Asserts that `res` claims [`Status::Converged`](cpbench_solvers::Status::Converged); the
/// failure message starts with `what` (solver and instance) and carries the residuals.
pub fn assert_converged(what: &str, res: &SolveResult) {
    assert_eq!(
        res.status,
        cpbench_solvers::Status::Converged,
        "{what}: {:?}",
        res.residuals
    );
}

/// The 2-variable LCP `0 <= gamma ⊥ N gamma + r >= 0` with `N` row-major (`[n11, n12, n21,
/// n22]`), through [`dense`].
pub fn lcp2(n: [f64; 4], r: [f64; 2]) -> Instance {
    dense(2, &n, r.to_vec(), ConstraintSet::NonNegative)
}

/// The hand-built jointed instance of the joint tests (docs/formulation.md, "Bilateral
/// rows"): `n = 6`, `N = [[2 I, I], [I, 2 I]]` (3x3 blocks, eigenvalues 1 and 3),
/// `r = (2, 0, 0, -1, 2, 0)`, block 0 a joint (free), block 1 a Coulomb cone with `mu = 0.5`;
/// the CCP, or the Coulomb problem when `coulomb`. Eliminating the joint block
/// (`x_0 = -(r_0 + x_1) / 2`) leaves the one-contact problem `N' = 1.5 I`,
/// `r' = r_1 - r_0 / 2 = (-2, 2, 0)`, whose answers are derived in the tests.
pub fn hand_jointed(coulomb: bool) -> Instance {
    let mut vals = vec![0.0; 36];
    for i in 0..6 {
        vals[i + 6 * i] = 2.0;
    }
    for i in 0..3 {
        vals[i + 6 * (i + 3)] = 1.0;
        vals[(i + 3) + 6 * i] = 1.0;
    }
    let m = CscMatrix::from_dense_col_major(6, 6, &vals).unwrap();
    let r = vec![2.0, 0.0, 0.0, -1.0, 2.0, 0.0];
    let k = ConstraintSet::coulomb_jointed(vec![0.0, 0.5], 3, 1);
    let (p, o) = (Provenance::default(), ValidationOptions::default());
    if coulomb {
        Instance::new_coulomb_set("jointed__coulomb", m, r, k, p, o).unwrap()
    } else {
        Instance::new("jointed__ccp", m, r, k, p, o).unwrap()
    }
}

/// A global allocator that counts every allocation and reallocation (then forwards to
/// [`std::alloc::System`]), for the tests that check a loop allocates nothing once its buffers
/// have grown. Install it in a test binary of its own with one test, so that no other test
/// allocates meanwhile:
///
/// ```ignore
/// #[global_allocator]
/// static GLOBAL: cpbench_test_support::CountingAlloc = cpbench_test_support::CountingAlloc;
/// ```
///
/// and compare [`CountingAlloc::count`] before and after the loop.
pub struct CountingAlloc;

static ALLOCATIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl CountingAlloc {
    /// Allocations and reallocations so far (all threads).
    pub fn count() -> usize {
        ALLOCATIONS.load(std::sync::atomic::Ordering::SeqCst)
    }
}

// SAFETY: every call forwards to the system allocator with the caller's arguments.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// `f()` run on a fresh rayon pool of `threads` threads (the determinism tests: the same bits
/// on 1, 2 and 3 threads). Panics if the pool cannot be built (a test helper).
pub fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
        .install(f)
}
