//! The per-contact functions of the semismooth Newton family and one element of their
//! generalised Jacobians (Acary, Bremond & Huber 2018, "On solving contact problems with
//! Coulomb friction: formulations and numerical comparisons", in *Advanced Topics in Nonsmooth
//! Dynamics*, Springer, sec. 4 and 5; Christensen, Klarbring, Pang & Stromberg 1998, IJNME 42,
//! for the Alart-Curnier Jacobian).
//!
//! Notation as in fclib and the papers, with cpbench's names in brackets: one contact's
//! reaction `r = (r_n, r_T)` [`gamma_c`], its relative velocity `u = (u_n, u_T)` [`(N gamma +
//! r)_c`], the friction coefficient `mu`, the steps `rho_n, rho_t > 0`. Every function is
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
    let e = if ut > 0.0 {
        [u[1] / ut, u[2] / ut]
    } else {
        [0.0, 0.0]
    };
    let rd = [
        rho_n,
        rho_n * mu * e[0],
        rho_n * mu * e[1],
        0.0,
        rho_t,
        0.0,
        0.0,
        0.0,
        rho_t,
    ];
    for i in 0..3 {
        for j in 0..3 {
            a[3 * i + j] = if i == j { 1.0 } else { 0.0 } - dp[3 * i + j];
            b[3 * i + j] = (0..3).map(|k| dp[3 * i + k] * rd[3 * k + j]).sum();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Central differences of `F` in `r` and `u` against `A` and `B` at points away from the
    /// kinks, for every function, sticking and sliding.
    #[test]
    fn jacobians_match_finite_differences() {
        let points: [([f64; 3], [f64; 3]); 4] = [
            ([1.0, 0.1, -0.2], [0.0, 0.05, 0.02]),   // sticking
            ([1.0, 0.3, 0.4], [-0.1, 0.5, 0.7]),     // sliding
            ([0.5, -0.2, 0.1], [0.3, -0.4, 0.25]),   // sliding, opening
            ([-0.2, 0.05, 0.02], [0.6, 0.01, -0.3]), // separated
        ];
        let h = 1e-7;
        for function in [
            Function::AlartCurnier,
            Function::JeanMoreau,
            Function::NaturalMap,
        ] {
            for (r, u) in points {
                let (mu, rho) = (0.6, [0.7, 0.9]);
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
                                "{function:?} at r {r:?}, u {u:?}: d F_{i} / d {}_{j}: \
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

    /// The three functions vanish at a sticking and a sliding solution of one contact.
    #[test]
    fn functions_vanish_at_solutions() {
        // sticking: r inside the cone, u = 0; sliding: r on the boundary opposing u_T, u_n = 0
        let (mu, rho) = (0.5, [1.3, 0.4]);
        let slide_r = [2.0, -0.6, -0.8]; // ||r_T|| = 1 = mu r_n, along -(3, 4) / 5
        let slide_u = [0.0, 0.3, 0.4];
        for function in [
            Function::AlartCurnier,
            Function::JeanMoreau,
            Function::NaturalMap,
        ] {
            for (r, u) in [([1.0, 0.2, -0.1], [0.0; 3]), (slide_r, slide_u)] {
                let mut f = [1.0; 3];
                eval(function, &r, &u, mu, rho, &mut f, None);
                assert!(f.iter().all(|v| v.abs() < 1e-14), "{function:?}: {f:?}");
            }
        }
    }
}
