//! Projected Barzilai-Borwein gradient method as Chrono::Multicore runs it (`BB` solver of
//! Mazhar et al., `ChSolverMulticoreBB`; Barzilai & Borwein 1988, IMA J. Numer. Anal. 8, for
//! the step lengths; Birgin, Martinez & Raydan 2000 for their projected use):
//!
//! ```text
//! g_0 = N x_0 + r,  alpha_0 = alpha_factor / lambda_max(N)  (power iterations, counted)
//! loop k = 0, 1, ...:
//!        x_{k+1} = P_K(x_k - alpha_k g_k),  g_{k+1} = N x_{k+1} + r  (one product)
//!        s = x_{k+1} - x_k,  y = g_{k+1} - g_k
//!        k even (or `alternate` off):  alpha = s^T s / s^T y   (BB1; s^T y <= 0: fallback_bb1)
//!        k odd:                        alpha = s^T y / y^T y   (BB2; s^T y <= 0: fallback_bb2)
//!        alpha_{k+1} = clamp(alpha, 1e-13, 1e13)
//! ```
//!
//! No line search: the step is always the full projected BB step. Chrono's source carries a
//! non-monotone Armijo test around the step, but its reference value starts at `1e30` and is
//! only ever raised, so the test never rejects a step and Chrono's BB is exactly the
//! iteration above (non-monotone, unsafeguarded). The best iterate is kept by the executor
//! (Chrono returns its best Res4 iterate too). The fallback step lengths are Chrono's constants
//! (absolute lengths, not scaled by `N`); they apply only when `s^T N s <= 0`, i.e. when the
//! step lies in the null space of `N`.
//!
//! Besides the product, an iteration makes two fused passes over the vectors (chunked by
//! [`crate::kernels::vec_chunk`]): (1) `x_old = x` and the projected step
//! `x = P_K(x - alpha g)`; (2) the sums `s^T s`, `s^T y`, `y^T y` with the copy of the new
//! gradient for the executor. The previous gradient is kept by swapping two vectors (no copy).
//! Nothing is allocated per iteration.
//!
//! Determinism: below [`crate::kernels::PAR_MIN_LEN`] unknowns each pass is one sequential
//! loop, so results are bit for bit those of the plain loops; above it the chunks run in
//! parallel on the current rayon pool and each sum is taken chunk by chunk, then over the
//! chunks in order ([`crate::kernels::sum_in_order`]), so the iterates, the step lengths, the
//! residuals and the iteration count are bit-identical for any number of threads given `n`
//! (they differ in the last digits from the one-pass sums of a single chunk).

use crate::kernels::{sum_in_order, vec_chunk, vec_chunks};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Smallest BB step length (Chrono's `a_min`).
pub const ALPHA_MIN: f64 = 1e-13;
/// Largest BB step length (Chrono's `a_max`).
pub const ALPHA_MAX: f64 = 1e13;

/// Settings of [`Bb`]. Defaults are Chrono's: first step `1.95 / lambda_max(N)` (20 power
/// iterations), BB1 and BB2 alternating, fallback steps 0.11 and 0.12.
///
/// No setting chooses the threads: above [`crate::kernels::PAR_MIN_LEN`] unknowns the vector
/// passes run in parallel chunks on the current rayon pool, and for any settings the iterates,
/// residuals and counters are bit-identical for every number of threads given `n` (below it,
/// one sequential pass: those of the plain loops).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BbSettings {
    /// First step length as a multiple of `1 / lambda_max(N)` (> 0; Chrono 1.95).
    pub alpha_factor: f64,
    /// Power iterations for `lambda_max(N)`.
    pub power_iterations: usize,
    /// Alternate BB1 (even iterations) and BB2 (odd iterations) steps; `false`: BB1 only.
    pub alternate: bool,
    /// Step length taken instead of BB1 when `s^T y <= 0` (> 0; Chrono 0.11).
    pub fallback_bb1: f64,
    /// Step length taken instead of BB2 when `s^T y <= 0` (> 0; Chrono 0.12).
    pub fallback_bb2: f64,
}

impl Default for BbSettings {
    fn default() -> Self {
        Self {
            alpha_factor: 1.95,
            power_iterations: 20,
            alternate: true,
            fallback_bb1: 0.11,
            fallback_bb2: 0.12,
        }
    }
}

impl SolverSettings for BbSettings {
    const SOLVER: &'static str = "bb";

    fn check(&self, v: &mut Validator) {
        v.positive("alpha_factor", self.alpha_factor)
            .positive("fallback_bb1", self.fallback_bb1)
            .positive("fallback_bb2", self.fallback_bb2);
    }
}

/// Projected Barzilai-Borwein (Chrono's BB). Supports every QP class.
#[derive(Clone, Debug)]
pub struct Bb {
    settings: BbSettings,
    alpha: f64,
    iter: u64,
    g: Vec<f64>,
    x_old: Vec<f64>,
    g_old: Vec<f64>,
    /// Per-chunk partial sums `s^T s`, `s^T y`, `y^T y` (allocated in `init`).
    sums: Vec<[f64; 3]>,
    fallbacks: u64,
}

impl Bb {
    /// A projected BB solver; errors on invalid settings.
    pub fn new(settings: BbSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            alpha: 1.0,
            iter: 0,
            g: Vec::new(),
            x_old: Vec::new(),
            g_old: Vec::new(),
            sums: Vec::new(),
            fallbacks: 0,
        })
    }
}

impl Solver for Bb {
    fn name(&self) -> &'static str {
        "bb"
    }

    /// Joint (bilateral) blocks: the step is `P_K(x - alpha g)` and `P_K` is the identity on a
    /// free block (docs/formulation.md, "Bilateral rows"), so a joint block takes the plain
    /// gradient step; the BB step lengths are scalars over the whole vector and need nothing
    /// per block. K stays closed and convex, the projected BB iteration is unchanged.
    fn takes_joints(&self) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        self.g = vec![0.0; n];
        self.x_old = vec![0.0; n];
        self.g_old = vec![0.0; n];
        self.sums = vec![[0.0; 3]; vec_chunks(n)];
        self.iter = 0;
        self.fallbacks = 0;
        problem.gradient(&state.gamma, &mut self.g);
        let lmax = problem.lambda_max(self.settings.power_iterations);
        self.alpha = if lmax > 0.0 && lmax.is_finite() {
            self.settings.alpha_factor / lmax
        } else {
            1.0
        };
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let k = problem.constraints();
        let bs = k.block_size();
        let x = &mut state.gamma;
        let n = x.len();
        let c = vec_chunk(n);
        debug_assert_eq!(self.sums.len(), n.div_ceil(c).max(1));
        // the previous gradient becomes g_old without a copy; g is overwritten by the product
        std::mem::swap(&mut self.g, &mut self.g_old);
        // (1) x_old = x, x = P_K(x - alpha g_old), chunk by chunk
        let alpha = self.alpha;
        let step = |o: usize, x: &mut [f64], xo: &mut [f64], g: &[f64]| {
            for ((xi, xoi), gi) in x.iter_mut().zip(xo.iter_mut()).zip(g) {
                *xoi = *xi;
                *xi -= alpha * gi;
            }
            k.project_blocks(o / bs, x);
        };
        if c >= n {
            step(0, x, &mut self.x_old, &self.g_old);
        } else {
            (
                x.par_chunks_mut(c),
                self.x_old.par_chunks_mut(c),
                self.g_old.par_chunks(c),
            )
                .into_par_iter()
                .enumerate()
                .for_each(|(i, (x, xo, g))| step(i * c, x, xo, g));
        }
        problem.gradient(x, &mut self.g);
        // (2) s^T s, s^T y, y^T y with s = x - x_old, y = g - g_old; the executor's copy of g
        let sums = |x: &[f64], xo: &[f64], g: &[f64], go: &[f64], out: &mut [f64]| {
            let (mut ss, mut sy, mut yy) = (0.0, 0.0, 0.0);
            for ((((xi, xo), gi), go), oi) in x.iter().zip(xo).zip(g).zip(go).zip(out) {
                let s = xi - xo;
                let y = gi - go;
                ss += s * s;
                sy += s * y;
                yy += y * y;
                *oi = *gi;
            }
            [ss, sy, yy]
        };
        if c >= n {
            self.sums[0] = sums(x, &self.x_old, &self.g, &self.g_old, &mut state.grad);
        } else {
            (
                self.sums.par_iter_mut(),
                x.par_chunks(c),
                self.x_old.par_chunks(c),
                self.g.par_chunks(c),
                self.g_old.par_chunks(c),
                state.grad.par_chunks_mut(c),
            )
                .into_par_iter()
                .for_each(|(s, x, xo, g, go, out)| *s = sums(x, xo, g, go, out));
        }
        let ss = sum_in_order(self.sums.iter().map(|s| s[0]));
        let sy = sum_in_order(self.sums.iter().map(|s| s[1]));
        let yy = sum_in_order(self.sums.iter().map(|s| s[2]));
        if !(ss.is_finite() && sy.is_finite() && yy.is_finite()) {
            return Err(SolverError::Numerical("non-finite step in BB".into()));
        }
        state.grad_fresh = true;
        if ss == 0.0 {
            // x is a fixed point of the projected-gradient map at this step length
            return Ok(StepOutcome::Stalled);
        }
        let bb2 = self.settings.alternate && self.iter % 2 == 1;
        let alpha = if sy <= 0.0 {
            self.fallbacks += 1;
            if bb2 {
                self.settings.fallback_bb2
            } else {
                self.settings.fallback_bb1
            }
        } else if bb2 {
            sy / yy
        } else {
            ss / sy
        };
        self.alpha = alpha.clamp(ALPHA_MIN, ALPHA_MAX);
        self.iter += 1;
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("alpha_bb", self.alpha),
            ("fallbacks", self.fallbacks as f64),
        ]
    }
}
