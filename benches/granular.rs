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
//! The group `ellipsoid_detect_assemble` does the same for `ellipsoid-fill` (spheroids
//! `0.4 x 0.2 x 0.2` m, aspect 2) at sizes 10 and 18 (1000 and 3240 ellipsoids, about 1e4
//! contacts at 18): a lattice compressed to `0.999` times the spheroids' extents with every
//! body tilted by up to 0.05 rad about a random axis (generic, not axis-aligned pairs), so each
//! ellipsoid touches its six neighbours and the narrow phase runs its Newton iteration on every
//! pair. Issue 17's target: at least 3e5 contacts/s at 1e4 contacts.
//!
//! Run: `cargo bench --bench granular` (`-- ellipsoid` for the ellipsoid group only).

use cpbench_granular::nalgebra::{UnitQuaternion, Vector3};
use cpbench_granular::rng::SplitMix64;
use cpbench_granular::scenes::{FillParams, DEFAULT_ASPECT};
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

fn packed_ellipsoids(n: usize) -> Simulation {
    let p = FillParams {
        n,
        ..FillParams::ellipsoids(DEFAULT_ASPECT)
    };
    let mut sim = p.build(1, false).unwrap().into_simulation().unwrap();
    let (a, b) = (p.radius, p.radius / DEFAULT_ASPECT);
    let (dx, dy) = (2.0 * a * 0.999, 2.0 * b * 0.999);
    let mut rng = SplitMix64::new(9);
    let mut idx = 0;
    for j in 0..p.layers {
        for i in 0..n {
            for k in 0..n {
                let axis = Vector3::new(
                    rng.uniform(-1.0, 1.0),
                    rng.uniform(-1.0, 1.0),
                    rng.uniform(-1.0, 1.0),
                );
                let body = &mut sim.bodies_mut()[idx];
                body.pos = Vector3::new(a + i as f64 * dx, b + j as f64 * dy, b + k as f64 * dy);
                body.rot =
                    UnitQuaternion::from_scaled_axis(axis.normalize() * rng.uniform(0.0, 0.05));
                idx += 1;
            }
        }
    }
    sim
}

/// One detect-and-assemble benchmark of `sim` named `name` in group `g`, after a first detection
/// and assembly that prints the contact count per body.
fn detect_assemble(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    mut sim: Simulation,
) {
    let nc = sim.detect();
    assert!(sim.narrow_failure().is_none());
    sim.assemble().unwrap();
    eprintln!(
        "{name}: {} bodies, {nc} contacts ({:.2} per body)",
        sim.world().bodies.len(),
        nc as f64 / sim.world().bodies.len() as f64
    );
    g.throughput(Throughput::Elements(nc as u64));
    g.bench_function(name, |b| {
        b.iter(|| {
            sim.detect();
            sim.assemble().unwrap();
        })
    });
}

fn bench_detect_assemble(c: &mut Criterion) {
    let mut g = c.benchmark_group("ellipsoid_detect_assemble");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(6));
    for n in [10usize, 18] {
        detect_assemble(&mut g, &format!("ellipsoid-fill-{n}"), packed_ellipsoids(n));
    }
    g.finish();
    let mut g = c.benchmark_group("granular_detect_assemble");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(6));
    for n in [10usize, 20, 40] {
        detect_assemble(&mut g, &format!("fill-{n}"), packed_fill(n));
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
