//! De Saxce's fixed point: any CCP solver becomes a solver of the true Coulomb problem
//! (docs/formulation.md section 2; De Saxce & Feng 1991, "New inequality and functional for
//! contact with friction: the implicit standard material approach", Mech. Struct. Mach. 19;
//! Acary & Brogliato 2008, section 13.3; Acary, Cadoux, Lemarechal & Malick 2011, CMAME 200,
//! "A formulation of the linear discrete Coulomb friction problem via convex optimization").
//!
//! Notation of fclib: `u = W r + q` is cpbench's `u = N gamma + r` (`W = N`, the reaction `r`
//! is our unknown `gamma`, fclib's `q` our linear term, `lin` in the code).
//! With `s_c = mu_c ||u_T,c||`, the Coulomb problem `u = W r + q`, `r in K`,
//! `u + s e_n in K^*`, `r . (u + s e_n) = 0` is, for `s` fixed, the CCP with the shifted data
//! `q_n + s`. Outer iteration `k` (one executor step):
//!
//! ```text
//! u = W r_k + q;  s_c = mu_c ||u_T,c||
//! r_{k+1} = CCP-solve(W, q + s e_n) from r_k,  inner tolerance tol_k (relative natural map)
//! tol_{k+1} = max(inner_tol_min, inner_tol_factor * tol_k)
//! ```
//!
//! The inner solve runs the inner solver under its own [`Executor`] (warm-started from the
//! previous outer iterate); its products are added to the outer count, its iterations to the
//! `inner_iterations` counter. The outer executor's time includes the inner executor's residual
//! monitoring (one product per inner iteration). The fixed point needs a symmetric `W` (the CCP
//! is a QP): `init` fails on a non-symmetric one. Convergence of the outer loop is not
//! guaranteed in general (it holds for small `mu`, Acary et al. 2011); on failure the outer
//! executor reports `stalled` or `max_iterations`.

use crate::executor::{ExecSettings, Executor};
use crate::kernels::coulomb_mu;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::{SolverError, Status};
use cpbench_problems::{Instance, ProblemClass, ResidualKind};
use serde::{Deserialize, Serialize};

/// Settings of [`DeSaxce`]. Defaults: inner tolerance `1e-4`, tightened by `0.1` per outer
/// iteration down to `1e-12`; at most 5000 inner iterations per outer one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeSaxceSettings {
    /// Settings of the inner CCP solver (its settings struct as JSON; `None` = defaults).
    pub inner: Option<serde_json::Value>,
    /// Inner tolerance of the first outer iteration (relative natural map), `> 0`.
    pub inner_tol_start: f64,
    /// Factor applied to the inner tolerance after each outer iteration, in `(0, 1]`.
    pub inner_tol_factor: f64,
    /// Floor of the inner tolerance, `> 0`.
    pub inner_tol_min: f64,
    /// Inner iteration budget per outer iteration (`>= 1`).
    pub inner_max_iter: u64,
}

impl Default for DeSaxceSettings {
    fn default() -> Self {
        Self {
            inner: None,
            inner_tol_start: 1e-4,
            inner_tol_factor: 0.1,
            inner_tol_min: 1e-12,
            inner_max_iter: 5000,
        }
    }
}

impl SolverSettings for DeSaxceSettings {
    const SOLVER: &'static str = "desaxce";

    fn check(&self, v: &mut Validator) {
        v.positive("inner_tol_start", self.inner_tol_start)
            .positive("inner_tol_min", self.inner_tol_min)
            .in_open_closed("inner_tol_factor", self.inner_tol_factor, 0.0, 1.0)
            .at_least("inner_max_iter", self.inner_max_iter, 1);
    }
}

/// De Saxce's fixed point around an inner CCP solver ([`ProblemClass::Coulomb`] only).
pub struct DeSaxce {
    name: &'static str,
    settings: DeSaxceSettings,
    inner: Box<dyn Solver + Send>,
    ccp: Option<Instance>,
    u: Vec<f64>,
    shifted: Vec<f64>,
    inner_tol: f64,
    inner_iterations: u64,
    last_inner: Option<Status>,
}

impl DeSaxce {
    /// The driver called `name` (e.g. `desaxce-apgd`) around `inner`. Errors on invalid
    /// settings, or when `inner` does not solve CCPs.
    pub fn new(
        name: &'static str,
        inner: Box<dyn Solver + Send>,
        settings: DeSaxceSettings,
    ) -> Result<Self, SolverError> {
        settings.validate()?;
        if !inner.supports(ProblemClass::Ccp) {
            return Err(SolverError::InvalidSetting {
                name: "inner",
                value: inner.name().to_string(),
                reason: "the inner solver must support the CCP class",
            });
        }
        Ok(Self {
            name,
            inner_tol: settings.inner_tol_start,
            settings,
            inner,
            ccp: None,
            u: Vec::new(),
            shifted: Vec::new(),
            inner_iterations: 0,
            last_inner: None,
        })
    }
}

impl Solver for DeSaxce {
    crate::solver::coulomb_solver!(self.name);

    /// 3-D contacts only: the shift `s = mu ||u_T||` reads two tangential components.
    fn handles_cone_dim(&self, dim: usize) -> bool {
        dim == 3
    }

    fn refusal(&self, instance: &cpbench_problems::Instance) -> Option<String> {
        (instance.class() == ProblemClass::Coulomb && !instance.is_symmetric()).then(|| {
            let (relative, ..) = instance.n_mat().asymmetry();
            format!(
                "{}: W is not symmetric (relative asymmetry {relative:.1e}); De Saxce's CCP \
                 steps need a symmetric W (load with --symmetrize)",
                self.name
            )
        })
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        let ccp = inst
            .ccp_relaxation()
            .map_err(|_| SolverError::InvalidSetting {
                name: "W",
                value: "non-symmetric".into(),
                reason: "De Saxce's CCP steps need a symmetric W (load with --symmetrize)",
            })?;
        self.ccp = Some(ccp);
        self.u = vec![0.0; problem.n()];
        self.shifted = vec![0.0; problem.n()];
        self.inner_tol = self.settings.inner_tol_start;
        self.inner_iterations = 0;
        self.last_inner = None;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let mu = coulomb_mu(self, inst)?;
        let Some(ccp) = self.ccp.as_mut() else {
            return Err(SolverError::InvalidSetting {
                name: "init",
                value: "missing".into(),
                reason: "step called before init",
            });
        };
        problem.gradient(&state.gamma, &mut self.u);
        let lin = inst.r();
        for (c, &m) in mu.iter().enumerate() {
            let o = 3 * c;
            self.shifted[o] = lin[o] + m * self.u[o + 1].hypot(self.u[o + 2]);
            self.shifted[o + 1] = lin[o + 1];
            self.shifted[o + 2] = lin[o + 2];
        }
        ccp.replace_r(&self.shifted)
            .map_err(|e| SolverError::InvalidSetting {
                name: "shifted q",
                value: e.to_string(),
                reason: "the shifted CCP data must be finite",
            })?;
        let exec = Executor::new(ExecSettings {
            tol: self.inner_tol,
            residual: Some(ResidualKind::NatMapRel2),
            max_iter: self.settings.inner_max_iter,
            ..ExecSettings::default()
        });
        let res = exec.run(self.inner.as_mut(), ccp, Some(&state.gamma), &mut [])?;
        problem.add_matvecs(res.matvecs);
        self.inner_iterations += res.iterations;
        self.last_inner = Some(res.status);
        state.gamma.copy_from_slice(&res.gamma);
        self.inner_tol =
            (self.inner_tol * self.settings.inner_tol_factor).max(self.settings.inner_tol_min);
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("inner_iterations", self.inner_iterations as f64),
            ("inner_tol", self.inner_tol),
        ]
    }

    fn message(&self) -> Option<String> {
        self.last_inner.map(|s| {
            format!(
                "last inner {} solve: {}; {} inner iterations in all",
                self.inner.name(),
                s,
                self.inner_iterations
            )
        })
    }
}
