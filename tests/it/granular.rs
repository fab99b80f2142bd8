//! Physics and assembly checks of the granular time stepper (issue 3): resting contact, free
//! fall onto a floor, rolling and sliding on an incline (with the CCP relaxation's spurious
//! normal velocity measured), momentum in a head-on collision, and `N = D^T M^-1 D`
//! symmetric positive semidefinite with `r = b + D^T v_free` and `N gamma + r = b + D^T v(t+h)`.

use cpbench_granular::nalgebra::{DMatrix, DVector, Vector3};
use cpbench_granular::scenes::FillParams;
use cpbench_granular::{Body, Plane, SimParams, Simulation};
use cpbench_problems::CscMatrix;

use crate::granular_support::{params, sim, solver, G};

fn dense(a: &CscMatrix) -> DMatrix<f64> {
    let mut m = DMatrix::zeros(a.nrows(), a.ncols());
    for j in 0..a.ncols() {
        let (rows, vals) = a.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            m[(i, j)] = v;
        }
    }
    m
}

#[test]
fn sphere_resting_on_the_floor_stays_there() {
    let r = 0.1;
    let floor = Plane::new(Vector3::y(), Vector3::zeros()).unwrap();
    let ball = Body::sphere(Vector3::new(0.3, r, -0.2), r, 2.0).unwrap();
    for frictionless in [false, true] {
        let p = SimParams {
            frictionless,
            ..params(1e-2, 0.3, 1e-3)
        };
        let mut s = sim(vec![ball.clone()], vec![floor.clone()], p);
        let mut sol = solver("pgs", 1e-10);
        for _ in 0..100 {
            let rep = s.step(&mut sol).unwrap();
            assert_eq!(rep.contacts, 1);
            // the normal impulse carries the weight: m g h
            let gn = s.last_impulses()[0];
            assert!((gn - 2.0 * G * 1e-2).abs() < 1e-9, "gamma_n = {gn}");
        }
        let b = &s.world().bodies[0];
        let pen = r - b.pos.y;
        assert!(pen < 1e-3 * r, "penetration {pen}");
        assert!(b.vel.norm() < 1e-6, "velocity {}", b.vel.norm());
        assert!(b.omega.norm() * r < 1e-6);
        assert!((b.pos.x - 0.3).abs() < 1e-9 && (b.pos.z + 0.2).abs() < 1e-9);
    }
}

#[test]
fn dropped_ball_lands_at_the_analytic_time() {
    let (r, y0, h) = (0.1, 2.0, 1e-2);
    let floor = Plane::new(Vector3::y(), Vector3::zeros()).unwrap();
    let ball = Body::sphere(Vector3::new(0.0, y0, 0.0), r, 1.0).unwrap();
    let p = params(h, 0.3, 1e-3);
    let mut s = sim(vec![ball], vec![floor], p);
    let mut sol = solver("apgd", 1e-10);
    let t_exact = (2.0 * (y0 - r) / G).sqrt();
    let mut landed = None;
    for _ in 0..100 {
        let rep = s.step(&mut sol).unwrap();
        if landed.is_none() && rep.contacts > 0 && s.last_impulses()[0] > 0.0 {
            landed = Some(rep.time);
            // the step closes the gap exactly: at the floor, no overlap
            let b = &s.world().bodies[0];
            assert!((b.pos.y - r).abs() < 1e-9, "lands at y = {}", b.pos.y);
            // inelastic: at rest from the next step on, no rebound
            s.step(&mut sol).unwrap();
            let b = &s.world().bodies[0];
            assert!(b.vel.norm() < 1e-9, "velocity after landing {:?}", b.vel);
        }
    }
    let t = landed.expect("the ball reached the floor");
    eprintln!("landing: simulated {t:.4} s, analytic {t_exact:.4} s, h = {h}");
    assert!(
        (t - t_exact).abs() <= h,
        "landing at {t}, analytic {t_exact}"
    );
    assert!((s.world().bodies[0].pos.y - r).abs() < 1e-9);
}

/// A sphere released on an incline of `angle` (degrees) with friction `mu`: returns the
/// measured centre acceleration along the slope, the slip velocity of the contact point and
/// the gap to the plane after `steps` steps of `h`.
fn incline(angle: f64, mu: f64, steps: usize, h: f64) -> (f64, f64, f64, f64) {
    let th = angle.to_radians();
    let r = 0.1;
    let n = Vector3::new(th.sin(), th.cos(), 0.0);
    let down = Vector3::new(th.cos(), -th.sin(), 0.0);
    let plane = Plane::new(n, Vector3::zeros()).unwrap();
    let ball = Body::sphere(r * n, r, 1.0).unwrap();
    let p = params(h, mu, 1e-3);
    let mut s = sim(vec![ball], vec![plane.clone()], p);
    let mut sol = solver("pgs", 1e-12);
    for _ in 0..steps {
        s.step(&mut sol).unwrap();
    }
    let b = &s.world().bodies[0];
    let t = steps as f64 * h;
    let a = b.vel.dot(&down) / t;
    let slip = (b.vel + b.omega_world().cross(&(-r * n))).norm();
    let gap = plane.distance(&b.pos) - r;
    let vn = b.vel.dot(&n);
    (a, slip, gap, vn)
}

#[test]
fn sphere_rolls_without_slipping_on_a_gentle_incline() {
    // tan 30 deg = 0.577 < 7/2 mu = 1.05: rolling, a = 5/7 g sin(angle)
    let (a, slip, gap, vn) = incline(30.0, 0.3, 100, 1e-3);
    let exact = 5.0 / 7.0 * G * 30f64.to_radians().sin();
    eprintln!(
        "rolling: a = {a:.6} m/s^2, 5/7 g sin = {exact:.6}, slip {slip:.2e} m/s, gap {gap:.2e} m"
    );
    assert!(
        (a - exact).abs() < 0.02 * exact,
        "a = {a}, expected {exact}"
    );
    assert!(slip < 1e-6, "contact point slips at {slip}");
    assert!(gap.abs() < 1e-6 && vn.abs() < 1e-6);
}

#[test]
fn sphere_slides_on_a_steep_incline_and_the_ccp_lifts_it() {
    // tan 60 deg = 1.73 > 7/2 mu = 1.05: sliding, a = g (sin - mu cos)
    let (mu, h, steps) = (0.3, 1e-3, 100);
    let (a, slip, gap, vn) = incline(60.0, mu, steps, h);
    let th = 60f64.to_radians();
    let exact = G * (th.sin() - mu * th.cos());
    let rolling = 5.0 / 7.0 * G * th.sin();
    eprintln!(
        "sliding: a = {a:.6} m/s^2, Coulomb g (sin - mu cos) = {exact:.6} (rolling would be \
         {rolling:.4}); slip {slip:.4} m/s; CCP drift: gap {gap:.3e} m, normal velocity \
         {vn:.3e} m/s, mu |v_slip| = {:.3e} m/s",
        mu * slip
    );
    assert!(
        (a - exact).abs() < 0.02 * exact,
        "a = {a}, expected {exact}"
    );
    // the contact point slips at (a - a_rolling-like spin-up) t > 0
    assert!(slip > 0.1, "expected sliding, slip {slip}");
    // The CCP relaxation gives the sliding contact a normal velocity mu |u_t| (Anitescu):
    // the sphere drifts off the plane. The drift per step is mu |v_slip| h: the gap stays
    // of that order (the stabilisation term Phi/h pulls it back each step), it does not
    // grow like mu |v| t.
    assert!(gap > 0.0, "CCP sliding should lift the sphere, gap {gap}");
    assert!(
        (gap - mu * slip * h).abs() < 0.1 * mu * slip * h,
        "gap {gap:e} vs mu |v_slip| h = {:e}",
        mu * slip * h
    );
}

#[test]
fn momentum_is_conserved_in_a_head_on_collision() {
    let a = {
        let mut b = Body::sphere(Vector3::new(-0.5, 0.0, 0.0), 0.1, 1.0).unwrap();
        b.vel = Vector3::new(2.0, 0.0, 0.0);
        b
    };
    let b = {
        let mut b = Body::sphere(Vector3::new(0.5, 0.0, 0.0), 0.2, 3.0).unwrap();
        b.vel = Vector3::new(-1.0, 0.0, 0.0);
        b
    };
    let p = SimParams {
        h: 1e-3,
        gravity: Vector3::zeros(),
        mu: 0.4,
        envelope: 1e-3,
        frictionless: false,
        ..Default::default()
    };
    let mut s = sim(vec![a, b], vec![], p);
    let p0 = s.momentum();
    assert_eq!(p0, Vector3::new(-1.0, 0.0, 0.0));
    let mut sol = solver("apgd", 1e-12);
    let mut collided = false;
    for _ in 0..400 {
        s.step(&mut sol).unwrap();
        let p = s.momentum();
        assert!((p - p0).norm() < 1e-12, "momentum {p:?} vs {p0:?}");
        collided |= s.last_impulses().first().is_some_and(|&g| g > 0.0);
    }
    assert!(collided);
    // perfectly inelastic in this scheme: common velocity p / (m1 + m2) = -0.25 m/s
    for b in &s.world().bodies {
        assert!(
            (b.vel - Vector3::new(-0.25, 0.0, 0.0)).norm() < 1e-9,
            "{:?}",
            b.vel
        );
        assert!(b.omega.norm() < 1e-12);
    }
    let gap = (s.world().bodies[1].pos - s.world().bodies[0].pos).norm() - 0.3;
    assert!(gap.abs() < 1e-9, "gap after impact {gap}");
}

/// A small fill after 60 steps: many contacts, some shared bodies, plane contacts.
fn small_fill(frictionless: bool) -> Simulation {
    let mut s = FillParams {
        n: 2,
        layers: 6,
        ..Default::default()
    }
    .build(11, frictionless)
    .unwrap()
    .into_simulation()
    .unwrap();
    let mut sol = solver("apgd", 1e-8);
    for _ in 0..60 {
        s.step(&mut sol).unwrap();
    }
    s
}

#[test]
fn delassus_is_exactly_symmetric_psd_and_equals_dt_minv_d() {
    for frictionless in [false, true] {
        let mut s = small_fill(frictionless);
        let inst = s.build_instance().unwrap().unwrap().clone();
        let nmat = inst.n_mat();
        let n = inst.n();
        assert!(s.contacts().len() > 20, "contacts {}", s.contacts().len());
        assert_eq!(n, s.contacts().len() * if frictionless { 1 } else { 3 });
        // exact symmetry, entry by entry and bit for bit
        for j in 0..n {
            let (rows, vals) = nmat.col(j);
            for (&i, &v) in rows.iter().zip(vals) {
                assert_eq!(v.to_bits(), nmat.get(j, i).to_bits(), "N[{i},{j}]");
            }
        }
        // N = D^T M^-1 D with D built independently from the contact frames
        let d = dense(&s.jacobian().unwrap());
        let minv = DVector::from_vec(s.mass_inverse_diagonal());
        let want = d.transpose() * DMatrix::from_diagonal(&minv) * &d;
        let got = dense(nmat);
        let err = (&got - &want).amax();
        assert!(err < 1e-12 * want.amax(), "N - D^T M^-1 D: {err:e}");
        // PSD: smallest eigenvalue >= 0 up to rounding; rank deficient in general
        let eig = got.clone().symmetric_eigen().eigenvalues;
        let (lo, hi) = (eig.min(), eig.max());
        eprintln!("n = {n}: eigenvalues in [{lo:e}, {hi:e}]");
        assert!(lo >= -1e-12 * hi, "smallest eigenvalue {lo:e}");
        // r = b + D^T v_free, v_free = v + h g
        let h = s.world().params.h;
        let mut vfree = DVector::from_vec(s.velocities());
        for (i, b) in s.world().bodies.iter().enumerate() {
            if !b.fixed {
                vfree[6 * i + 1] -= G * h;
            }
        }
        let bs = n / s.contacts().len();
        let mut b = DVector::zeros(n);
        for (c, ct) in s.contacts().iter().enumerate() {
            b[bs * c] = ct.gap / h;
        }
        let r_want = &b + d.transpose() * &vfree;
        let r_got = DVector::from_column_slice(inst.r());
        assert!((&r_got - &r_want).amax() < 1e-10 * r_want.amax().max(1.0));
        // one step: g = N gamma + r equals b + D^T v(t+h) (contact velocity, normal first)
        let mut sol = solver("apgd", 1e-10);
        s.step(&mut sol).unwrap();
        assert_eq!(s.last_instance().unwrap().hash(), inst.hash());
        let gamma = DVector::from_column_slice(s.last_impulses());
        let g = &got * &gamma + &r_got;
        let vnew = DVector::from_vec(s.velocities());
        let g_want = &b + d.transpose() * &vnew;
        assert!((&g - &g_want).amax() < 1e-10 * g_want.amax().max(1.0));
        // complementarity in the normal direction: impulses push apart, velocities >= 0
        for c in 0..s.contacts().len() {
            assert!(gamma[bs * c] >= 0.0);
            assert!(g[bs * c] >= -1e-6 * g.amax());
        }
    }
}

#[test]
fn cannonball_pyramid_stands_still() {
    let mut s = crate::granular_support::pyramid(5);
    let start: Vec<Vector3<f64>> = s.world().bodies.iter().map(|b| b.pos).collect();
    let mut sol = solver("apgd", 1e-8);
    for _ in 0..100 {
        s.step(&mut sol).unwrap();
    }
    let r = 0.1;
    let moved = s
        .world()
        .bodies
        .iter()
        .zip(&start)
        .map(|(b, p)| (b.pos - p).norm())
        .fold(0.0f64, f64::max);
    eprintln!(
        "pyramid-5 after 100 steps: max displacement {moved:.2e} m, KE {:.2e} J",
        s.kinetic_energy()
    );
    assert!(moved < 1e-3 * r, "moved {moved}");
    assert!(s.kinetic_energy() < 1e-8);
    // 30 movable spheres, each on 4 below: 4 * 30 contacts with the layer below
    assert!(s.contacts().len() >= 120, "{}", s.contacts().len());
}

#[test]
fn tube_pours_its_spheres_onto_the_floor() {
    use cpbench_granular::scenes::TubeParams;
    let p = TubeParams {
        count: 18,
        ..Default::default()
    };
    let mut s = p.build(3, false).unwrap().into_simulation().unwrap();
    let moving: Vec<usize> = (0..s.world().bodies.len())
        .filter(|&i| !s.world().bodies[i].fixed)
        .collect();
    assert_eq!(moving.len(), 18);
    let mut sol = solver("apgd", 1e-4);
    let mut steps = 0;
    let on_floor = |s: &Simulation| {
        moving
            .iter()
            .filter(|&&i| s.world().bodies[i].pos.y < 2.0 * p.radius)
            .count()
    };
    while on_floor(&s) < 18 && steps < 1500 {
        s.step(&mut sol).unwrap();
        steps += 1;
        // nothing leaves the walled floor or sinks through it
        for &i in &moving {
            let b = &s.world().bodies[i];
            assert!(b.pos.y > p.radius - 1e-3, "sphere {i} below the floor");
            assert!(b.pos.z.abs() < 2.0, "sphere {i} left through a side wall");
        }
    }
    eprintln!(
        "tube-18: all spheres on the floor after {steps} steps ({:.2} s)",
        s.time()
    );
    assert_eq!(on_floor(&s), 18, "after {steps} steps");
}

#[test]
fn sphere_without_rotation_slides_to_rest_and_never_spins() {
    // A 3-DOF sphere (Melanz et al. 2017, TEST_FILL) launched at v0 on a floor with mu:
    // friction cannot spin it up, so it slides, decelerating at mu g, and stops at
    // t = v0 / (mu g); a 6-DOF sphere instead rolls on at 5/7 v0.
    let (r, mu, v0, h) = (0.1, 0.25, 1.0, 1e-3);
    let floor = Plane::new(Vector3::y(), Vector3::zeros()).unwrap();
    let p = params(h, mu, 1e-3);
    let mut ball = Body::sphere(Vector3::new(0.0, r, 0.0), r, 1.0)
        .unwrap()
        .without_rotation();
    ball.vel = Vector3::new(v0, 0.0, 0.0);
    let mut s = sim(vec![ball], vec![floor], p);
    let mut sol = solver("pgs", 1e-12);
    // 0.2 s of sliding: v = v0 - mu g t
    for _ in 0..200 {
        s.step(&mut sol).unwrap();
    }
    let b = &s.world().bodies[0];
    // (the CCP relaxation's lift of a sliding contact costs 0.031 % of the deceleration, as on
    // the incline above: 0.509653 against Coulomb's 0.5095)
    let expected = v0 - mu * G * 0.2;
    assert!(
        (b.vel.x - expected).abs() < 1e-3 * (v0 - expected),
        "v = {}, expected {expected}",
        b.vel.x
    );
    assert_eq!(b.omega, Vector3::zeros());
    // then it stops (t_stop = 0.408 s) and stays
    for _ in 0..300 {
        s.step(&mut sol).unwrap();
    }
    let b = &s.world().bodies[0];
    assert!(b.vel.norm() < 1e-9, "v = {}", b.vel.norm());
    // the fill scene's option builds 3-DOF spheres and records it
    let fill = FillParams {
        n: 2,
        layers: 1,
        rotation: false,
        ..Default::default()
    }
    .build(1, false)
    .unwrap();
    assert!(fill.world.bodies.iter().all(|b| !b.rotates));
    assert_eq!(fill.parameters.get("dof").map(String::as_str), Some("3"));
    assert_eq!(fill.label, "fill3dof-2");
}
