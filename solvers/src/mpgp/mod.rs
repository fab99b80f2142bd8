//! MPGP: modified proportioning with gradient projections for QPs with separable convex
//! constraints (Dostal & Kozubek, "An optimal algorithm and superrelaxation for minimization of
//! a quadratic function subject to separable convex constraints with applications",
//! Math. Program. 135 (2012) 195-220), here for products of Coulomb cones (CCP), boxes and the
//! non-negative orthant.
//!
//! The iteration is MPRGP's (see [`crate::mprgp`]) with the gradients of a separable convex
//! set (a block = a contact triple for cones): on a free block (interior of its cone) the free
//! gradient `phi` is `g` and the chopped gradient `beta` is 0; on an active block (surface or
//! apex) `phi = 0` and `beta = g^P = -P_{T_K(x)}(-g)`; `phi~ = (x - P_K(x - alpha phi))/alpha`.
//! These are [`cpbench_problems::ConstraintSet::split_gradient`] and
//! [`cpbench_problems::ConstraintSet::reduced_free_gradient`], the same definitions the
//! residual module uses for `proj_grad_rel`.
//!
//! ```text
//! if ||beta||^2 <= Gamma^2 phi~^T phi:
//!   a_cg = g^T p / p^T N p,  a_f = max{t : x - t p in K}   (a cone: a root of a quadratic)
//!   a_cg <= a_f:  CG step as in MPRGP
//!   else:         x -= a_f p (the blocking contact lands on its cone surface),
//!                 x = P_K(x - alpha phi),  g = N x + r,  p = phi
//! else:           x = P_K(x - alpha g),  g = N x + r,  p = phi      (proportioning)
//! ```
//!
//! The proportioning step is the gradient projection step with the fixed steplength
//! `alpha = c / lambda_max(N)`: on a curved set the MPRGP step along `-beta` leaves the cone at
//! once whenever `beta` is tangent to the surface (a sliding contact), so it cannot be used.
//! For `alpha <= 2/||N||` every step decreases `f` and keeps `x` in `K`: the CG step by exact
//! line search inside the feasible interval, the projection steps because
//! `g^T (y - x) <= -||y - x||^2 / alpha` for `y = P_K(x - alpha g)` (and likewise with `phi`,
//! which vanishes on the blocks the projection leaves fixed).
//!
//! Defaults: `Gamma = 1`, `c = 1.95`, proportioning test on `phi~^T phi`, `lambda_max` by the
//! power method (PERMON's stopping rule) with MPRGP's safeguard (a projected step that raises
//! `f` is redone with `alpha / 2`) and gradient refresh. Counters as MPRGP's.
//!
//! Vector passes and determinism: see the module docs of `mprgp/core.rs` (the shared
//! iteration): above [`crate::kernels::PAR_MIN_LEN`] unknowns the element-wise passes and
//! reductions run in parallel chunks and the results are bit-identical for any number of
//! threads given `n`; below it they are those of the plain sequential loops, bit for bit.

use crate::mprgp::core::{core_settings, Core, CoreSettings, ProportioningStep};
use crate::mprgp::{Expansion, ProportioningTest};
use crate::settings::{SolverSettings, Validator};
use crate::solver::Solver;
use crate::status::SolverError;
use serde::{Deserialize, Serialize};

/// Settings of [`Mpgp`]. Defaults: `proportioning_constant = 1`, `alpha_factor = 1.95`, proportioning test on
/// `phi~^T phi`, power method with `power_rtol = 1e-4` and at most 50 products, safeguard on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MpgpSettings {
    /// Proportioning constant, the paper's `Gamma` (`> 0`): a step is a proportioning step when
    /// the chopped gradient exceeds `Gamma` times the free one. JSON also accepts the old name
    /// `gamma`.
    #[serde(alias = "gamma")]
    pub proportioning_constant: f64,
    /// `c` in `alpha = c / lambda_max(N)` (theory: `0 < c <= 2`).
    pub alpha_factor: f64,
    /// Proportioning test.
    pub proportioning: ProportioningTest,
    /// `lambda_max(N)` if known (skips the power method).
    pub lambda_max: Option<f64>,
    /// Power method: most products.
    pub power_max_iter: usize,
    /// Power method: relative change of the Rayleigh quotient that stops it.
    pub power_rtol: f64,
    /// Redo a projected step `P(x - alpha d)` that would raise `f` with `alpha / 2` (and keep
    /// the halved `alpha`): the guard against a power-method estimate below `lambda_max(N)`,
    /// which would break the condition `alpha <= 2/||N||` of the convergence theory.
    pub safeguard: bool,
}

impl Default for MpgpSettings {
    fn default() -> Self {
        Self {
            proportioning_constant: 1.0,
            alpha_factor: 1.95,
            proportioning: ProportioningTest::Reduced,
            lambda_max: None,
            power_max_iter: 50,
            power_rtol: 1e-4,
            safeguard: true,
        }
    }
}

impl MpgpSettings {
    /// The shared iteration's parameters: these settings with the standard expansion and
    /// MPGP's gradient projection as the proportioning step.
    fn core(&self) -> CoreSettings {
        core_settings!(self, Expansion::Std, ProportioningStep::GradientProjection)
    }
}

impl SolverSettings for MpgpSettings {
    const SOLVER: &'static str = "mpgp";
    const ALIASES: &'static [(&'static str, &'static str)] = &[("gamma", "proportioning_constant")];

    fn check(&self, v: &mut Validator) {
        self.core().check(v);
    }
}

/// MPGP. Supports every class (LCP, box QP, Coulomb-cone CCP).
#[derive(Clone, Debug)]
pub struct Mpgp {
    core: Core,
}

impl Mpgp {
    /// An MPGP solver; errors on invalid settings ([`SolverSettings::validate`]).
    pub fn new(settings: MpgpSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            core: Core::new(settings.core()),
        })
    }
}

impl Solver for Mpgp {
    fn name(&self) -> &'static str {
        "mpgp"
    }

    /// Joint (bilateral) blocks: a free block is the factor `R^d` of the separable set
    /// (Dostal & Kozubek 2012 allow any closed convex factors; `R^d` is one without boundary),
    /// so it is always free: `phi_b = g_b`, `beta_b = 0`, no bound on the feasible step, the
    /// projection the identity (the cone set's geometry, `ConstraintSet::block_is_free` and
    /// `max_feasible_step`, already answers so; docs/formulation.md, "Bilateral rows").
    fn takes_joints(&self) -> bool {
        true
    }

    crate::mprgp::core::forward_to_core!();
}
