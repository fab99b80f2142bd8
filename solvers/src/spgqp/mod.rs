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
//!
//! Besides the product, an iteration makes three fused passes over the vectors (chunked by
//! [`crate::kernels::vec_chunk`]): (1) the projected step `d = P_K(x - alpha g) - x` with
//! `||d||^2`; (2) `d^T N d` and `g^T d`; (3) `x += beta d`, `g += beta N d` with the terms of the
//! objective `f = x^T (g + r) / 2` (a fourth pass for the objective after a gradient refresh).
//! Nothing is allocated per iteration.
//!
//! Determinism: below [`crate::kernels::PAR_MIN_LEN`] unknowns each pass is one sequential
//! loop, so results are bit for bit those of the plain loops; above it the chunks run in
//! parallel on the current rayon pool and each sum is taken chunk by chunk, then over the
//! chunks in order ([`crate::kernels::sum_in_order`]), so the iterates, the residuals and the
//! iteration count are bit-identical for any number of threads given `n` (they differ in the
//! last digits from the one-pass sums of a single chunk).

use crate::kernels::{sum_in_order, vec_chunk, vec_chunks};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::instance::objective_from_gradient;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// `x^T (g + r)` summed in index order from `-0.0`: the sum of
/// [`objective_from_gradient`] before its halving, for one chunk.
fn objective_terms(x: &[f64], g: &[f64], r: &[f64]) -> f64 {
    x.iter()
        .zip(g)
        .zip(r)
        .map(|((x, gi), ri)| x * (gi + ri))
        .sum()
}

/// Settings of [`SpgQp`]. Defaults: GLL memory `m = 12`, GLL sufficient-decrease parameter
/// `gamma = 0.7` (Pospisil's `spgqp.m`), first step
/// `1 / lambda_max(N)` from 20 power iterations, no gradient refresh.
///
/// No setting chooses the threads: above [`crate::kernels::PAR_MIN_LEN`] unknowns the vector
/// passes run in parallel chunks on the current rayon pool, and for any settings the iterates,
/// residuals and counters are bit-identical for every number of threads given `n` (below it,
/// one sequential pass: those of the plain loops).
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
    /// Per-chunk partial sums of a pass (`||d||^2`; `d^T N d` and `g^T d`; the objective).
    sums: Vec<[f64; 2]>,
    iter: u64,
    /// Vector reads and writes of the passes so far ([`crate::kernels::vector_bytes`]).
    vec_passes: u64,
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
            sums: Vec::new(),
            iter: 0,
            vec_passes: 0,
        })
    }
}

impl Solver for SpgQp {
    fn name(&self) -> &'static str {
        "spgqp"
    }

    /// Joint (bilateral) blocks: the projection onto K is the identity on joint blocks (a projected gradient method).
    fn takes_joints(&self) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        self.g = vec![0.0; n];
        self.d = vec![0.0; n];
        self.nd = vec![0.0; n];
        self.sums = vec![[0.0; 2]; vec_chunks(n)];
        self.iter = 0;
        self.vec_passes = 0;
        problem.gradient(&state.gamma, &mut self.g);
        self.f = objective_from_gradient(&state.gamma, &self.g, problem.instance().r());
        self.fs = vec![self.f; self.settings.gll_memory];
        self.fs_pos = 0;
        let lmax = problem.lambda_max(self.settings.power_iterations);
        self.alpha = if lmax > 0.0 { 1.0 / lmax } else { 1.0 };
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let k = problem.constraints();
        let r = problem.instance().r();
        let x = &mut state.gamma;
        let n = x.len();
        let c = vec_chunk(n);
        let bs = k.block_size();
        debug_assert_eq!(self.sums.len(), n.div_ceil(c).max(1));
        // (1) d = P_K(x - alpha g) - x and ||d||^2, chunk by chunk
        let alpha = self.alpha;
        let step = |o: usize, d: &mut [f64], x: &[f64], g: &[f64]| {
            for ((di, xi), gi) in d.iter_mut().zip(x).zip(g) {
                *di = xi - alpha * gi;
            }
            k.project_blocks(o / bs, d);
            let mut dd = 0.0;
            for (di, xi) in d.iter_mut().zip(x) {
                *di -= xi;
                dd += *di * *di;
            }
            dd
        };
        if c >= n {
            self.sums[0][0] = step(0, &mut self.d, x, &self.g);
        } else {
            (
                self.sums.par_iter_mut(),
                self.d.par_chunks_mut(c),
                x.par_chunks(c),
                self.g.par_chunks(c),
            )
                .into_par_iter()
                .enumerate()
                .for_each(|(i, (s, d, x, g))| s[0] = step(i * c, d, x, g));
        }
        let dd = sum_in_order(self.sums.iter().map(|s| s[0]));
        if dd == 0.0 {
            // x is a fixed point of the projected-gradient map: nothing left to do.
            return Ok(StepOutcome::Stalled);
        }
        problem.matvec(&self.d, &mut self.nd);
        // (2) d^T N d and g^T d
        let dots = |d: &[f64], nd: &[f64], g: &[f64]| {
            let (nd, g) = (&nd[..d.len()], &g[..d.len()]);
            let (mut dnd, mut gd) = (-0.0, -0.0);
            for i in 0..d.len() {
                dnd += d[i] * nd[i];
                gd += g[i] * d[i];
            }
            [dnd, gd]
        };
        if c >= n {
            self.sums[0] = dots(&self.d, &self.nd, &self.g);
        } else {
            (
                self.sums.par_iter_mut(),
                self.d.par_chunks(c),
                self.nd.par_chunks(c),
                self.g.par_chunks(c),
            )
                .into_par_iter()
                .for_each(|(s, d, nd, g)| *s = dots(d, nd, g));
        }
        // the dots (d, N d, g read) and the update (x, g read and written, d, N d, r read)
        self.vec_passes += 3 + 7;
        let dnd = sum_in_order(self.sums.iter().map(|s| s[0]));
        let gd = sum_in_order(self.sums.iter().map(|s| s[1]));
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
        // (3) x += beta d, g += beta N d, and the objective's terms x^T (g + r) at the new point
        let update = |x: &mut [f64], g: &mut [f64], d: &[f64], nd: &[f64], r: &[f64]| {
            let m = x.len();
            let (g, d, nd, r) = (&mut g[..m], &d[..m], &nd[..m], &r[..m]);
            let mut f = -0.0;
            for i in 0..m {
                x[i] += beta * d[i];
                g[i] += beta * nd[i];
                f += x[i] * (g[i] + r[i]);
            }
            f
        };
        if c >= n {
            self.sums[0][0] = update(x, &mut self.g, &self.d, &self.nd, r);
        } else {
            (
                self.sums.par_iter_mut(),
                x.par_chunks_mut(c),
                self.g.par_chunks_mut(c),
                self.d.par_chunks(c),
                self.nd.par_chunks(c),
                r.par_chunks(c),
            )
                .into_par_iter()
                .for_each(|(s, x, g, d, nd, r)| s[0] = update(x, g, d, nd, r));
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
            // r read and g written after the product, g copied, x, g, r read
            self.vec_passes += 2 + 2 + 3;
            // the objective at the refreshed gradient, chunk by chunk
            if c >= n {
                self.sums[0][0] = objective_terms(x, &self.g, r);
            } else {
                (
                    self.sums.par_iter_mut(),
                    x.par_chunks(c),
                    self.g.par_chunks(c),
                    r.par_chunks(c),
                )
                    .into_par_iter()
                    .for_each(|(s, x, g, r)| s[0] = objective_terms(x, g, r));
            }
        }
        self.f = sum_in_order(self.sums.iter().map(|s| s[0])) * 0.5;
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
        vec![
            ("alpha_bb", self.alpha),
            (
                "vector_bytes",
                crate::kernels::vector_bytes(self.d.len(), self.vec_passes),
            ),
        ]
    }
}
