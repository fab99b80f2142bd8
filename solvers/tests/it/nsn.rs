//! The NCP functions of `nsn` (`cpbench_solvers::nsn::functions`): Jacobians against finite
//! differences, zeros at solutions, the Jordan-algebra square root and the Fischer-Burmeister
//! elements at the kinks.

use cpbench_solvers::nsn::functions::{
    det_squares, eval, fb_soc, from_spectrum, jordan_product, soc_sqrt, spectral_direction,
    Function, FB_ORIGIN,
};

const FUNCTIONS: [Function; 4] = [
    Function::AlartCurnier,
    Function::JeanMoreau,
    Function::NaturalMap,
    Function::FischerBurmeister,
];

/// Central differences of `F` in `r` and `u` against `A` and `B` at points away from the
/// kinks, for every function, sticking, sliding and separated, with `mu = 0.6` and `0`.
#[test]
fn jacobians_match_finite_differences() {
    let points: [([f64; 3], [f64; 3]); 4] = [
        ([1.0, 0.1, -0.2], [0.0, 0.05, 0.02]),   // sticking
        ([1.0, 0.3, 0.4], [-0.1, 0.5, 0.7]),     // sliding
        ([0.5, -0.2, 0.1], [0.3, -0.4, 0.25]),   // sliding, opening
        ([-0.2, 0.05, 0.02], [0.6, 0.01, -0.3]), // separated
    ];
    let h = 1e-7;
    for function in FUNCTIONS {
        for ((r, u), mu) in points.iter().flat_map(|&p| [(p, 0.6), (p, 0.0)]) {
            let rho = [0.7, 0.9];
            let (mut a, mut b, mut f) = ([0.0; 9], [0.0; 9], [0.0; 3]);
            eval(function, &r, &u, mu, rho, &mut f, Some((&mut a, &mut b)));
            for j in 0..3 {
                for (which, jac) in [(0, &a), (1, &b)] {
                    let (mut xp, mut xm) = ([r, u], [r, u]);
                    xp[which][j] += h;
                    xm[which][j] -= h;
                    let (mut fp, mut fm) = ([0.0; 3], [0.0; 3]);
                    eval(function, &xp[0], &xp[1], mu, rho, &mut fp, None);
                    eval(function, &xm[0], &xm[1], mu, rho, &mut fm, None);
                    for i in 0..3 {
                        let fd = (fp[i] - fm[i]) / (2.0 * h);
                        assert!(
                            (fd - jac[3 * i + j]).abs() < 1e-6,
                            "{function:?} at r {r:?}, u {u:?}, mu {mu}: d F_{i} / d {}_{j}: \
                             {fd} by differences, {} by the formula",
                            ["r", "u"][which],
                            jac[3 * i + j]
                        );
                    }
                }
            }
        }
    }
}

/// Every function vanishes at a sticking, a sliding and a separated solution of one
/// contact, and at a frictionless sliding and separated one (`mu = 0`).
#[test]
fn functions_vanish_at_solutions() {
    // sticking: r inside the cone, u = 0; sliding: r on the boundary opposing u_T, u_n = 0;
    // separated: r = 0, u_n > 0
    let rho = [1.3, 0.4];
    let slide_r = [2.0, -0.6, -0.8]; // ||r_T|| = 1 = mu r_n, along -(3, 4) / 5
    let slide_u = [0.0, 0.3, 0.4];
    let cases = [
        (0.5, [1.0, 0.2, -0.1], [0.0; 3]),
        (0.5, slide_r, slide_u),
        (0.5, [0.0; 3], [0.7, 0.3, -0.2]),
        (0.0, [1.5, 0.0, 0.0], [0.0, 0.3, -0.4]),
        (0.0, [0.0; 3], [0.7, 0.3, -0.2]),
    ];
    for function in FUNCTIONS {
        for (mu, r, u) in cases {
            let mut f = [1.0; 3];
            eval(function, &r, &u, mu, rho, &mut f, None);
            assert!(
                f.iter().all(|v| v.abs() < 1e-14),
                "{function:?} at r {r:?}, u {u:?}, mu {mu}: {f:?}"
            );
        }
    }
    // ... and the Fischer-Burmeister function does not vanish off the solutions: r outside
    // the cone, u~ outside the dual cone, or r . u~ != 0
    for (mu, r, u) in [
        (0.5, [1.0, 0.6, 0.0], [0.0; 3]),
        (0.5, [0.0; 3], [-0.1, 0.3, 0.4]),
        (0.5, [1.0, 0.0, 0.0], [0.2, 0.0, 0.0]),
        (0.0, [1.0, 0.1, 0.0], [0.0; 3]),
        (0.0, [1.0, 0.0, 0.0], [0.2, 0.0, 0.0]),
    ] {
        let mut f = [0.0; 3];
        eval(Function::FischerBurmeister, &r, &u, mu, rho, &mut f, None);
        assert!(f.iter().any(|v| v.abs() > 1e-3), "r {r:?}, u {u:?}: {f:?}");
    }
}

/// The Jordan-algebra square root: `sqrt(w) o sqrt(w) = w` and `sqrt(w) in L` for `w` in
/// the cone (interior, boundary, the axis, 0), and `sqrt(x o x) = x` for `x in L`.
#[test]
fn soc_sqrt_squares_back() {
    let ws = [
        [2.0, 0.3, -1.2],
        [5.0, 3.0, 4.0], // on the boundary
        [1.0, 0.0, 0.0],
        [3.0, -1e-9, 2e-9],
        [0.0; 3],
        [1e-3, 5e-4, 0.0],
    ];
    for w in ws {
        let z = soc_sqrt(w);
        let zz = jordan_product(z, z);
        for i in 0..3 {
            assert!(
                (zz[i] - w[i]).abs() < 1e-14 * w[0].max(1.0),
                "{w:?}: {zz:?}"
            );
        }
        assert!(z[1].hypot(z[2]) <= z[0] * (1.0 + 1e-15), "{w:?}: {z:?}");
    }
    for x in [[1.0, 0.3, 0.4], [2.0, 1.2, -1.6], [0.7, 0.0, 0.0]] {
        let z = soc_sqrt(jordan_product(x, x));
        for i in 0..3 {
            assert!((z[i] - x[i]).abs() < 1e-14, "{x:?}: {z:?}");
        }
    }
}

/// The Fischer-Burmeister elements at the kinks are the documented limits: at `x = y = 0`
/// the Jacobian along `x = y = t e` (exactly `(1 - 1/sqrt 2) I` for every `t > 0`); where
/// `x o x + y o y` is on the boundary of `L` (here `x`, `y` on one ray), the Jacobian of
/// the smoothed function `x + y - sqrt(x o x + y o y + 2 eps^2 e)` by central differences,
/// `eps = 1e-6`, to 1e-5 (the smoothing moves it by `O(eps)`; its smaller eigenvalue is
/// computed from [`det_squares`], `det(w + c e) = det(w) + 2 c w_0 + c^2`, to keep the
/// differences accurate).
#[test]
fn fischer_burmeister_kink_elements() {
    let (mut gx, mut gy, mut hx, mut hy) = ([0.0; 9], [0.0; 9], [0.0; 9], [0.0; 9]);
    fb_soc([0.0; 3], [0.0; 3], Some((&mut gx, &mut gy)));
    let t = 1e-3;
    fb_soc([t, 0.0, 0.0], [t, 0.0, 0.0], Some((&mut hx, &mut hy)));
    for k in 0..9 {
        let diag = if k % 4 == 0 { FB_ORIGIN } else { 0.0 };
        for g in [gx, gy, hx, hy] {
            assert!((g[k] - diag).abs() < 1e-15, "{g:?}");
        }
    }
    let c = 2.0 * 1e-6f64.powi(2);
    let smoothed = |x: [f64; 3], y: [f64; 3]| -> [f64; 3] {
        let (xx, yy) = (jordan_product(x, x), jordan_product(y, y));
        let w0 = xx[0] + yy[0];
        let (w_hat, t) = spectral_direction([w0, xx[1] + yy[1], xx[2] + yy[2]]);
        let l2 = w0 + c + t;
        let l1 = (det_squares(x, y) + 2.0 * c * w0 + c * c) / l2;
        let z = from_spectrum([l1.sqrt(), l2.sqrt()], w_hat);
        std::array::from_fn(|i| x[i] + y[i] - z[i])
    };
    // x = 2 (1, 0.6, 0.8) / 2 and y = 0.5 (1, 0.6, 0.8): both on the ray of u_2; and y = 0
    for (x, y) in [
        ([1.0, 0.6, 0.8], [0.5, 0.3, 0.4]),
        ([1.0, 0.6, -0.8], [0.0; 3]),
        ([-1.0, 0.6, 0.8], [2.0, -1.2, -1.6]),
    ] {
        let f = fb_soc(x, y, Some((&mut gx, &mut gy)));
        let f0 = smoothed(x, y);
        assert!(f.iter().zip(f0).all(|(a, b)| (a - b).abs() < 1e-5), "{f:?}");
        let h = 1e-9;
        for j in 0..3 {
            for (which, g) in [(0, &gx), (1, &gy)] {
                let (mut p, mut m) = ([x, y], [x, y]);
                p[which][j] += h;
                m[which][j] -= h;
                let (fp, fm) = (smoothed(p[0], p[1]), smoothed(m[0], m[1]));
                for i in 0..3 {
                    let fd = (fp[i] - fm[i]) / (2.0 * h);
                    assert!(
                        (fd - g[3 * i + j]).abs() < 1e-5,
                        "x {x:?}, y {y:?}: d phi_{i} / d {}_{j}: {fd} smoothed, {}",
                        ["x", "y"][which],
                        g[3 * i + j]
                    );
                }
            }
        }
    }
}
