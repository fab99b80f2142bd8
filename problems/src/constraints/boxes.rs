//! Boxes `lo <= gamma <= hi` componentwise ([`super::ConstraintSet::Box`], the box-constrained
//! QP): blocks of one component; bounds may be `-inf` / `+inf`, a component with `lo = hi` is
//! fixed.

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
