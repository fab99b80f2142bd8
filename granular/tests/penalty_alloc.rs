//! The penalty stepper's step loop allocates nothing once its buffers have grown: a counting
//! global allocator (its own test binary, one test, so no other test allocates meanwhile).

use cpbench_granular::nalgebra::Vector3;
use cpbench_granular::penalty::{ContactLaw, Damping, PenaltyParams, PenaltySim};
use cpbench_granular::scenes::FillParams;
use cpbench_test_support::CountingAlloc;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// A 3 x 3 x 3 fill (27 spheres, friction, about 50 contacts): after 1.5 s of settling, 2000 more
/// Verlet steps make no heap allocation.
#[test]
fn penalty_steps_do_not_allocate() {
    let mut fill = FillParams::default();
    (fill.n, fill.layers) = (3, 3);
    let scene = fill.build(3, false).unwrap();
    let mut p = PenaltyParams {
        law: ContactLaw::Hertz,
        stiffness: 3e6,
        damping: Damping::Restitution(0.3),
        mu: 0.25,
        tangential_rate: 0.0,
        h: 1.0,
        gravity: Vector3::new(0.0, -9.81, 0.0),
    };
    p.h = p.max_step(&scene.world.bodies) / 2.0;
    p.tangential_rate = 0.2 / p.h;
    let mut sim = PenaltySim::from_scene(scene, p.clone()).unwrap();
    let warm = (1.5 / p.h) as u64;
    let start = CountingAlloc::count();
    sim.advance(warm).unwrap();
    // the counter sees the first steps' buffers grow
    assert!(CountingAlloc::count() > start);
    let contacts = sim.contacts().len();
    let before = CountingAlloc::count();
    for _ in 0..2000 {
        sim.step().unwrap();
    }
    let allocated = CountingAlloc::count() - before;
    assert!(contacts > 20, "{contacts} contacts: scene not in contact");
    assert_eq!(allocated, 0, "{allocated} allocations in 2000 steps");
}
