//! Helpers shared by the Criterion benchmarks (`mod support;` in each): the group/main
//! boilerplate without Criterion's own plots, and timing by the solver's own time.

// Not every benchmark uses every helper.
#![allow(dead_code)]

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use std::time::Duration;

/// Benchmarks `name` in `group` by the time `solve` returns (seconds: the solver's own
/// `SolveResult::time_s`, not the wall clock around the call).
pub fn bench_solver_time(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    solve: impl Fn() -> f64,
) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| (0..iters).map(|_| Duration::from_secs_f64(solve())).sum())
    });
}

/// `criterion_group!` + `criterion_main!` over the given benchmark functions, with
/// Criterion's own plots off (they would need a system font: plotters is built with
/// ab_glyph here).
macro_rules! main_without_plots {
    ($($target:path),+ $(,)?) => {
        criterion::criterion_group! {
            name = benches;
            config = criterion::Criterion::default().without_plots();
            targets = $($target),+
        }
        criterion::criterion_main!(benches);
    };
}
pub(crate) use main_without_plots;
