//! The non-negative orthant `gamma >= 0` ([`super::ConstraintSet::NonNegative`], the LCP):
//! blocks of one component.

use super::family::{take_min, ConicPiece, ResidualTerms, SetFamily};
use super::ProblemClass;
use crate::error::Result;

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

/// The view of `gamma >= 0` for [`SetFamily`] (no data).
#[derive(Clone, Copy, Debug)]
pub struct NonNegativeSet;

impl<'a> SetFamily<'a> for NonNegativeSet {
    #[inline]
    fn qp_class(self) -> ProblemClass {
        ProblemClass::Lcp
    }

    #[inline]
    fn validate(self, _n: usize) -> Result<()> {
        Ok(())
    }

    #[inline]
    fn block_size(self) -> usize {
        1
    }

    #[inline]
    fn project(self, x: &mut [f64]) {
        project(x)
    }

    #[inline]
    fn project_block(self, _b: usize, x: &mut [f64]) {
        project_block(x)
    }

    #[inline]
    fn project_blocks(self, _first: usize, x: &mut [f64]) {
        project(x)
    }

    #[inline]
    fn projected_gradient_block(self, _b: usize, x: &[f64], g: &[f64], out: &mut [f64]) {
        out[0] = projected_gradient(x[0], g[0]);
    }

    #[inline]
    fn residual_terms(self, _b: usize, x: &[f64], gb: &[f64], acc: &mut ResidualTerms) {
        let d = gb[0].min(0.0);
        acc.dual_feas2 += d * d;
        let c = x[0] * gb[0];
        acc.comp_sum += c;
        acc.comp_max = acc.comp_max.max(c.abs());
        acc.res3 = acc.res3.max(-x[0]).max(-gb[0]).max(c.abs());
    }

    fn conic_pieces(self, n: usize, out: &mut Vec<ConicPiece>) {
        out.extend((0..n).map(|j| ConicPiece::HalfLine { j }));
    }

    #[inline]
    fn block_is_free(self, _b: usize, x: &[f64]) -> bool {
        x[0] > 0.0
    }

    #[inline]
    fn split_gradient(self, x: &[f64], g: &[f64], phi: &mut [f64], beta: &mut [f64]) {
        // one tight loop (the hot path of MPRGP's CG steps)
        for (((&xi, &gi), f), b) in x.iter().zip(g).zip(phi.iter_mut()).zip(beta.iter_mut()) {
            if xi > 0.0 {
                (*f, *b) = (gi, 0.0);
            } else {
                (*f, *b) = (0.0, gi.min(0.0));
            }
        }
    }

    #[inline]
    fn reduced_free_dot(self, x: &[f64], phi: &[f64], alpha: f64, _w: &mut [f64]) -> f64 {
        let ia = 1.0 / alpha;
        x.iter()
            .zip(phi)
            .map(|(&xi, &fi)| {
                if fi > 0.0 {
                    fi.min(xi * ia) * fi
                } else {
                    fi * fi
                }
            })
            .sum()
    }

    fn max_feasible_step(self, x: &[f64], d: &[f64]) -> (f64, Option<usize>) {
        let mut best = (f64::INFINITY, None);
        for (i, (&xi, &di)) in x.iter().zip(d).enumerate() {
            if di > 0.0 {
                take_min(&mut best, xi.max(0.0) / di, i);
            }
        }
        best
    }

    #[inline]
    fn land_on_boundary(self, _b: usize, x: &mut [f64], _d: &[f64]) {
        x[0] = 0.0;
    }
}
