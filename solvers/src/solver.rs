//! The one `Solver` trait every method implements.

use crate::problem::Problem;
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::ProblemClass;

/// What a step reports besides the new iterate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// Keep iterating.
    Continue,
    /// The solver cannot make progress (e.g. a zero search direction short of the tolerance).
    Stalled,
    /// The solver's own termination test ended the solve (interior-point methods, external
    /// one-shot solvers such as Clarabel). The payload is the solver's *claim*: the executor
    /// reports it as the run's status unless its own stopping test already holds (then
    /// `Converged`). The harness checks the answer independently, so a solver that claims
    /// `Converged` with a residual above the tolerance shows as claimed success, checked failure.
    Finished(crate::status::Status),
}

/// What [`Solver::step`] returns: the outcome, or an error that ends the solve as
/// [`crate::Status::NumericalError`] with its message.
pub type StepResult = Result<StepOutcome, SolverError>;

/// The identity of a solver of the true Coulomb problem alone, written inside its `impl
/// Solver`: [`Solver::name`] returning `$name` (a literal, or `self.name` for a family that
/// keeps it) and [`Solver::supports`] true for [`ProblemClass::Coulomb`] only (the QP classes
/// are refused: their cones are not the Coulomb problem's).
macro_rules! coulomb_solver {
    (self.$field:ident) => {
        fn name(&self) -> &'static str {
            self.$field
        }
        $crate::solver::coulomb_solver!(@supports);
    };
    ($name:literal) => {
        fn name(&self) -> &'static str {
            $name
        }
        $crate::solver::coulomb_solver!(@supports);
    };
    (@supports) => {
        fn supports(&self, class: cpbench_problems::ProblemClass) -> bool {
            class == cpbench_problems::ProblemClass::Coulomb
        }
    };
}
pub(crate) use coulomb_solver;

/// An iterative method for `min 1/2 gamma^T N gamma + r^T gamma, gamma in K`.
///
/// The solver keeps only its parameters and algorithm memory (momentum, step lengths, scratch
/// vectors allocated in `init`); the iterate lives in [`IterState`]; limits, timing, stopping,
/// observers and the best iterate belong to the [`crate::executor::Executor`].
/// `step` must not allocate.
pub trait Solver {
    /// Registry name (`pgs`, `jacobi`, `apgd`, `spgqp`, ...).
    fn name(&self) -> &'static str;

    /// Whether the solver handles this class. Default: the LCP alone for a general-LCP solver
    /// ([`Self::solves_general_lcp`]), else the QP classes (LCP, box QP, CCP,
    /// [`ProblemClass::is_qp`]); the true Coulomb problem is not a QP, so the Coulomb solvers
    /// (and QP solvers restricted further) override it.
    fn supports(&self, class: ProblemClass) -> bool {
        if self.solves_general_lcp() {
            class == ProblemClass::Lcp
        } else {
            class.is_qp()
        }
    }

    /// Whether the solver takes a general LCP `w = M z + q` with any square `M` (Lemke, Newton on
    /// the Fischer-Burmeister function, PSOR, enumeration). False (the default) for the QP
    /// solvers: they assume a symmetric positive semidefinite `N`, and [`crate::kernels::refusal`]
    /// refuses them an LCP whose `N` is non-symmetric or indefinite
    /// ([`cpbench_problems::Instance::definiteness`]), and any QP class with a non-symmetric `N`.
    fn solves_general_lcp(&self) -> bool {
        false
    }

    /// Whether the solver works on Coulomb cones of dimension `dim` (unknowns per contact: 3,
    /// or 2 for planar problems) itself. Default: every dimension (the block size is read from
    /// the instance; vacuous for a solver without cones); a 3-D-only method overrides it with
    /// `dim == 3`. The registry wraps every solver in [`crate::embed::Embed2d`], which solves a
    /// 2-D instance through its exact 3-D embedding when this answers `false` for 2.
    fn handles_cone_dim(&self, dim: usize) -> bool {
        let _ = dim;
        true
    }

    /// Whether the solver takes bilateral (joint) blocks: Coulomb-cone instances whose first
    /// [`cpbench_problems::ConstraintSet::joints`] blocks are free, equality rows at a solution
    /// (docs/formulation.md, "Bilateral rows"). Default `false`: [`crate::kernels::refusal`]
    /// refuses such an instance (status `unsupported`), so a solver that reads the cones'
    /// `mu` itself never treats a joint as a frictionless contact. A solver that answers
    /// `true` handles the free blocks (projection the identity, or an exact local solve).
    fn takes_joints(&self) -> bool {
        false
    }

    /// Why this solver cannot take `instance` at all, beyond its class ([`Self::supports`]):
    /// e.g. a method that needs a symmetric `W` on a non-symmetric Coulomb instance. `None`
    /// (the default) when it can. The executor ends such a solve before `init` with status
    /// `unsupported` and this reason; the harness asks before a run to list the skipped pairs.
    fn refusal(&self, _instance: &cpbench_problems::Instance) -> Option<String> {
        None
    }

    /// Prepare for a solve from `state.gamma` (already projected onto `K`): allocate scratch,
    /// estimate constants. Products spent here are counted.
    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError>;

    /// One iteration: update `state.gamma` (and `state.grad` / `state.grad_fresh` if known).
    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult;

    /// Solver-specific counters for the trace (e.g. backtracks, restarts), name and value.
    fn counters(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// A sentence for the `message` column at the end of a solve (e.g. an external solver's own
    /// status and iteration count); `None` by default.
    fn message(&self) -> Option<String> {
        None
    }

    /// Per-iteration values for the trace (written as extra columns after the residuals),
    /// read after every `step`; empty by default.
    fn iter_info(&self) -> crate::observer::IterInfo {
        crate::observer::IterInfo::new()
    }
}

/// What a solver's iterations cost, for comparing solvers fairly in reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostModel {
    /// An iteration is a few `N`-products and vector operations: iterations and counted
    /// `N`-products measure the work.
    FirstOrder,
    /// An iteration factorises a matrix (sparse KKT system, dense Jacobian): compare by time.
    Factorising,
    /// An external one-shot solver whose inner work is not counted: compare by time.
    External,
}

impl CostModel {
    /// Short snake-case name (`first_order`, `factorising`, `external`).
    pub fn as_str(self) -> &'static str {
        match self {
            CostModel::FirstOrder => "first_order",
            CostModel::Factorising => "factorising",
            CostModel::External => "external",
        }
    }
}
