//! Typed errors of the harness.

use std::path::PathBuf;

/// Errors of suites, runs and reports.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// Reading or validating an instance failed.
    #[error(transparent)]
    Problem(#[from] cpbench_problems::ProblemError),
    /// Building or running a solver failed.
    #[error(transparent)]
    Solver(#[from] cpbench_solvers::SolverError),
    /// A file-system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A CSV file could not be written or read.
    #[error("{}: {message}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A suite definition is invalid.
    #[error("suite {}: {message}", path.display())]
    Suite {
        /// The suite file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Drawing a plot failed.
    #[error("plot {}: {message}", path.display())]
    Plot {
        /// The image file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A trajectory folder is incomplete or inconsistent (`crate::trajectory`): the file, the
    /// step when one is concerned, and what is wrong.
    #[error("{}{}: {message}", path.display(), step.map(|s| format!(" (step {s})")).unwrap_or_default())]
    Trajectory {
        /// The file (the index, a step's instance or contacts file).
        path: std::path::PathBuf,
        /// The simulation step, when the error concerns one.
        step: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// A run configuration is inconsistent (e.g. two solver variants with one label).
    #[error("{0}")]
    Invalid(String),
    /// Another process holds the output folder's lock ([`crate::lock::FolderLock`]).
    #[error(
        "output folder {} is in use by another cpbench process ({holder}); wait for it to \
         finish, or, if that process no longer runs, remove {}",
        dir.display(),
        lock.display()
    )]
    Locked {
        /// The folder.
        dir: PathBuf,
        /// Who holds the lock (pid, host, start time, command).
        holder: String,
        /// The lock file.
        lock: PathBuf,
    },
}

impl HarnessError {
    /// Wrap an I/O error with its path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HarnessError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias of the harness.
pub type Result<T> = std::result::Result<T, HarnessError>;

/// The message of `e` then one `\n  caused by: CAUSE` per cause in its chain, skipping the
/// causes whose text is already contained in what was written (wrappers such as
/// `"{path}: {source}"` repeat their source), so that every message appears once. What the
/// command line prints after `error: `, and the message of the Python exceptions.
pub fn message_with_causes(e: &dyn std::error::Error) -> String {
    let mut printed = e.to_string();
    let mut out = printed.clone();
    let mut src = e.source();
    while let Some(s) = src {
        let text = s.to_string();
        if !text.is_empty() && !printed.contains(&text) {
            out.push_str(&format!("\n  caused by: {text}"));
            printed.push('\n');
            printed.push_str(&text);
        }
        src = s.source();
    }
    out
}
