//! Friction boxes with moving bounds ([`super::ConstraintSet::FrictionBox`], the boxed LCP
//! `blcp` of ODE-style engines; docs/formulation.md section "Robotics formulations"): blocks of
//! 3 components per contact, normal first, then the two tangential components (fclib order),
//!
//! `gamma_n >= 0`, `-mu gamma_n <= gamma_t,i <= mu gamma_n` (`i = 1, 2`),
//!
//! a square pyramid circumscribing the Coulomb cone `K_mu` (its corners reach `sqrt(2) mu gamma_n`).
//! The bounds of the tangents move with the normal component, so the problem is a
//! quasi-variational inequality, not a QP: each "projection" here holds the tangential bounds at
//! a given normal value (ODE's rule, Smith's Open Dynamics Engine `dxQuickStepper`; Baraff 1994
//! for the boxed LCP), which is what the natural map, projected Gauss-Seidel and the
//! feasibility residual of the class use.

use super::family::{take_min, ConicPiece, ResidualTerms, SetFamily};
use super::ProblemClass;
use crate::error::Result;

/// Check `mu` against the problem size `n`: as for Coulomb cones (`n` a multiple of 3, `mu` of
/// length `n / 3`, finite, non-negative). Errors: those of [`super::cones`]'s validation.
pub(super) fn validate(mu: &[f64], n: usize) -> Result<()> {
    super::cones::validate(mu, n, 3)
}

/// ODE's clamp of one block `x = (x_n, x_t1, x_t2)` in place: `x_n <- max(x_n, 0)`, then each
/// tangent clamped to `[-mu x_n, mu x_n]` with the *new* `x_n`. The identity on the feasible
/// set and onto it otherwise (not the Euclidean projection onto the pyramid: the normal is not
/// raised to make room for large tangents).
#[inline]
pub fn clamp_friction_box(x: &mut [f64], mu: f64) {
    x[0] = x[0].max(0.0);
    let b = mu * x[0];
    for t in &mut x[1..3] {
        *t = t.clamp(-b, b);
    }
}

/// Clamp `y` (one block) with the tangential bounds held at the normal value `xn` of the
/// current iterate: `y_n <- max(y_n, 0)`, `y_t,i <- clamp(y_t,i, -mu max(xn, 0), mu max(xn, 0))`.
/// The projection of the BLCP natural map `x - P_{B(x)}(x - g)` (bounds frozen at `x`).
#[inline]
pub fn clamp_at(y: &mut [f64], xn: f64, mu: f64) {
    y[0] = y[0].max(0.0);
    let b = mu * xn.max(0.0);
    for t in &mut y[1..3] {
        *t = t.clamp(-b, b);
    }
}

/// Project `x` (length `3 mu.len()`) block by block with [`clamp_friction_box`], in place.
#[inline]
pub(super) fn project(mu: &[f64], x: &mut [f64]) {
    for (xc, &m) in x.chunks_exact_mut(3).zip(mu) {
        clamp_friction_box(xc, m);
    }
}

/// Projected gradient of one block at a feasible `x`, the bounds held at `x_n`: normal as for
/// `gamma >= 0` (`g_n` if `x_n > 0`, else `min(g_n, 0)`), each tangent as a box component in
/// `[-mu x_n, mu x_n]` (`g` where free, `min(g, 0)` at the lower, `max(g, 0)` at the upper
/// bound, `0` when both bounds coincide, `x_n = 0` or `mu = 0`).
#[inline]
pub(super) fn projected_gradient(x: &[f64], g: &[f64], mu: f64) -> [f64; 3] {
    let pn = super::nonneg::projected_gradient(x[0], g[0]);
    let b = mu * x[0].max(0.0);
    let pt = |i: usize| super::boxes::projected_gradient(-b, b, x[i], g[i]);
    [pn, pt(1), pt(2)]
}

/// The view of friction boxes for [`SetFamily`].
#[derive(Clone, Copy, Debug)]
pub struct FrictionBoxSet<'a> {
    /// Friction coefficient of each contact (length `n / 3`).
    pub mu: &'a [f64],
}

impl<'a> SetFamily<'a> for FrictionBoxSet<'a> {
    #[inline]
    fn qp_class(self) -> ProblemClass {
        ProblemClass::Blcp
    }

    fn validate(self, n: usize) -> Result<()> {
        validate(self.mu, n)
    }

    #[inline]
    fn block_size(self) -> usize {
        3
    }

    #[inline]
    fn project(self, x: &mut [f64]) {
        project(self.mu, x)
    }

    #[inline]
    fn project_block(self, b: usize, x: &mut [f64]) {
        clamp_friction_box(x, self.mu[b])
    }

    #[inline]
    fn project_blocks(self, first: usize, x: &mut [f64]) {
        project(&self.mu[first..], x)
    }

    #[inline]
    fn project_at(self, b: usize, x: &[f64], y: &mut [f64]) {
        clamp_at(y, x[0], self.mu[b])
    }

    #[inline]
    fn projected_gradient_block(self, b: usize, x: &[f64], g: &[f64], out: &mut [f64]) {
        out[..3].copy_from_slice(&projected_gradient(x, g, self.mu[b]));
    }

    #[inline]
    fn residual_terms(self, b: usize, x: &[f64], gb: &[f64], acc: &mut ResidualTerms) {
        // normal: gamma_n >= 0 with g_n >= 0; tangents: a box [-mu x_n, mu x_n] with
        // finite bounds, which absorbs any sign of g_t (no dual infeasibility)
        let d = gb[0].min(0.0);
        acc.dual_feas2 += d * d;
        let h = self.mu[b] * x[0].max(0.0);
        let mut c = (x[0] * gb[0]).abs();
        for i in 1..3 {
            c += gb[i].max(0.0) * (x[i] + h) + (-gb[i]).max(0.0) * (h - x[i]);
        }
        acc.comp_sum += c;
        acc.comp_max = acc.comp_max.max(c);
        let over = (x[1].abs().max(x[2].abs()) - h).max(-x[0]);
        acc.res3 = acc.res3.max(over).max(-gb[0]).max(c);
    }

    #[inline]
    fn friction(self) -> Option<&'a [f64]> {
        Some(self.mu)
    }

    fn conic_pieces(self, _n: usize, out: &mut Vec<ConicPiece>) {
        out.extend(
            self.mu
                .iter()
                .enumerate()
                .map(|(c, &mu)| ConicPiece::FrictionPyramid { b: 3 * c, mu }),
        );
    }

    // The geometry of the fixed square pyramid {x_n >= 0, |x_t,i| <= mu x_n} (MPRGP / MPGP
    // refuse the BLCP, whose bounds move; the geometry of its set is complete all the same).
    #[inline]
    fn block_is_free(self, b: usize, x: &[f64]) -> bool {
        let h = self.mu[b] * x[0];
        x[0] > 0.0 && x[1].abs() < h && x[2].abs() < h
    }

    fn max_feasible_step(self, x: &[f64], d: &[f64]) -> (f64, Option<usize>) {
        let mut best = (f64::INFINITY, None);
        // rows a.x >= 0 of the pyramid: x_n, mu x_n -+ x_t,i; a.(x - t d) >= 0
        for (c, (xc, dc)) in x.chunks_exact(3).zip(d.chunks_exact(3)).enumerate() {
            let m = self.mu[c];
            let rows = [
                [1.0, 0.0, 0.0],
                [m, -1.0, 0.0],
                [m, 1.0, 0.0],
                [m, 0.0, -1.0],
                [m, 0.0, 1.0],
            ];
            for a in rows {
                let ad = a[0] * dc[0] + a[1] * dc[1] + a[2] * dc[2];
                if ad > 0.0 {
                    let ax = a[0] * xc[0] + a[1] * xc[1] + a[2] * xc[2];
                    take_min(&mut best, (ax / ad).max(0.0), c);
                }
            }
        }
        best
    }

    #[inline]
    fn land_on_boundary(self, b: usize, x: &mut [f64], _d: &[f64]) {
        clamp_friction_box(x, self.mu[b])
    }
}
