//! Newton's impact law in the velocity-level (Moreau) scheme (`SimParams::restitution`):
//! rebound heights of a bouncing ball in the ratio `e^2`, no bounce with `e = 0` or below the
//! closing-speed threshold, Newton's cradle with `e = 1` (sequential impacts: momentum and
//! energy conserved and handed on to the last sphere), Moreau's simultaneous impact of a row
//! of touching spheres against its closed-form answer, and the provenance record.
//!
//! Every contact problem here is the frictionless LCP, solved exactly by enumerating the
//! active sets (`N` is positive definite in these scenes, so the solution is unique): the
//! numbers below are the scheme's, not a solver tolerance's.

use cpbench_granular::nalgebra::{DMatrix, DVector, Vector3};
use cpbench_granular::{
    Body, ContactSolution, Plane, SceneKind, SceneSpec, SimParams, Simulation, Snapshot, World,
};
use cpbench_problems::instance::Instance;
use std::collections::BTreeMap;

const G: f64 = 9.81;

/// The exact solution of the LCP `0 <= gamma _|_ N gamma + r >= 0` for `n <= 12`, by
/// enumeration of the active sets (the first set whose solution is feasible to rounding).
fn exact_lcp(inst: &Instance, _warm: Option<&[f64]>) -> Result<ContactSolution, String> {
    let n = inst.n();
    if n > 12 {
        return Err(format!("{n} unknowns: too many to enumerate"));
    }
    let mut nd = DMatrix::zeros(n, n);
    let (mut e, mut col) = (vec![0.0; n], vec![0.0; n]);
    for j in 0..n {
        e.fill(0.0);
        e[j] = 1.0;
        inst.matvec(&e, &mut col);
        for i in 0..n {
            nd[(i, j)] = col[i];
        }
    }
    let r = DVector::from_column_slice(inst.r());
    let scale = r.amax().max(1.0);
    for mask in 0u32..(1 << n) {
        let s: Vec<usize> = (0..n).filter(|&i| mask & (1 << i) != 0).collect();
        let mut gamma = DVector::zeros(n);
        if !s.is_empty() {
            let a = DMatrix::from_fn(s.len(), s.len(), |i, j| nd[(s[i], s[j])]);
            let b = DVector::from_fn(s.len(), |i, _| -r[s[i]]);
            let Some(x) = a.lu().solve(&b) else { continue };
            for (k, &i) in s.iter().enumerate() {
                gamma[i] = x[k];
            }
        }
        let w = &nd * &gamma + &r;
        let ok = (0..n).all(|i| {
            if mask & (1 << i) != 0 {
                gamma[i] >= -1e-13 * scale
            } else {
                w[i] >= -1e-13 * scale
            }
        });
        if ok {
            return Ok(ContactSolution {
                gamma: gamma.iter().map(|g| g.max(0.0)).collect(),
                iterations: 1,
                residual: 0.0,
                converged: true,
                solver_time: None,
            });
        }
    }
    Err("no feasible active set".into())
}

fn params(h: f64, gravity: f64, e: f64) -> SimParams {
    SimParams {
        h,
        gravity: Vector3::new(0.0, -gravity, 0.0),
        mu: 0.0,
        frictionless: true,
        restitution: e,
        ..SimParams::default()
    }
}

fn sim(bodies: Vec<Body>, planes: Vec<Plane>, p: SimParams) -> Simulation {
    Simulation::new(
        World {
            bodies,
            planes,
            params: p,
        },
        "restitution",
        BTreeMap::new(),
        None,
    )
    .unwrap()
}

const R: f64 = 0.1;

/// A sphere of radius `R` whose lowest point is `height` above the floor `y = 0`, at rest.
fn ball_over_floor(height: f64, p: SimParams) -> Simulation {
    let floor = Plane::new(Vector3::y(), Vector3::zeros()).unwrap();
    let ball = Body::sphere(Vector3::new(0.0, R + height, 0.0), R, 1.0).unwrap();
    sim(vec![ball], vec![floor], p)
}

/// Drop the ball from `height`; return the apex heights (lowest point above the floor) of its
/// first `bounces` rebounds (fewer if it comes to rest within `t_max` s) and the steps taken.
fn apexes(height: f64, p: SimParams, bounces: usize, t_max: f64) -> (Vec<f64>, usize) {
    let h = p.h;
    let mut s = ball_over_floor(height, p);
    let mut out = Vec::new();
    let mut peak = f64::NEG_INFINITY;
    let mut rising = false;
    let steps = (t_max / h).round() as usize;
    for k in 0..steps {
        s.step(&mut exact_lcp).unwrap();
        let b = &s.world().bodies[0];
        let y = b.pos.y - R;
        assert!(
            y > -1e-9,
            "step {k}: the ball sinks into the floor, y = {y:e}"
        );
        if b.vel.y > 0.0 {
            rising = true;
            peak = peak.max(y);
        } else if rising {
            out.push(peak.max(y));
            rising = false;
            peak = f64::NEG_INFINITY;
            if out.len() == bounces {
                return (out, k + 1);
            }
        }
    }
    (out, steps)
}

/// The ratios of successive apexes (the first over the drop height).
fn ratios(height: f64, apex: &[f64]) -> Vec<f64> {
    std::iter::once(height)
        .chain(apex.iter().copied())
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| w[1] / w[0])
        .collect()
}

/// A ball dropped from 1 m onto the floor rebounds to `e^2` times its previous height, bounce
/// after bounce, within 2%. Measured ratios of successive apexes (the first over the drop
/// height):
///
/// | h | e | ratios (e^2) |
/// |---|---|---|
/// | 1e-4 | 0.5 | 0.25030, 0.25042, 0.25147, 0.25278 (0.25) |
/// | 1e-4 | 0.8 | 0.64015, 0.64011, 0.64013, 0.64027, 0.64046, 0.64034 (0.64) |
/// | 1e-3 | 0.5 | 0.25063, 0.25142 (then 0.2600, 0.2653: 4 % and 6 %) |
/// | 1e-3 | 0.8 | 0.64039, 0.64170, 0.64082, 0.64155 (0.64) |
///
/// The error is O(h): the impacting step rebounds from where the ball is at its start (a gap
/// in `[0, h |v|)` above the floor, which adds up to `(1 - e^2) h |v|` to the next apex), so
/// it grows relative to the apex as the bounces get lower and slower.
#[test]
fn bouncing_ball_rebounds_in_the_ratio_e_squared() {
    let height = 1.0;
    // (h, e, bounces checked): the error per bounce is O(h |v| / height), so the coarse step
    // is checked on the first, high bounces only
    for (h, e, bounces) in [
        (1e-4, 0.5, 4),
        (1e-4, 0.8, 6),
        (1e-3, 0.5, 2),
        (1e-3, 0.8, 4),
    ] {
        let (apex, steps) = apexes(height, params(h, G, e), bounces, 10.0);
        assert_eq!(apex.len(), bounces, "e = {e}: apexes {apex:?}");
        let q = ratios(height, &apex);
        eprintln!("h = {h}, e = {e}: apexes {apex:?}, ratios {q:?} ({steps} steps)");
        for (k, q) in q.iter().enumerate() {
            let rel = (q / (e * e) - 1.0).abs();
            assert!(
                rel < 0.02,
                "h = {h}, e = {e}, bounce {}: ratio {q} vs e^2 = {} ({:.2} %)",
                k + 1,
                e * e,
                100.0 * rel
            );
        }
    }
}

/// `e = 0` is the inelastic scheme: the ball lands and stays (no rebound at all), and the
/// trajectory does not depend on the (then ignored) threshold, bit for bit.
#[test]
fn no_restitution_means_no_bounce() {
    let run = |threshold: f64| {
        let p = SimParams {
            restitution_threshold: threshold,
            ..params(1e-3, G, 0.0)
        };
        let mut s = ball_over_floor(0.5, p);
        let mut traj = Vec::new();
        let mut landed = None;
        for k in 0..1000 {
            s.step(&mut exact_lcp).unwrap();
            assert_eq!(s.impacts(), 0);
            let b = &s.world().bodies[0];
            traj.push((b.pos.y.to_bits(), b.vel.y.to_bits()));
            let y = b.pos.y - R;
            if let Some(l) = landed {
                // the landing step ends at contact with v = -Phi / h; then at rest
                assert!(y.abs() < 1e-12, "step {k}: height {y:e} after landing");
                assert!(
                    k == l || b.vel.y.abs() < 1e-9,
                    "step {k}: velocity {}",
                    b.vel.y
                );
            } else if y < 1e-12 {
                landed = Some(k);
            }
        }
        // free fall from 0.5 m takes sqrt(2 0.5 / g) = 0.319 s
        let k = landed.expect("the ball lands");
        assert!((315..=325).contains(&k), "landed at step {k}");
        traj
    };
    assert_eq!(run(1e-2), run(0.0));
}

/// The threshold: a ball that hits the floor at 0.44 m/s (dropped from 1 cm) bounces with a
/// threshold of 0.3 m/s (to `e^2` of its height) and does not with 0.5 m/s.
#[test]
fn slow_impacts_below_the_threshold_do_not_bounce() {
    let e = 0.8;
    let height = 0.01;
    let p = |threshold| SimParams {
        restitution_threshold: threshold,
        ..params(1e-4, G, e)
    };
    let (apex, _) = apexes(height, p(0.3), 1, 1.0);
    assert_eq!(apex.len(), 1);
    let q = apex[0] / height;
    assert!((q / (e * e) - 1.0).abs() < 0.02, "ratio {q} vs {}", e * e);
    let (apex, steps) = apexes(height, p(0.5), 1, 1.0);
    assert!(apex.is_empty(), "bounced to {apex:?} below the threshold");
    assert_eq!(steps, 10_000);
}

/// `n` equal spheres of radius `R` in a row along `x`, `gap` apart, the first moving at `v0`
/// into the others; no gravity, `e = 1`.
fn cradle(n: usize, gap: f64, v0: f64, h: f64) -> Simulation {
    let bodies = (0..n)
        .map(|i| {
            let mut b =
                Body::sphere(Vector3::new(i as f64 * (2.0 * R + gap), 0.0, 0.0), R, 1.0).unwrap();
            if i == 0 {
                b.vel = Vector3::new(v0, 0.0, 0.0);
            }
            b
        })
        .collect();
    sim(bodies, vec![], params(h, 0.0, 1.0))
}

/// Newton's cradle (5 equal spheres 5 mm apart, `e = 1`, `v0 = 1 m/s`, `h = 1e-3`): four
/// binary impacts, one after the other; momentum is conserved at every step (to 1e-12
/// relative) and at the end the last sphere leaves at `v0` (measured: exactly 1 m/s to
/// rounding, error below 1e-15) with the others at rest (below 1e-15 m/s); the kinetic energy
/// is conserved.
#[test]
fn newtons_cradle_conserves_and_transmits_momentum() {
    let (n, v0) = (5, 1.0);
    let mut s = cradle(n, 5e-3, v0, 1e-3);
    let p0 = s.momentum();
    let mut impacts = 0;
    for _ in 0..200 {
        s.step(&mut exact_lcp).unwrap();
        impacts += s.impacts();
        let p = s.momentum();
        assert!(
            (p - p0).norm() <= 1e-12 * p0.norm(),
            "momentum {p:?} vs {p0:?}"
        );
    }
    assert_eq!(impacts, n - 1, "binary impacts");
    let b = &s.world().bodies;
    let last = b[n - 1].vel;
    eprintln!(
        "cradle: last sphere {last:?}, others {:?}",
        b[..n - 1].iter().map(|b| b.vel.x).collect::<Vec<_>>()
    );
    assert!(
        (last - Vector3::new(v0, 0.0, 0.0)).norm() < 1e-12,
        "{last:?}"
    );
    for (i, b) in b[..n - 1].iter().enumerate() {
        assert!(b.vel.norm() < 1e-12, "sphere {i}: {:?}", b.vel);
    }
    assert!((s.kinetic_energy() - 0.5 * v0 * v0).abs() < 1e-12);
    // the last sphere has left the row
    let gap = b[n - 1].pos.x - b[n - 2].pos.x - 2.0 * R;
    assert!(gap > 0.1, "gap {gap}");
}

/// The named scenes: `cradle` (5 spheres, `e = 1`) hands the first sphere's velocity to the
/// last, `bounce` (3 spheres dropped from 1/3, 2/3 and 1 m, `e = 0.8`) rebounds to `e^2` of
/// each drop height (within 2% at its `h = 1e-3`).
#[test]
fn named_scenes_bounce_and_cradle() {
    let spec = |kind, size, frictionless| SceneSpec {
        kind,
        size,
        seed: 1,
        frictionless,
        aspect: None,
    };
    let mut s = spec(SceneKind::Cradle, 5, true)
        .build()
        .unwrap()
        .into_simulation()
        .unwrap();
    assert_eq!(s.world().params.restitution, 1.0);
    for _ in 0..200 {
        s.step(&mut exact_lcp).unwrap();
    }
    let v: Vec<f64> = s.world().bodies.iter().map(|b| b.vel.x).collect();
    assert!((v[4] - 1.0).abs() < 1e-12, "{v:?}");
    assert!(v[..4].iter().all(|x| x.abs() < 1e-12), "{v:?}");

    let mut s = spec(SceneKind::Bounce, 3, true)
        .build()
        .unwrap()
        .into_simulation()
        .unwrap();
    let e = s.world().params.restitution;
    assert_eq!(e, 0.8);
    let drop: Vec<f64> = s.world().bodies.iter().map(|b| b.pos.y - R).collect();
    let mut apex = [f64::NAN; 3];
    let mut bounced = [false; 3];
    for _ in 0..1200 {
        s.step(&mut exact_lcp).unwrap();
        for (i, b) in s.world().bodies.iter().enumerate() {
            if b.vel.y > 0.0 {
                bounced[i] = true;
                apex[i] = if apex[i].is_nan() {
                    b.pos.y - R
                } else {
                    apex[i].max(b.pos.y - R)
                };
            }
        }
    }
    assert!(bounced.iter().all(|&b| b), "{bounced:?}");
    for i in 0..3 {
        let q = apex[i] / drop[i];
        assert!(
            (q / (e * e) - 1.0).abs() < 0.02,
            "sphere {i}: ratio {q} vs e^2"
        );
    }
}

/// A saved state keeps the simulation's restitution: restored, it is the saved `e` (also when
/// it differs from the scene's default), and a state saved with `e = 0` (no field, as in every
/// older file) restores with `e = 0`, even for `bounce` whose default is 0.8.
#[test]
fn snapshots_keep_the_restitution() {
    for (e, written) in [(0.5, true), (0.0, false)] {
        let spec = SceneSpec {
            kind: SceneKind::Bounce,
            size: 2,
            seed: 1,
            frictionless: true,
            aspect: None,
        };
        let mut scene = spec.build().unwrap();
        scene.world.params.restitution = e;
        scene.world.params.restitution_threshold = 0.25;
        let mut s = scene.into_simulation().unwrap();
        for _ in 0..10 {
            s.step(&mut exact_lcp).unwrap();
        }
        let json = Snapshot::capture(&s, &spec, "test").to_json();
        assert_eq!(json.contains("\"restitution\""), written, "{json}");
        let back = Snapshot::from_json(&json).unwrap().restore(true).unwrap();
        let p = &back.world().params;
        assert_eq!(p.restitution, e);
        if written {
            assert_eq!(p.restitution_threshold, 0.25);
        }
        assert_eq!(back.world().bodies, s.world().bodies);
    }
}

/// Moreau's law is global: a row of `n` *touching* equal spheres hit at `v0` with `e = 1`
/// solves one LCP in which every contact of the row is active, and its unique solution sends
/// the first sphere back at `(2/n - 1) v0` and the others on together at `2 v0 / n`
/// (momentum `v0` and energy `v0^2 / 2` both conserved), not the sequential cradle's answer
/// (Moreau's remark that Newton's law "doesn't yield plausible results for multicontact
/// systems"). Checked for n = 2 (a plain exchange), 3, 5.
#[test]
fn touching_row_follows_moreaus_simultaneous_impact() {
    let v0 = 1.0;
    for n in [2usize, 3, 5] {
        let mut s = cradle(n, 0.0, v0, 1e-3);
        s.step(&mut exact_lcp).unwrap();
        assert_eq!(s.impacts(), 1, "n = {n}: only the first contact closes");
        let nf = n as f64;
        for (i, b) in s.world().bodies.iter().enumerate() {
            let want = if i == 0 {
                (2.0 / nf - 1.0) * v0
            } else {
                2.0 * v0 / nf
            };
            assert!(
                (b.vel - Vector3::new(want, 0.0, 0.0)).norm() < 1e-12,
                "n = {n}, sphere {i}: {:?} vs {want}",
                b.vel
            );
        }
        assert!((s.momentum().x - v0).abs() < 1e-12);
        assert!((s.kinetic_energy() - 0.5 * v0 * v0).abs() < 1e-12);
    }
}

/// With restitution on, every instance records `restitution`, `restitution_threshold` and
/// the number of impacting contacts in its provenance; with it off (the default) none of
/// them, so the default instances are unchanged.
#[test]
fn provenance_records_the_impact_law() {
    let mut s = ball_over_floor(0.0, params(1e-3, G, 0.5));
    s.bodies_mut()[0].vel = Vector3::new(0.0, -2.0, 0.0);
    s.step(&mut exact_lcp).unwrap();
    let prov = s.last_instance().unwrap().provenance();
    assert_eq!(prov.parameters["restitution"], "0.5");
    assert_eq!(prov.parameters["restitution_threshold"], "0.01");
    assert_eq!(prov.parameters["impacts"], "1");
    // the rebound: v_n(t+h) = -e v_n(t)
    assert!((s.world().bodies[0].vel.y - 1.0).abs() < 1e-12);
    let mut s = ball_over_floor(0.0, params(1e-3, G, 0.0));
    s.step(&mut exact_lcp).unwrap();
    let prov = s.last_instance().unwrap().provenance();
    for k in [
        "restitution",
        "restitution_threshold",
        "impacts",
        "impact_law",
    ] {
        assert!(!prov.parameters.contains_key(k), "{k} recorded with e = 0");
    }
}

/// Out-of-range coefficients are typed errors, not panics.
#[test]
fn invalid_restitution_is_rejected() {
    for (e, thr) in [(1.5, 1e-2), (-0.1, 1e-2), (f64::NAN, 1e-2), (0.5, -1.0)] {
        let p = SimParams {
            restitution_threshold: thr,
            ..params(1e-3, G, e)
        };
        let err = p.validate().unwrap_err().to_string();
        assert!(err.contains("restitution"), "{err}");
    }
}
