//! Products of Coulomb friction cones ([`super::ConstraintSet::CoulombCones`], the CCP and the
//! Coulomb problem): blocks of 3 components per contact, normal first, then the two tangential
//! components (fclib order). `K_mu = {(x_n, x_t) : ||x_t|| <= mu x_n}`; its dual is
//! `K_mu^* = K_{1/mu}` (docs/formulation.md sections 2 and 3).

use crate::error::{ProblemError, Result};

/// Relative tolerance deciding that a Coulomb-cone block lies on the cone surface:
/// `||x_t|| >= mu x_n (1 - CONE_SURFACE_TOL)` counts as the surface (active), anything strictly
/// inside that as the interior (free). Used by the residual module and by MPRGP / MPGP, so that
/// both classify a block the same way.
pub const CONE_SURFACE_TOL: f64 = 1e-12;

/// Check `mu` against the problem size `n`: `n` a multiple of 3, `mu` of length `n / 3`, finite
/// and non-negative. Errors: [`ProblemError::NotMultipleOfThree`], [`ProblemError::SizeMismatch`],
/// [`ProblemError::NonFinite`], [`ProblemError::NegativeMu`].
pub(super) fn validate(mu: &[f64], n: usize) -> Result<()> {
    if n % 3 != 0 {
        return Err(ProblemError::NotMultipleOfThree { n });
    }
    if mu.len() != n / 3 {
        return Err(ProblemError::SizeMismatch {
            what: "mu".into(),
            expected: n / 3,
            found: mu.len(),
        });
    }
    for (c, &m) in mu.iter().enumerate() {
        if !m.is_finite() {
            return Err(ProblemError::NonFinite {
                what: "mu".into(),
                position: format!("[{c}]"),
                value: m,
            });
        }
        if m < 0.0 {
            return Err(ProblemError::NegativeMu {
                contact: c,
                value: m,
            });
        }
    }
    Ok(())
}

/// Project `x` (length `3 mu.len()`) onto the product of the cones `K_mu[c]`, in place.
#[inline]
pub(super) fn project(mu: &[f64], x: &mut [f64]) {
    for (xc, &m) in x.chunks_exact_mut(3).zip(mu) {
        project_coulomb_cone(xc, m);
    }
}

/// Projected gradient `g^P = -P_{T_K(x)}(-g)` of one Coulomb-cone block at a feasible `x`
/// (docs/formulation.md section 4): interior (`||x_t|| < mu x_n (1 - CONE_SURFACE_TOL)`): `g`; apex
/// (`x_n <= 0`, `x_t = 0`, where `T_K = K`): `-P_K(-g)`; surface: with the outward normal
/// `a = (-mu, x_t / ||x_t||)` and `T_K = {d : a.d <= 0}`, `g + max(-a.g, 0) a / ||a||^2`.
/// For `mu = 0` (the half-line): `(g_n, 0, 0)` if `x_n > 0`, else `(min(g_n, 0), 0, 0)`.
pub fn cone_projected_gradient(x: &[f64], g: &[f64], mu: f64) -> [f64; 3] {
    let (xn, t) = (x[0], (x[1] * x[1] + x[2] * x[2]).sqrt());
    if mu == 0.0 {
        let pn = if xn > 0.0 { g[0] } else { g[0].min(0.0) };
        return [pn, 0.0, 0.0];
    }
    if xn <= 0.0 && t == 0.0 {
        let mut v = [-g[0], -g[1], -g[2]];
        project_coulomb_cone(&mut v, mu);
        return [-v[0], -v[1], -v[2]];
    }
    if t < mu * xn * (1.0 - CONE_SURFACE_TOL) {
        return [g[0], g[1], g[2]];
    }
    let a = [-mu, x[1] / t, x[2] / t];
    let aa = mu * mu + 1.0;
    let ag = a[0] * g[0] + a[1] * g[1] + a[2] * g[2];
    let s = (-ag).max(0.0) / aa;
    [g[0] + s * a[0], g[1] + s * a[1], g[2] + s * a[2]]
}

/// Project `x = (x_n, x_t1, x_t2)` onto `K_mu = {||x_t|| <= mu x_n}` in place
/// (docs/formulation.md section 3; Tasora & Anitescu 2011, eq. 30):
/// inside: unchanged; in the polar cone (`mu ||x_t|| <= -x_n`): zero; otherwise onto the
/// surface, `x_n' = (x_n + mu t) / (1 + mu^2)`, `x_t' = mu x_n' x_t / t`. For `mu = 0` the
/// tangents vanish and the normal is clamped at 0.
#[inline]
pub fn project_coulomb_cone(x: &mut [f64], mu: f64) {
    let (xn, x1, x2) = (x[0], x[1], x[2]);
    if mu == 0.0 {
        x[0] = xn.max(0.0);
        x[1] = 0.0;
        x[2] = 0.0;
        return;
    }
    let t = (x1 * x1 + x2 * x2).sqrt();
    if t <= mu * xn {
        return;
    }
    if mu * t <= -xn {
        x[0] = 0.0;
        x[1] = 0.0;
        x[2] = 0.0;
        return;
    }
    let xn_p = (xn + mu * t) / (1.0 + mu * mu);
    let s = mu * xn_p / t;
    x[0] = xn_p;
    x[1] = x1 * s;
    x[2] = x2 * s;
}

/// Project `x` onto the dual cone `K_mu^* = K_{1/mu} = {mu ||x_t|| <= x_n}` in place.
/// For `mu = 0` the dual cone is the half-space `x_n >= 0` (tangents free).
#[inline]
pub fn project_dual_coulomb_cone(x: &mut [f64], mu: f64) {
    if mu == 0.0 {
        x[0] = x[0].max(0.0);
    } else {
        project_coulomb_cone(x, 1.0 / mu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proj(x: [f64; 3], mu: f64) -> [f64; 3] {
        let mut y = x;
        project_coulomb_cone(&mut y, mu);
        y
    }

    #[test]
    fn cone_projection_three_cases() {
        // inside
        assert_eq!(proj([1.0, 0.3, 0.4], 0.5), [1.0, 0.3, 0.4]);
        // polar cone: mu t <= -x_n
        assert_eq!(proj([-1.0, 0.3, 0.4], 0.5), [0.0, 0.0, 0.0]);
        // surface: x = (0, 3, 4), mu = 1: x_n' = 5/2, x_t' = (1.5, 2)
        let p = proj([0.0, 3.0, 4.0], 1.0);
        assert!(
            (p[0] - 2.5).abs() < 1e-15 && (p[1] - 1.5).abs() < 1e-15 && (p[2] - 2.0).abs() < 1e-15
        );
    }

    #[test]
    fn cone_projection_mu_zero() {
        assert_eq!(proj([2.0, 1.0, -1.0], 0.0), [2.0, 0.0, 0.0]);
        assert_eq!(proj([-2.0, 1.0, -1.0], 0.0), [0.0, 0.0, 0.0]);
    }

    #[test]
    fn cone_projection_is_orthogonal() {
        // x - P(x) is orthogonal to P(x) and lies in the polar cone: check <x - p, p> = 0.
        let x = [0.2, -1.3, 0.7];
        let p = proj(x, 0.4);
        let d: Vec<f64> = x.iter().zip(&p).map(|(a, b)| a - b).collect();
        let ip: f64 = d.iter().zip(&p).map(|(a, b)| a * b).sum();
        assert!(ip.abs() < 1e-14);
        let t = p[1].hypot(p[2]);
        assert!((t - 0.4 * p[0]).abs() < 1e-14);
    }
}
