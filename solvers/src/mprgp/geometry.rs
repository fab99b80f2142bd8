//! The active-set geometry of MPRGP and MPGP: which blocks are free, the free / chopped split of
//! the gradient, the reduced free gradient, the largest feasible step and the landing on the
//! boundary, for every [`ConstraintSet`] (an extension trait, so the iteration in [`super::core`]
//! reads `k.split_gradient(..)` as before).
//!
//! The projected gradient `g^P` itself ([`ConstraintSet::projected_gradient_block`]) and the
//! cone-surface tolerance [`CONE_SURFACE_TOL`] stay in `cpbench_problems`: the residual module
//! reports `||g^P||` with the same definition, so that both classify a block the same way.
//!
//! A new constraint class needs one arm in each method below (the scalar sets keep one tight
//! loop each: the hot path of MPRGP's CG steps); everything else here is generic.

use cpbench_problems::constraints::{project_coulomb_cone, CONE_SURFACE_TOL};
use cpbench_problems::ConstraintSet;

/// Gradient splitting and feasible steps of the active-set solvers (MPRGP, MPGP); the projected
/// gradient is shared with the residual module. Definitions: Dostal & Schoberl 2005 (Comput. Optim. Appl. 30), eq. (2.2)
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
///
/// No method allocates; all slices have the length `n` of the instance unless a method says it
/// takes one block.
pub(crate) trait ActiveSetGeometry {
    /// Whether block `b` (slice `x` of length [`ConstraintSet::block_size`]) is free (interior).
    /// `x` is assumed feasible.
    fn block_is_free(&self, b: usize, x: &[f64]) -> bool;

    /// Free gradient `phi` and chopped gradient `beta` of the whole vector (see the trait docs):
    /// `phi + beta = g^P`. Shapes: all of length `n`. No allocation.
    fn split_gradient(&self, x: &[f64], g: &[f64], phi: &mut [f64], beta: &mut [f64]);

    /// Reduced free gradient `phi~_alpha = (x - P_K(x - alpha phi)) / alpha` into `out`
    /// (Dostal & Kozubek 2012, eq. (2.6); for bounds `min(phi_i, (x_i - lo_i)/alpha)` where
    /// `phi_i > 0`, Dostal & Schoberl 2005). `alpha > 0`. Shapes: length `n`. No allocation.
    fn reduced_free_gradient(&self, x: &[f64], phi: &[f64], alpha: f64, out: &mut [f64]);

    /// `phi~_alpha^T phi` without forming `phi~` (see
    /// [`ActiveSetGeometry::reduced_free_gradient`]); `w` is scratch of length `n`, used only for
    /// cones. Boxes: `sum_i min(phi_i, (x_i - lo_i)/alpha) phi_i` over `phi_i > 0` and
    /// `max(phi_i, (x_i - hi_i)/alpha) phi_i` over `phi_i < 0`. No allocation.
    fn reduced_free_dot(&self, x: &[f64], phi: &[f64], alpha: f64, w: &mut [f64]) -> f64;

    /// Largest `t >= 0` with `x - t d` in `K` for a feasible `x`, and the block that blocks it
    /// (`(inf, None)` when no block does). Boxes: `min (x_i - lo_i)/d_i` over `d_i > 0` and
    /// `(x_i - hi_i)/d_i` over `d_i < 0` (finite bounds only). Cones: the smallest root of
    /// `mu^2 (x_n - t d_n)^2 = ||x_t - t d_t||^2` that leaves the cone, capped where `x_n - t d_n`
    /// turns negative; blocks with `d_b = 0` are skipped. Shapes: length `n`.
    fn max_feasible_step(&self, x: &[f64], d: &[f64]) -> (f64, Option<usize>);

    /// After the step `x - t d` with `t` the blocking step of block `b` (from
    /// [`ActiveSetGeometry::max_feasible_step`]), put that block exactly on the boundary it reached,
    /// so that it is classified as active: the bound for a box component (`lo` when `d > 0`,
    /// `hi` otherwise), the cone surface (by projection) for a cone. `x`, `d` are the block's
    /// slices.
    fn land_on_boundary(&self, b: usize, x: &mut [f64], d: &[f64]);
}

impl ActiveSetGeometry for ConstraintSet {
    #[inline]
    fn block_is_free(&self, b: usize, x: &[f64]) -> bool {
        match self {
            ConstraintSet::NonNegative => x[0] > 0.0,
            ConstraintSet::Box { lo, hi } => x[0] > lo[b] && x[0] < hi[b],
            ConstraintSet::CoulombCones { mu, .. } => {
                let m = mu[b];
                if m == 0.0 {
                    x[0] > 0.0
                } else {
                    tsq(x, x).sqrt() < m * x[0] * (1.0 - CONE_SURFACE_TOL)
                }
            }
            // the fixed square pyramid {x_n >= 0, |x_t,i| <= mu x_n} (MPRGP / MPGP refuse the
            // BLCP, whose bounds move; the geometry of its set is complete all the same)
            ConstraintSet::FrictionBox { mu } => {
                let h = mu[b] * x[0];
                x[0] > 0.0 && x[1].abs() < h && x[2].abs() < h
            }
        }
    }

    fn split_gradient(&self, x: &[f64], g: &[f64], phi: &mut [f64], beta: &mut [f64]) {
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
            ConstraintSet::CoulombCones { .. } | ConstraintSet::FrictionBox { .. } => {}
        }
        let bs = self.block_size();
        for b in 0..x.len() / bs {
            let s = b * bs..(b + 1) * bs;
            let (xb, gb) = (&x[s.clone()], &g[s.clone()]);
            if self.block_is_free(b, xb) {
                phi[s.clone()].copy_from_slice(gb);
                if let ConstraintSet::CoulombCones { mu, .. } = self {
                    if mu[b] == 0.0 {
                        // the half-line: only the normal direction is free
                        phi[b * bs + 1..(b + 1) * bs]
                            .iter_mut()
                            .for_each(|v| *v = 0.0);
                    }
                }
                beta[s].iter_mut().for_each(|v| *v = 0.0);
            } else {
                phi[s.clone()].iter_mut().for_each(|v| *v = 0.0);
                self.projected_gradient_block(b, xb, gb, &mut beta[s]);
            }
        }
    }

    fn reduced_free_gradient(&self, x: &[f64], phi: &[f64], alpha: f64, out: &mut [f64]) {
        for ((o, xi), pi) in out.iter_mut().zip(x).zip(phi) {
            *o = xi - alpha * pi;
        }
        self.project(out);
        for (o, xi) in out.iter_mut().zip(x) {
            *o = (xi - *o) / alpha;
        }
    }

    fn reduced_free_dot(&self, x: &[f64], phi: &[f64], alpha: f64, w: &mut [f64]) -> f64 {
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
            ConstraintSet::CoulombCones { .. } | ConstraintSet::FrictionBox { .. } => {
                self.reduced_free_gradient(x, phi, alpha, w);
                w.iter().zip(phi).map(|(a, b)| a * b).sum()
            }
        }
    }

    fn max_feasible_step(&self, x: &[f64], d: &[f64]) -> (f64, Option<usize>) {
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
            ConstraintSet::CoulombCones { mu, dim } => {
                for (c, (xc, dc)) in x.chunks_exact(*dim).zip(d.chunks_exact(*dim)).enumerate() {
                    if dc.iter().all(|&v| v == 0.0) {
                        continue;
                    }
                    take(cone_max_step(xc, dc, mu[c]), c);
                }
            }
            ConstraintSet::FrictionBox { mu } => {
                // rows a.x >= 0 of the pyramid: x_n, mu x_n -+ x_t,i; a.(x - t d) >= 0
                for (c, (xc, dc)) in x.chunks_exact(3).zip(d.chunks_exact(3)).enumerate() {
                    let m = mu[c];
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
                            take((ax / ad).max(0.0), c);
                        }
                    }
                }
            }
        }
        best
    }

    fn land_on_boundary(&self, b: usize, x: &mut [f64], d: &[f64]) {
        match self {
            ConstraintSet::NonNegative => x[0] = 0.0,
            ConstraintSet::Box { lo, hi } => x[0] = if d[0] > 0.0 { lo[b] } else { hi[b] },
            ConstraintSet::CoulombCones { mu, .. } => project_coulomb_cone(x, mu[b]),
            ConstraintSet::FrictionBox { mu } => {
                cpbench_problems::constraints::friction_box::clamp_friction_box(x, mu[b])
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let k = ConstraintSet::coulomb(vec![0.5, 0.5, 0.5, 0.0]);
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
        let k = ConstraintSet::coulomb(vec![0.5]);
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
        let k0 = ConstraintSet::coulomb(vec![0.0]);
        assert_eq!(k0.max_feasible_step(&x, &[0.0, 1.0, 0.0]).0, 0.0);
        assert_eq!(k0.max_feasible_step(&x, &[0.5, 0.0, 0.0]).0, 2.0);
    }
}
