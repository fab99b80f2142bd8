//! Criterion benchmark of the interior point (`ipm`) against Clarabel (`clarabel`, the pure
//! Rust conic interior point, default settings: 1e-8 gap and feasibility tolerances) on the
//! three largest default-suite instances (`fill-10_step0601__ccp` n = 9516,
//! `fill-10_step0601__lcp` n = 3172, `fill-5_step0601__ccp` n = 2139), both run to a relative
//! natural-map residual of 1e-8 (Clarabel runs to its own end; its residual is printed).
//!
//! The time is the solver's own (`SolveResult::time_s`: `init` — symbolic analysis, Clarabel's
//! problem setup — and every step), not the executor's per-iteration residual monitoring.
//! Before timing, each pair prints iterations, residual, objective, and for `ipm` the time
//! spent in numeric factorisations and in solves (`factor_time_s`, `solve_time_s`).
//!
//! Run: `cargo bench --bench ipm`.

use cpbench_harness::Suite;
use cpbench_problems::Instance;
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, SolveResult};
use criterion::Criterion;
use std::time::Duration;

mod support;

const INSTANCES: [&str; 3] = [
    "fill-10_step0601__ccp",
    "fill-10_step0601__lcp",
    "fill-5_step0601__ccp",
];
const SOLVERS: [&str; 2] = ["ipm", "clarabel"];

fn solve(name: &str, inst: &Instance) -> SolveResult {
    let mut b = build(name, None).expect("default settings are valid");
    let ex = Executor::new(ExecSettings {
        tol: 1e-8,
        max_iter: 200,
        ..Default::default()
    });
    ex.run(b.solver.as_mut(), inst, None, &mut [])
        .expect("no warm start")
}

fn bench_ipm(c: &mut Criterion) {
    let insts = Suite::default_suite().load().expect("built-in suite loads");
    for iname in INSTANCES {
        let inst = insts
            .iter()
            .find(|i| i.name() == iname)
            .expect("instance in the default suite");
        let mut group = c.benchmark_group(iname);
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(10));
        for name in SOLVERS {
            let r = solve(name, inst);
            let counters: Vec<String> = r
                .counters
                .iter()
                .map(|(k, v)| format!("{k}={v:.4}"))
                .collect();
            eprintln!(
                "{iname} (n = {}) {name}: {} after {} iterations, nat_map_rel_2 {:.2e}, \
                 f = {:.12e}, solver time {:.4} s, {}",
                inst.n(),
                r.status,
                r.iterations,
                r.residuals.nat_map_rel_2,
                r.residuals.objective,
                r.time_s,
                counters.join(" ")
            );
            support::bench_solver_time(&mut group, name, || solve(name, inst).time_s);
        }
        group.finish();
    }
}

support::main_without_plots!(bench_ipm);
