//! Ellipsoid narrow phase against independent references: brute-force sampling of the surfaces
//! refined locally (plane), alternating projections onto the solids (Cheney & Goldstein 1959,
//! the closest pair of two disjoint convex sets) with Eberly's point-to-ellipsoid projection,
//! exact sphere formulas, constructed touching / overlapping pairs, and a sampled
//! penetration depth (min over sampled directions of the sampled support functions).

use cpbench_granular::ellipsoid::{
    ellipsoid_ellipsoid, ellipsoid_plane, DistanceParams, Ellipsoid, EllipsoidContact,
    EllipsoidError, Pose,
};
use cpbench_granular::nalgebra::{UnitQuaternion, Vector3};
use cpbench_granular::narrow::Partner;
use cpbench_granular::rng::SplitMix64;
use cpbench_granular::{GranularError, Plane};

/// The contact of A (`pa`, `ea`) and B (`pb`, `eb`) at any distance under `prm`; panics when
/// there is none or on an error.
fn contact(
    pa: &Pose,
    ea: &Ellipsoid,
    pb: &Pose,
    eb: &Ellipsoid,
    prm: &DistanceParams,
) -> EllipsoidContact {
    ellipsoid_ellipsoid(pa, ea, pb, eb, f64::INFINITY, prm)
        .unwrap()
        .unwrap()
}

/// Two random ellipsoids from `rng`, A at the origin, and B placed so that its support point
/// in `-n` (`n` a random unit vector) is `s_A(n) + delta n`: the common normal is `n` and the
/// gap is `delta` (exact for `delta >= 0`; for small overlaps `n` is the local optimum and
/// translating B by `-delta n` makes the bodies touch). Returns `(ea, pa, eb, pb, n)`.
fn pair_at_gap(
    rng: &mut SplitMix64,
    delta: f64,
) -> (Ellipsoid, Pose, Ellipsoid, Pose, Vector3<f64>) {
    let (ea, eb) = (random_shape(rng), random_shape(rng));
    let pa = Pose::new(Vector3::zeros(), random_rot(rng));
    let rot_b = random_rot(rng);
    let n = random_unit(rng);
    let sa = ea.support(&pa, &n);
    let sb0 = eb.support(&Pose::new(Vector3::zeros(), rot_b), &(-n));
    (ea, pa, eb, Pose::new(sa + delta * n - sb0, rot_b), n)
}

fn random_rot(rng: &mut SplitMix64) -> UnitQuaternion<f64> {
    let q = cpbench_granular::nalgebra::Quaternion::new(
        rng.normal(),
        rng.normal(),
        rng.normal(),
        rng.normal(),
    );
    UnitQuaternion::from_quaternion(q)
}

fn random_unit(rng: &mut SplitMix64) -> Vector3<f64> {
    Vector3::new(rng.normal(), rng.normal(), rng.normal()).normalize()
}

fn random_shape(rng: &mut SplitMix64) -> Ellipsoid {
    let ax = Vector3::new(
        rng.uniform(0.3, 1.5),
        rng.uniform(0.3, 1.5),
        rng.uniform(0.3, 1.5),
    );
    Ellipsoid::new(ax, 1.0).unwrap()
}

/// Surface point of parameters `(theta, phi)`, world frame.
fn surf(e: &Ellipsoid, p: &Pose, th: f64, ph: f64) -> Vector3<f64> {
    let a = e.semi_axes;
    let b = Vector3::new(
        a.x * th.sin() * ph.cos(),
        a.y * th.sin() * ph.sin(),
        a.z * th.cos(),
    );
    p.orientation * b + p.position
}

fn samples(e: &Ellipsoid, p: &Pose, nt: usize) -> Vec<Vector3<f64>> {
    param_samples(e, p, nt)
        .into_iter()
        .map(|(_, _, x)| x)
        .collect()
}

/// Euclidean projection of `y` onto the solid ellipsoid (Eberly, "Distance from a point to an
/// ellipse, an ellipsoid, or a hyperellipsoid", bisection on the Lagrange multiplier).
fn project(e: &Ellipsoid, p: &Pose, y: &Vector3<f64>) -> Vector3<f64> {
    let yb = p.orientation.inverse_transform_vector(&(y - p.position));
    let a = e.semi_axes;
    if yb.component_div(&a).norm_squared() <= 1.0 {
        return *y;
    }
    let g = |t: f64| -> f64 {
        (0..3)
            .map(|i| (a[i] * yb[i] / (t + a[i] * a[i])).powi(2))
            .sum::<f64>()
            - 1.0
    };
    let (mut lo, mut hi) = (0.0, yb.norm() * a.max());
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    let xb = Vector3::new(
        a.x * a.x * yb.x / (t + a.x * a.x),
        a.y * a.y * yb.y / (t + a.y * a.y),
        a.z * a.z * yb.z / (t + a.z * a.z),
    );
    p.orientation * xb + p.position
}

/// Brute force: the closest sampled pair, then alternating projections from it.
/// Returns (sampled min, refined distance, refined xa, refined xb).
fn brute_distance(
    ea: &Ellipsoid,
    pa: &Pose,
    eb: &Ellipsoid,
    pb: &Pose,
) -> (f64, f64, Vector3<f64>, Vector3<f64>) {
    let sa = samples(ea, pa, 40);
    let sb = samples(eb, pb, 40);
    let (mut best, mut ia, mut ib) = (f64::INFINITY, 0, 0);
    for (i, x) in sa.iter().enumerate() {
        for (j, y) in sb.iter().enumerate() {
            let d2 = (x - y).norm_squared();
            if d2 < best {
                (best, ia, ib) = (d2, i, j);
            }
        }
    }
    let (mut xa, mut xb) = (sa[ia], sb[ib]);
    for _ in 0..200_000 {
        let na = project(ea, pa, &xb);
        let nb = project(eb, pb, &na);
        let change = (na - xa).norm() + (nb - xb).norm();
        (xa, xb) = (na, nb);
        if change < 1e-15 {
            break;
        }
    }
    (best.sqrt(), (xb - xa).norm(), xa, xb)
}

/// Support function by sampling: the max of `m . x` over the sampled surface points, refined
/// by a compass search in `(theta, phi)` from the best sample.
fn sampled_support(
    e: &Ellipsoid,
    p: &Pose,
    pts: &[(f64, f64, Vector3<f64>)],
    m: &Vector3<f64>,
) -> f64 {
    let (mut best, mut bt, mut bp) = (f64::NEG_INFINITY, 0.0, 0.0);
    for (th, ph, x) in pts {
        let v = m.dot(x);
        if v > best {
            (best, bt, bp) = (v, *th, *ph);
        }
    }
    let mut step = 0.05;
    while step > 1e-11 {
        let mut moved = false;
        for (dt, dp) in [(step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)] {
            let v = m.dot(&surf(e, p, bt + dt, bp + dp));
            if v > best {
                (best, bt, bp) = (v, bt + dt, bp + dp);
                moved = true;
            }
        }
        if !moved {
            step *= 0.5;
        }
    }
    best
}

fn param_samples(e: &Ellipsoid, p: &Pose, nt: usize) -> Vec<(f64, f64, Vector3<f64>)> {
    let np = 2 * nt;
    let mut v = Vec::with_capacity(nt * np);
    for i in 0..nt {
        let th = std::f64::consts::PI * (i as f64 + 0.5) / nt as f64;
        for j in 0..np {
            let ph = 2.0 * std::f64::consts::PI * j as f64 / np as f64;
            v.push((th, ph, surf(e, p, th, ph)));
        }
    }
    v
}

/// Sampled penetration depth: the min over `nd` Fibonacci directions `m` of
/// `h_A(m) + h_B(-m)` (world support functions from sampled surface points), then a compass
/// search over the direction's spherical angles with the refined sampled supports.
fn sampled_penetration(ea: &Ellipsoid, pa: &Pose, eb: &Ellipsoid, pb: &Pose, nd: usize) -> f64 {
    let sa = param_samples(ea, pa, 40);
    let sb = param_samples(eb, pb, 40);
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let (mut best, mut bm) = (f64::INFINITY, Vector3::z());
    for k in 0..nd {
        let z = 1.0 - 2.0 * (k as f64 + 0.5) / nd as f64;
        let r = (1.0 - z * z).sqrt();
        let m = Vector3::new(
            r * (golden * k as f64).cos(),
            r * (golden * k as f64).sin(),
            z,
        );
        let ha = sa
            .iter()
            .map(|x| m.dot(&x.2))
            .fold(f64::NEG_INFINITY, f64::max);
        let hb = sb
            .iter()
            .map(|x| -m.dot(&x.2))
            .fold(f64::NEG_INFINITY, f64::max);
        if ha + hb < best {
            (best, bm) = (ha + hb, m);
        }
    }
    let dir = |t: f64, p: f64| Vector3::new(t.sin() * p.cos(), t.sin() * p.sin(), t.cos());
    let (mut t, mut ph) = (bm.z.clamp(-1.0, 1.0).acos(), bm.y.atan2(bm.x));
    let val = |t: f64, ph: f64| {
        let m = dir(t, ph);
        sampled_support(ea, pa, &sa, &m) + sampled_support(eb, pb, &sb, &(-m))
    };
    best = val(t, ph);
    let mut step = 0.05;
    while step > 1e-9 {
        let mut moved = false;
        for (dt, dp) in [(step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)] {
            let v = val(t + dt, ph + dp);
            if v < best {
                (best, t, ph) = (v, t + dt, ph + dp);
                moved = true;
            }
        }
        if !moved {
            step *= 0.5;
        }
    }
    best
}

/// Asserts that the gap of the overlapping pair's contact `c` is minus the sampled penetration
/// depth (800 directions) to 1e-8; returns `|gap + depth|`.
fn gap_is_sampled_depth(
    c: &EllipsoidContact,
    ea: &Ellipsoid,
    pa: &Pose,
    eb: &Ellipsoid,
    pb: &Pose,
) -> f64 {
    let pd = sampled_penetration(ea, pa, eb, pb, 800);
    assert!((c.gap + pd).abs() < 1e-8, "gap {} vs sampled -{pd}", c.gap);
    (c.gap + pd).abs()
}

fn check_witnesses(c: &EllipsoidContact, ea: &Ellipsoid, pa: &Pose, eb: &Ellipsoid, pb: &Pose) {
    assert!(
        ea.implicit(pa, &c.point_a).abs() < 1e-12,
        "A witness off surface"
    );
    assert!(
        eb.implicit(pb, &c.point_b).abs() < 1e-12,
        "B witness off surface"
    );
    let ga = ea.surface_normal(pa, &c.point_a);
    let gb = eb.surface_normal(pb, &c.point_b);
    assert!((ga - c.n).norm() < 1e-9, "A normal {:?} vs n {:?}", ga, c.n);
    assert!(
        (gb + c.n).norm() < 1e-9,
        "B normal {:?} vs -n {:?}",
        gb,
        c.n
    );
    assert!(
        (c.point_b - c.point_a - c.gap * c.n).norm() < 1e-9,
        "tangential residual {:e}, gap {}, iterations {}",
        (c.point_b - c.point_a - c.gap * c.n).norm(),
        c.gap,
        c.iterations
    );
    assert!((c.n.norm() - 1.0).abs() < 1e-14);
    assert!(c.n.dot(&c.u).abs() < 1e-14 && c.n.dot(&c.w).abs() < 1e-14);
    assert!((c.r_a - (c.point_a - pa.position)).norm() < 1e-15);
    assert!((pa.orientation * c.r_a_body - c.r_a).norm() < 1e-12);
    assert!((pb.orientation * c.r_b_body - c.r_b).norm() < 1e-12);
}

#[test]
fn mass_properties_and_errors() {
    let e = Ellipsoid::new(Vector3::new(1.0, 2.0, 3.0), 2.0).unwrap();
    assert!((e.inertia - Vector3::new(5.2, 4.0, 2.0)).norm() < 1e-14);
    assert_eq!(e.bounding_radius(), 3.0);
    assert!((e.volume() - 8.0 * std::f64::consts::PI).abs() < 1e-12);
    let d = Ellipsoid::with_density(Vector3::new(1.0, 2.0, 3.0), 1000.0).unwrap();
    assert!((d.mass - 8000.0 * std::f64::consts::PI).abs() < 1e-8);
    for bad in [
        Vector3::new(0.0, 1.0, 1.0),
        Vector3::new(1.0, -1.0, 1.0),
        Vector3::new(1.0, 1.0, f64::NAN),
    ] {
        assert!(matches!(
            Ellipsoid::new(bad, 1.0),
            Err(GranularError::InvalidParameter { .. })
        ));
    }
    assert!(Ellipsoid::new(Vector3::new(1.0, 1.0, 1.0), 0.0).is_err());
    assert!(Ellipsoid::with_density(Vector3::new(1.0, 1.0, 1.0), -1.0).is_err());
    let p = Pose::new(Vector3::zeros(), UnitQuaternion::identity());
    let q = Pose::new(Vector3::new(0.5, 0.0, 0.0), UnitQuaternion::identity());
    let bad = DistanceParams {
        tol: 0.0,
        max_iter: 10,
        restarts: true,
    };
    assert!(matches!(
        ellipsoid_ellipsoid(&p, &e, &q, &e, 1.0, &bad),
        Err(EllipsoidError::InvalidInput { name: "tol", .. })
    ));
    // one Newton iteration cannot reach 1e-10 on a rotated pair: typed non-convergence
    let rot = UnitQuaternion::from_euler_angles(0.3, 0.5, 0.7);
    let r = Pose::new(Vector3::new(2.0, 1.5, 0.2), rot);
    let one = DistanceParams {
        tol: 1e-10,
        max_iter: 1,
        restarts: false,
    };
    assert!(matches!(
        ellipsoid_ellipsoid(&p, &e, &r, &e, f64::INFINITY, &one),
        Err(EllipsoidError::NotConverged { iterations: 1, .. })
    ));
    let nan = Pose::new(Vector3::new(f64::NAN, 0.0, 0.0), UnitQuaternion::identity());
    assert!(matches!(
        ellipsoid_ellipsoid(&p, &e, &nan, &e, 1.0, &DistanceParams::default()),
        Err(EllipsoidError::InvalidInput { name: "pose", .. })
    ));
}

#[test]
fn plane_gap_matches_refined_sampling() {
    let mut rng = SplitMix64::new(17);
    let mut worst: f64 = 0.0;
    for _ in 0..20 {
        let e = random_shape(&mut rng);
        let pose = Pose::new(
            Vector3::new(rng.uniform(-1.0, 1.0), rng.uniform(0.0, 2.0), 0.3),
            random_rot(&mut rng),
        );
        let plane = Plane::new(random_unit(&mut rng), Vector3::new(0.1, -0.2, 0.3)).unwrap();
        let c = ellipsoid_plane(&pose, &e, &plane, f64::INFINITY).unwrap();
        // Dense grid, then a compass search in (theta, phi) from the best node.
        let (nt, np) = (200, 400);
        let (mut best, mut bt, mut bp) = (f64::INFINITY, 0.0, 0.0);
        for i in 0..nt {
            let th = std::f64::consts::PI * (i as f64 + 0.5) / nt as f64;
            for j in 0..np {
                let ph = 2.0 * std::f64::consts::PI * j as f64 / np as f64;
                let g = plane.distance(&surf(&e, &pose, th, ph));
                if g < best {
                    (best, bt, bp) = (g, th, ph);
                }
            }
        }
        let grid = best;
        assert!(c.gap <= grid + 1e-14, "closed form above a sampled point");
        assert!(grid - c.gap < 2e-3, "grid {grid} vs {}", c.gap);
        let mut step = 0.02;
        while step > 1e-13 {
            let mut moved = false;
            for (dt, dp) in [(step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)] {
                let g = plane.distance(&surf(&e, &pose, bt + dt, bp + dp));
                if g < best {
                    (best, bt, bp) = (g, bt + dt, bp + dp);
                    moved = true;
                }
            }
            if !moved {
                step *= 0.5;
            }
        }
        assert!(c.gap <= best + 1e-14);
        assert!(best - c.gap < 1e-11, "refined {best} vs {}", c.gap);
        worst = worst.max(best - c.gap);
        assert_eq!(c.n, -plane.normal.into_inner());
        assert!(e.implicit(&pose, &c.point_a).abs() < 1e-12);
        assert!((e.surface_normal(&pose, &c.point_a) - c.n).norm() < 1e-12);
        assert!(plane.distance(&c.point_b).abs() < 1e-12);
        assert!((pose.orientation * c.r_a_body - c.r_a).norm() < 1e-12);
        let k = c.to_contact(3, Partner::Plane(1));
        assert_eq!((k.a, k.gap, k.n), (3, c.gap, c.n));
        // envelope: no contact when the gap is at least the envelope
        assert!(ellipsoid_plane(&pose, &e, &plane, c.gap).is_none());
    }
    println!("ellipsoid-plane: max (refined sampled - closed form) = {worst:.3e} m");
}

#[test]
fn separated_pairs_match_brute_force() {
    let mut rng = SplitMix64::new(5);
    let prm = DistanceParams::default();
    let (mut worst, mut worst_pt, mut n_close, mut max_it) = (0.0f64, 0.0f64, 0, 0);
    let mut k = 0;
    while k < 16 {
        let (ea, eb) = (random_shape(&mut rng), random_shape(&mut rng));
        let pa = Pose::new(Vector3::zeros(), random_rot(&mut rng));
        let rsum = ea.bounding_radius() + eb.bounding_radius();
        // Half with bounding spheres apart, half close (bounding spheres overlapping).
        let dist = if k % 2 == 0 {
            rsum + rng.uniform(0.01, 0.5)
        } else {
            rng.uniform(0.6, 1.0) * rsum
        };
        let pb = Pose::new(dist * random_unit(&mut rng), random_rot(&mut rng));
        let (coarse, refined, xa, xb) = brute_distance(&ea, &pa, &eb, &pb);
        if refined < 0.02 {
            continue; // overlapping or too close for alternating projections: not this test
        }
        k += 1;
        if dist < rsum {
            n_close += 1;
        }
        let c = contact(&pa, &ea, &pb, &eb, &prm);
        assert!(
            c.gap <= coarse + 1e-12,
            "gap {} above sampled {coarse}",
            c.gap
        );
        assert!(
            (c.gap - refined).abs() < 1e-10,
            "gap {} vs {refined}",
            c.gap
        );
        assert!((c.point_a - xa).norm() < 1e-5 && (c.point_b - xb).norm() < 1e-5);
        check_witnesses(&c, &ea, &pa, &eb, &pb);
        worst = worst.max((c.gap - refined).abs());
        worst_pt = worst_pt.max((c.point_a - xa).norm());
        max_it = max_it.max(c.iterations);
    }
    println!(
        "ellipsoid-ellipsoid separated (16 pairs, {n_close} with overlapping bounding spheres): \
         max |gap - brute| = {worst:.3e} m, max |witness - brute| = {worst_pt:.3e} m, \
         max Newton iterations {max_it}"
    );
}

#[test]
fn spheres_are_exact() {
    let mut rng = SplitMix64::new(9);
    let prm = DistanceParams::default();
    for k in 0..50 {
        let (r1, r2) = (rng.uniform(0.2, 1.0), rng.uniform(0.2, 1.0));
        let s1 = Ellipsoid::new(Vector3::repeat(r1), 1.0).unwrap();
        let s2 = Ellipsoid::new(Vector3::repeat(r2), 1.0).unwrap();
        let p1 = Pose::new(Vector3::new(0.1, 0.2, 0.3), random_rot(&mut rng));
        let dist = (r1 + r2) * if k % 2 == 0 { 1.3 } else { 0.8 };
        let dir = random_unit(&mut rng);
        let p2 = Pose::new(p1.position + dist * dir, random_rot(&mut rng));
        let c = contact(&p1, &s1, &p2, &s2, &prm);
        let exact = dist - r1 - r2;
        assert!((c.gap - exact).abs() < 1e-12, "{} vs {exact}", c.gap);
        assert!((c.n - dir).norm() < 1e-9);
        assert!((c.point_a - (p1.position + r1 * dir)).norm() < 1e-9);
        check_witnesses(&c, &s1, &p1, &s2, &p2);
    }
}

#[test]
fn swapping_bodies_flips_the_normal() {
    let mut rng = SplitMix64::new(23);
    let prm = DistanceParams::default();
    for k in 0..40 {
        let (ea, eb) = (random_shape(&mut rng), random_shape(&mut rng));
        let rsum = ea.bounding_radius() + eb.bounding_radius();
        let pa = Pose::new(random_unit(&mut rng), random_rot(&mut rng));
        let s = if k % 2 == 0 { 0.9 } else { 0.5 };
        let pb = Pose::new(
            pa.position + s * rsum * random_unit(&mut rng),
            random_rot(&mut rng),
        );
        let ab = contact(&pa, &ea, &pb, &eb, &prm);
        let ba = contact(&pb, &eb, &pa, &ea, &prm);
        assert!((ab.gap - ba.gap).abs() < 1e-10, "{} vs {}", ab.gap, ba.gap);
        assert!((ab.n + ba.n).norm() < 1e-6, "{:?} vs {:?}", ab.n, ba.n);
        assert!((ab.point_a - ba.point_b).norm() < 1e-6);
        assert!((ab.point_b - ba.point_a).norm() < 1e-6);
        check_witnesses(&ab, &ea, &pa, &eb, &pb);
        check_witnesses(&ba, &eb, &pb, &ea, &pa);
    }
}

#[test]
fn touching_and_overlapping_pairs() {
    let mut rng = SplitMix64::new(41);
    let prm = DistanceParams::default();
    let mut worst_sampled: f64 = 0.0;
    for k in 0..24 {
        let delta = [1e-3, 0.0, -1e-6, -1e-3, -1e-2, -3e-2][k % 6];
        let (ea, pa, eb, pb, n) = pair_at_gap(&mut rng, delta);
        let c = contact(&pa, &ea, &pb, &eb, &prm);
        assert!((c.gap - delta).abs() < 1e-10, "gap {} vs {delta}", c.gap);
        assert!((c.n - n).norm() < 1e-6);
        check_witnesses(&c, &ea, &pa, &eb, &pb);
        if delta < -1e-4 {
            worst_sampled = worst_sampled.max(gap_is_sampled_depth(&c, &ea, &pa, &eb, &pb));
        }
    }
    println!("touching/overlap: max |gap + sampled penetration| = {worst_sampled:.3e} m");
}

#[test]
fn deep_overlaps_match_sampled_penetration() {
    let mut rng = SplitMix64::new(77);
    let mut worst: f64 = 0.0;
    for _ in 0..8 {
        let (ea, eb) = (random_shape(&mut rng), random_shape(&mut rng));
        let pa = Pose::new(Vector3::zeros(), random_rot(&mut rng));
        let pb = Pose::new(0.3 * random_unit(&mut rng), random_rot(&mut rng));
        let c = contact(&pa, &ea, &pb, &eb, &DistanceParams::default());
        assert!(c.gap < 0.0);
        worst = worst.max(gap_is_sampled_depth(&c, &ea, &pa, &eb, &pb));
        check_witnesses(&c, &ea, &pa, &eb, &pb);
    }
    println!("deep overlaps: max |gap + sampled penetration| = {worst:.3e} m");
}

#[test]
fn envelope_and_timing() {
    let mut rng = SplitMix64::new(3);
    let prm = DistanceParams::default();
    let e = Ellipsoid::new(Vector3::new(1.0, 0.5, 0.3), 1.0).unwrap();
    let pa = Pose::new(Vector3::zeros(), UnitQuaternion::identity());
    let pb = Pose::new(Vector3::new(2.5, 0.0, 0.0), UnitQuaternion::identity());
    // gap is exactly 0.5 along x
    assert!(ellipsoid_ellipsoid(&pa, &e, &pb, &e, 0.5, &prm)
        .unwrap()
        .is_none());
    let c = ellipsoid_ellipsoid(&pa, &e, &pb, &e, 0.51, &prm)
        .unwrap()
        .unwrap();
    assert!((c.gap - 0.5).abs() < 1e-14 && (c.n - Vector3::x()).norm() < 1e-14);
    // far apart: rejected by bounding spheres
    let far = Pose::new(Vector3::new(10.0, 0.0, 0.0), UnitQuaternion::identity());
    assert!(ellipsoid_ellipsoid(&pa, &e, &far, &e, 1.0, &prm)
        .unwrap()
        .is_none());
    // Timing of near-contact calls (gaps within +-2 % of the size).
    let mut cases = Vec::new();
    for k in 0..200 {
        let (ea, pa, eb, pb, _) = pair_at_gap(&mut rng, 0.02 * (k as f64 / 100.0 - 1.0));
        cases.push((ea, pa, eb, pb));
    }
    // gaps [-2 %, 0) overlap, [0, 2 %) separated; with and without restarts
    let local = DistanceParams {
        restarts: false,
        ..prm
    };
    let mut same = 0;
    for (ea, pa, eb, pb) in &cases {
        let g = contact(pa, ea, pb, eb, &prm);
        let l = contact(pa, ea, pb, eb, &local);
        assert!(l.gap <= g.gap + 1e-15);
        if (g.gap - l.gap).abs() < 1e-12 {
            same += 1;
        }
    }
    assert_eq!(
        same,
        cases.len(),
        "local optimum differs from the multi-start one"
    );
    for (label, range, p) in [
        ("separated", 100..200, &prm),
        ("overlapping, restarts", 0..100, &prm),
        ("overlapping, no restarts", 0..100, &local),
    ] {
        let reps = 20;
        let t0 = std::time::Instant::now();
        let (mut acc, mut its) = (0.0, 0);
        for _ in 0..reps {
            for (ea, pa, eb, pb) in &cases[range.clone()] {
                let c = contact(pa, ea, pb, eb, p);
                acc += c.gap;
                its += c.iterations;
            }
        }
        let calls = (reps * range.len()) as f64;
        assert!(acc.is_finite());
        println!(
            "ellipsoid_ellipsoid {label}: {:.2} us per call, {:.2} Newton iterations per call",
            t0.elapsed().as_secs_f64() / calls * 1e6,
            its as f64 / calls
        );
    }
}
