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
//!
//! **Boxed LCP with moving bounds** ([`ProblemClass::Blcp`], friction boxes
//! `|gamma_t,i| <= mu gamma_n`): ODE's projected Gauss-Seidel (Smith, Open Dynamics Engine,
//! `dxQuickStepper`'s SOR-LCP; Catto 2005 for the same rule in Box2D's "sequential impulses").
//! Per contact, component after component with scalar steps `1 / N_ii` (not the block scale
//! above: each component has its own bound):
//! `gamma_n <- max(0, gamma_n - omega g_n / N_nn)`, then each tangent
//! `gamma_t,i <- clamp(gamma_t,i - omega g_t,i / N_ii, -mu gamma_n, mu gamma_n)` with the *new*
//! normal, `g` of the contact kept current after each component change (`g += N_:,i delta_i`
//! within the diagonal block). The sharpness `lambda` blends the contact's old and new values
//! as above (a convex combination stays in the pyramid `|gamma_t,i| <= mu gamma_n`). It is the
//! same solver (`pgs`) because the sweep, the row access and the settings are pgs's; only the
//! per-contact update differs, chosen by the class.
//!
//! **Anderson acceleration** ([`PgsSettings::anderson_depth`], 0 by default; the preset
//! `pgs:anderson` takes depth 5): the sweep is a fixed-point map `x -> G(x)` whose fixed points
//! are the solutions, and PGS converges only linearly, slowly on stacks. The safeguarded
//! Anderson step of `solvers/src/anderson.rs` (Walker & Ni 2011; the one `nsgs` has used since
//! issue 31) extrapolates from the last `m` sweeps and projects onto `K`. Measured on the scale
//! suite's pyramids (release build, from zero, `--check-every 10`): 121,680 contacts to 1e-4
//! in 250 sweeps against plain PGS's 2,330 (docs/scale.md); 10,404 contacts to 1e-6 in 155 against
//! 1,193. Its vector passes run in fixed chunks ([`crate::kernels::vec_chunk`]): bit-identical
//! for any number of threads.

use crate::anderson::{Anderson, MAX_ANDERSON};
use crate::coloured::{ColouredSweep, SweepOrder};
use crate::kernels::{
    debug_assert_ordered, free_block_step, joint_inverses, lambda_max, trace_mean, RowSource,
};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::ProblemClass;
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

/// Settings of [`Pgs`]. Defaults: `omega = 1`, `lambda = 1`, safeguarded block step, the
/// sequential sweep, no Anderson acceleration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PgsSettings {
    /// Relaxation `omega`, in `(0, 2)`.
    pub omega: f64,
    /// Sharpness `lambda`, in `(0, 1]`.
    pub lambda: f64,
    /// Block scale rule.
    pub block_step: BlockStep,
    /// Sweep order, `sequential` (the default), `coloured` or `auto` (coloured from 50,000
    /// blocks on).
    /// `sequential`: block order. `coloured`: colour after colour of `N`'s block graph, the
    /// blocks of a colour in parallel ([`crate::coloured`]): other iterates than
    /// `sequential`, the same for any number of threads; on the block storage its rows come
    /// from a whole-row copy of `N` in colour order, about the storage's memory again
    /// (counter `colour_layout`; over the memory limit the copy is skipped and the solve's
    /// message says so). The boxed LCP is always swept in block order.
    pub sweep: SweepOrder,
    /// Depth `m` of the safeguarded Anderson acceleration of the sweep map (0, the default:
    /// plain PGS; at most 20; Walker & Ni 2011, as `nsgs`'s, `solvers/src/anderson.rs`): the next
    /// iterate is `P_K(G(x) - DG z)`, `z = argmin ||f - DF z||` over the last `m` sweeps'
    /// differences. Other iterates than plain PGS (the same fixed points); `16 m n` bytes more
    /// memory and about `3 m n` values read per sweep. Not on the boxed LCP (its friction
    /// bounds move with `gamma_n`: no fixed set to project onto).
    pub anderson_depth: usize,
    /// Anderson safeguard `> 0`: an extrapolated point is kept when its fixed-point residual
    /// `||G(x) - x||` is at most this factor times that of the step that produced it;
    /// otherwise the plain sweep result is taken and the history restarts.
    pub anderson_safeguard: f64,
}

impl Default for PgsSettings {
    fn default() -> Self {
        Self {
            omega: 1.0,
            lambda: 1.0,
            block_step: BlockStep::Safeguarded,
            sweep: SweepOrder::Sequential,
            anderson_depth: 0,
            anderson_safeguard: 1.5,
        }
    }
}

impl PgsSettings {
    /// The preset `pgs:anderson`: the defaults with Anderson acceleration of depth 5
    /// ([`PgsSettings::anderson_depth`]). Depth 5 rather than `nsgs`'s 10: on the scale
    /// suite's pyramids depth 10 took as many or barely fewer sweeps (121,680 contacts to
    /// 1e-4: 250 and 250; 10,404 contacts to 1e-6: 155 and 130) for twice the memory
    /// (`16 m n` bytes) and vector work per sweep.
    pub fn anderson() -> Self {
        Self {
            anderson_depth: 5,
            ..Self::default()
        }
    }
}

impl SolverSettings for PgsSettings {
    const SOLVER: &'static str = "pgs";

    fn check(&self, v: &mut Validator) {
        v.in_open("omega", self.omega, 0.0, 2.0)
            .in_open_closed("lambda", self.lambda, 0.0, 1.0)
            .at_most(
                "anderson_depth",
                self.anderson_depth as u64,
                MAX_ANDERSON as u64,
            )
            .greater("anderson_safeguard", self.anderson_safeguard, 0.0);
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

/// Projected Gauss-Seidel / PSOR. Supports LCP, box QP, Coulomb-cone CCP and the boxed LCP
/// with moving bounds (module docs).
#[derive(Clone, Debug)]
pub struct Pgs {
    settings: PgsSettings,
    d: Vec<f64>,
    guarded_blocks: usize,
    rows: cpbench_problems::RowState,
    /// BLCP only: the diagonal blocks `N_cc` (row-major `3 x 3`), one per contact.
    blocks: Vec<[f64; 9]>,
    /// The colouring when the sweep goes by colours ([`PgsSettings::sweep`]).
    coloured: Option<ColouredSweep>,
    /// The inverses of the joint (bilateral) blocks' `N_cc`, one per joint block: their
    /// exact local solve ([`crate::kernels::joint_inverses`]; `None`: the scaled step).
    joint_inv: Vec<Option<[f64; 9]>>,
    /// Anderson acceleration of the sweep map ([`PgsSettings::anderson_depth`]).
    aa: Anderson,
    /// Sweeps made (for the counter `vector_bytes`).
    sweeps: u64,
    /// `n`.
    n: usize,
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
            blocks: Vec::new(),
            coloured: None,
            joint_inv: Vec::new(),
            aa: Anderson::default(),
            sweeps: 0,
            n: 0,
        })
    }
}

impl Solver for Pgs {
    fn name(&self) -> &'static str {
        "pgs"
    }

    fn supports(&self, class: ProblemClass) -> bool {
        class.is_qp() || class == ProblemClass::Blcp
    }

    fn takes_joints(&self) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        let depth = self.settings.anderson_depth;
        (self.sweeps, self.n) = (0, problem.n());
        if let Some(mu) = blcp_mu(problem) {
            if depth > 0 {
                return Err(SolverError::InvalidSetting {
                    name: "anderson_depth",
                    value: depth.to_string(),
                    reason: "0 on the boxed LCP (its friction bounds move with gamma_n: no \
                             fixed set to project the extrapolation onto)",
                });
            }
            self.aa = Anderson::default();
            let inst = problem.instance();
            self.blocks = (0..mu.len()).map(|c| inst.diag_block(c)).collect();
            self.coloured = None;
            self.d.clear();
            self.guarded_blocks = 0;
            return Ok(());
        }
        self.blocks.clear();
        let bs = problem.constraints().block_size();
        let nb = problem.n() / bs;
        self.coloured = self
            .settings
            .sweep
            .is_coloured(nb)
            .then(|| ColouredSweep::new(problem.instance(), bs, problem.memory_limit()));
        self.d = block_scales(problem, self.settings.block_step);
        self.joint_inv = joint_inverses(problem.instance());
        if self.settings.block_step == BlockStep::Safeguarded
            && problem.constraints().block_size() > 1
        {
            let trace = block_scales(problem, BlockStep::Trace);
            self.guarded_blocks = trace.iter().zip(&self.d).filter(|(a, b)| a != b).count();
        }
        self.aa = Anderson::new(problem.n(), depth, self.settings.anderson_safeguard);
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        self.sweeps += 1;
        if let Some(mu) = blcp_mu(problem) {
            return self.step_blcp(problem, state, mu);
        }
        if self.aa.is_on() {
            self.aa.begin(&state.gamma);
        }
        if self.coloured.is_some() {
            self.step_coloured(problem, state)?;
        } else {
            self.step_sequential(problem, state)?;
        }
        if self.aa.is_on() {
            self.aa.step(problem.constraints(), &mut state.gamma);
        }
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut c = vec![("guarded_blocks", self.guarded_blocks as f64)];
        if let Some(col) = &self.coloured {
            c.extend(col.counters());
        }
        if self.aa.is_on() {
            c.push(("anderson_restarts", self.aa.restarts as f64));
            c.push(("anderson_rejections", self.aa.rejections as f64));
        }
        // per sweep, beyond the product's read and write of gamma: r read, and the row
        // state's accumulator cleared, read and written (block storage; a model for the others)
        let passes = 4 * self.sweeps + self.aa.vec_passes;
        c.push(("vector_bytes", crate::kernels::vector_bytes(self.n, passes)));
        c
    }

    fn message(&self) -> Option<String> {
        self.coloured
            .as_ref()
            .and_then(|col| col.note())
            .map(str::to_string)
    }
}

impl Pgs {
    /// One sweep in block order (module docs). Counted as one `N`-product; allocates nothing.
    fn step_sequential(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let k = problem.constraints();
        let bs = k.block_size();
        let (rows, omega, lambda) = self.begin_sweep(problem, &state.gamma, true);
        let gamma = &mut state.gamma;
        let (mut g, mut old) = ([0.0f64; 3], [0.0f64; 3]);
        for (c, &dc) in self.d.iter().enumerate() {
            if dc > 0.0 {
                let o = c * bs;
                rows.gather(&self.rows, gamma, c, &mut g[..bs]);
                let blk = &mut gamma[o..o + bs];
                old[..bs].copy_from_slice(blk);
                local_step(k, c, &self.joint_inv, omega / dc, omega, &g[..bs], blk);
                relax_and_record(lambda, blk, &mut old[..bs], &rows, c, &mut self.rows);
            }
            rows.done(c, gamma, &mut self.rows);
        }
        debug_assert_ordered(problem.instance(), &self.rows, self.d.len());
        problem.add_matvecs(1);
        Ok(StepOutcome::Continue)
    }

    /// The start of a sweep: the row state refreshed at `gamma` (for a sweep in block order
    /// reporting each block done when `ordered`, [`cpbench_problems::Instance::begin_ordered_sweep`]),
    /// the source of `N`'s rows and the settings' `(omega, lambda)`.
    fn begin_sweep<'i>(
        &mut self,
        problem: &Problem<'i>,
        gamma: &[f64],
        ordered: bool,
    ) -> (RowSource<'i>, f64, f64) {
        let inst = problem.instance();
        if ordered {
            inst.begin_ordered_sweep(gamma, &mut self.rows);
        } else {
            inst.refresh_row_state(gamma, &mut self.rows);
        }
        let (omega, lambda) = (self.settings.omega, self.settings.lambda);
        (RowSource::new(inst), omega, lambda)
    }

    /// One sweep by colours ([`crate::coloured`]): every block's update is the sequential
    /// sweep's (the same arithmetic), from the values of the colours before its own. Counted
    /// as one `N`-product; allocates nothing.
    fn step_coloured(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let k = problem.constraints();
        let bs = k.block_size();
        let (rows, omega, lambda) = self.begin_sweep(problem, &state.gamma, false);
        let (d, joint_inv) = (&self.d, &self.joint_inv);
        let Some(col) = self.coloured.as_mut() else {
            return Ok(StepOutcome::Continue);
        };
        col.sweep(&mut state.gamma, &rows, &mut self.rows, |row, out| {
            let c = row.block();
            let o = c * bs;
            let old = &row.gamma()[o..o + bs];
            let dc = d[c];
            if dc <= 0.0 {
                out.copy_from_slice(old);
                return 0;
            }
            let mut g = [0.0f64; 3];
            row.gather(&mut g[..bs]);
            out.copy_from_slice(old);
            local_step(k, c, joint_inv, omega / dc, omega, &g[..bs], out);
            if lambda != 1.0 {
                for (xi, oi) in out.iter_mut().zip(old) {
                    *xi = lambda * *xi + (1.0 - lambda) * oi;
                }
            }
            0
        });
        problem.add_matvecs(1);
        Ok(StepOutcome::Continue)
    }

    /// One sweep of ODE's projected Gauss-Seidel on a boxed LCP with friction coefficients
    /// `mu` (module docs). Counted as one `N`-product; allocates nothing.
    fn step_blcp(&mut self, problem: &Problem, state: &mut IterState, mu: &[f64]) -> StepResult {
        let (rows, omega, lambda) = self.begin_sweep(problem, &state.gamma, true);
        let gamma = &mut state.gamma;
        let (mut g, mut old) = ([0.0f64; 3], [0.0f64; 3]);
        for (c, (b, &m)) in self.blocks.iter().zip(mu).enumerate() {
            let o = 3 * c;
            rows.gather(&self.rows, gamma, c, &mut g);
            let x = &mut gamma[o..o + 3];
            old.copy_from_slice(x);
            for i in 0..3 {
                let nii = b[4 * i];
                if nii <= 0.0 {
                    continue; // a component without diagonal does not move (as pgs skips)
                }
                let v = x[i] - omega * g[i] / nii;
                let v = if i == 0 {
                    v.max(0.0)
                } else {
                    let h = m * x[0];
                    v.clamp(-h, h)
                };
                let delta = v - x[i];
                x[i] = v;
                // keep the contact's g current: g_j += N_ji delta (column i of N_cc)
                for j in 0..3 {
                    g[j] += b[3 * j + i] * delta;
                }
            }
            relax_and_record(lambda, x, &mut old, &rows, c, &mut self.rows);
            rows.done(c, gamma, &mut self.rows);
        }
        debug_assert_ordered(problem.instance(), &self.rows, self.blocks.len());
        problem.add_matvecs(1);
        Ok(StepOutcome::Continue)
    }
}
/// PGS's update of block `c` (slice `x`, its gradient `g`): a joint block with an invertible
/// `N_cc` takes the exact local solve `x - omega N_cc^-1 g` ([`free_block_step`]), every other
/// block the scaled projected step `P_K(x - t g)`, `t = omega / d_c`.
#[inline]
fn local_step(
    k: &cpbench_problems::ConstraintSet,
    c: usize,
    joint_inv: &[Option<[f64; 9]>],
    t: f64,
    omega: f64,
    g: &[f64],
    x: &mut [f64],
) {
    if let Some(Some(inv)) = joint_inv.get(c) {
        return free_block_step(inv, g, omega, x);
    }
    for (xi, gi) in x.iter_mut().zip(g) {
        *xi -= t * gi;
    }
    k.project_block(c, x);
}

/// The end of a block update: the relaxation `x = lambda x + (1 - lambda) old` (skipped for
/// `lambda = 1`), then, where `rows` tracks changes, the change `x - old` (left in `old`) handed
/// to the row state of block `c`. Shapes: `x` and `old` of the block's length.
#[inline]
fn relax_and_record(
    lambda: f64,
    x: &mut [f64],
    old: &mut [f64],
    rows: &RowSource,
    c: usize,
    state: &mut cpbench_problems::RowState,
) {
    if lambda != 1.0 {
        for (xi, oi) in x.iter_mut().zip(old.iter()) {
            *xi = lambda * *xi + (1.0 - lambda) * oi;
        }
    }
    if rows.tracks_changes() {
        for (oi, xi) in old.iter_mut().zip(x.iter()) {
            *oi = xi - *oi;
        }
        rows.changed(c, old, state);
    }
}

/// The friction coefficients of a boxed LCP ([`ProblemClass::Blcp`], which PGS sweeps with
/// its own moving-bound clamp), `None` for every other class.
#[inline]
fn blcp_mu<'p>(problem: &'p Problem<'_>) -> Option<&'p [f64]> {
    if problem.instance().class() == ProblemClass::Blcp {
        problem.constraints().friction()
    } else {
        None
    }
}
