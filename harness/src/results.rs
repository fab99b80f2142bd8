//! Tidy result files: `summary.csv` (one row per instance x solver) and per-run traces.
//!
//! `summary.csv` columns, in this order (scripts rely on it): `instance, class, n, nnz, solver,
//! settings_hash, status` (the solver's claim), `success` (the harness's check),
//! `iterations, matvecs, time_s`, every residual of [`Residuals::NAMES`] (ending with
//! `objective`), then `instance_hash, best_iteration, check_residual, tol, message`.
//! Trace columns: `iteration, time_s, matvecs`, then [`Residuals::NAMES`].

use crate::error::{HarnessError, Result};
use crate::fsutil::write_atomic;
use cpbench_problems::Residuals;
use cpbench_solvers::IterRecord;
use std::path::Path;

/// One row of `summary.csv`.
#[derive(Clone, Debug)]
pub struct SummaryRow {
    /// Instance name.
    pub instance: String,
    /// `lcp`, `box` or `ccp`.
    pub class: String,
    /// Number of unknowns.
    pub n: usize,
    /// Stored entries of `N`.
    pub nnz: usize,
    /// Solver name.
    pub solver: String,
    /// First 16 hex digits of the SHA-256 of the solver and executor settings.
    pub settings_hash: String,
    /// The solver's claimed status.
    pub status: String,
    /// The harness's check.
    pub success: bool,
    /// Iterations run.
    pub iterations: u64,
    /// Counted `N`-products.
    pub matvecs: u64,
    /// Solver time, seconds.
    pub time_s: f64,
    /// Residuals recomputed by the harness.
    pub residuals: Residuals,
    /// Content hash of the instance.
    pub instance_hash: String,
    /// Iteration of the returned (best) iterate.
    pub best_iteration: u64,
    /// Residual used by the check.
    pub check_residual: String,
    /// Check tolerance.
    pub tol: f64,
    /// Solver message (errors), empty otherwise.
    pub message: String,
}

/// Header of `summary.csv`.
pub fn summary_header() -> Vec<&'static str> {
    let mut h = vec![
        "instance",
        "class",
        "n",
        "nnz",
        "solver",
        "settings_hash",
        "status",
        "success",
        "iterations",
        "matvecs",
        "time_s",
    ];
    h.extend(Residuals::NAMES);
    h.extend([
        "instance_hash",
        "best_iteration",
        "check_residual",
        "tol",
        "message",
    ]);
    h
}

fn fmt_f(v: f64) -> String {
    format!("{v:e}")
}

impl SummaryRow {
    /// The row as CSV fields, in [`summary_header`] order.
    pub fn to_record(&self) -> Vec<String> {
        let mut r = vec![
            self.instance.clone(),
            self.class.clone(),
            self.n.to_string(),
            self.nnz.to_string(),
            self.solver.clone(),
            self.settings_hash.clone(),
            self.status.clone(),
            if self.success { "yes" } else { "no" }.to_string(),
            self.iterations.to_string(),
            self.matvecs.to_string(),
            format!("{:.6e}", self.time_s),
        ];
        r.extend(self.residuals.values().iter().map(|&v| fmt_f(v)));
        r.extend([
            self.instance_hash.clone(),
            self.best_iteration.to_string(),
            self.check_residual.clone(),
            fmt_f(self.tol),
            self.message.clone(),
        ]);
        r
    }
}

fn csv_bytes(
    header: &[&str],
    rows: impl Iterator<Item = Vec<String>>,
    path: &Path,
) -> Result<Vec<u8>> {
    let err = |e: csv::Error| HarnessError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(&r).map_err(err)?;
    }
    w.into_inner().map_err(|e| HarnessError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Write `summary.csv` atomically.
pub fn write_summary(path: &Path, rows: &[SummaryRow]) -> Result<()> {
    let bytes = csv_bytes(&summary_header(), rows.iter().map(|r| r.to_record()), path)?;
    write_atomic(path, &bytes)
}

/// Write one trace CSV atomically.
pub fn write_trace(path: &Path, records: &[IterRecord]) -> Result<()> {
    let mut header = vec!["iteration", "time_s", "matvecs"];
    header.extend(Residuals::NAMES);
    let rows = records.iter().map(|r| {
        let mut v = vec![
            r.iteration.to_string(),
            format!("{:.6e}", r.time_s),
            r.matvecs.to_string(),
        ];
        v.extend(r.residuals.values().iter().map(|&x| fmt_f(x)));
        v
    });
    let bytes = csv_bytes(&header, rows, path)?;
    write_atomic(path, &bytes)
}
