//! Projected Gauss-Seidel / PSOR, one block per contact (Tasora & Anitescu 2011, CMAME 200,
//! Algorithm "P-SOR"; docs/formulation.md section 5).
//!
//! For each block `c` in order (a contact triple for cones, a component for LCP and box):
//! `g_c = (N gamma + r)_c` with the latest values, `gamma_c' = P_K(gamma_c - (omega / d_c) g_c)`,
//! `gamma_c <- lambda gamma_c' + (1 - lambda) gamma_c` (`lambda` the "sharpness").
//! A sweep touches every column of `N` once and is counted as one `N`-product.
//!
//! The block scale `d_c`: `N_cc` for scalar blocks; for 3x3 blocks Chrono's `tr(N_cc)/3`
//! ([`BlockStep::Trace`]), the largest eigenvalue `lambda_max(N_cc)` ([`BlockStep::MaxEigen`]),
//! or, by default, [`BlockStep::Safeguarded`]: `tr(N_cc)/3` unless `lambda_max(N_cc) >= 2 tr(N_cc)/3`,
//! where the trace step is not a descent step for the block (it diverges on Siconos'
//! `Rover4396`) and `lambda_max(N_cc)` is used instead.

use crate::kernels::{lambda_max, trace_mean, RowSource};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use serde::{Deserialize, Serialize};

/// How the 3x3 block scale `d_c` is chosen (scalar blocks always use `N_cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BlockStep {
    /// `d_c = tr(N_cc) / 3` (Chrono, Tasora & Anitescu).
    Trace,
    /// `d_c = lambda_max(N_cc)`.
    MaxEigen,
    /// `tr(N_cc)/3`, or `lambda_max(N_cc)` where the trace step would not descend.
    #[default]
    Safeguarded,
}

/// Settings of [`Pgs`]. Defaults: `omega = 1`, `lambda = 1`, safeguarded block step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PgsSettings {
    /// Relaxation `omega`, in `(0, 2)`.
    pub omega: f64,
    /// Sharpness `lambda`, in `(0, 1]`.
    pub lambda: f64,
    /// Block scale rule.
    pub block_step: BlockStep,
}

impl Default for PgsSettings {
    fn default() -> Self {
        Self {
            omega: 1.0,
            lambda: 1.0,
            block_step: BlockStep::Safeguarded,
        }
    }
}

impl SolverSettings for PgsSettings {
    const SOLVER: &'static str = "pgs";

    fn check(&self, v: &mut Validator) {
        v.in_open("omega", self.omega, 0.0, 2.0)
            .in_open_closed("lambda", self.lambda, 0.0, 1.0);
    }
}

/// Block scales `d_c` of every block (0 where the diagonal block vanishes: such a block is
/// skipped). Shared with projected Jacobi.
pub(crate) fn block_scales(problem: &Problem, rule: BlockStep) -> Vec<f64> {
    let bs = problem.constraints().block_size();
    let inst = problem.instance();
    let nb = problem.n() / bs;
    let mut d = Vec::with_capacity(nb);
    for c in 0..nb {
        if bs == 1 {
            d.push(inst.diag_block(c)[0].max(0.0));
            continue;
        }
        let b = inst.diag_block(c);
        let trace3 = trace_mean(&b, bs);
        let lmax = || lambda_max(&b, bs);
        let dc = match rule {
            BlockStep::Trace => trace3,
            BlockStep::MaxEigen => lmax(),
            BlockStep::Safeguarded => {
                let l = lmax();
                if l >= 2.0 * trace3 {
                    l
                } else {
                    trace3
                }
            }
        };
        d.push(dc.max(0.0));
    }
    d
}

/// Projected Gauss-Seidel / PSOR. Supports LCP, box QP and Coulomb-cone CCP.
#[derive(Clone, Debug)]
pub struct Pgs {
    settings: PgsSettings,
    d: Vec<f64>,
    guarded_blocks: usize,
    rows: cpbench_problems::RowState,
}

impl Pgs {
    /// A PGS solver; errors on invalid settings.
    pub fn new(settings: PgsSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            d: Vec::new(),
            guarded_blocks: 0,
            rows: Default::default(),
        })
    }
}

impl Solver for Pgs {
    fn name(&self) -> &'static str {
        "pgs"
    }

    /// 3-D and 2-D cones (the block size is read from the instance).
    fn handles_cone_dim(&self, _dim: usize) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        self.d = block_scales(problem, self.settings.block_step);
        if self.settings.block_step == BlockStep::Safeguarded
            && problem.constraints().block_size() > 1
        {
            let trace = block_scales(problem, BlockStep::Trace);
            self.guarded_blocks = trace.iter().zip(&self.d).filter(|(a, b)| a != b).count();
        }
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let k = problem.constraints();
        let bs = k.block_size();
        let (omega, lambda) = (self.settings.omega, self.settings.lambda);
        let gamma = &mut state.gamma;
        inst.refresh_row_state(gamma, &mut self.rows);
        let rows = RowSource::new(inst);
        let mut g = [0.0f64; 3];
        let mut old = [0.0f64; 3];
        for (c, &dc) in self.d.iter().enumerate() {
            if dc <= 0.0 {
                continue;
            }
            let o = c * bs;
            rows.gather(&self.rows, gamma, c, &mut g[..bs]);
            let blk = &mut gamma[o..o + bs];
            old[..bs].copy_from_slice(blk);
            let t = omega / dc;
            for i in 0..bs {
                blk[i] -= t * g[i];
            }
            k.project_block(c, blk);
            if lambda != 1.0 {
                for i in 0..bs {
                    blk[i] = lambda * blk[i] + (1.0 - lambda) * old[i];
                }
            }
            if rows.tracks_changes() {
                for i in 0..bs {
                    old[i] = blk[i] - old[i];
                }
                rows.changed(c, &old[..bs], &mut self.rows);
            }
        }
        problem.add_matvecs(1);
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("guarded_blocks", self.guarded_blocks as f64)]
    }
}
