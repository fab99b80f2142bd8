//! `dsfp`: De Saxce's fixed point `r <- P_K(r - rho (u + g(u)))` with a constant step (module
//! docs of [`crate::fixed_point`]).

use crate::kernels::coulomb_blocks;
use crate::kernels::desaxce_shift;
use crate::observer::IterInfo;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::constraints::project_coulomb_cone;

use serde::{Deserialize, Serialize};

/// How [`DsfpSettings::rho`] is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RhoScale {
    /// The step is `rho / lambda_max(sym W)`, `lambda_max` by power iterations in `init`.
    #[default]
    LambdaMax,
    /// The step is `rho` itself (Siconos' reading).
    Absolute,
}

/// Settings of [`Dsfp`]. Defaults: `rho = 1` relative to `1 / lambda_max(sym W)` (20 power
/// iterations); `rho_scale = "absolute"` with `rho = 1` is Siconos' default step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DsfpSettings {
    /// The constant step `rho > 0`, in the unit of `rho_scale` (Siconos: 1, absolute,
    /// `dparam[SICONOS_FRICTION_3D_NSN_RHO]`).
    pub rho: f64,
    /// How `rho` is read: `lambda_max` (relative to `1 / lambda_max(sym W)`) or `absolute`.
    pub rho_scale: RhoScale,
    /// Power iterations for `lambda_max(sym W)` when `rho_scale` is `lambda_max` (`>= 1`;
    /// counted as products).
    pub power_iterations: u32,
}

impl Default for DsfpSettings {
    fn default() -> Self {
        Self {
            rho: 1.0,
            rho_scale: RhoScale::LambdaMax,
            power_iterations: 20,
        }
    }
}

impl SolverSettings for DsfpSettings {
    const SOLVER: &'static str = "dsfp";

    fn check(&self, v: &mut Validator) {
        v.positive("rho", self.rho)
            .at_least("power_iterations", self.power_iterations.into(), 1);
    }
}

/// De Saxce's fixed point with a constant step ([`cpbench_problems::ProblemClass::Coulomb`] only; module docs of
/// [`crate::fixed_point`]).
#[derive(Clone, Debug)]
pub struct Dsfp {
    settings: DsfpSettings,
    /// The iterate `r` at which `u` was computed (to detect a changed state).
    r: Vec<f64>,
    /// `u = W r + q` at [`Dsfp::r`].
    u: Vec<f64>,
    /// The next iterate.
    z: Vec<f64>,
    u_valid: bool,
    /// The absolute step.
    rho: f64,
    /// `||r_{k+1} - r_k||` of the last step and of the first.
    step_norm: f64,
    first_step: f64,
    /// Why the last step reported [`StepOutcome::Stalled`].
    stalled: Option<Stall>,
}

/// Why a `dsfp` step reported [`StepOutcome::Stalled`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    /// `r_{k+1} = r_k` exactly.
    Fixed,
    /// The step grew past [`DIVERGENCE`] times the first one, or became non-finite: the step
    /// was not taken.
    Diverging,
}

/// A step longer than this factor times the first step (or a non-finite one) ends the solve
/// as diverging: the fc3d error is relative to `max(||q||, ||r||, ||u||)` and stays bounded
/// while `r` grows without bound, so the executor's divergence test cannot see it.
const DIVERGENCE: f64 = 1e8;

impl Dsfp {
    /// A `dsfp` solver; errors on invalid settings.
    pub fn new(settings: DsfpSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            rho: settings.rho,
            settings,
            r: Vec::new(),
            u: Vec::new(),
            z: Vec::new(),
            u_valid: false,
            step_norm: 0.0,
            first_step: 0.0,
            stalled: None,
        })
    }
}

impl Solver for Dsfp {
    crate::solver::coulomb_solver!("dsfp");

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let s = &self.settings;
        self.rho = match s.rho_scale {
            RhoScale::Absolute => s.rho,
            RhoScale::LambdaMax => {
                let l = problem.lambda_max(s.power_iterations as usize);
                if !(l > 0.0 && l.is_finite()) {
                    return Err(SolverError::InvalidSetting {
                        name: "rho_scale",
                        value: format!("lambda_max(W) = {l:e}"),
                        reason: "the step relative to 1 / lambda_max(W) needs lambda_max > 0 \
                                 (use rho_scale \"absolute\")",
                    });
                }
                s.rho / l
            }
        };
        let n = problem.n();
        self.r = state.gamma.clone();
        self.u = vec![0.0; n];
        self.z = vec![0.0; n];
        problem.gradient(&self.r, &mut self.u);
        self.u_valid = true;
        self.step_norm = 0.0;
        self.first_step = 0.0;
        self.stalled = None;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let (mu, bs) = coulomb_blocks(self, problem)?;
        if !self.u_valid || self.r != state.gamma {
            self.r.copy_from_slice(&state.gamma);
            problem.gradient(&self.r, &mut self.u);
        }
        let rho = self.rho;
        let mut d2 = 0.0;
        for (((z, r), u), &m) in self
            .z
            .chunks_exact_mut(bs)
            .zip(self.r.chunks_exact(bs))
            .zip(self.u.chunks_exact(bs))
            .zip(mu)
        {
            for i in 0..bs {
                z[i] = r[i] - rho * u[i];
            }
            z[0] -= rho * desaxce_shift(u, m);
            project_coulomb_cone(z, m);
            for i in 0..bs {
                d2 += (z[i] - r[i]).powi(2);
            }
        }
        self.step_norm = d2.sqrt();
        if self.first_step == 0.0 {
            self.first_step = self.step_norm;
        }
        if !(self.step_norm <= DIVERGENCE * self.first_step) {
            // growing without bound (or overflowed): keep the last iterate
            self.stalled = Some(Stall::Diverging);
            return Ok(StepOutcome::Stalled);
        }
        std::mem::swap(&mut self.r, &mut self.z);
        problem.gradient(&self.r, &mut self.u);
        state.gamma.copy_from_slice(&self.r);
        state.grad.copy_from_slice(&self.u);
        state.grad_fresh = true;
        self.u_valid = true;
        if d2 == 0.0 {
            self.stalled = Some(Stall::Fixed);
            return Ok(StepOutcome::Stalled);
        }
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("rho", self.rho)]
    }

    fn message(&self) -> Option<String> {
        self.stalled.map(|s| match s {
            Stall::Fixed => format!(
                "dsfp: the projection step with rho = {:.3e} left r unchanged (a fixed point \
                 of the map at rounding level)",
                self.rho
            ),
            Stall::Diverging => format!(
                "dsfp: diverging with rho = {:.3e}: the step grew to {:.3e}, more than {:.0e} \
                 times the first ({:.3e}); the last finite iterate is kept (take a smaller rho)",
                self.rho, self.step_norm, DIVERGENCE, self.first_step
            ),
        })
    }

    fn iter_info(&self) -> IterInfo {
        let mut info = IterInfo::new();
        info.push("step_norm", self.step_norm);
        info
    }
}
