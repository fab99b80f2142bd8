//! `ppa`: the proximal point algorithm around the semismooth Newton family, for the true
//! Coulomb problem (Rockafellar 1976, SIAM J. Control Optim. 14, "Monotone operators and the
//! proximal point algorithm"; Acary, Bremond & Huber 2018, "On solving contact problems with
//! Coulomb friction: formulations and numerical comparisons", sec. 5, where the PPA solvers
//! are the most robust at 1e-8 on the hard FCLib sets; Siconos' `SICONOS_FRICTION_3D_PROX`).
//!
//! Notation as in [`crate::nsn`]: `u = W r + q` is cpbench's `u = N gamma + r`, the reaction
//! `r` our `gamma`. Around a centre `r_k` the proximal subproblem is the Coulomb problem with
//! `W + alpha_k I` and `q - alpha_k r_k`: the same law with a better conditioned (for
//! `alpha_k > 0` strongly monotone on the normal part) operator, whose solution is `r_k`
//! exactly when `r_k` solves the original problem. Each subproblem is solved inexactly by the
//! semismooth Newton method of [`crate::nsn`] (its function, line search and `rho` settings,
//! `W` as stored, sparse LU), warm-started at `r_k`:
//!
//! 1. **New centre.** The error `e_k = ||r_k - P_K(r_k - u~_k)|| / ||q||` (the natural map
//!    with De Saxce's velocity `u~ = u + mu ||u_T|| e_n` and unit step, Siconos'
//!    `fc3d_compute_error` without the scaling by `||q||` when `||q|| = 0`; one product), and
//!    `alpha_k = sigma e_k^nu` (Siconos' defaults `sigma = 5`, `nu = 1`), times `min(1,
//!    wbar)` with `wbar` the mean of `W`'s diagonal (setting `scaled`, on by default; off it
//!    is Siconos' rule): the regularisation fades as the iterate converges, so the last
//!    subproblems are the original one and Newton converges fast there.
//! 2. **Newton steps** on the subproblem, one per iteration of this solver, until its merit
//!    `||F_alpha||` has fallen by the factor `inner_ratio` from its value at `r_k` (the
//!    adaptive inner tolerance of Siconos, error / 10), then step 1 at the new point.
//! 3. **Failure.** When the subproblem is not solved within `inner_max_iter` Newton steps, or
//!    Newton stalls on it, the next centre is the current point and `alpha` grows tenfold
//!    (Siconos' rule) instead of following step 1's formula.
//!
//! One iteration is one Newton step (the executor's stopping test runs after each); the
//! counters say how many centres were taken (`centres`), how many subproblems failed
//! (`inner_failures`), the last `alpha` (`alpha`) and the Newton counters of [`crate::nsn`]
//! (`factorisations`, `halvings`, `gradient_steps`). 3-D contacts; 2-D instances through the
//! exact 3-D embedding ([`crate::embed`]).

use crate::kernels::coulomb_mu;
use crate::nsn::{functions, Function, Nsn, NsnSettings};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;

use serde::{Deserialize, Serialize};

/// Settings of [`Ppa`]. Defaults: Siconos' `PROX` (`sigma = 5`, `nu = 1`, inner tolerance
/// error / 10, `alpha` times 10 after a failed subproblem) but for `scaled`, at most 50
/// Newton steps per subproblem, the Alart-Curnier function
/// with [`NsnSettings::ARMIJO`] (Armijo, 20 halvings; not the `nsn-*` default, Goldstein-Price).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PpaSettings {
    /// The contact function of the inner Newton method.
    pub function: Function,
    /// `sigma` of `alpha_k = sigma e_k^nu` (`> 0`).
    pub sigma: f64,
    /// `nu` of `alpha_k = sigma e_k^nu` (`> 0`; 1: `alpha` proportional to the error).
    pub nu: f64,
    /// A subproblem is solved once its merit `||F_alpha||` fell by this factor (`> 1`).
    pub inner_ratio: f64,
    /// Largest number of Newton steps on one subproblem before it counts as failed (`>= 1`).
    pub inner_max_iter: u32,
    /// Factor applied to `alpha` after a failed subproblem (`> 1`).
    pub alpha_growth: f64,
    /// `alpha_k = sigma e_k^nu min(1, wbar)` with `wbar` the mean of `W`'s diagonal (`true`,
    /// the default: where `W`'s diagonal is small, e.g. heavy bodies, the proximal term does
    /// not swamp `W`), or `alpha_k = sigma e_k^nu` exactly as Siconos (`false`). On the 18
    /// public 3-D and 2-D files at 1e-8, `true` took the same number of Newton steps as
    /// `false` on 15 and fewer on 3 (CubeH8 10 instead of 252, Rover4396 13 instead of 107,
    /// NESpheres_10_1 6 instead of 7).
    pub scaled: bool,
    /// Settings of the inner Newton method (those of `nsn-*`); missing fields take
    /// [`NsnSettings::ARMIJO`]'s values: Armijo, 20 halvings).
    #[serde(deserialize_with = "NsnSettings::deserialize_over_armijo")]
    pub nsn: NsnSettings,
}

impl Default for PpaSettings {
    fn default() -> Self {
        Self {
            function: Function::AlartCurnier,
            sigma: 5.0,
            nu: 1.0,
            inner_ratio: 10.0,
            inner_max_iter: 50,
            alpha_growth: 10.0,
            scaled: true,
            nsn: NsnSettings::ARMIJO,
        }
    }
}

impl SolverSettings for PpaSettings {
    const SOLVER: &'static str = "ppa";

    fn check(&self, v: &mut Validator) {
        v.positive("sigma", self.sigma)
            .positive("nu", self.nu)
            .greater("inner_ratio", self.inner_ratio, 1.0)
            .at_least("inner_max_iter", self.inner_max_iter.into(), 1)
            .greater("alpha_growth", self.alpha_growth, 1.0);
    }
}

/// The proximal point algorithm around semismooth Newton (module documentation).
pub struct Ppa {
    settings: PpaSettings,
    nsn: Nsn,
    /// Velocity and natural-map scratch of the error `e_k` (length `n`).
    u: Vec<f64>,
    f: Vec<f64>,
    alpha: f64,
    /// `||q||`, the scale of the error `e_k` (set in `init`).
    norm_q: f64,
    /// The factor of `alpha`: `min(1, mean of W's diagonal)`, or 1 (`scaled`).
    unit: f64,
    /// Newton steps on the current subproblem; `None` before the first centre.
    inner: Option<u32>,
    /// The merit `1/2 ||F_alpha||^2` that ends the current subproblem.
    target: f64,
    centres: u64,
    inner_failures: u64,
}

impl Ppa {
    /// The PPA solver. Errors: invalid settings (its own or the inner Newton method's).
    pub fn new(settings: PpaSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        let nsn = Nsn::with_function(settings.function, settings.nsn.clone())?;
        Ok(Self {
            settings,
            nsn,
            u: Vec::new(),
            f: Vec::new(),
            alpha: 0.0,
            norm_q: 0.0,
            unit: 1.0,
            inner: None,
            target: 0.0,
            centres: 0,
            inner_failures: 0,
        })
    }

    /// Take the next centre at the iterate the next step starts from (its `alpha` by the
    /// error there), as after `init`: a hybrid ([`crate::hybrid`]) hands over its iterate.
    pub fn restart(&mut self) {
        self.inner = None;
    }

    /// The merit `1/2 ||F_alpha||^2` of the current subproblem at the start of the last Newton
    /// step ([`Nsn::merit`]).
    pub fn merit(&self) -> f64 {
        self.nsn.merit()
    }

    /// The error `e = ||r - P_K(r - u~)|| / ||q||` at `r` (one product).
    fn error(&mut self, problem: &Problem, r: &[f64], mu: &[f64]) -> f64 {
        problem.gradient(r, &mut self.u);
        let mut e2 = 0.0;
        for (c, &m) in mu.iter().enumerate() {
            let o = 3 * c;
            let fc = &mut self.f[o..o + 3];
            let (rc, uc) = (&r[o..o + 3], &self.u[o..o + 3]);
            functions::eval(Function::NaturalMap, rc, uc, m, [1.0, 1.0], fc, None);
            e2 += fc.iter().map(|v| v * v).sum::<f64>();
        }
        if self.norm_q > f64::EPSILON {
            e2.sqrt() / self.norm_q
        } else {
            e2.sqrt()
        }
    }

    /// A new centre at `state.gamma`: `alpha` by the error (or grown after a failure), the
    /// subproblem set, its inner target from its merit at the centre.
    fn new_centre(
        &mut self,
        problem: &Problem,
        state: &mut IterState,
        failed: bool,
    ) -> Result<(), SolverError> {
        let mu = coulomb_mu(self, problem.instance())?;
        let e = self.error(problem, &state.gamma, mu);
        self.alpha = if failed {
            self.inner_failures += 1;
            self.alpha * self.settings.alpha_growth
        } else {
            self.settings.sigma * e.powf(self.settings.nu) * self.unit
        };
        self.nsn.set_proximal(problem, self.alpha, &state.gamma);
        self.centres += 1;
        self.inner = Some(0);
        // no target before the first step has measured the merit at the centre
        self.target = -1.0;
        Ok(())
    }
}

impl Solver for Ppa {
    crate::solver::coulomb_solver!("ppa");

    /// As its Newton method: 3-D contacts, 2-D through the embedding.
    fn handles_cone_dim(&self, dim: usize) -> bool {
        self.nsn.handles_cone_dim(dim)
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        self.nsn.init(problem, state)?;
        self.u = vec![0.0; problem.n()];
        self.f = vec![0.0; problem.n()];
        self.alpha = 0.0;
        self.unit = 1.0;
        let inst = problem.instance();
        self.norm_q = cpbench_problems::linalg::norm2(inst.r());
        let nc = problem.n() / 3;
        if self.settings.scaled && nc > 0 {
            let trace: f64 = (0..nc)
                .map(|c| {
                    let b = inst.diag_block(c);
                    b[0] + b[4] + b[8]
                })
                .sum();
            let wbar = trace / (3 * nc) as f64;
            if wbar > 0.0 && wbar.is_finite() {
                self.unit = wbar.min(1.0);
            }
        }
        self.inner = None;
        self.centres = 0;
        self.inner_failures = 0;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        if self.inner.is_none() {
            self.new_centre(problem, state, false)?;
        }
        loop {
            let out = self.nsn.step_unless(problem, state, self.target)?;
            let steps = self.inner.get_or_insert(0);
            if *steps == 0 {
                // the merit at the centre sets the subproblem's target: ||F|| / inner_ratio
                self.target = self.nsn.merit() / (self.settings.inner_ratio.powi(2));
            }
            match out {
                // solved (or already solved at the centre): a new centre, then its first step
                None => self.new_centre(problem, state, false)?,
                Some(StepOutcome::Continue) => {
                    *steps += 1;
                    if *steps >= self.settings.inner_max_iter {
                        self.new_centre(problem, state, true)?;
                    }
                    return Ok(StepOutcome::Continue);
                }
                Some(_) => {
                    self.new_centre(problem, state, true)?;
                    return Ok(StepOutcome::Continue);
                }
            }
        }
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut c = vec![
            ("centres", self.centres as f64),
            ("inner_failures", self.inner_failures as f64),
            ("alpha", self.alpha),
        ];
        c.extend(
            self.nsn
                .counters()
                .into_iter()
                .filter(|(k, _)| *k != "pattern_nnz"),
        );
        c
    }
}
