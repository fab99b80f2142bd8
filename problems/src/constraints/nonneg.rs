//! The non-negative orthant `gamma >= 0` ([`super::ConstraintSet::NonNegative`], the LCP):
//! blocks of one component.

/// Project `x` onto `x >= 0`, in place (any length).
#[inline]
pub(super) fn project(x: &mut [f64]) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
}

/// Project one component (`x` of length 1) in place.
#[inline]
pub(super) fn project_block(x: &mut [f64]) {
    x[0] = x[0].max(0.0);
}

/// Projected gradient of one component at a feasible `x`: `g` where `x > 0`, `min(g, 0)` at 0.
#[inline]
pub(super) fn projected_gradient(x: f64, g: f64) -> f64 {
    if x > 0.0 {
        g
    } else {
        g.min(0.0)
    }
}
