//! Criterion benchmarks of the kernels: the `N`-product and one iteration of each solver on
//! the largest fixture of the default suite (fclib `Spheres-i099-356-679`, CCP, n = 1068, and
//! its normal-block LCP, n = 356).
//!
//! Run: `cargo bench --bench kernels`.

use cpbench_harness::Suite;
use cpbench_problems::Instance;
use cpbench_solvers::registry::{build, SOLVER_NAMES};
use cpbench_solvers::{IterState, Problem};
use criterion::{BatchSize, Criterion};
use std::hint::black_box;

mod support;

fn spheres() -> Vec<Instance> {
    let suite = Suite::default_suite();
    suite
        .entries
        .iter()
        .map(|e| e.load().expect("default-suite fixture loads"))
        .filter(|i| i.name().starts_with("Spheres"))
        .collect()
}

fn bench_matvec(c: &mut Criterion) {
    for inst in spheres() {
        let n = inst.n();
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut y = vec![0.0; n];
        eprintln!("{}: n = {n}, nnz = {}", inst.name(), inst.n_mat().nnz());
        c.bench_function(&format!("matvec_{}", inst.name()), |b| {
            b.iter(|| inst.n_mat().sym_matvec(black_box(&x), &mut y))
        });
    }
}

/// 50 iterations from a fresh start (zero, after `init`, which is not timed): the mean cost of
/// an iteration early in a solve, before any method has converged.
const STEPS: usize = 50;

fn bench_solver_steps(c: &mut Criterion) {
    for inst in spheres() {
        // Clarabel is one-shot (its first step is the whole solve) and the interior point
        // converges in about 20 iterations, each a factorisation: both are timed whole in
        // benches/ipm.rs, not per iteration.
        for name in SOLVER_NAMES
            .into_iter()
            .filter(|&n| n != "clarabel" && n != "ipm")
        {
            if !build(name, None)
                .expect("default settings are valid")
                .solver
                .supports(inst.class())
            {
                continue; // e.g. MPRGP on the CCP
            }
            let problem = Problem::new(&inst);
            c.bench_function(&format!("{STEPS}_iterations_{name}_{}", inst.name()), |b| {
                b.iter_batched_ref(
                    || {
                        let mut built = build(name, None).expect("default settings are valid");
                        let mut state = IterState::new(vec![0.0; inst.n()]);
                        built.solver.init(&problem, &mut state).expect("init");
                        (built, state)
                    },
                    |(built, state)| {
                        for _ in 0..STEPS {
                            state.grad_fresh = false;
                            black_box(built.solver.step(&problem, state).expect("step"));
                        }
                    },
                    BatchSize::SmallInput,
                )
            });
        }
    }
}

support::main_without_plots!(bench_matvec, bench_solver_steps);
