//! The robotics formulations of friction (`cpbench_problems::derive`, docs/formulation.md
//! "Robotics formulations"): the Stewart-Trinkle / Anitescu-Potra pyramid LCP against the
//! analytic Coulomb answer of a sliding contact, the boxed LCP's residuals, every frictional
//! fixture read as `lcp-pyramid:4` and `blcp`, bundle / npz round trips, `--class` parsing.

use cpbench_problems::derive::{FrictionPyramid, DEFAULT_PYRAMID_K};
use cpbench_problems::io::{self, load, read_bundle, write_bundle, ClassChoice, LoadOptions};
use cpbench_problems::{
    residuals, ConstraintSet, CscMatrix, Instance, ProblemClass, ProblemError, Provenance,
    ValidationOptions,
};
use cpbench_test_support::fixtures;
use std::f64::consts::PI;

/// One contact with `W = diag(w_n, w_t, w_t)` (a ball on a plane: mass 1, radius 1, solid
/// sphere `I = 2/5`: `w_n = 1/m = 1`, `w_t = 1/m + R^2/I = 3.5`), `q`, `mu`, as a CCP.
fn ball(q: [f64; 3], mu: f64) -> Instance {
    let w = CscMatrix::from_triplets(3, 3, &[(0, 0, 1.0), (1, 1, 3.5), (2, 2, 3.5)]).unwrap();
    Instance::new(
        "ball__ccp",
        w,
        q.to_vec(),
        ConstraintSet::coulomb(vec![mu]),
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

/// The closest point to `p` of the segment `[a, b]` and its parameter `t` (`(1 - t) a + t b`).
fn closest_on_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> ([f64; 2], f64) {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let t = (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
    ([a[0] + t * dx, a[1] + t * dy], t)
}

/// The pyramid LCP's solution of the one-contact ball problem, derived by hand (not by a
/// solver): `c_n = -q_n / w_n` (`u_n = 0`); the friction force `f` minimises
/// `1/2 w_t |f|^2 + q_t . f` over the polygon `P = conv(mu c_n d_j)`, i.e. `f = P_P(-q_t / w_t)`,
/// the closest point of `P`'s boundary when `-q_t / w_t` lies outside (sliding); `f` on the edge
/// `(v_j, v_j+1)` is `beta_j = (1 - t) mu c_n`, `beta_j+1 = t mu c_n`; `lambda = max_j -d_j . u_t`
/// (the sliding speed in the polygon's dual norm). Returns `z` (length `k + 2`) and `f`.
fn pyramid_by_hand(p: &FrictionPyramid, q: [f64; 3], mu: f64) -> (Vec<f64>, [f64; 2]) {
    let (wn, wt) = (1.0, 3.5);
    let cn = -q[0] / wn;
    let rad = mu * cn;
    let target = [-q[1] / wt, -q[2] / wt];
    let d = p.directions();
    let k = d.len();
    let mut best = (f64::INFINITY, 0, 0.0, [0.0; 2]);
    for j in 0..k {
        let (a, b) = (d[j], d[(j + 1) % k]);
        let (f, t) = closest_on_segment(target, [rad * a[0], rad * a[1]], [rad * b[0], rad * b[1]]);
        let dist = (f[0] - target[0]).hypot(f[1] - target[1]);
        if dist < best.0 {
            best = (dist, j, t, f);
        }
    }
    let (_, j, t, f) = best;
    let mut z = vec![0.0; k + 2];
    z[0] = cn;
    z[1 + j] += (1.0 - t) * rad;
    z[1 + (j + 1) % k] += t * rad;
    let ut = [q[1] + wt * f[0], q[2] + wt * f[1]];
    z[k + 1] = d
        .iter()
        .map(|dj| -(dj[0] * ut[0] + dj[1] * ut[1]))
        .fold(f64::NEG_INFINITY, f64::max);
    (z, f)
}

/// A sliding ball (`|q_t| / w_t = 0.571 > mu c_n = 0.3`): Coulomb's maximal dissipation gives
/// `f = -mu c_n q_t / |q_t|`; the pyramid LCP with `k` directions gives the closest point of the
/// inscribed `k`-gon. The hand-derived pyramid solution satisfies the derived LCP to rounding
/// (natural map `~1e-16`), and maps back to impulses whose friction is short along the sliding
/// direction by at most `1 - cos(pi / k) = O(1/k^2)`, turned by at most `pi / k`.
#[test]
fn sliding_contact_pyramid_converges_to_coulomb_as_k_grows() {
    let (mu, s, theta): (f64, f64, f64) = (0.3, 2.0, 0.3);
    let q = [-1.0, s * theta.cos(), s * theta.sin()];
    let inst = ball(q, mu);
    // Coulomb: c_n = 1, f = -0.3 (cos 0.3, sin 0.3), u_t = 0.95 (cos 0.3, sin 0.3)
    let f_coul = [-mu * theta.cos(), -mu * theta.sin()];
    let slide = [theta.cos(), theta.sin()];
    // (k, along-sliding shortfall 1 - (-f . e_theta) / (mu c_n), direction error (rad),
    // ||f - f_coulomb|| / ||f_coulomb||), measured by this test
    let expected = [
        (4, 4.466351087e-2, 3.000000000e-1, 2.988762649e-1),
        (8, 6.376611230e-2, 9.587737544e-2, 1.103325292e-1),
        (16, 4.293484017e-3, 9.269908170e-2, 9.266589467e-2),
        (32, 4.773082462e-3, 5.004224253e-3, 6.898297155e-3),
        (64, 1.499154605e-5, 5.475688726e-3, 5.475681885e-3),
    ];
    println!("k  | along shortfall | bound 1-cos(pi/k) | direction err | rel force err");
    for &(k, e_along, e_dir, e_rel) in &expected {
        let p = FrictionPyramid::new(k).unwrap();
        let lcp = inst.pyramid_lcp(k).unwrap();
        assert_eq!((lcp.n(), lcp.class()), (k + 2, ProblemClass::Lcp));
        let (z, f) = pyramid_by_hand(&p, q, mu);
        let res = residuals(&lcp, &z);
        assert!(
            res.nat_map_abs_2 < 1e-14 && res.complementarity < 1e-14 && res.dual_feas == 0.0,
            "k = {k}: {res:?}"
        );
        let gamma = p.impulse(&z).unwrap();
        assert!((gamma[0] - 1.0).abs() < 1e-15);
        assert!((gamma[1] - f[0]).abs() < 1e-15 && (gamma[2] - f[1]).abs() < 1e-15);
        let along = -(f[0] * slide[0] + f[1] * slide[1]) / mu;
        let shortfall = 1.0 - along;
        let dir = (f[1].atan2(f[0]) - f_coul[1].atan2(f_coul[0])).abs();
        let dir = dir.min(2.0 * PI - dir);
        let rel = (f[0] - f_coul[0]).hypot(f[1] - f_coul[1]) / mu;
        let bound = 1.0 - (PI / k as f64).cos();
        println!("{k:<3}| {shortfall:.6e}    | {bound:.6e}      | {dir:.6e}  | {rel:.6e}");
        assert!(shortfall >= -1e-15 && shortfall <= bound + 1e-15, "k = {k}");
        assert!(dir <= PI / k as f64 + 1e-15, "k = {k}");
        for (got, want) in [(shortfall, e_along), (dir, e_dir), (rel, e_rel)] {
            assert!((got - want).abs() < 1e-8 * want, "k = {k}: {got} vs {want}");
        }
    }
}

/// Over many sliding directions the shortfall of the friction force along the sliding
/// direction obeys `1 - cos(pi / k) <= pi^2 / (2 k^2)`, and the hand-derived point solves the
/// derived LCP to rounding at every angle.
#[test]
fn pyramid_shortfall_is_order_one_over_k_squared() {
    let mu = 0.3;
    for k in [3, 4, 5, 8, 16, 32, 64] {
        let p = FrictionPyramid::new(k).unwrap();
        let mut worst: f64 = 0.0;
        for i in 0..97 {
            let theta = 2.0 * PI * i as f64 / 97.0;
            let q = [-1.0, 2.0 * theta.cos(), 2.0 * theta.sin()];
            let lcp = ball(q, mu).pyramid_lcp(k).unwrap();
            let (z, f) = pyramid_by_hand(&p, q, mu);
            let res = residuals(&lcp, &z);
            assert!(
                res.nat_map_abs_2 < 1e-14,
                "k = {k}, theta = {theta}: {res:?}"
            );
            let along = -(f[0] * theta.cos() + f[1] * theta.sin()) / mu;
            worst = worst.max(1.0 - along);
        }
        let bound = 1.0 - (PI / k as f64).cos();
        assert!(worst <= bound + 1e-15, "k = {k}: {worst} > {bound}");
        assert!(worst * (k * k) as f64 <= PI * PI / 2.0, "k = {k}");
        // the bound is attained within a factor 2 (97 angles sample every facet)
        assert!(worst >= 0.5 * bound, "k = {k}: {worst} vs {bound}");
    }
}

/// The BLCP natural map `gamma_n - max(0, gamma_n - g_n)`,
/// `gamma_t - clamp(gamma_t - g_t, -mu gamma_n, mu gamma_n)`: zero at the BLCP's solution of the
/// sliding ball along a diagonal, where the box friction `(-mu, -mu) c_n` is `sqrt 2` times the
/// cone's; positive at the Coulomb solution, which is not a BLCP solution there.
#[test]
fn blcp_residuals_of_the_diagonal_slide() {
    let (mu, s): (f64, f64) = (0.3, 2.0);
    let q = [-1.0, s / 2f64.sqrt(), s / 2f64.sqrt()];
    let blcp = ball(q, mu).blcp().unwrap();
    assert_eq!(blcp.class(), ProblemClass::Blcp);
    assert_eq!(blcp.name(), "ball__blcp");
    assert_eq!(blcp.provenance().derivation, "blcp");
    assert!(!blcp.class().is_qp());
    // u = W gamma + q at gamma = (1, -0.3, -0.3): (0, 1.414 - 1.05, same) > 0 at the lower bounds
    let sol = [1.0, -mu, -mu];
    let res = residuals(&blcp, &sol);
    assert!(
        res.nat_map_abs_2 < 1e-15 && res.complementarity < 1e-15,
        "{res:?}"
    );
    assert_eq!((res.primal_feas, res.dual_feas), (0.0, 0.0));
    assert!(res.proj_grad_2 < 1e-15, "{res:?}");
    assert_eq!(res.fc3d_error, res.nat_map_rel_2);
    // Coulomb's answer gamma_t = -0.3 (1, 1)/sqrt 2 is strictly inside the box with u_t != 0:
    // natural map in t = clamp(gamma_t - u_t) - gamma_t = -0.3 + 0.3/sqrt2 each
    let c = -mu / 2f64.sqrt();
    let res = residuals(&blcp, &[1.0, c, c]);
    let e = (mu - mu / 2f64.sqrt()) * 2f64.sqrt();
    assert!((res.nat_map_abs_2 - e).abs() < 1e-14, "{res:?} vs {e}");
    // infeasible: tangent beyond the bound of the normal, and a negative normal
    let res = residuals(&blcp, &[1.0, 0.5, 0.0]);
    assert!((res.primal_feas - 0.2).abs() < 1e-15);
    let res = residuals(&blcp, &[-1.0, 0.0, 0.0]);
    assert_eq!(res.primal_feas, 1.0);
}

/// Every frictional fixture reads as `lcp-pyramid:4` (`6 nc` unknowns, a general LCP) and as
/// `blcp` (`3 nc`, same `W` and `q` as the Coulomb problem).
#[test]
fn every_frictional_fixture_reads_as_pyramid_and_blcp() {
    let f = fixtures();
    let mut files = Vec::new();
    for dir in ["fclib", "siconos-fc3d"] {
        for e in std::fs::read_dir(f.join(dir)).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    files.sort();
    assert_eq!(files.len(), 10);
    let opts = |class| LoadOptions {
        class,
        ..Default::default()
    };
    for path in &files {
        let coulomb = load(path, &opts(ClassChoice::Coulomb)).unwrap();
        let nc = coulomb.n() / 3;
        let stem = coulomb
            .name()
            .strip_suffix("__coulomb")
            .unwrap()
            .to_string();
        let pyr = load(path, &opts(ClassChoice::LcpPyramid { k: 4 })).unwrap();
        assert_eq!(pyr.n(), 6 * nc, "{}", path.display());
        assert_eq!(pyr.class(), ProblemClass::Lcp);
        assert!(!pyr.is_symmetric());
        assert_eq!(pyr.name(), format!("{stem}__lcp-pyramid-4"));
        assert_eq!(pyr.provenance().derivation, "lcp-pyramid:4");
        assert!(pyr.provenance().symmetrized_from.is_none());
        assert_eq!(pyr.provenance().parameters["contacts"], nc.to_string());
        assert_eq!(pyr.provenance().parameters["source_class"], "coulomb");
        // q_lcp: the normal entries are q_n, the lambda entries 0
        for c in 0..nc {
            assert_eq!(pyr.r()[6 * c], coulomb.r()[3 * c]);
            assert_eq!(pyr.r()[6 * c + 5], 0.0);
        }
        let blcp = load(path, &opts(ClassChoice::Blcp)).unwrap();
        assert_eq!((blcp.n(), blcp.class()), (3 * nc, ProblemClass::Blcp));
        assert_eq!(blcp.name(), format!("{stem}__blcp"));
        assert_eq!(blcp.r(), coulomb.r());
        assert_eq!(blcp.is_symmetric(), coulomb.is_symmetric());
        assert_eq!(
            blcp.constraints().friction(),
            coulomb.constraints().friction()
        );
        // the pyramid of the default k
        let d = load(path, &opts("lcp-pyramid".parse().unwrap())).unwrap();
        assert_eq!(d.n(), (DEFAULT_PYRAMID_K + 2) * nc);
    }
}

/// A BLCP and a pyramid LCP survive the bundle and npz round trips bit for bit (content hash),
/// the BLCP with its class; a bundle holding a CCP reads as its BLCP or pyramid LCP.
#[test]
fn blcp_and_pyramid_round_trips() {
    let path = fixtures().join("siconos-fc3d/Rover4396.dat");
    let dir = std::env::temp_dir().join(format!("cpbench-robotics-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for class in [ClassChoice::Blcp, ClassChoice::LcpPyramid { k: 5 }] {
        let inst = load(
            &path,
            &LoadOptions {
                class,
                ..Default::default()
            },
        )
        .unwrap();
        let b = dir.join(format!("b-{class}"));
        write_bundle(&inst, &b).unwrap();
        let back = read_bundle(&b, ValidationOptions::default()).unwrap();
        assert_eq!((back.hash(), back.class()), (inst.hash(), inst.class()));
        assert_eq!(back.constraints(), inst.constraints());
        assert_eq!(back.is_symmetric(), inst.is_symmetric());
        let z = dir.join(format!("z-{class}.npz").replace(':', "-"));
        io::npz::write_npz(&inst, &z).unwrap();
        let back = load(&z, &LoadOptions::default()).unwrap();
        assert_eq!((back.hash(), back.class()), (inst.hash(), inst.class()));
    }
    let json = std::fs::read_to_string(dir.join("b-blcp/instance.json")).unwrap();
    assert!(json.contains("\"class\": \"blcp\""), "{json}");
    // from a CCP bundle
    let nes = fixtures().join("siconos-fc3d/NESpheres_10_1.dat");
    let ccp = load(&nes, &LoadOptions::default()).unwrap();
    write_bundle(&ccp, &dir.join("ccp")).unwrap();
    for (class, n) in [
        (ClassChoice::Blcp, ccp.n()),
        (ClassChoice::LcpPyramid { k: 8 }, ccp.n() / 3 * 10),
    ] {
        let i = load(
            &dir.join("ccp"),
            &LoadOptions {
                class,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(i.n(), n, "{class}");
    }
    // the fclib writer refuses a BLCP (fclib has no friction boxes)
    let blcp = ccp.blcp().unwrap();
    let e = io::write_fclib(
        &blcp,
        &io::FclibInfo::for_instance(&blcp),
        &dir.join("x.hdf5"),
    );
    assert!(e.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--class` values: every spelling round-trips through `Display`; malformed ones are typed
/// errors naming the value and the defect; suite-file JSON reads the same names.
#[test]
fn class_choice_parsing() {
    for s in [
        "lcp",
        "ccp",
        "coulomb",
        "blcp",
        "lcp-pyramid:3",
        "lcp-pyramid:64",
    ] {
        let c: ClassChoice = s.parse().unwrap();
        assert_eq!(c.to_string(), s);
    }
    assert_eq!(
        "lcp-pyramid".parse::<ClassChoice>().unwrap(),
        ClassChoice::LcpPyramid { k: 4 }
    );
    for (bad, needle) in [
        ("lcp-pyramid:0", "k = 0"),
        ("lcp-pyramid:2", "k = 2"),
        ("lcp-pyramid:x", "must be an integer, found 'x'"),
        ("lcp-pyramid:", "must be an integer"),
        ("pyramid", "unknown class 'pyramid'"),
        ("blcp:4", "only lcp-pyramid takes a parameter"),
    ] {
        let e = bad.parse::<ClassChoice>().unwrap_err();
        assert!(
            matches!(&e, ProblemError::InvalidClass { value, .. } if value == bad),
            "{e:?}"
        );
        assert!(e.to_string().contains(needle), "{e}");
    }
    // JSON (suite files): the CLI spelling, the pyramid with its k
    let v: Vec<ClassChoice> =
        serde_json::from_str(r#"["ccp", "lcp", "coulomb", "blcp", "lcp-pyramid:8"]"#).unwrap();
    assert_eq!(v[4], ClassChoice::LcpPyramid { k: 8 });
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        r#"["ccp","lcp","coulomb","blcp","lcp-pyramid:8"]"#
    );
    assert!(serde_json::from_str::<ClassChoice>(r#""lcp-pyramid:1""#).is_err());
}

/// Physical fidelity (`cpbench_problems::fidelity`) of three answers of one sliding contact,
/// `W = I`, `q = (-1, 2, 1)`, `mu = 0.5`, derived by hand:
/// - Coulomb's answer `lambda = (1, -1/sqrt 5, -1/(2 sqrt 5))`: `u = (0, 2 - 1/sqrt 5, 1 -
///   1/(2 sqrt 5))`, sliding against the friction at full strength: every criterion 0;
/// - the CCP's answer `lambda = P_K(-q)`: `lambda_n = (1 + mu sqrt 5) / (1 + mu^2)`,
///   `lambda_T = -mu lambda_n (2, 1) / sqrt 5`; its velocity lies on the polar cone,
///   `u_n = mu ||u_T|| = lambda_n - 1 > 0`: the spurious normal velocity (force at a distance)
///   is `lambda_n - 1`, Signorini `lambda_n (lambda_n - 1)`, the MDP gap 0 (the friction still
///   opposes the slip at full strength), the De Saxce NCP `lambda . u + lambda_n mu ||u_T|| =
///   0 + lambda_n u_n`, equal to Signorini's here;
/// - a boxed answer at both corners, `lambda = (1, -0.5, -0.5)`: outside the cone by
///   `(sqrt 0.5 - 0.5) / sqrt 1.25`, dissipating more than the cone allows.
#[test]
fn fidelity_of_a_sliding_contact_coulomb_ccp_and_box() {
    use cpbench_problems::fidelity::fidelity_of;
    let (mu, s5) = (0.5, 5f64.sqrt());
    let q = [-1.0, 2.0, 1.0];
    let u_of = |l: &[f64; 3]| [l[0] + q[0], l[1] + q[1], l[2] + q[2]];
    // Coulomb
    let l = [1.0, -1.0 / s5, -0.5 / s5];
    let f = fidelity_of(&l, &u_of(&l), &[mu], 3);
    for (name, v) in cpbench_problems::Fidelity::NAMES.iter().zip(f.values()) {
        assert!(v.abs() < 1e-15, "Coulomb {name} = {v:e}");
    }
    // CCP
    let ln = (1.0 + mu * s5) / (1.0 + mu * mu);
    let l = [ln, -mu * ln * 2.0 / s5, -mu * ln / s5];
    let u = u_of(&l);
    let ut = u[1].hypot(u[2]);
    assert!((u[0] - mu * ut).abs() < 1e-15, "u on the polar cone");
    let f = fidelity_of(&l, &u, &[mu], 3);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-14 * b.abs().max(1.0);
    assert!(close(f.spurious_velocity, ln - 1.0), "{f:?}");
    assert!(close(f.signorini, ln * (ln - 1.0)), "{f:?}");
    assert!(f.mdp_gap < 1e-15 && f.cone_violation < 1e-15, "{f:?}");
    assert!(close(f.ncp_desaxce, ln * (ln - 1.0)), "{f:?}");
    // box corner
    let l = [1.0, -0.5, -0.5];
    let u = u_of(&l);
    let f = fidelity_of(&l, &u, &[mu], 3);
    assert!(
        close(f.cone_violation, (0.5f64.sqrt() - 0.5) / 1.25f64.sqrt()),
        "{f:?}"
    );
    let gap = -0.5 * u[1] - 0.5 * u[2] + mu * u[1].hypot(u[2]);
    assert!(gap < -1e-3 && close(f.mdp_gap, gap.abs()), "{f:?} {gap}");
    // a class without friction has no criteria
    let lcp = Instance::new(
        "l",
        CscMatrix::identity(2),
        vec![1.0, -1.0],
        ConstraintSet::NonNegative,
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap();
    assert!(cpbench_problems::fidelity(&lcp, &[0.0, 1.0])
        .signorini
        .is_nan());
}
