//! The iteration shared by MPRGP and MPGP: conjugate gradients on the free set, expansion steps
//! that add blocks to the active set, proportioning steps that release them. The free,
//! chopped and reduced free gradients, the feasible step and the projected gradient come from
//! the set itself ([`cpbench_problems::ConstraintSet`], see [`super::geometry`]; one definition
//! for the solvers and the residual module).
//!
//! Vector passes (chunked by [`crate::kernels::vec_chunk`]): a CG step makes, besides the
//! product `N p` and the set's passes, three fused ones (was seven): `x -= a p` (projected per
//! chunk when needed) with `g -= a N p`; `phi^T N p` with `||phi||^2` and `||beta||^2`; the
//! update of `p`. The exact step's `p^T N p` and `g^T p` are one pass, `||phi||^2` and
//! `||beta||^2` one pass, and the gradient projection step `x = P_K(x_old - alpha d)` and its
//! safeguard's objective sums are chunked too. The set's own passes
//! ([`ConstraintSet::split_gradient`], [`ConstraintSet::max_feasible_step`],
//! [`ConstraintSet::reduced_free_dot`], [`ConstraintSet::reduced_free_gradient`]), the
//! vector copies and the BB expansion's sums stay whole-vector sequential loops. Nothing is
//! allocated per iteration (per-chunk sums allocated in `init`).
//!
//! Determinism: below [`crate::kernels::PAR_MIN_LEN`] unknowns every pass is one sequential
//! loop in the order of the plain code, so results are bit for bit those of the plain loops;
//! above it the chunks run in parallel on the current rayon pool and each sum is taken chunk
//! by chunk, then over the chunks in order ([`crate::kernels::sum_in_order`]), and the
//! sequential passes are single-threaded, so iterates, residuals, step kinds and iteration
//! counts are bit-identical for any number of threads given `n`.

use super::{Expansion, ProportioningTest};
use crate::kernels::{sum_in_order, vec_chunk, vec_chunks};
use crate::problem::Problem;
use crate::settings::Validator;
use crate::solver::{StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::linalg::{dot, norm2, power_iteration, PowerRule};
use cpbench_problems::ConstraintSet;
use rayon::prelude::*;
use std::ops::Range;

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
    /// The counters (reset at `init`).
    counts: Counts,
    /// `||phi||^2` and `||beta||^2` of the current split gradient, refreshed whenever it is
    /// ([`Core::refresh_norms`]): the next step's proportionality test and the monitor values
    /// of [`Core::iter_info`] read them, so no dot product is taken twice.
    ff: f64,
    bb: f64,
    /// Per-chunk partial sums of the chunked reductions ([`reduce3`]; allocated in `init`).
    sums: Vec<[f64; 3]>,
}

/// The counters of a [`Core`] run (module docs of [`crate::mprgp`]).
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Conjugate gradient steps.
    cg_steps: u64,
    /// Times the safeguard halved `alpha`.
    alpha_halvings: u64,
    /// Expansion steps.
    expansion_steps: u64,
    /// Proportioning steps.
    proportioning_steps: u64,
    /// The kind of the last step, as PERMON's monitor prints it: `0` none yet, `1` a
    /// conjugate gradient step (`[c]`), `2` an expansion step (`[e]`), `3` a proportioning
    /// step (`[p]`).
    last_step: u8,
    /// Products spent by the power method.
    power_products: u64,
    /// Products spent by the iteration itself (initial gradient included, power method not):
    /// PERMON's "number of Hessian multiplications".
    products: u64,
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
            counts: Counts::default(),
            ff: 0.0,
            bb: 0.0,
            sums: Vec::new(),
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
        self.sums = vec![[0.0; 3]; vec_chunks(n)];
        self.counts = Counts::default();
        self.lambda = match self.s.lambda_max {
            Some(l) => l,
            None => {
                let rule = PowerRule::Relative {
                    max_iter: self.s.power_max_iter,
                    rtol: self.s.power_rtol,
                };
                let apply = |x: &[f64], y: &mut [f64]| problem.matvec(x, y);
                let (l, k) = power_iteration(apply, &mut self.p, &mut self.ap, rule);
                self.counts.power_products = k;
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
        self.xnorm = chunked_norm2(&mut self.sums, &state.gamma);
        self.iter = 0;
        problem.gradient(&state.gamma, &mut self.g);
        self.counts.products += 1;
        state.grad.copy_from_slice(&self.g);
        k.split_gradient(&state.gamma, &self.g, &mut self.phi, &mut self.beta);
        self.refresh_norms();
        self.p.copy_from_slice(&self.phi);
        Ok(())
    }

    /// Recompute [`Core::ff`] and [`Core::bb`] after `phi` and `beta` changed.
    /// One fused chunked pass over `phi` and `beta`.
    fn refresh_norms(&mut self) {
        let (phi, beta) = (&self.phi, &self.beta);
        let [ff, bb, _] = reduce3(&mut self.sums, phi.len(), |r| {
            let (phi, beta) = (&phi[r.clone()], &beta[r]);
            let (mut ff, mut bb) = (-0.0, -0.0);
            for (f, b) in phi.iter().zip(beta) {
                ff += f * f;
                bb += b * b;
            }
            [ff, bb, -0.0]
        });
        (self.ff, self.bb) = (ff, bb);
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
            self.xnorm = chunked_norm2(&mut self.sums, x);
        }
        let floor = |xn: f64| 16.0 * f64::EPSILON * (self.lambda * xn + self.norm_r);
        let mut fl = floor(self.xnorm);
        if bb + ff <= (4.0 * fl).powi(2) {
            // near the level: decide with the exact ||x||
            self.xnorm = chunked_norm2(&mut self.sums, x);
            fl = floor(self.xnorm);
        }
        if bb + ff <= fl * fl {
            problem.gradient(x, &mut self.g);
            self.counts.products += 1;
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
                self.counts.cg_steps += 1;
                self.counts.last_step = 1;
                // x -= acg p (projected where a component may have crossed its bound by
                // rounding), g -= acg N p: one chunked pass
                let project = acg >= afeas * (1.0 - 1e-10);
                let bs = k.block_size();
                let a = -acg;
                let cg = |o: usize, x: &mut [f64], g: &mut [f64], p: &[f64], ap: &[f64]| {
                    for (xi, pi) in x.iter_mut().zip(p) {
                        *xi += a * pi;
                    }
                    if project {
                        k.project_blocks(o / bs, x);
                    }
                    for (gi, api) in g.iter_mut().zip(ap) {
                        *gi += a * api;
                    }
                };
                let n = x.len();
                let c = vec_chunk(n);
                if c >= n {
                    cg(0, x, &mut self.g, &self.p, &self.ap);
                } else {
                    (
                        x.par_chunks_mut(c),
                        self.g.par_chunks_mut(c),
                        self.p.par_chunks(c),
                        self.ap.par_chunks(c),
                    )
                        .into_par_iter()
                        .enumerate()
                        .for_each(|(i, (x, g, p, ap))| cg(i * c, x, g, p, ap));
                }
                k.split_gradient(x, &self.g, &mut self.phi, &mut self.beta);
                // phi^T N p with the norms of phi and beta: one chunked pass
                let (ap, phi, beta) = (&self.ap, &self.phi, &self.beta);
                let [apphi, ff, bb] = reduce3(&mut self.sums, n, |r| {
                    let (ap, phi, beta) = (&ap[r.clone()], &phi[r.clone()], &beta[r]);
                    let (mut s, mut ff, mut bb) = (-0.0, -0.0, -0.0);
                    for ((a, f), b) in ap.iter().zip(phi).zip(beta) {
                        s += a * f;
                        ff += f * f;
                        bb += b * b;
                    }
                    [s, ff, bb]
                });
                (self.ff, self.bb) = (ff, bb);
                let bcg = apphi / pap;
                let pupd = |p: &mut [f64], phi: &[f64]| {
                    for (pi, fi) in p.iter_mut().zip(phi) {
                        *pi = fi - bcg * *pi;
                    }
                };
                if c >= n {
                    pupd(&mut self.p, &self.phi);
                } else {
                    (self.p.par_chunks_mut(c), self.phi.par_chunks(c))
                        .into_par_iter()
                        .for_each(|(p, phi)| pupd(p, phi));
                }
                return Ok(StepOutcome::Continue);
            }
            self.counts.expansion_steps += 1;
            self.counts.last_step = 2;
            self.expand(problem, x, acg, afeas, blocking)?;
            state.grad.copy_from_slice(&self.g);
            state.grad_fresh = true;
            k.split_gradient(x, &self.g, &mut self.phi, &mut self.beta);
            self.refresh_norms();
            self.p.copy_from_slice(&self.phi);
            return Ok(StepOutcome::Continue);
        }
        // disproportional iterate: proportioning step
        self.counts.proportioning_steps += 1;
        self.counts.last_step = 3;
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
    /// carries (updated by recurrence in CG steps), and `step` ([`Counts::last_step`]). Read
    /// from the norms the iteration keeps ([`Core::ff`], [`Core::bb`]): no extra work.
    pub fn iter_info(&self) -> crate::observer::IterInfo {
        let mut i = crate::observer::IterInfo::new();
        i.push("gf", self.ff.sqrt());
        i.push("gc", self.bb.sqrt());
        i.push("step", f64::from(self.counts.last_step));
        i
    }

    /// `ap = N p` (one counted product) and the exact line-search step along `-p` of the
    /// quadratic: `(p^T N p, g^T p / p^T N p)`, the step infinite where `p^T N p <= 0`.
    fn exact_step(&mut self, problem: &Problem) -> (f64, f64) {
        problem.matvec(&self.p, &mut self.ap);
        self.counts.products += 1;
        // p^T N p and g^T p: one chunked pass
        let (p, ap, g) = (&self.p, &self.ap, &self.g);
        let [pap, gp, _] = reduce3(&mut self.sums, p.len(), |r| {
            let (p, ap, g) = (&p[r.clone()], &ap[r.clone()], &g[r]);
            let (mut pap, mut gp) = (-0.0, -0.0);
            for ((pi, api), gi) in p.iter().zip(ap).zip(g) {
                pap += pi * api;
                gp += gi * pi;
            }
            [pap, gp, -0.0]
        });
        let acg = if pap > 0.0 { gp / pap } else { f64::INFINITY };
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
        let n = x.len();
        let c = vec_chunk(n);
        let bs = k.block_size();
        let (mut f_old, mut scale) = (0.0, 0.0);
        if self.s.safeguard {
            let (xold, gold) = (&self.xold, &self.gold);
            [f_old, scale, _] = reduce3(&mut self.sums, n, |rg| {
                let (xold, gold, r) = (&xold[rg.clone()], &gold[rg.clone()], &r[rg]);
                let (mut f, mut s) = (0.0, 0.0);
                for ((xo, go), ri) in xold.iter().zip(gold).zip(r) {
                    f += 0.5 * xo * (go + ri);
                    s += 0.5 * xo.abs() * (go.abs() + ri.abs());
                }
                [f, s, -0.0]
            });
        }
        let mut halvings = 0;
        loop {
            let dir = if use_g { &self.gold } else { &self.phi };
            // x = P_K(xold - alpha d), chunk by chunk
            let alpha = self.alpha;
            let step = |o: usize, x: &mut [f64], xold: &[f64], d: &[f64]| {
                for ((xi, xo), di) in x.iter_mut().zip(xold).zip(d) {
                    *xi = xo - alpha * di;
                }
                k.project_blocks(o / bs, x);
            };
            if c >= n {
                step(0, x, &self.xold, dir);
            } else {
                (
                    x.par_chunks_mut(c),
                    self.xold.par_chunks(c),
                    dir.par_chunks(c),
                )
                    .into_par_iter()
                    .enumerate()
                    .for_each(|(i, (x, xo, d))| step(i * c, x, xo, d));
            }
            problem.gradient(x, &mut self.g);
            self.counts.products += 1;
            if !self.s.safeguard || halvings == 60 {
                return;
            }
            let (xs, g) = (&*x, &self.g);
            let [f_new, _, _] = reduce3(&mut self.sums, n, |rg| {
                let f: f64 = xs[rg.clone()]
                    .iter()
                    .zip(&g[rg.clone()])
                    .zip(&r[rg])
                    .map(|((xi, gi), ri)| 0.5 * xi * (gi + ri))
                    .sum();
                [f, -0.0, -0.0]
            });
            if f_new <= f_old + 1e-12 * scale {
                return;
            }
            self.alpha *= 0.5;
            self.counts.alpha_halvings += 1;
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
            self.counts.products += 1;
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
                self.counts.products += 1;
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
            ("cg_steps", self.counts.cg_steps as f64),
            ("expansion_steps", self.counts.expansion_steps as f64),
            (
                "proportioning_steps",
                self.counts.proportioning_steps as f64,
            ),
            ("hessian_mults", self.counts.products as f64),
            ("power_matvecs", self.counts.power_products as f64),
            ("alpha_halvings", self.counts.alpha_halvings as f64),
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

/// `y += a x`, chunked by [`vec_chunk`] (element-wise: the same bits for any number of
/// threads).
#[inline]
fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    let f = |y: &mut [f64], x: &[f64]| {
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi += a * xi;
        }
    };
    let n = y.len();
    let c = vec_chunk(n);
    if c >= n {
        f(y, x);
    } else {
        (y.par_chunks_mut(c), x.par_chunks(c))
            .into_par_iter()
            .for_each(|(y, x)| f(y, x));
    }
}

/// Three sums over the `n` unknowns, `f` giving a chunk's (index range's) three partial sums:
/// one call on the calling thread for `n` below [`crate::kernels::PAR_MIN_LEN`] (the chunk's
/// own values, bit for bit), else the chunks of [`vec_chunk`] in parallel and each sum over
/// them in chunk order ([`sum_in_order`]): the result depends on `n` only, never on the number
/// of threads. `sums` holds [`vec_chunks`]`(n)` partial sums (no allocation).
fn reduce3(
    sums: &mut [[f64; 3]],
    n: usize,
    f: impl Fn(Range<usize>) -> [f64; 3] + Sync,
) -> [f64; 3] {
    let c = vec_chunk(n);
    debug_assert_eq!(sums.len(), vec_chunks(n));
    if c >= n {
        sums[0] = f(0..n);
    } else {
        sums.par_iter_mut()
            .enumerate()
            .for_each(|(i, s)| *s = f(i * c..((i + 1) * c).min(n)));
    }
    [0, 1, 2].map(|j| sum_in_order(sums.iter().map(|s| s[j])))
}

/// `||x||` by [`reduce3`] (each chunk's sum of squares as [`norm2`]'s `dot`: from `-0.0`, in
/// index order).
fn chunked_norm2(sums: &mut [[f64; 3]], x: &[f64]) -> f64 {
    reduce3(sums, x.len(), |r| [dot(&x[r.clone()], &x[r]), -0.0, -0.0])[0].sqrt()
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
