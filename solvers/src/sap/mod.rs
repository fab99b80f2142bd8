//! SAP, the semi-analytic primal solver of Drake (Castro, Permenter & Han 2022, "An
//! unconstrained convex formulation of compliant contact", IEEE T-RO 39(2), sec. V-VII), for
//! the compliant CCP: Newton's method with an exact line search on an unconstrained, convex
//! problem in the generalised velocities; and [`PrimalCg`], MuJoCo's nonlinear conjugate
//! gradient on the same problem (no factorisation).
//!
//! # The problem
//! A compliant CCP instance (`Instance::with_compliance`, docs/formulation.md "Compliant
//! contact") on the matrix-free storage holds `N = D^T M^-1 D` through its factors (`D`,
//! `m x n`; `M` symmetric positive definite, `m` generalised velocities: diagonal for the
//! generated scenes, sparse for a global fclib or Siconos file read with `--operator
//! matrix-free`, where `D` is the file's `H`), the compliance `R` (diagonal, `> 0`) and
//! `r`; it asks for `gamma in K` with `(N + R) gamma + r in K*`, `gamma . ((N + R) gamma + r)
//! = 0`. With `w` in `R^m` (SAP's `v - v*`: our `r` already holds `D^T v*` and the bias
//! `-v_hat`), the contact velocities `v_c = D_c^T w + r_c` and per contact
//! `y_c = -R_c^-1 v_c`, `gamma_c(w) = argmin { 1/2 ||g - y_c||_R^2 : g in K_mu }` (SAP's
//! projection in the `R` norm, eq. 16), SAP minimises
//!
//! ```text
//! ell(w) = 1/2 w^T M w + sum_c 1/2 gamma_c^T R_c gamma_c,
//! grad ell = M w - D gamma(w),      Hessian H = M + D G D^T,  G_c = -d gamma_c / d v_c.
//! ```
//!
//! At its minimiser `M w = D gamma`, so `v_c = (N gamma + r)_c` and the projection's optimality
//! condition `R (gamma - y) in K*`, `_|_ gamma` is the compliant CCP's (the problem's dual is
//! `min 1/2 gamma^T (N + R) gamma + r^T gamma` over `K`, SAP's eq. 19). With `R_c = diag(R_n,
//! R_t, R_t)` the `R`-norm projection is Euclidean in `y~ = R^1/2 y` onto the cone of
//! `mu~ = mu sqrt(R_t / R_n)`: `gamma = R^-1/2 P(y~)`, `G_c = R^-1/2 J_P R^-1/2` with `J_P` the
//! Jacobian of the cone projection (identity inside, 0 in the polar cone, the closed form on
//! the boundary region), and `1/2 gamma^T R gamma = 1/2 ||P(y~)||^2`.
//!
//! # The iteration
//! Newton direction `H dw = -grad ell` (sparse Cholesky of the `m x m` Hessian, faer: one
//! symbolic factorisation in `init` on the pattern of `M` and the contacts' `D_c D_c^T`, one
//! numeric factorisation per iteration, [`hessian::Hessian`]), then the exact line search of SAP (sec. VII-B): the minimiser of the convex
//! `phi(alpha) = ell(w + alpha dw)` on `[0, alpha_max]` by safeguarded Newton-Raphson on
//! `phi'(alpha) = dw^T M (w + alpha dw) - (D^T dw) . gamma(w + alpha dw)` (Newton steps with
//! `phi'' = dw^T M dw + (D^T dw)^T G (D^T dw)`, bisection when they leave the bracket), to
//! `|phi'| <= ls_rtol |phi'(0)|`. The iterate handed to the executor is `gamma(w)`, always in
//! `K`; the executor stops on the harness residual. Start: `w = M^-1 D gamma_0` (the warm start
//! mapped to velocities; 0 from zero). Counted: one `N`-product's worth per iteration is the
//! gradient (`D` and `D^T` products are counted as one `N`-product each), the factorisations,
//! the line-search steps.
//!
//! With a sparse `M` the gradient is `M w - D gamma` from two sparse products, the line
//! search's `dw^T M dw` and `w^T M dw` one more, and the Hessian's pattern holds `M`'s lower
//! triangle; `primal-cg` preconditions with `M`'s diagonal (exact for a diagonal `M`).
//!
//! Refused (with the reason): a class other than the CCP, an instance without the
//! matrix-free storage (SAP needs `D` and `M`: `cpbench generate --operator matrix-free`), one
//! without a compliance, a compliance with a zero entry or with `R_t1 != R_t2` on a contact
//! (MuJoCo's mapping gives unequal tangential entries; SAP's are equal); a factor predicted
//! above the memory budget ends `init` with status `unsupported`.

use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::{CscMatrix, Instance, ProblemClass};
use serde::{Deserialize, Serialize};

pub mod hessian;
use hessian::Hessian;

/// Settings of [`Sap`]. Defaults: SAP's `alpha_max = 1.5` (Castro et al. 2022, sec. VII-B), a
/// line search to `1e-10` of `|phi'(0)|` in at most 100 steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SapSettings {
    /// Largest line-search step `alpha_max` (> 0).
    pub alpha_max: f64,
    /// Line-search stop: `|phi'(alpha)| <= ls_rtol |phi'(0)|` (> 0).
    pub ls_rtol: f64,
    /// Largest number of line-search steps per iteration (>= 1).
    pub ls_max_iter: u32,
}

impl Default for SapSettings {
    fn default() -> Self {
        Self {
            alpha_max: 1.5,
            ls_rtol: 1e-10,
            ls_max_iter: 100,
        }
    }
}

impl SolverSettings for SapSettings {
    const SOLVER: &'static str = "sap";

    fn check(&self, v: &mut Validator) {
        v.positive("alpha_max", self.alpha_max)
            .positive("ls_rtol", self.ls_rtol)
            .positive("ls_max_iter", f64::from(self.ls_max_iter));
    }
}

/// One contact's projection in the `R` norm (module docs): `gamma`, `G = -d gamma / d v_c`
/// (row-major 3x3) and the cost `1/2 gamma^T R gamma`, for the contact velocity `v`, the
/// compliance `(R_n, R_t)` and the friction coefficient `mu`.
pub fn contact_response(v: &[f64; 3], rn: f64, rt: f64, mu: f64) -> ([f64; 3], [f64; 9], f64) {
    let s = [rn.sqrt(), rt.sqrt(), rt.sqrt()];
    let y = [-v[0] / s[0], -v[1] / s[1], -v[2] / s[2]];
    let mu_t = mu * (rt / rn).sqrt();
    let t = y[1].hypot(y[2]);
    let (p, j): ([f64; 3], [f64; 9]) = if t <= mu_t * y[0] {
        (y, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    } else if mu_t * t <= -y[0] {
        ([0.0; 3], [0.0; 9])
    } else {
        let k = 1.0 + mu_t * mu_t;
        let pn = (y[0] + mu_t * t) / k;
        let e = [y[1] / t, y[2] / t];
        let mut j = [0.0; 9];
        j[0] = 1.0 / k;
        for a in 0..2 {
            j[1 + a] = mu_t * e[a] / k;
            j[3 * (1 + a)] = mu_t * e[a] / k;
            for b in 0..2 {
                let id = if a == b { 1.0 } else { 0.0 };
                j[3 * (1 + a) + 1 + b] =
                    mu_t * (mu_t * e[a] * e[b] / k + pn * (id - e[a] * e[b]) / t);
            }
        }
        ([pn, mu_t * pn * e[0], mu_t * pn * e[1]], j)
    };
    let gamma = [p[0] / s[0], p[1] / s[1], p[2] / s[2]];
    let mut g = [0.0; 9];
    for a in 0..3 {
        for b in 0..3 {
            g[3 * a + b] = j[3 * a + b] / (s[a] * s[b]);
        }
    }
    (gamma, g, 0.5 * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]))
}

/// A bilateral (joint) block's response (module docs): the projection onto `R^3` is the
/// identity, so `gamma = -R^-1 v`, `G = R^-1` and the cost `1/2 gamma^T R gamma = 1/2 v^T
/// R^-1 v`, for the block's velocity `v` and compliances `r` (3 entries, `> 0`): the compliant
/// equality `v + R gamma = 0` (Castro et al. 2022 treat holonomic constraints with the same
/// regularised cost).
pub fn joint_response(v: &[f64; 3], r: &[f64]) -> ([f64; 3], [f64; 9], f64) {
    let mut gamma = [0.0; 3];
    let mut g = [0.0; 9];
    let mut cost = 0.0;
    for a in 0..3 {
        gamma[a] = -v[a] / r[a];
        g[4 * a] = 1.0 / r[a];
        cost += 0.5 * v[a] * v[a] / r[a];
    }
    (gamma, g, cost)
}

/// The state both primal solvers share (module docs): `w`, the contact velocities `v_c = D^T w
/// + r`, `gamma(w)`, the `G_c` blocks, the gradient, the direction and the line search.
#[derive(Clone, Debug, Default)]
struct Primal {
    /// The diagonal of `M`.
    m_diag: Vec<f64>,
    /// A sparse (non-diagonal) `M`, both triangles (a global problem), and the scratch of its
    /// products and of `D gamma` (length `m`); `None` for a diagonal `M`.
    mass: Option<CscMatrix>,
    scratch: Vec<f64>,
    w: Vec<f64>,
    dw: Vec<f64>,
    grad: Vec<f64>,
    /// `v_c = D^T w + r` and `D^T dw` (length `n`).
    vc: Vec<f64>,
    dv: Vec<f64>,
    /// Scratch of the line search (length `n`).
    trial: Vec<f64>,
    gamma: Vec<f64>,
    /// `G_c` of every contact (9 numbers each).
    g_blocks: Vec<f64>,
    ls_steps: u64,
    last_alpha: f64,
}

/// How far the exact line search looks: SAP's bracket `[0, alpha_max]` starting at 1, or (the
/// nonlinear CG's direction has no natural scale) a start at the Newton step of `phi` at 0 and
/// a bracket doubled until `phi'` turns positive.
#[derive(Clone, Copy, Debug)]
enum Bracket {
    Capped(f64),
    Open,
}

impl Primal {
    /// Start at `w = M^-1 D gamma_0`; `state.gamma` becomes `gamma(w)`.
    fn init(&mut self, problem: &Problem, state: &mut IterState) {
        let inst = problem.instance();
        let op = inst.matrix_free().expect("checked by refusal");
        let (m, n) = (op.m(), inst.n());
        self.m_diag = op.mass_diagonal();
        self.mass = op.mass_matrix().cloned();
        self.scratch = vec![0.0; if self.mass.is_some() { m } else { 0 }];
        self.w = vec![0.0; m];
        op.velocity_of(&state.gamma, &mut self.w);
        self.dw = vec![0.0; m];
        self.grad = vec![0.0; m];
        self.vc = vec![0.0; n];
        self.dv = vec![0.0; n];
        self.trial = vec![0.0; n];
        self.gamma = vec![0.0; n];
        self.g_blocks = vec![0.0; 9 * (n / 3)];
        self.ls_steps = 0;
        d_t(inst, &self.w, Some(inst.r()), &mut self.vc);
        responses(inst, &self.vc, &mut state.gamma, None);
        problem.add_matvecs(1);
    }

    /// `gamma(w)`, the `G_c` blocks and `grad ell = M w - D gamma` at the current `w`.
    fn gradient(&mut self, problem: &Problem) {
        let inst = problem.instance();
        responses(inst, &self.vc, &mut self.gamma, Some(&mut self.g_blocks));
        let op = inst.matrix_free().expect("checked by refusal");
        if let Some(mm) = &self.mass {
            // M w - D gamma with the sparse M and D
            mm.matvec(&self.w, &mut self.grad);
            op.d().matvec(&self.gamma, &mut self.scratch);
            for (gk, dk) in self.grad.iter_mut().zip(&self.scratch) {
                *gk -= dk;
            }
            return;
        }
        // M w - D gamma = M (w - M^-1 D gamma), with the operator's own product
        op.velocity_of(&self.gamma, &mut self.grad);
        for k in 0..self.w.len() {
            self.grad[k] = self.m_diag[k] * (self.w[k] - self.grad[k]);
        }
    }

    /// `dw^T M dw` and `w^T M dw` (one product with a sparse `M`).
    fn mass_terms(&mut self) -> (f64, f64) {
        if let Some(mm) = &self.mass {
            mm.matvec(&self.dw, &mut self.scratch);
            return (dot(&self.dw, &self.scratch), dot(&self.w, &self.scratch));
        }
        let m = self.w.len();
        let mdw2: f64 = (0..m)
            .map(|k| self.m_diag[k] * self.dw[k] * self.dw[k])
            .sum();
        let mwdw: f64 = (0..m)
            .map(|k| self.m_diag[k] * self.w[k] * self.dw[k])
            .sum();
        (mdw2, mwdw)
    }

    /// The values handed to [`Hessian::factorize`]: the sparse `M`'s, or its diagonal.
    fn mass_values(&self) -> &[f64] {
        match &self.mass {
            Some(mm) => mm.values(),
            None => &self.m_diag,
        }
    }

    /// `phi''(alpha) = dw^T M dw + (D^T dw)^T G (D^T dw)` with the current `G_c` blocks.
    fn curvature(&self, mdw2: f64) -> f64 {
        let mut d2 = mdw2;
        for (c, g) in self.g_blocks.chunks_exact(9).enumerate() {
            for a in 0..3 {
                for b in 0..3 {
                    d2 += self.dv[3 * c + a] * g[3 * a + b] * self.dv[3 * c + b];
                }
            }
        }
        d2
    }

    /// The exact line search along `dw` (module docs), then `w += alpha dw` and `state.gamma =
    /// gamma(w)`. Returns `false` when `dw` is not a descent direction (`phi'(0) >= 0`: `w`
    /// minimises `ell` to rounding), with nothing moved.
    fn line_search(
        &mut self,
        problem: &Problem,
        s: &SapSettings,
        bracket: Bracket,
        state: &mut IterState,
    ) -> bool {
        let inst = problem.instance();
        let m = self.w.len();
        d_t(inst, &self.dw, None, &mut self.dv);
        problem.add_matvecs(2);
        let (mdw2, mwdw) = self.mass_terms();
        let dphi0 = mwdw - dot(&self.dv, &self.gamma);
        if !(dphi0 < 0.0) {
            return false;
        }
        let (mut lo, mut hi, mut alpha) = match bracket {
            Bracket::Capped(max) => (0.0, max, 1.0f64.min(max)),
            // G at w is known (gradient): start at phi's Newton step from 0
            Bracket::Open => (0.0, f64::INFINITY, -dphi0 / self.curvature(mdw2)),
        };
        let mut steps = 0;
        loop {
            steps += 1;
            for j in 0..self.vc.len() {
                self.trial[j] = self.vc[j] + alpha * self.dv[j];
            }
            responses(inst, &self.trial, &mut self.gamma, Some(&mut self.g_blocks));
            let dphi = mwdw + alpha * mdw2 - dot(&self.dv, &self.gamma);
            if dphi.abs() <= s.ls_rtol * dphi0.abs() || steps >= s.ls_max_iter {
                break;
            }
            if dphi < 0.0 {
                lo = alpha;
                if alpha == hi {
                    break; // phi still decreasing at alpha_max: take it
                }
            } else {
                hi = alpha;
            }
            // Newton on phi', bisection (or doubling without an upper end) when it leaves the
            // bracket
            let d2 = self.curvature(mdw2);
            let newton = alpha - dphi / d2;
            alpha = if d2 > 0.0 && newton > lo && newton < hi {
                newton
            } else if dphi < 0.0 && !hi.is_finite() {
                2.0 * alpha
            } else if dphi < 0.0 && matches!(bracket, Bracket::Capped(max) if hi == max) {
                hi
            } else {
                0.5 * (lo + hi)
            };
        }
        self.ls_steps += steps as u64;
        self.last_alpha = alpha;
        for k in 0..m {
            self.w[k] += alpha * self.dw[k];
        }
        self.vc.copy_from_slice(&self.trial);
        state.gamma.copy_from_slice(&self.gamma);
        true
    }
}

/// `gamma(v)`, the `G_c` blocks (when given) and the contact cost, for the contact velocities
/// `v` (length `n`).
fn responses(inst: &Instance, v: &[f64], gamma: &mut [f64], g: Option<&mut [f64]>) -> f64 {
    let mu = inst.constraints().friction().unwrap_or_default();
    let joints = inst.constraints().joints();
    let rc = inst.compliance().unwrap_or_default();
    let mut cost = 0.0;
    let mut g = g;
    for (c, &m) in mu.iter().enumerate() {
        let vv = [v[3 * c], v[3 * c + 1], v[3 * c + 2]];
        let (gc, gg, e) = if c < joints {
            joint_response(&vv, &rc[3 * c..3 * c + 3])
        } else {
            contact_response(&vv, rc[3 * c], rc[3 * c + 1], m)
        };
        gamma[3 * c..3 * c + 3].copy_from_slice(&gc);
        if let Some(g) = g.as_deref_mut() {
            g[9 * c..9 * c + 9].copy_from_slice(&gg);
        }
        cost += e;
    }
    cost
}

/// Why a primal solver cannot take `inst` (module docs), `None` when it can.
fn primal_refusal(name: &str, inst: &Instance) -> Option<String> {
    if inst.matrix_free().is_none() {
        return Some(format!(
            "{name} solves in the generalised velocities: it needs the factors D and M of \
             N = D^T M^-1 D (matrix-free storage: cpbench generate --operator matrix-free, \
             or a global file read with --operator matrix-free --class ccp)"
        ));
    }
    let Some(rc) = inst.compliance() else {
        return Some(format!(
            "{name} needs a compliant problem (N + R, r) with R > 0 (generate --compliance \
             sap:...)"
        ));
    };
    if let Some(i) = rc.iter().position(|&x| x <= 0.0) {
        return Some(format!("{name} needs R > 0: R[{i}] = {}", rc[i]));
    }
    (inst.constraints().joints()..rc.len() / 3)
        .find(|&c| rc[3 * c + 1] != rc[3 * c + 2])
        .map(|c| {
            format!(
                "{name} needs equal tangential compliances: contact {c} has R_t = {} and {}",
                rc[3 * c + 1],
                rc[3 * c + 2]
            )
        })
}

/// The identity both primal solvers share, written inside their `impl Solver`: the name, the
/// compliant CCP alone, 3-D cones, and [`primal_refusal`].
macro_rules! primal_solver {
    ($name:literal) => {
        fn name(&self) -> &'static str {
            $name
        }

        fn supports(&self, class: ProblemClass) -> bool {
            class == ProblemClass::Ccp
        }

        fn handles_cone_dim(&self, dim: usize) -> bool {
            dim == 3
        }

        fn refusal(&self, inst: &Instance) -> Option<String> {
            primal_refusal($name, inst)
        }

        /// Joint blocks are compliant equalities: their response is linear (module docs).
        fn takes_joints(&self) -> bool {
            true
        }
    };
}

/// SAP (module documentation). Takes compliant CCP instances on the matrix-free storage.
pub struct Sap {
    settings: SapSettings,
    p: Primal,
    hess: Option<Hessian>,
    factorizations: u64,
}

impl Sap {
    /// A SAP solver; errors on invalid settings.
    pub fn new(settings: SapSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            p: Primal::default(),
            hess: None,
            factorizations: 0,
        })
    }
}

/// `v = D^T w (+ add)` (length `n`) on the instance's factors (the operator's own gather).
fn d_t(inst: &Instance, w: &[f64], add: Option<&[f64]>, v: &mut [f64]) {
    let op = inst.matrix_free().expect("checked by refusal");
    op.transpose_apply(w, v);
    if let Some(a) = add {
        for (vj, aj) in v.iter_mut().zip(a) {
            *vj += aj;
        }
    }
}

impl Solver for Sap {
    primal_solver!("sap");

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let op = problem
            .instance()
            .matrix_free()
            .expect("checked by refusal");
        let hess = Hessian::new(op.d(), op.mass_matrix()).map_err(SolverError::Numerical)?;
        // the factor and its pattern, 8 + 8 bytes per entry, against the memory budget
        let bytes = 16 * hess.factor_nnz() as u64;
        if let Some(limit) = problem.memory_limit().filter(|&l| bytes > l) {
            return Err(SolverError::Refused(format!(
                "the Hessian's Cholesky factor needs about {bytes} bytes, above the memory \
                 limit of {limit} bytes"
            )));
        }
        self.hess = Some(hess);
        self.factorizations = 0;
        self.p.init(problem, state);
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        self.p.gradient(problem);
        self.factorizations += 1;
        let hess = self.hess.as_mut().expect("built by init");
        hess.factorize(self.p.mass_values(), &self.p.g_blocks)
            .map_err(SolverError::Numerical)?;
        for (dk, gk) in self.p.dw.iter_mut().zip(&self.p.grad) {
            *dk = -gk;
        }
        hess.solve(&mut self.p.dw);
        let bracket = Bracket::Capped(self.settings.alpha_max);
        Ok(
            if self.p.line_search(problem, &self.settings, bracket, state) {
                StepOutcome::Continue
            } else {
                StepOutcome::Stalled
            },
        )
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("factorizations", self.factorizations as f64),
            ("line_search_steps", self.p.ls_steps as f64),
            ("alpha", self.p.last_alpha),
            (
                "factor_nnz",
                self.hess.as_ref().map_or(0.0, |h| h.factor_nnz() as f64),
            ),
        ]
    }
}

/// MuJoCo's nonlinear conjugate gradient on SAP's primal (MuJoCo documentation,
/// "Computation", solvers: "CG", Polak-Ribiere with an exact Newton line search in the
/// primal): direction `d = -M^-1 g + beta d_prev` with the preconditioned Polak-Ribiere+
/// `beta = max(0, (M^-1 g)^T (g - g_prev) / (M^-1 g_prev)^T g_prev)`, restarted on a
/// non-descent direction, then the same exact line search as [`Sap`] without its cap (start at
/// the Newton step of `phi` at 0). No factorisation: `O(nnz(D))` per iteration plus the line
/// search. With a sparse (global) `M` the preconditioner `M^-1` is replaced by the inverse of
/// `M`'s diagonal (732 iterations to 1e-10 on GFC3D_OneContact against SAP's 8). Same
/// refusals as [`Sap`].
pub struct PrimalCg {
    settings: SapSettings,
    p: Primal,
    /// `M^-1 g` of this and of the previous iteration, `g` of the previous one.
    z: Vec<f64>,
    z_prev: Vec<f64>,
    g_prev: Vec<f64>,
    /// Whether a previous direction exists.
    started: bool,
    restarts: u64,
}

impl PrimalCg {
    /// A primal CG solver (the line-search settings of [`SapSettings`]; `alpha_max` unused);
    /// errors on invalid settings.
    pub fn new(settings: SapSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            p: Primal::default(),
            z: Vec::new(),
            z_prev: Vec::new(),
            g_prev: Vec::new(),
            started: false,
            restarts: 0,
        })
    }
}

impl Solver for PrimalCg {
    primal_solver!("primal-cg");

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        self.p.init(problem, state);
        let m = self.p.w.len();
        (self.z, self.z_prev, self.g_prev) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        self.started = false;
        self.restarts = 0;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        self.p.gradient(problem);
        let m = self.p.w.len();
        for k in 0..m {
            self.z[k] = self.p.grad[k] / self.p.m_diag[k];
        }
        let z = &self.z;
        let beta = if !self.started {
            0.0
        } else {
            let num: f64 = (0..m)
                .map(|k| z[k] * (self.p.grad[k] - self.g_prev[k]))
                .sum();
            let den = dot(&self.z_prev, &self.g_prev);
            if den > 0.0 {
                (num / den).max(0.0)
            } else {
                0.0
            }
        };
        for (d, zk) in self.p.dw.iter_mut().zip(z) {
            *d = -zk + beta * *d;
        }
        if dot(&self.p.dw, &self.p.grad) >= 0.0 {
            // not a descent direction: restart along -M^-1 g
            self.restarts += 1;
            for (d, zk) in self.p.dw.iter_mut().zip(z) {
                *d = -zk;
            }
        }
        self.g_prev.copy_from_slice(&self.p.grad);
        std::mem::swap(&mut self.z, &mut self.z_prev);
        self.started = true;
        Ok(
            if self
                .p
                .line_search(problem, &self.settings, Bracket::Open, state)
            {
                StepOutcome::Continue
            } else {
                StepOutcome::Stalled
            },
        )
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("line_search_steps", self.p.ls_steps as f64),
            ("alpha", self.p.last_alpha),
            ("restarts", self.restarts as f64),
        ]
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
