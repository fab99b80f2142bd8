//! Termination status and solver errors.

use cpbench_problems::ProblemClass;
use serde::{Deserialize, Serialize};

/// Why a solve ended, as claimed by the executor and solver. The harness checks the answer
/// independently; this is the *claim* (`status` column of `summary.csv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The stopping residual reached the tolerance.
    Converged,
    /// The iteration budget (or the `N`-product budget) is exhausted.
    MaxIterations,
    /// The wall-clock budget is exhausted.
    MaxTime,
    /// The iterate stopped changing, or the best residual did not improve within the stall
    /// window, before reaching the tolerance.
    Stalled,
    /// The residual grew by more than the divergence factor over the initial one, or overflowed.
    Diverged,
    /// A NaN/inf appeared, or the solver hit an internal numerical failure.
    NumericalError,
    /// The solver does not support the instance's class, or refuses it under the limits of the
    /// solve (a factorisation predicted to exceed the memory budget; the message gives the
    /// predicted bytes and the budget).
    Unsupported,
    /// Lemke's method ended on a secondary ray: no blocking variable for the entering one
    /// (Cottle, Pang & Stone 1992, sec. 4.4). No solution was found; for a copositive-plus `M`
    /// this proves the LCP infeasible. Not a numerical failure.
    RayTermination,
    /// A driven solver ([`crate::driven`]) failed outright: an external program exited with a
    /// non-zero code or was killed by a signal, a Python callable raised. The message gives
    /// the code, signal or exception and the end of the program's standard error.
    Crashed,
    /// A driven solver's answer could not be used: missing or unreadable output file, or a
    /// `gamma` of the wrong length. The message names the file and what was expected.
    BadOutput,
}

impl Status {
    /// Every status, in the order of the enum.
    pub const ALL: [Status; 10] = [
        Status::Converged,
        Status::MaxIterations,
        Status::MaxTime,
        Status::Stalled,
        Status::Diverged,
        Status::NumericalError,
        Status::Unsupported,
        Status::RayTermination,
        Status::Crashed,
        Status::BadOutput,
    ];

    /// The status of a CSV value ([`Status::as_str`]); `None` for any other text.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Short snake-case name (CSV value).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Converged => "converged",
            Status::MaxIterations => "max_iterations",
            Status::MaxTime => "max_time",
            Status::Stalled => "stalled",
            Status::Diverged => "diverged",
            Status::NumericalError => "numerical_error",
            Status::Unsupported => "unsupported",
            Status::RayTermination => "ray_termination",
            Status::Crashed => "crashed",
            Status::BadOutput => "bad_output",
        }
    }

    /// A sentence for humans.
    pub fn describe(self) -> &'static str {
        match self {
            Status::Converged => "stopping residual below tolerance",
            Status::MaxIterations => "iteration or N-product budget exhausted",
            Status::MaxTime => "time budget exhausted",
            Status::Stalled => "no progress before reaching the tolerance",
            Status::Diverged => "residual diverged",
            Status::NumericalError => "numerical failure (NaN/inf or breakdown)",
            Status::Unsupported => {
                "problem class not supported by this solver, or over its memory budget"
            }
            Status::RayTermination => {
                "Lemke ended on a secondary ray: no solution found (not a numerical failure)"
            }
            Status::Crashed => {
                "the external program or callable failed (exit code, signal, exception)"
            }
            Status::BadOutput => {
                "the solver's output was missing, unreadable or of the wrong length"
            }
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Errors of solver construction and of a solve.
#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    /// A setting or the instance does not suit the solver (found during a solve).
    #[error("invalid setting {name} = {value}: {reason}")]
    InvalidSetting {
        /// Setting name.
        name: &'static str,
        /// Value given.
        value: String,
        /// Valid range.
        reason: &'static str,
    },
    /// A setting is out of its documented range (found by [`crate::settings::Validator`]).
    #[error("invalid setting {field} = {value} for {owner}: must be {range}")]
    OutOfRange {
        /// Whose setting: `solver 'pgs'`, `the executor`.
        owner: String,
        /// Field name, as in the settings JSON.
        field: &'static str,
        /// Value given.
        value: String,
        /// Allowed range, e.g. `in (0, 2)`.
        range: String,
    },
    /// An error in the settings read from a file (`--settings FILE`).
    #[error("settings file {}: {error}", path.display())]
    InFile {
        /// The settings file.
        path: std::path::PathBuf,
        /// What is wrong in it (printed in this message, not as a separate cause).
        error: Box<SolverError>,
    },
    /// No solver of this name.
    #[error("unknown solver '{0}' (known: {1})")]
    UnknownSolver(String, String),
    /// Settings could not be parsed.
    #[error("cannot parse settings of solver '{solver}': {message}")]
    BadSettings {
        /// Solver name.
        solver: String,
        /// Parser message.
        message: String,
    },
    /// A warm start of the wrong length.
    #[error("warm start has length {found}, instance has n = {expected}")]
    WarmStartSize {
        /// Expected `n`.
        expected: usize,
        /// Given length.
        found: usize,
    },
    /// The solver does not handle the instance's class (see [`crate::kernels::check_class`]).
    #[error(
        "{solver} does not support class {class} (supported: {})",
        class_list(supported)
    )]
    WrongClass {
        /// Solver name.
        solver: &'static str,
        /// The instance's class.
        class: ProblemClass,
        /// The classes the solver supports.
        supported: Vec<ProblemClass>,
    },
    /// A numerical breakdown inside the solver.
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// The solver refuses the instance under the limits of the solve, before allocating what
    /// would exceed them (e.g. a sparse factor over the memory budget); the message gives the
    /// prediction and the limit. The executor reports it as [`Status::Unsupported`].
    #[error("refused: {0}")]
    Refused(String),
    /// A driven solver ([`crate::driven::DrivenSolver`]) ended abnormally: a crash
    /// ([`Status::Crashed`]), a time-out that the harness enforced by killing the program
    /// ([`Status::MaxTime`]), unusable output ([`Status::BadOutput`]), a program that is not
    /// installed ([`Status::Unsupported`]). The executor reports `status` with `message`.
    #[error("{message}")]
    External {
        /// The status the solve ends with.
        status: Status,
        /// What happened, for the `message` column.
        message: String,
    },
    /// A definition file of external solvers (`--external FILE`) is wrong, or an `ext:` solver
    /// was asked for without one: the message of the definition error, converted where it
    /// leaves the external-solver module (`From<external::DefsError>`), so that statuses do not
    /// depend on that module.
    #[error("{0}")]
    ExternalDefs(String),
}

impl SolverError {
    /// The status a solve ends with when `init` or `step` returns this error:
    /// [`Status::Unsupported`] for [`SolverError::Refused`], the carried status for
    /// [`SolverError::External`], [`Status::NumericalError`] otherwise.
    pub fn status(&self) -> Status {
        match self {
            SolverError::Refused(_) => Status::Unsupported,
            SolverError::External { status, .. } => *status,
            _ => Status::NumericalError,
        }
    }
}

/// `lcp, box, ccp`: class names separated by commas (`none` for an empty list).
fn class_list(classes: &[ProblemClass]) -> String {
    if classes.is_empty() {
        return "none".into();
    }
    let names: Vec<&str> = classes.iter().map(|c| c.as_str()).collect();
    names.join(", ")
}
