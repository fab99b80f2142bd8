//! APGD: accelerated projected gradient descent with Lipschitz backtracking and adaptive
//! restart, exactly as Mazhar, Heyn, Negrut & Tasora, "Using Nesterov's method to accelerate
//! multibody dynamics with friction and contact", ACM ToG 34(3), 2015, Algorithm 2 (Chrono's
//! `APGDREF`):
//!
//! ```text
//! L = ||N (gamma_0 - 1)|| / ||gamma_0 - 1||, y = gamma_0, theta = 1
//! loop:  g = N y + r
//!        x = P_K(y - g / L)
//!        while (x - y)^T N (x - y) > L ||x - y||^2:  L <- 2L,  x = P_K(y - g / L)
//!        theta' = (-theta^2 + theta sqrt(theta^2 + 4)) / 2,  beta = theta (1 - theta) / (theta^2 + theta')
//!        y = x + beta (x - gamma_k)
//!        if g^T (x - gamma_k) > 0:  y = x, theta' = 1          (adaptive restart)
//!        gamma_{k+1} = x,  theta = theta',  L <- 0.9 L
//! ```
//!
//! The sufficient-decrease test is written as `(x - y)^T N (x - y) > L ||x - y||^2`, which is
//! algebraically the paper's `f(x) > f(y) + g^T (x - y) + L/2 ||x - y||^2` but free of the
//! cancellation of large `f` values that makes the literal test fail near 1e-8.
//! `N y` is never formed by a product: `N y_{k+1} = (1 + beta) N x - beta N gamma_k` from two
//! fresh products, so an iteration costs one product per trial point. The best iterate is kept
//! by the executor.

use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::linalg::norm2;
use serde::{Deserialize, Serialize};

/// Settings of [`Apgd`]. Defaults follow Mazhar et al. 2015: backtracking factor 2, shrink 0.9,
/// adaptive restart on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApgdSettings {
    /// Lipschitz growth factor on a failed sufficient-decrease test (> 1).
    pub backtrack: f64,
    /// Lipschitz shrink factor after each iteration (in (0, 1]).
    pub shrink: f64,
    /// Gradient-based adaptive restart (O'Donoghue & Candes 2015).
    pub restart: bool,
    /// Initial Lipschitz estimate; `None` = `||N (gamma_0 - 1)|| / ||gamma_0 - 1||`.
    pub l0: Option<f64>,
}

impl Default for ApgdSettings {
    fn default() -> Self {
        Self {
            backtrack: 2.0,
            shrink: 0.9,
            restart: true,
            l0: None,
        }
    }
}

impl SolverSettings for ApgdSettings {
    const SOLVER: &'static str = "apgd";

    fn check(&self, v: &mut Validator) {
        v.greater("backtrack", self.backtrack, 1.0)
            .in_open_closed("shrink", self.shrink, 0.0, 1.0)
            .positive_opt("l0", self.l0);
    }
}

/// APGD. Supports every class.
#[derive(Clone, Debug)]
pub struct Apgd {
    settings: ApgdSettings,
    l: f64,
    theta: f64,
    y: Vec<f64>,
    ny: Vec<f64>,
    x: Vec<f64>,
    nx: Vec<f64>,
    ngk: Vec<f64>,
    g: Vec<f64>,
    backtracks: u64,
    restarts: u64,
}

impl Apgd {
    /// An APGD solver; errors on invalid settings.
    pub fn new(settings: ApgdSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            l: 1.0,
            theta: 1.0,
            y: Vec::new(),
            ny: Vec::new(),
            x: Vec::new(),
            nx: Vec::new(),
            ngk: Vec::new(),
            g: Vec::new(),
            backtracks: 0,
            restarts: 0,
        })
    }
}

impl Solver for Apgd {
    fn name(&self) -> &'static str {
        "apgd"
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        self.y = state.gamma.clone();
        self.ny = vec![0.0; n];
        self.x = vec![0.0; n];
        self.nx = vec![0.0; n];
        self.g = vec![0.0; n];
        self.theta = 1.0;
        self.backtracks = 0;
        self.restarts = 0;
        self.l = match self.settings.l0 {
            Some(l) => l,
            None => {
                // L0 = ||N (gamma0 - 1)|| / ||gamma0 - 1|| (Mazhar 2015, line 2)
                for (xi, gi) in self.x.iter_mut().zip(&state.gamma) {
                    *xi = gi - 1.0;
                }
                problem.matvec(&self.x, &mut self.nx);
                let den = norm2(&self.x);
                let l = if den > 0.0 {
                    norm2(&self.nx) / den
                } else {
                    0.0
                };
                if l > 0.0 && l.is_finite() {
                    l
                } else {
                    problem.lambda_max(20).max(f64::MIN_POSITIVE)
                }
            }
        };
        problem.matvec(&self.y, &mut self.ny);
        self.ngk = self.ny.clone();
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let k = problem.constraints();
        let r = problem.instance().r();
        for ((gi, nyi), ri) in self.g.iter_mut().zip(&self.ny).zip(r) {
            *gi = nyi + ri;
        }
        loop {
            let t = 1.0 / self.l;
            for ((xi, yi), gi) in self.x.iter_mut().zip(&self.y).zip(&self.g) {
                *xi = yi - t * gi;
            }
            k.project(&mut self.x);
            problem.matvec(&self.x, &mut self.nx);
            // d = x - y, N d = N x - N y
            let (mut dnd, mut dd) = (0.0, 0.0);
            for i in 0..self.x.len() {
                let d = self.x[i] - self.y[i];
                dnd += d * (self.nx[i] - self.ny[i]);
                dd += d * d;
            }
            if !(dnd.is_finite() && dd.is_finite()) {
                return Err(SolverError::Numerical("non-finite step in APGD".into()));
            }
            if dnd <= self.l * dd {
                break;
            }
            self.l *= self.settings.backtrack;
            self.backtracks += 1;
        }
        let th = self.theta;
        let th_new = (-th * th + th * (th * th + 4.0).sqrt()) / 2.0;
        let beta = th * (1.0 - th) / (th * th + th_new);
        // restart test g^T (x - gamma_k), gamma_k = state.gamma
        let gdx: f64 = self
            .g
            .iter()
            .zip(&self.x)
            .zip(&state.gamma)
            .map(|((g, x), gk)| g * (x - gk))
            .sum();
        if self.settings.restart && gdx > 0.0 {
            self.y.copy_from_slice(&self.x);
            self.ny.copy_from_slice(&self.nx);
            self.theta = 1.0;
            self.restarts += 1;
        } else {
            for i in 0..self.x.len() {
                self.y[i] = self.x[i] + beta * (self.x[i] - state.gamma[i]);
                self.ny[i] = self.nx[i] + beta * (self.nx[i] - self.ngk[i]);
            }
            self.theta = th_new;
        }
        std::mem::swap(&mut state.gamma, &mut self.x);
        std::mem::swap(&mut self.ngk, &mut self.nx);
        self.l *= self.settings.shrink;
        for ((gr, ng), ri) in state.grad.iter_mut().zip(&self.ngk).zip(r) {
            *gr = ng + ri;
        }
        state.grad_fresh = true;
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("backtracks", self.backtracks as f64),
            ("restarts", self.restarts as f64),
            ("lipschitz", self.l),
        ]
    }
}
