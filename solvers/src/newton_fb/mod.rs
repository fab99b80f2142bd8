//! Semismooth Newton on the Fischer-Burmeister function for the general LCP
//! `w = M z + q >= 0, z >= 0, z^T w = 0` (cpbench: `M = N`, `q = r`, `z = gamma`), after
//! De Luca, Facchinei & Kanzow (1996), "A semismooth equation approach to the solution of
//! nonlinear complementarity problems", Math. Programming 75, 407-439 (DFK below);
//! docs/formulation.md, "Newton on the Fischer-Burmeister function".
//!
//! With `phi(a, b) = sqrt(a^2 + b^2) - a - b` (zero exactly when `a, b >= 0`, `ab = 0`), the
//! LCP is the equation `Phi(z) = 0`, `Phi_i(z) = phi(z_i, w_i)`, and `Psi = 1/2 ||Phi||^2` is a
//! continuously differentiable merit function with `grad Psi = H^T Phi` for any element `H` of
//! the generalised Jacobian. The element (DFK, Procedure 3.1 / Lemma 3.1, for `F(z) = M z + q`):
//!
//! ```text
//! H = D_a + D_b M,   i not degenerate: a_i = z_i / ||(z_i, w_i)|| - 1,  b_i = w_i / ||(z_i, w_i)|| - 1
//!                    i degenerate (z_i = w_i = 0), with e = 1 on the degenerate set, 0 elsewhere:
//!                    a_i = e_i / ||(e_i, (M e)_i)|| - 1,  b_i = (M e)_i / ||(e_i, (M e)_i)|| - 1
//! ```
//!
//! (the degenerate set is tested exactly, `z_i = w_i = 0`, as in the paper; it costs one
//! product `M e` when it is not empty). One iteration (DFK's algorithm, section 3):
//! 1. solve `H d = -Phi` (LU); if it cannot be solved, or `d` is not a sufficient descent
//!    direction, `grad Psi^T d > -rho ||d||^p`, take the steepest descent `d = -grad Psi`;
//! 2. Armijo backtracking: the first `t = 2^-k` with
//!    `Psi(z + t d) <= Psi(z) + sigma t grad Psi^T d` (at most `max_backtracks` halvings; a
//!    failed Newton line search retries once along `-grad Psi`; when that fails too, the
//!    solve ends as `Stalled`, and so it does when `Psi` has not halved in `stall_iterations`
//!    iterations, the sign of a stationary point of `Psi` that is no solution).
//!
//! Iterates are not kept in `z >= 0` (the equation is unconstrained); the executor measures
//! the LCP error `||z - max(0, z - w)|| / ||q||` at the iterate itself. Near a BD-regular
//! solution (every element of the B-subdifferential nonsingular: e.g. `M` a P-matrix, or a
//! nondegenerate solution whose active block of `M` is nonsingular) the unit Newton step is
//! accepted and convergence is Q-quadratic (DFK Theorem 3.2).
//!
//! Linear algebra: `H` has the pattern of `M` plus the diagonal. For `n <= dense_max_n` it is
//! factorised densely (faer partial-pivoting LU, `8 n^2` bytes); above, by faer's sparse LU
//! (COLAMD column ordering computed once in `init`, numeric factorisation with partial
//! pivoting every iteration into reused storage). Products: one `w = M z + q` per line-search
//! trial (the accepted trial's `w` is the next iteration's, handed to the executor as a fresh
//! gradient), one `M e` at degenerate points; the `M^T` product of `grad Psi` runs along the
//! stored columns of `M` and is counted as one product.
//!
//! Counters: `line_search_steps` (halvings), `gradient_steps` (iterations that took the
//! steepest descent), `factorisations`. Per-iteration trace values: `psi`, `step` (the
//! accepted `t`), `newton` (1 for a Newton direction, 0 for the gradient).

use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::CscMatrix;
use faer::linalg::solvers::Solve;
use faer::Mat;
use serde::{Deserialize, Serialize};

/// Settings of [`NewtonFb`]. Defaults: DFK's `sigma = 1e-4`, `rho = 1e-8`, `p = 2.1`; at most
/// 40 halvings; dense LU up to `n = 200`; stalled after 100 iterations without halving `Psi`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewtonFbSettings {
    /// Armijo constant `sigma` (DFK's `beta`), in `(0, 1/2)`.
    pub sigma: f64,
    /// Constant `rho` of the sufficient-descent test `grad Psi^T d <= -rho ||d||^p`, `> 0`.
    pub rho: f64,
    /// Exponent `p` of the sufficient-descent test, `> 2` (DFK).
    pub p: f64,
    /// Largest number of step halvings of one line search (`>= 1`).
    pub max_backtracks: u32,
    /// Largest `n` factorised by the dense LU; larger instances use the sparse LU.
    pub dense_max_n: usize,
    /// Iterations without halving `Psi` after which the solve ends as `stalled` (the iterates
    /// approach a stationary point of `Psi` that is no solution; Newton's local convergence
    /// halves `Psi` every iteration), `>= 1`.
    pub stall_iterations: u32,
}

impl Default for NewtonFbSettings {
    fn default() -> Self {
        Self {
            sigma: 1e-4,
            rho: 1e-8,
            p: 2.1,
            max_backtracks: 40,
            dense_max_n: 200,
            stall_iterations: 100,
        }
    }
}

impl SolverSettings for NewtonFbSettings {
    const SOLVER: &'static str = "newton-fb";

    fn check(&self, v: &mut Validator) {
        v.in_open("sigma", self.sigma, 0.0, 0.5)
            .positive("rho", self.rho)
            .greater("p", self.p, 2.0)
            .at_least("max_backtracks", self.max_backtracks.into(), 1)
            .at_least("stall_iterations", self.stall_iterations.into(), 1);
    }
}

/// The sparse factorisation of `H = D_a + D_b M` in one fixed pattern: `M`'s plus the
/// diagonal.
struct SparseLu {
    lu: crate::sparse_lu::SparseLu,
    /// Position in the values of each stored entry of `M` (in `M`'s storage order).
    m_pos: Vec<usize>,
    /// Position in the values of each diagonal entry.
    diag_pos: Vec<usize>,
}

/// The CSC pattern of `M` plus its diagonal, in which `newton-fb`'s sparse path factorises the
/// Newton matrix `H = D_a + D_b M` (and `admm` its `N + c I`), and where `M`'s entries and the
/// diagonal sit in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagonalPattern {
    /// Column pointers of the pattern (`n + 1`).
    pub col_ptr: Vec<usize>,
    /// Row indices of the pattern, sorted within each column.
    pub row_idx: Vec<usize>,
    /// Position in the pattern of each stored entry of `M` (in `M`'s storage order).
    pub m_pos: Vec<usize>,
    /// Position in the pattern of each diagonal entry (`n`).
    pub diag_pos: Vec<usize>,
}

impl DiagonalPattern {
    /// The pattern of the square `m` (sorted row indices per column, as [`CscMatrix`] keeps
    /// them) with every missing diagonal entry added.
    pub fn of(m: &CscMatrix) -> Self {
        let n = m.ncols();
        let (cp, ri) = (m.col_ptr(), m.row_idx());
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::with_capacity(m.nnz() + n);
        let mut m_pos = vec![0; m.nnz()];
        let mut diag_pos = vec![0; n];
        col_ptr.push(0);
        for j in 0..n {
            let mut diag_done = false;
            for k in cp[j]..cp[j + 1] {
                let i = ri[k];
                if !diag_done && i >= j {
                    if i > j {
                        diag_pos[j] = row_idx.len();
                        row_idx.push(j);
                    }
                    diag_done = true;
                }
                if i == j {
                    diag_pos[j] = row_idx.len();
                }
                m_pos[k] = row_idx.len();
                row_idx.push(i);
            }
            if !diag_done {
                diag_pos[j] = row_idx.len();
                row_idx.push(j);
            }
            col_ptr.push(row_idx.len());
        }
        Self {
            col_ptr,
            row_idx,
            m_pos,
            diag_pos,
        }
    }
}

impl SparseLu {
    /// The pattern of `M` plus the diagonal ([`DiagonalPattern`]) and its reusable LU
    /// ([`crate::sparse_lu`]).
    fn new(m: &CscMatrix) -> Result<Self, SolverError> {
        let p = DiagonalPattern::of(m);
        Ok(Self {
            lu: crate::sparse_lu::SparseLu::new(m.ncols(), p.col_ptr, p.row_idx)?,
            m_pos: p.m_pos,
            diag_pos: p.diag_pos,
        })
    }

    /// Factorise `H` (values already set) and solve `H x = rhs` in place; `false` when the
    /// factorisation finds `H` singular.
    fn solve(&mut self, rhs: &mut [f64]) -> bool {
        self.lu.solve(rhs)
    }
}

/// The linear solver of the Newton equation.
enum LinearSolver {
    /// Dense partial-pivoting LU of the `n x n` matrix held here.
    Dense(Mat<f64>),
    /// Sparse LU in the pattern of `M` plus the diagonal.
    Sparse(Box<SparseLu>),
}

/// Semismooth Newton on the Fischer-Burmeister function
/// ([`cpbench_problems::ProblemClass::Lcp`] only, any square `M`).
pub struct NewtonFb {
    settings: NewtonFbSettings,
    /// `w = M z + q` at the current iterate, valid when `w_of` equals the iterate.
    w: Vec<f64>,
    w_of: Vec<f64>,
    phi: Vec<f64>,
    da: Vec<f64>,
    db: Vec<f64>,
    grad: Vec<f64>,
    d: Vec<f64>,
    trial: Vec<f64>,
    w_trial: Vec<f64>,
    /// Indicator of the degenerate set and `M e`.
    e: Vec<f64>,
    me: Vec<f64>,
    lin: Option<LinearSolver>,
    line_search_steps: u64,
    gradient_steps: u64,
    factorisations: u64,
    last_psi: f64,
    last_t: f64,
    last_newton: bool,
    /// `Psi` at the start of the current progress window and the iterations since.
    window_psi: f64,
    window_len: u32,
    /// Why the solve stalled, for [`Solver::message`].
    stall_reason: Option<&'static str>,
}

impl NewtonFb {
    /// A Newton-FB solver; errors on invalid settings.
    pub fn new(settings: NewtonFbSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            w: Vec::new(),
            w_of: Vec::new(),
            phi: Vec::new(),
            da: Vec::new(),
            db: Vec::new(),
            grad: Vec::new(),
            d: Vec::new(),
            trial: Vec::new(),
            w_trial: Vec::new(),
            e: Vec::new(),
            me: Vec::new(),
            lin: None,
            line_search_steps: 0,
            gradient_steps: 0,
            factorisations: 0,
            last_psi: f64::NAN,
            last_t: f64::NAN,
            last_newton: false,
            window_psi: f64::INFINITY,
            window_len: 0,
            stall_reason: None,
        })
    }
}

/// `phi(a, b) = sqrt(a^2 + b^2) - a - b`, evaluated as `(-2 a b) / (sqrt(a^2 + b^2) + a + b)`
/// when `a, b > 0` (no cancellation: both forms are equal, the second is accurate where the
/// first subtracts nearly equal numbers).
#[inline]
pub fn fischer_burmeister(a: f64, b: f64) -> f64 {
    let s = a.hypot(b);
    if a > 0.0 && b > 0.0 {
        -2.0 * a * b / (s + a + b)
    } else {
        s - a - b
    }
}

/// `Psi(z) = 1/2 ||Phi(z)||^2` from `z` and `w = M z + q`.
fn merit(z: &[f64], w: &[f64]) -> f64 {
    0.5 * z
        .iter()
        .zip(w)
        .map(|(&a, &b)| fischer_burmeister(a, b).powi(2))
        .sum::<f64>()
}

impl NewtonFb {
    /// `Phi`, `D_a`, `D_b` (DFK's element, one product `M e` at a degenerate point), `Psi` and
    /// `grad Psi = D_a Phi + M^T (D_b Phi)` at `z` with `self.w` current.
    #[allow(clippy::needless_range_loop)] // five arrays indexed together
    fn linearise(&mut self, problem: &Problem, z: &[f64]) -> f64 {
        let n = z.len();
        let mut degenerate = false;
        for i in 0..n {
            let deg = z[i] == 0.0 && self.w[i] == 0.0;
            self.e[i] = if deg { 1.0 } else { 0.0 };
            degenerate |= deg;
        }
        if degenerate {
            problem.matvec(&self.e, &mut self.me);
        }
        let mut psi = 0.0;
        for i in 0..n {
            let (a, b) = (z[i], self.w[i]);
            let f = fischer_burmeister(a, b);
            self.phi[i] = f;
            psi += f * f;
            let (ea, eb) = if self.e[i] != 0.0 {
                (1.0, self.me[i])
            } else {
                (a, b)
            };
            let s = ea.hypot(eb);
            self.da[i] = ea / s - 1.0;
            self.db[i] = eb / s - 1.0;
        }
        // grad = D_a Phi + M^T (D_b Phi): column j of M dotted with D_b Phi
        let m = problem.instance().n_mat();
        problem.add_matvecs(1);
        for j in 0..n {
            let (ri, va) = m.col(j);
            let mut s = self.da[j] * self.phi[j];
            for (&i, &v) in ri.iter().zip(va) {
                s += v * self.db[i] * self.phi[i];
            }
            self.grad[j] = s;
        }
        0.5 * psi
    }

    /// Solve `H d = -Phi` into `self.d`; `false` when `H` is singular (or the solution is
    /// not finite).
    fn newton_direction(&mut self, problem: &Problem) -> bool {
        let m = problem.instance().n_mat();
        let n = self.d.len();
        self.factorisations += 1;
        let ok = match self.lin.as_mut() {
            Some(LinearSolver::Dense(h)) => {
                h.fill(0.0);
                for j in 0..n {
                    let (ri, va) = m.col(j);
                    for (&i, &v) in ri.iter().zip(va) {
                        h[(i, j)] = self.db[i] * v;
                    }
                    h[(j, j)] += self.da[j];
                }
                let rhs = faer::Col::<f64>::from_fn(n, |i| -self.phi[i]);
                let x = h.partial_piv_lu().solve(&rhs);
                for (di, xi) in self.d.iter_mut().zip(x.iter()) {
                    *di = *xi;
                }
                true
            }
            Some(LinearSolver::Sparse(lu)) => {
                let values = lu.lu.values_mut();
                values.fill(0.0);
                let (cp, ri, va) = (m.col_ptr(), m.row_idx(), m.values());
                for j in 0..n {
                    for k in cp[j]..cp[j + 1] {
                        values[lu.m_pos[k]] = self.db[ri[k]] * va[k];
                    }
                    values[lu.diag_pos[j]] += self.da[j];
                }
                for (di, p) in self.d.iter_mut().zip(&self.phi) {
                    *di = -p;
                }
                lu.solve(&mut self.d)
            }
            None => false,
        };
        ok && self.d.iter().all(|v| v.is_finite())
    }

    /// Armijo backtracking along `self.d` from `z` (merit `psi`, slope `slope = grad^T d < 0`);
    /// on success `z` and `self.w` move to the accepted point and the step length is returned.
    fn line_search(
        &mut self,
        problem: &Problem,
        z: &mut [f64],
        psi: f64,
        slope: f64,
    ) -> Option<f64> {
        let mut t = 1.0;
        for k in 0..=self.settings.max_backtracks {
            for ((x, &zi), &di) in self.trial.iter_mut().zip(z.iter()).zip(&self.d) {
                *x = zi + t * di;
            }
            problem.gradient(&self.trial, &mut self.w_trial);
            let psi_t = merit(&self.trial, &self.w_trial);
            if psi_t <= psi + self.settings.sigma * t * slope {
                z.copy_from_slice(&self.trial);
                std::mem::swap(&mut self.w, &mut self.w_trial);
                self.w_of.copy_from_slice(z);
                return Some(t);
            }
            if k < self.settings.max_backtracks {
                self.line_search_steps += 1;
            }
            t *= 0.5;
        }
        None
    }
}

impl Solver for NewtonFb {
    fn name(&self) -> &'static str {
        "newton-fb"
    }

    /// Any square `M` (and so, by the trait's default, the LCP class alone).
    fn solves_general_lcp(&self) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        for v in [
            &mut self.w,
            &mut self.phi,
            &mut self.da,
            &mut self.db,
            &mut self.grad,
            &mut self.d,
            &mut self.trial,
            &mut self.w_trial,
            &mut self.e,
            &mut self.me,
        ] {
            *v = vec![0.0; n];
        }
        self.w_of = state.gamma.clone();
        problem.gradient(&state.gamma, &mut self.w);
        let m = problem.instance().n_mat();
        self.lin = Some(if n <= self.settings.dense_max_n {
            LinearSolver::Dense(Mat::zeros(n, n))
        } else {
            LinearSolver::Sparse(Box::new(SparseLu::new(m)?))
        });
        self.line_search_steps = 0;
        self.gradient_steps = 0;
        self.factorisations = 0;
        self.window_psi = f64::INFINITY;
        self.window_len = 0;
        self.stall_reason = None;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let z = &mut state.gamma;
        if self.w_of != *z {
            problem.gradient(z, &mut self.w);
            self.w_of.copy_from_slice(z);
        }
        let psi = self.linearise(problem, z);
        self.last_psi = psi;
        if psi == 0.0 {
            self.stall_reason = Some("Psi = 0: the iterate solves the LCP exactly");
            return Ok(StepOutcome::Stalled);
        }
        let dnorm_p = |d: &[f64], p: f64| d.iter().map(|v| v * v).sum::<f64>().sqrt().powf(p);
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let newton = self.newton_direction(problem) && {
            let slope = dot(&self.grad, &self.d);
            slope <= -self.settings.rho * dnorm_p(&self.d, self.settings.p)
        };
        let mut accepted = None;
        if newton {
            let slope = dot(&self.grad, &self.d);
            accepted = self.line_search(problem, z, psi, slope);
            self.last_newton = accepted.is_some();
        }
        if accepted.is_none() {
            self.gradient_steps += 1;
            self.last_newton = false;
            for (d, g) in self.d.iter_mut().zip(&self.grad) {
                *d = -g;
            }
            let slope = -dot(&self.grad, &self.grad);
            if slope < 0.0 {
                accepted = self.line_search(problem, z, psi, slope);
            }
        }
        let Some(t) = accepted else {
            self.stall_reason = Some("no decrease of Psi along the Newton or gradient direction");
            return Ok(StepOutcome::Stalled);
        };
        if psi <= 0.5 * self.window_psi {
            self.window_psi = psi;
            self.window_len = 0;
        } else {
            self.window_len += 1;
        }
        self.last_t = t;
        state.grad.copy_from_slice(&self.w);
        state.grad_fresh = true;
        if self.window_len >= self.settings.stall_iterations {
            self.stall_reason = Some(
                "Psi not halved in stall_iterations iterations: near a stationary point of Psi \
                 that is no solution",
            );
            return Ok(StepOutcome::Stalled);
        }
        Ok(StepOutcome::Continue)
    }

    fn message(&self) -> Option<String> {
        self.stall_reason.map(str::to_string)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("line_search_steps", self.line_search_steps as f64),
            ("gradient_steps", self.gradient_steps as f64),
            ("factorisations", self.factorisations as f64),
        ]
    }

    fn iter_info(&self) -> crate::observer::IterInfo {
        let mut info = crate::observer::IterInfo::new();
        info.push("psi", self.last_psi);
        info.push("step", self.last_t);
        info.push("newton", if self.last_newton { 1.0 } else { 0.0 });
        info
    }
}
