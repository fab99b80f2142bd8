//! Physical-fidelity criteria of a frictional answer (issue 33): how far an answer `gamma` of
//! a contact problem is from Coulomb's law as physics states it, whatever problem the solver
//! solved (CCP, Coulomb, boxed LCP). The criteria follow Le Lidec, Jallet, Montaut, Laptev,
//! Schmid & Carpentier, "Contact models in robotics: a comparative analysis" (ContactBench,
//! IEEE T-RO 2024, section on physical criteria), written in our conventions (normal first in
//! each contact's block, velocity `u = N gamma + r`, per-contact friction coefficient `mu`).
//!
//! With `lambda = (lambda_n, lambda_T)` a contact's impulse and `u = (u_n, u_T)` its velocity,
//! the worst contact of each (all `>= 0`; 0 for an exact Coulomb answer except where said):
//! - `signorini = max |lambda_n u_n|` (J): Signorini's condition, no impulse on a separating
//!   contact, no separation under an impulse;
//! - `ncp_desaxce = max |lambda . (u + mu ||u_T|| e_n)|` (J): the complementarity of the
//!   Coulomb problem written with De Saxce's modified velocity (0 for Coulomb's law; the CCP's
//!   own complementarity `|lambda . u|` is 0 for CCP answers instead);
//! - `mdp_gap = max |lambda_T . u_T + mu lambda_n ||u_T|||` (J): the maximum-dissipation
//!   principle, the friction's power against the largest one the cone allows,
//!   `min_{||x|| <= mu lambda_n} x . u_T = -mu lambda_n ||u_T||`: 0 when the friction opposes
//!   the slip at full strength or nothing slips; negative inside the absolute value for a box
//!   answer that leaves the cone;
//! - `spurious_velocity = max u_n^+ lambda_n / max_c lambda_n,c` (m/s): the normal velocity of
//!   contacts that carry an impulse ("force at a distance"), weighted by the contact's share of
//!   the largest normal impulse so that contacts with rounding-level impulses do not count; the
//!   CCP relaxation gives `u_n = mu ||u_T||` on a sliding contact;
//! - `cone_violation = max dist(lambda, K_mu)` (N s): the Euclidean distance of each contact's
//!   impulse to its Coulomb cone `||lambda_T|| <= mu lambda_n` (a boxed LCP's impulse may leave
//!   it by up to a factor `sqrt 2` in the tangential norm).
//!
//! Units assume the stepper's convention (impulses in N s, `u` in m/s); for other data they are
//! those of `gamma u`, `u` and `gamma`.

use crate::{ConstraintSet, Instance};

/// The physical-fidelity criteria of one answer (module documentation); NaN for a class
/// without friction (LCP, box QP).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fidelity {
    /// `max |lambda_n u_n|` (J).
    pub signorini: f64,
    /// `max |lambda . (u + mu ||u_T|| e_n)|` (J).
    pub ncp_desaxce: f64,
    /// `max |lambda_T . u_T + mu lambda_n ||u_T|||` (J).
    pub mdp_gap: f64,
    /// `max u_n^+ lambda_n / max lambda_n` (m/s).
    pub spurious_velocity: f64,
    /// `max dist(lambda, K_mu)` (N s).
    pub cone_violation: f64,
}

impl Default for Fidelity {
    /// Every criterion NaN (not computed).
    fn default() -> Self {
        Self::NAN
    }
}

impl Fidelity {
    /// Every criterion NaN: not a frictional problem, or not computed.
    pub const NAN: Fidelity = Fidelity {
        signorini: f64::NAN,
        ncp_desaxce: f64::NAN,
        mdp_gap: f64::NAN,
        spurious_velocity: f64::NAN,
        cone_violation: f64::NAN,
    };

    /// Column names, in [`Fidelity::values`] order.
    pub const NAMES: [&'static str; 5] = [
        "signorini",
        "ncp_desaxce",
        "mdp_gap",
        "spurious_velocity",
        "cone_violation",
    ];

    /// The criteria in [`Fidelity::NAMES`] order.
    pub fn values(&self) -> [f64; 5] {
        [
            self.signorini,
            self.ncp_desaxce,
            self.mdp_gap,
            self.spurious_velocity,
            self.cone_violation,
        ]
    }

    /// From values in [`Fidelity::NAMES`] order.
    pub fn from_values(v: [f64; 5]) -> Self {
        Self {
            signorini: v[0],
            ncp_desaxce: v[1],
            mdp_gap: v[2],
            spurious_velocity: v[3],
            cone_violation: v[4],
        }
    }
}

/// The friction coefficients, the block size and the number of leading bilateral (joint)
/// blocks of a frictional set (cones: 3 or 2; friction boxes: 3, no joints), `None` for the
/// others.
fn friction_blocks(set: &ConstraintSet) -> Option<(&[f64], usize, usize)> {
    match set {
        ConstraintSet::CoulombCones { mu, dim, joints } => Some((mu, *dim, *joints)),
        ConstraintSet::FrictionBox { mu } => Some((mu, 3, 0)),
        _ => None,
    }
}

/// The criteria of `gamma` (length `inst.n()`) for `inst`; [`Fidelity::NAN`] for a class
/// without friction or a `gamma` of another length. Costs one product with `N`.
pub fn fidelity(inst: &Instance, gamma: &[f64]) -> Fidelity {
    let Some((mu, bs, joints)) = friction_blocks(inst.constraints()) else {
        return Fidelity::NAN;
    };
    if gamma.len() != inst.n() || gamma.len() != mu.len() * bs {
        return Fidelity::NAN;
    }
    let mut u = vec![0.0; gamma.len()];
    inst.gradient(gamma, &mut u);
    // the criteria are those of contacts: joint blocks (bilateral, no cone) are left out
    let o = joints * bs;
    fidelity_of(&gamma[o..], &u[o..], &mu[joints..], bs)
}

/// [`fidelity`] from the impulses `gamma` and velocities `u` (both `mu.len() bs` long,
/// contact after contact, normal first).
pub fn fidelity_of(gamma: &[f64], u: &[f64], mu: &[f64], bs: usize) -> Fidelity {
    let norm_t = |x: &[f64]| x[1..].iter().map(|v| v * v).sum::<f64>().sqrt();
    let largest = gamma.chunks_exact(bs).map(|l| l[0]).fold(0.0f64, f64::max);
    let mut f = Fidelity {
        signorini: 0.0,
        ncp_desaxce: 0.0,
        mdp_gap: 0.0,
        spurious_velocity: 0.0,
        cone_violation: 0.0,
    };
    for ((l, v), &m) in gamma.chunks_exact(bs).zip(u.chunks_exact(bs)).zip(mu) {
        let (ln, un) = (l[0], v[0]);
        let (lt, ut) = (norm_t(l), norm_t(v));
        let power_t: f64 = l[1..].iter().zip(&v[1..]).map(|(a, b)| a * b).sum();
        f.signorini = f.signorini.max((ln * un).abs());
        f.ncp_desaxce = f.ncp_desaxce.max((ln * (un + m * ut) + power_t).abs());
        f.mdp_gap = f.mdp_gap.max((power_t + m * ln * ut).abs());
        if largest > 0.0 && ln > 0.0 {
            f.spurious_velocity = f.spurious_velocity.max(un.max(0.0) * ln / largest);
        }
        f.cone_violation = f.cone_violation.max(cone_distance(ln, lt, m));
    }
    f
}

/// The Euclidean distance of an impulse with normal part `ln` and tangential norm `lt` to the
/// cone `lt <= mu ln` (the projection onto a second-order cone).
fn cone_distance(ln: f64, lt: f64, mu: f64) -> f64 {
    if lt <= mu * ln {
        0.0
    } else if mu * lt <= -ln {
        // the polar cone: the projection is the apex
        ln.hypot(lt)
    } else {
        // onto the boundary ray (1, mu) / sqrt(1 + mu^2)
        (lt - mu * ln).abs() / (1.0 + mu * mu).sqrt()
    }
}
