//! Other formulations of the stepper's contact problem, solved in the loop: the stepper
//! ([`cpbench_granular::Simulation::step`]) assembles the CCP (`min 1/2 g^T N g + r^T g`,
//! `g` in the Coulomb cones); [`FormulationSolver`] derives another formulation of the same
//! contact problem with cpbench's own machinery ([`ClassChoice::derive_from`]: the true
//! Coulomb problem, the ODE-style boxed LCP, the Stewart-Trinkle / Anitescu-Potra pyramid LCP;
//! or the CCP as it is), solves it with a registry solver ([`RegistrySolver`]) and maps the
//! solution back to contact impulses ([`ClassChoice::impulses`]: contact-interleaved, normal
//! first), which the stepper applies. One more formulation is built here:
//! [`Formulation::RegularizedCcp`], the CCP with a diagonal regularisation (Horak & Trinkle's
//! "convex" model, MuJoCo's soft convex contacts with a constant regulariser).
//!
//! Warm starts: the stepper's warm start (last step's impulses matched by body pair) is handed
//! on where the derived unknowns are the contact impulses themselves (CCP, Coulomb, BLCP,
//! regularised CCP); the pyramid LCP (unknowns `c_n`, `beta_j`, `lambda`) and the normal-block
//! LCP start cold. [`FormulationSolver::cold`] starts every formulation cold (Horak &
//! Trinkle's scripts start each step at zero).

use cpbench_granular::{ContactSolution, ContactSolver};
use cpbench_harness::generate::RegistrySolver;
use cpbench_problems::io::ClassChoice;
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::{Instance, ValidationOptions};
use cpbench_solvers::{ExecSettings, SolverError};

/// A formulation of the stepper's frictional contact problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Formulation {
    /// One of cpbench's classes, derived from the stepper's CCP with
    /// [`ClassChoice::derive_from`] (`ccp`: the CCP as it is).
    Class(ClassChoice),
    /// The CCP with `N + diag(R)`, `R_c = max(eps tr(N_cc) / 3, r_min)` on the three rows of
    /// contact `c`, same `r` and cones: the constant-regulariser form of MuJoCo's soft convex
    /// model as Horak & Trinkle's `solver_convex.m` builds it (`epsilon = 1e-3`,
    /// `r_min = 1e-5`, in impulse units: `N` in 1/kg).
    RegularizedCcp {
        /// Relative regularisation `eps` (dimensionless, `>= 0`).
        eps: f64,
        /// Smallest regularisation (1/kg, `>= 0`).
        r_min: f64,
    },
}

impl Formulation {
    /// Horak & Trinkle's convex model: `eps = 1e-3`, `r_min = 1e-5`.
    pub const HORAK_TRINKLE_CONVEX: Formulation = Formulation::RegularizedCcp {
        eps: 1e-3,
        r_min: 1e-5,
    };

    /// Whether the derived unknowns are the contact impulses (the warm start carries over).
    pub fn shares_impulses(self) -> bool {
        matches!(
            self,
            Formulation::RegularizedCcp { .. }
                | Formulation::Class(ClassChoice::Ccp | ClassChoice::Coulomb | ClassChoice::Blcp)
        )
    }

    /// The formulation's name as written in tables (`coulomb`, `lcp-pyramid:4`,
    /// `ccp+reg(1e-3)`).
    pub fn label(self) -> String {
        match self {
            Formulation::Class(c) => c.to_string(),
            Formulation::RegularizedCcp { eps, .. } => format!("ccp+reg({eps:e})"),
        }
    }

    /// The instance of this formulation derived from the stepper's CCP `ccp`. Errors: those
    /// of [`ClassChoice::derive_from`], and of [`regularized_ccp`].
    pub fn derive(self, ccp: &Instance) -> cpbench_problems::error::Result<Instance> {
        match self {
            Formulation::Class(c) => c.derive_from(ccp.clone()),
            Formulation::RegularizedCcp { eps, r_min } => regularized_ccp(ccp, eps, r_min),
        }
    }

    /// Contact impulses (length `3 nc`) of a solution `z` of the derived instance
    /// ([`ClassChoice::impulses`]; `z` itself for the regularised CCP). Errors: those of
    /// [`ClassChoice::impulses`].
    pub fn impulses(self, z: &[f64]) -> cpbench_problems::error::Result<Vec<f64>> {
        match self {
            Formulation::Class(c) => c.impulses(z),
            Formulation::RegularizedCcp { .. } => Ok(z.to_vec()),
        }
    }
}

/// The CCP `inst` with `N + diag(R)`, `R_c = max(eps tr(N_cc) / 3, r_min)` repeated on the
/// three rows of contact `c` (Horak & Trinkle 2019's convex model; [`Formulation`]). Name
/// suffix `__ccp` kept, derivation `ccp-regularized`, parameters `reg_eps`, `reg_min`.
/// Errors: [`cpbench_problems::ProblemError::WrongClass`] unless `inst` is a 3-D CCP;
/// [`cpbench_problems::ProblemError::InvalidParameter`] for a negative or non-finite `eps`
/// or `r_min`.
pub fn regularized_ccp(
    inst: &Instance,
    eps: f64,
    r_min: f64,
) -> cpbench_problems::error::Result<Instance> {
    use cpbench_problems::error::ProblemError;
    if inst.class() != cpbench_problems::ProblemClass::Ccp || inst.n() % 3 != 0 {
        return Err(ProblemError::WrongClass {
            expected: "ccp (3-D cones)".into(),
            found: inst.class().to_string(),
        });
    }
    for (name, v) in [("eps", eps), ("r_min", r_min)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(ProblemError::InvalidParameter {
                generator: "ccp-regularized".into(),
                name: name.into(),
                value: v.to_string(),
                reason: "must be finite and >= 0".into(),
            });
        }
    }
    let w = inst.csc();
    let mut t: Vec<(usize, usize, f64)> = Vec::with_capacity(w.nnz() + inst.n());
    for j in 0..w.ncols() {
        let (ri, va) = w.col(j);
        t.extend(ri.iter().zip(va).map(|(&i, &v)| (i, j, v)));
    }
    for c in 0..inst.n() / 3 {
        let b = inst.diag_block(c);
        let reg = (eps * (b[0] + b[4] + b[8]) / 3.0).max(r_min);
        t.extend((0..3).map(|s| (3 * c + s, 3 * c + s, reg)));
    }
    let n_mat = CscMatrix::from_triplets(inst.n(), inst.n(), &t)?;
    let mut prov = inst.provenance().clone();
    prov.derivation = "ccp-regularized".into();
    prov.parameters.insert("reg_eps".into(), format!("{eps:e}"));
    prov.parameters
        .insert("reg_min".into(), format!("{r_min:e}"));
    Instance::new(
        inst.name().to_string(),
        n_mat,
        inst.r().to_vec(),
        inst.constraints().clone(),
        prov,
        ValidationOptions::default(),
    )
}

/// A registry solver on a formulation derived from the stepper's CCP, as the stepper's
/// [`ContactSolver`] (module documentation).
pub struct FormulationSolver {
    /// The formulation solved.
    pub formulation: Formulation,
    solver: RegistrySolver,
    warm_start: bool,
}

impl FormulationSolver {
    /// Solver `name` of the registry (settings `settings` or defaults) under `exec`, on
    /// `formulation`, warm-started where the formulation shares the impulses. Errors: those of
    /// [`RegistrySolver::new`].
    pub fn new(
        formulation: Formulation,
        name: &str,
        settings: Option<&serde_json::Value>,
        exec: ExecSettings,
    ) -> Result<Self, SolverError> {
        Ok(Self {
            formulation,
            solver: RegistrySolver::new(name, settings, exec)?,
            warm_start: true,
        })
    }

    /// Start every solve at zero (no warm start), as Horak & Trinkle's scripts do.
    pub fn cold(mut self) -> Self {
        self.warm_start = false;
        self
    }

    /// Effective settings of the registry solver (JSON).
    pub fn settings(&self) -> &serde_json::Value {
        &self.solver.settings
    }
}

impl ContactSolver for FormulationSolver {
    /// Derive, solve, map back. Errors: a formulation that cannot be derived, the solver's
    /// errors ([`RegistrySolver`]), a solution that cannot be mapped.
    fn solve(&mut self, inst: &Instance, warm: Option<&[f64]>) -> Result<ContactSolution, String> {
        let warm = warm.filter(|_| self.warm_start && self.formulation.shares_impulses());
        let label = self.formulation.label();
        let mut sol = if self.formulation == Formulation::Class(ClassChoice::Ccp) {
            self.solver.solve(inst, warm)?
        } else {
            let derived = self
                .formulation
                .derive(inst)
                .map_err(|e| format!("formulation {label} of {}: {e}", inst.name()))?;
            self.solver.solve(&derived, warm)?
        };
        sol.gamma = self
            .formulation
            .impulses(&sol.gamma)
            .map_err(|e| format!("formulation {label}: {e}"))?;
        Ok(sol)
    }
}
