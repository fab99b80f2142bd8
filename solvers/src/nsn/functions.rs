//! The per-contact functions of the semismooth Newton family and one element of their
//! generalised Jacobians (Acary, Bremond & Huber 2018, "On solving contact problems with
//! Coulomb friction: formulations and numerical comparisons", in *Advanced Topics in Nonsmooth
//! Dynamics*, Springer, sec. 4 and 5; Christensen, Klarbring, Pang & Stromberg 1998, IJNME 42,
//! for the Alart-Curnier Jacobian; Fukushima, Luo & Tseng 2001, "Smoothing functions for
//! second-order-cone complementarity problems", SIAM J. Optim. 12(2), and Chen & Tseng 2005,
//! "An unconstrained smooth minimization reformulation of the second-order cone complementarity
//! problem", Math. Program. 104, for the Fischer-Burmeister function of the second-order cone).
//!
//! Notation as in fclib and the papers, with cpbench's names in brackets: one contact's
//! reaction `r = (r_n, r_T)` (`gamma_c`), its relative velocity `u = (u_n, u_T)` (`(N gamma +
//! r)_c`), the friction coefficient `mu`, the steps `rho_n, rho_t > 0`. Every function is
//! `F(r, u)`; its element of the generalised Jacobian is stored as `A = dF/dr` and
//! `B = dF/du` (3x3, row-major), so that the Newton matrix of the whole problem is
//! `J = A + B W` (`A`, `B` block diagonal).
//!
//! ```text
//! Alart-Curnier (AC):  F_n = r_n - max(0, r_n - rho_n u_n)
//!                      F_T = r_T - P_D(R)(r_T - rho_t u_T),   R = mu max(0, r_n - rho_n u_n)
//! Jean-Moreau (JM):    F_n as AC
//!                      F_T = r_T - P_D(R)(r_T - rho_t u_T),   R = mu max(0, r_n)
//! natural map (NM):    F   = r - P_K(r - rho (u + mu ||u_T|| e_n))   (De Saxce's velocity)
//! Fischer-Burmeister:  F   = x + y - (x o x + y o y)^(1/2),   x = (r_n, r_T / mu),
//!   (FB, mu > 0)                                              y = rho (u~_n, mu u_T),
//!                                                             u~ = u + mu ||u_T|| e_n
//! FB, mu = 0:          F_n = r_n + rho u_n - sqrt(r_n^2 + rho^2 u_n^2),   F_T = r_T
//! ```
//!
//! `P_D(R)` projects onto the disk of radius `R`, `P_K` onto the Coulomb cone
//! `K = {||r_T|| <= mu r_n}`, and `rho (.)` scales the normal component by `rho_n` and the
//! tangential ones by `rho_t` (AC, JM); the natural map takes the one step `min(rho_n, rho_t)`
//! for all components, since `r = P_K(r - rho u~)` characterises the complementarity
//! `r in K, u~ in K*, r . u~ = 0` only for a scalar `rho`. Each `F(r, u) = 0` exactly when `r` and `u` satisfy the
//! contact's Coulomb law (Acary et al. 2018, sec. 4). Where a function is not differentiable
//! (a kink of a projection) the element chosen is the limit from the side written first in
//! the code (`x > 0` active, `||y|| <= R` inside), an element of Clarke's Jacobian.
//!
//! The Fischer-Burmeister function (FB) works in the Jordan algebra of the Lorentz cone `L =
//! {||x_T|| <= x_0}` (`x o y = (x . y, x_0 y_T + y_0 x_T)`, the square root by the spectral
//! decomposition): `phi(x, y) = 0` exactly when `x in L`, `y in L`, `x . y = 0` (Fukushima,
//! Luo & Tseng 2001). The Coulomb cone is not self-dual (`K* = K_{1/mu}`), so `r` and De
//! Saxce's velocity `u~` are mapped onto `L` first: `x = (r_n, r_T / mu)` is in `L` exactly
//! when `r in K`, `y = rho (u~_n, mu u_T)` exactly when `u~ in K*` (`u~_T = u_T`), and `x . y =
//! rho r . u~`, so `F = 0` is the contact's Coulomb law. This scaling keeps the normal
//! components as they are: on `r_T = u_T = 0` the function is the scalar Fischer-Burmeister
//! function of `(r_n, rho u_n)`, and at a solution `||x_T|| <= x_0 = r_n` whatever `mu`.
//! (Siconos' generated `fc3d_FischerBurmeister` code takes `x = (mu r_n, r_T)`, `y = (u~_n, mu
//! u_T)`, up to its steps: `mu` times this function with the step `rho / mu`, whose `x . y = mu
//! r . u~` loses the normal complementarity at `mu = 0`.) At `mu = 0` no invertible scaling
//! maps the ray `K = {r_T = 0}` onto `L`, and the frictionless function above is used. The step
//! is the scalar `rho = min(rho_n, rho_t)`, as for the natural map (it balances the units of
//! `r` and `u`; the zeros do not depend on it). The element of the generalised Jacobian at the
//! kinks (`x o x + y o y` on the boundary of `L`) is documented at [`fb_soc`].

use serde::{Deserialize, Serialize};

/// Which contact function the Newton method solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Function {
    /// Alart & Curnier 1991 (the disk's radius from the normal predictor).
    AlartCurnier,
    /// Jean & Moreau (the disk's radius from the current normal reaction).
    JeanMoreau,
    /// The natural map of the cone complementarity with De Saxce's modified velocity.
    NaturalMap,
    /// The Fischer-Burmeister function of the second-order cone with De Saxce's modified
    /// velocity.
    FischerBurmeister,
}

/// `F(r, u)` of contact `(r, u)` (slices of length 3) into `f`; with `jac`, also `A = dF/dr`
/// and `B = dF/du` (row-major 3x3).
#[inline]
pub fn eval(
    function: Function,
    r: &[f64],
    u: &[f64],
    mu: f64,
    rho: [f64; 2],
    f: &mut [f64],
    jac: Option<(&mut [f64; 9], &mut [f64; 9])>,
) {
    let c = Contact { r, u, mu, rho };
    match function {
        Function::AlartCurnier | Function::JeanMoreau => {
            disk(function == Function::JeanMoreau, c, f, jac)
        }
        Function::NaturalMap => natural_map(c, f, jac),
        Function::FischerBurmeister => fischer_burmeister(c, f, jac),
    }
}

/// One contact's data: reaction `r` and velocity `u` (length 3), `mu`, steps `[rho_n, rho_t]`.
#[derive(Clone, Copy)]
struct Contact<'a> {
    r: &'a [f64],
    u: &'a [f64],
    mu: f64,
    rho: [f64; 2],
}

/// The AC and JM functions (`jm`: the radius from `r_n`).
#[inline]
fn disk(jm: bool, c: Contact, f: &mut [f64], jac: Option<(&mut [f64; 9], &mut [f64; 9])>) {
    let Contact { r, u, mu, rho } = c;
    let [rho_n, rho_t] = rho;
    let xn = r[0] - rho_n * u[0];
    let y = [r[1] - rho_t * u[1], r[2] - rho_t * u[2]];
    let base = if jm { r[0] } else { xn };
    let rad = mu * base.max(0.0);
    let ny = y[0].hypot(y[1]);
    f[0] = r[0] - xn.max(0.0);
    let inside = ny <= rad;
    let p = if inside {
        y
    } else if ny > 0.0 {
        [rad * y[0] / ny, rad * y[1] / ny]
    } else {
        [0.0, 0.0]
    };
    f[1] = r[1] - p[0];
    f[2] = r[2] - p[1];
    let Some((a, b)) = jac else { return };
    a.fill(0.0);
    b.fill(0.0);
    if xn > 0.0 {
        b[0] = rho_n;
    } else {
        a[0] = 1.0;
    }
    // dP/dy (2x2) and dP/dR (2)
    let (dpdy, dpdr) = if inside {
        ([1.0, 0.0, 0.0, 1.0], [0.0, 0.0])
    } else if ny > 0.0 {
        let (e0, e1) = (y[0] / ny, y[1] / ny);
        let s = rad / ny;
        (
            [
                s * (1.0 - e0 * e0),
                -s * e0 * e1,
                -s * e0 * e1,
                s * (1.0 - e1 * e1),
            ],
            [e0, e1],
        )
    } else {
        ([0.0; 4], [0.0, 0.0])
    };
    // dR/dr_n and dR/du_n
    let active = base > 0.0;
    let (drdrn, drdun) = match (active, jm) {
        (false, _) => (0.0, 0.0),
        (true, true) => (mu, 0.0),
        (true, false) => (mu, -mu * rho_n),
    };
    for i in 0..2 {
        let row = 3 * (i + 1);
        a[row] = -dpdr[i] * drdrn;
        b[row] = -dpdr[i] * drdun;
        for j in 0..2 {
            let d = dpdy[2 * i + j];
            a[row + 1 + j] = if i == j { 1.0 } else { 0.0 } - d;
            b[row + 1 + j] = rho_t * d;
        }
    }
}

/// Projection of `z` onto the Coulomb cone `{||z_T|| <= mu z_n}` and, with `dp`, its Jacobian
/// (row-major 3x3). Three cases: inside (identity), in the polar cone (zero), else onto the
/// boundary ray `s (1, mu e)`, `s = (z_n + mu ||z_T||) / (1 + mu^2)`, `e = z_T / ||z_T||`.
#[inline]
pub fn project_cone(z: [f64; 3], mu: f64, dp: Option<&mut [f64; 9]>) -> [f64; 3] {
    let t = z[1].hypot(z[2]);
    if t <= mu * z[0] {
        if let Some(d) = dp {
            *d = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        }
        return z;
    }
    if mu * t <= -z[0] {
        if let Some(d) = dp {
            d.fill(0.0);
        }
        return [0.0; 3];
    }
    // here t > 0 (t = 0 falls in one of the cases above)
    let k = 1.0 / (1.0 + mu * mu);
    let s = (z[0] + mu * t) * k;
    let e = [z[1] / t, z[2] / t];
    if let Some(d) = dp {
        // ds/dz = k (1, mu e); P_T = mu s e, dP_T/dz_T = mu (e ds/dz_T + s (I - e e^T) / t)
        d[0] = k;
        d[1] = k * mu * e[0];
        d[2] = k * mu * e[1];
        for i in 0..2 {
            let row = 3 * (i + 1);
            d[row] = mu * e[i] * k;
            for j in 0..2 {
                let proj = if i == j { 1.0 } else { 0.0 } - e[i] * e[j];
                d[row + 1 + j] = mu * (e[i] * k * mu * e[j] + s * proj / t);
            }
        }
    }
    [s, mu * s * e[0], mu * s * e[1]]
}

/// The natural map with De Saxce's velocity `u~ = u + mu ||u_T|| e_n`:
/// `F = r - P_K(z)`, `z = r - rho u~` (`rho = min(rho_n, rho_t)`); `A = I - P'(z)`, `B = P'(z) rho D`,
/// `D = du~/du = I + mu e_n (u_T / ||u_T||)^T` (0 in place of `u_T / ||u_T||` at `u_T = 0`).
#[inline]
fn natural_map(c: Contact, f: &mut [f64], jac: Option<(&mut [f64; 9], &mut [f64; 9])>) {
    let Contact { r, u, mu, rho } = c;
    let [rho_n, rho_t] = rho;
    // one step for all components: `r = P_K(r - rho u~)` characterises `r in K, u~ in K*, r . u~ = 0` for
    // a scalar `rho` only
    let rho = rho_n.min(rho_t);
    let (rho_n, rho_t) = (rho, rho);
    let ut = u[1].hypot(u[2]);
    let z = [
        r[0] - rho_n * (u[0] + mu * ut),
        r[1] - rho_t * u[1],
        r[2] - rho_t * u[2],
    ];
    let Some((a, b)) = jac else {
        let p = project_cone(z, mu, None);
        for i in 0..3 {
            f[i] = r[i] - p[i];
        }
        return;
    };
    let mut dp = [0.0; 9];
    let p = project_cone(z, mu, Some(&mut dp));
    for i in 0..3 {
        f[i] = r[i] - p[i];
    }
    // rho D, row-major: row 0 = rho_n (1, mu e_u), rows 1, 2 = rho_t e_1, e_2
    let rd = scaled_shift_jacobian(rho_n, rho_t, mu, u, ut);
    for i in 0..3 {
        for j in 0..3 {
            a[3 * i + j] = if i == j { 1.0 } else { 0.0 } - dp[3 * i + j];
            b[3 * i + j] = (0..3).map(|k| dp[3 * i + k] * rd[3 * k + j]).sum();
        }
    }
}

/// `diag(a, b, b) D`, row-major, with `D` the Jacobian of De Saxce's modified velocity
/// `u~ = (u_n + mu ||u_T||, u_T)` with respect to `u`: row 0 is `a (1, mu e_1, mu e_2)`, rows 1
/// and 2 are `b e_1`, `b e_2`, where `e = u_T / ||u_T||` (`e = 0` at `u_T = 0`, the element of
/// the generalised Jacobian used there) and `ut = ||u_T||`.
fn scaled_shift_jacobian(a: f64, b: f64, mu: f64, u: &[f64], ut: f64) -> [f64; 9] {
    let e = if ut > 0.0 {
        [u[1] / ut, u[2] / ut]
    } else {
        [0.0, 0.0]
    };
    [a, a * mu * e[0], a * mu * e[1], 0.0, b, 0.0, 0.0, 0.0, b]
}

/// The diagonal `1 - 1/sqrt(2)` of both blocks of the Fischer-Burmeister Jacobian element at
/// `x = y = 0` (the limit of the Jacobians along `x = y = t e`, `t -> 0+`).
pub const FB_ORIGIN: f64 = 1.0 - std::f64::consts::FRAC_1_SQRT_2;

/// Where the smaller square-root eigenvalue of `w = x o x + y o y` is at most `FB_KINK` times
/// the larger, `w` counts as on the boundary of the Lorentz cone (the Fischer-Burmeister kink):
/// below it the rounding of `x o u_1` would dominate the term `P_1 L_x / mu_1`.
const FB_KINK: f64 = 1e-10;

/// The Jordan product of the Lorentz cone `L = {x in R^3 : ||x_T|| <= x_0}`:
/// `x o y = (x . y, x_0 y_T + y_0 x_T)` (Fukushima, Luo & Tseng 2001, sec. 2).
#[inline]
pub fn jordan_product(x: [f64; 3], y: [f64; 3]) -> [f64; 3] {
    [
        x[0] * y[0] + x[1] * y[1] + x[2] * y[2],
        x[0] * y[1] + y[0] * x[1],
        x[0] * y[2] + y[0] * x[2],
    ]
}

/// The unit direction `w_hat = w_T / ||w_T||` of the spectral decomposition `w = lambda_1 u_1 +
/// lambda_2 u_2`, `u_{1,2} = (1, -+ w_hat) / 2`, `lambda_{1,2} = w_0 -+ ||w_T||` (any unit
/// vector, here `(1, 0)`, when `w_T = 0`), and `||w_T||`.
#[inline]
pub fn spectral_direction(w: [f64; 3]) -> ([f64; 2], f64) {
    let t = w[1].hypot(w[2]);
    if t > 0.0 {
        ([w[1] / t, w[2] / t], t)
    } else {
        ([1.0, 0.0], 0.0)
    }
}

/// `m_1 u_1 + m_2 u_2` for the spectral direction `w_hat` (`m = [m_1, m_2]`, `u_{1,2} =
/// (1, -+ w_hat) / 2` as in [`spectral_direction`]): the inverse of the spectral decomposition
/// (Fukushima, Luo & Tseng 2001, sec. 2).
#[inline]
pub fn from_spectrum(m: [f64; 2], w_hat: [f64; 2]) -> [f64; 3] {
    let h = 0.5 * (m[1] - m[0]);
    [0.5 * (m[0] + m[1]), h * w_hat[0], h * w_hat[1]]
}

/// The square root of `w` in the Jordan algebra of `L` (Fukushima, Luo & Tseng 2001, sec. 2):
/// `sqrt(lambda_1) u_1 + sqrt(lambda_2) u_2`, the one `z in L` with `z o z = w` when `w in L`
/// (a negative eigenvalue, of a `w` outside `L`, counts as 0).
#[inline]
pub fn soc_sqrt(w: [f64; 3]) -> [f64; 3] {
    let (w_hat, t) = spectral_direction(w);
    let m = [(w[0] - t).max(0.0).sqrt(), (w[0] + t).max(0.0).sqrt()];
    from_spectrum(m, w_hat)
}

/// `det(x o x + y o y) = w_0^2 - ||w_T||^2` without cancellation: `det(x)^2 + det(y)^2 + 2
/// ((x_0 y_0 - x_T . y_T)^2 + ||x_0 y_T - y_0 x_T||^2 + (x_T x y_T)^2)`, `det(v) = v_0^2 -
/// ||v_T||^2` (expand both sides), so that the smaller eigenvalue `det / lambda_2` keeps its
/// relative accuracy near the boundary of `L`.
#[inline]
pub fn det_squares(x: [f64; 3], y: [f64; 3]) -> f64 {
    let det = |v: [f64; 3]| {
        let n = v[1].hypot(v[2]);
        (v[0] - n) * (v[0] + n)
    };
    let c0 = x[0] * y[0] - x[1] * y[1] - x[2] * y[2];
    let c1 = x[0] * y[1] - y[0] * x[1];
    let c2 = x[0] * y[2] - y[0] * x[2];
    let c3 = x[1] * y[2] - x[2] * y[1];
    det(x).powi(2) + det(y).powi(2) + 2.0 * (c0 * c0 + c1 * c1 + c2 * c2 + c3 * c3)
}

/// The Fischer-Burmeister function of the Lorentz cone, `phi(x, y) = x + y - sqrt(x o x + y o
/// y)` (Fukushima, Luo & Tseng 2001), which vanishes exactly when `x in L`, `y in L`, `x . y =
/// 0`; with `jac`, an element `(G_x, G_y)` of its generalised Jacobian (row-major 3x3 each).
///
/// Where `w = x o x + y o y` is in the interior of `L`, `phi` is differentiable with `G_x = I -
/// L_z^{-1} L_x`, `G_y = I - L_z^{-1} L_y` (`z = sqrt(w)`, `L_x v = x o v`; Fukushima et al.
/// 2001, Chen & Tseng 2005), and `L_z^{-1} = P_1 / m_1 + P_2 / m_2 + 2 P_3 / (m_1 + m_2)` with
/// `m_i = sqrt(lambda_i)`, `P_i` the projections on `u_1`, `u_2` and on their orthogonal
/// complement. The smaller eigenvalue is computed without cancellation, `lambda_1 = det(w) /
/// lambda_2` (`det_squares`). At the kinks: where `w` is on the
/// boundary of `L` but not 0 (`m_1 <= FB_KINK m_2`), the term `P_1 / m_1` is dropped, which at
/// such a point (`x` and `y` on one ray of `u_2`) gives `G_x = I - (x_0 / s) (I - P_1)`,
/// `s = ||(x_0, y_0)||` (and `G_y` with `y_0`), the limit as `eps -> 0` of the Jacobians of
/// Fukushima et al.'s smoothed function `x + y - sqrt(x o x + y o y + 2 eps^2 e)`; at `w = 0`
/// (`x = y = 0`), `G_x = G_y = (1 - 1/sqrt 2) I`, the limit along `x = y = t e`, `t -> 0+`
/// (`e = (1, 0, 0)`), as for the scalar Fischer-Burmeister function.
#[inline]
pub fn fb_soc(x: [f64; 3], y: [f64; 3], jac: Option<(&mut [f64; 9], &mut [f64; 9])>) -> [f64; 3] {
    let (xx, yy) = (jordan_product(x, x), jordan_product(y, y));
    let w = [xx[0] + yy[0], xx[1] + yy[1], xx[2] + yy[2]];
    let (w_hat, t) = spectral_direction(w);
    let l2 = w[0] + t;
    let l1 = if l2 > 0.0 {
        det_squares(x, y) / l2
    } else {
        0.0
    };
    let m = [l1.sqrt(), l2.sqrt()];
    let z = from_spectrum(m, w_hat);
    let phi = std::array::from_fn(|i| x[i] + y[i] - z[i]);
    let Some((gx, gy)) = jac else { return phi };
    if l2 <= 0.0 {
        *gx = [
            FB_ORIGIN, 0.0, 0.0, 0.0, FB_ORIGIN, 0.0, 0.0, 0.0, FB_ORIGIN,
        ];
        *gy = *gx;
        return phi;
    }
    // L_z^{-1} = P_1 / m_1 + P_2 / m_2 + 2 P_3 / (m_1 + m_2), u_hat_{1,2} = (1, -+ w_hat) / sqrt 2,
    // P_3 = diag(0, I - w_hat w_hat^T)
    let s1 = if m[0] > FB_KINK * m[1] {
        1.0 / m[0]
    } else {
        0.0
    };
    let (s2, s3) = (1.0 / m[1], 2.0 / (m[0] + m[1]));
    let (a, b) = (0.5 * (s1 + s2), 0.5 * (s2 - s1));
    let mut lz_inv = [0.0; 9];
    lz_inv[0] = a;
    for i in 0..2 {
        lz_inv[i + 1] = b * w_hat[i];
        lz_inv[3 * (i + 1)] = b * w_hat[i];
        for j in 0..2 {
            let outer = w_hat[i] * w_hat[j];
            let eye = if i == j { 1.0 } else { 0.0 };
            lz_inv[3 * (i + 1) + j + 1] = a * outer + s3 * (eye - outer);
        }
    }
    for (g, v) in [(gx, x), (gy, y)] {
        // L_v = [[v_0, v_T^T], [v_T, v_0 I]]
        let lv = [v[0], v[1], v[2], v[1], v[0], 0.0, v[2], 0.0, v[0]];
        for i in 0..3 {
            for j in 0..3 {
                let p: f64 = (0..3).map(|k| lz_inv[3 * i + k] * lv[3 * k + j]).sum();
                g[3 * i + j] = if i == j { 1.0 } else { 0.0 } - p;
            }
        }
    }
    phi
}

/// The scaling `x = diag(p_0, p_1, p_1) r`, `y = rho diag(q_0, q_1, q_1) u~` of a contact with
/// `mu > 0` that maps the Coulomb cone `K_mu` and its dual `K_{1/mu}` onto the Lorentz cone:
/// `p = (1, 1/mu)`, `q = (1, mu)`, so that `x in L` iff `r in K_mu`, `y in L` iff `u~ in
/// K_{1/mu}`, and `x . y = rho r . u~`.
#[inline]
fn fb_scaling(mu: f64) -> ([f64; 2], [f64; 2]) {
    ([1.0, 1.0 / mu], [1.0, mu])
}

/// The Fischer-Burmeister function of the second-order-cone complementarity `r in K, u~ in K*,
/// r . u~ = 0` with De Saxce's velocity `u~ = u + mu ||u_T|| e_n` (Fukushima, Luo & Tseng 2001;
/// Acary, Bremond & Huber 2018, sec. 4): `F = phi(x, y)` ([`fb_soc`]) with `x = P r = (r_n,
/// r_T / mu)`, `y = rho Q u~ = rho (u~_n, mu u_T)` ([`fb_scaling`]), `rho = min(rho_n, rho_t)`;
/// `A = G_x P`, `B = G_y rho Q D`, `D = du~/du = I + mu e_n (u_T / ||u_T||)^T` (0 in place of
/// `u_T / ||u_T||` at `u_T = 0`). At `mu = 0` the cone is the ray `r_T = 0`, which no invertible
/// scaling maps onto `L`: there `F = (phi_1(r_n, rho u_n), r_T)` with the scalar
/// Fischer-Burmeister function `phi_1(a, b) = a + b - sqrt(a^2 + b^2)` (its element at `a = b =
/// 0`: `1 - 1/sqrt 2` for both), the limit of the `mu > 0` function on `r_T = 0`.
#[inline]
fn fischer_burmeister(c: Contact, f: &mut [f64], jac: Option<(&mut [f64; 9], &mut [f64; 9])>) {
    let Contact { r, u, mu, rho } = c;
    let rho = rho[0].min(rho[1]);
    if mu == 0.0 {
        let (a, b) = (r[0], rho * u[0]);
        let n = a.hypot(b);
        f[0] = a + b - n;
        f[1] = r[1];
        f[2] = r[2];
        if let Some((ja, jb)) = jac {
            let (da, db) = if n > 0.0 {
                (1.0 - a / n, 1.0 - b / n)
            } else {
                (FB_ORIGIN, FB_ORIGIN)
            };
            *ja = [da, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
            *jb = [rho * db, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        }
        return;
    }
    let ([p0, p1], [q0, q1]) = fb_scaling(mu);
    let ut = u[1].hypot(u[2]);
    let x = [p0 * r[0], p1 * r[1], p1 * r[2]];
    let y = [
        rho * q0 * (u[0] + mu * ut),
        rho * q1 * u[1],
        rho * q1 * u[2],
    ];
    let Some((a, b)) = jac else {
        f.copy_from_slice(&fb_soc(x, y, None));
        return;
    };
    let (mut gx, mut gy) = ([0.0; 9], [0.0; 9]);
    f.copy_from_slice(&fb_soc(x, y, Some((&mut gx, &mut gy))));
    // rho Q D, row-major: row 0 = rho q_0 (1, mu e_u), rows 1, 2 = rho q_1 e_1, e_2
    let qd = scaled_shift_jacobian(rho * q0, rho * q1, mu, u, ut);
    let pd = [p0, p1, p1];
    for i in 0..3 {
        for j in 0..3 {
            a[3 * i + j] = gx[3 * i + j] * pd[j];
            b[3 * i + j] = (0..3).map(|k| gy[3 * i + k] * qd[3 * k + j]).sum();
        }
    }
}
