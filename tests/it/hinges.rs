//! Hinge joints in the 3-D stepper (issue 33; `granular/src/joints.rs`, "Hinge joints";
//! docs/formulation.md, "Hinge joints"): a hinge is two ball joints at bearings on its axis,
//! 6 rows of rank 5. Known answers: a wheel on an axle spins freely about the axis while the
//! other rotations are removed in the first step; a hinged pendulum swings with the compound
//! pendulum's period, in its plane; a door on two hinges at rest carries the textbook hinge
//! reactions (statics: the horizontal couple `m g w / (2 l)`, the vertical total `m g`, whose
//! split is statically indeterminate: the null direction of the Delassus matrix), with every
//! solver that takes joints; the `hinge-chain` scene holds its hinges over 200 steps, keeps its
//! links in the swing plane, round-trips through bundles and `.npz`, and `generate --scene
//! hinge-chain` works; bad hinges are typed errors naming the hinge and the value; ball joints
//! and hinges share a simulation (ball blocks first); `bb` and `mpgp` (which take joints since
//! issue 33) agree with `pgs` and `apgd` on jointed chain and hinge-chain instances.

use crate::granular_support::{params, sim, solver, G};
use crate::support::{cpbench, stdout_of};
use cpbench_granular::joints::HingeJoint;
use cpbench_granular::nalgebra::{UnitQuaternion, Vector3};
use cpbench_granular::scenes::{SceneKind, SceneSpec};
use cpbench_granular::{Body, ContactSolver, GranularError, Simulation};
use cpbench_problems::instance::ValidationOptions;
use cpbench_problems::io::{npz, read_bundle};

/// A movable sphere (radius 0.05 m, `mass` kg) at `centre`, hinged at `hinge` with axis `axis`
/// and bearings `l` from it to the world (a small fixed sphere 10 m above the hinge, out of
/// reach: the anchors are body-frame points, anywhere), no planes, `h` s, friction 0.3,
/// gravity `(0, -gravity, 0)`: bodies 0 (the sphere) and 1 (the fixed one), hinge 0.
fn hinged(
    centre: Vector3<f64>,
    mass: f64,
    hinge: Vector3<f64>,
    axis: Vector3<f64>,
    l: f64,
    h: f64,
    gravity: f64,
) -> Simulation {
    let bodies = vec![
        Body::sphere(centre, 0.05, mass).unwrap(),
        Body::fixed_sphere(hinge + Vector3::new(0.0, 10.0, 0.0), 0.01).unwrap(),
    ];
    let mut p = params(h, 0.3, 1e-3);
    p.gravity = Vector3::new(0.0, -gravity, 0.0);
    let hinge = HingeJoint::at_point(&bodies, 0, 1, hinge, axis, l).unwrap();
    sim(bodies, vec![], p).with_hinges(vec![hinge]).unwrap()
}

#[test]
fn a_wheel_on_an_axle_spins_freely_and_loses_its_other_rotations_in_one_step() {
    // the sphere centred on the hinge (axis z, bearings 0.05 m away), no gravity, spinning at
    // (0.5, -0.7, 3) rad/s: the bearings are on the axis, so their reactions have no torque
    // about it and omega_z = 3 is kept exactly (to the solver's tolerance); the rows ask
    // v(p_k) = 0 at both bearings, i.e. v = 0 and omega parallel to z after the first step
    let mut s = hinged(
        Vector3::zeros(),
        1.0,
        Vector3::zeros(),
        Vector3::z(),
        0.05,
        1e-3,
        0.0,
    );
    s.bodies_mut()[0].omega = Vector3::new(0.5, -0.7, 3.0);
    let mut slv = solver("pgs", 1e-12);
    let hinge = s.hinges()[0];
    for step in 1..=500 {
        let rep = s.step(&mut slv).unwrap();
        assert!(rep.converged, "step {step}: {rep:?}");
        let b = &s.world().bodies;
        let (axial, off) = hinge.relative_rotation_rate(b);
        // the rate of b (the world) relative to a (the wheel): -3
        assert!((axial + 3.0).abs() < 1e-9, "step {step}: {axial}");
        assert!(off < 1e-9, "step {step}: off-axis rate {off:e}");
        assert!(b[0].vel.norm() < 1e-9, "step {step}: {}", b[0].vel);
        assert!(b[0].pos.norm() < 1e-9, "step {step}: {}", b[0].pos);
        assert!(hinge.drift(b) < 1e-9, "step {step}: {:e}", hinge.drift(b));
    }
    // it turned about z by 500 steps of the quaternion update (q + h/2 E^T omega,
    // renormalised: 2 atan(h omega / 2) a step, 1.125e-6 short of 500 h omega = 1.5 rad)
    let b = &s.world().bodies;
    let turned = UnitQuaternion::rotation_between(&Vector3::x(), &(b[0].rot * Vector3::x()))
        .unwrap()
        .angle();
    let want = 500.0 * 2.0 * (1e-3 * 3.0 / 2.0_f64).atan();
    assert!((turned - want).abs() < 1e-9, "{turned} vs {want}");
    assert!(b[0].rot.axis().unwrap().dot(&Vector3::z()) > 1.0 - 1e-12);
}

#[test]
fn a_hinged_pendulum_swings_with_the_compound_pendulum_period_in_its_plane() {
    // a 1 kg sphere (r = 0.05, I = 2/5 m r^2 = 1e-3) with its centre L = 0.3 m from a hinge
    // of axis z, released at rest theta0 = 0.05 rad from the vertical: small-angle period
    // T0 = 2 pi sqrt((I + m L^2) / (m g L)) = 1.10477 s; the amplitude lengthens it by
    // theta0^2 / 16 = 1.6e-4 (Landau & Lifshitz, Mechanics, section 11, problem), the scheme
    // (symplectic Euler on the hinge's coordinate, h = 1e-3) by (omega h)^2 / 24 = 1.3e-6
    let (m, r, l, th0, h) = (1.0, 0.05, 0.3, 0.05_f64, 1e-3);
    let centre = Vector3::new(l * th0.sin(), -l * th0.cos(), 0.0);
    let mut s = hinged(centre, m, Vector3::zeros(), Vector3::z(), 0.05, h, G);
    let ip = 0.4 * m * r * r + m * l * l;
    let t0 = 2.0 * std::f64::consts::PI * (ip / (m * G * l)).sqrt();
    let mut slv = solver("pgs", 1e-12);
    let hinge = s.hinges()[0];
    let angle = |b: &[Body]| b[0].pos.x.atan2(-b[0].pos.y);
    let mut prev = angle(&s.world().bodies);
    let mut crossings = Vec::new();
    let mut max_drift: f64 = 0.0;
    let steps = (2.6 * t0 / h) as u64;
    for step in 1..=steps {
        let rep = s.step(&mut slv).unwrap();
        assert!(rep.converged, "step {step}: {rep:?}");
        let b = &s.world().bodies;
        let th = angle(b);
        if prev > 0.0 && th <= 0.0 || prev < 0.0 && th >= 0.0 {
            // linear interpolation of the zero between t - h and t
            crossings.push(step as f64 * h - h * th / (th - prev));
        }
        prev = th;
        // the held freedoms: out of the plane z = 0, off-axis rotation, drift, axes
        let (_, off) = hinge.relative_rotation_rate(b);
        assert!(
            b[0].pos.z.abs() < 1e-12,
            "step {step}: z = {:e}",
            b[0].pos.z
        );
        assert!(off < 1e-9, "step {step}: off-axis rate {off:e}");
        max_drift = max_drift.max(hinge.drift(b));
        assert!(hinge.misalignment(b) < 1e-9, "step {step}");
    }
    // the drift: second order in h (the lever arm's rotation within a step, module
    // documentation of joints.rs): (h omega)^2 |s| / 2 with omega <= theta0 sqrt(m g L / I_p)
    let w = th0 * (m * G * l / ip).sqrt();
    let bound = (h * w).powi(2) * (l * l + 0.05 * 0.05).sqrt() / 2.0;
    assert!(max_drift <= bound, "drift {max_drift:e} > {bound:e}");
    assert!(crossings.len() >= 5, "{crossings:?}");
    // two periods between the first and the fifth zero: T0 (1 + theta0^2 / 16 + 11 theta0^4
    // / 3072) lengthened by the amplitude, shortened by the scheme's (omega h)^2 / 24
    // (symplectic Euler's 2 asin(omega h / 2) / h); measured 2.2e-8 off (1.3e-6 off T0's
    // amplitude-corrected value: the scheme's shift is resolved)
    let period = (crossings[4] - crossings[0]) / 2.0;
    let w0 = 2.0 * std::f64::consts::PI / t0;
    let want = t0
        * (1.0 + th0.powi(2) / 16.0 + 11.0 * th0.powi(4) / 3072.0)
        * (1.0 - (w0 * h).powi(2) / 24.0);
    let rel = (period - want).abs() / want;
    assert!(rel < 1e-7, "period {period} s vs {want} s ({rel:.2e})");
}

/// The force (N) the hinge's bearing `k` exerts on body 0 of [`hinged`]: `-gamma_k / h` (body
/// 0 is the pseudo-contacts' body `A`, whose rows carry `-[e_x e_y e_z]`).
fn bearing_force(gamma: &[f64], k: usize, h: f64) -> Vector3<f64> {
    -Vector3::new(gamma[3 * k], gamma[3 * k + 1], gamma[3 * k + 2]) / h
}

#[test]
fn a_door_on_two_hinges_carries_the_static_reactions_with_every_joint_solver() {
    // a 2 kg door (a sphere) whose centre is w = 0.3 m from a vertical hinge axis (y), bearings
    // l = 0.2 m above and below the hinge centre, gravity -y: at rest. Statics: the bearings
    // carry m g = 19.62 N up in total (the split along the axis is statically indeterminate:
    // the Delassus matrix's null direction), and the couple of gravity's moment m g w about z
    // as horizontal forces +-m g w / (2 l) = 14.715 N along x: the lower bearing pushes the
    // door away from the axis (+x), the upper pulls it in (-x)
    let (m, w, l, h) = (2.0, 0.3, 0.2, 5e-3);
    let mut s = hinged(
        Vector3::new(w, 0.0, 0.0),
        m,
        Vector3::zeros(),
        Vector3::y(),
        l,
        h,
        G,
    );
    s.step(&mut solver("pgs", 1e-12)).unwrap();
    let inst = s.last_instance().unwrap().clone();
    assert_eq!(inst.constraints().joints(), 2);
    assert_eq!(inst.provenance().parameters["hinges"], "1");
    let horizontal = m * G * w / (2.0 * l);
    let tol = 1e-6 * m * G;
    // the CCP solvers that take joints, and nsgs on the Coulomb form (no cone block here)
    let coulomb = inst.clone().into_coulomb().unwrap();
    for name in [
        "pgs", "jacobi", "apgd", "spgqp", "bb", "mpgp", "admm", "ipm", "nsgs",
    ] {
        let on = if name == "nsgs" { &coulomb } else { &inst };
        let sol = solver(name, 1e-12).solve(on, None).unwrap();
        assert!(sol.converged, "{name}: {sol:?}");
        let (f1, f2) = (
            bearing_force(&sol.gamma, 0, h),
            bearing_force(&sol.gamma, 1, h),
        );
        let got = [f1.x, f2.x, f1.z, f2.z, f1.y + f2.y];
        let want = [horizontal, -horizontal, 0.0, 0.0, m * G];
        for (g, e) in got.iter().zip(want) {
            assert!((g - e).abs() < tol, "{name}: {got:?} vs {want:?}");
        }
        // the methods whose iterates from 0 stay in the range of N (identity projection on
        // joint rows, gradients in the range) reach the minimum-norm solution: the equal split
        // (measured: pgs and nsgs 9.918 / 9.702 N, ipm 19.62 / 0 N, the others 9.81 / 9.81 N)
        if !matches!(name, "pgs" | "nsgs" | "ipm") {
            assert!(
                (f1.y - f2.y).abs() < tol,
                "{name}: split {} / {}",
                f1.y,
                f2.y
            );
        }
        // the door stays at rest: the rows' velocity u = N gamma + r vanishes
        let mut u = vec![0.0; inst.n()];
        on.gradient(&sol.gamma, &mut u);
        let un = u.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(un < 1e-9, "{name}: |u| = {un:e}");
    }
    // and over 100 steps of the stepper it does not move
    let mut slv = solver("pgs", 1e-12);
    for _ in 0..100 {
        s.step(&mut slv).unwrap();
    }
    let b = &s.world().bodies[0];
    assert!(
        (b.pos - Vector3::new(w, 0.0, 0.0)).norm() < 1e-9,
        "{}",
        b.pos
    );
}

#[test]
fn the_hinge_rows_have_rank_5_and_a_consistent_constant_term() {
    // a hinge (axis z, bearings 0.1 m from its centre) whose bodies are out of line: body 1
    // (movable) rotated by 0.2 rad about x and shifted, so that both bearings drift and the
    // axes disagree. N (6 x 6, the two bearings' blocks) has the null vector (a_w, -a_w),
    // a_w the unit vector between the bearings' pseudo-contact points, and the constant term
    // r has no component along it, so N gamma + r = 0 has solutions
    let mut bodies = vec![
        Body::sphere(Vector3::new(0.3, 0.0, 0.0), 0.05, 1.0).unwrap(),
        Body::sphere(Vector3::new(-0.3, 0.0, 0.0), 0.05, 2.0).unwrap(),
    ];
    let hinge = HingeJoint::at_point(&bodies, 0, 1, Vector3::zeros(), Vector3::z(), 0.1).unwrap();
    bodies[1].rot = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.2);
    bodies[1].pos += Vector3::new(1e-3, -2e-3, 3e-3);
    let h = 5e-3;
    let [j1, j2] = hinge.bearings();
    let (c1, c2) = (
        j1.pseudo_contact(&bodies).point,
        j2.pseudo_contact(&bodies).point,
    );
    let aw = (c2 - c1).normalize();
    // the bearings' drifts differ by 2 l (a_B - a_A), perpendicular to a_w ~ a_A + a_B: their
    // constant terms agree along a_w although the drifts are large (module documentation), to
    // rounding; the hinge's (axial components replaced by their mean) to the last bits, and
    // the hinge changes them by rounding only
    let (r1, r2) = (
        Vector3::from(j1.bias(&bodies, h)),
        Vector3::from(j2.bias(&bodies, h)),
    );
    assert!((r1 - r2).norm() > 1.0, "{r1} {r2}");
    assert!((r1 - r2).dot(&aw).abs() < 1e-12, "{r1} {r2}");
    let [b1, b2] = hinge.bias(&bodies, h).map(Vector3::from);
    assert!((b1 - b2).dot(&aw).abs() < 1e-15, "{b1} {b2}");
    assert!((b1 - r1).norm() + (b2 - r2).norm() < 1e-12);
    let mut p = params(h, 0.3, 1e-3);
    p.gravity = Vector3::new(0.0, -G, 0.0);
    let mut s = sim(bodies, vec![], p).with_hinges(vec![hinge]).unwrap();
    s.step(&mut solver("pgs", 1e-12)).unwrap();
    let inst = s.last_instance().unwrap();
    assert_eq!(inst.n(), 6);
    let null: Vec<f64> = [aw, -aw].iter().flat_map(|v| [v.x, v.y, v.z]).collect();
    let mut nv = vec![0.0; 6];
    inst.gradient(&null, &mut nv); // N null + r
    nv.iter_mut().zip(inst.r()).for_each(|(v, r)| *v -= r);
    let norm_n = (0..6).map(|i| inst.n_mat().get(i, i)).fold(0.0, f64::max);
    let nv_norm = nv.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(nv_norm < 1e-14 * norm_n, "N (a_w, -a_w) = {nv:?}");
    let r_null: f64 = inst.r().iter().zip(&null).map(|(a, b)| a * b).sum();
    assert!(r_null.abs() < 1e-12, "r . (a_w, -a_w) = {r_null:e}");
    // the rest of N is definite: rank exactly 5 (the 5 other eigenvalues well above 0)
    let dense = cpbench_granular::nalgebra::DMatrix::from_fn(6, 6, |i, k| inst.n_mat().get(i, k));
    let mut eig: Vec<f64> = dense.symmetric_eigenvalues().iter().copied().collect();
    eig.sort_by(f64::total_cmp);
    assert!(eig[0].abs() < 1e-12 * eig[5], "{eig:?}");
    assert!(eig[1] > 1e-2 * eig[5], "{eig:?}");
}

/// The `hinge-chain` scene of `links` links (default parameters: spacing 0.125 m, bearings
/// 0.05 m from each hinge, tilt 0.5 rad, `h = 5e-3` s).
fn hinge_chain(links: usize) -> Simulation {
    SceneSpec::new(SceneKind::HingeChain, links, 0)
        .build()
        .unwrap()
        .into_simulation()
        .unwrap()
}

#[test]
fn the_hinge_chain_holds_its_hinges_and_swings_in_its_tilted_plane() {
    // 10 links over 200 steps (1 s: it swings down and lands), apgd at 1e-8. Per step and
    // bearing: the rows' residual below the tolerance, the drift within the scheme's bound
    // (tests/it/joints.rs: h |u_j| + sum over the bodies of h^2 |omega|^2 |s| / 2 + h |omega|
    // e_k / 2, with the axial mean of the hinge's bias adding at most |a_w . (e_1 - e_2)| / 2,
    // rounding); over the run every link's hinge axis within 1e-6 rad of the pin's and every
    // link centre within 1e-6 m of the plane through the pin perpendicular to the axis (on ball
    // joints the chain would fall in the vertical plane, metres away), the drift below 1e-3 m.
    // Measured: axes 3.1e-8 rad, plane 2.4e-8 m, drift 6.0e-4 m (0.5% of a spacing, in the
    // plane: the whipping end, within the per-step bound)
    let links = 10;
    let tol = 1e-8;
    let mut s = hinge_chain(links);
    let hinges: Vec<HingeJoint> = s.hinges().to_vec();
    assert_eq!(hinges.len(), links);
    let bearings: Vec<_> = hinges.iter().flat_map(|j| j.bearings()).collect();
    let h = s.world().params.h;
    let pin = hinges[0].b;
    let axis = s.world().bodies[pin].rot * hinges[0].axis_b.normalize();
    let tilt: f64 = 0.5;
    assert!((axis - Vector3::new(0.0, tilt.sin(), tilt.cos())).norm() < 1e-15);
    let origin = s.world().bodies[pin].pos;
    let mut drift: Vec<f64> = bearings
        .iter()
        .map(|j| j.drift(&s.world().bodies))
        .collect();
    let mut slv = solver("apgd", tol);
    let (mut worst_axis, mut worst_plane, mut worst_drift) = (0.0_f64, 0.0_f64, 0.0_f64);
    let mut landed = false;
    for step in 1..=200 {
        let rep = s.step(&mut slv).unwrap();
        assert!(rep.converged, "step {step}: {rep:?}");
        let inst = s.last_instance().unwrap();
        assert_eq!(inst.constraints().joints(), 2 * links);
        let mut u = vec![0.0; inst.n()];
        inst.gradient(s.last_impulses(), &mut u);
        let norm_r = inst.r().iter().map(|v| v * v).sum::<f64>().sqrt();
        let b = &s.world().bodies;
        for (k, j) in bearings.iter().enumerate() {
            let uj = u[3 * k..3 * k + 3]
                .iter()
                .map(|v| v * v)
                .sum::<f64>()
                .sqrt();
            assert!(uj <= tol * norm_r, "step {step} bearing {k}: {uj:e}");
            let pair = [&bearings[k & !1], &bearings[k | 1]];
            let (c1, c2) = (
                pair[0].pseudo_contact(b).point,
                pair[1].pseudo_contact(b).point,
            );
            let aw = (c2 - c1).normalize();
            let e = |j: &cpbench_granular::BallJoint| {
                let (pa, pb) = j.anchors(b);
                pb - pa
            };
            let axial = (e(pair[0]) - e(pair[1])).dot(&aw).abs() / 2.0;
            let bound = axial + crate::granular_support::joint_drift_bound(h, uj, j, b, drift[k]);
            let e = j.drift(b);
            assert!(
                e <= bound + 1e-12,
                "step {step} bearing {k}: {e:e} > {bound:e}"
            );
            drift[k] = e;
            worst_drift = worst_drift.max(e);
        }
        for (i, j) in hinges.iter().enumerate() {
            // link i is body a of hinge 0 (the pin is b) and body b of the others
            let link_axis = if i == 0 {
                j.world_axes(b).0
            } else {
                j.world_axes(b).1
            };
            let link = if i == 0 { j.a } else { j.b };
            worst_axis = worst_axis.max(link_axis.cross(&axis).norm());
            worst_plane = worst_plane.max((b[link].pos - origin).dot(&axis).abs());
        }
        landed |= rep.contacts > 2 * links;
    }
    assert!(landed, "it swung down and met the floor");
    assert!(worst_axis < 1e-6, "axes {worst_axis:e} rad");
    assert!(worst_plane < 1e-6, "plane {worst_plane:e} m");
    assert!(worst_drift < 1e-3, "drift {worst_drift:e} m");
}

#[test]
fn hinge_chain_instances_round_trip_and_the_cli_generates_them() {
    let mut s = hinge_chain(4);
    let mut slv = solver("pgs", 1e-8);
    for _ in 0..3 {
        s.step(&mut slv).unwrap();
    }
    let inst = s.last_instance().unwrap().clone();
    assert_eq!(inst.constraints().joints(), 8);
    assert_eq!(inst.provenance().parameters["hinges"], "4");
    assert_eq!(inst.provenance().parameters["joints"], "8");
    // the bearings' identities: feature 1 + block, never a contact's 0
    let features: Vec<u32> = s.last_contact_ids().iter().map(|id| id.feature).collect();
    assert_eq!(&features[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert!(features[8..].iter().all(|&f| f == 0));
    crate::granular_support::assert_bundle_and_npz_round_trip(&inst);
    let dir = tempfile::tempdir().unwrap();
    // the CLI: 5 links, 10 joint blocks, in both formats the chain exports to; fclib refused
    for format in ["npz", "bundle"] {
        let out = dir.path().join(format!("cli-{format}"));
        let stdout = stdout_of(
            cpbench(&format!(
                "generate --scene hinge-chain --size 5 --steps 10 --export-every 5 --format \
                 {format} --print-every 0 --out"
            ))
            .arg(&out),
        );
        let stem = "hinge-chain-5_step0010__ccp";
        let inst = if format == "npz" {
            npz::read_npz(
                &out.join(format!("{stem}.npz")),
                ValidationOptions::default(),
            )
        } else {
            read_bundle(&out.join(stem), ValidationOptions::default())
        }
        .unwrap_or_else(|e| panic!("{format}: {e} ({stdout})"));
        assert_eq!(inst.constraints().joints(), 10);
    }
    crate::support::error(
        cpbench(
            "generate --scene hinge-chain --size 3 --steps 2 --export-every 1 --format fclib --out",
        )
        .arg(dir.path().join("fc")),
        &["fclib", "joint"],
    );
}

/// An edit of a hinge (the bad input of a case).
type Edit<'a> = dyn Fn(&mut HingeJoint) + 'a;

#[test]
fn bad_hinges_are_typed_errors_naming_the_hinge_and_the_value() {
    let scene = SceneSpec::new(SceneKind::HingeChain, 3, 0).build().unwrap();
    let nb = scene.world.bodies.len();
    let with = |edit: &Edit<'_>| {
        let mut hinges = scene.hinges.clone();
        edit(&mut hinges[2]);
        Simulation::new(scene.world.clone(), "c", Default::default(), None)
            .unwrap()
            .with_hinges(hinges)
    };
    let cases: [(&Edit<'_>, String); 4] = [
        (
            &move |j| j.b = nb + 5,
            format!("body b = {} does not exist", nb + 5),
        ),
        (
            &|j| j.axis_b = Vector3::zeros(),
            "axis_b = (0, 0, 0)".into(),
        ),
        (&|j| j.axis_a.y = f64::NAN, "axis_a = (0, NaN,".into()),
        (&|j| j.half_length = -0.5, "half_length = -0.5".into()),
    ];
    for (edit, needle) in cases {
        match with(edit) {
            Err(e @ GranularError::BadHinge { hinge: 2, .. }) => {
                let msg = e.to_string();
                assert!(msg.starts_with("hinge 2: "), "{msg}");
                assert!(msg.contains(&needle), "{msg} lacks {needle}");
            }
            other => panic!("{needle}: {other:?}"),
        }
    }
    // at_point: the joint has no index yet; InvalidParameter naming the value
    let b = &scene.world.bodies;
    let e = HingeJoint::at_point(b, 0, 1, Vector3::zeros(), Vector3::zeros(), 0.1).unwrap_err();
    assert!(e.to_string().contains("hinge axis"), "{e}");
    let e = HingeJoint::at_point(b, 0, nb, Vector3::zeros(), Vector3::z(), 0.1).unwrap_err();
    assert!(
        e.to_string().contains(&format!("hinge body b = {nb}")),
        "{e}"
    );
    let e = HingeJoint::at_point(b, 0, 1, Vector3::zeros(), Vector3::z(), 0.0).unwrap_err();
    assert!(e.to_string().contains("hinge half_length = 0"), "{e}");
    // frictionless: no blocks of 3 rows for the hinges
    let e = SceneSpec {
        frictionless: true,
        ..SceneSpec::new(SceneKind::HingeChain, 3, 0)
    }
    .build()
    .unwrap_err();
    assert!(e.to_string().contains("frictionless"), "{e}");
}

#[test]
fn bb_and_mpgp_take_jointed_chain_instances_and_agree_with_pgs_and_apgd() {
    // the instance of step 60 of chain 10 (ball joints) and of hinge-chain 10 (hinges: N
    // singular), contacts with the floor included, solved to 1e-10 by pgs, apgd, bb and mpgp:
    // all converge, the joint rows' velocity is below 1e-10 ||r||, and the velocities u = N
    // gamma + r agree (unique for a convex QP: two minimisers differ in the null space of N;
    // gamma itself is not unique on the hinges) within 1e-9 ||r||. Measured (||r|| = 14.8):
    // max |u - u_apgd| 1.6e-9 (pgs), 1.5e-9 (bb), 8.4e-10 (mpgp) on chain; 7.7e-10, 7.6e-10,
    // 5.2e-10 on hinge-chain; iterations chain pgs 325, bb 387, mpgp 20; hinge-chain pgs
    // 146583, bb 176150, mpgp 62 (the singular rows slow the first-order methods)
    for kind in [SceneKind::Chain, SceneKind::HingeChain] {
        let mut s = SceneSpec::new(kind, 10, 0)
            .build()
            .unwrap()
            .into_simulation()
            .unwrap();
        let mut drive = solver("apgd", 1e-8);
        for _ in 0..60 {
            s.step(&mut drive).unwrap();
        }
        let inst = s.last_instance().unwrap().clone();
        let nj = inst.constraints().joints();
        assert!(inst.n() > 3 * nj, "{kind:?}: contacts besides the joints");
        let norm_r = inst.r().iter().map(|v| v * v).sum::<f64>().sqrt();
        let velocity = |gamma: &[f64]| {
            let mut u = vec![0.0; inst.n()];
            inst.gradient(gamma, &mut u);
            u
        };
        let mut reference: Option<Vec<f64>> = None;
        for name in ["apgd", "pgs", "bb", "mpgp"] {
            let mut slv = cpbench_harness::generate::RegistrySolver::new(
                name,
                None,
                cpbench_solvers::ExecSettings {
                    tol: 1e-10,
                    max_iter: 200_000,
                    ..Default::default()
                },
            )
            .unwrap();
            let sol = slv.solve(&inst, None).unwrap();
            assert!(sol.converged, "{kind:?} {name}: {sol:?}");
            let u = velocity(&sol.gamma);
            let uj = u[..3 * nj].iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!(uj <= 1e-10 * norm_r, "{kind:?} {name}: joint rows {uj:e}");
            match &reference {
                None => reference = Some(u),
                Some(want) => {
                    let d = u
                        .iter()
                        .zip(want)
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0, f64::max);
                    assert!(d <= 1e-9 * norm_r, "{kind:?} {name}: |u - u_apgd| = {d:e}");
                }
            }
        }
    }
}

#[test]
fn ball_joints_and_hinges_together_ball_blocks_first() {
    // the door of the statics test with a 1 kg sphere hanging 0.2 m below it on a ball joint:
    // block 0 is the ball joint, blocks 1 and 2 the hinge's bearings; at rest the ball joint
    // carries the sphere's weight (force on the door m g = 9.81 N down, gamma along -y on the
    // door as body A) and the hinge both weights: horizontal couple (2 + 1) g w / (2 l)
    let (w, l, h) = (0.3, 0.2, 5e-3);
    let bodies = vec![
        Body::sphere(Vector3::new(w, 0.0, 0.0), 0.05, 2.0).unwrap(),
        Body::fixed_sphere(Vector3::new(0.0, 10.0, 0.0), 0.01).unwrap(),
        Body::sphere(Vector3::new(w, -0.2, 0.0), 0.05, 1.0).unwrap(),
    ];
    let hinge = HingeJoint::at_point(&bodies, 0, 1, Vector3::zeros(), Vector3::y(), l).unwrap();
    let ball = cpbench_granular::BallJoint::at_point(&bodies, 0, 2, Vector3::new(w, -0.1, 0.0));
    let mut p = params(h, 0.3, 1e-3);
    p.gravity = Vector3::new(0.0, -G, 0.0);
    let mut s = sim(bodies, vec![], p)
        .with_joints(vec![ball])
        .unwrap()
        .with_hinges(vec![hinge])
        .unwrap();
    assert_eq!(s.joint_blocks(), 3);
    let mut slv = solver("pgs", 1e-12);
    for _ in 0..20 {
        let rep = s.step(&mut slv).unwrap();
        assert!(rep.converged, "{rep:?}");
    }
    let inst = s.last_instance().unwrap();
    assert_eq!(inst.constraints().joints(), 3);
    assert_eq!(inst.provenance().parameters["joints"], "3");
    assert_eq!(inst.provenance().parameters["hinges"], "1");
    let features: Vec<u32> = s.last_contact_ids().iter().map(|id| id.feature).collect();
    assert_eq!(features, [1, 2, 3]);
    let gamma = s.last_impulses();
    let tol = 1e-6 * G;
    // block 0: the ball joint, A = the door: the force on the door is -gamma_0 / h
    let on_door = bearing_force(gamma, 0, h);
    assert!(
        (on_door - Vector3::new(0.0, -G, 0.0)).norm() < tol,
        "{on_door}"
    );
    let (f1, f2) = (bearing_force(gamma, 1, h), bearing_force(gamma, 2, h));
    let couple = 3.0 * G * w / (2.0 * l);
    assert!(
        (f1.x - couple).abs() < tol && (f2.x + couple).abs() < tol,
        "{f1} {f2}"
    );
    assert!((f1.y + f2.y - 3.0 * G).abs() < tol, "{f1} {f2}");
    // nothing moved
    let b = &s.world().bodies;
    assert!(
        (b[2].pos - Vector3::new(w, -0.2, 0.0)).norm() < 1e-9,
        "{}",
        b[2].pos
    );
}
