//! Criterion benchmark of MPRGP, SPG-QP and APGD on the journal-bearing box QP
//! (MINPACK-2 `dpjb` as in PERMON's `jbearing2.c`, `ecc = 0.1`, `b = 10`) at three grid sizes,
//! (`30 x 30` as in PERMON's `jbearing2_3`/`_6`, `60 x 60`, `120 x 120`), each solved from
//! zero to PERMON's stopping test `||g^P|| <= 1e-6 ||r||` (`ResidualKind::ProjGradRel`).
//!
//! The time reported is the solver's own time (`SolveResult::time_s`: `init` and every step,
//! power method included), not the executor's per-iteration monitoring: the executor
//! computes all residuals of every iterate, with one extra uncounted product whenever the
//! solver's gradient is a recurrence (MPRGP's CG steps) and none when it is fresh (APGD), so
//! wall-clock time would charge the methods unequally. The `N`-products and iterations of
//! each solve are printed once before timing (they do not vary between runs).
//!
//! Run: `cargo bench --bench boxqp`.

use cpbench_problems::generators::boxqp::jbearing2;
use cpbench_problems::{Instance, ResidualKind};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, SolveResult};
use criterion::Criterion;
use std::time::Duration;

mod support;

const SIZES: [usize; 3] = [30, 60, 120];
const SOLVERS: [&str; 3] = ["mprgp", "spgqp", "apgd"];

fn solve(name: &str, inst: &Instance) -> SolveResult {
    let mut b = build(name, None).expect("default settings are valid");
    let ex = Executor::new(ExecSettings {
        tol: 1e-6,
        residual: Some(ResidualKind::ProjGradRel),
        max_iter: 100_000,
        ..Default::default()
    });
    ex.run(b.solver.as_mut(), inst, None, &mut [])
        .expect("no warm start")
}

fn bench_jbearing(c: &mut Criterion) {
    for m in SIZES {
        let inst = jbearing2(m, m, 0.1, 10.0).expect("valid grid");
        let mut group = c.benchmark_group(format!("jbearing2-{m}x{m}"));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(5));
        for name in SOLVERS {
            let r = solve(name, &inst);
            eprintln!(
                "jbearing2-{m}x{m} (n = {}) {name}: {} after {} iterations, {} N-products, \
                 proj_grad_rel {:.2e}, f = {:.10}, solver time {:.4} s",
                inst.n(),
                r.status,
                r.iterations,
                r.matvecs,
                r.residuals.proj_grad_rel,
                r.residuals.objective,
                r.time_s
            );
            support::bench_solver_time(&mut group, name, || solve(name, &inst).time_s);
        }
        group.finish();
    }
}

support::main_without_plots!(bench_jbearing);
