//! Criterion benchmark of Clarabel (Goulart & Chen 2024, arXiv:2405.12762; the `clarabel`
//! crate with QDLDL, default settings) on the three largest default-suite instances: the
//! settled `fill-10` CCP (n = 9516), the `fill-5` CCP (n = 2139) and the `fill-10` LCP
//! (n = 3172). The time is the solver's own (`SolveResult::time_s`: building the conic form,
//! Clarabel's setup, symbolic and numeric factorisations and iterations), without the
//! executor's residual monitoring. Status, Clarabel's iterations and the harness's
//! natural-map residual are printed once before timing.
//!
//! Run: `cargo bench --bench clarabel` (the fill-10 CCP takes seconds per solve: ten samples).

use cpbench_harness::Suite;
use cpbench_problems::Instance;
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, SolveResult};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

const INSTANCES: [&str; 3] = [
    "fill-10_step0601__ccp",
    "fill-5_step0601__ccp",
    "fill-10_step0601__lcp",
];

fn solve(inst: &Instance) -> SolveResult {
    let mut b = build("clarabel", None).expect("default settings are valid");
    Executor::new(ExecSettings::default())
        .run(b.solver.as_mut(), inst, None, &mut [])
        .expect("no warm start")
}

fn bench_clarabel(c: &mut Criterion) {
    let insts: Vec<Instance> = Suite::default_suite()
        .entries
        .iter()
        .map(|e| e.load().expect("default-suite instance loads"))
        .filter(|i| INSTANCES.contains(&i.name()))
        .collect();
    let mut group = c.benchmark_group("clarabel");
    group.sample_size(10);
    for inst in &insts {
        let r = solve(inst);
        eprintln!(
            "{} (n = {}): {} ({}), nat_map_rel_2 {:.2e}, f = {:.10}, solver time {:.3} s",
            inst.name(),
            inst.n(),
            r.status,
            r.message.as_deref().unwrap_or(""),
            r.residuals.nat_map_rel_2,
            r.residuals.objective,
            r.time_s
        );
        group.bench_function(inst.name(), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| Duration::from_secs_f64(solve(inst).time_s))
                    .sum()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Criterion's own plots would need a system font (plotters is built with ab_glyph here).
    config = Criterion::default().without_plots();
    targets = bench_clarabel
}
criterion_main!(benches);
