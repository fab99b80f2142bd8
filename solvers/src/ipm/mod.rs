//! Primal-dual interior point with Mehrotra's predictor-corrector for LCP, box QP and CCP with
//! Coulomb cones.
//!
//! # Formulation
//! `min 1/2 x^T N x + r^T x` subject to `s = G x + h` in `C`, where `C` is a product of
//! nonnegative half-lines and 3-dimensional second-order cones `Q`:
//! - a finite lower bound gives the row `s = x_j - lo_j >= 0`, a finite upper bound
//!   `s = hi_j - x_j >= 0` (LCP: `lo = 0`, `hi = inf`);
//! - a Coulomb cone `K_mu` becomes `Q` by scaling the normal: `s = (mu x_n, x_t1, x_t2)` in `Q`
//!   (Kleinert, Simeon & Obermayr 2014, CMAME 278; Melanz et al. 2017, CMAME 320). With
//!   `mu = 0` the cone is `{x_n >= 0, x_t = 0}`: one bound row, tangents fixed;
//! - variables with `lo = hi` are fixed.
//!
//! With dual `z` in `C` (self-dual), the KKT conditions are `N x + r - G^T z = 0`,
//! `s o z = 0` (Jordan product). The primal `x` stays strictly feasible (`s` is computed from
//! `x`, never a separate unknown), the dual residual `r_d = N x + r - G^T z` is driven to zero
//! by Newton's method.
//!
//! # Iteration (Wright 1997, ch. 10-11; Vandenberghe 2010, sec. 5 for the cone case)
//! 1. Nesterov-Todd scaling `W` with `W z = W^-1 s = lambda` (diagonal `sqrt(s/z)` on the
//!    half-lines, [`cone::SocScaling`] on each `Q` block); `mu = s^T z / nu`, `nu` = number of
//!    half-lines + number of cones.
//! 2. Reduced normal equations `(N + G^T W^-2 G) dx = -r_d + G^T W^-1 (lambda \ r_c)`, then
//!    `ds = G dx`, `dz = W^-1 (lambda \ r_c) - W^-2 ds`. `G^T W^-2 G` is diagonal on bounds and
//!    a 3x3 block per contact, inside the sparsity of `N`: one symbolic sparse Cholesky (faer,
//!    AMD) for the whole solve, one numeric factorisation per iteration, two solves
//!    (predictor, corrector), each followed by iterative refinement against the unregularised
//!    `K` while its residual exceeds `refine_tol` (at most `refine` steps).
//! 3. Predictor `r_c = -lambda o lambda`; step `alpha_aff` to the boundary;
//!    `sigma = (mu_aff / mu)^3`; corrector `r_c = -lambda o lambda - (W^-1 ds_aff) o (W dz_aff)
//!    + sigma mu e`.
//! 4. Common primal-dual step `alpha = min(1, 0.99 alpha_max)` (fraction to the boundary).
//!
//! # Linear solvers (`linear_solver`)
//! - `cholesky` (default): step 2 above; memory the factor `L` (`factor_nnz` entries).
//! - `pcg` (module `pcg`): `K dx = rhs` by preconditioned conjugate gradients; `K` is never
//!   assembled, each CG iteration is one counted `N`-product ([`Problem::matvec`]). CG stops
//!   at `||rhs - K dx||_2 <= max(min(cg_rtol ||rhs||_2, 0.01 ||r_d||_2), 1e-14 ||rhs||_2)` or
//!   after `cg_max_iter` iterations, warm started from the last direction. Preconditioner
//!   (`pcg_preconditioner`, [`PcgPreconditioner`]): `block-jacobi`, the inverse 3x3 diagonal
//!   blocks of `K` (1x1 without cones), memory `O(n)`; `block-sgs`, symmetric block
//!   Gauss-Seidel on `K` (its off-diagonal blocks are `N`'s, read in place); `block-ic0`, block
//!   incomplete Cholesky IC(0) of `K` on the 3x3-block pattern of `N` with Manteuffel shifts
//!   on breakdown, refactorised per iteration, memory about one more copy of `N`'s blocks
//!   (f64 for the factorisation, two f32 copies for the sweeps). The last two need `N` on 3x3
//!   blocks (the block storage, or CSC converted at `init`) and use block Jacobi on the
//!   matrix-free storage, a non-symmetric `N` or without cones (said in `message`).
//!
//! # Limits of the solve
//! - Time (`ExecSettings::max_time_s`, [`Problem::time_left`]): before each numeric
//!   factorisation the solver predicts its duration plus that of the two solves (flops of the
//!   symbolic factorisation over the flop rate measured on the last factorisation, or
//!   `assumed_flop_rate` before the first) and stops with `max_time` when it would end after
//!   the limit; likewise before the corrector's solve, and inside CG before an iteration that
//!   would pass it. A run thus ends at most one CG iteration or one mispredicted
//!   factorisation after its limit (with `pcg_preconditioner = "block-ic0"` also at most one
//!   IC(0) factorisation, which is not predicted: 0.1 s at 121,680 contacts). The message says what was predicted.
//! - Memory (`ExecSettings::max_memory_bytes`, [`Problem::memory_limit`]): `init` estimates
//!   the bytes of assembling `K` and its ordering, then, from the symbolic factorisation, of
//!   the factor, faer's scratch, the assembled matrix and the iterates; over the budget it
//!   returns [`SolverError::Refused`] (status `unsupported`, the predicted bytes and the
//!   limit in the message) before allocating the factor. The factor is allocated by the first
//!   numeric factorisation. `pcg` predicts its `O(n)` bytes the same way.
//!
//! A factorisation that fails is retried with a static regularisation `delta I` growing from
//! `reg_static` by 100x (at most 6 times); faer's dynamic regularisation replaces tiny pivots.
//!
//! # Stopping and claims
//! The executor stops on the harness residual (natural map by default); this solver only ends
//! the solve itself when the barrier parameter reaches rounding level (`mu < mu_min * mu_0`),
//! when the step collapses, or after `max_iter` own iterations, with the claim `Stalled` or
//! `MaxIterations` ([`StepOutcome::Finished`]).
//!
//! Warm start: interior points do not warm start well; the start point is always the interior
//! point below and a given `gamma_0` is ignored (the `message` column says so).
//!
//! Start point: `x` at distance `theta_x = ||r||_inf / mean(diag N)` inside every bound
//! (`x_n = theta_x`, `x_t = 0` in a cone), `z = theta_z e` with `theta_z = ||r||_inf`.
//!
//! Cost counted: one `N`-product per iteration (the dual residual; refinement multiplies by
//! the assembled `K`, not counted as an `N`-product), plus one per CG iteration with `pcg`;
//! factorisations and triangular solves are in the counters (`factorizations`,
//! `solves`, and the time spent in them, `factor_time_s`, `solve_time_s`, which includes the
//! refinement products). Per-iteration trace columns: `ipm_mu`, `ipm_sigma`, `ipm_alpha`,
//! `ipm_alpha_aff`, `ipm_dual_res` (`||r_d||_inf`), `ipm_gap` (`s^T z`), `ipm_reg`, and with
//! `pcg` `ipm_cg_iters` (CG iterations of the iteration). Further counters: `predicted_bytes`
//! (memory prediction of `init`), `factor_flops` and `flop_rate` (measured, flop/s) with
//! `cholesky`; `cg_iterations`, `cg_capped` (solves that hit `cg_max_iter`) and
//! `cg_max_rel_res` (largest final relative CG residual) with `pcg`; with `block-sgs` or
//! `block-ic0` also `pc_setup_time_s` (time forming the preconditioner), `pc_ic_shift_max`
//! (largest Manteuffel shift the IC(0) needed, 0 when none) and `pc_ic_fallbacks`
//! (iterations where every shift broke down and block Jacobi was used).

// Index loops over several parallel arrays (s, z, lambda, W) read clearer than zips.
#![allow(clippy::needless_range_loop)]

pub mod cone;
mod constraints;
pub mod kkt;
mod pcg;
mod settings;
mod start;

pub use settings::{IpmSettings, LinearSolver, PcgPreconditioner};

use crate::observer::IterInfo;
use crate::problem::Problem;
use crate::settings::SolverSettings;
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::{SolverError, Status};
use cone::{jdiv, jprod, jsquare, nonneg_max_step, soc_max_step, SocScaling};
use constraints::ConicForm;
use cpbench_problems::ProblemClass;
use kkt::Kkt;
use pcg::{diag_blocks, Pcg};
use std::time::{Duration, Instant};

/// Default of [`IpmSettings::assumed_flop_rate`] (flop/s), the rate assumed for the first
/// numeric factorisation before one was timed: conservative for faer's supernodal Cholesky
/// (1.4e10 to 2e10 flop/s measured on two cores for granular CCPs of n = 9k to 43k).
pub const DEFAULT_FLOP_RATE: f64 = 1e9;

/// PCG stops at the latest when its residual is below this fraction of the dual residual
/// `||r_d||_2`: the step `alpha` leaves the dual residual `(1 - alpha) r_d + alpha (K dx -
/// rhs)`, so an inexact direction must not dominate it (inexact interior points, e.g.
/// Gondzio 2013).
const CG_DUAL_FRACTION: f64 = 0.01;

/// Relative distance inside a cone's boundary below which an iterate is moved back (rounding
/// level, see [`Ipm`]'s `scale`).
const INTERIOR_MARGIN: f64 = 1e-13;

/// The primal-dual interior point. Supports LCP, box QP and CCP.
pub struct Ipm {
    settings: IpmSettings,
    form: ConicForm,
    kkt: Option<Kkt>,
    pcg: Option<Pcg>,
    fixed: Vec<bool>,
    // Iterates and scratch (allocated in `init`).
    x: Vec<f64>,
    z: Vec<f64>,
    s: Vec<f64>,
    rd: Vec<f64>,
    lam: Vec<f64>,
    wdiag: Vec<f64>,
    wsoc: Vec<SocScaling>,
    dx: Vec<f64>,
    ds: Vec<f64>,
    dz: Vec<f64>,
    ds_aff: Vec<f64>,
    dz_aff: Vec<f64>,
    rc: Vec<f64>,
    t: Vec<f64>,
    rhs: Vec<f64>,
    res: Vec<f64>,
    kx: Vec<f64>,
    mu0: f64,
    last_reg: f64,
    warm_ignored: bool,
    stalls: u32,
    // Counters.
    factorizations: u64,
    solves: u64,
    refactorizations: u64,
    nudges: u64,
    factor_time: Duration,
    solve_time: Duration,
    /// Measured flop rate of the numeric factorisation (`None` before the first one).
    flop_rate: Option<f64>,
    /// Duration of the last triangular solve pair.
    last_solve: Option<Duration>,
    cg_iterations: u64,
    cg_iters_step: u64,
    cg_max_rel_res: f64,
    cg_capped: u64,
    predicted_bytes: u64,
    /// Why `pcg_preconditioner` fell back to block Jacobi (`message`), if it did.
    pc_note: Option<String>,
    /// `cg_reg * mean diag N` (PCG's proximal shift).
    cg_shift: f64,
    info: IterInfo,
    end_reason: Option<String>,
}

/// Bytes as `1.23 GiB (1320702443 bytes)` (KiB, MiB, GiB or TiB, whichever keeps the number
/// at least 1; plain bytes below 1 KiB).
fn fmt_bytes(b: u64) -> String {
    let units = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    match units.iter().find(|(_, s)| b >= 1u64 << s) {
        Some((u, s)) => format!("{:.2} {u} ({b} bytes)", b as f64 / (1u64 << s) as f64),
        None => format!("{b} bytes"),
    }
}

impl Ipm {
    /// An interior point; errors on invalid settings.
    pub fn new(settings: IpmSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            form: ConicForm::default(),
            kkt: None,
            pcg: None,
            fixed: Vec::new(),
            x: Vec::new(),
            z: Vec::new(),
            s: Vec::new(),
            rd: Vec::new(),
            lam: Vec::new(),
            wdiag: Vec::new(),
            wsoc: Vec::new(),
            dx: Vec::new(),
            ds: Vec::new(),
            dz: Vec::new(),
            ds_aff: Vec::new(),
            dz_aff: Vec::new(),
            rc: Vec::new(),
            t: Vec::new(),
            rhs: Vec::new(),
            res: Vec::new(),
            kx: Vec::new(),
            mu0: 1.0,
            last_reg: 0.0,
            warm_ignored: false,
            stalls: 0,
            factorizations: 0,
            solves: 0,
            refactorizations: 0,
            nudges: 0,
            factor_time: Duration::ZERO,
            solve_time: Duration::ZERO,
            flop_rate: None,
            last_solve: None,
            cg_iterations: 0,
            cg_iters_step: 0,
            cg_max_rel_res: 0.0,
            cg_capped: 0,
            predicted_bytes: 0,
            pc_note: None,
            cg_shift: 0.0,
            info: IterInfo::new(),
            end_reason: None,
        })
    }

    /// NT scalings and `lambda` of the current `(s, z)`. Errors if a block left the interior.
    fn scale(&mut self) -> Result<(), SolverError> {
        let m = self.form.m_rows();
        for k in 0..m {
            let (s, z) = (self.s[k], self.z[k]);
            if !(s > 0.0 && z > 0.0) {
                return Err(SolverError::Numerical(format!(
                    "bound row {k} left the interior (s = {s:e}, z = {z:e})"
                )));
            }
            self.wdiag[k] = (s / z).sqrt();
            self.lam[k] = (s * z).sqrt();
        }
        for c in 0..self.form.cones.len() {
            let o = m + 3 * c;
            // Near the end a sliding contact's s (or z) lies within rounding of the cone's
            // boundary, where `s0 - ||s1||` cancels: keep both a relative INTERIOR_MARGIN
            // inside (moving x_n, or z0, by that relative amount only).
            let t = self.s[o + 1].hypot(self.s[o + 2]);
            if self.s[o] <= t * (1.0 + INTERIOR_MARGIN) && t > 0.0 {
                let cb = self.form.cones[c];
                self.x[cb.b] = t * (1.0 + INTERIOR_MARGIN) / cb.mu;
                self.s[o] = cb.mu * self.x[cb.b];
                self.nudges += 1;
            }
            let tz = self.z[o + 1].hypot(self.z[o + 2]);
            if self.z[o] <= tz * (1.0 + INTERIOR_MARGIN) && tz > 0.0 {
                self.z[o] = tz * (1.0 + INTERIOR_MARGIN);
                self.nudges += 1;
            }
            let s = [self.s[o], self.s[o + 1], self.s[o + 2]];
            let z = [self.z[o], self.z[o + 1], self.z[o + 2]];
            let w = SocScaling::new(&s, &z).ok_or_else(|| {
                SolverError::Numerical(format!("contact {c} left the cone interior"))
            })?;
            let l = w.apply(&z);
            self.lam[o..o + 3].copy_from_slice(&l);
            self.wsoc[c] = w;
        }
        Ok(())
    }

    /// Predicted seconds of one numeric factorisation: its flops over the measured rate, or
    /// over [`IpmSettings::assumed_flop_rate`] before the first one; with the `(rate,
    /// "measured" | "assumed")` used.
    fn predicted_factor_time(&self) -> (f64, f64, &'static str) {
        let flops = self.kkt.as_ref().map_or(0.0, Kkt::factor_flops);
        match self.flop_rate {
            Some(r) => (flops / r, r, "measured"),
            None => {
                let r = self.settings.assumed_flop_rate;
                (flops / r, r, "assumed")
            }
        }
    }

    /// Predicted seconds of one triangular solve pair: the last one measured, or before any,
    /// `16 nnz(L)` flops at the factorisation's rate (solves are memory bound).
    fn predicted_solve_time(&self) -> f64 {
        match self.last_solve {
            Some(d) => d.as_secs_f64(),
            None => {
                let nnz = self.kkt.as_ref().map_or(0, Kkt::predicted_factor_nnz) as f64;
                let rate = self.flop_rate.unwrap_or(self.settings.assumed_flop_rate);
                16.0 * nnz / rate
            }
        }
    }

    /// Whether `secs` more fit before the deadline of `problem` (always without one).
    fn fits(problem: &Problem, secs: f64) -> bool {
        problem
            .time_left()
            .is_none_or(|left| secs <= left.as_secs_f64())
    }

    /// Assemble `N + G^T W^-2 G` and factorise, growing the static regularisation on failure
    /// (Cholesky), or form the preconditioner (PCG). `Ok(false)`: stopped before a numeric
    /// factorisation predicted to end after the deadline (`end_reason` says so).
    fn factorize(&mut self, problem: &Problem) -> Result<bool, SolverError> {
        if let Some(pcg) = self.pcg.as_mut() {
            pcg.update(problem, &self.form, &self.wdiag, &self.wsoc, self.cg_shift);
            return Ok(true);
        }
        let kkt = self.kkt.as_mut().expect("init ran");
        kkt.reset();
        for (k, row) in self.form.rows.iter().enumerate() {
            let w = self.wdiag[k];
            kkt.add_diag(row.j, 1.0 / (w * w));
        }
        for (c, cb) in self.form.cones.iter().enumerate() {
            let mut m3 = self.wsoc[c].inv_squared();
            // S W^-2 S with S = diag(mu, 1, 1).
            for a in 0..3 {
                m3[a][0] *= cb.mu;
                m3[0][a] *= cb.mu;
            }
            kkt.add_block(c, &m3);
        }
        let mut reg = self.settings.reg_static;
        for attempt in 0..7 {
            // this factorisation and the predictor's and corrector's solves must fit
            let (t_fact, rate, how) = self.predicted_factor_time();
            let t_need = t_fact + 2.0 * self.predicted_solve_time();
            if !Self::fits(problem, t_need) {
                let left = problem.time_left().unwrap_or_default().as_secs_f64();
                let flops = self.kkt.as_ref().map_or(0.0, Kkt::factor_flops);
                self.end_reason = Some(format!(
                    "stopped before the numeric factorisation: predicted {t_need:.2} s \
                     (factorisation {flops:.3e} flop at {rate:.3e} flop/s {how}, and two \
                     solves) > {left:.2} s left of the time limit"
                ));
                return Ok(false);
            }
            let st = &self.settings;
            let kkt = self.kkt.as_mut().expect("init ran");
            if kkt.factor_nnz() < kkt.predicted_factor_nnz() {
                kkt.allocate_numeric();
            }
            self.factorizations += 1;
            let t0 = Instant::now();
            let out = kkt.factorize(reg, st.reg_dynamic_eps, st.reg_dynamic_delta);
            let dt = t0.elapsed();
            self.factor_time += dt;
            if dt.as_secs_f64() > 0.0 && kkt.factor_flops() > 0.0 {
                self.flop_rate = Some(kkt.factor_flops() / dt.as_secs_f64());
            }
            match out {
                Ok(()) => {
                    self.last_reg = reg;
                    return Ok(true);
                }
                Err(e) => {
                    self.refactorizations += 1;
                    if attempt == 6 {
                        return Err(SolverError::Numerical(format!(
                            "sparse Cholesky of N + G^T W^-2 G failed with regularisation {reg:e}: {e}"
                        )));
                    }
                    reg = if reg == 0.0 { 1e-12 } else { reg * 100.0 };
                }
            }
        }
        unreachable!("the loop returns")
    }

    /// Solve `K dx = rhs` into `self.dx` (`rhs` zero on fixed variables): triangular solves
    /// with iterative refinement (Cholesky; refinement skipped when its solve would pass the
    /// deadline), or PCG from the warm start in `self.dx`. `Ok(false)`: out of time.
    fn solve_reduced(&mut self, problem: &Problem, rhs: &[f64], warm: bool) -> bool {
        let n = self.x.len();
        let t0 = Instant::now();
        if let Some(pcg) = self.pcg.as_mut() {
            let st = &self.settings;
            let out = pcg.solve(
                problem,
                &self.form,
                rhs,
                &mut self.dx,
                st.cg_rtol,
                CG_DUAL_FRACTION * cpbench_problems::linalg::norm2(&self.rd),
                st.cg_max_iter,
                warm && st.cg_warm_start,
                problem.deadline(),
            );
            self.solves += 1;
            self.cg_iterations += out.iterations;
            self.cg_iters_step += out.iterations;
            self.cg_max_rel_res = self.cg_max_rel_res.max(out.rel_res);
            if out.iterations >= st.cg_max_iter {
                self.cg_capped += 1;
            }
            self.solve_time += t0.elapsed();
            if out.out_of_time {
                self.end_reason = Some(format!(
                    "stopped inside CG (iteration {}, relative residual {:.2e}): the next \
                     iteration would pass the time limit",
                    out.iterations, out.rel_res
                ));
                return false;
            }
            return true;
        }
        let kkt = self.kkt.as_mut().expect("init ran");
        self.dx.copy_from_slice(rhs);
        kkt.solve(&mut self.dx);
        self.solves += 1;
        let one = t0.elapsed();
        self.last_solve = Some(one);
        let rhs_norm = cpbench_problems::linalg::norm_inf(rhs);
        for _ in 0..self.settings.refine {
            if !Self::fits(problem, one.as_secs_f64()) {
                break;
            }
            // res = rhs - K dx, with K = N + G^T W^-2 G assembled (unregularised); refine only
            // when the factorisation (regularised or not) left a visible error.
            kkt.matvec(&self.dx, &mut self.kx);
            for i in 0..n {
                self.res[i] = rhs[i] - self.kx[i];
            }
            if cpbench_problems::linalg::norm_inf(&self.res) <= self.settings.refine_tol * rhs_norm
            {
                break;
            }
            kkt.solve(&mut self.res);
            self.solves += 1;
            for i in 0..n {
                self.dx[i] += self.res[i];
            }
        }
        self.solve_time += t0.elapsed();
        true
    }

    /// Newton direction for the complementarity right-hand side in `self.rc`:
    /// `v = lambda \ r_c`, `t = W^-1 v`, `K dx = -r_d + G^T t`, `ds = G dx`,
    /// `dz = t - W^-2 ds`. Writes `self.dx`, `self.ds`, `self.dz`; PCG starts from `self.dx`
    /// when `warm`. `false`: out of time (the direction is incomplete).
    fn direction(&mut self, problem: &Problem, warm: bool) -> bool {
        let m = self.form.m_rows();
        for k in 0..m {
            let v = self.rc[k] / self.lam[k];
            self.t[k] = v / self.wdiag[k];
        }
        for c in 0..self.form.cones.len() {
            let o = m + 3 * c;
            let l = [self.lam[o], self.lam[o + 1], self.lam[o + 2]];
            let r = [self.rc[o], self.rc[o + 1], self.rc[o + 2]];
            let v = jdiv(&l, &r);
            let t = self.wsoc[c].apply_inv(&v);
            self.t[o..o + 3].copy_from_slice(&t);
        }
        let n = self.x.len();
        for i in 0..n {
            self.rhs[i] = -self.rd[i];
        }
        let mut rhs = std::mem::take(&mut self.rhs);
        self.form.gt_add(&self.t, &mut rhs, 1.0);
        for (i, f) in self.fixed.iter().enumerate() {
            if *f {
                rhs[i] = 0.0;
            }
        }
        let ok = self.solve_reduced(problem, &rhs, warm);
        self.rhs = rhs;
        if !ok {
            return false;
        }
        let mut ds = std::mem::take(&mut self.ds);
        self.form.g_apply(&self.dx, &mut ds);
        for k in 0..m {
            let w = self.wdiag[k];
            self.dz[k] = self.t[k] - ds[k] / (w * w);
        }
        for c in 0..self.form.cones.len() {
            let o = m + 3 * c;
            let w = &self.wsoc[c];
            let dsc = [ds[o], ds[o + 1], ds[o + 2]];
            let q = w.apply_inv(&w.apply_inv(&dsc));
            for a in 0..3 {
                self.dz[o + a] = self.t[o + a] - q[a];
            }
        }
        self.ds = ds;
        true
    }

    /// Largest step keeping `s + a ds` and `z + a dz` in `C`.
    fn max_step(&self) -> f64 {
        let m = self.form.m_rows();
        let mut a = f64::INFINITY;
        for k in 0..m {
            a = a
                .min(nonneg_max_step(self.s[k], self.ds[k]))
                .min(nonneg_max_step(self.z[k], self.dz[k]));
        }
        for c in 0..self.form.cones.len() {
            let o = m + 3 * c;
            let s = [self.s[o], self.s[o + 1], self.s[o + 2]];
            let ds = [self.ds[o], self.ds[o + 1], self.ds[o + 2]];
            let z = [self.z[o], self.z[o + 1], self.z[o + 2]];
            let dz = [self.dz[o], self.dz[o + 1], self.dz[o + 2]];
            a = a.min(soc_max_step(&s, &ds)).min(soc_max_step(&z, &dz));
        }
        a
    }

    /// The complementarity right-hand side without the second-order term:
    /// `rc = -lambda o lambda` (Jordan square per block; `m` scalar rows first), plus
    /// `shift e` (`e`: 1 on each scalar row, `(1, 0, 0)` on each cone) when given (the
    /// centering term `sigma mu` of the corrector).
    fn centering_rhs(&mut self, m: usize, shift: Option<f64>) {
        for k in 0..m {
            let l = self.lam[k];
            let v = -l * l;
            self.rc[k] = shift.map_or(v, |t| v + t);
        }
        for c in 0..self.form.cones.len() {
            let o = m + 3 * c;
            let l = [self.lam[o], self.lam[o + 1], self.lam[o + 2]];
            let sq = jsquare(&l);
            for i in 0..3 {
                self.rc[o + i] = -sq[i];
            }
            if let Some(t) = shift {
                self.rc[o] += t;
            }
        }
    }
}

impl Solver for Ipm {
    fn name(&self) -> &'static str {
        "ipm"
    }

    /// Joint (bilateral) blocks: a joint block's unknowns are free variables of the conic form (`ConicPiece::Interval` without bounds: no rows).
    fn takes_joints(&self) -> bool {
        true
    }

    /// The convex QP classes (the class table's [`ProblemClass::is_qp`]): the conic form is
    /// built from the set's conic pieces, whatever its family.
    fn supports(&self, class: ProblemClass) -> bool {
        class.is_qp()
    }

    /// 3-D cones only: the Nesterov-Todd scaling and the cone algebra work on 3-vectors
    /// (2-D instances go through the embedding).
    fn handles_cone_dim(&self, dim: usize) -> bool {
        dim == 3
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        let n = inst.n();
        let set = inst.constraints();
        let layout = self.form.build(set, n);
        let m = self.form.dim();
        // the iterates and scratch vectors below
        let work = 8 * (14 * n + 10 * m) as u64 + 72 * self.form.cones.len() as u64;
        let limit = problem.memory_limit();
        let over = |bytes: u64| limit.is_some_and(|l| bytes > l);
        let limit_s = || fmt_bytes(limit.unwrap_or(0));
        self.pc_note = None;
        let diag = match self.settings.linear_solver {
            LinearSolver::Cholesky => {
                let nmat = inst.n_mat();
                let est = kkt::assembly_bytes(nmat, layout.blocks.len()) + work;
                if over(est) {
                    return Err(SolverError::Refused(format!(
                        "ipm (linear_solver = cholesky): assembling N + G^T W^-2 G and its \
                         ordering needs about {} (before the factor) > memory limit {}; \
                         linear_solver = pcg needs O(n) memory",
                        fmt_bytes(est),
                        limit_s()
                    )));
                }
                let kkt = Kkt::new(nmat, &layout.blocks, layout.fixed.clone())
                    .map_err(SolverError::Numerical)?;
                let (factor, rest) = kkt.predicted_bytes();
                let total = factor + rest + work;
                self.predicted_bytes = total;
                if over(total) {
                    return Err(SolverError::Refused(format!(
                        "ipm (linear_solver = cholesky): predicted memory {} (Cholesky factor \
                         {} entries and scratch: {}; assembled matrix, symbolic factor and \
                         iterates: {}) > memory limit {}; linear_solver = pcg needs O(n) memory",
                        fmt_bytes(total),
                        kkt.predicted_factor_nnz(),
                        fmt_bytes(factor),
                        fmt_bytes(rest + work),
                        limit_s()
                    )));
                }
                // the factor itself is allocated by the first numeric factorisation (after
                // the time check: a solve stopped by the time limit never allocates it)
                self.kkt = Some(kkt);
                self.pcg = None;
                nmat.diag()
            }
            LinearSolver::Pcg => {
                let blocks = diag_blocks(problem);
                let diag = blocks.diagonal();
                let ncones = self.form.cones.len();
                let mut want = self.settings.pcg_preconditioner;
                let predict = |pc| Pcg::predict_bytes(problem, &blocks, n, ncones, pc) + work;
                let mut total = predict(want);
                if over(total) && want != PcgPreconditioner::BlockJacobi {
                    // the block preconditioners' storage does not fit: block Jacobi (O(n))
                    self.pc_note = Some(format!(
                        "pcg_preconditioner = {}: predicted memory {} > memory limit {}; \
                         block-jacobi used",
                        want.name(),
                        fmt_bytes(total),
                        limit_s()
                    ));
                    want = PcgPreconditioner::BlockJacobi;
                    total = predict(want);
                }
                self.predicted_bytes = total;
                if over(total) {
                    return Err(SolverError::Refused(format!(
                        "ipm (linear_solver = pcg): predicted memory {} > memory limit {}",
                        fmt_bytes(total),
                        limit_s()
                    )));
                }
                let (pcg, note) = Pcg::new(blocks, layout.fixed.clone(), &self.form, want, problem);
                if note.is_some() {
                    self.pc_note = note;
                }
                debug_assert!(
                    pcg.bytes() + work <= total,
                    "pcg holds {} bytes, predicted {total}",
                    pcg.bytes() + work
                );
                self.kkt = None;
                self.pcg = Some(pcg);
                diag
            }
        };
        self.fixed = layout.fixed;
        let mean_diag = diag.iter().map(|d| d.abs()).sum::<f64>() / n.max(1) as f64;
        self.cg_shift = self.settings.cg_reg * mean_diag;
        let (theta_x, theta_z) = start::thetas(&diag, inst.r());
        self.warm_ignored = state.gamma.iter().any(|&v| v != 0.0);
        self.x = start::start_x(set, n, theta_x);
        self.z = start::start_z(&self.form, theta_z);
        self.s = vec![0.0; m];
        self.form.slack(&self.x, &mut self.s);
        self.rd = vec![0.0; n];
        self.lam = vec![0.0; m];
        self.wdiag = vec![0.0; self.form.rows.len()];
        self.wsoc = vec![
            SocScaling::new(&[1.0, 0.0, 0.0], &[1.0, 0.0, 0.0]).expect("e");
            self.form.cones.len()
        ];
        self.dx = vec![0.0; n];
        self.ds = vec![0.0; m];
        self.dz = vec![0.0; m];
        self.ds_aff = vec![0.0; m];
        self.dz_aff = vec![0.0; m];
        self.rc = vec![0.0; m];
        self.t = vec![0.0; m];
        self.rhs = vec![0.0; n];
        self.res = vec![0.0; n];
        self.kx = vec![0.0; n];
        self.mu0 = cpbench_problems::linalg::dot(&self.s, &self.z) / self.form.nu();
        self.stalls = 0;
        self.factorizations = 0;
        self.solves = 0;
        self.refactorizations = 0;
        self.nudges = 0;
        self.factor_time = Duration::ZERO;
        self.solve_time = Duration::ZERO;
        self.flop_rate = None;
        self.last_solve = None;
        self.cg_iterations = 0;
        self.cg_max_rel_res = 0.0;
        self.cg_capped = 0;
        self.end_reason = None;
        state.gamma.copy_from_slice(&self.x);
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let n = self.x.len();
        let m = self.form.m_rows();
        let r = problem.instance().r();
        // Dual residual r_d = N x + r - G^T z (zero on fixed variables).
        let mut rd = std::mem::take(&mut self.rd);
        problem.matvec(&self.x, &mut rd);
        for (v, ri) in rd.iter_mut().zip(r) {
            *v += ri;
        }
        self.form.gt_add(&self.z, &mut rd, -1.0);
        for (v, &f) in rd.iter_mut().zip(&self.fixed) {
            if f {
                *v = 0.0;
            }
        }
        self.rd = rd;
        let gap = cpbench_problems::linalg::dot(&self.s, &self.z);
        let mu = gap / self.form.nu();
        if mu < self.settings.mu_min * self.mu0 {
            self.end_reason = Some(format!(
                "barrier parameter {mu:.3e} below mu_min * mu_0 = {:.3e}",
                self.settings.mu_min * self.mu0
            ));
            return Ok(StepOutcome::Finished(Status::Stalled));
        }
        if state.iteration >= self.settings.max_iter {
            self.end_reason = Some(format!("own iteration cap {}", self.settings.max_iter));
            return Ok(StepOutcome::Finished(Status::MaxIterations));
        }
        if let Err(e) = self.scale() {
            self.end_reason = Some(format!("{e} (rounding level)"));
            return Ok(StepOutcome::Finished(Status::Stalled));
        }
        if !self.factorize(problem)? {
            return Ok(StepOutcome::Finished(Status::MaxTime));
        }

        // Predictor: r_c = -lambda o lambda (PCG warm starts from the last corrector).
        self.cg_iters_step = 0;
        self.centering_rhs(m, None);
        if !self.direction(problem, true) {
            return Ok(StepOutcome::Finished(Status::MaxTime));
        }
        let alpha_aff = self.max_step().min(1.0);
        let mut mu_aff = 0.0;
        for k in 0..self.s.len() {
            mu_aff += (self.s[k] + alpha_aff * self.ds[k]) * (self.z[k] + alpha_aff * self.dz[k]);
        }
        mu_aff = mu_aff.max(0.0) / self.form.nu();
        let sigma = (mu_aff / mu).clamp(0.0, 1.0).powi(3);

        if self.settings.corrector {
            self.ds_aff.copy_from_slice(&self.ds);
            self.dz_aff.copy_from_slice(&self.dz);
            // Corrector: r_c = -lambda o lambda - (W^-1 ds_aff) o (W dz_aff) + sigma mu e.
            for k in 0..m {
                let w = self.wdiag[k];
                let l = self.lam[k];
                self.rc[k] = -l * l - (self.ds_aff[k] / w) * (self.dz_aff[k] * w) + sigma * mu;
            }
            for c in 0..self.form.cones.len() {
                let o = m + 3 * c;
                let w = &self.wsoc[c];
                let l = [self.lam[o], self.lam[o + 1], self.lam[o + 2]];
                let a = w.apply_inv(&[self.ds_aff[o], self.ds_aff[o + 1], self.ds_aff[o + 2]]);
                let b = w.apply(&[self.dz_aff[o], self.dz_aff[o + 1], self.dz_aff[o + 2]]);
                let ab = jprod(&a, &b);
                let sq = jsquare(&l);
                for i in 0..3 {
                    self.rc[o + i] = -sq[i] - ab[i];
                }
                self.rc[o] += sigma * mu;
            }
        } else {
            self.centering_rhs(m, Some(sigma * mu));
        }
        if self.pcg.is_none() && !Self::fits(problem, self.predicted_solve_time()) {
            self.end_reason = Some(format!(
                "stopped between predictor and corrector: the corrector's solve (predicted \
                 {:.2} s) would pass the time limit",
                self.predicted_solve_time()
            ));
            return Ok(StepOutcome::Finished(Status::MaxTime));
        }
        // Corrector (PCG warm starts from the predictor's direction).
        if !self.direction(problem, true) {
            return Ok(StepOutcome::Finished(Status::MaxTime));
        }
        let alpha = (self.settings.step_fraction * self.max_step()).min(1.0);
        for i in 0..n {
            self.x[i] += alpha * self.dx[i];
        }
        for k in 0..self.z.len() {
            self.z[k] += alpha * self.dz[k];
        }
        self.form.slack(&self.x, &mut self.s);
        state.gamma.copy_from_slice(&self.x);

        let mut info = IterInfo::new();
        info.push("ipm_mu", mu);
        info.push("ipm_sigma", sigma);
        info.push("ipm_alpha_aff", alpha_aff);
        info.push("ipm_alpha", alpha);
        info.push("ipm_dual_res", cpbench_problems::linalg::norm_inf(&self.rd));
        info.push("ipm_gap", gap);
        info.push("ipm_reg", self.last_reg);
        if self.pcg.is_some() {
            info.push("ipm_cg_iters", self.cg_iters_step as f64);
        }
        self.info = info;

        if alpha < 1e-10 {
            self.stalls += 1;
            if self.stalls >= 3 {
                self.end_reason = Some(format!("step length {alpha:.2e} three times"));
                return Ok(StepOutcome::Finished(Status::Stalled));
            }
        } else {
            self.stalls = 0;
        }
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut c = vec![
            ("factorizations", self.factorizations as f64),
            ("solves", self.solves as f64),
            ("refactorizations", self.refactorizations as f64),
            ("last_reg", self.last_reg),
            ("boundary_nudges", self.nudges as f64),
            (
                "factor_nnz",
                self.kkt.as_ref().map_or(0.0, |k| k.factor_nnz() as f64),
            ),
            ("factor_time_s", self.factor_time.as_secs_f64()),
            ("solve_time_s", self.solve_time.as_secs_f64()),
            ("predicted_bytes", self.predicted_bytes as f64),
        ];
        if let Some(k) = &self.kkt {
            c.push(("factor_flops", k.factor_flops()));
            c.push(("flop_rate", self.flop_rate.unwrap_or(0.0)));
        }
        if let Some(p) = &self.pcg {
            c.push(("cg_iterations", self.cg_iterations as f64));
            c.push(("cg_capped", self.cg_capped as f64));
            c.push(("cg_max_rel_res", self.cg_max_rel_res));
            if p.is_block() {
                c.push(("pc_setup_time_s", p.setup_time.as_secs_f64()));
                c.push(("pc_ic_shift_max", p.ic_shift_max));
                c.push(("pc_ic_fallbacks", p.ic_fallbacks as f64));
            }
        }
        c
    }

    fn message(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(e) = &self.end_reason {
            parts.push(e.clone());
        }
        if let Some(e) = &self.pc_note {
            parts.push(e.clone());
        }
        if self.warm_ignored {
            parts.push("warm start ignored (interior start)".to_string());
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    fn iter_info(&self) -> IterInfo {
        self.info
    }
}
