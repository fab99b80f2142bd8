//! Boxes `lo <= gamma <= hi` componentwise ([`super::ConstraintSet::Box`], the box-constrained
//! QP): blocks of one component; bounds may be `-inf` / `+inf`, a component with `lo = hi` is
//! fixed.

use super::family::{take_min, ConicPiece, ResidualTerms, SetFamily};
use super::ProblemClass;
use crate::error::{ProblemError, Result};

/// Check `lo`, `hi` against the problem size `n`: lengths `n`, no NaN, `lo < +inf`,
/// `hi > -inf`, `lo <= hi`. Errors: [`ProblemError::SizeMismatch`], [`ProblemError::NonFinite`],
/// [`ProblemError::EmptyBox`].
pub(super) fn validate(lo: &[f64], hi: &[f64], n: usize) -> Result<()> {
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

/// Clamp `x` into `[lo, hi]` componentwise, in place (all of one length).
#[inline]
pub(super) fn project(lo: &[f64], hi: &[f64], x: &mut [f64]) {
    for ((v, &l), &h) in x.iter_mut().zip(lo).zip(hi) {
        *v = v.clamp(l, h);
    }
}

/// Projected gradient of one component at a feasible `x` with bounds `l <= h`: `g` where free,
/// `min(g, 0)` at a lower, `max(g, 0)` at an upper bound, `0` for a fixed component.
#[inline]
pub(super) fn projected_gradient(l: f64, h: f64, xi: f64, gi: f64) -> f64 {
    if xi <= l && xi >= h {
        0.0
    } else if xi <= l {
        gi.min(0.0)
    } else if xi >= h {
        gi.max(0.0)
    } else {
        gi
    }
}

/// The view of boxes `lo <= gamma <= hi` for [`SetFamily`].
#[derive(Clone, Copy, Debug)]
pub struct BoxSet<'a> {
    /// Lower bounds (length `n`).
    pub lo: &'a [f64],
    /// Upper bounds (length `n`).
    pub hi: &'a [f64],
}

impl<'a> SetFamily<'a> for BoxSet<'a> {
    #[inline]
    fn qp_class(self) -> ProblemClass {
        ProblemClass::BoxQp
    }

    fn validate(self, n: usize) -> Result<()> {
        validate(self.lo, self.hi, n)
    }

    #[inline]
    fn block_size(self) -> usize {
        1
    }

    #[inline]
    fn project(self, x: &mut [f64]) {
        project(self.lo, self.hi, x)
    }

    #[inline]
    fn project_block(self, b: usize, x: &mut [f64]) {
        x[0] = x[0].clamp(self.lo[b], self.hi[b]);
    }

    #[inline]
    fn project_blocks(self, first: usize, x: &mut [f64]) {
        let end = first + x.len();
        project(&self.lo[first..end], &self.hi[first..end], x)
    }

    #[inline]
    fn projected_gradient_block(self, b: usize, x: &[f64], g: &[f64], out: &mut [f64]) {
        out[0] = projected_gradient(self.lo[b], self.hi[b], x[0], g[0]);
    }

    #[inline]
    fn residual_terms(self, b: usize, x: &[f64], gb: &[f64], acc: &mut ResidualTerms) {
        let (l, h, gi, xi) = (self.lo[b], self.hi[b], gb[0], x[0]);
        let mut d = 0.0;
        if l == f64::NEG_INFINITY {
            d += gi.max(0.0);
        }
        if h == f64::INFINITY {
            d += gi.min(0.0);
        }
        acc.dual_feas2 += d * d;
        let mut c = 0.0;
        if l.is_finite() {
            c += gi.max(0.0) * (xi - l);
        }
        if h.is_finite() {
            c += (-gi).max(0.0) * (h - xi);
        }
        acc.comp_sum += c.abs();
        acc.comp_max = acc.comp_max.max(c.abs());
        acc.res3 = acc.res3.max(l - xi).max(xi - h).max(d.abs()).max(c.abs());
    }

    fn data(self) -> Vec<(&'static str, &'a [f64])> {
        vec![("lo", self.lo), ("hi", self.hi)]
    }

    fn conic_pieces(self, n: usize, out: &mut Vec<ConicPiece>) {
        out.extend((0..n).map(|j| ConicPiece::Interval {
            j,
            lo: self.lo[j],
            hi: self.hi[j],
        }));
    }

    #[inline]
    fn block_is_free(self, b: usize, x: &[f64]) -> bool {
        x[0] > self.lo[b] && x[0] < self.hi[b]
    }

    #[inline]
    fn split_gradient(self, x: &[f64], g: &[f64], phi: &mut [f64], beta: &mut [f64]) {
        // one tight loop (the hot path of MPRGP's CG steps)
        let (lo, hi) = (self.lo, self.hi);
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
    }

    #[inline]
    fn reduced_free_dot(self, x: &[f64], phi: &[f64], alpha: f64, _w: &mut [f64]) -> f64 {
        let ia = 1.0 / alpha;
        let (lo, hi) = (self.lo, self.hi);
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

    fn max_feasible_step(self, x: &[f64], d: &[f64]) -> (f64, Option<usize>) {
        let (lo, hi) = (self.lo, self.hi);
        let mut best = (f64::INFINITY, None);
        for (i, (&xi, &di)) in x.iter().zip(d).enumerate() {
            if di > 0.0 && lo[i] > f64::NEG_INFINITY {
                take_min(&mut best, ((xi - lo[i]) / di).max(0.0), i);
            } else if di < 0.0 && hi[i] < f64::INFINITY {
                take_min(&mut best, ((xi - hi[i]) / di).max(0.0), i);
            }
        }
        best
    }

    #[inline]
    fn land_on_boundary(self, b: usize, x: &mut [f64], d: &[f64]) {
        x[0] = if d[0] > 0.0 { self.lo[b] } else { self.hi[b] };
    }
}
