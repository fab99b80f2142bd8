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
//! - for every swept setting (variants of one solver differing in one numeric setting), the
//!   cost to the tolerance against the setting, one line per instance ([`find_sweeps`]);
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
mod sweeps;

pub use metrics::{
    common_set, excluded, failure_charge, limits, measures_cost, outcomes, ratios, row_budget,
    shifted_geomean, shifted_geomeans, takers, Metric, Outcome,
};
pub use peer::{peer_section, siconos_section};
pub use scale::{is_scale_instance, scale_section};
pub use sweeps::{
    draw_sweep, find_sweeps, sweep_csv, sweep_metrics, sweep_plot, Sweep, SweepFiles,
};

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
    /// One table, mean and profile over every problem class of a settings profile (default
    /// `false`: one section per class, since a CCP and a Coulomb problem built from the same
    /// file are different problems).
    pub pool_classes: bool,
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
            pool_classes: false,
        }
    }
}

/// What the sections of one settings profile read.
struct ProfileCtx<'a> {
    /// The results folder.
    dir: &'a Path,
    /// `dir/report`, where figures and their CSV go.
    rdir: &'a Path,
    /// File-name suffix of the profile ([`profile_suffix`]): per-instance files.
    suffix: String,
    /// File-name suffix of the group: the profile's, then `-<class>` when the folder's
    /// profile holds several classes and they are not pooled (tables, profiles, overview).
    group_suffix: String,
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

/// The sections of a report: per settings profile, and per problem class of that profile
/// unless `pool` (or unless the profile holds one class only: then `None`, and the file names
/// carry no class suffix), in first-appearance order.
fn groups(rows: &[SummaryRow], pool: bool) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for prof in distinct(rows, |r| &r.profile) {
        let mine: Vec<SummaryRow> = rows.iter().filter(|r| r.profile == prof).cloned().collect();
        let classes = distinct(&mine, |r| r.class_name());
        if pool || classes.len() <= 1 {
            out.push((prof, None));
        } else {
            out.extend(classes.into_iter().map(|c| (prof.clone(), Some(c))));
        }
    }
    out
}

/// The distinct values of `key` over `rows`, in first-appearance order.
fn distinct(rows: &[SummaryRow], key: fn(&SummaryRow) -> &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        if !v.iter().any(|x| x == key(r)) {
            v.push(key(r).to_string());
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
    report_with_summary(dir, opts).map(|(p, _)| p)
}

/// [`report`], also returning the sentences of the report's one-paragraph summary (its
/// "Summary" section: one sentence per profile and class; `cpbench run` ends with them).
pub fn report_with_summary(dir: &Path, opts: &ReportOptions) -> Result<(PathBuf, Vec<String>)> {
    let along = trajectory_sections(dir)?;
    if !dir.join("summary.csv").exists() && !along.is_empty() {
        // a folder of trajectory replays or closed-loop runs only
        let path = dir.join("report.md");
        write_atomic(&path, format!("# Report\n\n{along}").as_bytes())?;
        return Ok((path, Vec::new()));
    }
    let mut rows = read_summary(&dir.join("summary.csv"))?;
    let _lock = crate::lock::FolderLock::acquire(dir)?;
    let manifest = Manifest::read(dir).ok();
    if let Some(m) = &manifest {
        sort_canonical(&mut rows, m);
    }
    // inputs that did not load are listed, not scored
    let (failed, rows): (Vec<SummaryRow>, Vec<SummaryRow>) =
        rows.into_iter().partition(|r| r.status.is_load_error());
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
    scale::scale_section(
        &mut md,
        &rows,
        manifest.as_ref(),
        (dir, &stems),
        &rdir,
        &opts.figure,
    )?;
    let solvers = distinct(&rows, |r| &r.solver);
    let mut summary: Vec<String> = Vec::new();
    // the sections go after the summary, which is known once they are written
    let head_len = md.len();
    for (prof, class) in groups(&rows, opts.pool_classes) {
        let prow: Vec<&SummaryRow> = rows
            .iter()
            .filter(|r| r.profile == prof && class.as_ref().is_none_or(|c| r.class_name() == c))
            .collect();
        let outs = outcomes(dir, &prow, &stems, opts, &lim)?;
        let tol = prow.first().map(|r| r.tol).unwrap_or(f64::NAN);
        let tol_title =
            crate::figures::tol_title(opts.tol.unwrap_or(tol), &distinct_residuals(&prow, opts));
        let suffix = profile_suffix(&prof);
        let group_suffix = match &class {
            Some(c) => format!("{suffix}-{}", crate::fsutil::safe_file_name(c)),
            None => suffix.clone(),
        };
        let ctx = ProfileCtx {
            dir,
            rdir: &rdir,
            suffix,
            group_suffix,
            rows: prow,
            outs,
            solvers: &solvers,
            stems: &stems,
            opts,
            tol_title,
        };
        match &class {
            Some(c) => {
                let _ = writeln!(
                    md,
                    "## Profile `{prof}`, class `{c}` (check tolerance {tol:e})\n"
                );
            }
            None => {
                let _ = writeln!(md, "## Profile `{prof}` (check tolerance {tol:e})\n");
            }
        }
        let line = metrics::summary_table(&mut md, &ctx)?;
        summary.push(match &class {
            Some(c) => format!("Profile `{prof}`, class `{c}`: {line}"),
            None => format!("Profile `{prof}`: {line}"),
        });
        sections::cost_model_note(&mut md, &solvers, &rows);
        metrics::failure_table(&mut md, &ctx)?;
        profiles::performance_profiles(&mut md, &ctx)?;
        md.push_str(&sweeps::sweep_section(
            &ctx.rows,
            &ctx.outs,
            &rdir,
            &ctx.group_suffix,
            &ctx.tol_title,
            &opts.figure,
        )?);
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
    md.push_str(&along);
    let paragraph = summary.join(" ");
    if !paragraph.is_empty() {
        md.insert_str(head_len, &format!("## Summary\n\n{paragraph}\n\n"));
    }
    let path = dir.join("report.md");
    write_atomic(&path, md.as_bytes())?;
    Ok((path, summary))
}

/// The sections of the solvers along a trajectory written into `dir`: the replay
/// (`replay.md` of `cpbench run --trajectory`: per solver, cold and warm, the p50 / p95 / max
/// iterations and times per step) and the closed loop (`closed_loop.md` of `cpbench
/// simulate`), each under a `##` title, its own headings one level down; empty when neither
/// file is there. Errors: an unreadable file.
fn trajectory_sections(dir: &Path) -> Result<String> {
    let mut out = String::new();
    for file in ["replay.md", "closed_loop.md"] {
        let path = dir.join(file);
        if !path.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| HarnessError::io(&path, e))?;
        for line in text.lines() {
            if line.starts_with('#') {
                out.push('#');
            }
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    Ok(out)
}

/// The sweep figures of setting `key` (`cpbench sweep-plot`): the sweeps of `key` ([`Sweep`];
/// of base solver `base` only, if given) among the rows of settings profile `profile` (default:
/// the folder's first), all classes together, in measure `m`, into `out_dir` (default
/// `dir/report`). Costs are to the run's own check, or to `opts.tol` read from the traces.
/// Errors: `summary.csv` missing or malformed, an unknown profile, no such sweep, a measure
/// that does not measure the solver's cost, I/O and plotting errors.
pub fn sweep_figures(
    dir: &Path,
    key: &str,
    base: Option<&str>,
    m: Metric,
    profile: Option<&str>,
    out_dir: Option<&Path>,
    opts: &ReportOptions,
) -> Result<Vec<SweepFiles>> {
    let mut rows = read_summary(&dir.join("summary.csv"))?;
    let manifest = Manifest::read(dir).ok();
    if let Some(m) = &manifest {
        sort_canonical(&mut rows, m);
    }
    let rows: Vec<SummaryRow> = rows
        .into_iter()
        .filter(|r| r.status != crate::run::LOAD_ERROR)
        .collect();
    let profiles = distinct(&rows, |r| &r.profile);
    let prof = match profile {
        Some(p) if profiles.iter().any(|x| x == p) => p.to_string(),
        Some(p) => {
            return Err(HarnessError::Invalid(format!(
                "--profile {p}: not in {} (profiles there: {})",
                dir.display(),
                profiles.join(", ")
            )))
        }
        None => profiles.first().cloned().unwrap_or_default(),
    };
    let prow: Vec<&SummaryRow> = rows.iter().filter(|r| r.profile == prof).collect();
    let lim = metrics::limits(manifest.as_ref());
    let stems = FileStems::from_rows(&rows);
    let outs = outcomes(dir, &prow, &stems, opts, &lim)?;
    let tol = prow.first().map(|r| r.tol).unwrap_or(f64::NAN);
    let tol_title =
        crate::figures::tol_title(opts.tol.unwrap_or(tol), &distinct_residuals(&prow, opts));
    let out = out_dir.map_or_else(|| dir.join("report"), Path::to_path_buf);
    draw_sweep(&prow, &outs, key, base, m, &out, &tol_title, &opts.figure)
}
