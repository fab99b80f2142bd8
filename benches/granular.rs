//! Criterion benchmark of the granular stepper's detection (hashed uniform grid + narrow
//! phase) and assembly (Jacobian blocks, sparse `N = D^T M^-1 D`, `r`) on the `fill` scene at
//! sizes 10, 20 and 40 (1000, 4000 and 16000 spheres), CCP. Throughput is reported in
//! contacts per second; a roughly constant figure across sizes shows the O(n) broad phase.
//!
//! The spheres are placed on the fill lattice compressed to spacing `0.999 * 2R` (no jitter),
//! so each touches its six lattice neighbours: the contact density of a settled packing
//! (about 3 contacts per sphere) without simulating the settling. A real settled state is
//! timed by `cpbench generate --scene fill --size 20 ...` (see the README).
//!
//! Run: `cargo bench --bench granular`.

use cpbench_granular::nalgebra::Vector3;
use cpbench_granular::scenes::FillParams;
use cpbench_granular::Simulation;
use criterion::{Criterion, Throughput};
use std::time::Duration;

mod support;

fn packed_fill(n: usize) -> Simulation {
    let p = FillParams {
        n,
        ..Default::default()
    };
    let mut sim = p.build(1, false).unwrap().into_simulation().unwrap();
    let d = 2.0 * p.radius * 0.999;
    let (n, layers) = (p.n, p.layers);
    let mut idx = 0;
    for j in 0..layers {
        for i in 0..n {
            for k in 0..n {
                let b = &mut sim.bodies_mut()[idx];
                b.pos = Vector3::new(
                    p.radius + i as f64 * d,
                    p.radius + j as f64 * d,
                    p.radius + k as f64 * d,
                );
                idx += 1;
            }
        }
    }
    sim
}

fn bench_detect_assemble(c: &mut Criterion) {
    let mut g = c.benchmark_group("granular_detect_assemble");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(6));
    for n in [10usize, 20, 40] {
        let mut sim = packed_fill(n);
        let nc = sim.detect();
        sim.assemble().unwrap();
        eprintln!(
            "fill-{n}: {} spheres, {nc} contacts ({:.2} per sphere)",
            sim.world().bodies.len(),
            nc as f64 / sim.world().bodies.len() as f64
        );
        g.throughput(Throughput::Elements(nc as u64));
        g.bench_function(format!("fill-{n}"), |b| {
            b.iter(|| {
                sim.detect();
                sim.assemble().unwrap();
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("granular_detect");
    g.sample_size(10);
    for n in [10usize, 40] {
        let mut sim = packed_fill(n);
        let nc = sim.detect();
        g.throughput(Throughput::Elements(nc as u64));
        g.bench_function(format!("fill-{n}"), |b| b.iter(|| sim.detect()));
    }
    g.finish();
}

support::main_without_plots!(bench_detect_assemble);
