//! The penalty stepper against analytic references: static overlap under gravity, the
//! restitution and contact time of the linear spring-dashpot, energy conservation of velocity
//! Verlet without damping, and a small fill that settles.

use cpbench_granular::nalgebra::Vector3;
use cpbench_granular::penalty::{
    linear_contact_time, linear_restitution, pile_height, settle_threshold, settling_time,
    ContactLaw, Damping, PenaltyParams, PenaltySim,
};
use cpbench_granular::scenes::FillParams;
use cpbench_granular::{Body, GranularError, Plane};

fn params(law: ContactLaw, k: f64, damping: Damping, h: f64, g: f64) -> PenaltyParams {
    PenaltyParams {
        law,
        stiffness: k,
        damping,
        mu: 0.0,
        tangential_rate: 0.0,
        h,
        gravity: Vector3::new(0.0, -g, 0.0),
    }
}

fn floor() -> Vec<Plane> {
    vec![Plane::new(Vector3::y(), Vector3::zeros()).unwrap()]
}

/// A sphere (m = 2 kg, R = 0.1 m) dropped onto the floor comes to rest at the overlap where the
/// spring carries its weight: `m g / k` (linear), `(m g / k)^{2/3}` (Hertz), within 1%.
#[test]
fn resting_sphere_overlap_is_the_static_one() {
    let (m, r, g) = (2.0, 0.1, 9.81);
    for (law, k, want) in [
        (ContactLaw::Linear, 1e5, m * g / 1e5),
        (ContactLaw::Hertz, 1e7, (m * g / 1e7f64).powf(2.0 / 3.0)),
    ] {
        let body = Body::sphere(Vector3::new(0.0, r + 0.01, 0.0), r, m).unwrap();
        let mut p = params(law, k, Damping::Ratio(0.5), 1.0, g);
        p.h = p.max_step(std::slice::from_ref(&body)) / 2.0;
        let mut sim = PenaltySim::new(vec![body], floor(), p.clone()).unwrap();
        let steps = (0.5 / p.h).ceil() as u64;
        sim.advance(steps).unwrap();
        let pen = sim.max_penetration();
        let rel = (pen - want).abs() / want;
        println!("{law:?}: overlap {pen:e} m, static {want:e} m, rel {rel:e}");
        assert!(rel < 0.01, "{law:?}: overlap {pen:e}, want {want:e}");
        assert!(sim.kinetic_energy() < 1e-8, "{law:?} still moving");
        assert!(sim.bodies()[0].vel.norm() < 1e-4);
    }
}

/// Head-on collision of two equal spheres (m = 1 kg, so m_eff = 0.5 kg) with the linear law,
/// `e = 0.5`: the measured restitution equals `exp(-pi zeta / sqrt(1 - zeta^2))` and the
/// contact lasts `pi / (w0 sqrt(1 - zeta^2))`, both within 1%.
#[test]
fn head_on_collision_gives_the_analytic_restitution_and_contact_time() {
    let (k, r) = (1e4, 0.1);
    for e_in in [0.5, 0.9] {
        let zeta = Damping::Restitution(e_in).ratio().unwrap();
        let tc = linear_contact_time(k, 0.5, zeta);
        let mut a = Body::sphere(Vector3::new(-r - 0.01, 0.0, 0.0), r, 1.0).unwrap();
        let mut b = Body::sphere(Vector3::new(r + 0.01, 0.0, 0.0), r, 1.0).unwrap();
        a.vel.x = 1.0;
        b.vel.x = -1.0;
        let p = params(
            ContactLaw::Linear,
            k,
            Damping::Ratio(zeta),
            tc / 1000.0,
            0.0,
        );
        let mut sim = PenaltySim::new(vec![a, b], vec![], p).unwrap();
        let mut in_contact = 0u64;
        for _ in 0..3000 {
            sim.step().unwrap();
            if !sim.contacts().is_empty() {
                in_contact += 1;
            }
        }
        let bs = sim.bodies();
        let e = (bs[1].vel.x - bs[0].vel.x) / 2.0;
        let e_ref = linear_restitution(zeta);
        let t = in_contact as f64 * sim.params().h;
        println!("e_in {e_in}: e {e:.6} vs {e_ref:.6}; contact {t:.6e} s vs {tc:.6e} s");
        assert!(
            (e - e_ref).abs() / e_ref < 0.01,
            "e = {e}, analytic {e_ref}"
        );
        assert!((t - tc).abs() / tc < 0.01, "contact {t}, analytic {tc}");
        // momentum is conserved exactly (equal and opposite forces)
        assert!((bs[0].vel.x + bs[1].vel.x).abs() < 1e-12);
    }
}

/// Without damping and friction, velocity Verlet keeps the total energy (kinetic + gravity +
/// elastic) within 1e-4 relative over repeated bounces of a ball on the floor and a head-on
/// collision, for both laws (bounded error, no drift).
#[test]
fn undamped_energy_is_conserved() {
    for law in [ContactLaw::Linear, ContactLaw::Hertz] {
        let k = match law {
            ContactLaw::Linear => 1e5,
            ContactLaw::Hertz => 1e7,
        };
        // a ball dropped from 0.2 m above the floor, then bouncing for 2 s (5 bounces)
        let ball = Body::sphere(Vector3::new(0.0, 0.3, 0.0), 0.1, 1.0).unwrap();
        let mut p = params(law, k, Damping::Ratio(0.0), 1.0, 9.81);
        p.h = p.max_step(std::slice::from_ref(&ball)) / 30.0;
        let mut sim = PenaltySim::new(vec![ball], floor(), p.clone()).unwrap();
        let total = |s: &PenaltySim| s.kinetic_energy() + s.potential_energy() + s.elastic_energy();
        let e0 = total(&sim);
        let mut worst = 0.0f64;
        let mut touches = 0;
        let mut was = false;
        let mut apex = 0.0f64;
        for _ in 0..(2.0 / p.h) as u64 {
            sim.step().unwrap();
            worst = worst.max((total(&sim) - e0).abs() / e0);
            let now = !sim.contacts().is_empty();
            touches += (now && !was) as u32;
            was = now;
            if touches >= 1 {
                apex = apex.max(sim.bodies()[0].pos.y);
            }
        }
        println!(
            "{law:?}: {touches} bounces, max relative energy error {worst:e}, apex after the \
             first bounce {apex} m"
        );
        assert!(touches >= 5, "{touches} bounces");
        assert!(worst < 1e-4, "{law:?}: energy error {worst:e}");
        // and the ball comes back to its starting height (e = 1)
        assert!((apex - 0.3).abs() < 1e-4, "{law:?}: apex {apex}");
    }
}

/// A fill of 2 x 2 x 2 spheres (Melanz TEST_FILL geometry, radius 0.4) with the linear law and
/// friction settles: the kinetic energy falls below the settling threshold, the overlap stays
/// below 2% of the radius, and the pile is two layers high.
#[test]
fn small_fill_settles_with_bounded_penetration() {
    let scene = FillParams {
        n: 2,
        layers: 2,
        ..Default::default()
    }
    .build(7, false)
    .unwrap();
    let g = Vector3::new(0.0, -9.81, 0.0);
    let threshold = settle_threshold(&scene.world.bodies, &g);
    let mut p = PenaltyParams {
        law: ContactLaw::Linear,
        stiffness: 1e5,
        damping: Damping::Restitution(0.5),
        mu: 0.25,
        tangential_rate: 0.0,
        h: 1.0,
        gravity: g,
    };
    // 10 ms output steps, each an integer number of Verlet steps of at most t_c / 20
    let out = 1e-2;
    let sub = (out / (p.max_step(&scene.world.bodies) / 2.0)).ceil();
    p.h = out / sub;
    p.tangential_rate = 0.2 / p.h;
    let mut sim = PenaltySim::from_scene(scene, p).unwrap();
    let (mut t, mut ke, mut pen) = (Vec::new(), Vec::new(), 0.0f64);
    for _ in 0..300 {
        let r = sim.advance(sub as u64).unwrap();
        t.push(r.time);
        ke.push(r.kinetic_energy);
        pen = pen.max(r.max_penetration);
    }
    let settled = settling_time(&t, &ke, threshold);
    let height = pile_height(sim.bodies());
    println!(
        "settled at {settled:?} s (threshold {threshold:e} J), final KE {:e} J, max overlap \
         {pen:e} m, pile height {height} m",
        ke.last().unwrap()
    );
    assert!(settled.is_some_and(|s| s < 3.0), "not settled: {settled:?}");
    assert!(pen < 0.02 * 0.4, "overlap {pen}");
    // two layers of spheres of diameter 0.8, the upper one resting on (or between) the lower
    assert!(height > 1.2 && height < 1.6 + 1e-3, "pile height {height}");
}

/// A step that does not resolve the contact is an error, not a blow-up.
#[test]
fn too_large_a_step_is_rejected() {
    let ball = Body::sphere(Vector3::new(0.0, 0.3, 0.0), 0.1, 1.0).unwrap();
    let p = params(ContactLaw::Linear, 1e5, Damping::Ratio(0.1), 1e-2, 9.81);
    let err = PenaltySim::new(vec![ball], floor(), p).unwrap_err();
    assert!(
        matches!(err, GranularError::InvalidParameter { name: "h", .. }),
        "{err}"
    );
}

/// Tsuji's Hertz dashpot (`c ~ delta^{1/4}`) makes the restitution independent of the impact
/// speed: head-on collisions at 0.2 and 2 m/s give the same `e` (within 0.5%), and the DEM
/// codes' coefficient `sqrt(5) zeta` gives the requested `e = 0.1, 0.5, 0.9` within 1%
/// (measured: 0.0996, 0.4998, 0.9000).
#[test]
fn hertz_restitution_does_not_depend_on_the_impact_speed() {
    let (k, r) = (1e7, 0.1);
    for e_in in [0.1, 0.5, 0.9] {
        let mut es = Vec::new();
        for v in [0.2, 2.0] {
            let mut a = Body::sphere(Vector3::new(-r - 1e-3, 0.0, 0.0), r, 1.0).unwrap();
            let mut b = Body::sphere(Vector3::new(r + 1e-3, 0.0, 0.0), r, 1.0).unwrap();
            a.vel.x = v;
            b.vel.x = -v;
            let mut p = params(ContactLaw::Hertz, k, Damping::Restitution(e_in), 1.0, 0.0);
            p.h = p.max_step(&[a.clone(), b.clone()]) / 50.0;
            let mut sim = PenaltySim::new(vec![a, b], vec![], p).unwrap();
            let mut touched = false;
            for _ in 0..1_000_000 {
                sim.step().unwrap();
                touched |= !sim.contacts().is_empty();
                if touched && sim.contacts().is_empty() {
                    break;
                }
            }
            let bs = sim.bodies();
            es.push((bs[1].vel.x - bs[0].vel.x) / (2.0 * v));
        }
        println!("Hertz, e = {e_in}: measured {es:?}");
        assert!((es[0] - es[1]).abs() / es[1] < 0.005, "{es:?}");
        assert!((es[1] - e_in).abs() / e_in < 0.01, "{es:?}");
    }
}

#[test]
fn settling_time_is_the_start_of_the_last_run_below() {
    let t = [0.0, 1.0, 2.0, 3.0, 4.0];
    assert_eq!(
        settling_time(&t, &[5.0, 0.1, 2.0, 0.5, 0.2], 1.0),
        Some(3.0)
    );
    assert_eq!(settling_time(&t, &[5.0, 0.1, 2.0, 0.5, 2.0], 1.0), None);
    assert_eq!(settling_time(&t, &[0.0; 5], 1.0), Some(0.0));
}

#[test]
fn restitution_maps_to_the_damping_ratio_and_back() {
    for e in [0.1, 0.5, 0.9, 1.0] {
        let z = Damping::Restitution(e).ratio().unwrap();
        assert!((linear_restitution(z) - e).abs() < 1e-14, "e = {e}");
    }
    assert!(Damping::Restitution(0.0).ratio().is_err());
    assert!(Damping::Ratio(1.0).ratio().is_err());
    assert_eq!(ContactLaw::parse("hertz").unwrap(), ContactLaw::Hertz);
    assert!(ContactLaw::parse("dmt").is_err());
}
