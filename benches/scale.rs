//! Criterion benchmark of the `N`-product at scale: the first-step CCP of the `scale` suite's
//! 1e5-contact pyramid (38 layers, 104044 contacts, n = 312132), one product per storage of
//! `N` (CSC, block, matrix-free), with Criterion's throughput in bytes of the operator read per product
//! ([`Instance::operator_bytes`]) and, printed, the achieved GB/s against the machine's
//! STREAM triad ([`triad`], same rayon pool).
//!
//! Run: `cargo bench --bench scale` (generating the instance takes a few seconds).

use cpbench_harness::bandwidth::{triad, TRIAD_LEN, TRIAD_REPEATS};
use cpbench_harness::scale::{generate_pyramid, generate_pyramid_with, ScaleSize};
use cpbench_problems::{Instance, OperatorKind};
use criterion::{Criterion, Throughput};
use std::hint::black_box;
use std::time::Instant;

mod support;

/// Storages of `N` benchmarked.
const KINDS: [OperatorKind; 3] = [
    OperatorKind::Csc,
    OperatorKind::Block,
    OperatorKind::MatrixFree,
];

/// The pyramid's instance with its operator stored as `kind`: CSC and block converted from
/// the generated instance (exactly the same entries), matrix-free generated again from the
/// same scene (`D` and `M`, `N` never formed).
fn with_storage(inst: &Instance, size: &ScaleSize, kind: OperatorKind) -> Instance {
    match kind {
        OperatorKind::MatrixFree => {
            generate_pyramid_with(size, Some(kind)).expect("the pyramid generates")
        }
        _ => inst
            .clone()
            .with_operator(kind)
            .expect("csc and block convert"),
    }
}

fn bench_matvec(c: &mut Criterion) {
    let size = ScaleSize::for_target(1e5).expect("valid target");
    let t = Instant::now();
    let base = generate_pyramid(&size).expect("the pyramid generates");
    let gen_s = t.elapsed().as_secs_f64();
    let tr = triad(TRIAD_LEN, TRIAD_REPEATS);
    let triad = tr.gbs;
    eprintln!(
        "{}: {} contacts, n = {}, generated in {gen_s:.1} s; triad {triad:.2} GB/s on {} threads",
        base.name(),
        size.contacts,
        base.n(),
        tr.threads
    );
    let n = base.n();
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut y = vec![0.0; n];
    let mut group = c.benchmark_group("scale_matvec");
    group.sample_size(20);
    for kind in KINDS {
        let inst = with_storage(&base, &size, kind);
        let bytes = inst.operator_bytes();
        // the best of 20 products, printed against the triad
        let mut best = f64::INFINITY;
        for _ in 0..20 {
            let t = Instant::now();
            inst.matvec(black_box(&x), &mut y);
            best = best.min(t.elapsed().as_secs_f64());
        }
        let gbs = bytes as f64 / best / 1e9;
        eprintln!(
            "{kind}: {:.1} MB per product, best {:.3e} s = {gbs:.2} GB/s = {:.0}% of the triad",
            bytes as f64 / 1e6,
            best,
            100.0 * gbs / triad
        );
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function(format!("{kind}_{}", inst.name()), |b| {
            b.iter(|| inst.matvec(black_box(&x), &mut y))
        });
    }
    group.finish();
}

support::main_without_plots!(bench_matvec);
