//! MPRGP: modified proportioning with reduced gradient projections for box-constrained QPs
//! (Dostal & Schoberl, Comput. Optim. Appl. 30 (2005) 23-43; Dostal, *Optimal Quadratic
//! Programming Algorithms*, Springer 2009, Algorithm 5.8), with the expansion variants of
//! Kruzik, Horak, Cermak, Pospisil, Pecha, "Active set expansion strategies in MPRGP
//! algorithm", Adv. Eng. Softw. 149 (2020), as implemented in PERMON's `QPSMPGP`.
//!
//! With `g = N x + r`, the free gradient `phi`, the chopped gradient `beta`, the reduced free
//! gradient `phi~ = (x - P(x - alpha phi))/alpha` and `g^P = phi + beta` (definitions in
//! [`cpbench_problems::ConstraintSet::split_gradient`]), `alpha = c / lambda_max(N)`:
//!
//! ```text
//! x feasible, g = N x + r, p = phi(x)
//! loop:
//!   if ||beta||^2 <= Gamma^2 phi~^T phi:                         (x proportional)
//!     a_cg = g^T p / p^T N p,  a_f = max{t : x - t p feasible}
//!     if a_cg <= a_f:                                            (CG step)
//!       x -= a_cg p,  g -= a_cg N p,  p = phi - (phi^T N p / p^T N p) p
//!     else:                                                      (expansion step)
//!       x -= a_f p,  g -= a_f N p,  x = P(x - alpha phi),  g = N x + r,  p = phi
//!   else:                                                        (proportioning step)
//!     d = beta,  t = min(g^T d / d^T N d, max{t : x - t d feasible}),
//!     x -= t d,  g -= t N d,  p = phi
//! ```
//!
//! The stopping test belongs to the executor; Dostal's is `||g^P|| <= rtol ||r||`, which is
//! cpbench's residual `proj_grad_rel` (`ResidualKind::ProjGradRel`). PERMON writes
//! `1/2 x^T A x - b^T x` and stops on `||g^P|| <= max(rtol ||b||, atol)` with `rtol = 1e-5`,
//! `atol = 1e-50` by default; since `b = -r`, `||b|| = ||r||` and PERMON's test is exactly
//! `proj_grad_rel <= rtol`.
//!
//! Choices and their sources:
//! - the steplength `alpha = c / lambda`, `lambda` from the power method of PERMON's
//!   `MatGetMaxEigenvalue` (counted products: from the all-ones vector, Rayleigh quotients
//!   until their relative change is below `power_rtol = 1e-4`, at most `power_max_iter = 50`):
//!   Dostal's analysis needs `alpha <= 2/||N||` and his book uses `c = 1.95` (the default);
//!   PERMON uses `c = 2` (`alpha_user = 2.0` in `mpgp.c`);
//! - the proportioning test: Dostal compares with `phi~^T phi`
//!   ([`ProportioningTest::Reduced`], default); PERMON with `phi^T phi`
//!   ([`ProportioningTest::Free`]), a more permissive test since `phi~^T phi <= phi^T phi`;
//! - the proportioning step is Dostal's, except that the step is cut at the largest feasible
//!   one: with a finite upper bound `x - t beta` can leave the box (Dostal & Schoberl treat
//!   lower bounds only; PERMON does not cut it). With one-sided bounds it is Dostal's step;
//! - the expansion variants ([`Expansion`]) are those of PERMON's tests `ex1_opt`,
//!   `ex1_optapprox`, `ex1_bb`, `ex1_projcg`;
//! - the power method's Rayleigh quotient stopped at a relative change of `1e-4` can
//!   underestimate `lambda_max` badly when the top eigenvalues cluster (16% on a random
//!   9 x 9 matrix in the property tests), and then `alpha > 2/||N||` and the iteration
//!   may diverge. By default (`safeguard`) a projected step `P(x - alpha d)` that raises `f`
//!   is redone with `alpha / 2`, which keeps `f` monotone; PERMON has no such guard;
//! - CG steps update `g` by recurrence; once the recurrence's `||g^P||` falls to the rounding
//!   level `16 eps (lambda ||x|| + ||r||)` the gradient is recomputed (one product) and CG
//!   restarted, and the solver reports a stall if the fresh `||g^P||` is at that level too
//!   (without this, CG keeps running on the recurrence's noise, its direction underflows and
//!   the next "expansion" jumps arbitrarily far).
//!
//! Counters: `cg_steps`, `expansion_steps`, `proportioning_steps`, `hessian_mults` (products of
//! the iteration, the initial gradient included: PERMON's "number of Hessian
//! multiplications"), `power_matvecs` (products of the power method; the executor's `matvecs`
//! is the sum of the two), `alpha_halvings` (safeguard), `lambda_max`, `alpha` (the current
//! expansion steplength).
//!
//! Vector passes and determinism: see the module docs of `mprgp/core.rs` (the shared
//! iteration): above [`crate::kernels::PAR_MIN_LEN`] unknowns the element-wise passes and
//! reductions run in parallel chunks and the results are bit-identical for any number of
//! threads given `n`; below it they are those of the plain sequential loops, bit for bit.

pub(crate) mod core;
pub(crate) mod geometry;

use crate::settings::{SolverSettings, Validator};
use crate::solver::Solver;
use crate::status::SolverError;
use cpbench_problems::ProblemClass;
use serde::{Deserialize, Serialize};

use self::core::{core_settings, Core, CoreSettings, ProportioningStep};

/// The right-hand side of the proportioning test `||beta||^2 <= Gamma^2 * rhs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ProportioningTest {
    /// `rhs = phi~^T phi` (Dostal & Schoberl 2005, Dostal 2009).
    #[default]
    Reduced,
    /// `rhs = phi^T phi` (PERMON's `mpgp.c`).
    Free,
}

/// How an expansion step continues after the largest feasible step `x_h = x - a_f p`
/// (Kruzik et al. 2020; PERMON's `-qps_mpgp_expansion_type` / `_length_type`; `c` is
/// `alpha_factor`, `phi`, `g` are taken at `x_h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Expansion {
    /// `x = P(x_h - alpha phi)` with the fixed `alpha = c / lambda` (Dostal; PERMON `std`).
    #[default]
    Std,
    /// `x = P(x_h - alpha phi)`, `alpha = c phi^T g / phi^T N phi`: `c` times the exact
    /// line-search step along `phi`, one extra product (PERMON `gf` + `opt`). The new `alpha`
    /// is kept for the reduced free gradient until the next expansion.
    Opt,
    /// `x = P(x_h - alpha g)` along the full gradient with `alpha = c / lambda` (PERMON `g` +
    /// `optapprox`, whose length `c (g^T g)/(g^T g) / lambda` reduces to the fixed one).
    Optapprox,
    /// `x = P(x_h - alpha phi)`, `alpha = c (d^T d)/(d^T s)`, `d` the change of the reduced
    /// free gradient `phi~` and `s = x_h - x` over the half step (PERMON `gfgr` + `bb`). This is
    /// PERMON's formula; note that it has the units of `lambda` rather than of a steplength
    /// (`c / alpha` would be the Barzilai-Borwein step `s^T d / d^T d`). A non-positive or
    /// non-finite value keeps the previous `alpha`.
    Bb,
    /// The full conjugate gradient step, projected: `x = P(x - a_cg p)` (PERMON `projcg`).
    Projcg,
}

/// Settings of [`Mprgp`]. Defaults (Dostal): `proportioning_constant = 1`, `alpha_factor = 1.95`, proportioning
/// test on `phi~^T phi`, standard expansion, `lambda_max` by the power method with PERMON's
/// stopping rule (`power_rtol = 1e-4`, at most `power_max_iter = 50` products), safeguard on.
/// [`MprgpSettings::permon`] gives PERMON's defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MprgpSettings {
    /// Proportioning constant, the paper's `Gamma` (`> 0`): a step is a proportioning step when
    /// the chopped gradient exceeds `Gamma` times the free one. JSON also accepts the old name
    /// `gamma`.
    #[serde(alias = "gamma")]
    pub proportioning_constant: f64,
    /// `c` in the expansion steplength `alpha = c / lambda_max(N)`; Dostal's convergence
    /// theory needs `c <= 2` (`c > 0`).
    pub alpha_factor: f64,
    /// Proportioning test.
    pub proportioning: ProportioningTest,
    /// Expansion variant.
    pub expansion: Expansion,
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

impl Default for MprgpSettings {
    fn default() -> Self {
        Self {
            proportioning_constant: 1.0,
            alpha_factor: 1.95,
            proportioning: ProportioningTest::Reduced,
            expansion: Expansion::Std,
            lambda_max: None,
            power_max_iter: 50,
            power_rtol: 1e-4,
            safeguard: true,
        }
    }
}

impl MprgpSettings {
    /// PERMON's `QPSMPGP` defaults (`mpgp.c`, `MatGetMaxEigenvalue`) with the given expansion:
    /// `alpha_factor = 2`, proportioning test on `phi^T phi`, `Gamma = 1`, power method
    /// `rtol = 1e-4`, 50 products, no safeguard (PERMON has none).
    pub fn permon(expansion: Expansion) -> Self {
        Self {
            alpha_factor: 2.0,
            proportioning: ProportioningTest::Free,
            expansion,
            safeguard: false,
            ..Self::default()
        }
    }

    /// The shared iteration's parameters: these settings with MPRGP's proportioning step.
    fn core(&self) -> CoreSettings {
        core_settings!(self, self.expansion, ProportioningStep::ChoppedCg)
    }
}

impl SolverSettings for MprgpSettings {
    const SOLVER: &'static str = "mprgp";
    const ALIASES: &'static [(&'static str, &'static str)] = &[("gamma", "proportioning_constant")];

    fn check(&self, v: &mut Validator) {
        self.core().check(v);
    }
}

/// MPRGP. Supports LCP and box QP (use [`crate::mpgp::Mpgp`] for cones). Joint (bilateral)
/// blocks do not arise there: only Coulomb-cone sets carry them, and the class check refuses
/// those first; the bilateral rows of a box QP are its components with `lo = -inf`,
/// `hi = +inf`, which MPRGP already treats as always free (Dostal & Schoberl 2005, eq. (2.2)
/// with no bound).
#[derive(Clone, Debug)]
pub struct Mprgp {
    core: Core,
}

impl Mprgp {
    /// An MPRGP solver; errors on invalid settings ([`SolverSettings::validate`]).
    pub fn new(settings: MprgpSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            core: Core::new(settings.core()),
        })
    }
}

impl Solver for Mprgp {
    fn name(&self) -> &'static str {
        "mprgp"
    }

    fn supports(&self, class: ProblemClass) -> bool {
        matches!(class, ProblemClass::Lcp | ProblemClass::BoxQp)
    }

    crate::mprgp::core::forward_to_core!();
}
