//! `cpbench report DIR`: report.md with performance profiles, shifted geometric means and
//! convergence plots.

use crate::AnyError;
use clap::Args;
use cpbench_harness::report::{report, ReportOptions};
use cpbench_problems::ResidualKind;
use std::path::PathBuf;

/// Arguments of `cpbench report`.
#[derive(Args)]
pub struct ReportArgs {
    /// Results folder of `cpbench run` (or `merge`).
    pub dir: PathBuf,
    /// Another results folder to compare with.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Peer results in the summary.csv format (e.g. from scripts/peer_siconos.py), shown side
    /// by side with this folder's rows of the same instance names.
    #[arg(long)]
    pub peer: Option<PathBuf>,
    /// Report tolerance: a run counts as solved at its first traced iterate below it
    /// (default: the run's own check).
    #[arg(long)]
    pub tol: Option<f64>,
    /// Residual of the report tolerance (default: the run's check residual).
    #[arg(long)]
    pub residual: Option<String>,
    /// Shift of the geometric mean of times, milliseconds.
    #[arg(long, default_value_t = 10.0)]
    pub shift_time_ms: f64,
    /// Shift of the geometric means of iterations and N-products.
    #[arg(long, default_value_t = 10.0)]
    pub shift_count: f64,
}

/// Write the report and print its path.
pub fn run(a: ReportArgs) -> Result<(), AnyError> {
    let residual = match &a.residual {
        Some(s) => Some(ResidualKind::parse(s).ok_or_else(|| format!("unknown residual '{s}'"))?),
        None => None,
    };
    let opts = ReportOptions {
        tol: a.tol,
        residual,
        shift_time_s: a.shift_time_ms * 1e-3,
        shift_count: a.shift_count,
        baseline: a.baseline,
        peer: a.peer,
    };
    let path = report(&a.dir, &opts)?;
    println!("wrote {}", path.display());
    Ok(())
}
