//! Constraint sets `K` and their Euclidean projections.
//!
//! Conventions (docs/formulation.md sections 2 and 3): Coulomb cones are stored contact by contact,
//! normal component first, then the two tangential components (fclib order), or the one tangent
//! of a 2-D problem (cone dimension `d = 2`, Siconos' fc2d: [`ConstraintSet::cone_dim`]).
//! `K_mu = {(x_n, x_t) : ||x_t|| <= mu x_n}`; its dual is `K_mu^* = K_{1/mu}`.
//!
//! Layout: this module holds the [`ConstraintSet`] type, its dispatch and [`ProblemClass`]; one
//! module per set family holds the per-class logic: [`nonneg`] (`gamma >= 0`), [`boxes`]
//! (`lo <= gamma <= hi`), [`cones`] (Coulomb cones and their projections), [`friction_box`]
//! (the friction boxes of the boxed LCP, bounds moving with the normal). Code elsewhere asks
//! the set (block size, projection, projected gradient, friction coefficients, summary for
//! `cpbench info`, the data hashed into the content hash) instead of matching on its variants;
//! matching stays where the code is genuinely per class (Clarabel's and the IPM's conic forms,
//! the residual module's dual feasibility and complementarity, the bundle fields).
//!
//! **Adding a class** (e.g. general non-symmetric LCPs, 2-D Coulomb cones):
//! 1. a module `constraints/<family>.rs` with its validation, projection (whole vector and one
//!    block) and projected gradient, and their unit tests;
//! 2. a variant of [`ConstraintSet`] (its serde tag is the class name in `snake_case`), a
//!    variant of [`ProblemClass`] with its [`ProblemClass::as_str`] name, and one arm per method
//!    of the `impl ConstraintSet` below ([`ConstraintSet::qp_class`], [`ConstraintSet::validate`],
//!    [`ConstraintSet::block_size`], [`ConstraintSet::project`], [`ConstraintSet::project_block`],
//!    [`ConstraintSet::projected_gradient_block`], [`ConstraintSet::friction`],
//!    [`ConstraintSet::parameters`], [`ConstraintSet::summary`]);
//! 3. the per-class places the compiler then points to (non-exhaustive matches): the residual
//!    module's dual feasibility / complementarity (`residual.rs`), the bundle fields
//!    (`io/bundle.rs`), MPRGP's active-set geometry (`solvers/src/mprgp/geometry.rs`), and the
//!    conic forms of Clarabel and the IPM if they are to support it (otherwise they refuse it).
//!
//! The class of an *instance* is [`crate::Instance::class`]: the set alone does not know whether
//! cones carry the CCP or the Coulomb problem, so the set only answers [`ConstraintSet::qp_class`],
//! the QP class it defines.

pub mod boxes;
pub mod cones;
pub mod friction_box;
pub mod nonneg;

pub use cones::{
    cone_projected_gradient, project_coulomb_cone, project_coulomb_cone2,
    project_dual_coulomb_cone, CONE_SURFACE_TOL,
};

use crate::error::Result;
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
    /// Product of Coulomb friction cones, one per contact, `dim` unknowns per contact (normal
    /// first): `dim = 3` (two tangents, fclib) or `dim = 2` (one tangent, planar problems,
    /// Siconos' fc2d, `|x_t| <= mu x_n`).
    CoulombCones {
        /// Friction coefficient of each contact (length `n / dim`), `mu >= 0`.
        mu: Vec<f64>,
        /// Unknowns per contact, the cone dimension: 3 or 2. JSON without it reads as 3, and a
        /// 3-D set is written without it (the JSON of 3-D instances is unchanged).
        #[serde(default = "cone_dim_3", skip_serializing_if = "is_cone_dim_3")]
        dim: usize,
    },
    /// Friction boxes with moving bounds, one per contact, 3 unknowns per contact (normal
    /// first): `gamma_n >= 0`, `|gamma_t,i| <= mu gamma_n` (the boxed LCP of ODE-style engines,
    /// [`ProblemClass::Blcp`]; see [`friction_box`]).
    FrictionBox {
        /// Friction coefficient of each contact (length `n / 3`), `mu >= 0`.
        mu: Vec<f64>,
    },
}

fn cone_dim_3() -> usize {
    3
}

fn is_cone_dim_3(d: &usize) -> bool {
    *d == 3
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
    /// (docs/formulation.md section 2). Not a QP: the QP solvers do not support it.
    Coulomb,
    /// The boxed LCP of ODE-style engines on friction boxes ([`ConstraintSet::FrictionBox`]):
    /// `0 <= gamma_n ⊥ u_n >= 0` and, per tangent, `gamma_t,i` in `[-mu gamma_n, mu gamma_n]`
    /// with `u_t,i = 0` strictly inside, `u_t,i >= 0` at the lower and `<= 0` at the upper
    /// bound, `u = W gamma + q` (docs/formulation.md, "Robotics formulations"). The bounds move
    /// with `gamma_n`: not a QP, the QP solvers do not support it.
    Blcp,
}

impl ProblemClass {
    /// Every class, in the order of the enum.
    pub const ALL: [ProblemClass; 5] = [
        ProblemClass::Lcp,
        ProblemClass::BoxQp,
        ProblemClass::Ccp,
        ProblemClass::Coulomb,
        ProblemClass::Blcp,
    ];

    /// Short lower-case name used in CSV files and on the command line (`lcp`, `box`, `ccp`,
    /// `coulomb`, `blcp`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemClass::Lcp => "lcp",
            ProblemClass::BoxQp => "box",
            ProblemClass::Ccp => "ccp",
            ProblemClass::Coulomb => "coulomb",
            ProblemClass::Blcp => "blcp",
        }
    }

    /// Whether the class is a convex QP `min 1/2 gamma^T N gamma + r^T gamma, gamma in K` (LCP,
    /// box QP, CCP): the classes the QP solvers handle. False for [`ProblemClass::Coulomb`] and
    /// [`ProblemClass::Blcp`].
    pub fn is_qp(self) -> bool {
        !matches!(self, ProblemClass::Coulomb | ProblemClass::Blcp)
    }
}

impl std::fmt::Display for ProblemClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ConstraintSet {
    /// 3-D Coulomb cones with friction coefficients `mu` (one per contact).
    pub fn coulomb(mu: Vec<f64>) -> Self {
        ConstraintSet::CoulombCones { mu, dim: 3 }
    }

    /// Coulomb cones of dimension `dim` (2 or 3; checked by [`ConstraintSet::validate`]) with
    /// friction coefficients `mu` (one per contact).
    pub fn coulomb_dim(mu: Vec<f64>, dim: usize) -> Self {
        ConstraintSet::CoulombCones { mu, dim }
    }

    /// The cone dimension (unknowns per contact, 2 or 3) of Coulomb cones; `None` for the
    /// other sets.
    #[inline]
    pub fn cone_dim(&self) -> Option<usize> {
        match self {
            ConstraintSet::CoulombCones { dim, .. } => Some(*dim),
            _ => None,
        }
    }

    /// The QP class this set defines: [`ProblemClass::Lcp`], [`ProblemClass::BoxQp`], or
    /// [`ProblemClass::Ccp`] for cones. This is not the class of an instance: an instance on
    /// cones may instead be the Coulomb problem ([`crate::Instance::class`] is the one answer).
    /// Friction boxes define [`ProblemClass::Blcp`], the one class here that is not a QP.
    pub fn qp_class(&self) -> ProblemClass {
        match self {
            ConstraintSet::NonNegative => ProblemClass::Lcp,
            ConstraintSet::Box { .. } => ProblemClass::BoxQp,
            ConstraintSet::CoulombCones { .. } => ProblemClass::Ccp,
            ConstraintSet::FrictionBox { .. } => ProblemClass::Blcp,
        }
    }

    /// Check the set against the problem size `n`: box lengths and `lo <= hi` (no NaN),
    /// the cone dimension 2 or 3, `n` a multiple of it and `mu` finite, non-negative, of length
    /// `n / dim` for cones. Errors: see [`boxes`] and [`cones`] (`validate`).
    pub fn validate(&self, n: usize) -> Result<()> {
        match self {
            ConstraintSet::NonNegative => Ok(()),
            ConstraintSet::Box { lo, hi } => boxes::validate(lo, hi, n),
            ConstraintSet::CoulombCones { mu, dim } => cones::validate(mu, n, *dim),
            ConstraintSet::FrictionBox { mu } => friction_box::validate(mu, n),
        }
    }

    /// Size of a block: the cone dimension (3 or 2) for cones, 3 for friction boxes, 1
    /// otherwise.
    #[inline]
    pub fn block_size(&self) -> usize {
        match self {
            ConstraintSet::CoulombCones { dim, .. } => *dim,
            ConstraintSet::FrictionBox { .. } => 3,
            _ => 1,
        }
    }

    /// Project `x` onto the set, in place. `x` has length `n`.
    #[inline]
    pub fn project(&self, x: &mut [f64]) {
        match self {
            ConstraintSet::NonNegative => nonneg::project(x),
            ConstraintSet::Box { lo, hi } => boxes::project(lo, hi, x),
            ConstraintSet::CoulombCones { mu, dim } => cones::project(mu, *dim, x),
            ConstraintSet::FrictionBox { mu } => friction_box::project(mu, x),
        }
    }

    /// Project block `b` (a component for LCP/box, a contact's `d` components for cones) in place.
    /// `x` is that block's slice (length [`ConstraintSet::block_size`]). Friction boxes:
    /// ODE's clamp ([`friction_box::clamp_friction_box`]), the normal first, then the tangents
    /// within the bounds of the new normal.
    #[inline]
    pub fn project_block(&self, b: usize, x: &mut [f64]) {
        match self {
            ConstraintSet::NonNegative => nonneg::project_block(x),
            ConstraintSet::Box { lo, hi } => x[0] = x[0].clamp(lo[b], hi[b]),
            ConstraintSet::CoulombCones { mu, .. } => project_coulomb_cone(x, mu[b]),
            ConstraintSet::FrictionBox { mu } => friction_box::clamp_friction_box(x, mu[b]),
        }
    }

    /// Projected gradient `g^P = -P_{T_K(x)}(-g)` of block `b` into `out` (all slices of the
    /// block's length, `x` feasible; `T_K(x)` the tangent cone at `x`): box `g` where free,
    /// `min(g, 0)` at a lower, `max(g, 0)` at an upper bound, `0` for a fixed component; cone:
    /// see [`cone_projected_gradient`]; friction box: the bounds held at `x_n`
    /// ([`friction_box`]). Shared by the residual module and MPRGP / MPGP
    /// (Dostal & Schoberl 2005, eq. (2.2); Dostal & Kozubek 2012, section 2).
    #[inline]
    pub fn projected_gradient_block(&self, b: usize, x: &[f64], g: &[f64], out: &mut [f64]) {
        match self {
            ConstraintSet::NonNegative => out[0] = nonneg::projected_gradient(x[0], g[0]),
            ConstraintSet::Box { lo, hi } => {
                out[0] = boxes::projected_gradient(lo[b], hi[b], x[0], g[0])
            }
            ConstraintSet::CoulombCones { mu, dim } => {
                out[..*dim].copy_from_slice(&cone_projected_gradient(x, g, mu[b])[..*dim]);
            }
            ConstraintSet::FrictionBox { mu } => {
                out[..3].copy_from_slice(&friction_box::projected_gradient(x, g, mu[b]));
            }
        }
    }

    /// The friction coefficient of each contact (length `n / dim`) for cones and friction
    /// boxes (`dim = 3`); `None` for sets without friction.
    pub fn friction(&self) -> Option<&[f64]> {
        match self {
            ConstraintSet::CoulombCones { mu, .. } | ConstraintSet::FrictionBox { mu } => Some(mu),
            _ => None,
        }
    }

    /// The set's data vectors, in the order the content hash ([`crate::Instance::hash`]) reads
    /// them: `(lo, hi)` for boxes, `(mu, [])` for cones and friction boxes (the class, hashed
    /// first, tells them apart), `([], [])` for `gamma >= 0`. (The hash also reads the cone
    /// dimension of 2-D cones, and only of those, so that the hashes of 3-D instances stay
    /// those of earlier versions.)
    pub fn parameters(&self) -> (&[f64], &[f64]) {
        match self {
            ConstraintSet::NonNegative => (&[], &[]),
            ConstraintSet::Box { lo, hi } => (lo, hi),
            ConstraintSet::CoulombCones { mu, .. } | ConstraintSet::FrictionBox { mu } => (mu, &[]),
        }
    }

    /// Lines describing the set's data for `cpbench info`, as `(label, value)`: for cones
    /// `("cones", "3-D (d = 3)")` and `("mu range", "[min, max]")`, for friction boxes the
    /// `mu` range; nothing for the other sets.
    pub fn summary(&self) -> Vec<(&'static str, String)> {
        match self {
            ConstraintSet::CoulombCones { mu, dim } => {
                let (lo, hi) = mu
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &m| {
                        (a.min(m), b.max(m))
                    });
                vec![
                    ("cones", format!("{dim}-D (d = {dim})")),
                    ("mu range", format!("[{lo}, {hi}]")),
                ]
            }
            ConstraintSet::FrictionBox { mu } => {
                let (lo, hi) = mu
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &m| {
                        (a.min(m), b.max(m))
                    });
                vec![("mu range", format!("[{lo}, {hi}]"))]
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ProblemError;

    #[test]
    fn validate_rejects_bad_sets() {
        let c = ConstraintSet::coulomb(vec![0.5, -0.1]);
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

    #[test]
    fn dispatch_answers_per_class() {
        let k = ConstraintSet::coulomb(vec![0.5, 0.25, 0.75]);
        assert_eq!(k.qp_class(), ProblemClass::Ccp);
        assert_eq!(k.block_size(), 3);
        assert_eq!(k.friction(), Some(&[0.5, 0.25, 0.75][..]));
        assert_eq!(k.parameters(), (&[0.5, 0.25, 0.75][..], &[][..]));
        assert_eq!(
            k.summary(),
            vec![
                ("cones", "3-D (d = 3)".to_string()),
                ("mu range", "[0.25, 0.75]".to_string())
            ]
        );
        assert_eq!(k.cone_dim(), Some(3));
        // 2-D cones: blocks of 2, n % 2, the JSON says the dimension, old JSON reads as 3-D
        let k2 = ConstraintSet::coulomb_dim(vec![0.5, 0.25], 2);
        assert_eq!((k2.block_size(), k2.cone_dim()), (2, Some(2)));
        assert!(k2.validate(4).is_ok());
        assert!(matches!(
            k2.validate(5),
            Err(ProblemError::NotMultipleOfConeDim { n: 5, dim: 2 })
        ));
        assert!(matches!(
            k2.validate(6),
            Err(ProblemError::SizeMismatch { expected: 3, .. })
        ));
        assert!(matches!(
            ConstraintSet::coulomb_dim(vec![0.5], 4).validate(4),
            Err(ProblemError::UnsupportedConeDim { dim: 4 })
        ));
        let mut x = [1.0, 3.0, -1.0, 0.0];
        k2.project(&mut x);
        assert_eq!(x, [2.0, 1.0, 0.0, 0.0]);
        let j2 = serde_json::to_string(&k2).unwrap();
        assert_eq!(j2, r#"{"type":"coulomb_cones","mu":[0.5,0.25],"dim":2}"#);
        assert_eq!(serde_json::from_str::<ConstraintSet>(&j2).unwrap(), k2);
        let j3 = serde_json::to_string(&k).unwrap();
        assert_eq!(j3, r#"{"type":"coulomb_cones","mu":[0.5,0.25,0.75]}"#);
        assert_eq!(serde_json::from_str::<ConstraintSet>(&j3).unwrap(), k);
        assert_eq!(k2.summary()[0], ("cones", "2-D (d = 2)".to_string()));
        let b = ConstraintSet::Box {
            lo: vec![-1.0, 0.0],
            hi: vec![1.0, f64::INFINITY],
        };
        assert_eq!(b.qp_class(), ProblemClass::BoxQp);
        assert_eq!(b.friction(), None);
        assert_eq!(
            b.parameters(),
            (&[-1.0, 0.0][..], &[1.0, f64::INFINITY][..])
        );
        assert!(b.summary().is_empty());
        let mut x = [3.0, -2.0];
        b.project(&mut x);
        assert_eq!(x, [1.0, 0.0]);
        // box projected gradient: at lo min(g, 0), free g
        let mut out = [0.0];
        b.projected_gradient_block(1, &[0.0], &[2.0], &mut out);
        assert_eq!(out, [0.0]);
        b.projected_gradient_block(0, &[0.5], &[2.0], &mut out);
        assert_eq!(out, [2.0]);
        let fb = ConstraintSet::FrictionBox { mu: vec![0.5] };
        assert_eq!((fb.qp_class(), fb.block_size()), (ProblemClass::Blcp, 3));
        assert!(!ProblemClass::Blcp.is_qp() && ProblemClass::Blcp.as_str() == "blcp");
        assert_eq!(fb.friction(), Some(&[0.5][..]));
        let mut x = [1.0, 0.8, -0.2];
        fb.project(&mut x);
        assert_eq!(x, [1.0, 0.5, -0.2]);
        assert!(fb.validate(4).is_err() && fb.validate(3).is_ok());
        let l = ConstraintSet::NonNegative;
        assert_eq!(l.qp_class(), ProblemClass::Lcp);
        let mut y = [-1.0, 2.0];
        l.project(&mut y);
        assert_eq!(y, [0.0, 2.0]);
        l.projected_gradient_block(0, &[0.0], &[3.0], &mut out);
        assert_eq!(out, [0.0]);
        l.projected_gradient_block(0, &[0.0], &[-3.0], &mut out);
        assert_eq!(out, [-3.0]);
    }
}
