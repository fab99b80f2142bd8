//! Constraint sets `K` and their Euclidean projections.
//!
//! Conventions (formulation.md sections 2 and 3): Coulomb cones are stored contact by contact,
//! normal component first, then the two tangential components (fclib order).
//! `K_mu = {(x_n, x_t) : ||x_t|| <= mu x_n}`; its dual is `K_mu^* = K_{1/mu}`.

use crate::error::{ProblemError, Result};
use serde::{Deserialize, Serialize};

/// The feasible set of an instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConstraintSet {
    /// `gamma >= 0` (linear complementarity problem).
    NonNegative,
    /// `lo <= gamma <= hi` componentwise; entries may be `-inf` / `+inf` (box-constrained QP).
    Box {
        /// Lower bounds (length `n`).
        lo: Vec<f64>,
        /// Upper bounds (length `n`).
        hi: Vec<f64>,
    },
    /// Product of Coulomb friction cones, one per contact, 3 unknowns per contact.
    CoulombCones {
        /// Friction coefficient of each contact (length `n / 3`), `mu >= 0`.
        mu: Vec<f64>,
    },
}

/// The problem class implied by a constraint set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemClass {
    /// Linear complementarity problem (`gamma >= 0`).
    Lcp,
    /// Box-constrained convex QP.
    BoxQp,
    /// Cone complementarity problem with Coulomb cones (Anitescu's convex relaxation).
    Ccp,
    /// The true (non-associated) Coulomb friction problem of fclib and Siconos on the same
    /// cones: find `r in K_mu` with `u + mu ||u_T|| e_n in K^*` orthogonal to `r`, `u = W r + q`
    /// (formulation.md section 2). Not a QP: the QP solvers do not support it.
    Coulomb,
}

impl ProblemClass {
    /// Every class, in the order of the enum.
    pub const ALL: [ProblemClass; 4] = [
        ProblemClass::Lcp,
        ProblemClass::BoxQp,
        ProblemClass::Ccp,
        ProblemClass::Coulomb,
    ];

    /// Short lower-case name used in CSV files and on the command line (`lcp`, `box`, `ccp`,
    /// `coulomb`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemClass::Lcp => "lcp",
            ProblemClass::BoxQp => "box",
            ProblemClass::Ccp => "ccp",
            ProblemClass::Coulomb => "coulomb",
        }
    }

    /// Whether the class is a convex QP `min 1/2 gamma^T N gamma + r^T gamma, gamma in K` (LCP,
    /// box QP, CCP): the classes the QP solvers handle. False for [`ProblemClass::Coulomb`].
    pub fn is_qp(self) -> bool {
        !matches!(self, ProblemClass::Coulomb)
    }
}

impl std::fmt::Display for ProblemClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ConstraintSet {
    /// The QP class this set defines (cones give [`ProblemClass::Ccp`]; an instance may instead
    /// be the Coulomb problem on the same cones, see `Instance::class`).
    pub fn class(&self) -> ProblemClass {
        match self {
            ConstraintSet::NonNegative => ProblemClass::Lcp,
            ConstraintSet::Box { .. } => ProblemClass::BoxQp,
            ConstraintSet::CoulombCones { .. } => ProblemClass::Ccp,
        }
    }

    /// Check the set against the problem size `n`: box lengths and `lo <= hi` (no NaN),
    /// `n` a multiple of 3 and `mu` finite, non-negative, of length `n / 3` for cones.
    pub fn validate(&self, n: usize) -> Result<()> {
        match self {
            ConstraintSet::NonNegative => Ok(()),
            ConstraintSet::Box { lo, hi } => {
                for (what, v) in [("lo", lo), ("hi", hi)] {
                    if v.len() != n {
                        return Err(ProblemError::SizeMismatch {
                            what: what.into(),
                            expected: n,
                            found: v.len(),
                        });
                    }
                }
                for (i, (&l, &h)) in lo.iter().zip(hi).enumerate() {
                    if l.is_nan() || h.is_nan() || l == f64::INFINITY || h == f64::NEG_INFINITY {
                        return Err(ProblemError::NonFinite {
                            what: if l.is_nan() || l == f64::INFINITY {
                                "lo"
                            } else {
                                "hi"
                            }
                            .into(),
                            position: format!("[{i}]"),
                            value: if l.is_nan() || l == f64::INFINITY {
                                l
                            } else {
                                h
                            },
                        });
                    }
                    if l > h {
                        return Err(ProblemError::EmptyBox {
                            index: i,
                            lo: l,
                            hi: h,
                        });
                    }
                }
                Ok(())
            }
            ConstraintSet::CoulombCones { mu } => {
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
        }
    }

    /// Size of a block: 3 for cones, 1 otherwise.
    pub fn block_size(&self) -> usize {
        match self {
            ConstraintSet::CoulombCones { .. } => 3,
            _ => 1,
        }
    }

    /// Project `x` onto the set, in place. `x` has length `n`.
    #[inline]
    pub fn project(&self, x: &mut [f64]) {
        match self {
            ConstraintSet::NonNegative => x.iter_mut().for_each(|v| *v = v.max(0.0)),
            ConstraintSet::Box { lo, hi } => {
                for ((v, &l), &h) in x.iter_mut().zip(lo).zip(hi) {
                    *v = v.clamp(l, h);
                }
            }
            ConstraintSet::CoulombCones { mu } => {
                for (xc, &m) in x.chunks_exact_mut(3).zip(mu) {
                    project_coulomb_cone(xc, m);
                }
            }
        }
    }

    /// Project block `b` (a component for LCP/box, a contact triple for cones) in place.
    /// `x` is that block's slice (length [`ConstraintSet::block_size`]).
    #[inline]
    pub fn project_block(&self, b: usize, x: &mut [f64]) {
        match self {
            ConstraintSet::NonNegative => x[0] = x[0].max(0.0),
            ConstraintSet::Box { lo, hi } => x[0] = x[0].clamp(lo[b], hi[b]),
            ConstraintSet::CoulombCones { mu } => project_coulomb_cone(x, mu[b]),
        }
    }
}

/// Relative tolerance deciding that a Coulomb-cone block lies on the cone surface:
/// `||x_t|| >= mu x_n (1 - CONE_SURFACE_TOL)` counts as the surface (active), anything strictly
/// inside that as the interior (free). Used by the residual module and by MPRGP / MPGP, so that
/// both classify a block the same way.
pub const CONE_SURFACE_TOL: f64 = 1e-12;

/// Gradient splitting and feasible steps shared by the residual module and the active-set
/// solvers (MPRGP, MPGP). Definitions: Dostal & Schoberl 2005 (Comput. Optim. Appl. 30), eq. (2.2)
/// for bounds; Dostal & Kozubek 2012 (Math. Program. 135), section 2, for separable convex sets.
///
/// A block (a component for LCP and box, a contact triple for cones) is *free* when it lies in
/// the interior of its set and *active* on its boundary. With `g = N x + r`:
/// - the projected gradient `g^P = -P_{T_K(x)}(-g)` (`T_K(x)` the tangent cone at `x`);
/// - the free gradient `phi`: `g` on free blocks, `0` on active blocks;
/// - the chopped gradient `beta = g^P - phi`: `0` on free blocks, `g^P` on active blocks;
/// - the reduced free gradient `phi~_alpha = (x - P_K(x - alpha phi)) / alpha`.
///
/// Special blocks: a box component with `lo = hi` is fixed (`T_K = {0}`, `g^P = 0`); a cone with
/// `mu = 0` is the half-line `{x_t = 0, x_n >= 0}`: its free gradient is `(g_n, 0, 0)` when
/// `x_n > 0`, and its projected gradient never has tangential components.
impl ConstraintSet {
    /// Whether block `b` (slice `x` of length [`ConstraintSet::block_size`]) is free (interior).
    /// `x` is assumed feasible.
    #[inline]
    pub fn block_is_free(&self, b: usize, x: &[f64]) -> bool {
        match self {
            ConstraintSet::NonNegative => x[0] > 0.0,
            ConstraintSet::Box { lo, hi } => x[0] > lo[b] && x[0] < hi[b],
            ConstraintSet::CoulombCones { mu } => {
                let m = mu[b];
                if m == 0.0 {
                    x[0] > 0.0
                } else {
                    (x[1] * x[1] + x[2] * x[2]).sqrt() < m * x[0] * (1.0 - CONE_SURFACE_TOL)
                }
            }
        }
    }

    /// Projected gradient `g^P = -P_{T_K(x)}(-g)` of block `b` into `out` (all slices of the
    /// block's length): box `g` where free, `min(g, 0)` at a lower, `max(g, 0)` at an upper
    /// bound, `0` for a fixed component; cone: see [`cone_projected_gradient`].
    #[inline]
    pub fn projected_gradient_block(&self, b: usize, x: &[f64], g: &[f64], out: &mut [f64]) {
        match self {
            ConstraintSet::NonNegative => {
                out[0] = if x[0] > 0.0 { g[0] } else { g[0].min(0.0) };
            }
            ConstraintSet::Box { lo, hi } => {
                let (l, h, xi, gi) = (lo[b], hi[b], x[0], g[0]);
                out[0] = if xi <= l && xi >= h {
                    0.0
                } else if xi <= l {
                    gi.min(0.0)
                } else if xi >= h {
                    gi.max(0.0)
                } else {
                    gi
                };
            }
            ConstraintSet::CoulombCones { mu } => {
                out[..3].copy_from_slice(&cone_projected_gradient(x, g, mu[b]));
            }
        }
    }

    /// Free gradient `phi` and chopped gradient `beta` of the whole vector (see the impl docs):
    /// `phi + beta = g^P`. Shapes: all of length `n`. No allocation.
    pub fn split_gradient(&self, x: &[f64], g: &[f64], phi: &mut [f64], beta: &mut [f64]) {
        // scalar sets: one tight loop (the hot path of MPRGP's CG steps)
        match self {
            ConstraintSet::NonNegative => {
                for (((&xi, &gi), f), b) in x.iter().zip(g).zip(phi.iter_mut()).zip(beta.iter_mut())
                {
                    if xi > 0.0 {
                        (*f, *b) = (gi, 0.0);
                    } else {
                        (*f, *b) = (0.0, gi.min(0.0));
                    }
                }
                return;
            }
            ConstraintSet::Box { lo, hi } => {
                for i in 0..x.len() {
                    let (xi, gi, l, h) = (x[i], g[i], lo[i], hi[i]);
                    if xi > l && xi < h {
                        (phi[i], beta[i]) = (gi, 0.0);
                    } else {
                        phi[i] = 0.0;
                        beta[i] = if xi <= l && xi >= h {
                            0.0
                        } else if xi <= l {
                            gi.min(0.0)
                        } else {
                            gi.max(0.0)
                        };
                    }
                }
                return;
            }
            ConstraintSet::CoulombCones { .. } => {}
        }
        let bs = self.block_size();
        for b in 0..x.len() / bs {
            let s = b * bs..(b + 1) * bs;
            let (xb, gb) = (&x[s.clone()], &g[s.clone()]);
            if self.block_is_free(b, xb) {
                phi[s.clone()].copy_from_slice(gb);
                if let ConstraintSet::CoulombCones { mu } = self {
                    if mu[b] == 0.0 {
                        // the half-line: only the normal direction is free
                        phi[b * 3 + 1] = 0.0;
                        phi[b * 3 + 2] = 0.0;
                    }
                }
                beta[s].iter_mut().for_each(|v| *v = 0.0);
            } else {
                phi[s.clone()].iter_mut().for_each(|v| *v = 0.0);
                self.projected_gradient_block(b, xb, gb, &mut beta[s]);
            }
        }
    }

    /// Reduced free gradient `phi~_alpha = (x - P_K(x - alpha phi)) / alpha` into `out`
    /// (Dostal & Kozubek 2012, eq. (2.6); for bounds `min(phi_i, (x_i - lo_i)/alpha)` where
    /// `phi_i > 0`, Dostal & Schoberl 2005). `alpha > 0`. Shapes: length `n`. No allocation.
    pub fn reduced_free_gradient(&self, x: &[f64], phi: &[f64], alpha: f64, out: &mut [f64]) {
        for ((o, xi), pi) in out.iter_mut().zip(x).zip(phi) {
            *o = xi - alpha * pi;
        }
        self.project(out);
        for (o, xi) in out.iter_mut().zip(x) {
            *o = (xi - *o) / alpha;
        }
    }

    /// `phi~_alpha^T phi` without forming `phi~` (see
    /// [`ConstraintSet::reduced_free_gradient`]); `w` is scratch of length `n`, used only for
    /// cones. Boxes: `sum_i min(phi_i, (x_i - lo_i)/alpha) phi_i` over `phi_i > 0` and
    /// `max(phi_i, (x_i - hi_i)/alpha) phi_i` over `phi_i < 0`. No allocation.
    pub fn reduced_free_dot(&self, x: &[f64], phi: &[f64], alpha: f64, w: &mut [f64]) -> f64 {
        let ia = 1.0 / alpha;
        match self {
            ConstraintSet::NonNegative => x
                .iter()
                .zip(phi)
                .map(|(&xi, &fi)| {
                    if fi > 0.0 {
                        fi.min(xi * ia) * fi
                    } else {
                        fi * fi
                    }
                })
                .sum(),
            ConstraintSet::Box { lo, hi } => {
                let mut s = 0.0;
                for i in 0..x.len() {
                    let fi = phi[i];
                    s += if fi > 0.0 {
                        fi.min((x[i] - lo[i]) * ia) * fi
                    } else if fi < 0.0 {
                        fi.max((x[i] - hi[i]) * ia) * fi
                    } else {
                        0.0
                    };
                }
                s
            }
            ConstraintSet::CoulombCones { .. } => {
                self.reduced_free_gradient(x, phi, alpha, w);
                w.iter().zip(phi).map(|(a, b)| a * b).sum()
            }
        }
    }

    /// Largest `t >= 0` with `x - t d` in `K` for a feasible `x`, and the block that blocks it
    /// (`(inf, None)` when no block does). Boxes: `min (x_i - lo_i)/d_i` over `d_i > 0` and
    /// `(x_i - hi_i)/d_i` over `d_i < 0` (finite bounds only). Cones: the smallest root of
    /// `mu^2 (x_n - t d_n)^2 = ||x_t - t d_t||^2` that leaves the cone, capped where `x_n - t d_n`
    /// turns negative; blocks with `d_b = 0` are skipped. Shapes: length `n`.
    pub fn max_feasible_step(&self, x: &[f64], d: &[f64]) -> (f64, Option<usize>) {
        let mut best = (f64::INFINITY, None);
        let mut take = |t: f64, b: usize| {
            if t < best.0 {
                best = (t, Some(b));
            }
        };
        match self {
            ConstraintSet::NonNegative => {
                for (i, (&xi, &di)) in x.iter().zip(d).enumerate() {
                    if di > 0.0 {
                        take(xi.max(0.0) / di, i);
                    }
                }
            }
            ConstraintSet::Box { lo, hi } => {
                for (i, (&xi, &di)) in x.iter().zip(d).enumerate() {
                    if di > 0.0 && lo[i] > f64::NEG_INFINITY {
                        take(((xi - lo[i]) / di).max(0.0), i);
                    } else if di < 0.0 && hi[i] < f64::INFINITY {
                        take(((xi - hi[i]) / di).max(0.0), i);
                    }
                }
            }
            ConstraintSet::CoulombCones { mu } => {
                for (c, (xc, dc)) in x.chunks_exact(3).zip(d.chunks_exact(3)).enumerate() {
                    if dc.iter().all(|&v| v == 0.0) {
                        continue;
                    }
                    take(cone_max_step(xc, dc, mu[c]), c);
                }
            }
        }
        best
    }

    /// After the step `x - t d` with `t` the blocking step of block `b` (from
    /// [`ConstraintSet::max_feasible_step`]), put that block exactly on the boundary it reached,
    /// so that it is classified as active: the bound for a box component (`lo` when `d > 0`,
    /// `hi` otherwise), the cone surface (by projection) for a cone. `x`, `d` are the block's
    /// slices.
    pub fn land_on_boundary(&self, b: usize, x: &mut [f64], d: &[f64]) {
        match self {
            ConstraintSet::NonNegative => x[0] = 0.0,
            ConstraintSet::Box { lo, hi } => x[0] = if d[0] > 0.0 { lo[b] } else { hi[b] },
            ConstraintSet::CoulombCones { mu } => project_coulomb_cone(x, mu[b]),
        }
    }
}

/// Largest `t >= 0` with `x - t d` in `K_mu` (`x` in `K_mu`, one contact triple).
fn cone_max_step(x: &[f64], d: &[f64], mu: f64) -> f64 {
    if mu == 0.0 {
        // the half-line {x_t = 0, x_n >= 0}
        if d[1] != 0.0 || d[2] != 0.0 {
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
    let a = m2 * d[0] * d[0] - (d[1] * d[1] + d[2] * d[2]);
    let b = -2.0 * (m2 * x[0] * d[0] - (x[1] * d[1] + x[2] * d[2]));
    let c = (m2 * x[0] * x[0] - (x[1] * x[1] + x[2] * x[2])).max(0.0);
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

/// Projected gradient `g^P = -P_{T_K(x)}(-g)` of one Coulomb-cone block at a feasible `x`
/// (formulation.md section 4): interior (`||x_t|| < mu x_n (1 - CONE_SURFACE_TOL)`): `g`; apex
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
/// (formulation.md section 3; Tasora & Anitescu 2011, eq. 30):
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

    #[test]
    fn split_gradient_box_and_fixed_component() {
        // x = (lo, hi, free, fixed), g = (-1, -1, 2, 5)
        let k = ConstraintSet::Box {
            lo: vec![0.0, 0.0, 0.0, 1.0],
            hi: vec![1.0, 1.0, 1.0, 1.0],
        };
        let x = [0.0, 1.0, 0.5, 1.0];
        let g = [-1.0, -1.0, 2.0, 5.0];
        let (mut phi, mut beta) = ([0.0; 4], [0.0; 4]);
        k.split_gradient(&x, &g, &mut phi, &mut beta);
        assert_eq!(phi, [0.0, 0.0, 2.0, 0.0]);
        // at lo: min(g, 0) = -1; at hi: max(g, 0) = 0; fixed: 0
        assert_eq!(beta, [-1.0, 0.0, 0.0, 0.0]);
        // reduced free gradient: min(phi, (x - lo)/alpha) = min(2, 0.5/0.5) = 1
        let mut r = [0.0; 4];
        k.reduced_free_gradient(&x, &phi, 0.5, &mut r);
        assert_eq!(r, [0.0, 0.0, 1.0, 0.0]);
        // largest feasible step along -d
        let d = [0.0, 0.0, 0.25, 0.0];
        assert_eq!(k.max_feasible_step(&x, &d), (2.0, Some(2)));
        let d = [0.0, 0.0, -1.0, 0.0];
        assert_eq!(k.max_feasible_step(&x, &d), (0.5, Some(2)));
        let mut xb = [0.5];
        k.land_on_boundary(2, &mut xb, &[-1.0]);
        assert_eq!(xb, [1.0]);
    }

    #[test]
    fn split_gradient_cone_sums_to_projected_gradient() {
        let k = ConstraintSet::CoulombCones {
            mu: vec![0.5, 0.5, 0.5, 0.0],
        };
        // interior, surface, apex, mu = 0 half-line
        let x = [1.0, 0.1, 0.0, 2.0, 0.6, 0.8, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        let g = [
            0.3, -0.2, 0.7, -1.0, 0.5, 0.5, -1.0, 3.0, 0.0, 2.0, 1.0, -1.0,
        ];
        let (mut phi, mut beta) = ([0.0; 12], [0.0; 12]);
        k.split_gradient(&x, &g, &mut phi, &mut beta);
        assert_eq!(&phi[..3], &g[..3]);
        assert_eq!(&beta[..3], &[0.0; 3]);
        assert_eq!(&phi[3..9], &[0.0; 6]);
        assert_eq!(&phi[9..], &[2.0, 0.0, 0.0]);
        assert_eq!(&beta[9..], &[0.0; 3]);
        let mut gp = [0.0; 3];
        for b in 0..4 {
            let s = 3 * b..3 * b + 3;
            k.projected_gradient_block(b, &x[s.clone()], &g[s.clone()], &mut gp);
            for i in 0..3 {
                assert!((phi[3 * b + i] + beta[3 * b + i] - gp[i]).abs() < 1e-15);
            }
        }
        // surface block: -g^P is in the tangent half-space {a.d <= 0}, a = (-mu, x_t/|x_t|)
        let a = [-0.5, 0.6, 0.8];
        let ad: f64 = (0..3).map(|i| -a[i] * beta[3 + i]).sum();
        assert!(ad <= 1e-15);
        assert!(!k.block_is_free(1, &x[3..6]) && k.block_is_free(0, &x[..3]));
    }

    #[test]
    fn cone_max_feasible_step() {
        let k = ConstraintSet::CoulombCones { mu: vec![0.5] };
        let x = [1.0, 0.0, 0.0];
        // y = (1, t, 0) leaves the cone at t = 0.5
        let (t, b) = k.max_feasible_step(&x, &[0.0, -1.0, 0.0]);
        assert!((t - 0.5).abs() < 1e-15 && b == Some(0));
        // y = (1 - t, 0, 0) reaches the apex at t = 1
        assert!((k.max_feasible_step(&x, &[1.0, 0.0, 0.0]).0 - 1.0).abs() < 1e-15);
        // y = (1 + t, 0, 0): never leaves
        assert_eq!(k.max_feasible_step(&x, &[-1.0, 0.0, 0.0]).0, f64::INFINITY);
        // y = (1 - t/2, -t/2, 0): t/2 <= (1 - t/2)/2 until t = 2/3
        let t = k.max_feasible_step(&x, &[0.5, 0.5, 0.0]).0;
        assert!((t - 2.0 / 3.0).abs() < 1e-15, "{t}");
        // after the step the point lies on the surface
        let mut y = [1.0 - t * 0.5, -t * 0.5, 0.0];
        k.land_on_boundary(0, &mut y, &[0.5, 0.5, 0.0]);
        assert!(!k.block_is_free(0, &y));
        // mu = 0: any tangential motion is blocked at once
        let k0 = ConstraintSet::CoulombCones { mu: vec![0.0] };
        assert_eq!(k0.max_feasible_step(&x, &[0.0, 1.0, 0.0]).0, 0.0);
        assert_eq!(k0.max_feasible_step(&x, &[0.5, 0.0, 0.0]).0, 2.0);
    }

    #[test]
    fn validate_rejects_bad_sets() {
        let c = ConstraintSet::CoulombCones {
            mu: vec![0.5, -0.1],
        };
        assert!(matches!(
            c.validate(6),
            Err(ProblemError::NegativeMu { contact: 1, .. })
        ));
        assert!(matches!(
            c.validate(5),
            Err(ProblemError::NotMultipleOfThree { n: 5 })
        ));
        let b = ConstraintSet::Box {
            lo: vec![0.0, 2.0],
            hi: vec![1.0, 1.0],
        };
        assert!(matches!(
            b.validate(2),
            Err(ProblemError::EmptyBox { index: 1, .. })
        ));
        let b = ConstraintSet::Box {
            lo: vec![f64::NEG_INFINITY],
            hi: vec![f64::INFINITY],
        };
        assert!(b.validate(1).is_ok());
    }
}
