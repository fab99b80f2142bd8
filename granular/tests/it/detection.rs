//! Contact detection: the narrow phase (`cpbench_granular::narrow`: tangent frames, sphere
//! pairs and sphere-plane contacts) and the broad phase (`cpbench_granular::broadphase`: the
//! grid finds exactly the contacts of all pairs, in key order, across query chunks).

use cpbench_granular::broadphase::{contact_key, BroadPhase, QUERY_CHUNK};
use cpbench_granular::contact::tangent_frame;
use cpbench_granular::nalgebra::{UnitQuaternion, Vector3};
use cpbench_granular::narrow::{body_body, body_plane, sphere_plane, sphere_sphere};
use cpbench_granular::rng::SplitMix64;
use cpbench_granular::{Body, Plane};

#[test]
fn frames_are_orthonormal_and_right_handed() {
    for n in [
        Vector3::new(0.0, 1.0, 0.0),
        Vector3::new(1.0, 2.0, -3.0).normalize(),
        Vector3::new(-1.0, 0.0, 0.0),
        Vector3::new(0.3, -0.3, 0.9).normalize(),
    ] {
        let (u, w) = tangent_frame(&n);
        assert!(n.dot(&u).abs() < 1e-15 && n.dot(&w).abs() < 1e-15 && u.dot(&w).abs() < 1e-15);
        assert!((u.norm() - 1.0).abs() < 1e-15 && (w.norm() - 1.0).abs() < 1e-15);
        assert!((n.cross(&u) - w).norm() < 1e-15);
    }
}

#[test]
fn sphere_sphere_and_plane_geometry() {
    let a = Body::sphere(Vector3::new(0.0, 0.0, 0.0), 1.0, 1.0).unwrap();
    let b = Body::sphere(Vector3::new(2.5, 0.0, 0.0), 1.0, 1.0).unwrap();
    assert!(sphere_sphere(0, &a, 1, &b, 0.4).is_none());
    let c = sphere_sphere(0, &a, 1, &b, 0.6).unwrap();
    assert_eq!(c.n, Vector3::x());
    assert!((c.gap - 0.5).abs() < 1e-15);
    assert!((c.point - Vector3::new(1.25, 0.0, 0.0)).norm() < 1e-15);
    let floor = Plane::new(Vector3::y(), Vector3::zeros()).unwrap();
    let s = Body::sphere(Vector3::new(0.3, 0.9, 0.0), 1.0, 1.0).unwrap();
    let c = sphere_plane(0, &s, 0, &floor, 0.01).unwrap();
    assert_eq!(c.n, -Vector3::y());
    assert!((c.gap + 0.1).abs() < 1e-15);
    assert!((c.point - Vector3::new(0.3, -0.05, 0.0)).norm() < 1e-15);
}

/// Ellipsoids (random orientations, aspect up to 3) and spheres: the grid on bounding
/// spheres finds exactly the contacts of all pairs through the same narrow phase.
#[test]
fn ellipsoids_on_bounding_spheres_match_all_pairs() {
    let mut rng = SplitMix64::new(7);
    let mut bodies = Vec::new();
    for k in 0..1500 {
        let p = Vector3::new(
            rng.uniform(-3.0, 3.0),
            rng.uniform(0.0, 3.0),
            rng.uniform(-3.0, 3.0),
        );
        let b = if k % 5 == 0 {
            Body::sphere(p, rng.uniform(0.05, 0.2), 1.0).unwrap()
        } else {
            let axis = Vector3::new(
                rng.uniform(-1.0, 1.0),
                rng.uniform(-1.0, 1.0),
                rng.uniform(-1.0, 1.0),
            );
            let rot = UnitQuaternion::from_scaled_axis(axis * 2.0);
            let a = rng.uniform(0.1, 0.3);
            let ax = Vector3::new(a, a / rng.uniform(1.0, 3.0), a / rng.uniform(1.0, 3.0));
            Body::ellipsoid(p, rot, ax, 1.0).unwrap()
        };
        bodies.push(b);
    }
    let planes = vec![Plane::new(Vector3::y(), Vector3::new(0.0, 0.1, 0.0)).unwrap()];
    let env = 0.02;
    let mut bp = BroadPhase::new();
    let mut out = Vec::new();
    bp.detect(&bodies, &planes, env, &mut out);
    assert!(bp.failure().is_none());
    let nb = bodies.len();
    let mut want = Vec::new();
    for i in 0..nb {
        for j in i + 1..nb {
            if let Some(c) = body_body(i, &bodies[i], j, &bodies[j], env).unwrap() {
                want.push((contact_key(&c, nb), c.gap));
            }
        }
        if let Some(c) = body_plane(i, &bodies[i], 0, &planes[0], env) {
            want.push((contact_key(&c, nb), c.gap));
        }
    }
    want.sort_by_key(|x| x.0);
    let got: Vec<(u64, f64)> = out.iter().map(|c| (contact_key(c, nb), c.gap)).collect();
    assert!(want.len() > 300, "test scene too sparse: {}", want.len());
    assert_eq!(got, want);
}

/// All pairs, for comparison.
fn brute(bodies: &[Body], planes: &[Plane], env: f64) -> Vec<(u64, f64)> {
    let nb = bodies.len();
    let mut v = Vec::new();
    for i in 0..nb {
        if bodies[i].fixed {
            continue;
        }
        for j in 0..nb {
            if j == i || (j < i && !bodies[j].fixed) {
                continue;
            }
            if let Some(c) = sphere_sphere(i, &bodies[i], j, &bodies[j], env) {
                v.push((contact_key(&c, nb), c.gap));
            }
        }
        for (p, pl) in planes.iter().enumerate() {
            if let Some(c) = sphere_plane(i, &bodies[i], p, pl, env) {
                v.push((contact_key(&c, nb), c.gap));
            }
        }
    }
    v.sort_by_key(|x| x.0);
    v
}

#[test]
fn grid_finds_exactly_the_all_pairs_contacts_in_key_order() {
    check_against_brute_force(600, 3.0);
}

/// Several query chunks (parallel, concatenated in order) give the same list.
#[test]
fn chunked_queries_keep_the_key_order() {
    check_against_brute_force(3 * QUERY_CHUNK + 17, 5.5);
}

fn check_against_brute_force(count: usize, half: f64) {
    let mut rng = SplitMix64::new(42);
    let mut bodies = Vec::new();
    for k in 0..count {
        let p = Vector3::new(
            rng.uniform(-half, half),
            rng.uniform(0.0, 4.0),
            rng.uniform(-half, half),
        );
        let r = rng.uniform(0.1, 0.3);
        let b = if k % 7 == 0 {
            Body::fixed_sphere(p, r).unwrap()
        } else {
            Body::sphere(p, r, 1.0).unwrap()
        };
        bodies.push(b);
    }
    // a far-away body must not blow up the grid
    bodies.push(Body::sphere(Vector3::new(1e6, -1e6, 3e5), 0.2, 1.0).unwrap());
    let planes = vec![
        Plane::new(Vector3::y(), Vector3::new(0.0, 0.2, 0.0)).unwrap(),
        Plane::new(Vector3::new(-1.0, 1.0, 0.0), Vector3::new(2.5, 0.0, 0.0)).unwrap(),
    ];
    let env = 0.05;
    let mut bp = BroadPhase::new();
    let mut out = Vec::new();
    bp.detect(&bodies, &planes, env, &mut out);
    let got: Vec<(u64, f64)> = out
        .iter()
        .map(|c| (contact_key(c, bodies.len()), c.gap))
        .collect();
    let want = brute(&bodies, &planes, env);
    assert!(want.len() > 300, "test scene too sparse: {}", want.len());
    assert_eq!(got, want);
    assert!((bp.cell_size() - (0.6 + env)).abs() < 0.01);
    // reuse: a second call gives the same result
    bp.detect(&bodies, &planes, env, &mut out);
    assert_eq!(out.len(), want.len());
}
