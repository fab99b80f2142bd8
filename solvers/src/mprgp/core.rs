//! The iteration shared by MPRGP and MPGP: conjugate gradients on the free set, expansion steps
//! that add blocks to the active set, proportioning steps that release them. The free,
//! chopped and reduced free gradients, the feasible step and the projected gradient come from
//! the set itself ([`cpbench_problems::ConstraintSet`], see [`super::geometry`]; one definition
//! for the solvers and the residual module).

use super::{Expansion, ProportioningTest};
use crate::problem::Problem;
use crate::settings::Validator;
use crate::solver::{StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::linalg::{dot, norm2, power_iteration, PowerRule};
use cpbench_problems::ConstraintSet;

/// What the proportioning step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProportioningStep {
    /// MPRGP (Dostal & Schoberl 2005): the line-search step `x - t beta` with
    /// `t = min(g^T beta / beta^T N beta, largest feasible t)`.
    ChoppedCg,
    /// MPGP (Dostal & Kozubek 2012): the gradient projection step `P_K(x - alpha g)` with the
    /// fixed steplength, which stays feasible and decreases `f` on any closed convex set.
    GradientProjection,
}

/// Parameters of the shared iteration.
#[derive(Clone, Debug)]
pub(crate) struct CoreSettings {
    pub gamma: f64,
    pub alpha_factor: f64,
    pub proportioning: ProportioningTest,
    pub expansion: Expansion,
    pub prop_step: ProportioningStep,
    pub lambda_max: Option<f64>,
    pub power_max_iter: usize,
    pub power_rtol: f64,
    pub safeguard: bool,
}

impl CoreSettings {
    /// Range checks of the settings MPRGP and MPGP share, under their settings' field names:
    /// `proportioning_constant > 0`, `0 < alpha_factor` (theory: `<= 2`), `lambda_max > 0` or
    /// null, `power_max_iter >= 1`, `power_rtol >= 0` (all finite).
    pub fn check(&self, v: &mut Validator) {
        v.positive("proportioning_constant", self.gamma)
            .positive("alpha_factor", self.alpha_factor)
            .positive_opt("lambda_max", self.lambda_max)
            .at_least("power_max_iter", self.power_max_iter as u64, 1)
            .non_negative("power_rtol", self.power_rtol);
    }
}

/// The [`CoreSettings`] of MPRGP's or MPGP's settings `$settings` (the fields both have, by
/// the same names) with the expansion variant `$expansion` and the proportioning step
/// `$prop_step`.
macro_rules! core_settings {
    ($settings:expr, $expansion:expr, $prop_step:expr) => {{
        let s = &$settings;
        $crate::mprgp::core::CoreSettings {
            gamma: s.proportioning_constant,
            alpha_factor: s.alpha_factor,
            proportioning: s.proportioning,
            expansion: $expansion,
            prop_step: $prop_step,
            lambda_max: s.lambda_max,
            power_max_iter: s.power_max_iter,
            power_rtol: s.power_rtol,
            safeguard: s.safeguard,
        }
    }};
}
pub(crate) use core_settings;

/// Algorithm memory and counters (all vectors allocated in `init`).
#[derive(Clone, Debug)]
pub(crate) struct Core {
    pub s: CoreSettings,
    /// Current expansion steplength `alpha` (fixed unless the expansion variant changes it).
    pub alpha: f64,
    /// Estimate of `lambda_max(N)`.
    pub lambda: f64,
    norm_r: f64,
    /// `||x||` from the last time it was computed (refreshed every 16 iterations).
    xnorm: f64,
    iter: u64,
    g: Vec<f64>,
    phi: Vec<f64>,
    beta: Vec<f64>,
    p: Vec<f64>,
    ap: Vec<f64>,
    w: Vec<f64>,
    xold: Vec<f64>,
    gold: Vec<f64>,
    grold: Vec<f64>,
    pub cg_steps: u64,
    /// Times the safeguard halved `alpha`.
    pub alpha_halvings: u64,
    pub expansion_steps: u64,
    pub proportioning_steps: u64,
    /// The kind of the last step, as PERMON's monitor prints it: `0` none yet, `1` a
    /// conjugate gradient step (`[c]`), `2` an expansion step (`[e]`), `3` a proportioning
    /// step (`[p]`).
    pub last_step: u8,
    /// `||phi||^2` and `||beta||^2` of the current split gradient, refreshed whenever it is
    /// ([`Core::refresh_norms`]): the next step's proportionality test and the monitor values
    /// of [`Core::iter_info`] read them, so no dot product is taken twice.
    ff: f64,
    bb: f64,
    /// Products spent by the power method.
    pub power_products: u64,
    /// Products spent by the iteration itself (initial gradient included, power method not):
    /// PERMON's "number of Hessian multiplications".
    pub products: u64,
}

impl Core {
    pub fn new(s: CoreSettings) -> Self {
        Self {
            s,
            alpha: 0.0,
            lambda: 0.0,
            norm_r: 0.0,
            xnorm: 0.0,
            iter: 0,
            g: Vec::new(),
            phi: Vec::new(),
            beta: Vec::new(),
            p: Vec::new(),
            ap: Vec::new(),
            w: Vec::new(),
            xold: Vec::new(),
            gold: Vec::new(),
            grold: Vec::new(),
            cg_steps: 0,
            alpha_halvings: 0,
            expansion_steps: 0,
            proportioning_steps: 0,
            last_step: 0,
            ff: 0.0,
            bb: 0.0,
            power_products: 0,
            products: 0,
        }
    }

    pub fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        for v in [
            &mut self.g,
            &mut self.phi,
            &mut self.beta,
            &mut self.p,
            &mut self.ap,
            &mut self.w,
            &mut self.xold,
            &mut self.gold,
            &mut self.grold,
        ] {
            *v = vec![0.0; n];
        }
        self.cg_steps = 0;
        self.alpha_halvings = 0;
        self.expansion_steps = 0;
        self.proportioning_steps = 0;
        self.last_step = 0;
        self.power_products = 0;
        self.products = 0;
        self.lambda = match self.s.lambda_max {
            Some(l) => l,
            None => {
                let rule = PowerRule::Relative {
                    max_iter: self.s.power_max_iter,
                    rtol: self.s.power_rtol,
                };
                let apply = |x: &[f64], y: &mut [f64]| problem.matvec(x, y);
                let (l, k) = power_iteration(apply, &mut self.p, &mut self.ap, rule);
                self.power_products = k;
                l
            }
        };
        // N = 0 makes f linear: any positive steplength is a descent step
        self.alpha = if self.lambda > 0.0 {
            self.s.alpha_factor / self.lambda
        } else {
            self.s.alpha_factor
        };
        let k = problem.constraints();
        self.norm_r = norm2(problem.instance().r());
        self.xnorm = norm2(&state.gamma);
        self.iter = 0;
        problem.gradient(&state.gamma, &mut self.g);
        self.products += 1;
        state.grad.copy_from_slice(&self.g);
        k.split_gradient(&state.gamma, &self.g, &mut self.phi, &mut self.beta);
        self.refresh_norms();
        self.p.copy_from_slice(&self.phi);
        Ok(())
    }

    /// Recompute [`Core::ff`] and [`Core::bb`] after `phi` and `beta` changed.
    fn refresh_norms(&mut self) {
        self.ff = dot(&self.phi, &self.phi);
        self.bb = dot(&self.beta, &self.beta);
    }

    /// One MPRGP / MPGP iteration. Allocation free.
    pub fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let k = problem.constraints();
        let x = &mut state.gamma;
        // The gradient is updated by recurrence in CG steps. Once the recurrence's projected
        // gradient falls to the rounding level of a gradient evaluation, it carries no
        // information (its free part keeps shrinking geometrically, towards underflow, while the
        // true one stagnates): recompute g = N x + r and restart CG; if the fresh projected
        // gradient is at that level too, x is a KKT point to working precision.
        let (mut bb, mut ff) = (self.bb, self.ff);
        self.iter += 1;
        if self.iter % 16 == 0 {
            self.xnorm = norm2(x);
        }
        let floor = |xn: f64| 16.0 * f64::EPSILON * (self.lambda * xn + self.norm_r);
        let mut fl = floor(self.xnorm);
        if bb + ff <= (4.0 * fl).powi(2) {
            // near the level: decide with the exact ||x||
            self.xnorm = norm2(x);
            fl = floor(self.xnorm);
        }
        if bb + ff <= fl * fl {
            problem.gradient(x, &mut self.g);
            self.products += 1;
            state.grad.copy_from_slice(&self.g);
            state.grad_fresh = true;
            k.split_gradient(x, &self.g, &mut self.phi, &mut self.beta);
            self.refresh_norms();
            self.p.copy_from_slice(&self.phi);
            if self.bb + self.ff <= fl * fl {
                return Ok(StepOutcome::Stalled);
            }
            (bb, ff) = (self.bb, self.ff);
        }
        let rhs = match self.s.proportioning {
            ProportioningTest::Free => ff,
            ProportioningTest::Reduced => k.reduced_free_dot(x, &self.phi, self.alpha, &mut self.w),
        };
        if bb <= self.s.gamma * self.s.gamma * rhs {
            // proportional iterate: trial conjugate gradient step
            let (pap, acg) = self.exact_step(problem);
            let (afeas, blocking) = k.max_feasible_step(x, &self.p);
            if acg <= afeas {
                self.cg_steps += 1;
                self.last_step = 1;
                axpy(-acg, &self.p, x);
                if acg >= afeas * (1.0 - 1e-10) {
                    // a component may have crossed its bound by rounding
                    k.project(x);
                }
                axpy(-acg, &self.ap, &mut self.g);
                k.split_gradient(x, &self.g, &mut self.phi, &mut self.beta);
                let bcg = dot(&self.ap, &self.phi) / pap;
                for (pi, fi) in self.p.iter_mut().zip(&self.phi) {
                    *pi = fi - bcg * *pi;
                }
                self.refresh_norms();
                return Ok(StepOutcome::Continue);
            }
            self.expansion_steps += 1;
            self.last_step = 2;
            self.expand(problem, x, acg, afeas, blocking)?;
            state.grad.copy_from_slice(&self.g);
            state.grad_fresh = true;
            k.split_gradient(x, &self.g, &mut self.phi, &mut self.beta);
            self.refresh_norms();
            self.p.copy_from_slice(&self.phi);
            return Ok(StepOutcome::Continue);
        }
        // disproportional iterate: proportioning step
        self.proportioning_steps += 1;
        self.last_step = 3;
        match self.s.prop_step {
            ProportioningStep::ChoppedCg => {
                self.p.copy_from_slice(&self.beta);
                let (_, acg) = self.exact_step(problem);
                let (tf, blocking) = k.max_feasible_step(x, &self.p);
                let t = acg.min(tf);
                if !t.is_finite() {
                    return Err(unbounded());
                }
                axpy(-t, &self.p, x);
                if t == tf {
                    land_blocking(k, blocking, x, &self.p);
                }
                k.project(x);
                axpy(-t, &self.ap, &mut self.g);
            }
            ProportioningStep::GradientProjection => {
                self.xold.copy_from_slice(x);
                self.gold.copy_from_slice(&self.g);
                self.projected_step(problem, x, true);
                state.grad.copy_from_slice(&self.g);
                state.grad_fresh = true;
            }
        }
        k.split_gradient(x, &self.g, &mut self.phi, &mut self.beta);
        self.refresh_norms();
        self.p.copy_from_slice(&self.phi);
        Ok(StepOutcome::Continue)
    }

    /// The per-iteration values of PERMON's MPGP monitor after the last step: `gf = ||phi||`
    /// (free gradient), `gc = ||beta||` (chopped gradient), both of the gradient the iteration
    /// carries (updated by recurrence in CG steps), and `step` ([`Core::last_step`]). Read
    /// from the norms the iteration keeps ([`Core::ff`], [`Core::bb`]): no extra work.
    pub fn iter_info(&self) -> crate::observer::IterInfo {
        let mut i = crate::observer::IterInfo::new();
        i.push("gf", self.ff.sqrt());
        i.push("gc", self.bb.sqrt());
        i.push("step", f64::from(self.last_step));
        i
    }

    /// `ap = N p` (one counted product) and the exact line-search step along `-p` of the
    /// quadratic: `(p^T N p, g^T p / p^T N p)`, the step infinite where `p^T N p <= 0`.
    fn exact_step(&mut self, problem: &Problem) -> (f64, f64) {
        problem.matvec(&self.p, &mut self.ap);
        self.products += 1;
        let pap = dot(&self.p, &self.ap);
        let acg = if pap > 0.0 {
            dot(&self.g, &self.p) / pap
        } else {
            f64::INFINITY
        };
        (pap, acg)
    }

    /// `x = P_K(xold - alpha d)` with `d = gold` (`use_g`) or `phi`, then the fresh gradient
    /// `g = N x + r` (one product). With the safeguard on, a step that raises `f` above its
    /// value at `xold` (beyond rounding) is redone with `alpha / 2`, at most 60 times: a
    /// rise is possible only when `alpha > 2 / lambda_max(N)`, i.e. when the power method
    /// underestimated `lambda_max`.
    fn projected_step(&mut self, problem: &Problem, x: &mut [f64], use_g: bool) {
        let k = problem.constraints();
        let r = problem.instance().r();
        let (mut f_old, mut scale) = (0.0, 0.0);
        if self.s.safeguard {
            for ((xo, go), ri) in self.xold.iter().zip(&self.gold).zip(r) {
                f_old += 0.5 * xo * (go + ri);
                scale += 0.5 * xo.abs() * (go.abs() + ri.abs());
            }
        }
        let mut halvings = 0;
        loop {
            let dir = if use_g { &self.gold } else { &self.phi };
            for ((xi, xo), di) in x.iter_mut().zip(&self.xold).zip(dir) {
                *xi = xo - self.alpha * di;
            }
            k.project(x);
            problem.gradient(x, &mut self.g);
            self.products += 1;
            if !self.s.safeguard || halvings == 60 {
                return;
            }
            let f_new: f64 = x
                .iter()
                .zip(&self.g)
                .zip(r)
                .map(|((xi, gi), ri)| 0.5 * xi * (gi + ri))
                .sum();
            if f_new <= f_old + 1e-12 * scale {
                return;
            }
            self.alpha *= 0.5;
            self.alpha_halvings += 1;
            halvings += 1;
        }
    }

    /// The expansion step (Kruzik et al. 2020 variants). On return `x` is the new feasible
    /// iterate and `self.g = N x + r` (fresh).
    fn expand(
        &mut self,
        problem: &Problem,
        x: &mut [f64],
        acg: f64,
        afeas: f64,
        blocking: Option<usize>,
    ) -> Result<(), SolverError> {
        let k = problem.constraints();
        if self.s.expansion == Expansion::Projcg && acg.is_finite() {
            // the full conjugate gradient step, projected back (not safeguarded)
            axpy(-acg, &self.p, x);
            k.project(x);
            problem.gradient(x, &mut self.g);
            self.products += 1;
            return Ok(());
        }
        if !afeas.is_finite() {
            return Err(unbounded());
        }
        if self.s.expansion == Expansion::Bb {
            self.xold.copy_from_slice(x);
            k.reduced_free_gradient(x, &self.phi, self.alpha, &mut self.grold);
        }
        // the largest feasible step along -p; the blocking block lands on its boundary
        axpy(-afeas, &self.p, x);
        land_blocking(k, blocking, x, &self.p);
        k.project(x);
        axpy(-afeas, &self.ap, &mut self.g);
        k.split_gradient(x, &self.g, &mut self.phi, &mut self.beta);
        let c = self.s.alpha_factor;
        let use_g = match self.s.expansion {
            Expansion::Std | Expansion::Projcg => false,
            Expansion::Opt => {
                // alpha = c phi^T g / phi^T N phi (c times the exact line-search step along phi)
                problem.matvec(&self.phi, &mut self.ap);
                self.products += 1;
                let den = dot(&self.phi, &self.ap);
                let a = c * dot(&self.phi, &self.g) / den;
                if den > 0.0 && a.is_finite() && a > 0.0 {
                    self.alpha = a;
                }
                false
            }
            Expansion::Optapprox => {
                // PERMON: alpha = c (g^T g)/(g^T g) / lambda, the fixed step, along g
                self.alpha = if self.lambda > 0.0 {
                    c / self.lambda
                } else {
                    c
                };
                true
            }
            Expansion::Bb => {
                // PERMON: alpha = c (d^T d)/(d^T s) with d the change of the reduced free
                // gradient and s the change of x over the half step
                k.reduced_free_gradient(x, &self.phi, self.alpha, &mut self.w);
                let (mut dd, mut ds) = (0.0, 0.0);
                for (((wi, gi), xi), xo) in
                    self.w.iter().zip(&self.grold).zip(x.iter()).zip(&self.xold)
                {
                    let d = wi - gi;
                    dd += d * d;
                    ds += d * (xi - xo);
                }
                let a = c * dd / ds;
                if ds > 0.0 && a.is_finite() && a > 0.0 {
                    self.alpha = a;
                }
                false
            }
        };
        self.xold.copy_from_slice(x);
        self.gold.copy_from_slice(&self.g);
        self.projected_step(problem, x, use_g);
        Ok(())
    }

    pub fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("cg_steps", self.cg_steps as f64),
            ("expansion_steps", self.expansion_steps as f64),
            ("proportioning_steps", self.proportioning_steps as f64),
            ("hessian_mults", self.products as f64),
            ("power_matvecs", self.power_products as f64),
            ("alpha_halvings", self.alpha_halvings as f64),
            ("lambda_max", self.lambda),
            ("alpha", self.alpha),
        ]
    }
}

fn unbounded() -> SolverError {
    SolverError::Numerical(
        "the objective decreases without bound along a feasible direction (N is singular there \
         and no bound blocks the step)"
            .into(),
    )
}

/// `y += a x`.
#[inline]
fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// After a step to the largest feasible length along `-p`: put the blocking block (if any,
/// from [`ConstraintSet::max_feasible_step`]) exactly on its boundary.
fn land_blocking(k: &ConstraintSet, blocking: Option<usize>, x: &mut [f64], p: &[f64]) {
    if let Some(b) = blocking {
        let bs = k.block_size();
        let r = b * bs..(b + 1) * bs;
        k.land_on_boundary(b, &mut x[r.clone()], &p[r]);
    }
}

/// The [`crate::solver::Solver`] methods that MPRGP and MPGP hand to their [`Core`] (a field
/// `core`): `init`, `step`, `counters`, and `iter_info` (`gf`, `gc` and `step` after every
/// iteration, as PERMON's MPGP monitor prints them). Used inside an `impl Solver`.
macro_rules! forward_to_core {
    () => {
        fn init(
            &mut self,
            problem: &crate::problem::Problem,
            state: &mut crate::state::IterState,
        ) -> Result<(), crate::status::SolverError> {
            self.core.init(problem, state)
        }

        fn step(
            &mut self,
            problem: &crate::problem::Problem,
            state: &mut crate::state::IterState,
        ) -> crate::solver::StepResult {
            self.core.step(problem, state)
        }

        fn counters(&self) -> Vec<(&'static str, f64)> {
            self.core.counters()
        }

        fn iter_info(&self) -> crate::observer::IterInfo {
            self.core.iter_info()
        }
    };
}
pub(crate) use forward_to_core;
