//! ADMM, the alternating direction method of multipliers, for the QP classes (LCP, box QP, CCP)
//! and for the true Coulomb problem through De Saxce's shift; one implementation whose presets
//! reproduce Siconos' `SICONOS_FRICTION_3D_ADMM` (`admm:siconos`), Chrono's `ChSolverADMM`
//! (`admm:chrono`) and Pinocchio's `ADMMContactSolver` (`admm:pinocchio`).
//!
//! Sources: Boyd, Parikh, Chu, Peleato & Eckstein 2011, "Distributed optimization and
//! statistical learning via the alternating direction method of multipliers", Found. Trends
//! Mach. Learn. 3(1) (the method, sec. 3; residual balancing, sec. 3.4.1, eq. (3.13));
//! Goldstein, O'Donoghue, Setzer & Baraniuk 2014, "Fast alternating direction optimization
//! methods", SIAM J. Imaging Sci. 7(3), Algorithm 8 (acceleration with restart); Wohlberg 2017,
//! "ADMM penalty parameter selection by residual balancing", arXiv:1704.06209 (scaled
//! residuals); Tasora, Mangoni, Benatti & Garziera 2021, "Solving variational inequalities and
//! cone complementarity problems in nonsmooth dynamics using the alternating direction method of
//! multipliers", IJNME 122 (Chrono); Carpentier, Le Lidec & Montaut 2024, "From compliant to
//! rigid contact simulation: a unified and efficient approach", RSS (the spectral rule and the
//! proximal term, Pinocchio); Acary, Bremond & Huber 2018 for the Coulomb problem and Siconos'
//! `fc3d_admm.c`.
//!
//! # The iteration
//!
//! cpbench's letters: the Delassus matrix `N` (fclib's `W`), the linear term `r` (fclib's `q`),
//! the reaction `gamma` (fclib's `r`). The problem is: find `gamma in K` and
//! `u = N gamma + r + s(u)` with `gamma = P_K(gamma - u)` (for a cone: `u in K*`, `gamma . u =
//! 0`), where `s = 0` for the QP classes and, for the Coulomb class, De Saxce's shift
//! `s_c = (mu_c ||u_T,c||, 0, 0)` (`|u_t,c|` on a 2-D contact). Splitting `gamma = x = z` with
//! `z in K`, and with the multiplier `u` of that constraint (unscaled; at a solution it is the
//! modified velocity), one iteration from `(x, z^, u^)` with step `rho > 0` and proximal weight
//! `eps >= 0` is
//!
//! ```text
//! s    = s(v)                   v = N z_k + r (shift `velocity`), u_k (`dual`) or
//!                               N x_k + r (`unprojected`)
//! x'   = (N + (rho + eps) I)^-1 (-r - s + rho z^ + eps x + u^)
//! z'   = P_K(x' - u^ / rho)
//! u'   = u^ - rho (x' - z')
//! p    = ||x' - z'||,   d = rho ||z' - z^||          (primal and dual residuals)
//! ```
//!
//! A fixed point has `x = z in K`, `u = N z + r + s` and `z = P_K(z - u / rho)`: it solves the
//! problem for any `rho`; `eps` (Pinocchio's `mu_prox`, Chrono's `sigma`) only damps the
//! `x`-update and vanishes there too. Without acceleration `z^ = z_k`, `u^ = u_k`. With it
//! (Goldstein et al. 2014, Algorithm 8) the combined residual `c = rho p^2 + d^2 / rho` decides:
//! when `c < eta c_prev`, `a' = (1 + sqrt(1 + 4 a^2)) / 2` and `z^ = z' + (a - 1) / a' (z' -
//! z_k)`, the same for `u^`; otherwise a restart, `a' = 1`, `z^ = z_k`, `u^ = u_k` (the previous
//! iterates) and `c_prev <- c_prev / eta`. `N` is used as stored: for a symmetric `N` on a QP
//! class this is ADMM on `min 1/2 x^T N x + r^T x + I_K(z)`; for a non-symmetric `W` or the
//! Coulomb shift it is the same splitting of the variational inequality (Siconos' "forced
//! symmetry" variant, its default), without a convergence guarantee.
//!
//! # The step rho
//!
//! Start (`rho_init`): `given` (`rho0`), `norm-inf` (Siconos' `NORM_INF`: `||N||_1`, the
//! largest column sum of `|N|`), `spectral` (Carpentier et al. 2024: `tau sqrt(L m) (L /
//! m)^power` with `L = lambda_max(N)` by 20 power iterations and `m = eps`). Updates
//! (`rho_strategy`), every `adjust_every` iterations, each changing `rho` refactorises:
//! `constant`; `residual-balancing` (Boyd et al. eq. (3.13): `rho *= tau_b` when `p > phi d`,
//! `rho /= tau_b` when `d > phi p`); `scaled-residual-balancing` (Siconos, after Wohlberg 2017:
//! the same test on `p / max(||x'||, ||z'||)` and `d / ||u'||`); `spectral` (Carpentier et al.:
//! the same test with `phi` and the factor `(L / m)^power_factor`); `chrono-balanced`
//! (Chrono's `BALANCED_FAST`: the factor `sqrt((p / max(|z'|, |x'|)) / (d / |u'|))` in the
//! infinity norm, clamped to `[1 / max_factor, max_factor]`, applied when outside
//! `[1 / threshold, threshold]`). The multiplier is unscaled, so it keeps its value when `rho`
//! changes.
//!
//! # Differences from the reference codes
//!
//! Siconos computes the shift from `N x + r` at its unprojected iterate `x` (shift
//! `unprojected`, the `admm:siconos` preset, one more product per iteration), starts its scaled
//! multiplier at zero (`dual_start = zero`) and returns `x`; the iterate handed to the executor
//! here is always the feasible `z`. Siconos combines the residuals as `p^2 + d^2`, Goldstein et
//! al. (followed here) as `rho p^2 + d^2 / rho`: the same at Siconos' constant `rho = 1`.
//! Chrono solves the KKT form `[M, H^T; H, -(sigma + rho) I]` with `sigma` multiplying `z`;
//! here the reduced form with `eps` centred at the previous `x` (Pinocchio's form; both vanish
//! at a fixed point), and Chrono's CCP has no shift (on a Coulomb instance `admm:chrono` uses
//! the `dual` shift). Pinocchio scales its step as `tau rho`; here `rho` is that product (its
//! `tau = 0.5` enters only the spectral start). Stopping is the executor's (natural map by
//! default), not the methods' own residuals. A diagonal compliance `R` (Pinocchio, Chrono's
//! `E`) waits for instances that carry one.
//!
//! # Cost
//!
//! `init` forms `N` as a CSC matrix (for block and matrix-free storage), builds the pattern of
//! `N + c I` and its symbolic LU once (faer's sparse LU, COLAMD ordering; any `N`, symmetric or
//! not), and factorises; every change of `rho` refactorises (numeric only). An iteration is
//! one pair of triangular solves, one projection and one counted `N`-product (`N z' + r`: the
//! shift of the next iteration with `velocity`, and the executor's residual, which it need not
//! compute again). Counters:
//! `factorizations`, `solves`, `factor_time_s`, `solve_time_s` (as ipm's), `rho`,
//! `rho_changes`, `restarts`, `pattern_nnz`. `step` allocates nothing.

// Index loops over the parallel vectors x, z, u and their copies read clearer than zips.
#![allow(clippy::needless_range_loop)]

use crate::kernels::{check_class, desaxce_shift};
use crate::newton_fb::DiagonalPattern;
use crate::observer::IterInfo;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::sparse_lu::SparseLu;
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::{CscMatrix, ProblemClass};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// How the step `rho` starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RhoInit {
    /// `rho0`.
    Given,
    /// `||N||_1`, the largest column sum of `|N|` (Siconos' `NORM_INF`); `rho0` when it is 0.
    NormInf,
    /// `tau sqrt(L m) (L / m)^power`, `L = lambda_max(N)`, `m = eps` (Carpentier et al. 2024).
    Spectral,
}

/// How the step `rho` changes (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RhoStrategy {
    /// Never.
    Constant,
    /// Boyd et al. 2011, eq. (3.13), on the residuals `p`, `d`.
    ResidualBalancing,
    /// The same on the scaled residuals (Siconos, Wohlberg 2017).
    ScaledResidualBalancing,
    /// Carpentier et al. 2024: factor `(L / m)^power_factor`.
    Spectral,
    /// Chrono's `BALANCED_FAST`: factor `sqrt` of the ratio of the scaled residuals.
    ChronoBalanced,
}

/// Which velocity De Saxce's shift is computed from (Coulomb class only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shift {
    /// `N z + r` at the current (projected) iterate `z` (no extra product: it is the
    /// executor's residual product too).
    Velocity,
    /// The multiplier `u` (no product; Pinocchio).
    Dual,
    /// `N x + r` at the last unprojected iterate `x`, the solution of the linear system
    /// (Siconos' `fc3d_admm`, whose shift reads the velocity of `reaction` before the
    /// projection; one extra counted product per iteration).
    Unprojected,
}

/// How the multiplier `u` starts (module documentation, "The iteration").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DualStart {
    /// The modified velocity at the starting reactions, `u = N gamma_0 + r + s`: a solution
    /// is a fixed point, so a warm start from one stays put.
    Velocity,
    /// `u = 0` (Siconos' `fc3d_admm` from the velocity array its driver passes, zero).
    Zero,
}

/// Settings of [`Admm`]. Defaults: Pinocchio's rules ([`AdmmSettings::pinocchio`]) with the
/// step updated every 5 iterations instead of every one: the best of the presets and their
/// variants on the public Coulomb files (measured, 1e-8 from zero: OneObject 1492 iterations,
/// BoxesStack1 238, Capsules-i125 319, local_problem_test 232, where `admm:pinocchio` needs
/// 1498, 254, 331 and stalls at 2.5e-8 after 1052 changes of `rho`, and `admm:siconos` 1149,
/// 1861, 2374 and 1163).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdmmSettings {
    /// How `rho` starts.
    pub rho_init: RhoInit,
    /// The starting step of `rho_init = given` and the fallback of `norm-inf` (`> 0`).
    pub rho0: f64,
    /// How `rho` changes.
    pub rho_strategy: RhoStrategy,
    /// Iterations between two updates of `rho` (`>= 1`; Chrono: 5).
    pub adjust_every: u32,
    /// Proximal weight `eps >= 0` on the previous `x` (Pinocchio's `mu_prox`, Chrono's
    /// `sigma`); `> 0` for the spectral start and strategy.
    pub eps: f64,
    /// Acceleration with restart (Goldstein et al. 2014, Algorithm 8).
    pub acceleration: bool,
    /// Restart constant `eta` in `(0, 1)` of the acceleration.
    pub eta: f64,
    /// Balancing ratio `phi > 1` of the residual-balancing and spectral tests.
    pub phi: f64,
    /// Factor `tau_b > 1` of residual balancing.
    pub tau_b: f64,
    /// Exponent of the spectral start (Pinocchio's `rho_power`).
    pub power: f64,
    /// Exponent of the spectral factor (Pinocchio's `rho_power_factor`, `> 0`).
    pub power_factor: f64,
    /// Pinocchio's `tau` in `(0, 1]`, the factor of the spectral start.
    pub tau: f64,
    /// Chrono's `stepadjust_threshold` (`> 1`): factors within `[1 / threshold, threshold]`
    /// are not applied.
    pub threshold: f64,
    /// Chrono's `stepadjust_maxfactor` (`> 1`): the clamp of one factor.
    pub max_factor: f64,
    /// Which velocity De Saxce's shift is computed from (Coulomb class).
    pub shift: Shift,
    /// How the multiplier `u` starts.
    pub dual_start: DualStart,
}

impl Default for AdmmSettings {
    fn default() -> Self {
        Self {
            adjust_every: 5,
            ..Self::pinocchio()
        }
    }
}

impl AdmmSettings {
    /// Siconos' defaults (`admm:siconos`), as Debian's Siconos 4.4 sets them
    /// (`SolverOptions(SICONOS_FRICTION_3D_ADMM)`: `INITIAL_RHO_GIVEN` with `rho = 1`,
    /// `RHO_STRATEGY_CONSTANT`, `ACCELERATION_AND_RESTART` with `eta = 0.999`,
    /// `FORCED_SYMMETRY`, `UPDATE_S_YES`) and as `fc3d_admm.c` iterates: the shift from the
    /// unprojected iterate, the multiplier from zero.
    pub fn siconos() -> Self {
        Self {
            rho_init: RhoInit::Given,
            rho0: 1.0,
            rho_strategy: RhoStrategy::Constant,
            adjust_every: 1,
            eps: 0.0,
            acceleration: true,
            eta: 0.999,
            phi: 10.0,
            tau_b: 2.0,
            power: 0.2,
            power_factor: 0.05,
            tau: 0.5,
            threshold: 1.5,
            max_factor: 50.0,
            shift: Shift::Unprojected,
            dual_start: DualStart::Zero,
        }
    }

    /// Chrono's `ChSolverADMM` defaults (`admm:chrono`): `rho = 0.1`, `sigma = 1e-6`, the
    /// balanced-fast update every 5 iterations (threshold 1.5, clamp 50), no acceleration
    /// (`AdmmAcceleration::BASIC`).
    pub fn chrono() -> Self {
        Self {
            rho_init: RhoInit::Given,
            rho0: 0.1,
            rho_strategy: RhoStrategy::ChronoBalanced,
            adjust_every: 5,
            eps: 1e-6,
            acceleration: false,
            shift: Shift::Dual,
            dual_start: DualStart::Velocity,
            ..Self::siconos()
        }
    }

    /// Pinocchio's `ADMMContactSolver` defaults (`admm:pinocchio`): `mu_prox = 1e-6`, the
    /// spectral start and update (`rho_power = 0.2`, `rho_power_factor = 0.05`,
    /// `ratio_primal_dual = 10`, `tau = 0.5`), the shift from the dual variable, no
    /// acceleration.
    pub fn pinocchio() -> Self {
        Self {
            rho_init: RhoInit::Spectral,
            rho_strategy: RhoStrategy::Spectral,
            eps: 1e-6,
            acceleration: false,
            shift: Shift::Dual,
            dual_start: DualStart::Velocity,
            ..Self::siconos()
        }
    }
}

impl SolverSettings for AdmmSettings {
    const SOLVER: &'static str = "admm";

    fn check(&self, v: &mut Validator) {
        let spectral =
            self.rho_init == RhoInit::Spectral || self.rho_strategy == RhoStrategy::Spectral;
        v.positive("rho0", self.rho0)
            .at_least("adjust_every", self.adjust_every.into(), 1)
            .non_negative("eps", self.eps)
            .require("eps", !spectral || self.eps > 0.0, self.eps, || {
                "> 0 with the spectral start or strategy (m = eps)".into()
            })
            .in_open("eta", self.eta, 0.0, 1.0)
            .greater("phi", self.phi, 1.0)
            .greater("tau_b", self.tau_b, 1.0)
            .require("power", self.power.is_finite(), self.power, || {
                "finite".into()
            })
            .positive("power_factor", self.power_factor)
            .in_open_closed("tau", self.tau, 0.0, 1.0)
            .greater("threshold", self.threshold, 1.0)
            .greater("max_factor", self.max_factor, 1.0);
    }
}

/// `N + c I` in a fixed sparse pattern (`N`'s plus the diagonal) and its LU.
struct Shifted {
    lu: SparseLu,
    /// Position of each diagonal entry in the values.
    diag_pos: Vec<usize>,
    /// `N`'s diagonal.
    diag: Vec<f64>,
}

impl Shifted {
    /// The pattern of `N + c I` with `N`'s values (the diagonal set by [`Shifted::set_shift`]).
    fn new(w: &CscMatrix) -> Result<Self, SolverError> {
        let p = DiagonalPattern::of(w);
        let mut lu = SparseLu::new(w.ncols(), p.col_ptr, p.row_idx)?;
        // N's entries at their places, 0 on an added diagonal entry
        let values = lu.values_mut();
        for (&pos, &v) in p.m_pos.iter().zip(w.values()) {
            values[pos] = v;
        }
        let diag = p.diag_pos.iter().map(|&pos| values[pos]).collect();
        Ok(Self {
            lu,
            diag_pos: p.diag_pos,
            diag,
        })
    }

    /// Set the diagonal to `N_jj + c` and factorise; `false` when singular.
    fn set_shift(&mut self, c: f64) -> bool {
        let values = self.lu.values_mut();
        for (&p, &d) in self.diag_pos.iter().zip(&self.diag) {
            values[p] = d + c;
        }
        self.lu.factorize()
    }
}

/// The counters of an [`Admm`] run (module docs).
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Factorisations of `N + rho I`.
    factorizations: u64,
    /// Solves with the factors.
    solves: u64,
    /// Time in the factorisations (s).
    factor_time: f64,
    /// Time in the solves (s).
    solve_time: f64,
    /// Changes of `rho`.
    rho_changes: u64,
    /// Restarts of the acceleration.
    restarts: u64,
}

/// ADMM (module documentation): the QP classes and [`ProblemClass::Coulomb`].
pub struct Admm {
    settings: AdmmSettings,
    linear: Option<Shifted>,
    /// Friction coefficients of a Coulomb instance (empty otherwise: no shift).
    mu: Vec<f64>,
    bs: usize,
    rho: f64,
    /// `L / m` of the spectral rules (1 otherwise).
    cond: f64,
    x: Vec<f64>,
    z: Vec<f64>,
    u: Vec<f64>,
    z_prev: Vec<f64>,
    u_prev: Vec<f64>,
    z_hat: Vec<f64>,
    u_hat: Vec<f64>,
    /// The velocity `N z + r` at the current `z` (shift `velocity`).
    v: Vec<f64>,
    /// The velocity `N x + r` at the last unprojected `x` (shift `unprojected`; empty otherwise).
    vx: Vec<f64>,
    rhs: Vec<f64>,
    /// Acceleration: `a` and the previous combined residual.
    a: f64,
    c_prev: f64,
    iter: u64,
    /// The counters (reset at `init`).
    counts: Counts,
    last: (f64, f64),
}

impl Admm {
    /// ADMM with `settings`; errors on invalid settings.
    pub fn new(settings: AdmmSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            rho: settings.rho0,
            settings,
            linear: None,
            mu: Vec::new(),
            bs: 1,
            cond: 1.0,
            x: Vec::new(),
            z: Vec::new(),
            u: Vec::new(),
            z_prev: Vec::new(),
            u_prev: Vec::new(),
            z_hat: Vec::new(),
            u_hat: Vec::new(),
            v: Vec::new(),
            vx: Vec::new(),
            rhs: Vec::new(),
            a: 1.0,
            c_prev: f64::INFINITY,
            iter: 0,
            counts: Counts::default(),
            last: (f64::NAN, f64::NAN),
        })
    }

    /// The part of `init` that allocates: the class and friction coefficients, the pattern of
    /// `N + c I` and its symbolic LU, the vectors. Errors: a class ADMM does not take, a pattern
    /// faer rejects.
    pub fn prepare(&mut self, problem: &Problem) -> Result<(), SolverError> {
        let inst = problem.instance();
        check_class(self, inst.class())?;
        let n = problem.n();
        self.bs = problem.constraints().block_size().max(1);
        self.mu = match (inst.class(), inst.constraints().friction()) {
            (ProblemClass::Coulomb, Some(mu)) => mu.to_vec(),
            _ => Vec::new(),
        };
        self.linear = Some(Shifted::new(inst.n_mat())?);
        for v in [
            &mut self.x,
            &mut self.z,
            &mut self.u,
            &mut self.z_prev,
            &mut self.u_prev,
            &mut self.z_hat,
            &mut self.u_hat,
            &mut self.v,
            &mut self.rhs,
        ] {
            *v = vec![0.0; n];
        }
        let unprojected = self.settings.shift == Shift::Unprojected && !self.mu.is_empty();
        self.vx = vec![0.0; if unprojected { n } else { 0 }];
        self.counts = Counts::default();
        Ok(())
    }

    /// The rest of `init`, after [`Admm::prepare`]: the starting `rho` (a power iteration of 20
    /// counted products for the spectral rules), the numeric factorisation, `x = z = gamma`
    /// and the multiplier at the modified velocity there (one counted product, handed to the
    /// executor), so that a solution is a fixed point (a warm start stays put). No allocation
    /// but faer's first numeric factorisation; `nsgs-admm` calls it when NSGS hands over.
    /// Errors: a starting `rho` that is not a positive number, a singular `N + (rho + eps) I`.
    pub fn begin(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let s = &self.settings;
        let w = problem.instance().n_mat();
        self.rho = match s.rho_init {
            RhoInit::Given => s.rho0,
            RhoInit::NormInf => {
                let (cp, va) = (w.col_ptr(), w.values());
                let norm1 = (0..problem.n())
                    .map(|j| va[cp[j]..cp[j + 1]].iter().map(|v| v.abs()).sum::<f64>())
                    .fold(0.0f64, f64::max);
                if norm1 > f64::EPSILON {
                    norm1
                } else {
                    s.rho0
                }
            }
            RhoInit::Spectral => 1.0,
        };
        self.cond = 1.0;
        if s.rho_init == RhoInit::Spectral || s.rho_strategy == RhoStrategy::Spectral {
            let l = problem.lambda_max(20).max(s.eps);
            self.cond = l / s.eps;
            if s.rho_init == RhoInit::Spectral {
                self.rho = s.tau * (l * s.eps).sqrt() * self.cond.powf(s.power);
            }
        }
        if !(self.rho.is_finite() && self.rho > 0.0) {
            return Err(SolverError::Numerical(format!(
                "admm: the starting step rho = {:.3e} is not a positive number",
                self.rho
            )));
        }
        self.factorize()?;
        for v in [&mut self.x, &mut self.z, &mut self.z_prev, &mut self.z_hat] {
            v.copy_from_slice(&state.gamma);
        }
        problem.gradient(&self.z, &mut self.v);
        let nx = self.vx.len();
        self.vx.copy_from_slice(&self.v[..nx]);
        match self.settings.dual_start {
            DualStart::Velocity => {
                self.u.copy_from_slice(&self.v);
                if !self.mu.is_empty() {
                    add_shift(&mut self.u, &self.v, &self.mu, self.bs, 1.0);
                }
            }
            DualStart::Zero => self.u.fill(0.0),
        }
        self.u_prev.copy_from_slice(&self.u);
        self.u_hat.copy_from_slice(&self.u);
        self.a = 1.0;
        self.c_prev = f64::INFINITY;
        self.iter = 0;
        self.last = (f64::NAN, f64::NAN);
        state.grad.copy_from_slice(&self.v);
        state.grad_fresh = true;
        Ok(())
    }

    /// Factorise `N + (rho + eps) I`. Errors: a singular matrix.
    fn factorize(&mut self) -> Result<(), SolverError> {
        let t = Instant::now();
        let c = self.rho + self.settings.eps;
        let ok = self.linear.as_mut().is_some_and(|l| l.set_shift(c));
        self.counts.factorizations += 1;
        self.counts.factor_time += t.elapsed().as_secs_f64();
        if ok {
            Ok(())
        } else {
            Err(SolverError::Numerical(format!(
                "admm: N + {c:.3e} I is singular (rho = {:.3e}, eps = {:.3e})",
                self.rho, self.settings.eps
            )))
        }
    }

    /// The factor of the `rho` update from the residuals `(p, d)` at this iteration, or 1.
    fn rho_factor(&self, p: f64, d: f64) -> f64 {
        let s = &self.settings;
        let balance = |p: f64, d: f64, f: f64| {
            if p > s.phi * d {
                f
            } else if d > s.phi * p {
                1.0 / f
            } else {
                1.0
            }
        };
        match s.rho_strategy {
            RhoStrategy::Constant => 1.0,
            RhoStrategy::ResidualBalancing => balance(p, d, s.tau_b),
            RhoStrategy::ScaledResidualBalancing => {
                let sx = norm2(&self.x).max(norm2(&self.z));
                let su = norm2(&self.u);
                if sx > 0.0 && su > 0.0 {
                    balance(p / sx, d / su, s.tau_b)
                } else {
                    balance(p, d, s.tau_b)
                }
            }
            RhoStrategy::Spectral => balance(p, d, self.cond.powf(s.power_factor)),
            RhoStrategy::ChronoBalanced => {
                let (pi, di) = self.inf_residuals();
                let sx = norm_inf(&self.z).max(norm_inf(&self.x)) + 1e-10;
                let su = norm_inf(&self.u) + 1e-10;
                let f = ((pi / sx) / (di / su + 1e-10)).sqrt();
                let f = f.clamp(1.0 / s.max_factor, s.max_factor);
                if f > s.threshold || f < 1.0 / s.threshold {
                    f
                } else {
                    1.0
                }
            }
        }
    }

    /// `(|x - z|_inf, rho |z - z_hat|_inf)` (before the acceleration moves `z_hat`).
    fn inf_residuals(&self) -> (f64, f64) {
        let p = self
            .x
            .iter()
            .zip(&self.z)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        let d = self
            .z
            .iter()
            .zip(&self.z_hat)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        (p, self.rho * d)
    }
}

fn norm2(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

fn norm_inf(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

/// Add `sign` times De Saxce's shift `mu_c ||v_T,c||` (`|v_t,c|` on a 2-D contact) of every
/// contact of `v` to the normal rows of `out`.
fn add_shift(out: &mut [f64], v: &[f64], mu: &[f64], bs: usize, sign: f64) {
    for ((o, vc), &m) in out.chunks_exact_mut(bs).zip(v.chunks_exact(bs)).zip(mu) {
        o[0] += sign * desaxce_shift(vc, m);
    }
}

impl Solver for Admm {
    fn name(&self) -> &'static str {
        "admm"
    }

    /// Joint (bilateral) blocks: `z = P_K(...)` is the identity on joint blocks, whose `mu = 0` gives no De Saxce shift.
    fn takes_joints(&self) -> bool {
        true
    }

    fn supports(&self, class: ProblemClass) -> bool {
        class.is_qp() || class == ProblemClass::Coulomb
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        self.prepare(problem)?;
        self.begin(problem, state)
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let s = &self.settings;
        let (rho, eps) = (self.rho, s.eps);
        let r = problem.instance().r();
        // x-update: (N + (rho + eps) I) x = -r - s + rho z^ + eps x + u^
        for i in 0..self.rhs.len() {
            self.rhs[i] = -r[i] + rho * self.z_hat[i] + eps * self.x[i] + self.u_hat[i];
        }
        if !self.mu.is_empty() {
            let src = match s.shift {
                Shift::Velocity => &self.v,
                Shift::Dual => &self.u,
                Shift::Unprojected => &self.vx,
            };
            add_shift(&mut self.rhs, src, &self.mu, self.bs, -1.0);
        }
        let t = Instant::now();
        let solved = self
            .linear
            .as_mut()
            .is_some_and(|l| l.lu.solve_factored(&mut self.rhs));
        self.counts.solves += 1;
        self.counts.solve_time += t.elapsed().as_secs_f64();
        if !solved || self.rhs.iter().any(|v| !v.is_finite()) {
            return Err(SolverError::Numerical(
                "admm: the solve with N + (rho + eps) I gave non-finite values".into(),
            ));
        }
        std::mem::swap(&mut self.z_prev, &mut self.z);
        std::mem::swap(&mut self.u_prev, &mut self.u);
        self.x.copy_from_slice(&self.rhs);
        // z-update and multiplier
        for i in 0..self.z.len() {
            self.z[i] = self.x[i] - self.u_hat[i] / rho;
        }
        problem.constraints().project(&mut self.z);
        let (mut p2, mut d2) = (0.0, 0.0);
        for i in 0..self.z.len() {
            let gap = self.x[i] - self.z[i];
            self.u[i] = self.u_hat[i] - rho * gap;
            p2 += gap * gap;
            let dz = self.z[i] - self.z_hat[i];
            d2 += dz * dz;
        }
        let (p, d) = (p2.sqrt(), rho * d2.sqrt());
        self.last = (p, d);
        self.iter += 1;
        // the rho update reads z_hat (Chrono's dual residual): before the acceleration moves it
        let factor = if self.iter % u64::from(s.adjust_every) == 0 {
            self.rho_factor(p, d)
        } else {
            1.0
        };
        // acceleration with restart (Goldstein et al. 2014, Algorithm 8)
        let c = rho * p * p + d * d / rho;
        if s.acceleration && c < s.eta * self.c_prev {
            let a_next = 0.5 * (1.0 + (1.0 + 4.0 * self.a * self.a).sqrt());
            let beta = (self.a - 1.0) / a_next;
            for i in 0..self.z.len() {
                self.z_hat[i] = self.z[i] + beta * (self.z[i] - self.z_prev[i]);
                self.u_hat[i] = self.u[i] + beta * (self.u[i] - self.u_prev[i]);
            }
            self.a = a_next;
            self.c_prev = c;
        } else if s.acceleration {
            self.counts.restarts += 1;
            self.a = 1.0;
            self.z_hat.copy_from_slice(&self.z_prev);
            self.u_hat.copy_from_slice(&self.u_prev);
            self.c_prev /= s.eta;
        } else {
            self.z_hat.copy_from_slice(&self.z);
            self.u_hat.copy_from_slice(&self.u);
        }
        if factor != 1.0 {
            self.rho *= factor;
            self.counts.rho_changes += 1;
            self.factorize()?;
        }
        // the velocity at z: the shift of the next iteration and the executor's residual
        problem.gradient(&self.z, &mut self.v);
        if !self.vx.is_empty() {
            problem.gradient(&self.x, &mut self.vx);
        }
        state.gamma.copy_from_slice(&self.z);
        state.grad.copy_from_slice(&self.v);
        state.grad_fresh = true;
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let nnz = self.linear.as_ref().map_or(0, |l| l.lu.row_idx().len());
        vec![
            ("factorizations", self.counts.factorizations as f64),
            ("solves", self.counts.solves as f64),
            ("factor_time_s", self.counts.factor_time),
            ("solve_time_s", self.counts.solve_time),
            ("rho", self.rho),
            ("rho_changes", self.counts.rho_changes as f64),
            ("restarts", self.counts.restarts as f64),
            ("pattern_nnz", nnz as f64),
        ]
    }

    fn iter_info(&self) -> IterInfo {
        let mut info = IterInfo::new();
        info.push("admm_rho", self.rho);
        info.push("admm_primal", self.last.0);
        info.push("admm_dual", self.last.1);
        info
    }
}
