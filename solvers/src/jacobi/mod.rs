//! Projected Jacobi (Tasora & Anitescu 2011, CMAME 200): all blocks updated from the same
//! gradient, `gamma <- lambda P_K(gamma - omega B (N gamma + r)) + (1 - lambda) gamma` with
//! `B = blockdiag(I / d_c)`, `d_c = tr(N_cc)/3` for contacts and `N_ii` for scalar blocks
//! (`B = blockdiag(3 / tr N_cc)` in the paper's notation). One `N`-product per iteration.
//!
//! Jacobi converges only for `omega < 2 / lambda_max(B^{1/2} N B^{1/2})`. The default
//! (`omega = None`) estimates that eigenvalue by 30 power iterations (counted) and takes
//! `omega = 1 / lambda_max`, the classical safe projected-gradient step in the `B` metric.
//!
//! Besides the product `g = N gamma + r`, an iteration is one fused pass over the blocks
//! (scaled step, projection and relaxation of each block in turn), already minimal in bytes;
//! it is chunked by [`crate::kernels::vec_chunk`] (whole blocks). Nothing is allocated per
//! iteration.
//!
//! Determinism: the pass has no reductions, and every block's update reads only its own
//! entries of `gamma`, `B` and `g`, so the iterates are bit for bit those of the plain loop for
//! any `n` and any number of threads: below [`crate::kernels::PAR_MIN_LEN`] unknowns the pass is
//! one sequential loop on the calling thread, above it the chunks run in parallel on the
//! current rayon pool.

use crate::kernels::{inverse_block_scales, vec_chunk};
use crate::pgs::{block_scales, BlockStep};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::linalg::{power_iteration, PowerRule};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Settings of [`Jacobi`]. Defaults: `omega = None` (automatic), `lambda = 1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JacobiSettings {
    /// Relaxation `omega > 0`; `None` = `1 / lambda_max(B^{1/2} N B^{1/2})`.
    pub omega: Option<f64>,
    /// Sharpness `lambda`, in `(0, 1]`.
    pub lambda: f64,
    /// Power iterations for the automatic `omega`.
    pub power_iterations: usize,
}

impl Default for JacobiSettings {
    fn default() -> Self {
        Self {
            omega: None,
            lambda: 1.0,
            power_iterations: 30,
        }
    }
}

/// Projected Jacobi. Supports every class.
#[derive(Clone, Debug)]
pub struct Jacobi {
    settings: JacobiSettings,
    binv: Vec<f64>,
    omega: f64,
    g: Vec<f64>,
}

impl SolverSettings for JacobiSettings {
    const SOLVER: &'static str = "jacobi";

    fn check(&self, v: &mut Validator) {
        v.positive_opt("omega", self.omega)
            .in_open_closed("lambda", self.lambda, 0.0, 1.0);
    }
}

impl Jacobi {
    /// A projected Jacobi solver; errors on invalid settings.
    pub fn new(settings: JacobiSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            binv: Vec::new(),
            omega: 0.0,
            g: Vec::new(),
        })
    }
}

impl Solver for Jacobi {
    fn name(&self) -> &'static str {
        "jacobi"
    }

    /// Joint (bilateral) blocks: the block step's projection is the identity on joint blocks.
    fn takes_joints(&self) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        let bs = problem.constraints().block_size();
        let d = block_scales(problem, BlockStep::Trace);
        // B per unknown (0 for blocks with a vanishing diagonal: they are frozen)
        self.binv = inverse_block_scales(&d, bs);
        self.g = vec![0.0; n];
        self.omega = match self.settings.omega {
            Some(w) => w,
            None => {
                // power iteration on B^{1/2} N B^{1/2}
                let sq: Vec<f64> = self.binv.iter().map(|b| b.sqrt()).collect();
                let (mut x, mut y, mut z) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                let apply = |x: &[f64], y: &mut [f64]| {
                    for ((zi, xi), s) in z.iter_mut().zip(x).zip(&sq) {
                        *zi = xi * s;
                    }
                    problem.matvec(&z, y);
                    for (yi, s) in y.iter_mut().zip(&sq) {
                        *yi *= s;
                    }
                };
                let rule = PowerRule::Fixed {
                    iters: self.settings.power_iterations,
                };
                let (lam, _) = power_iteration(apply, &mut x, &mut y, rule);
                if lam > 0.0 {
                    1.0 / lam
                } else {
                    1.0
                }
            }
        };
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        problem.gradient(&state.gamma, &mut self.g);
        let k = problem.constraints();
        let bs = k.block_size();
        let (lambda, omega) = (self.settings.lambda, self.omega);
        let n = state.gamma.len();
        let c = vec_chunk(n);
        // the block updates of one chunk of whole blocks, the first one `first`
        let update = |first: usize, x: &mut [f64], binv: &[f64], g: &[f64]| {
            let mut old = [0.0f64; 3];
            for (j, ((blk, bb), gb)) in x
                .chunks_exact_mut(bs)
                .zip(binv.chunks_exact(bs))
                .zip(g.chunks_exact(bs))
                .enumerate()
            {
                old[..bs].copy_from_slice(blk);
                for ((x, b), g) in blk.iter_mut().zip(bb).zip(gb) {
                    *x -= omega * b * g;
                }
                k.project_block(first + j, blk);
                if lambda != 1.0 {
                    for i in 0..bs {
                        blk[i] = lambda * blk[i] + (1.0 - lambda) * old[i];
                    }
                }
            }
        };
        if c >= n {
            update(0, &mut state.gamma, &self.binv, &self.g);
        } else {
            (
                state.gamma.par_chunks_mut(c),
                self.binv.par_chunks(c),
                self.g.par_chunks(c),
            )
                .into_par_iter()
                .enumerate()
                .for_each(|(i, (x, b, g))| update(i * c / bs, x, b, g));
        }
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("omega", self.omega)]
    }
}
