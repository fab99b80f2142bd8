//! NSGS: non-smooth Gauss-Seidel for the true (non-associated) Coulomb problem of fclib
//! (docs/formulation.md section 2; Acary & Brogliato, "Numerical Methods for Nonsmooth Dynamical
//! Systems", Springer 2008, section 13.4 "Gauss-Seidel-like methods"; Jean 1999, CMAME 177;
//! Siconos' `SICONOS_FRICTION_3D_NSGS` with the one-contact solver "projection on cone with
//! local iteration").
//!
//! Notation: fclib writes `u = W r + q` with the reaction `r` as unknown; that is cpbench's
//! `u = N gamma + r` (`W = N`, fclib's `r` our `gamma`, fclib's `q` our linear term `r`). To
//! keep the two apart, the code says `reaction` (`gamma`) and `lin` (the linear term), never
//! `r` and `q`. One sweep visits every contact `c` (in order, or in a seeded random order each
//! sweep) and solves the one-contact problem with the other contacts frozen:
//!
//! ```text
//! lin_c = u_c - W_cc gamma_c          (u_c = (W gamma + lin)_c with the latest gamma: exact)
//! repeat (local iteration, at most local_max_iter times):
//!     u       = W_cc gamma_c + lin_c
//!     gamma_c = P_K(gamma_c - rho_c (u + mu_c ||u_T|| e_n))   (De Saxce & Feng 1991)
//! until ||change|| <= local_tol ||gamma_c||
//! gamma_c <- omega gamma_c(new) + (1 - omega) gamma_c(old)
//! ```
//!
//! A fixed point of the local map is exactly a solution of the one-contact Coulomb problem
//! (De Saxce & Feng 1991, the bipotential form of the law), for any `rho_c > 0`. The step
//! `rho_c = 1 / lambda_max(sym(W_cc))` ([`LocalRho::MaxEigen`], the default) makes the
//! frozen-`s` part a projected-gradient step of the local QP with a safe step; `3 / tr(W_cc)`
//! ([`LocalRho::Trace`]) is Siconos' and Chrono's per-contact scaling.
//!
//! `u_c` is gathered along the columns of [`cpbench_problems::Instance::row_matrix`] (row `c`
//! of `W`, also for a non-symmetric `W`), so each contact update sees the exact current
//! velocity (no incremental drift). A sweep touches every stored entry once and counts as one
//! `N`-product. `omega` is a relaxation in `(0, 2)`. `step` allocates nothing.
//!
//! **Anderson acceleration** (default depth `m = 10`; Walker & Ni 2011, type II): the sweep is
//! a fixed-point map `x -> G(x)`; with `f = G(x) - x` and the last `m` differences `DF`, `DG`,
//! the next iterate is `P_K(G(x) - DG gamma)`, `gamma = argmin ||f - DF gamma||`. Plain NSGS
//! converges only linearly, and very slowly on stacks: on Siconos' `BoxesStack1-i100000-32`
//! and fclib's `local_problem_test` it is at `1.5e-5` and `1.8e-4` (fc3d error) after 20000
//! sweeps (Siconos' own NSGS: `6e-8` after 200000 and `1e-10` after 171000). The law is
//! non-smooth, so the extrapolation is safeguarded: an extrapolated point whose fixed-point
//! residual exceeds `anderson_safeguard` times that of the step before is replaced by the plain
//! sweep result and the history restarts. The safeguard matters: `1.0` stalls on Siconos'
//! `Capsules-i100-1090` near `1e-7`, `1.5` (the default) takes every fclib / Siconos fc3d
//! problem of the Siconos and fclib collection (`tests/fixtures/NOTICE`) to `1e-8` within 5909
//! sweeps (release build, default settings: `BoxesStack1` 2375, `local_problem_test` 2492,
//! `Capsules-i125-1213` 5370, `OneObject-i100000-499`, where Siconos' NSGS ends at `2e-3`,
//! 5909).
//!
//! **Local iterations.** Each contact runs at most `local_max_iter` local iterations per sweep
//! (default 3). Solving each one-contact problem to rounding (100 iterations, the default
//! until issue 31) took fewer sweeps but made each 3 to 30 times dearer: measured on the 13
//! public 3-D files (release build, median of 3, fc3d error 1e-8; a loaded machine, load
//! average about 4, so read the ratios rather than the times), 100 against 3 local
//! iterations: Box_Stacks 17 sweeps in 11.9 ms against 18 in 0.37 ms, Capsules-i100-889 1495
//! in 2.16 s against 1603 in 0.28 s, KaplasTower 144 in 0.70 s against 117 in 0.084 s,
//! OneObject 2773 in 0.42 s against 5909 in 0.11 s; one local iteration fails on
//! Capsules-i125-1213 (stalls at 3.5e-7).
//!
//! **2-D contacts** (cone dimension 2, Siconos' fc2d; Acary & Brogliato 2008, section 13.4.2,
//! the enumerative solution of the planar one-contact law): the one-contact problem
//! `u = B r + lin`, `B = W_cc` (2x2) is solved exactly by trying the four cases of the law in
//! turn and keeping the first that is consistent: take-off (`r = 0`, valid when `lin_n >= 0`),
//! stick (`u = 0`, `r = -B^-1 lin`, valid when `|r_t| <= mu r_n`), slide+ (`r_t = mu r_n`,
//! `u_n = 0`, valid when `r_n >= 0` and `u_t <= 0`) and slide- (`r_t = -mu r_n`, `u_n = 0`,
//! valid when `r_n >= 0` and `u_t >= 0`). When none is (a singular or strongly non-symmetric
//! `B`), the local De Saxce iteration above runs on the 2-vector instead. The sweep, the
//! relaxation and the Anderson acceleration are the same as in 3-D.

use crate::anderson::{Anderson, MAX_ANDERSON};
use crate::coloured::{ColouredSweep, SweepOrder};
use crate::kernels::{
    coulomb_mu, free_block_step, joint_inverses, lambda_max, local_blocks, take_local_step,
    trace_mean, RowSource,
};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::constraints::project_coulomb_cone;
use cpbench_problems::rng::SplitMix64;
use cpbench_problems::ConstraintSet;

use serde::{Deserialize, Serialize};

/// How the local step `rho_c` is chosen from the diagonal block `W_cc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LocalRho {
    /// `rho_c = 1 / lambda_max((W_cc + W_cc^T) / 2)`.
    #[default]
    MaxEigen,
    /// `rho_c = 3 / tr(W_cc)`.
    Trace,
}

/// Settings of [`Nsgs`]. Defaults: `omega = 1`, 100 local iterations to a local tolerance of
/// `1e-15`, `rho_c` from `lambda_max`, natural contact order, Anderson acceleration of depth
/// 10 with safeguard 1.5 (`anderson_depth = 0` gives plain NSGS, as in Siconos).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NsgsSettings {
    /// Relaxation `omega`, in `(0, 2)`.
    pub omega: f64,
    /// Largest number of local fixed-point iterations per contact and sweep (`>= 1`; default
    /// 3: a contact need not be solved exactly while its neighbours still move, and 100
    /// local iterations made a sweep 3 to 30 times dearer for as many or more sweeps; module
    /// documentation).
    pub local_max_iter: u32,
    /// Local stopping test: the change of `r_c` is `<= local_tol * max(||r_c||, 1e-300)`
    /// (`>= 0`).
    pub local_tol: f64,
    /// Rule for the local step `rho_c`.
    pub local_rho: LocalRho,
    /// Visit the contacts in a new random order each sweep.
    pub shuffle: bool,
    /// Seed of the shuffle ([`cpbench_problems::rng::SplitMix64`]).
    pub seed: u64,
    /// Depth of Anderson acceleration of the sweep map, the paper's memory `m` (0 = plain
    /// NSGS, at most 20). JSON also accepts the old name `anderson`.
    #[serde(alias = "anderson")]
    pub anderson_depth: usize,
    /// Anderson safeguard `> 0`: an extrapolated point is kept when the fixed-point residual
    /// `||G(x) - x||` at it is at most this factor times that of the step that produced it;
    /// otherwise the plain sweep result is taken and the history restarts.
    pub anderson_safeguard: f64,
    /// Sweep order, `sequential` (the default), `coloured` or `auto` (coloured from 50,000
    /// contacts on, unless `shuffle`). `sequential`: contact order (or shuffled). `coloured`:
    /// colour after colour of the contact graph, the contacts of a colour in parallel
    /// ([`crate::coloured`]): other iterates than `sequential`, the same for any number of
    /// threads; not with `shuffle`. On the block storage its rows come from a whole-row copy
    /// of `N` in colour order, about the storage's memory again (counter `colour_layout`;
    /// over the memory limit the copy is skipped and the solve's message says so).
    pub sweep: SweepOrder,
}

impl Default for NsgsSettings {
    fn default() -> Self {
        Self {
            omega: 1.0,
            local_max_iter: 3,
            local_tol: 1e-15,
            local_rho: LocalRho::MaxEigen,
            shuffle: false,
            seed: 0,
            anderson_depth: 10,
            anderson_safeguard: 1.5,
            sweep: SweepOrder::Sequential,
        }
    }
}

impl SolverSettings for NsgsSettings {
    const SOLVER: &'static str = "nsgs";
    const ALIASES: &'static [(&'static str, &'static str)] = &[("anderson", "anderson_depth")];

    fn check(&self, v: &mut Validator) {
        v.in_open("omega", self.omega, 0.0, 2.0)
            .at_least("local_max_iter", self.local_max_iter.into(), 1)
            .at_most(
                "anderson_depth",
                self.anderson_depth as u64,
                MAX_ANDERSON as u64,
            )
            .greater("anderson_safeguard", self.anderson_safeguard, 0.0)
            .non_negative("local_tol", self.local_tol)
            .require(
                "sweep",
                !(self.shuffle && self.sweep == SweepOrder::Coloured),
                "coloured",
                || "one of sequential, coloured, auto; not coloured with shuffle".into(),
            );
    }
}

/// NSGS for the Coulomb problem ([`cpbench_problems::ProblemClass::Coulomb`] only).
#[derive(Clone, Debug)]
pub struct Nsgs {
    settings: NsgsSettings,
    /// Diagonal blocks `W_cc`, row-major, 9 per contact.
    blocks: Vec<[f64; 9]>,
    /// Local steps `rho_c` (0: the block vanishes, the contact is skipped).
    rho: Vec<f64>,
    order: Vec<usize>,
    rows: cpbench_problems::RowState,
    rng: SplitMix64,
    local_iters: u64,
    aa: Anderson,
    /// The colouring when the sweep goes by colours ([`NsgsSettings::sweep`]).
    coloured: Option<ColouredSweep>,
    /// The inverses of the joint (bilateral) blocks' `W_cc`: their exact local solve
    /// ([`crate::kernels::joint_inverses`]; `None`: singular, the block is skipped).
    joint_inv: Vec<Option<[f64; 9]>>,
}

impl Nsgs {
    /// An NSGS solver; errors on invalid settings.
    pub fn new(settings: NsgsSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        let rng = SplitMix64::new(settings.seed);
        Ok(Self {
            settings,
            blocks: Vec::new(),
            rho: Vec::new(),
            order: Vec::new(),
            rows: Default::default(),
            rng,
            local_iters: 0,
            aa: Anderson::default(),
            coloured: None,
            joint_inv: Vec::new(),
        })
    }
}

/// `y = B x` for a row-major 3x3 block.
#[inline]
fn mul3(b: &[f64; 9], x: &[f64]) -> [f64; 3] {
    [
        b[0] * x[0] + b[1] * x[1] + b[2] * x[2],
        b[3] * x[0] + b[4] * x[1] + b[5] * x[2],
        b[6] * x[0] + b[7] * x[1] + b[8] * x[2],
    ]
}

/// Solve the one-contact 2-D Coulomb problem `u = B r + lin` (`B` the row-major 2x2 block in
/// the first 4 entries of `b`) exactly by enumeration (see the module docs): writes `r` into
/// `gamma_c` (length 2) and returns `true` when one of take-off, stick, slide+, slide- is
/// consistent (tolerance `1e-14` relative), `false` (leaving `gamma_c` unchanged) when none is.
/// Used by NSGS on 2-D contacts; [`local_solve`] is the iterative alternative.
#[inline]
pub fn local_solve2_exact(b: &[f64; 9], lin: &[f64; 3], mu: f64, gamma_c: &mut [f64]) -> bool {
    let (b00, b01, b10, b11) = (b[0], b[1], b[2], b[3]);
    let (ln, lt) = (lin[0], lin[1]);
    // take-off
    if ln >= 0.0 {
        gamma_c[0] = 0.0;
        gamma_c[1] = 0.0;
        return true;
    }
    let eps = 1e-14;
    // stick: B r = -lin
    let det = b00 * b11 - b01 * b10;
    let scale = (b00 * b11).abs().max((b01 * b10).abs());
    if det.abs() > eps * scale {
        let rn = (-ln * b11 + lt * b01) / det;
        let rt = (-lt * b00 + ln * b10) / det;
        if rn >= 0.0 && rt.abs() <= mu * rn * (1.0 + eps) {
            gamma_c[0] = rn;
            gamma_c[1] = rt;
            return true;
        }
    }
    // slide with r_t = s mu r_n (s = +1: u_t <= 0; s = -1: u_t >= 0), u_n = 0
    for s in [1.0, -1.0] {
        let gn = b00 + s * mu * b01;
        if gn <= 0.0 {
            continue;
        }
        let rn = -ln / gn;
        let ut = (b10 + s * mu * b11) * rn + lt;
        let tol = eps * (lt.abs() + (b10.abs() + mu * b11.abs()) * rn);
        if rn >= 0.0 && s * ut <= tol {
            gamma_c[0] = rn;
            gamma_c[1] = s * mu * rn;
            return true;
        }
    }
    false
}

/// `y = B x` for a row-major `bs x bs` block (3, or 2 in the first 4 entries); `y[2] = 0` for 2.
#[inline]
fn mul_bs(b: &[f64; 9], x: &[f64]) -> [f64; 3] {
    if x.len() == 2 {
        [b[0] * x[0] + b[1] * x[1], b[2] * x[0] + b[3] * x[1], 0.0]
    } else {
        mul3(b, x)
    }
}

/// What every NSGS contact update reads, in the ordered and the coloured sweep alike: the
/// settings, the cone set, the friction coefficients and, per contact, its diagonal block
/// `W_cc`, its local step `rho_c` and its joint inverse.
struct ContactUpdate<'a> {
    s: &'a NsgsSettings,
    k: &'a ConstraintSet,
    mu: &'a [f64],
    blocks: &'a [[f64; 9]],
    rho: &'a [f64],
    joint_inv: &'a [Option<[f64; 9]>],
}

impl ContactUpdate<'_> {
    /// The new reaction `rc` of contact `c` (in place; `bs = rc.len()`, 3 or 2) from its
    /// velocity `u` (first `bs` entries) at the latest reactions, `lin_c = u - W_cc rc`: a
    /// joint's exact solve of `W_cc r_c = -lin_c`; on a 2-D contact the exact local solution
    /// ([`local_solve2_exact`]) or, when no case is consistent, the local De Saxce iteration
    /// ([`local_solve`]), which 3-D contacts always take; then the relaxation `omega`
    /// (projected back onto the block's set) when it is not 1. Returns the local iterations
    /// (1 for an exact solve) and the old reaction (first `bs` entries).
    #[inline]
    fn apply(&self, c: usize, u: &[f64; 3], rc: &mut [f64]) -> (u64, [f64; 3]) {
        let (s, b, mu, rho) = (self.s, &self.blocks[c], self.mu[c], self.rho[c]);
        let bs = rc.len();
        let old = [rc[0], rc[1], if bs == 3 { rc[2] } else { 0.0 }];
        let br = mul_bs(b, rc);
        let it = if let Some(Some(inv)) = self.joint_inv.get(c) {
            // a joint: the exact solve of W_cc r_c = -lin_c (u_c = 0)
            free_block_step(inv, &u[..bs], 1.0, rc);
            1
        } else if bs == 2 {
            let lin_c = [u[0] - br[0], u[1] - br[1], 0.0];
            if local_solve2_exact(b, &lin_c, mu, rc) {
                1
            } else {
                local_solve::<2>(b, &lin_c, mu, rho, s.local_max_iter, s.local_tol, rc)
            }
        } else {
            let lin_c = [u[0] - br[0], u[1] - br[1], u[2] - br[2]];
            local_solve::<3>(b, &lin_c, mu, rho, s.local_max_iter, s.local_tol, rc)
        };
        if s.omega != 1.0 {
            // a convex (omega < 1) or extrapolated combination; project back onto K
            for i in 0..bs {
                rc[i] = s.omega * rc[i] + (1.0 - s.omega) * old[i];
            }
            self.k.project_block(c, rc);
        }
        (u64::from(it), old)
    }
}

/// Solve the one-contact Coulomb problem `u = B gamma_c + lin_c` by the local De Saxce
/// projection iteration from `gamma_c` (the contact's reaction, in place); returns the
/// iterations used. `D` is the contact's dimension: 3, or 2 with `B` in the first 4 entries of
/// `b` and `gamma_c` of length 2. The iteration is
/// `gamma_c <- P_K(gamma_c - rho (u + mu ||u_T|| e_n))` (De Saxce & Feng 1991), `K` the
/// Coulomb cone of `mu`, until the relative change is at most `tol` or `max_iter` iterations.
#[inline]
pub fn local_solve<const D: usize>(
    b: &[f64; 9],
    lin_c: &[f64; 3],
    mu: f64,
    rho: f64,
    max_iter: u32,
    tol: f64,
    gamma_c: &mut [f64],
) -> u32 {
    let g = gamma_c;
    for it in 1..=max_iter {
        let bu = mul_bs(b, &g[..D]);
        let mut u = [0.0; D];
        for i in 0..D {
            u[i] = bu[i] + lin_c[i];
        }
        let s = if D == 2 {
            mu * u[1].abs()
        } else {
            mu * u[1].hypot(u[2])
        };
        let mut v = [0.0; D];
        v[0] = g[0] - rho * (u[0] + s);
        for i in 1..D {
            v[i] = g[i] - rho * u[i];
        }
        project_coulomb_cone(&mut v, mu);
        if take_local_step(g, &v, tol) {
            return it;
        }
    }
    max_iter
}

impl Solver for Nsgs {
    crate::solver::coulomb_solver!("nsgs");

    fn takes_joints(&self) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        self.joint_inv = joint_inverses(inst);
        let bs = problem.constraints().block_size();
        let scale = match self.settings.local_rho {
            LocalRho::MaxEigen => lambda_max,
            LocalRho::Trace => trace_mean,
        };
        (self.blocks, self.rho) = local_blocks(inst, bs, scale);
        let nc = self.blocks.len();
        self.order = (0..nc).collect();
        let s = &self.settings;
        self.coloured = (!s.shuffle && s.sweep.is_coloured(nc))
            .then(|| ColouredSweep::new(inst, bs, problem.memory_limit()));
        self.rng = SplitMix64::new(self.settings.seed);
        self.local_iters = 0;
        self.aa = Anderson::new(problem.n(), s.anderson_depth, s.anderson_safeguard);
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let mu = coulomb_mu(self, inst)?;
        let s = &self.settings;
        if s.shuffle {
            // Fisher-Yates, allocation free
            for i in (1..self.order.len()).rev() {
                let j = self.rng.index_to(i);
                self.order.swap(i, j);
            }
        }
        if self.aa.is_on() {
            self.aa.begin(&state.gamma);
        }
        let reaction = &mut state.gamma;
        if self.coloured.is_none() && !s.shuffle {
            // the sweep visits the contacts in block order (`order` is `0..nb` unshuffled)
            inst.begin_ordered_sweep(reaction, &mut self.rows);
        } else {
            inst.refresh_row_state(reaction, &mut self.rows);
        }
        let rows = RowSource::new(inst);
        let k = problem.constraints();
        if self.coloured.is_some() {
            self.sweep_coloured(&rows, k, mu, reaction);
        } else {
            if k.block_size() == 2 {
                self.sweep::<2>(&rows, k, mu, reaction);
            } else {
                self.sweep::<3>(&rows, k, mu, reaction);
            }
            if !self.settings.shuffle {
                crate::kernels::debug_assert_ordered(inst, &self.rows, self.order.len());
            }
        }
        problem.add_matvecs(1);
        if self.aa.is_on() {
            self.aa.step(k, &mut state.gamma);
        }
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut c = vec![
            ("local_iterations", self.local_iters as f64),
            ("anderson_restarts", self.aa.restarts as f64),
            ("anderson_rejections", self.aa.rejections as f64),
        ];
        if let Some(col) = &self.coloured {
            c.extend(col.counters());
        }
        c
    }

    fn message(&self) -> Option<String> {
        self.coloured
            .as_ref()
            .and_then(|col| col.note())
            .map(str::to_string)
    }
}

impl Nsgs {
    /// One sweep over the contacts in order, `D` unknowns each (3, or 2 for 2-D contacts),
    /// each contact's reaction updated by [`ContactUpdate::apply`] with the latest reactions of
    /// the others.
    fn sweep<const D: usize>(
        &mut self,
        rows: &RowSource<'_>,
        k: &ConstraintSet,
        mu: &[f64],
        reaction: &mut [f64],
    ) {
        let update = ContactUpdate {
            s: &self.settings,
            k,
            mu,
            blocks: &self.blocks,
            rho: &self.rho,
            joint_inv: &self.joint_inv,
        };
        for &c in &self.order {
            if self.rho[c] != 0.0 {
                let o = D * c;
                let mut u = [0.0; 3];
                rows.gather(&self.rows, reaction, c, &mut u[..D]);
                let rc = &mut reaction[o..o + D];
                let (it, old) = update.apply(c, &u, rc);
                self.local_iters += it;
                let mut delta = [0.0; D];
                for i in 0..D {
                    delta[i] = rc[i] - old[i];
                }
                rows.changed(c, &delta, &mut self.rows);
            }
            rows.done(c, reaction, &mut self.rows);
        }
    }

    /// One sweep by colours ([`crate::coloured`]) over 3-D or 2-D contacts: each contact's
    /// update is the one of [`Nsgs::sweep`] ([`ContactUpdate::apply`]), from the values of the
    /// colours before its own.
    fn sweep_coloured(
        &mut self,
        rows: &RowSource<'_>,
        k: &ConstraintSet,
        mu: &[f64],
        reaction: &mut [f64],
    ) {
        let (blocks, rho) = (&self.blocks, &self.rho);
        let update = ContactUpdate {
            s: &self.settings,
            k,
            mu,
            blocks,
            rho,
            joint_inv: &self.joint_inv,
        };
        let Some(col) = self.coloured.as_mut() else {
            return;
        };
        let bs = reaction.len() / blocks.len().max(1);
        self.local_iters += col.sweep(reaction, rows, &mut self.rows, |row, rc| {
            let c = row.block();
            let o = bs * c;
            rc.copy_from_slice(&row.gamma()[o..o + bs]);
            if rho[c] == 0.0 {
                return 0;
            }
            let mut u = [0.0; 3];
            row.gather(&mut u[..bs]);
            update.apply(c, &u, rc).0
        });
    }
}
