//! NSN-AC: damped semismooth Newton on the Alart-Curnier function for the true Coulomb problem
//! (Alart & Curnier 1991, CMAME 92, "A mixed formulation for frictional contact problems prone
//! to Newton like solution methods"; Christensen, Klarbring, Pang & Stromberg 1998, IJNME 42;
//! Acary & Brogliato 2008, section 13.5; Siconos' `SICONOS_FRICTION_3D_NSN_AC`).
//!
//! In fclib's notation, as in Alart & Curnier: `u = W r + q` is cpbench's `u = N gamma + r`
//! (`W = N`, the reaction `r` is our unknown `gamma`, fclib's `q` our linear term `r`); in the
//! code `r` is the reaction and `u` the velocity. With `u = W r + q` and a step `rho_c > 0` per contact (`1 / lambda_max(sym(W_cc))`), the
//! Alart-Curnier function of contact `c` is
//!
//! ```text
//! F_n = r_n - max(0, r_n - rho u_n)
//! F_T = r_T - P_D(r_T - rho u_T, mu max(0, r_n - rho u_n))    (P_D: onto the disk of radius R)
//! ```
//!
//! and `F(r) = 0` exactly when `r` solves the Coulomb problem. One step: the generalised
//! Jacobian `J = A + B W` (`A = dF/dr`, `B = dF/du`, 3x3 blocks per contact), the Newton
//! direction `J d = -F` by a dense LU (so the solver is for `n` up to a few thousand), and an
//! Armijo backtracking on `1/2 ||F||^2` (at most a third of `max_halvings` halvings, one
//! product each). When the LU fails or its line search does (a rank-deficient `W` makes `J`
//! singular), the Levenberg-Marquardt direction `(J^T J + ||F|| I) d = -J^T F` (Fan & Yuan
//! 2005, Computing 74) with up to `max_halvings` halvings; when that fails too, `Stalled`.
//!
//! `step` allocates the dense `n x n` Jacobian and its LU (faer); the vectors are allocated
//! in `init`. Each Newton step counts one product for `u` and one per line-search trial.

use crate::kernels::{coulomb_mu, lambda_max3, sym_part3};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::ProblemClass;
use faer::linalg::solvers::Solve;
use faer::{Col, Mat, Side};
use serde::{Deserialize, Serialize};

/// Settings of [`NsnAc`]. Defaults: Armijo constant `1e-4`, at most 30 halvings, `n <= 4000`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NsnAcSettings {
    /// Armijo sufficient-decrease constant `sigma`, in `(0, 1/2)`.
    pub sigma: f64,
    /// Largest number of step halvings per Newton step (`>= 1`).
    pub max_halvings: u32,
    /// Largest `n` accepted (the Jacobian is dense: `8 n^2` bytes).
    pub max_n: usize,
}

impl Default for NsnAcSettings {
    fn default() -> Self {
        Self {
            sigma: 1e-4,
            max_halvings: 30,
            max_n: 4000,
        }
    }
}

impl SolverSettings for NsnAcSettings {
    const SOLVER: &'static str = "nsn-ac";

    fn check(&self, v: &mut Validator) {
        v.in_open("sigma", self.sigma, 0.0, 0.5).at_least(
            "max_halvings",
            self.max_halvings.into(),
            1,
        );
    }
}

/// Semismooth Newton on the Alart-Curnier function ([`ProblemClass::Coulomb`] only).
#[derive(Clone, Debug)]
pub struct NsnAc {
    settings: NsnAcSettings,
    rho: Vec<f64>,
    u: Vec<f64>,
    f: Vec<f64>,
    trial: Vec<f64>,
    /// Per contact `[A_c | B_c]`, row-major 3x3 each.
    ab: Vec<([f64; 9], [f64; 9])>,
    halvings: u64,
    lm_steps: u64,
}

impl NsnAc {
    /// A semismooth Newton solver; errors on invalid settings.
    pub fn new(settings: NsnAcSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            rho: Vec::new(),
            u: Vec::new(),
            f: Vec::new(),
            trial: Vec::new(),
            ab: Vec::new(),
            halvings: 0,
            lm_steps: 0,
        })
    }
}

/// Alart-Curnier function of one contact into `f`; with `jac`, also `A = dF/dr`, `B = dF/du`
/// (row-major) of one element of the generalised Jacobian.
#[inline]
fn ac_contact(
    r: &[f64],
    u: &[f64],
    mu: f64,
    rho: f64,
    f: &mut [f64],
    jac: Option<(&mut [f64; 9], &mut [f64; 9])>,
) {
    let xn = r[0] - rho * u[0];
    let y = [r[1] - rho * u[1], r[2] - rho * u[2]];
    let rad = mu * xn.max(0.0);
    let ny = y[0].hypot(y[1]);
    f[0] = r[0] - xn.max(0.0);
    let (p, inside) = if ny <= rad {
        (y, true)
    } else {
        (
            if ny > 0.0 {
                [rad * y[0] / ny, rad * y[1] / ny]
            } else {
                [0.0, 0.0]
            },
            false,
        )
    };
    f[1] = r[1] - p[0];
    f[2] = r[2] - p[1];
    let Some((a, b)) = jac else { return };
    a.iter_mut().for_each(|v| *v = 0.0);
    b.iter_mut().for_each(|v| *v = 0.0);
    // normal row
    if xn > 0.0 {
        b[0] = rho;
    } else {
        a[0] = 1.0;
    }
    // dP/dy (2x2) and dP/dR (2)
    let (dpdy, dpdr) = if inside {
        ([1.0, 0.0, 0.0, 1.0], [0.0, 0.0])
    } else if ny > 0.0 {
        let (e0, e1) = (y[0] / ny, y[1] / ny);
        let s = rad / ny;
        (
            [
                s * (1.0 - e0 * e0),
                -s * e0 * e1,
                -s * e0 * e1,
                s * (1.0 - e1 * e1),
            ],
            [e0, e1],
        )
    } else {
        ([0.0; 4], [0.0, 0.0])
    };
    let drdx = if xn > 0.0 { mu } else { 0.0 };
    for i in 0..2 {
        let row = 3 * (i + 1);
        // dF_T/dr_n = -dP/dR dR/dx_n; dF_T/du_n = dP/dR dR/dx_n rho
        a[row] = -dpdr[i] * drdx;
        b[row] = dpdr[i] * drdx * rho;
        for j in 0..2 {
            let d = dpdy[2 * i + j];
            a[row + 1 + j] = if i == j { 1.0 } else { 0.0 } - d;
            b[row + 1 + j] = rho * d;
        }
    }
}

impl NsnAc {
    /// `F(r)` into `self.f` (after `u = W r + q` into `self.u`, one counted product) and
    /// `1/2 ||F||^2`; with `jac`, also the per-contact blocks.
    fn eval(&mut self, problem: &Problem, r: &[f64], mu: &[f64], jac: bool) -> f64 {
        problem.gradient(r, &mut self.u);
        let mut theta = 0.0;
        for (c, &m) in mu.iter().enumerate() {
            let o = 3 * c;
            let (rr, uu) = (&r[o..o + 3], &self.u[o..o + 3]);
            let fc = &mut self.f[o..o + 3];
            if jac {
                let (a, b) = &mut self.ab[c];
                ac_contact(rr, uu, m, self.rho[c], fc, Some((a, b)));
            } else {
                ac_contact(rr, uu, m, self.rho[c], fc, None);
            }
            theta += fc.iter().map(|v| v * v).sum::<f64>();
        }
        0.5 * theta
    }
}

impl NsnAc {
    /// Armijo backtracking along `d` from `state.gamma` on `1/2 ||F||^2` (value `theta0` at
    /// `t = 0`), at most `halvings` halvings; on success `state.gamma` moves.
    fn line_search(
        &mut self,
        problem: &Problem,
        state: &mut IterState,
        mu: &[f64],
        d: &[f64],
        theta0: f64,
        halvings: u32,
    ) -> bool {
        let mut t = 1.0;
        for _ in 0..=halvings {
            for (i, x) in self.trial.iter_mut().enumerate() {
                *x = state.gamma[i] + t * d[i];
            }
            let trial = std::mem::take(&mut self.trial);
            let theta = self.eval(problem, &trial, mu, false);
            self.trial = trial;
            if theta <= (1.0 - 2.0 * self.settings.sigma * t) * theta0 {
                state.gamma.copy_from_slice(&self.trial);
                return true;
            }
            t *= 0.5;
            self.halvings += 1;
        }
        false
    }
}

impl Solver for NsnAc {
    fn name(&self) -> &'static str {
        "nsn-ac"
    }

    fn supports(&self, class: ProblemClass) -> bool {
        class == ProblemClass::Coulomb
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        if n > self.settings.max_n {
            return Err(SolverError::InvalidSetting {
                name: "max_n",
                value: self.settings.max_n.to_string(),
                reason: "the instance is larger than max_n (dense Jacobian)",
            });
        }
        let nc = n / 3;
        self.rho = (0..nc)
            .map(|c| {
                let l = lambda_max3(&sym_part3(&problem.instance().diag_block(c)));
                if l > 0.0 {
                    1.0 / l
                } else {
                    1.0
                }
            })
            .collect();
        self.u = vec![0.0; n];
        self.f = vec![0.0; n];
        self.trial = vec![0.0; n];
        self.ab = vec![([0.0; 9], [0.0; 9]); nc];
        self.halvings = 0;
        self.lm_steps = 0;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let mu = coulomb_mu(self, inst)?;
        let n = problem.n();
        let theta0 = self.eval(problem, &state.gamma, mu, true);
        if theta0 == 0.0 {
            return Ok(StepOutcome::Stalled);
        }
        // J = A + B W, assembled column by column of W
        let w = inst.n_mat();
        let mut jm = Mat::<f64>::zeros(n, n);
        for (c, (a, _)) in self.ab.iter().enumerate() {
            let o = 3 * c;
            for i in 0..3 {
                for j in 0..3 {
                    jm[(o + i, o + j)] += a[3 * i + j];
                }
            }
        }
        for col in 0..n {
            let (rows, vals) = w.col(col);
            for (&i, &v) in rows.iter().zip(vals) {
                let (c, li) = (i / 3, i % 3);
                let b = &self.ab[c].1;
                for k in 0..3 {
                    let bk = b[3 * k + li];
                    if bk != 0.0 {
                        jm[(3 * c + k, col)] += bk * v;
                    }
                }
            }
        }
        let rhs = Col::<f64>::from_fn(n, |i| -self.f[i]);
        // 1. the Newton direction (LU); 2. when it fails or its line search does, the
        // Levenberg-Marquardt direction (J^T J + lambda I) d = -J^T F, lambda = ||F||
        // (Fan & Yuan 2005), which is a descent direction for the merit also where J is
        // singular (rank-deficient W makes the rows of sticking contacts dependent).
        // A singular J gives non-finite entries in the LU solve: the finiteness test catches it.
        let d: Vec<f64> = jm.partial_piv_lu().solve(&rhs).iter().copied().collect();
        if d.iter().all(|v| v.is_finite())
            && self.line_search(
                problem,
                state,
                mu,
                &d,
                theta0,
                self.settings.max_halvings / 3,
            )
        {
            return Ok(StepOutcome::Continue);
        }
        self.lm_steps += 1;
        let lambda = (2.0 * theta0).sqrt();
        let mut h = jm.transpose() * &jm;
        for i in 0..n {
            h[(i, i)] += lambda;
        }
        let g = jm.transpose() * &rhs;
        let Ok(llt) = h.llt(Side::Lower) else {
            return Ok(StepOutcome::Stalled);
        };
        let d: Vec<f64> = llt.solve(&g).iter().copied().collect();
        if d.iter().any(|v| !v.is_finite()) {
            return Ok(StepOutcome::Stalled);
        }
        if self.line_search(problem, state, mu, &d, theta0, self.settings.max_halvings) {
            Ok(StepOutcome::Continue)
        } else {
            Ok(StepOutcome::Stalled)
        }
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("halvings", self.halvings as f64),
            ("lm_steps", self.lm_steps as f64),
        ]
    }
}
