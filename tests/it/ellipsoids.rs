//! Ellipsoids in the granular stepper (issue 17): a spheroid resting on its short and on its
//! long axis carries `m g h` per step; a tipped upright spheroid falls onto its short axis and
//! comes to rest; the normal row of the Jacobian `D` (witness lever arms) is the rate of the
//! narrow phase's gap under a rigid motion; the `ellipsoid-fill` and `ellipsoid-pile` scenes
//! lose energy with bounded penetration; their exported problems load back and solve with every
//! solver that takes a CCP (and the frictionless LCP), and a snapshot restores them bit for bit.

use cpbench_granular::nalgebra::{UnitQuaternion, Vector3};
use cpbench_granular::narrow::body_plane;
use cpbench_granular::{Body, Plane, SceneKind, SceneSpec, SimParams, Simulation, Snapshot};
use cpbench_problems::io::bundle::{read_bundle, write_bundle};
use cpbench_problems::ResidualKind;
use cpbench_solvers::ExecSettings;

use crate::granular_support::{params, sim, solver, G};
use crate::support::{frictionless_class, solve_with_every_solver};

fn floor() -> Plane {
    Plane::new(Vector3::y(), Vector3::zeros()).unwrap()
}

/// Potential plus kinetic energy of the movable bodies (J), `y` up.
fn energy(s: &Simulation) -> f64 {
    s.kinetic_energy()
        + s.world()
            .bodies
            .iter()
            .filter(|b| !b.fixed)
            .map(|b| b.mass * G * b.pos.y)
            .sum::<f64>()
}

/// Spheroid `(a, b, b)` = `(0.2, 0.1, 0.1)` m, 3 kg, resting on the floor on its short axis
/// (long axis horizontal, centre at height `b`) and on its long axis (long axis vertical, centre
/// at `a`: an unstable equilibrium that an exact vertical load keeps): one contact whose normal
/// impulse is `m g h` to 1e-9 relative at every step, and the body does not move.
#[test]
fn resting_spheroid_on_short_and_long_axes_carries_m_g_h() {
    let (a, b, m, h) = (0.2, 0.1, 3.0, 1e-2);
    let axes = Vector3::new(a, b, b);
    let lying = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 0.7);
    let standing = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2);
    for (rot, height) in [(lying, b), (standing, a)] {
        let body = Body::ellipsoid(Vector3::new(0.3, height, -0.2), rot, axes, m).unwrap();
        let p = params(h, 0.5, 1e-3);
        let mut s = sim(vec![body], vec![floor()], p);
        let mut sol = solver("pgs", 1e-12);
        for _ in 0..100 {
            let rep = s.step(&mut sol).unwrap();
            assert_eq!(rep.contacts, 1);
            let g = s.last_impulses();
            assert!(
                (g[0] - m * G * h).abs() < 1e-9 * m * G * h,
                "gamma_n = {}",
                g[0]
            );
            assert!(g[1].abs() < 1e-12 && g[2].abs() < 1e-12, "friction {g:?}");
        }
        let bd = &s.world().bodies[0];
        assert!(
            (bd.pos.y - height).abs() < 1e-9,
            "height {} vs {height}",
            bd.pos.y
        );
        assert!(bd.vel.norm() < 1e-9 && bd.omega.norm() < 1e-9);
        assert!((bd.pos.x - 0.3).abs() < 1e-12 && (bd.pos.z + 0.2).abs() < 1e-12);
    }
}

/// A spheroid `(0.2, 0.1, 0.1)` m standing on its long axis, tilted by 0.2 rad, tips over
/// and comes to rest on its short axis. A rigid ellipsoid rolls without loss (and this scheme
/// adds about 0.7% of energy per rocking swing at `h = 2e-3`, from the linearised rolling
/// contact and the `Phi / h` term), so it rocks for ever unless something resists rolling:
/// with the rolling resistance `mu_r = 0.05` ([`SimParams::rolling_friction`]) it ends at rest
/// with its centre at height `b` within 1% and its long axis horizontal within 0.03 rad, the
/// total energy never above the initial one (to 1e-6) and ending at `m g b` within 1%, and
/// the overlap below 2% of `b`. Without rolling resistance it is still rocking after the same time.
#[test]
fn tipped_spheroid_settles_on_its_short_axis() {
    let (a, b, m, h) = (0.2, 0.1, 1.0, 2e-3);
    let run = |mu_r: f64, steps: usize| {
        let rot =
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2 - 0.2);
        let mut body = Body::ellipsoid(Vector3::zeros(), rot, Vector3::new(a, b, b), m).unwrap();
        // resting on the floor: centre at the support height of the tilted body
        let f = floor();
        let c = body_plane(0, &body, 0, &f, 1.0).unwrap();
        body.pos.y = -c.gap;
        let p = SimParams {
            rolling_friction: mu_r,
            ..params(h, 0.8, 1e-3)
        };
        let mut s = sim(vec![body], vec![f], p);
        let mut sol = solver("pgs", 1e-10);
        let e0 = energy(&s);
        let (mut e_max, mut max_pen) = (e0, 0.0f64);
        for _ in 0..steps {
            let rep = s.step(&mut sol).unwrap();
            max_pen = max_pen.max(rep.max_penetration);
            e_max = e_max.max(energy(&s));
        }
        (s, e0, e_max, max_pen)
    };
    let (s, e0, e_max, max_pen) = run(0.05, 3000);
    let bd = &s.world().bodies[0];
    let long_axis = bd.rot * Vector3::x();
    let e = energy(&s);
    eprintln!(
        "tipped: y {} (b {b}), long axis {long_axis:?}, KE {}, E {e0} -> {e} (max {e_max}, m g b {}), max pen {max_pen}",
        bd.pos.y,
        s.kinetic_energy(),
        m * G * b
    );
    assert!(
        (bd.pos.y - b).abs() < 0.01 * b,
        "centre height {} (short semi-axis {b})",
        bd.pos.y
    );
    assert!(long_axis.y.abs() < 0.03, "long axis {long_axis:?}");
    assert!(
        s.kinetic_energy() < 1e-6,
        "kinetic energy {}",
        s.kinetic_energy()
    );
    assert!(
        e_max <= e0 * (1.0 + 1e-6),
        "energy {e_max} above the initial {e0}"
    );
    assert!((e - m * G * b).abs() < 0.01 * m * G * b, "final energy {e}");
    assert!(max_pen < 0.02 * b, "penetration {max_pen}");
    // without rolling resistance the same body still rocks: kinetic energy far from zero
    let (s, ..) = run(0.0, 3000);
    let ke = s.kinetic_energy();
    eprintln!("no rolling resistance: KE {ke}");
    assert!(ke > 1e-3, "kinetic energy {ke}");
}

/// A hand-edited ellipsoid whose bounding radius is below its largest semi-axis (the grid
/// would miss its contacts) or whose semi-axis is not positive is refused with a typed error.
#[test]
fn inconsistent_ellipsoids_are_refused() {
    let good = Body::ellipsoid(
        Vector3::new(0.0, 1.0, 0.0),
        UnitQuaternion::identity(),
        Vector3::new(0.3, 0.2, 0.1),
        1.0,
    )
    .unwrap();
    let mut small = good.clone();
    small.radius = 0.2;
    let mut flat = good.clone();
    flat.shape = cpbench_granular::Shape::Ellipsoid {
        semi_axes: Vector3::new(0.3, 0.0, 0.1),
    };
    for (b, name) in [(small, "radius"), (flat, "semi_axes")] {
        let err = Simulation::new(
            cpbench_granular::World {
                bodies: vec![b],
                planes: vec![floor()],
                params: SimParams::default(),
            },
            "bad",
            Default::default(),
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains(name), "{err}");
    }
}

/// Under a rigid motion of two ellipsoids (random poses, velocities and body-frame angular
/// velocities) the normal row of `D^T v` equals the central difference of the narrow phase's
/// signed gap, to 1e-6 relative: the witness lever arms and the body-frame rotation of the
/// `D` blocks are right. Likewise for an ellipsoid on a tilted plane.
#[test]
fn jacobian_normal_rows_are_the_gap_rate() {
    let axes_a = Vector3::new(0.3, 0.15, 0.1);
    let axes_b = Vector3::new(0.12, 0.25, 0.18);
    let rot_a = UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -1.1, 0.4));
    let rot_b = UnitQuaternion::from_scaled_axis(Vector3::new(-0.8, 0.2, 1.3));
    let mut a = Body::ellipsoid(Vector3::new(0.0, 1.0, 0.0), rot_a, axes_a, 1.0).unwrap();
    let mut b = Body::ellipsoid(Vector3::new(0.45, 1.2, 0.1), rot_b, axes_b, 2.0).unwrap();
    a.vel = Vector3::new(0.3, -0.2, 0.1);
    a.omega = Vector3::new(1.0, -2.0, 0.5);
    b.vel = Vector3::new(-0.4, 0.1, 0.25);
    b.omega = Vector3::new(-0.7, 0.3, 1.9);
    let tilted = Plane::new(Vector3::new(0.2, 1.0, -0.1), Vector3::new(0.0, 0.8, 0.0)).unwrap();
    let p = SimParams {
        envelope: 1.0,
        gravity: Vector3::zeros(),
        ..Default::default()
    };
    let s = {
        let mut s = sim(vec![a.clone(), b.clone()], vec![tilted.clone()], p.clone());
        s.detect();
        s
    };
    let contacts = s.contacts().to_vec();
    assert_eq!(contacts.len(), 3, "A-B, A-plane, B-plane");
    let d = s.jacobian().unwrap();
    let v = s.velocities();
    // D^T v, normal rows
    let mut rate = vec![0.0; contacts.len()];
    for (c, r) in rate.iter_mut().enumerate() {
        let (rows, vals) = d.col(3 * c);
        *r = rows.iter().zip(vals).map(|(&i, &x)| x * v[i]).sum();
    }
    // the gap after a rigid motion of duration t (quaternion exact for constant body-frame omega)
    let gaps_at = |t: f64| -> Vec<f64> {
        let moved: Vec<Body> = [&a, &b]
            .iter()
            .map(|x| {
                let mut y = (*x).clone();
                y.pos += t * x.vel;
                y.rot = x.rot * UnitQuaternion::from_scaled_axis(t * x.omega);
                y
            })
            .collect();
        let mut s = sim(moved, vec![tilted.clone()], p.clone());
        s.detect();
        s.contacts().iter().map(|c| c.gap).collect()
    };
    let dt = 1e-5;
    let (gp, gm) = (gaps_at(dt), gaps_at(-dt));
    for c in 0..contacts.len() {
        let fd = (gp[c] - gm[c]) / (2.0 * dt);
        assert!(
            (fd - rate[c]).abs() < 1e-6 * (1.0 + fd.abs()),
            "contact {c}: D^T v = {} vs d(gap)/dt = {fd}",
            rate[c]
        );
    }
}

fn spec(kind: SceneKind, size: usize, frictionless: bool, aspect: Option<f64>) -> SceneSpec {
    SceneSpec {
        kind,
        size,
        seed: 5,
        frictionless,
        aspect,
    }
}

/// `ellipsoid-fill` (size 3: 90 prolate spheroids 0.4 x 0.2 x 0.2 m) and `ellipsoid-pile`
/// (60 prolate ones, bounding radii 0.05 to 0.1 m), both with the scenes' rolling resistance
/// 0.05, fall and settle: the total energy decreases to the heap's potential energy (kinetic
/// energy below 1e-3 of what was lost), the overlap stays below 20% of the smallest
/// short semi-axis during the fall and below 2e-5 m once settled, and every step's solve
/// converges. Measured: the fill's largest overlap 1.2e-2 m (6% of 0.2 m, impacts at up to
/// 14 m/s with `h = 1e-2`), the pile's 3.6e-3 m (14.5% of its smallest short semi-axis 0.025
/// m, `h = 5e-3`): the gap is linearised over a step of spinning bodies; settled overlaps
/// 7.6e-9 and 5.0e-6 m.
#[test]
fn ellipsoid_scenes_lose_energy_with_bounded_penetration() {
    for (sp, steps) in [
        (spec(SceneKind::EllipsoidFill, 3, false, None), 500),
        (spec(SceneKind::EllipsoidPile, 60, false, None), 1000),
    ] {
        let scene = sp.build().unwrap();
        let short = scene
            .world
            .bodies
            .iter()
            .map(|b| b.as_ellipsoid().semi_axes.min())
            .fold(f64::INFINITY, f64::min);
        let mut s = scene.into_simulation().unwrap();
        let mut sol = solver("apgd", 1e-6);
        let e0 = energy(&s);
        let mut max_pen = 0.0f64;
        for _ in 0..steps {
            let rep = s.step(&mut sol).unwrap();
            max_pen = max_pen.max(rep.max_penetration);
            assert!(rep.converged, "{:?} step {}", sp.kind, rep.step);
        }
        let e1 = energy(&s);
        let ke = s.kinetic_energy();
        eprintln!(
            "{:?}: E {e0} -> {e1}, KE {ke}, max penetration {max_pen} (short {short}), final {}, contacts {}",
            sp.kind,
            s.max_penetration(),
            s.contacts().len()
        );
        assert!(e1 < e0, "{:?}: energy {e0} -> {e1}", sp.kind);
        assert!(
            ke < 1e-3 * (e0 - e1),
            "{:?}: kinetic {ke}, lost {}",
            sp.kind,
            e0 - e1
        );
        // the largest overlap comes from the impacts of the fall (linearised gap over a step
        // of 1e-2 s at up to 14 m/s with spinning bodies); settled, it is rounding
        assert!(
            max_pen < 0.2 * short,
            "{:?}: penetration {max_pen} vs {short}",
            sp.kind
        );
        assert!(
            s.max_penetration() < 2e-5,
            "{:?}: settled overlap {}",
            sp.kind,
            s.max_penetration()
        );
        assert!(
            s.contacts().len() > s.world().bodies.len(),
            "{:?}: {} contacts",
            sp.kind,
            s.contacts().len()
        );
    }
}

/// The problems of an `ellipsoid-fill` state (aspect 3) and an `ellipsoid-pile` state
/// (aspect 0.5, oblate), mid-fall, each as CCP and frictionless LCP, written as a
/// bundle and read back, solves with every registered solver that takes its class (Clarabel
/// stops on its own test), each answer checked by the harness (natural map residual <= 1e-6);
/// the snapshot of the state restores the same instance bit for bit.
#[test]
fn exported_ellipsoid_problems_solve_with_every_supporting_solver() {
    // mid-fall (100 steps): the lower layers have landed and pile up, the upper ones still fall
    for (sp, steps) in [
        (spec(SceneKind::EllipsoidFill, 2, false, Some(3.0)), 100),
        (spec(SceneKind::EllipsoidPile, 40, false, Some(0.5)), 100),
    ] {
        export_and_solve(&sp, steps);
    }
}

fn export_and_solve(sp: &SceneSpec, steps: usize) {
    let mut s = sp.build().unwrap().into_simulation().unwrap();
    let mut sol = solver("apgd", 1e-6);
    for _ in 0..steps {
        s.step(&mut sol).unwrap();
    }
    let snap = Snapshot::capture(&s, sp, "test");
    let json = snap.to_json();
    let dir = tempfile::tempdir().unwrap();
    for frictionless in [false, true] {
        let mut r = Snapshot::from_json(&json)
            .unwrap()
            .restore(frictionless)
            .unwrap();
        // the snapshot keeps the rolling resistance
        assert_eq!(snap.rolling_friction, Some(0.05));
        assert_eq!(r.world().params.rolling_friction, 0.05);
        let inst = r.build_instance().unwrap().unwrap().clone();
        // a snapshot restores deterministically, and to rounding the live state's problem
        // (the saved quaternions are renormalised on restore)
        let twice = Snapshot::from_json(&json)
            .unwrap()
            .restore(frictionless)
            .unwrap()
            .build_instance()
            .unwrap()
            .unwrap()
            .hash()
            .to_string();
        assert_eq!(inst.hash(), twice);
        if !frictionless {
            let again = s.build_instance().unwrap().unwrap();
            assert_eq!(inst.n(), again.n());
            let scale = again.r().iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for (x, y) in inst.r().iter().zip(again.r()) {
                assert!((x - y).abs() <= 1e-12 * scale, "r differs: {x} vs {y}");
            }
        }
        let p = &inst.provenance().parameters;
        assert_eq!(p["scene"], sp.kind.as_str());
        assert_eq!(p["aspect"], sp.aspect.unwrap().to_string());
        assert_eq!(p["rolling_friction"], "0.05");
        let path = dir.path().join(inst.name());
        write_bundle(&inst, &path).unwrap();
        let inst = read_bundle(&path, Default::default()).unwrap();
        let class = inst.class();
        assert_eq!(class, frictionless_class(frictionless));
        let exec = ExecSettings {
            tol: 1e-6,
            max_iter: 50_000,
            ..Default::default()
        };
        let solved = solve_with_every_solver(&inst, ResidualKind::NatMapRel2, exec);
        assert!(solved >= 4, "only {solved} solvers take the {class}");
    }
}
