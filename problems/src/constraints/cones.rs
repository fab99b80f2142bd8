//! Products of Coulomb friction cones ([`super::ConstraintSet::CoulombCones`], the CCP and the
//! Coulomb problem): blocks of `d` components per contact (`d = 3`: normal first, then the two
//! tangential components, fclib order; `d = 2`: normal, then the one tangent of a planar
//! problem, Siconos' fc2d). `K_mu = {(x_n, x_t) : ||x_t|| <= mu x_n}` (for `d = 2`,
//! `|x_t| <= mu x_n`); its dual is `K_mu^* = K_{1/mu}` (docs/formulation.md sections 2 and 3).
//!
//! The per-block functions ([`project_coulomb_cone`], [`cone_projected_gradient`], ...) take
//! the block's slice and read its length: 3 for a 3-D cone, 2 for a 2-D one.

use super::family::{mu_range_line, take_min, ConicPiece, ResidualTerms, SetFamily};
use super::ProblemClass;
use crate::error::{ProblemError, Result};
use crate::linalg::dot;

/// Relative tolerance deciding that a Coulomb-cone block lies on the cone surface:
/// `||x_t|| >= mu x_n (1 - CONE_SURFACE_TOL)` counts as the surface (active), anything strictly
/// inside that as the interior (free). Used by the residual module and by MPRGP / MPGP, so that
/// both classify a block the same way.
pub const CONE_SURFACE_TOL: f64 = 1e-12;

/// Check `mu` against the problem size `n` and the cone dimension `dim` (2 or 3): `n` a
/// multiple of `dim`, `mu` of length `n / dim`, finite and non-negative. Errors:
/// [`ProblemError::UnsupportedConeDim`], [`ProblemError::NotMultipleOfThree`] (`dim = 3`),
/// [`ProblemError::NotMultipleOfConeDim`] (`dim = 2`), [`ProblemError::SizeMismatch`],
/// [`ProblemError::NonFinite`], [`ProblemError::NegativeMu`].
pub(super) fn validate(mu: &[f64], n: usize, dim: usize) -> Result<()> {
    if dim != 2 && dim != 3 {
        return Err(ProblemError::UnsupportedConeDim { dim });
    }
    if n % dim != 0 {
        return Err(if dim == 3 {
            ProblemError::NotMultipleOfThree { n }
        } else {
            ProblemError::NotMultipleOfConeDim { n, dim }
        });
    }
    if mu.len() != n / dim {
        return Err(ProblemError::SizeMismatch {
            what: "mu".into(),
            expected: n / dim,
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

/// Project `x` (length `dim mu.len()`) onto the product of the `dim`-D cones `K_mu[c]`, in
/// place.
#[inline]
pub(super) fn project(mu: &[f64], dim: usize, x: &mut [f64]) {
    if dim == 2 {
        for (xc, &m) in x.chunks_exact_mut(2).zip(mu) {
            project_coulomb_cone2(xc, m);
        }
    } else {
        for (xc, &m) in x.chunks_exact_mut(3).zip(mu) {
            project_coulomb_cone(xc, m);
        }
    }
}

/// Projected gradient `g^P = -P_{T_K(x)}(-g)` of one Coulomb-cone block at a feasible `x`
/// (docs/formulation.md section 4): interior (`||x_t|| < mu x_n (1 - CONE_SURFACE_TOL)`): `g`; apex
/// (`x_n <= 0`, `x_t = 0`, where `T_K = K`): `-P_K(-g)`; surface: with the outward normal
/// `a = (-mu, x_t / ||x_t||)` and `T_K = {d : a.d <= 0}`, `g + max(-a.g, 0) a / ||a||^2`.
/// For `mu = 0` (the half-line): `(g_n, 0, 0)` if `x_n > 0`, else `(min(g_n, 0), 0, 0)`.
///
/// A 2-D block (`x.len() == 2`): the same cases with `||x_t|| = |x_t|`; the answer's first two
/// entries hold it, the third is 0.
pub fn cone_projected_gradient(x: &[f64], g: &[f64], mu: f64) -> [f64; 3] {
    if x.len() == 2 {
        return cone_projected_gradient2(x, g, mu);
    }
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

/// The 2-D projected gradient of [`cone_projected_gradient`] (`x`, `g` of length 2; third
/// entry 0): interior `g`; apex `-P_K(-g)`; surface `x_t = s mu x_n` (`s = sign x_t`), outward
/// normal `a = (-mu, s)`, `g + max(-a.g, 0) a / (1 + mu^2)`; `mu = 0` as in 3-D.
fn cone_projected_gradient2(x: &[f64], g: &[f64], mu: f64) -> [f64; 3] {
    let (xn, t) = (x[0], x[1].abs());
    if mu == 0.0 {
        let pn = if xn > 0.0 { g[0] } else { g[0].min(0.0) };
        return [pn, 0.0, 0.0];
    }
    if xn <= 0.0 && t == 0.0 {
        let mut v = [-g[0], -g[1]];
        project_coulomb_cone2(&mut v, mu);
        return [-v[0], -v[1], 0.0];
    }
    if t < mu * xn * (1.0 - CONE_SURFACE_TOL) {
        return [g[0], g[1], 0.0];
    }
    let a = [-mu, x[1].signum()];
    let aa = mu * mu + 1.0;
    let ag = a[0] * g[0] + a[1] * g[1];
    let s = (-ag).max(0.0) / aa;
    [g[0] + s * a[0], g[1] + s * a[1], 0.0]
}

/// Project a 2-D block `x = (x_n, x_t)` onto `K_mu = {|x_t| <= mu x_n}` in place: the 3-D
/// formula of [`project_coulomb_cone`] with `t = |x_t|` (a planar cone is a 3-D cone cut by
/// the plane of its axis and `x`, so the projection stays in that plane): inside unchanged;
/// polar cone (`mu |x_t| <= -x_n`) zero; otherwise `x_n' = (x_n + mu |x_t|) / (1 + mu^2)`,
/// `x_t' = mu x_n' sign(x_t)`. `mu = 0`: `(max(x_n, 0), 0)`.
#[inline]
pub fn project_coulomb_cone2(x: &mut [f64], mu: f64) {
    let (xn, xt) = (x[0], x[1]);
    if mu == 0.0 {
        x[0] = xn.max(0.0);
        x[1] = 0.0;
        return;
    }
    let t = xt.abs();
    if t <= mu * xn {
        return;
    }
    if mu * t <= -xn {
        x[0] = 0.0;
        x[1] = 0.0;
        return;
    }
    let xn_p = (xn + mu * t) / (1.0 + mu * mu);
    x[0] = xn_p;
    x[1] = mu * xn_p * xt.signum();
}

/// Project `x = (x_n, x_t1, x_t2)` onto `K_mu = {||x_t|| <= mu x_n}` in place
/// (docs/formulation.md section 3; Tasora & Anitescu 2011, eq. 30):
/// inside: unchanged; in the polar cone (`mu ||x_t|| <= -x_n`): zero; otherwise onto the
/// surface, `x_n' = (x_n + mu t) / (1 + mu^2)`, `x_t' = mu x_n' x_t / t`. For `mu = 0` the
/// tangents vanish and the normal is clamped at 0. A block of length 2 is a 2-D cone
/// ([`project_coulomb_cone2`]).
#[inline]
pub fn project_coulomb_cone(x: &mut [f64], mu: f64) {
    if x.len() == 2 {
        return project_coulomb_cone2(x, mu);
    }
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

/// Project `x` onto the dual cone `K_mu^* = K_{1/mu} = {mu ||x_t|| <= x_n}` in place (a block
/// of 3, or of 2 for a 2-D cone).
/// For `mu = 0` the dual cone is the half-space `x_n >= 0` (tangents free).
#[inline]
pub fn project_dual_coulomb_cone(x: &mut [f64], mu: f64) {
    if mu == 0.0 {
        x[0] = x[0].max(0.0);
    } else {
        project_coulomb_cone(x, 1.0 / mu);
    }
}

/// Check the joint count of a cone set: at most `mu.len()` blocks
/// ([`ProblemError::JointCount`]), and `mu = 0` on each joint block
/// ([`ProblemError::JointFriction`]).
fn validate_joints(mu: &[f64], joints: usize) -> Result<()> {
    if joints > mu.len() {
        return Err(ProblemError::JointCount {
            joints,
            blocks: mu.len(),
        });
    }
    match mu[..joints].iter().position(|&m| m != 0.0) {
        Some(block) => Err(ProblemError::JointFriction {
            block,
            value: mu[block],
        }),
        None => Ok(()),
    }
}

/// The residual terms of a bilateral (free) block (docs/formulation.md, "Bilateral rows"):
/// `K = R^d`, `K* = {0}`, so the dual infeasibility and the fc3d error are `g` itself (the
/// block's velocity `u`), the complementarity product `x . g`, Res3 the largest of `|g_i|` and
/// `|x . g|`.
#[inline]
fn free_residual_terms(x: &[f64], gb: &[f64], acc: &mut ResidualTerms) {
    let g2: f64 = gb.iter().map(|v| v * v).sum();
    acc.dual_feas2 += g2;
    acc.fc3d2 += g2;
    let c = dot(x, gb);
    acc.comp_sum += c;
    acc.comp_max = acc.comp_max.max(c.abs());
    let gmax = gb.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    acc.res3 = acc.res3.max(gmax).max(c.abs());
}

/// The view of a product of Coulomb cones for [`SetFamily`], whose first `joints` blocks are
/// bilateral (free: the projection is the identity there, the projected gradient the
/// gradient, the natural map's term the velocity `u`).
#[derive(Clone, Copy, Debug)]
pub struct ConeSet<'a> {
    /// Friction coefficient of each block (length `n / dim`; 0 on the joint blocks).
    pub mu: &'a [f64],
    /// Unknowns per contact, 2 or 3.
    pub dim: usize,
    /// The number of bilateral blocks at the start (`<= mu.len()`).
    pub joints: usize,
}

impl<'a> SetFamily<'a> for ConeSet<'a> {
    #[inline]
    fn qp_class(self) -> ProblemClass {
        ProblemClass::Ccp
    }

    fn validate(self, n: usize) -> Result<()> {
        validate(self.mu, n, self.dim)?;
        validate_joints(self.mu, self.joints)
    }

    #[inline]
    fn block_size(self) -> usize {
        self.dim
    }

    #[inline]
    fn cone_dim(self) -> Option<usize> {
        Some(self.dim)
    }

    #[inline]
    fn project(self, x: &mut [f64]) {
        self.project_blocks(0, x)
    }

    #[inline]
    fn project_block(self, b: usize, x: &mut [f64]) {
        if b >= self.joints {
            project_coulomb_cone(x, self.mu[b])
        }
    }

    #[inline]
    fn project_blocks(self, first: usize, x: &mut [f64]) {
        // the joint blocks among them are left as they are (the identity)
        let skip = self.joints.saturating_sub(first).min(x.len() / self.dim);
        project(
            &self.mu[first + skip..],
            self.dim,
            &mut x[skip * self.dim..],
        )
    }

    #[inline]
    fn projected_gradient_block(self, b: usize, x: &[f64], g: &[f64], out: &mut [f64]) {
        let dim = self.dim;
        if b < self.joints {
            out[..dim].copy_from_slice(&g[..dim]);
            return;
        }
        out[..dim].copy_from_slice(&cone_projected_gradient(x, g, self.mu[b])[..dim]);
    }

    #[inline]
    fn residual_terms(self, b: usize, x: &[f64], gb: &[f64], acc: &mut ResidualTerms) {
        if b < self.joints {
            return free_residual_terms(x, gb, acc);
        }
        // m = 3, or 2 for 2-D cones (one tangent)
        let m = x.len();
        let mut buf = [0.0; 3];
        let mu = self.mu[b];
        buf[..m].copy_from_slice(gb);
        project_dual_coulomb_cone(&mut buf[..m], mu);
        for i in 0..m {
            let d = gb[i] - buf[i];
            acc.dual_feas2 += d * d;
        }
        let c = dot(x, gb);
        acc.comp_sum += c;
        acc.comp_max = acc.comp_max.max(c.abs());
        let (xt, gt) = if m == 3 {
            (x[1].hypot(x[2]), gb[1].hypot(gb[2]))
        } else {
            (x[1].abs(), gb[1].abs())
        };
        let dual = if mu > 0.0 { gt - gb[0] / mu } else { -gb[0] };
        acc.res3 = acc
            .res3
            .max(xt - mu * x[0])
            .max(-x[0])
            .max(dual)
            .max(c.abs());
        // Siconos fc3d / fc2d error: x - P_K(x - (g + mu ||g_T|| e_n))
        let ut = if m == 3 {
            gb[1].hypot(gb[2])
        } else {
            gb[1].abs()
        };
        buf[0] = x[0] - (gb[0] + mu * ut);
        for i in 1..m {
            buf[i] = x[i] - gb[i];
        }
        project_coulomb_cone(&mut buf[..m], mu);
        acc.fc3d2 += (0..m)
            .map(|i| (x[i] - buf[i]) * (x[i] - buf[i]))
            .sum::<f64>();
    }

    #[inline]
    fn friction(self) -> Option<&'a [f64]> {
        Some(self.mu)
    }

    fn summary(self) -> Vec<(&'static str, String)> {
        let dim = self.dim;
        let mut lines = vec![("cones", format!("{dim}-D (d = {dim})"))];
        if self.joints > 0 {
            let j = self.joints;
            lines.push((
                "joints",
                format!("{j} bilateral blocks (free, {} rows)", dim * j),
            ));
        }
        lines.push(mu_range_line(&self.mu[self.joints..]));
        lines
    }

    fn conic_pieces(self, _n: usize, out: &mut Vec<ConicPiece>) {
        let dim = self.dim;
        // a joint block: its unknowns unbounded (free intervals)
        out.extend((0..dim * self.joints).map(|j| ConicPiece::Interval {
            j,
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
        }));
        let cones = self.mu.iter().enumerate().skip(self.joints);
        out.extend(cones.map(|(c, &mu)| ConicPiece::Cone {
            b: dim * c,
            mu,
            dim,
        }));
    }

    #[inline]
    fn block_is_free(self, b: usize, x: &[f64]) -> bool {
        if b < self.joints {
            return true;
        }
        let m = self.mu[b];
        if m == 0.0 {
            x[0] > 0.0
        } else {
            tsq(x, x).sqrt() < m * x[0] * (1.0 - CONE_SURFACE_TOL)
        }
    }

    #[inline]
    fn restrict_free(self, b: usize, phi: &mut [f64]) {
        if b >= self.joints && self.mu[b] == 0.0 {
            // the half-line: only the normal direction is free
            phi[1..].iter_mut().for_each(|v| *v = 0.0);
        }
    }

    fn max_feasible_step(self, x: &[f64], d: &[f64]) -> (f64, Option<usize>) {
        let dim = self.dim;
        let mut best = (f64::INFINITY, None);
        for (c, (xc, dc)) in x.chunks_exact(dim).zip(d.chunks_exact(dim)).enumerate() {
            if c < self.joints || dc.iter().all(|&v| v == 0.0) {
                continue;
            }
            take_min(&mut best, cone_max_step(xc, dc, self.mu[c]), c);
        }
        best
    }

    #[inline]
    fn land_on_boundary(self, b: usize, x: &mut [f64], _d: &[f64]) {
        self.project_block(b, x)
    }
}

/// `x_t . y_t`, the tangential part of two cone blocks (of 3, or of 2 for a 2-D cone).
#[inline]
fn tsq(x: &[f64], y: &[f64]) -> f64 {
    if x.len() == 2 {
        x[1] * y[1]
    } else {
        x[1] * y[1] + x[2] * y[2]
    }
}

/// Largest `t >= 0` with `x - t d` in `K_mu` (`x` in `K_mu`, one contact block of 3, or of 2
/// for a 2-D cone).
fn cone_max_step(x: &[f64], d: &[f64], mu: f64) -> f64 {
    if mu == 0.0 {
        // the half-line {x_t = 0, x_n >= 0}
        if d[1..].iter().any(|&v| v != 0.0) {
            return 0.0;
        }
        return if d[0] > 0.0 {
            x[0].max(0.0) / d[0]
        } else {
            f64::INFINITY
        };
    }
    let t_n = if d[0] > 0.0 {
        x[0].max(0.0) / d[0]
    } else {
        f64::INFINITY
    };
    // q(t) = mu^2 (x_n - t d_n)^2 - ||x_t - t d_t||^2 = a t^2 + b t + c, feasible iff q >= 0
    // (and x_n - t d_n >= 0); q(0) = c >= 0 for a feasible x.
    let m2 = mu * mu;
    let a = m2 * d[0] * d[0] - tsq(d, d);
    let b = -2.0 * (m2 * x[0] * d[0] - tsq(x, d));
    let c = (m2 * x[0] * x[0] - tsq(x, x)).max(0.0);
    let t_q = if a == 0.0 {
        if b < 0.0 {
            c / -b
        } else {
            f64::INFINITY
        }
    } else {
        let disc = b * b - 4.0 * a * c;
        if disc < 0.0 {
            // no real root: q keeps the sign of a (a < 0 cannot happen with c >= 0)
            if a > 0.0 {
                f64::INFINITY
            } else {
                0.0
            }
        } else {
            // numerically stable roots r1 <= r2
            let sq = disc.sqrt();
            let qq = -0.5 * (b + b.signum() * sq);
            let (mut r1, mut r2) = if qq != 0.0 {
                (qq / a, c / qq)
            } else {
                (0.0, 0.0)
            };
            if r1 > r2 {
                std::mem::swap(&mut r1, &mut r2);
            }
            if a > 0.0 {
                // q < 0 on (r1, r2)
                if r1 >= 0.0 {
                    r1
                } else if r2 <= 0.0 {
                    f64::INFINITY
                } else {
                    0.0
                }
            } else {
                // q >= 0 on [r1, r2]
                r2.max(0.0)
            }
        }
    };
    t_n.min(t_q)
}
