//! `cpbench report DIR`: tables and figures an analyst can publish, from a results folder.
//!
//! Writes `DIR/report.md` and, under `DIR/report/`, every figure as PNG and SVG with the CSV
//! behind it:
//! - performance profiles (Dolan & More, Math. Program. 91, 2002) by time, iterations and
//!   `N`-products: `rho_s(tau)` = share of problems solver `s` solves within `tau` times the
//!   best solver's cost; a failure counts as an infinite ratio;
//! - shifted geometric means (qpbenchmark): `exp(mean(ln(v + shift))) - shift` per solver,
//!   normalised so that the best solver is 1.0; a failure is charged the budget that bound it
//!   and what it actually spent in the other measures ([`failure_charge`]; a run at the
//!   iteration cap is charged the time it used, never a time limit it did not meet); the
//!   "Budgets and failures" table states every failure's charge;
//! - profiles and means by iterations and `N`-products cover only the solvers whose cost those
//!   counts measure (first-order, [`measures_cost`]); the report names the others;
//! - success rate (the harness's check) and "correct" rate (the solver's claim of convergence
//!   agrees with the check);
//! - convergence plots per instance against iterations, `N`-products and time, and a grid
//!   overview of the suite;
//! - for runs of the `scale` suite, a "Scale" section: time per iteration, time per
//!   `N`-product against the bandwidth bound `operator_bytes / triad bandwidth`, and peak
//!   memory against contacts (`report/scale.png`, with a table).
//!
//! With a peer file (`--peer FILE.csv`: rows in the `summary.csv` format written by another
//! program, e.g. `scripts/peer_siconos.py`), a section "Side by side" puts the peer's rows next
//! to this folder's rows of the same instance name ([`peer_section`]); peer rows enter no
//! profile or mean (they have no traces and another stopping test). Rows of Siconos' solvers run
//! inside the harness (`siconos:*`, through the external-solver protocol) get the same section
//! without a peer file, and also enter the profiles and means like every other row (their
//! answers are checked by the harness).
//!
//! By default a run counts as solved when its row's check succeeded. With a report tolerance
//! (`tol`, `residual`) the cost to reach that tolerance is read from the traces instead (first
//! recorded iterate whose residual is below it), so one run at a tight tolerance yields
//! profiles at any looser one.

//!
//! Layout: this module reads the folder and orchestrates; every section is one function in a
//! private submodule: `sections` (header, cost-model note, baseline comparison), `metrics`
//! (outcomes, ratios, shifted geometric means and the summary table), `profiles` (performance
//! profiles), `instances` (per-instance tables, convergence plots, overview grid), `peer` (side
//! by side with a peer file), `scale` (cost against size for the `scale` suite).

mod instances;
mod metrics;
mod peer;
mod profiles;
mod scale;
mod sections;

pub use metrics::{
    excluded, failure_charge, limits, measures_cost, outcomes, ratios, row_budget, shifted_geomean,
    shifted_geomeans, Metric, Outcome,
};
pub use peer::{peer_section, siconos_section};

use crate::error::{HarnessError, Result};
use crate::fsutil::write_atomic;
use crate::manifest::Manifest;
use crate::names::{profile_suffix, FileStems};
use crate::order::sort_canonical;
use crate::plot::FigureOptions;
use crate::results::{read_summary, SummaryRow};
use cpbench_problems::ResidualKind;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of a report.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Report tolerance; `None`: use each row's own check.
    pub tol: Option<f64>,
    /// Residual of the report tolerance (default: each row's check residual).
    pub residual: Option<ResidualKind>,
    /// Shift of the geometric mean of times, seconds (default 0.01 = 10 ms).
    pub shift_time_s: f64,
    /// Shift of the geometric means of iterations and `N`-products (default 10).
    pub shift_count: f64,
    /// A baseline results folder to compare with.
    pub baseline: Option<PathBuf>,
    /// A peer `summary.csv`-format file shown side by side ([`peer_section`]).
    pub peer: Option<PathBuf>,
    /// Size, resolution and x scale of the figures.
    pub figure: FigureOptions,
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            tol: None,
            residual: None,
            shift_time_s: 0.01,
            shift_count: 10.0,
            baseline: None,
            peer: None,
            figure: FigureOptions::default(),
        }
    }
}

/// What the sections of one settings profile read.
struct ProfileCtx<'a> {
    /// The results folder.
    dir: &'a Path,
    /// `dir/report`, where figures and their CSV go.
    rdir: &'a Path,
    /// File-name suffix of the profile ([`profile_suffix`]).
    suffix: String,
    /// The rows of the profile, in canonical order.
    rows: Vec<&'a SummaryRow>,
    /// Their outcomes ([`outcomes`]).
    outs: Vec<Outcome>,
    /// Solvers of the folder, in column order.
    solvers: &'a [String],
    /// File stems of the folder's instances.
    stems: &'a FileStems,
    /// Report options.
    opts: &'a ReportOptions,
    /// The tolerance and residual(s) of the profile, for figure titles
    /// ([`crate::figures::tol_title`]).
    tol_title: String,
}

/// The residuals that decide "solved" in `rows`: the report's, else each row's check
/// residual, distinct, in first-appearance order.
fn distinct_residuals(rows: &[&SummaryRow], opts: &ReportOptions) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        let name = opts
            .residual
            .map(|k| k.as_str().to_string())
            .unwrap_or_else(|| r.check_residual.clone());
        if !v.contains(&name) {
            v.push(name);
        }
    }
    v
}

/// The distinct values of `key` over `rows`, in first-appearance order.
fn distinct(rows: &[SummaryRow], key: fn(&SummaryRow) -> &String) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        if !v.contains(key(r)) {
            v.push(key(r).clone());
        }
    }
    v
}

/// Write `DIR/report.md` and `DIR/report/*`; return the path of `report.md`. The folder is
/// locked while the report is written ([`crate::lock::FolderLock`]): a folder in use by a run
/// gives [`HarnessError::Locked`]. Errors: `summary.csv` missing or malformed, a malformed
/// trace, a missing baseline or peer file, I/O and plotting errors; an unreadable
/// `manifest.json` is not an error (the header shows `?`, rows keep their file order).
pub fn report(dir: &Path, opts: &ReportOptions) -> Result<PathBuf> {
    let mut rows = read_summary(&dir.join("summary.csv"))?;
    let _lock = crate::lock::FolderLock::acquire(dir)?;
    let manifest = Manifest::read(dir).ok();
    if let Some(m) = &manifest {
        sort_canonical(&mut rows, m);
    }
    // inputs that did not load are listed, not scored
    let (failed, rows): (Vec<SummaryRow>, Vec<SummaryRow>) = rows
        .into_iter()
        .partition(|r| r.status == crate::run::LOAD_ERROR);
    let lim = metrics::limits(manifest.as_ref());
    let stems = FileStems::from_rows(&rows);
    let rdir = dir.join("report");
    std::fs::create_dir_all(&rdir).map_err(|e| HarnessError::io(&rdir, e))?;
    let mut md = String::new();
    sections::header(&mut md, manifest.as_ref(), &rows, opts);
    if !failed.is_empty() {
        let _ = writeln!(
            md,
            "## Inputs that did not load\n\n{} input(s) of the last run did not load and are \
             in no table or profile below:\n",
            failed.len()
        );
        for r in &failed {
            let _ = writeln!(md, "- `{}`: {}", r.instance, r.message);
        }
        md.push('\n');
    }
    scale::scale_section(&mut md, &rows, manifest.as_ref(), &rdir, &opts.figure)?;
    let solvers = distinct(&rows, |r| &r.solver);
    for prof in &distinct(&rows, |r| &r.profile) {
        let prow: Vec<&SummaryRow> = rows.iter().filter(|r| &r.profile == prof).collect();
        let outs = outcomes(dir, &prow, &stems, opts, &lim)?;
        let tol = prow.first().map(|r| r.tol).unwrap_or(f64::NAN);
        let tol_title =
            crate::figures::tol_title(opts.tol.unwrap_or(tol), &distinct_residuals(&prow, opts));
        let ctx = ProfileCtx {
            dir,
            rdir: &rdir,
            suffix: profile_suffix(prof),
            rows: prow,
            outs,
            solvers: &solvers,
            stems: &stems,
            opts,
            tol_title,
        };
        let _ = writeln!(md, "## Profile `{prof}` (check tolerance {tol:e})\n");
        metrics::summary_table(&mut md, &ctx)?;
        sections::cost_model_note(&mut md, &solvers, &rows);
        metrics::failure_table(&mut md, &ctx)?;
        profiles::performance_profiles(&mut md, &ctx)?;
        instances::instance_sections(&mut md, &ctx)?;
    }
    if let Some(bdir) = &opts.baseline {
        sections::baseline_section(&mut md, bdir, &rows)?;
    }
    if let Some(pfile) = &opts.peer {
        let peer = read_summary(pfile)?;
        md.push_str(&peer_section(&rows, &peer, &pfile.display().to_string()));
    }
    // Siconos' rows of this folder (`siconos:*`, run through the external-solver protocol)
    // side by side with the folder's other rows of the same instances
    let (siconos, own): (Vec<SummaryRow>, Vec<SummaryRow>) = rows
        .iter()
        .filter(|r| r.status != crate::run::LOAD_ERROR)
        .cloned()
        .partition(|r| r.base().starts_with("siconos:"));
    if !siconos.is_empty() {
        md.push_str(&siconos_section(&own, &siconos));
    }
    let path = dir.join("report.md");
    write_atomic(&path, md.as_bytes())?;
    Ok(path)
}
