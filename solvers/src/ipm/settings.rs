//! Settings of the interior point ([`IpmSettings`]).

use crate::settings::{SolverSettings, Validator};
use serde::{Deserialize, Serialize};

/// Settings of [`Ipm`](super::Ipm).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IpmSettings {
    /// Own iteration cap (the executor's cap also applies).
    pub max_iter: u64,
    /// Fraction of the step to the boundary taken (in (0, 1)).
    pub step_fraction: f64,
    /// Mehrotra's corrector step (off = plain predictor with `sigma` from the affine step).
    pub corrector: bool,
    /// Static regularisation of the first factorisation attempt, relative to the largest
    /// diagonal of `N` (0 = none; retries grow it).
    pub reg_static: f64,
    /// Dynamic regularisation threshold: pivots below `reg_dynamic_eps * max diag N` are
    /// replaced by `reg_dynamic_delta * max diag N`.
    pub reg_dynamic_eps: f64,
    /// Dynamic regularisation shift: a pivot below the threshold (`reg_dynamic_eps`) is
    /// replaced by `reg_dynamic_delta * max diag N`.
    pub reg_dynamic_delta: f64,
    /// Iterative refinement steps per solve at most (each costs one product with the
    /// assembled `K` and one solve).
    pub refine: u32,
    /// Refine only while `||rhs - K dx||_inf > refine_tol ||rhs||_inf`.
    pub refine_tol: f64,
    /// End the solve when `mu < mu_min * mu_0`.
    pub mu_min: f64,
}

impl Default for IpmSettings {
    fn default() -> Self {
        Self {
            max_iter: 200,
            step_fraction: 0.99,
            corrector: true,
            reg_static: 0.0,
            reg_dynamic_eps: 1e-13,
            reg_dynamic_delta: 1e-7,
            refine: 2,
            refine_tol: 1e-12,
            mu_min: 1e-20,
        }
    }
}

impl SolverSettings for IpmSettings {
    const SOLVER: &'static str = "ipm";

    fn check(&self, v: &mut Validator) {
        v.in_open("step_fraction", self.step_fraction, 0.0, 1.0)
            .non_negative("reg_static", self.reg_static)
            .non_negative("reg_dynamic_eps", self.reg_dynamic_eps)
            .non_negative("reg_dynamic_delta", self.reg_dynamic_delta)
            .non_negative("mu_min", self.mu_min)
            .non_negative("refine_tol", self.refine_tol);
    }
}
