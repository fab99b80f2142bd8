//! SPG-QP: spectral projected gradient for QPs with a Barzilai-Borwein step and the
//! Grippo-Lampariello-Lucidi non-monotone rule, with the exact step length on the quadratic
//! (Birgin, Martinez & Raydan 2000; Pospisil & Dostal 2018, Comput. Optim. Appl.; Pospisil's
//! reference `spgqp.m`):
//!
//! ```text
//! g = N x + r,  alpha = 1 / lambda_max(N)  (power iterations, counted)
//! loop:  d = P_K(x - alpha g) - x;  N d  (the one product of an iteration)
//!        f_max = max of the last m objective values
//!        xi = (f_max - f) / d^T N d,  beta_bar = -g^T d / d^T N d
//!        beta = min(1, gamma beta_bar + sqrt(gamma^2 beta_bar^2 + 2 xi))
//!        x += beta d,  g += beta N d,  alpha = d^T d / d^T N d
//! ```
//!
//! The gradient is updated by recurrence (as in the reference); `gradient_refresh = Some(k)`
//! recomputes it by a counted product every `k` iterations to remove rounding drift.

use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::instance::objective_from_gradient;
use serde::{Deserialize, Serialize};

/// Settings of [`SpgQp`]. Defaults: GLL memory `m = 12`, GLL sufficient-decrease parameter
/// `gamma = 0.7` (Pospisil's `spgqp.m`), first step
/// `1 / lambda_max(N)` from 20 power iterations, no gradient refresh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpgQpSettings {
    /// GLL memory, the paper's `m` (`>= 1`; 1 = monotone): the step is accepted against the
    /// largest of the last `m` objective values. JSON also accepts the old name `m`.
    #[serde(alias = "m")]
    pub gll_memory: usize,
    /// GLL sufficient-decrease parameter, the paper's `gamma`, in `(0, 1)`. JSON also accepts
    /// the old name `gamma`.
    #[serde(alias = "gamma")]
    pub gll_sufficient_decrease: f64,
    /// Power iterations for the first step `1 / lambda_max(N)`.
    pub power_iterations: usize,
    /// Recompute `g = N x + r` every this many iterations (`None`: never).
    pub gradient_refresh: Option<u64>,
}

impl Default for SpgQpSettings {
    fn default() -> Self {
        Self {
            gll_memory: 12,
            gll_sufficient_decrease: 0.7,
            power_iterations: 20,
            gradient_refresh: None,
        }
    }
}

impl SolverSettings for SpgQpSettings {
    const SOLVER: &'static str = "spgqp";
    const ALIASES: &'static [(&'static str, &'static str)] =
        &[("m", "gll_memory"), ("gamma", "gll_sufficient_decrease")];

    fn check(&self, v: &mut Validator) {
        v.at_least("gll_memory", self.gll_memory as u64, 1)
            .in_open(
                "gll_sufficient_decrease",
                self.gll_sufficient_decrease,
                0.0,
                1.0,
            )
            .at_least_opt("gradient_refresh", self.gradient_refresh, 1);
    }
}

/// SPG-QP. Supports every class.
#[derive(Clone, Debug)]
pub struct SpgQp {
    settings: SpgQpSettings,
    alpha: f64,
    f: f64,
    fs: Vec<f64>,
    fs_pos: usize,
    g: Vec<f64>,
    d: Vec<f64>,
    nd: Vec<f64>,
    iter: u64,
}

impl SpgQp {
    /// An SPG-QP solver; errors on invalid settings.
    pub fn new(settings: SpgQpSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            alpha: 1.0,
            f: 0.0,
            fs: Vec::new(),
            fs_pos: 0,
            g: Vec::new(),
            d: Vec::new(),
            nd: Vec::new(),
            iter: 0,
        })
    }
}

impl Solver for SpgQp {
    fn name(&self) -> &'static str {
        "spgqp"
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        self.g = vec![0.0; n];
        self.d = vec![0.0; n];
        self.nd = vec![0.0; n];
        self.iter = 0;
        problem.gradient(&state.gamma, &mut self.g);
        self.f = objective_from_gradient(&state.gamma, &self.g, problem.instance().r());
        self.fs = vec![self.f; self.settings.gll_memory];
        self.fs_pos = 0;
        let lmax = problem.lambda_max(self.settings.power_iterations);
        self.alpha = if lmax > 0.0 { 1.0 / lmax } else { 1.0 };
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let x = &mut state.gamma;
        for ((di, xi), gi) in self.d.iter_mut().zip(x.iter()).zip(&self.g) {
            *di = xi - self.alpha * gi;
        }
        problem.constraints().project(&mut self.d);
        let mut dd = 0.0;
        for (di, xi) in self.d.iter_mut().zip(x.iter()) {
            *di -= xi;
            dd += *di * *di;
        }
        if dd == 0.0 {
            // x is a fixed point of the projected-gradient map: nothing left to do.
            return Ok(StepOutcome::Stalled);
        }
        problem.matvec(&self.d, &mut self.nd);
        let dnd = cpbench_problems::linalg::dot(&self.d, &self.nd);
        let gd = cpbench_problems::linalg::dot(&self.g, &self.d);
        let fmax = self.fs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let beta = if dnd > 0.0 {
            let xi = (fmax - self.f) / dnd;
            let bbar = -gd / dnd;
            let gam = self.settings.gll_sufficient_decrease;
            let bhat = gam * bbar + (gam * gam * bbar * bbar + 2.0 * xi).max(0.0).sqrt();
            bhat.clamp(0.0, 1.0)
        } else {
            // d in the null space of N: f is linear along d and decreases (g.d < 0).
            1.0
        };
        for (xi, di) in x.iter_mut().zip(&self.d) {
            *xi += beta * di;
        }
        for (gi, ndi) in self.g.iter_mut().zip(&self.nd) {
            *gi += beta * ndi;
        }
        self.iter += 1;
        if self
            .settings
            .gradient_refresh
            .is_some_and(|k| self.iter % k == 0)
        {
            problem.gradient(x, &mut self.g);
            state.grad.copy_from_slice(&self.g);
            state.grad_fresh = true;
        }
        self.f = objective_from_gradient(x, &self.g, problem.instance().r());
        self.fs[self.fs_pos] = self.f;
        self.fs_pos = (self.fs_pos + 1) % self.fs.len();
        if dnd > 0.0 {
            self.alpha = dd / dnd;
        }
        if !self.f.is_finite() {
            return Err(SolverError::Numerical(
                "non-finite objective in SPG-QP".into(),
            ));
        }
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("alpha_bb", self.alpha)]
    }
}
