//! Three fixed-point methods for the true Coulomb problem: `dsfp` (De Saxce's fixed point as a
//! projection method), `tfp` (the Tresca fixed point) and `pfp` (Panagiotopoulos' fixed point),
//! Siconos' `SICONOS_FRICTION_3D_DSFP`, `SICONOS_FRICTION_3D_TFP` and
//! `SICONOS_FRICTION_3D_PFP`.
//!
//! Notation: fclib and Siconos write `u = W r + q` with the reaction `r` as unknown; that is
//! cpbench's `u = N gamma + r` (`W = N`, fclib's `r` our `gamma`, fclib's `q` our linear term
//! `r`). This module uses fclib's letters throughout (`r` the reaction, `q` the data, `u` the
//! velocity, `r_n`, `r_T` a contact's normal and tangential parts), as the papers do. `W` is
//! used as stored: symmetric or not (rows of `W` are read through
//! [`cpbench_problems::Instance::row_matrix`] / [`crate::kernels::RowSource`], as in `nsgs`).
//! The Coulomb law of contact `c` (docs/formulation.md section 2) is
//!
//! ```text
//! r_c in K_mu_c,   u_c + mu_c ||u_T,c|| e_n in K*_mu_c,   r_c . (u_c + mu_c ||u_T,c|| e_n) = 0
//! ```
//!
//! Sources: De Saxce & Feng 1991, "New inequality and functional for contact with friction:
//! the implicit standard material approach", Mech. Struct. Mach. 19 (the modified velocity and
//! the projection form of the law); Acary, Bremond & Huber 2018, "On solving contact problems
//! with Coulomb friction: formulations and numerical comparisons", in *Advanced Topics in
//! Nonsmooth Dynamics*, Springer (section "Fixed point and projection methods": the De Saxce,
//! Tresca and Panagiotopoulos fixed points, and their comparison on fclib); Panagiotopoulos
//! 1975, "A nonlinear programming approach to the unilateral contact- and friction-boundary
//! value problem in the theory of elasticity", Ing.-Arch. 44 (alternating normal and tangential
//! problems); Acary & Brogliato 2008, *Numerical Methods for Nonsmooth Dynamical Systems*,
//! Springer, section 13.4 (Gauss-Seidel over contacts, the one-contact projections). Siconos'
//! defaults are from `numerics/src/FrictionContact/fc3d_TrescaFixedPoint.c`,
//! `fc3d_Panagiotopoulos_FixedPoint.c` and `fc3d_DeSaxceFixedPoint.c` (their `*_set_default`
//! / `*_set_options` functions and `solver_options_initialize` in `SolverOptions.c`).
//!
//! **dsfp** (De Saxce's fixed point): with `g(u)_c = (mu_c ||u_T,c||, 0, 0)` and
//! `F(r) = W r + q + g(W r + q)` (De Saxce's modified velocity), iterate
//!
//! ```text
//! r_{k+1} = P_K(r_k - rho F(r_k))
//! ```
//!
//! with a *constant* step `rho`: a fixed point is exactly a solution of the Coulomb problem, for
//! any `rho > 0` (the natural map of docs/formulation.md section 4 vanishes). `F` is not
//! monotone, so there is no convergence guarantee; for a symmetric positive definite `W` and
//! `mu = 0` it is the projected gradient method, which converges for `rho < 2 / lambda_max(W)`.
//! One step is one iteration: one product `u = W r + q` at the new iterate, handed to the
//! executor as its gradient (so the monitoring costs no second product), plus `O(n)`
//! projections. Siconos' default step is `rho = 1` (`dparam[SICONOS_FRICTION_3D_NSN_RHO] = 1`;
//! Siconos refuses a non-positive one, "use VI_FPP for a variable step"), an absolute number,
//! so whether it converges depends on the units of `W`: on the nine 3-D fixtures of
//! `solvers/tests/it/fixed_point.rs` it converges on six (where `lambda_max(W)` is at most 13)
//! and diverges on OneObject, BoxesStack1 and local_problem_test (`lambda_max(W)` 199, 2710 and
//! 2710). So `dsfp` reads `rho` relative to `1 / lambda_max(W)` by default
//! ([`RhoScale::LambdaMax`]: `lambda_max` of the symmetric part by 20 power iterations in
//! `init`, counted), which makes the method invariant under a scaling of the data, and
//! `rho_scale = "absolute"` gives Siconos' reading; `rho = 1` in both. Neither is uniformly
//! better (`F` is not monotone): absolute `rho = 1` solves fclib's Capsules in 366 iterations,
//! where the relative step stalls near `3.5e-7`; the relative step solves Rover4396 in 174
//! where the absolute one needs 1681.
//!
//! **tfp** (Tresca fixed point): the outer iteration on the friction threshold `s_c = mu_c
//! r_n,c`. For `s` fixed, the *Tresca problem* replaces the cone by the cylinder
//! `C(s) = {r : r_n >= 0, ||r_T|| <= s}`: per contact
//!
//! ```text
//! 0 <= r_n  _|_  u_n >= 0,       r_T in D(s_c) (the disc of radius s_c),   -u_T in N_D(s_c)(r_T)
//! ```
//!
//! i.e. the variational inequality `u^T (r' - r) >= 0` for all `r'` in `C(s)` (a convex QP when
//! `W` is symmetric). One `step` is one outer iteration:
//!
//! ```text
//! s_c = mu_c r_n,c                                   (from the current iterate)
//! repeat (inner Gauss-Seidel sweeps, at most inner_max_iter):
//!     for each contact c (in order):
//!         lin_c = u_c - W_cc r_c                     (u_c gathered along row c of W: exact)
//!         repeat (local iterations, at most local_max_iter):
//!             r_c <- P_C(s_c)(r_c - rho_c (W_cc r_c + lin_c))
//!             (P_C: r_n <- max(0, r_n), r_T <- the projection onto the disc D(s_c))
//!         until ||change of r_c|| <= local_tol ||r_c||
//! until ||change of r over the sweep|| <= inner_tol ||r||          (Siconos' "light" error)
//! u = W r + q  (handed to the executor);  e = fc3d error of (r, u)
//! inner_tol <- max(e / inner_tol_ratio, inner_tol_min)            (for the next step)
//! ```
//!
//! A fixed point of the outer map (`r` solves the Tresca problem at `s = mu r_n`) is a Coulomb
//! solution: `r_T` lies in the disc of radius `mu r_n`, the normal part is complementary, and
//! `-u_T` in the normal cone of the disc is the maximal-dissipation form of the sliding law.
//! The local step is `rho_c = 1 / lambda_max(sym W_cc)`, a projected-gradient step on the local
//! QP (the local map is a contraction when `W_cc` is symmetric positive definite).
//!
//! **pfp** (Panagiotopoulos' fixed point): alternate the normal and the tangential problem, each
//! with the other part frozen. One `step` is one outer iteration:
//!
//! ```text
//! normal problem, r_T frozen: the LCP 0 <= r_n _|_ W_nn r_n + (q_n + W_nT r_T) >= 0,
//!     by Gauss-Seidel sweeps  r_n,c <- max(0, r_n,c - u_n,c / W_nn,cc)  (exact for the
//!     one-contact LCP), until ||change of r_n over the sweep|| <= inner_tol ||r||
//! s_c = mu_c r_n,c
//! tangential problem, r_n frozen: the Tresca problem in r_T with the threshold s,
//!     r_T,c in D(s_c), -(W_TT r_T + q_T + W_Tn r_n)_c in N_D(r_T,c), by Gauss-Seidel sweeps
//!     with the local iteration r_T,c <- P_D(s_c)(r_T,c - rho_T,c u_T,c) (exact in one
//!     iteration in 2-D), rho_T,c = 1 / lambda_max(sym W_TT,cc), until
//!     ||change of r_T over the sweep|| <= inner_tol ||r||
//! u = W r + q (handed to the executor); inner_tol updated as in tfp
//! ```
//!
//! The iterate is in `K` after every step (the tangential problem puts `r_T` in the disc of
//! radius `mu r_n` of the new `r_n`); a fixed point is again a Coulomb solution.
//!
//! **Defaults and differences from Siconos.** `tfp` (Siconos `fc3d_tfp_set_default`): the inner
//! solver is NSGS with at most 1000 sweeps (`inner_max_iter`), its one-contact solver the
//! "projection on cylinder with local iteration" with at most 50 iterations (`local_max_iter`)
//! to `1e-14` (`local_tol`); the inner tolerance is adaptive,
//! `SICONOS_FRICTION_3D_INTERNAL_ERROR_STRATEGY_ADAPTIVE` with
//! `SICONOS_FRICTION_3D_DPARAM_INTERNAL_ERROR_RATIO = 10` (`inner_tol_ratio`): Siconos sets it to
//! `max(error / 10, tol / nc)` from the previous outer error (`fc3d_set_internalsolver_tolerance`,
//! starting from `error = 1`), with
//! `tol` its outer tolerance. Here the outer tolerance belongs to the executor, so the floor is a
//! setting (`inner_tol_min`, default `1e-12`), and the first inner tolerance comes from the fc3d
//! error of the start point (one product in `init`), not from `1`. Siconos' NSGS measures the
//! inner error by the same "light" relative change per sweep (its default
//! `SICONOS_FRICTION_3D_NSGS_ERROR_EVALUATION_LIGHT_WITH_FULL_FINAL`, without the final full
//! check here); the local step is the fixed `rho_c` above.
//! `pfp` (Siconos `fc3d_pfp_set_default`): normal problem by `SICONOS_LCP_PGS`, tangential by
//! `SICONOS_CONVEXQP_VI_FPP` (a projected gradient on the whole tangential QP), both at most 1000
//! iterations, the same adaptive tolerance with ratio 10. Here both are Gauss-Seidel sweeps over
//! contacts (the tangential one with local iterations, `local_max_iter = 50`, `local_tol =
//! 1e-14`, as in `tfp`); Siconos also tests the fc3d error between the normal and the tangential
//! solve and stops there when it is small, here the executor tests after the whole step.
//! `dsfp`: Siconos runs at most 20000 iterations to `1e-3` (its `solver_options_initialize`
//! defaults; here the executor's limits apply) with `rho = 1`, read as above.
//!
//! **Cost per step** (one product = one pass over the stored entries of `W`): `dsfp` one
//! product; `tfp` one product per inner sweep plus one for the velocity at the new iterate;
//! `pfp` one per normal sweep (the sweep gathers whole block rows of `W`), one per tangential
//! sweep, plus one. The inner sweeps are counted as products ([`Problem::add_matvecs`]) and
//! exposed as counters (`inner_sweeps` for `tfp`, `normal_sweeps` and `tangent_sweeps` for
//! `pfp`), with the local iterations (`local_iterations`) and the outer iterations whose inner
//! solve stopped at its cap (`inner_cap_hits`).
//!
//! **Stalling**: a `tfp` or `pfp` step that leaves `r` unchanged (bit for bit) short of the
//! executor's tolerance, or a `dsfp` step with `r_{k+1} = r_k`, returns
//! [`crate::StepOutcome::Stalled`] with a message: the next step would
//! repeat it. A `dsfp` step longer than `1e8` times the first one, or not finite (too large a
//! `rho`), is not taken and returns `Stalled` ("diverging"): the fc3d error is relative to
//! `max(||q||, ||r||, ||u||)` and stays bounded while `r` grows, so the executor's divergence
//! test does not see it.
//!
//! All three handle 2-D cones natively (block size from the instance; `||u_T|| = |u_t|`, the
//! disc is the interval `[-s, s]`). `step` allocates nothing (vectors are allocated in `init`).
//!
//! [`Problem::add_matvecs`]: crate::Problem::add_matvecs

mod dsfp;
mod pfp;
mod tfp;

pub use dsfp::{Dsfp, DsfpSettings, RhoScale};
pub use pfp::Pfp;
pub use tfp::{local_cylinder, Tfp};

use crate::observer::IterInfo;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::StepOutcome;
use crate::state::IterState;
use cpbench_problems::residual::residuals_with_gradient;
use serde::{Deserialize, Serialize};

/// Settings of the two Tresca-sweep fixed points, [`Tfp`] and [`Pfp`]: the same loops with the
/// same defaults, Siconos' `fc3d_tfp_set_default` and `fc3d_pfp_set_default` (module docs):
/// 1000 inner sweeps, inner tolerance `max(e / 10, 1e-12)`, 50 local iterations to `1e-14`.
/// `pfp` runs its inner sweeps and its local iterations on each sub-problem (the normal LCP,
/// the tangential Tresca problem; the local ones on the tangential one only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrescaSettings {
    /// Largest number of inner Gauss-Seidel sweeps per outer iteration (`pfp`: per sub-problem,
    /// normal or tangential) (`>= 1`; Siconos 1000, the internal NSGS's
    /// `iparam[SICONOS_IPARAM_MAX_ITER]` for `tfp`, its LCP PGS and tangential VI_FPP for `pfp`).
    pub inner_max_iter: u32,
    /// Ratio of the adaptive inner tolerance `max(e / inner_tol_ratio, inner_tol_min)`, `e`
    /// the fc3d error of the last iterate (`> 0`; Siconos 10,
    /// `SICONOS_FRICTION_3D_DPARAM_INTERNAL_ERROR_RATIO`).
    pub inner_tol_ratio: f64,
    /// Floor of the inner tolerance, a relative change of `r` per sweep (`>= 0`; Siconos' `tfp`
    /// uses its outer tolerance over the number of contacts).
    pub inner_tol_min: f64,
    /// Largest number of local iterations per contact and sweep (`>= 1`; Siconos 50, the
    /// "projection on cylinder with local iteration" solver; `pfp`: of the tangential
    /// one-contact problem).
    pub local_max_iter: u32,
    /// Local stopping test, the change of `r_c` (`pfp`: `r_T,c`) `<= local_tol * ||r_c||`
    /// (`>= 0`; Siconos `1e-14`).
    pub local_tol: f64,
}

impl Default for TrescaSettings {
    fn default() -> Self {
        Self {
            inner_max_iter: 1000,
            inner_tol_ratio: 10.0,
            inner_tol_min: 1e-12,
            local_max_iter: 50,
            local_tol: 1e-14,
        }
    }
}

impl SolverSettings for TrescaSettings {
    /// Both solvers' settings: messages name the pair.
    const SOLVER: &'static str = "tfp/pfp";

    fn check(&self, v: &mut Validator) {
        v.at_least("inner_max_iter", self.inner_max_iter.into(), 1)
            .positive("inner_tol_ratio", self.inner_tol_ratio)
            .non_negative("inner_tol_min", self.inner_tol_min)
            .at_least("local_max_iter", self.local_max_iter.into(), 1)
            .non_negative("local_tol", self.local_tol);
    }
}

/// Project the tangential part `t` (1 or 2 entries: a 2-D or 3-D contact) in place onto the
/// disc (interval) of radius `s >= 0`, the tangential set of the Tresca cylinder
/// `C(s) = R+ x D(s)`: `t` itself inside, `s t / ||t||` outside (0 when `s = 0`).
#[inline]
pub fn project_disc(t: &mut [f64], s: f64) {
    if t.len() == 1 {
        t[0] = t[0].clamp(-s, s);
        return;
    }
    let nt = t[0].hypot(t[1]);
    if nt > s {
        let f = if nt > 0.0 { s / nt } else { 0.0 };
        t[0] *= f;
        t[1] *= f;
    }
}

/// Siconos' fc3d error of `r` with its velocity `u = W r + q` and `norm_q = ||q||`: the
/// harness's own definition ([`residuals_with_gradient`], docs/formulation.md section 4), no
/// product, no allocation.
fn fc3d_error(problem: &Problem, r: &[f64], u: &[f64], norm_q: f64) -> f64 {
    residuals_with_gradient(problem.instance(), r, u, norm_q).fc3d_error
}

/// `sqrt(d2 / n2)` from the squared norm `d2` of a sweep's change and the squared norm `n2` of
/// its result: the sweep's relative change (Siconos' "light" error), 0 when nothing moved
/// (`d2 = 0`); `n2` is floored at the smallest positive `f64`.
#[inline]
pub fn light_error(d2: f64, n2: f64) -> f64 {
    if d2 == 0.0 {
        0.0
    } else {
        (d2 / n2.max(f64::MIN_POSITIVE)).sqrt()
    }
}

/// `y = B x` for a row-major `D x D` block `B` (in the first `D^2` entries of `b`) and the
/// first `D` entries of `x`.
#[inline]
pub fn mul_block<const D: usize>(b: &[f64], x: &[f64]) -> [f64; D] {
    let mut y = [0.0; D];
    for (i, yi) in y.iter_mut().enumerate() {
        for (j, xj) in x.iter().enumerate().take(D) {
            *yi += b[i * D + j] * xj;
        }
    }
    y
}

/// What a run of inner sweeps did ([`inner_sweeps`]).
#[derive(Clone, Copy, Debug, Default)]
struct InnerRun {
    /// Sweeps made.
    sweeps: u64,
    /// Local iterations of all the sweeps.
    local: u64,
    /// Whether any sweep changed `r`.
    moved: bool,
    /// Whether the run stopped at the cap instead of the tolerance.
    capped: bool,
}

/// Inner Gauss-Seidel sweeps of `tfp` and `pfp` on `r`: `sweep(r)` makes one and returns the
/// squared norm of its change and its local iterations; each sweep counts as one product; the
/// run stops when the light error ([`light_error`]) is at most `tol` or after `max` sweeps.
fn inner_sweeps(
    problem: &Problem,
    r: &mut [f64],
    tol: f64,
    max: u64,
    mut sweep: impl FnMut(&mut [f64]) -> (f64, u64),
) -> InnerRun {
    let mut run = InnerRun::default();
    loop {
        let (d2, local) = sweep(r);
        problem.add_matvecs(1);
        run.sweeps += 1;
        run.local += local;
        run.moved |= d2 > 0.0;
        let n2: f64 = r.iter().map(|x| x * x).sum();
        if light_error(d2, n2) <= tol {
            return run;
        }
        if run.sweeps >= max {
            run.capped = true;
            return run;
        }
    }
}

/// The outer-iteration state of `tfp` and `pfp`: the velocity `u = W r + q` at the last
/// iterate, `||q||`, the fc3d error there, the inner tolerance it sets, the thresholds
/// `s_c = mu_c r_n,c`, the row state of the inner sweeps and the counters both report.
#[derive(Clone, Debug)]
struct Outer {
    /// `u = W r + q` at the last iterate.
    u: Vec<f64>,
    /// Thresholds `s_c = mu_c max(r_n,c, 0)` of the current Tresca problem.
    s: Vec<f64>,
    rows: cpbench_problems::RowState,
    norm_q: f64,
    inner_tol: f64,
    error: f64,
    local_iters: u64,
    cap_hits: u64,
    stalled: bool,
}

impl Outer {
    /// Before `init`: nothing allocated, error infinite.
    fn new() -> Self {
        Self {
            u: Vec::new(),
            s: Vec::new(),
            rows: cpbench_problems::RowState::default(),
            norm_q: 0.0,
            inner_tol: 0.0,
            error: f64::INFINITY,
            local_iters: 0,
            cap_hits: 0,
            stalled: false,
        }
    }

    /// At `init`: `u` at the start point `r` (one counted product), its fc3d error, the first
    /// inner tolerance ([`adaptive_tol`] with the ratio and floor of `st`), `nc` thresholds,
    /// counters reset.
    fn start(&mut self, problem: &Problem, r: &[f64], nc: usize, st: &TrescaSettings) {
        self.u = vec![0.0; problem.n()];
        self.s = vec![0.0; nc];
        self.rows = cpbench_problems::RowState::default();
        self.norm_q = cpbench_problems::linalg::norm2(problem.instance().r());
        problem.gradient(r, &mut self.u);
        self.error = fc3d_error(problem, r, &self.u, self.norm_q);
        self.inner_tol = adaptive_tol(self.error, st.inner_tol_ratio, st.inner_tol_min);
        self.local_iters = 0;
        self.cap_hits = 0;
        self.stalled = false;
    }

    /// The thresholds `s_c = mu_c max(r_n,c, 0)` of the reactions `r` (blocks of `bs`).
    fn thresholds(&mut self, mu: &[f64], r: &[f64], bs: usize) {
        for ((s, &m), rc) in self.s.iter_mut().zip(mu).zip(r.chunks_exact(bs)) {
            *s = m * rc[0].max(0.0);
        }
    }

    /// The end of an outer iteration: `u = W r + q` (one counted product, handed to the
    /// executor), the fc3d error there, the next inner tolerance (the rule of `st`); an
    /// iteration whose inner sweeps did not move `r` (`moved` false) is the end of progress
    /// ([`StepOutcome::Stalled`]).
    fn end(
        &mut self,
        problem: &Problem,
        state: &mut IterState,
        moved: bool,
        st: &TrescaSettings,
    ) -> StepOutcome {
        problem.gradient(&state.gamma, &mut self.u);
        state.grad.copy_from_slice(&self.u);
        state.grad_fresh = true;
        self.error = fc3d_error(problem, &state.gamma, &self.u, self.norm_q);
        self.inner_tol = adaptive_tol(self.error, st.inner_tol_ratio, st.inner_tol_min);
        self.stalled = !moved;
        if moved {
            StepOutcome::Continue
        } else {
            StepOutcome::Stalled
        }
    }

    /// Count a run of inner sweeps: its local iterations, and a cap hit if it stopped at the
    /// cap.
    fn record(&mut self, run: &InnerRun) {
        self.local_iters += run.local;
        self.cap_hits += u64::from(run.capped);
    }

    /// The counters of `tfp` or `pfp`: its own sweep counts `sweeps`, then the local
    /// iterations, the inner runs stopped at the cap and the inner tolerance.
    fn counters(&self, sweeps: &[(&'static str, u64)]) -> Vec<(&'static str, f64)> {
        let mut c: Vec<_> = sweeps.iter().map(|&(name, n)| (name, n as f64)).collect();
        c.extend([
            ("local_iterations", self.local_iters as f64),
            ("inner_cap_hits", self.cap_hits as f64),
            ("inner_tol", self.inner_tol),
        ]);
        c
    }

    /// The per-iteration record of `tfp` or `pfp`: the last iteration's sweep counts
    /// `sweeps`, then the inner tolerance.
    fn iter_info(&self, sweeps: &[(&'static str, u64)]) -> IterInfo {
        let mut info = IterInfo::new();
        for &(name, n) in sweeps {
            info.push(name, n as f64);
        }
        info.push("inner_tol", self.inner_tol);
        info
    }

    /// After a stalled outer iteration, the message of `solver` with the fc3d error and
    /// `why()`, what did not move `r`; `None` otherwise.
    fn stall_message(&self, solver: &str, why: impl FnOnce() -> String) -> Option<String> {
        self.stalled.then(|| {
            format!(
                "{solver}: an outer iteration left r unchanged at fc3d error {:.3e} ({})",
                self.error,
                why()
            )
        })
    }
}

/// The inner tolerance rule shared by `tfp` and `pfp`: `max(e / ratio, floor)` from the fc3d
/// error `e` of the last iterate, and `floor` when `e / ratio` is not finite.
#[inline]
pub fn adaptive_tol(error: f64, ratio: f64, floor: f64) -> f64 {
    let t = error / ratio;
    if t.is_finite() {
        t.max(floor)
    } else {
        floor
    }
}
