//! Projection methods for the variational inequality of the true Coulomb problem:
//! `vi-fpp` (fixed-point projection with a self-adaptive step) and `vi-eg` (the extragradient
//! method of Korpelevich with the self-adaptive step of Khobotov and Marcotte; by default with
//! Siconos' corrector).
//!
//! Notation: fclib and Siconos write `u = W r + q` with the reaction `r` as unknown; that is
//! cpbench's `u = N gamma + r` (`W = N`, fclib's `r` our `gamma`, fclib's `q` our linear term
//! `r`). This module uses fclib's letters throughout (`r` the reaction, `q` the data, `u` the
//! velocity), as the papers do.
//!
//! **The VI** (Acary, Bremond & Huber 2018, "On solving contact problems with Coulomb friction:
//! formulations and numerical comparisons", in *Advanced Topics in Nonsmooth Dynamics*,
//! Springer, section "Variational inequality formulation" and its projection methods; De Saxce
//! & Feng 1991 for the modified velocity): with `K` the product of the Coulomb cones `K_mu_c`
//! (3-D blocks, or 2-D blocks `|r_t| <= mu r_n`) and De Saxce's modified velocity
//!
//! ```text
//! F(r) = W r + q + g(W r + q),    g(u)_c = (mu_c ||u_T,c||, 0, 0)    (0 on the tangents)
//! ```
//!
//! the Coulomb problem is: find `r in K` with `F(r)^T (s - r) >= 0` for every `s in K`, i.e.
//! `r = P_K(r - rho F(r))` for any `rho > 0` (the natural map of docs/formulation.md section 4,
//! whose norm over `max(||q||, ||r||, ||u||)` is the fc3d error). `W` is used as stored (not
//! symmetrised); `F` is not monotone in general, so neither method has a convergence guarantee
//! on the Coulomb problem (Acary et al. 2018 report both converging, slowly, on most fclib
//! problems).
//!
//! **vi-fpp** (fixed-point projection; Siconos `SICONOS_FRICTION_3D_VI_FPP`, that is
//! `variationalInequality_FixedPointProjection` with its default line search, "Armijo rule with
//! Khobotov ratio"): from `r_k`,
//!
//! ```text
//! z(rho) = P_K(r_k - rho F(r_k))
//! accept rho when  rho ||F(z) - F(r_k)|| <= L ||z - r_k||,  else rho <- tau rho (at most
//!                  ls_max_iter trials; the last trial is taken when none passes)
//! r_{k+1} = z(rho)
//! rho <- rho / tau  when  rho ||F(z) - F(r_k)|| < L_min ||z - r_k||   (an easy step)
//! ```
//!
//! **vi-eg** (extragradient; Korpelevich 1976, "The extragradient method for finding saddle
//! points and other problems", Matecon 12; the step rule of Khobotov 1987, USSR Comput. Math.
//! Math. Phys. 27(5), 120-127, and Marcotte 1991, INFOR 29, 258-270): the same search for the
//! predictor `z`, then the corrector
//!
//! ```text
//! r_{k+1} = P_K(r_k - rho F(z))
//! ```
//!
//! with the same growth rule. For a monotone Lipschitz `F` Khobotov's test `rho ||F(z) - F(r)||
//! <= L ||z - r||`, `L < 1`, makes every step decrease the distance to the solution set.
//! Siconos' `SICONOS_FRICTION_3D_VI_EG` (`variationalInequality_ExtraGradient`, default line
//! search) has the same predictor and step rule but starts its corrector from the predictor,
//! `r_{k+1} = P_K(z - rho F(z))` (its iterate is overwritten by `z` in the search): two
//! projection steps of one `rho`, not Korpelevich's correction of `r_k`. On the fclib fixtures
//! it needs fewer iterations than Korpelevich's corrector (Box_Stacks 115 against 724, Spheres
//! 587 against 2764 to the fc3d error 1e-8). Siconos' corrector is `vi-eg`'s default (setting
//! `corrector = predictor`, [`Corrector`]; the preset `vi-eg:siconos`, [`ViSettings::siconos`],
//! names the same settings):
//!
//! ```text
//! r_{k+1} = P_K(z - rho F(z))
//! ```
//!
//! with the same cost per iteration (one product for the corrector's velocity). On the 18 public
//! Coulomb files (13 3-D, 5 2-D; `results/coulomb-public`) it took 2.2 to 8.5 times fewer
//! iterations than Korpelevich's corrector on every file both solved from a nonzero start
//! (fc3d error 1e-8 and 1e-4), and solved 15 files to 1e-8 against Korpelevich's 13 (18
//! against 17 at 1e-4), as many 3-D files as Siconos' `VI_EG`: hence the default. Korpelevich's
//! corrector, whose steps provably approach the solution set of a monotone VI (the Coulomb VI
//! is not monotone), stays a setting (`corrector = korpelevich`).
//!
//! **Defaults** are Siconos' (`variationalInequality_FixedPointProjection_setDefaultSolverOptions`
//! and `variationalInequality_ExtraGradient_setDefaultSolverOptions`, which the fc3d wrappers
//! `fc3d_VI_FixedPointProjection` / `fc3d_VI_ExtraGradient` use unchanged): starting step
//! `rho = 1` (`dparam[SICONOS_VI_EG_DPARAM_RHO] = -1`: variable step from 1), `tau = 2/3`,
//! growth `3/2` (`TAUINV`), `L = 0.9`, `L_min = 0.3`, at most 10 trials (`ls_itermax = 10` in
//! the solvers). Differences from Siconos: a trial passes with `<=` (Siconos: `<`), so that a
//! fixed point (`z = r_k`, both sides 0) is accepted instead of shrinking `rho`; `F` at the
//! accepted point is kept for the next iteration (Siconos evaluates it again), so an
//! iteration of `vi-fpp` costs one product per trial and one of `vi-eg` one more (the corrector);
//! the step is refused below a floor (`rho_min`, relative to `1 / max_c lambda_max(sym W_cc)`):
//! the step then returns `Stalled` instead of looping on an ever smaller `rho`, and a step that
//! leaves `r` exactly unchanged does the same. Stopping is the executor's (fc3d error by
//! default), not Siconos' "light" error `||r_{k+1} - r_k|| / ||r_{k+1}||`.
//!
//! Both cone dimensions are handled natively: the block size (3, or 2 for fc2d problems) is read
//! from the instance; the projection is [`project_coulomb_cone`] and the De Saxce shift uses
//! `||u_T|| = |u_t|` on 2-D blocks. `step` allocates nothing (vectors allocated in `init`).

use crate::kernels::{coulomb_blocks, desaxce_shift, lambda_max, sym_part3};
use crate::observer::IterInfo;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::constraints::project_coulomb_cone;
use cpbench_problems::ProblemClass;
use serde::{Deserialize, Serialize};

/// Settings of [`Vi`] (both `vi-fpp` and `vi-eg`). Defaults: Siconos' (module docs): `rho0 = 1`,
/// `tau = 2/3`, `grow = 3/2`, `l = 0.9`, `l_min = 0.3`, 10 trials, floor `1e-10`, and
/// Siconos' corrector from the predictor ([`Corrector::Predictor`]; the preset
/// `vi-eg:siconos`, [`ViSettings::siconos`], is the same).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ViSettings {
    /// Starting step `rho > 0` (Siconos: 1, `dparam[SICONOS_VI_EG_DPARAM_RHO] = -1`).
    pub rho0: f64,
    /// Factor `tau` in `(0, 1)` applied to `rho` after a failed trial (Siconos `LS_TAU`, 2/3).
    pub tau: f64,
    /// Factor `> 1` applied to `rho` after an easy step (Siconos `LS_TAUINV`, 3/2).
    pub grow: f64,
    /// Khobotov's constant `L`, in `(0, 1)`, of the trial test
    /// `rho ||F(z) - F(r)|| <= L ||z - r||` (Siconos `LS_L`, 0.9).
    pub l: f64,
    /// Growth threshold `L_min`, in `(0, L]`, of the test `rho ||F(z) - F(r)|| < L_min ||z - r||`
    /// after which `rho` grows (Siconos `LS_LMIN`, 0.3).
    pub l_min: f64,
    /// Largest number of step trials per iteration (`>= 1`; Siconos' `ls_itermax`, 10); when
    /// none passes, the last (smallest) step is taken.
    pub ls_max_iter: u32,
    /// Floor of `rho` relative to `1 / max_c lambda_max(sym W_cc)`, below which a step reports
    /// `Stalled` (`> 0`).
    pub rho_min: f64,
    /// The start of `vi-eg`'s corrector (default `predictor`, `r_{k+1} = P_K(z - rho F(z))`,
    /// Siconos' `variationalInequality_ExtraGradient`: fewer iterations on every public file;
    /// `korpelevich`, `r_{k+1} = P_K(r_k - rho F(z))`, Korpelevich 1976). Ignored by `vi-fpp`.
    pub corrector: Corrector,
}

/// Where `vi-eg`'s corrector starts (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Corrector {
    /// From the iterate: `r_{k+1} = P_K(r_k - rho F(z))` (Korpelevich 1976).
    Korpelevich,
    /// From the predictor: `r_{k+1} = P_K(z - rho F(z))`, two projection steps of one `rho`
    /// (Siconos' `SICONOS_FRICTION_3D_VI_EG`, `variationalInequality_ExtraGradient`).
    Predictor,
}

impl ViSettings {
    /// The preset `vi-eg:siconos`: Siconos' defaults with the corrector from the predictor
    /// ([`Corrector::Predictor`]), as Siconos' `VI_EG` runs it; since the predictor became
    /// the default corrector, the same as [`ViSettings::default`] (the preset stays so that
    /// names in scripts and result files keep their meaning).
    pub fn siconos() -> Self {
        Self {
            corrector: Corrector::Predictor,
            ..Self::default()
        }
    }
}

impl Default for ViSettings {
    fn default() -> Self {
        Self {
            rho0: 1.0,
            tau: 2.0 / 3.0,
            grow: 1.5,
            l: 0.9,
            l_min: 0.3,
            ls_max_iter: 10,
            rho_min: 1e-10,
            corrector: Corrector::Predictor,
        }
    }
}

impl SolverSettings for ViSettings {
    const SOLVER: &'static str = "vi";

    fn check(&self, v: &mut Validator) {
        v.positive("rho0", self.rho0)
            .in_open("tau", self.tau, 0.0, 1.0)
            .require(
                "grow",
                self.grow > 1.0 && self.grow.is_finite(),
                self.grow,
                || "> 1, finite".into(),
            )
            .in_open("l", self.l, 0.0, 1.0)
            .in_open_closed("l_min", self.l_min, 0.0, self.l)
            .at_least("ls_max_iter", self.ls_max_iter.into(), 1)
            .positive("rho_min", self.rho_min);
    }
}

/// Which projection method a [`Vi`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViMethod {
    /// Fixed-point projection, `r <- P_K(r - rho F(r))` (`vi-fpp`).
    FixedPoint,
    /// Extragradient, `z = P_K(r - rho F(r))`, `r <- P_K(r - rho F(z))` (`vi-eg`; from `z`
    /// instead of `r` with [`Corrector::Predictor`]).
    ExtraGradient,
}

/// The line search's counters of a [`Vi`] run.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Failed trials (the step shrinks).
    shrinks: u64,
    /// Growths of the step.
    grows: u64,
    /// Iterations whose every trial failed.
    ls_failures: u64,
    /// Trials of the last iteration.
    last_trials: u32,
}

/// The VI projection methods for the Coulomb problem ([`ProblemClass::Coulomb`] only; module
/// docs).
#[derive(Clone, Debug)]
pub struct Vi {
    settings: ViSettings,
    method: ViMethod,
    /// The iterate `r` at which `u` was computed (to detect a changed state).
    r: Vec<f64>,
    /// `u = W r + q` at [`Vi::r`].
    u: Vec<f64>,
    /// Trial point `z` and `u` at it.
    z: Vec<f64>,
    uz: Vec<f64>,
    /// Whether `u` holds the velocity at `r`.
    u_valid: bool,
    /// Current step and its floor (absolute).
    rho: f64,
    rho_floor: f64,
    /// The counters (reset at `init`).
    counts: Counts,
}

impl Vi {
    /// A VI solver running `method`; errors on invalid settings.
    pub fn new(method: ViMethod, settings: ViSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            rho: settings.rho0,
            settings,
            method,
            r: Vec::new(),
            u: Vec::new(),
            z: Vec::new(),
            uz: Vec::new(),
            u_valid: false,
            rho_floor: 0.0,
            counts: Counts::default(),
        })
    }

    /// `vi-fpp` ([`ViMethod::FixedPoint`]).
    pub fn fpp(settings: ViSettings) -> Result<Self, SolverError> {
        Self::new(ViMethod::FixedPoint, settings)
    }

    /// `vi-eg` ([`ViMethod::ExtraGradient`]).
    pub fn eg(settings: ViSettings) -> Result<Self, SolverError> {
        Self::new(ViMethod::ExtraGradient, settings)
    }
}

/// The projection step of the Coulomb VI: `out = P_K(x - rho F)` with
/// `F = u + g(u)`, `g(u) = mu ||u_T|| e_n` (De Saxce's shift), from the velocity `uf` at `x`,
/// blockwise (block size `bs`, 3 or 2, one `mu` per block; `x`, `uf`, `out` of the same
/// length), `K` the Coulomb cones.
pub fn project_step(x: &[f64], uf: &[f64], rho: f64, mu: &[f64], bs: usize, out: &mut [f64]) {
    for (((o, xc), uc), &m) in out
        .chunks_exact_mut(bs)
        .zip(x.chunks_exact(bs))
        .zip(uf.chunks_exact(bs))
        .zip(mu)
    {
        let s = desaxce_shift(uc, m);
        o[0] = xc[0] - rho * (uc[0] + s);
        for i in 1..bs {
            o[i] = xc[i] - rho * uc[i];
        }
        project_coulomb_cone(o, m);
    }
}

/// `(||F(z) - F(r)||, ||z - r||)` from the velocities `uz`, `ur` at `z`, `r`, with `F` the VI
/// map of [`project_step`] (blockwise, block size `bs`, one `mu` per block): the two norms of
/// the step-size test with Khobotov's ratio (module docs:
/// `rho ||F(z) - F(r)|| <= L ||z - r||`; Khobotov 1987).
pub fn khobotov_norms(
    z: &[f64],
    r: &[f64],
    uz: &[f64],
    ur: &[f64],
    mu: &[f64],
    bs: usize,
) -> (f64, f64) {
    let (mut df2, mut dx2) = (0.0, 0.0);
    for ((((zc, rc), uzc), urc), &m) in z
        .chunks_exact(bs)
        .zip(r.chunks_exact(bs))
        .zip(uz.chunks_exact(bs))
        .zip(ur.chunks_exact(bs))
        .zip(mu)
    {
        let d0 = (uzc[0] + desaxce_shift(uzc, m)) - (urc[0] + desaxce_shift(urc, m));
        df2 += d0 * d0;
        for i in 1..bs {
            let d = uzc[i] - urc[i];
            df2 += d * d;
        }
        for i in 0..bs {
            let d = zc[i] - rc[i];
            dx2 += d * d;
        }
    }
    (df2.sqrt(), dx2.sqrt())
}

impl Solver for Vi {
    fn name(&self) -> &'static str {
        match self.method {
            ViMethod::FixedPoint => "vi-fpp",
            ViMethod::ExtraGradient => "vi-eg",
        }
    }

    fn supports(&self, class: ProblemClass) -> bool {
        class == ProblemClass::Coulomb
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        let n = problem.n();
        let bs = problem.constraints().block_size();
        let mut scale: f64 = 0.0;
        for c in 0..n / bs.max(1) {
            let b = inst.diag_block(c);
            let l = if bs == 2 {
                lambda_max(&b, 2)
            } else {
                lambda_max(&sym_part3(&b), 3)
            };
            if l.is_finite() {
                scale = scale.max(l);
            }
        }
        // the floor relative to the step 1 / max_c lambda_max(sym W_cc) (1 when W_cc vanish)
        let unit = if scale > 0.0 { 1.0 / scale } else { 1.0 };
        self.rho_floor = self.settings.rho_min * unit;
        self.rho = self.settings.rho0;
        self.r = state.gamma.clone();
        self.u = vec![0.0; n];
        self.z = vec![0.0; n];
        self.uz = vec![0.0; n];
        problem.gradient(&self.r, &mut self.u);
        self.u_valid = true;
        self.counts = Counts::default();
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let (mu, bs) = coulomb_blocks(self, problem)?;
        let s = &self.settings;
        // the state is the solver's last iterate unless someone moved it
        if !self.u_valid || self.r != state.gamma {
            self.r.copy_from_slice(&state.gamma);
            problem.gradient(&self.r, &mut self.u);
        }
        let mut rho = self.rho;
        let (mut a1, mut a2) = (0.0, 0.0);
        let mut accepted = false;
        let mut trials = 0;
        while trials < s.ls_max_iter {
            if trials > 0 {
                rho *= s.tau;
                self.counts.shrinks += 1;
            }
            trials += 1;
            project_step(&self.r, &self.u, rho, mu, bs, &mut self.z);
            problem.gradient(&self.z, &mut self.uz);
            (a1, a2) = khobotov_norms(&self.z, &self.r, &self.uz, &self.u, mu, bs);
            if rho * a1 <= s.l * a2 {
                accepted = true;
                break;
            }
        }
        self.counts.last_trials = trials;
        if !accepted {
            self.counts.ls_failures += 1;
        }
        let moved = a2 > 0.0;
        match self.method {
            ViMethod::FixedPoint => {
                std::mem::swap(&mut self.r, &mut self.z);
                std::mem::swap(&mut self.u, &mut self.uz);
            }
            ViMethod::ExtraGradient => {
                match s.corrector {
                    Corrector::Korpelevich => {
                        // from r_k with F at the predictor z; z is free again afterwards
                        project_step(&self.r, &self.uz, rho, mu, bs, &mut self.z);
                        std::mem::swap(&mut self.r, &mut self.z);
                    }
                    // from the predictor z (Siconos' VI_EG); r_k is no longer needed
                    Corrector::Predictor => {
                        project_step(&self.z, &self.uz, rho, mu, bs, &mut self.r);
                    }
                }
                problem.gradient(&self.r, &mut self.u);
            }
        }
        self.rho = if rho * a1 < s.l_min * a2 {
            self.counts.grows += 1;
            rho * s.grow
        } else {
            rho
        };
        state.gamma.copy_from_slice(&self.r);
        state.grad.copy_from_slice(&self.u);
        state.grad_fresh = true;
        self.u_valid = true;
        if !moved || self.rho < self.rho_floor || !self.rho.is_finite() {
            return Ok(StepOutcome::Stalled);
        }
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("rho", self.rho),
            ("rho_shrinks", self.counts.shrinks as f64),
            ("rho_grows", self.counts.grows as f64),
            ("line_search_failures", self.counts.ls_failures as f64),
        ]
    }

    fn message(&self) -> Option<String> {
        (self.rho < self.rho_floor).then(|| {
            format!(
                "{}: the step rho = {:.3e} fell below its floor {:.3e} (rho_min {:.1e} relative \
                 to 1 / max lambda_max(W_cc))",
                self.name(),
                self.rho,
                self.rho_floor,
                self.settings.rho_min
            )
        })
    }

    fn iter_info(&self) -> IterInfo {
        let mut info = IterInfo::new();
        info.push("rho", self.rho);
        info.push("trials", self.counts.last_trials as f64);
        info
    }
}
