//! Planar discs and FyDiK2D bonds (`cpbench_granular::planar`): a disc resting on a floor
//! (impulse `m g h` per step), Coulomb friction on an incline (sticking, rolling, sliding
//! against the analytic accelerations), momentum and angular momentum in a collision, a bond as
//! a spring (period `2 pi sqrt(mu_red / k_n)`) and its breakage, a cantilever of bending
//! springs against the exact discrete static deflection (and Euler-Bernoulli's `q L^4 / 8 EI`),
//! the assembled `N = D^T M^-1 D` and `r = b + D^T v_free` against the Jacobian built apart,
//! and the two scenes: discs leave the hopper through its orifice; the struck beam breaks near
//! the impact, keeps its ends bonded and loses energy.
//!
//! The contact problems are solved by a block Gauss-Seidel with the exact solution of each
//! 2 x 2 cone block (interior point of the block QP or the best point on either edge ray of
//! the cone), run to a change of 1e-15 relative: the numbers below are the scheme's.

use cpbench_granular::nalgebra::{DMatrix, DVector, Vector2};
use cpbench_granular::planar::bonds::BondSet;
use cpbench_granular::planar::{
    BeamImpactParams, Disc, DiscHopperParams, PlanarParams, PlanarPartner, PlanarSceneKind,
    PlanarSimulation, Wall,
};
use cpbench_granular::ContactSolution;
use cpbench_problems::instance::Instance;
use cpbench_problems::ProblemClass;
use std::collections::BTreeMap;

const G: f64 = 9.81;

/// Exact minimiser of `1/2 x^T A x + b^T x` over `{|x_t| <= mu x_n}` (2-D) or `x >= 0` (1-D).
fn block_solve(a: &[[f64; 2]; 2], b: &[f64; 2], mu: f64, bs: usize) -> [f64; 2] {
    if bs == 1 {
        return [(-b[0] / a[0][0]).max(0.0), 0.0];
    }
    let f = |x: [f64; 2]| {
        0.5 * (x[0] * (a[0][0] * x[0] + a[0][1] * x[1]) + x[1] * (a[1][0] * x[0] + a[1][1] * x[1]))
            + b[0] * x[0]
            + b[1] * x[1]
    };
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    if det > 0.0 {
        let x = [
            -(a[1][1] * b[0] - a[0][1] * b[1]) / det,
            -(-a[1][0] * b[0] + a[0][0] * b[1]) / det,
        ];
        if x[0] >= 0.0 && x[1].abs() <= mu * x[0] {
            return x;
        }
    }
    let mut best = [0.0, 0.0];
    let mut fbest = 0.0;
    for s in [1.0, -1.0] {
        let d = [1.0, s * mu];
        let dad = f(d) - b[0] * d[0] - b[1] * d[1];
        let bd = b[0] * d[0] + b[1] * d[1];
        let t = (-bd / (2.0 * dad)).max(0.0);
        let x = [t * d[0], t * d[1]];
        if f(x) < fbest {
            fbest = f(x);
            best = x;
        }
    }
    best
}

/// Block Gauss-Seidel with exact block solves, from the warm start, until no unknown changes
/// by more than `1e-15` of the largest (or `max_sweeps`).
fn gs(inst: &Instance, warm: Option<&[f64]>, max_sweeps: usize) -> ContactSolution {
    let n = inst.n();
    let bs = inst.constraints().block_size();
    let mu: Vec<f64> = match inst.constraints().friction() {
        Some(m) => m.to_vec(),
        None => vec![0.0; n / bs],
    };
    let m = inst.csc();
    let r = inst.r();
    let mut x = warm.map_or(vec![0.0; n], <[f64]>::to_vec);
    let mut sweeps = 0;
    for _ in 0..max_sweeps {
        sweeps += 1;
        let mut change = 0.0f64;
        let mut big = 0.0f64;
        for c in 0..n / bs {
            let mut a = [[0.0; 2]; 2];
            let mut b = [0.0; 2];
            for p in 0..bs {
                let i = bs * c + p;
                b[p] = r[i];
                let (rows, vals) = m.col(i); // symmetric: column i = row i
                for (&k, &v) in rows.iter().zip(vals) {
                    if k / bs == c {
                        a[p][k - bs * c] = v;
                    } else {
                        b[p] += v * x[k];
                    }
                }
            }
            let y = block_solve(&a, &b, mu[c], bs);
            for p in 0..bs {
                change = change.max((y[p] - x[bs * c + p]).abs());
                x[bs * c + p] = y[p];
                big = big.max(y[p].abs());
            }
        }
        if change <= 1e-15 * big.max(1e-300) {
            break;
        }
    }
    ContactSolution {
        gamma: x,
        iterations: sweeps as u64,
        residual: f64::NAN,
        converged: true,
        solver_time: None,
    }
}

fn exact(inst: &Instance, warm: Option<&[f64]>) -> Result<ContactSolution, String> {
    Ok(gs(inst, warm, 100_000))
}

fn sweeps_300(inst: &Instance, warm: Option<&[f64]>) -> Result<ContactSolution, String> {
    Ok(gs(inst, warm, 300))
}

fn sim(
    discs: Vec<Disc>,
    walls: Vec<Wall>,
    bonds: BondSet,
    params: PlanarParams,
) -> PlanarSimulation {
    PlanarSimulation::new(discs, walls, bonds, params, "test", BTreeMap::new(), None).unwrap()
}

fn disc(x: f64, y: f64, r: f64, m: f64) -> Disc {
    Disc::new(Vector2::new(x, y), r, m).unwrap()
}

#[test]
fn resting_disc_normal_impulse_is_m_g_h() {
    let (m, r, h) = (2.0, 0.1, 1e-3);
    for frictionless in [false, true] {
        let p = PlanarParams {
            h,
            frictionless,
            ..Default::default()
        };
        let mut s = sim(
            vec![disc(0.3, r, r, m)],
            vec![Wall::floor(0.0)],
            BondSet::new(),
            p,
        );
        for _ in 0..20 {
            let rep = s.step(&mut exact).unwrap();
            assert_eq!(rep.core.contacts, 1);
            let g = s.last_impulses();
            let inst = s.last_instance().unwrap();
            if frictionless {
                assert_eq!(inst.class(), ProblemClass::Lcp);
                assert_eq!(g.len(), 1);
            } else {
                assert_eq!(inst.class(), ProblemClass::Ccp);
                assert_eq!(inst.constraints().cone_dim(), Some(2));
                assert!(g[1].abs() <= 1e-15, "{g:?}");
            }
            assert!((g[0] - m * G * h).abs() <= 1e-8 * m * G * h, "{g:?}");
            assert!((s.discs()[0].pos.y - r).abs() < 1e-15);
            assert!(s.discs()[0].vel.norm() < 1e-15);
        }
    }
}

/// A disc on the floor `y >= 0` under gravity tilted by `a` (a slope descending towards +x):
/// returns the acceleration along the slope and the angular acceleration, measured between
/// steps 100 and 300 (`h = 1e-3`), and the final slip velocity `v + omega R`.
fn incline(a_deg: f64, mu: f64, rotates: bool) -> (f64, f64, f64) {
    let (m, r, h) = (1.0, 0.05, 1e-3);
    let a = a_deg.to_radians();
    let p = PlanarParams {
        h,
        mu,
        gravity: Vector2::new(G * a.sin(), -G * a.cos()),
        ..Default::default()
    };
    let mut d = disc(0.0, r, r, m);
    d.rotates = rotates;
    let mut s = sim(vec![d], vec![Wall::floor(0.0)], BondSet::new(), p);
    let mut v = Vec::new();
    for _ in 0..300 {
        s.step(&mut exact).unwrap();
        let d = &s.discs()[0];
        v.push((d.vel.x, d.omega));
    }
    let dt = 200.0 * h;
    let d = &s.discs()[0];
    eprintln!(
        "incline {a_deg} deg, rotates {rotates}: acceleration {:.6}, angular {:.4}, slip {:e}, \
         height {:e}",
        (v[299].0 - v[99].0) / dt,
        (v[299].1 - v[99].1) / dt,
        d.vel.x + d.omega * r,
        d.pos.y - r
    );
    (
        (v[299].0 - v[99].0) / dt,
        (v[299].1 - v[99].1) / dt,
        d.vel.x + d.omega * r,
    )
}

#[test]
fn incline_sticks_rolls_and_slides_as_coulomb_says() {
    let mu = 0.3;
    // a disc that cannot rotate: sticks below the friction angle (tan 10 deg = 0.176 < 0.3)
    let (acc, _, slip) = incline(10.0, mu, false);
    assert!(acc.abs() < 1e-10 && slip.abs() < 1e-10, "{acc} {slip}");
    // ... and slides above it with g (sin a - mu cos a)
    let a = 30f64.to_radians();
    let (acc, _, _) = incline(30.0, mu, false);
    let want = G * (a.sin() - mu * a.cos());
    assert!((acc - want).abs() < 0.01 * want, "{acc} vs {want}");
    // measured 2.356287 against 2.356271 (the CCP relaxation lifts the disc by mu |v| h)
    assert!((acc - want).abs() < 1e-4 * want, "{acc} vs {want}");
    // a solid disc rolls without slipping for tan a <= 3 mu: acceleration 2/3 g sin a
    let (acc, alpha, slip) = incline(30.0, mu, true);
    let want = 2.0 / 3.0 * G * a.sin();
    assert!((acc - want).abs() < 0.01 * want, "{acc} vs {want}");
    assert!((alpha + acc / 0.05).abs() < 0.01 * acc / 0.05, "{alpha}");
    assert!(slip.abs() < 1e-9, "{slip}");
    // and slides (while spinning up at 2 mu g cos a / R) beyond: tan 50 deg = 1.19 > 0.9
    let a = 50f64.to_radians();
    let (acc, alpha, slip) = incline(50.0, mu, true);
    let want = G * (a.sin() - mu * a.cos());
    assert!((acc - want).abs() < 0.01 * want, "{acc} vs {want}");
    let want_alpha = -2.0 * mu * G * a.cos() / 0.05;
    assert!(
        (alpha - want_alpha).abs() < 0.01 * want_alpha.abs(),
        "{alpha} vs {want_alpha}"
    );
    assert!(slip > 0.1, "{slip}");
}

#[test]
fn oblique_collision_conserves_momentum_and_angular_momentum() {
    let p = PlanarParams {
        h: 1e-3,
        gravity: Vector2::zeros(),
        mu: 0.3,
        ..Default::default()
    };
    let mut a = disc(0.0, 0.0, 0.1, 1.0);
    let mut b = disc(0.2505, 0.04, 0.15, 3.0);
    a.vel = Vector2::new(2.0, 0.1);
    a.omega = 5.0;
    b.vel = Vector2::new(-1.0, 0.0);
    b.omega = -2.0;
    let mut s = sim(vec![a, b], Vec::new(), BondSet::new(), p);
    let ang = |s: &PlanarSimulation| -> f64 {
        s.discs()
            .iter()
            .map(|d| d.mass * (d.pos.x * d.vel.y - d.pos.y * d.vel.x) + d.inertia * d.omega)
            .sum()
    };
    let p0 = s.momentum();
    let l0 = ang(&s);
    let mut touched = 0;
    for _ in 0..60 {
        let rep = s.step(&mut exact).unwrap();
        if rep.core.contacts > 0 && s.last_impulses()[0] > 0.0 {
            touched += 1;
        }
        let pm = s.momentum();
        assert!((pm - p0).norm() <= 1e-12 * p0.norm(), "{pm:?} vs {p0:?}");
        assert!(
            (ang(&s) - l0).abs() <= 1e-12 * l0.abs().max(1.0),
            "{} vs {l0}",
            ang(&s)
        );
    }
    assert!(touched >= 1);
    // they separate after the (inelastic) impact: the normal relative velocity is >= 0
    let d = s.discs();
    let n = (d[1].pos - d[0].pos).normalize();
    assert!((d[1].vel - d[0].vel).dot(&n) >= -1e-12);
    assert!(s.kinetic_energy() < 0.5 * (1.0 * 4.01 + 3.0) + 0.5 * (25.0 * 0.005 + 4.0 * 0.03375));
}

/// Two bonded discs (masses 1 and 2, no gravity) stretched by `dx` from rest length 1.
fn spring_pair(dx: f64, strain_max: f64, h: f64) -> PlanarSimulation {
    let discs = vec![disc(0.0, 0.0, 0.1, 1.0), disc(1.0, 0.0, 0.1, 2.0)];
    let mut bonds = BondSet::new();
    bonds.add_bond(&discs, 0, 1, 100.0, strain_max).unwrap();
    let p = PlanarParams {
        h,
        gravity: Vector2::zeros(),
        ..Default::default()
    };
    let mut s = sim(discs, Vec::new(), bonds, p);
    s.discs_mut()[1].pos.x += dx;
    s
}

#[test]
fn bond_oscillates_with_the_spring_period_and_breaks_beyond_its_strain() {
    let h = 1e-4;
    let mut s = spring_pair(0.01, f64::INFINITY, h);
    let period = 2.0 * std::f64::consts::PI * (2.0f64 / 3.0 / 100.0).sqrt();
    let e0 = s.bond_energy() + s.kinetic_energy();
    assert!((e0 - 0.5 * 100.0 * 1e-4).abs() < 1e-15);
    let mut prev = 0.01;
    let mut ups = Vec::new();
    for k in 1..=16_000 {
        s.step(&mut exact).unwrap();
        let x = s.bonds().bonds()[0].length(s.discs()) - 1.0;
        if prev < 0.0 && x >= 0.0 {
            ups.push((k as f64 - 1.0 + prev / (prev - x)) * h);
        }
        prev = x;
        let e = s.bond_energy() + s.kinetic_energy();
        assert!((e - e0).abs() < 2e-3 * e0, "energy {e} vs {e0}");
        assert!(s.momentum().norm() < 1e-13);
    }
    assert!(ups.len() >= 2);
    for w in ups.windows(2) {
        let t = w[1] - w[0];
        eprintln!("bond period {t} vs {period}: {:e}", t / period - 1.0);
        assert!((t - period).abs() < 0.01 * period, "{t} vs {period}");
        // measured: -6.3e-8 relative (symplectic Euler, omega h = 0.012)
        assert!((t - period).abs() < 1e-6 * period, "{t} vs {period}");
    }
    // strain 0.01 > 0.005: breaks after the first step, for good
    let mut s = spring_pair(0.01, 0.005, h);
    assert_eq!(s.bonds().live_bonds(), 1);
    let rep = s.step(&mut exact).unwrap();
    assert_eq!((rep.bonds, rep.broken_bonds), (0, 1));
    let v = s.discs()[1].vel;
    for _ in 0..10 {
        s.step(&mut exact).unwrap();
    }
    assert_eq!(s.discs()[1].vel, v);
    assert_eq!(s.bonds().live_bonds(), 0);
    // strain 0.01 < 0.02: stays
    let mut s = spring_pair(0.01, 0.02, h);
    for _ in 0..100 {
        s.step(&mut exact).unwrap();
    }
    assert_eq!(s.bonds().live_bonds(), 1);
}

/// A cantilever of `nodes` discs (spacing 0.02 m, 0.01 kg each, radius 0.01), nodes 0 and 1
/// fixed, normal bonds `k_n = 1e4` and bending springs `k_b` at nodes 1 .. nodes-2, settled
/// under gravity with damping 130 1/s: (simulated tip deflection, exact discrete deflection,
/// Euler-Bernoulli `q L^4 / (8 EI)` with `q = m g / a`, `EI = k_b a`, `L = (nodes - 2) a`).
fn cantilever(nodes: usize, k_b: f64) -> (f64, f64, f64) {
    let (a, m) = (0.02, 0.01);
    let mut discs: Vec<Disc> = (0..nodes)
        .map(|k| disc(k as f64 * a, 0.0, 0.5 * a, m))
        .collect();
    discs[0].fixed = true;
    discs[1].fixed = true;
    let mut bonds = BondSet::new();
    for k in 0..nodes - 1 {
        bonds
            .add_bond(&discs, k, k + 1, 1e4, f64::INFINITY)
            .unwrap();
    }
    for k in 1..nodes - 1 {
        bonds
            .add_bending(&discs, k - 1, k, k_b, f64::INFINITY)
            .unwrap();
    }
    let p = PlanarParams {
        h: 2e-5,
        damping: 130.0,
        ..Default::default()
    };
    let mut s = sim(discs, Vec::new(), bonds, p);
    for _ in 0..25_000 {
        let rep = s.step(&mut exact).unwrap();
        assert_eq!(rep.core.contacts, 0);
    }
    let tip = -s.discs()[nodes - 1].pos.y;
    // exact small-deflection statics: M_j = sum_{k > j} m g (x_k - x_j), theta_j = M_j / k_b,
    // tip deflection = sum_j theta_j (x_tip - x_j), joints j = 1 .. nodes-2
    let x = |k: usize| k as f64 * a;
    let mut exact_d = 0.0;
    for j in 1..nodes - 1 {
        let mj: f64 = (j + 1..nodes).map(|k| m * G * (x(k) - x(j))).sum();
        exact_d += mj / k_b * (x(nodes - 1) - x(j));
    }
    let l = (nodes - 2) as f64 * a;
    let eb = (m * G / a) * l.powi(4) / (8.0 * k_b * a);
    (tip, exact_d, eb)
}

#[test]
fn cantilever_deflects_as_the_discrete_beam_and_close_to_euler_bernoulli() {
    let k_b = 168.0;
    let (t1, d1, eb1) = cantilever(11, k_b);
    let (t2, d2, eb2) = cantilever(21, k_b);
    eprintln!(
        "cantilever 11: {t1:e} (exact {d1:e}, EB {eb1:e}); 21: {t2:e} (exact {d2:e}, EB {eb2:e})"
    );
    assert!((t1 - d1).abs() < 0.01 * d1, "{t1} vs {d1}");
    assert!((t2 - d2).abs() < 0.01 * d2, "{t2} vs {d2}");
    // Euler-Bernoulli (EI = k_b a, q = m g / a): the lumped chain is stiffer-loaded by
    // O(1/segments) (measured 1.408 x with 9 segments, 1.184 x with 19: the excess 0.408 ->
    // 0.184 falls as 1 / segments), and the deflection grows from 9 to 19 segments by 16.70
    // (the discrete formula's ratio) against L^4's (19 / 9)^4 = 19.86
    let (x1, x2) = (t1 / eb1 - 1.0, t2 / eb2 - 1.0);
    assert!(
        (x1 - 0.408).abs() < 0.005 && (x2 - 0.184).abs() < 0.005,
        "{x1} {x2}"
    );
    assert!((x1 / x2 - 19.0 / 9.0).abs() < 0.15, "{x1} {x2}");
    let ratio = t2 / t1;
    assert!((ratio - d2 / d1).abs() < 0.01 * d2 / d1, "{ratio}");
    assert!((ratio - 16.70).abs() < 0.05, "{ratio}");
    assert!(
        ratio < (19.0f64 / 9.0).powi(4) && ratio > (19.0f64 / 9.0).powi(3),
        "{ratio}"
    );
}

/// `N = D^T M^-1 D` (exactly symmetric, positive diagonal) and `r = b + D^T v_free` against
/// the Jacobian built apart, for the instance of the current state of `s` (built without
/// moving anything).
fn check_instance(s: &mut PlanarSimulation) {
    let before: Vec<Disc> = s.discs().to_vec();
    assert!(s.build_instance().unwrap().is_some());
    assert_eq!(s.discs(), &before[..]);
    let s = &*s;
    let inst = s.last_instance().unwrap();
    assert_eq!(inst.class(), ProblemClass::Ccp);
    assert_eq!(inst.constraints().cone_dim(), Some(2));
    assert!(inst.provenance().symmetrized_from.is_none());
    assert!(inst.is_symmetric());
    let n = inst.n();
    let nm = inst.csc();
    for i in 0..n {
        assert!(nm.get(i, i) > 0.0, "N[{i},{i}] = {}", nm.get(i, i));
        for j in 0..n {
            assert_eq!(nm.get(i, j), nm.get(j, i));
        }
    }
    // the grid's contacts are every pair (and disc-wall) within the envelope, by brute force
    let env = s.envelope();
    let nd = s.discs().len();
    let mut want_pairs = Vec::new();
    for (i, a) in s.discs().iter().enumerate() {
        for (j, b) in s.discs().iter().enumerate().skip(i + 1) {
            let gap = (b.pos - a.pos).norm() - a.radius - b.radius;
            if gap < env && !(a.fixed && b.fixed) && !s.bonds().bonded(i, j) {
                want_pairs.push((i.min(j), i.max(j)));
            }
        }
        if a.fixed {
            continue;
        }
        for (k, w) in s.walls().iter().enumerate() {
            let gap = match w {
                Wall::HalfPlane { normal, offset } => normal.dot(&a.pos) - offset - a.radius,
                Wall::Segment { a: p, b: q } => {
                    let t = ((a.pos - p).dot(&(q - p)) / (q - p).norm_squared()).clamp(0.0, 1.0);
                    (p + t * (q - p) - a.pos).norm() - a.radius
                }
            };
            if gap < env {
                want_pairs.push((i, nd + k));
            }
        }
    }
    let mut got: Vec<(usize, usize)> = s
        .contacts()
        .iter()
        .map(|c| match c.b {
            PlanarPartner::Disc(j) => (c.a.min(j), c.a.max(j)),
            PlanarPartner::Wall(k) => (c.a, nd + k),
        })
        .collect();
    got.sort_unstable();
    want_pairs.sort_unstable();
    assert_eq!(got, want_pairs);
    let d = s.jacobian().unwrap();
    let dd = DMatrix::from_fn(d.nrows(), d.ncols(), |i, j| d.get(i, j));
    let minv = DMatrix::from_diagonal(&DVector::from_vec(s.mass_inverse_diagonal()));
    let want = dd.transpose() * minv * &dd;
    let scale = want.amax();
    for i in 0..n {
        for j in 0..n {
            assert!((nm.get(i, j) - want[(i, j)]).abs() <= 1e-12 * scale);
        }
    }
    let vf = DVector::from_iterator(
        3 * s.discs().len(),
        s.free_velocity().iter().flatten().copied(),
    );
    let dv = dd.transpose() * vf;
    let h = s.params().h;
    for (c, ct) in s.contacts().iter().enumerate() {
        let rn = ct.gap / h + dv[2 * c];
        let rt = dv[2 * c + 1];
        assert!((inst.r()[2 * c] - rn).abs() <= 1e-12 * (1.0 + rn.abs()));
        assert!((inst.r()[2 * c + 1] - rt).abs() <= 1e-12 * (1.0 + rt.abs()));
    }
}

/// The disc hopper's parameters with `n` discs, the defaults otherwise.
fn hopper(n: usize) -> DiscHopperParams {
    DiscHopperParams {
        n,
        ..Default::default()
    }
}

/// The impact beam's parameters with `n` discs a row, the defaults otherwise.
fn beam(n: usize) -> BeamImpactParams {
    BeamImpactParams {
        n,
        ..Default::default()
    }
}

#[test]
fn disc_hopper_discs_leave_through_the_orifice() {
    let hp = hopper(60);
    let mut s = hp.build(7).unwrap().into_simulation().unwrap();
    assert_eq!(s.label(), "disc-hopper-60");
    let below = |s: &PlanarSimulation| s.discs().iter().filter(|d| d.pos.y < 0.0).count();
    let mut counts = Vec::new();
    let mut max_pen = 0.0f64;
    let mut checked = false;
    for k in 1..=400 {
        let rep = s.step(&mut sweeps_300).unwrap();
        max_pen = max_pen.max(rep.core.max_penetration);
        if k % 50 == 0 {
            counts.push(below(&s));
        }
        if k == 300 {
            assert!(rep.core.contacts > 20, "{}", rep.core.contacts);
            check_instance(&mut s);
            checked = true;
        }
    }
    eprintln!("disc-hopper-60 below the orifice every 50 steps: {counts:?}; max pen {max_pen:e}");
    assert!(checked);
    assert_eq!(counts[0], 0);
    assert!(*counts.last().unwrap() >= 10, "{counts:?}");
    assert!(counts.windows(2).all(|w| w[1] >= w[0]), "{counts:?}");
    // no disc passes through a wall or the floor
    for d in s.discs() {
        assert!(d.pos.y > -0.3, "{:?}", d.pos);
    }
    assert!(max_pen < 0.1 * hp.r_min, "{max_pen}");
}

#[test]
fn beam_impact_breaks_bonds_near_the_impact_keeps_the_ends_and_loses_energy() {
    let bp = beam(20);
    let mut s = bp.build(3).unwrap().into_simulation().unwrap();
    let nb = s.bonds().bonds().len();
    // rows 3 x 19, columns 2 x 20, diagonals 2 x 2 x 19
    assert_eq!(nb, 57 + 40 + 76);
    assert_eq!(s.bonds().bending().len(), 3 * 18 + 20);
    let e = |s: &PlanarSimulation| s.kinetic_energy() + s.bond_energy() + s.gravity_energy();
    let e0 = e(&s);
    let mut checked = false;
    for k in 1..=400 {
        let rep = s.step(&mut exact).unwrap();
        if rep.core.contacts > 0 && !checked && k > 20 {
            check_instance(&mut s);
            checked = true;
        }
    }
    let broken = s.bonds().broken_bonds();
    eprintln!(
        "beam-impact-20: {broken} of {nb} bonds broken after 400 steps, energy {:e} -> {:e}",
        e0,
        e(&s)
    );
    let cols: Vec<(usize, usize, usize, usize)> = s
        .bonds()
        .bonds()
        .iter()
        .filter(|b| b.broken)
        .map(|b| (b.i % bp.n, b.i / bp.n, b.j % bp.n, b.j / bp.n))
        .collect();
    eprintln!("broken (col, row) pairs: {cols:?}");
    assert!(checked);
    // measured: 18 of 173 (seed 3), 17 of them in columns 8 .. 11 and one (2, 3) in the top row
    assert!((10..=30).contains(&broken), "{broken}");
    // a crack at mid-span (columns 9 and 10 of 0 .. 19)
    let mid = |c: usize| (8..=11).contains(&c);
    assert!(
        cols.iter().any(|&(c1, _, c2, _)| mid(c1) && mid(c2)),
        "{cols:?}"
    );
    // the overhangs at the supports (columns 0, 1 and 18, 19) stay bonded and unstretched
    let end = |c: usize| c < 2 || c >= bp.n - 2;
    for b in s.bonds().bonds() {
        if end(b.i % bp.n) && end(b.j % bp.n) {
            assert!(!b.broken, "({}, {})", b.i, b.j);
            assert!(b.strain(s.discs()) < bp.strain_max);
        }
    }
    assert!(e(&s) < e0, "{} vs {e0}", e(&s));
}

#[test]
fn bad_input_is_a_typed_error() {
    assert!(PlanarSceneKind::parse("fill").is_err());
    assert_eq!(
        PlanarSceneKind::parse("beam-impact").unwrap(),
        PlanarSceneKind::BeamImpact
    );
    assert!(hopper(0).build(1).is_err());
    let narrow = DiscHopperParams {
        orifice: 0.01,
        ..Default::default()
    };
    assert!(narrow.build(1).is_err());
    assert!(beam(3).build(1).is_err());
    // h beyond 0.2 sqrt(m / k_n) = 2.8e-5 s: the explicit springs would be unstable
    let stiff = BeamImpactParams {
        h: 3e-5,
        ..Default::default()
    };
    assert!(stiff.build(1).is_err());
    assert!(PlanarSceneKind::DiscHopper.build(5, 1, false).is_ok());
    let d = vec![disc(0.0, 0.0, 0.1, 1.0), disc(0.2, 0.0, 0.1, 1.0)];
    let mut b = BondSet::new();
    assert!(b.add_bond(&d, 0, 0, 1.0, 0.1).is_err());
    assert!(b.add_bond(&d, 0, 2, 1.0, 0.1).is_err());
    assert!(b.add_bond(&d, 0, 1, -1.0, 0.1).is_err());
    assert!(b.add_bond(&d, 0, 1, 1.0, f64::NAN).is_err());
    let i = b.add_bond(&d, 0, 1, 1.0, 0.1).unwrap();
    assert!(b.add_bending(&d, i, i, 1.0, 0.1).is_err());
    // whether a simulation of `discs` and `walls` without bonds under `p` is refused
    let refused = |discs: Vec<_>, walls: Vec<Wall>, p: PlanarParams| {
        PlanarSimulation::new(discs, walls, BondSet::new(), p, "x", BTreeMap::new(), None).is_err()
    };
    let p = PlanarParams {
        h: 0.0,
        ..Default::default()
    };
    assert!(refused(d.clone(), vec![], p));
    let mut bad = d.clone();
    bad[0].radius = -1.0;
    assert!(refused(bad, vec![], PlanarParams::default()));
    let seg = Wall::Segment {
        a: Vector2::zeros(),
        b: Vector2::zeros(),
    };
    assert!(refused(d, vec![seg], PlanarParams::default()));
}
