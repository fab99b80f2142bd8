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
}

impl ProblemClass {
    /// Short lower-case name used in CSV files and on the command line (`lcp`, `box`, `ccp`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemClass::Lcp => "lcp",
            ProblemClass::BoxQp => "box",
            ProblemClass::Ccp => "ccp",
        }
    }
}

impl std::fmt::Display for ProblemClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ConstraintSet {
    /// The class of problem this set defines.
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
