//! `cpbench report DIR`: tables and figures an analyst can publish, from a results folder.
//!
//! Writes `DIR/report.md` and, under `DIR/report/`, every figure as PNG and SVG with the CSV
//! behind it:
//! - performance profiles (Dolan & More, Math. Program. 91, 2002) by time, iterations and
//!   `N`-products: `rho_s(tau)` = share of problems solver `s` solves within `tau` times the
//!   best solver's cost; a failure counts as an infinite ratio;
//! - shifted geometric means (qpbenchmark): `exp(mean(ln(v + shift))) - shift` per solver,
//!   normalised so that the best solver is 1.0; a failure is scored at the limit (the
//!   iteration budget; the time / `N`-product budget when one was set, otherwise what the
//!   failed run spent);
//! - success rate (the harness's check) and "correct" rate (the solver's claim of convergence
//!   agrees with the check);
//! - convergence plots per instance against iterations, `N`-products and time, and a grid
//!   overview of the suite.
//!
//! With a peer file (`--peer FILE.csv`: rows in the `summary.csv` format written by another
//! program, e.g. `scripts/peer_siconos.py`), a section "Side by side" puts the peer's rows next
//! to this folder's rows of the same instance name ([`peer_section`]); peer rows enter no
//! profile or mean (they have no traces and another stopping test).
//!
//! By default a run counts as solved when its row's check succeeded. With a report tolerance
//! (`tol`, `residual`) the cost to reach that tolerance is read from the traces instead (first
//! recorded iterate whose residual is below it), so one run at a tight tolerance yields
//! profiles at any looser one.

use crate::error::{HarnessError, Result};
use crate::fsutil::{safe_file_name, write_atomic};
use crate::merge::sort_canonical;
use crate::names::FileStems;
use crate::plot::{draw_grid, draw_plot, Axis, LinePlot, Series};
use crate::regression::{compare, format_comparison, BaselineRow, RegressionOptions};
use crate::results::{read_summary, read_trace, SummaryRow, TracePoint};
use crate::run::{group_rows, profile_title, residual_label, trace_path};
use cpbench_problems::ResidualKind;
use std::collections::BTreeMap;
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
        }
    }
}

/// The three cost measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Solver time.
    Time,
    /// Iterations.
    Iterations,
    /// `N`-products.
    Matvecs,
}

impl Metric {
    /// All metrics.
    pub const ALL: [Metric; 3] = [Metric::Time, Metric::Iterations, Metric::Matvecs];

    /// File-name / column name.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Time => "time",
            Metric::Iterations => "iterations",
            Metric::Matvecs => "matvecs",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Metric::Time => "solver time [s]",
            Metric::Iterations => "iteration",
            Metric::Matvecs => "N-products",
        }
    }
}

/// The cost of one run and whether it solved its problem.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Instance.
    pub instance: String,
    /// Solver.
    pub solver: String,
    /// Solved (by the check or the report tolerance).
    pub solved: bool,
    /// Claimed converged.
    pub claimed: bool,
    /// `[time_s, iterations, matvecs]` to solve (or spent, for a failure).
    pub cost: [f64; 3],
}

fn first_below(trace: &[TracePoint], residual: ResidualKind, tol: f64) -> Option<&TracePoint> {
    trace.iter().find(|p| p.residuals.get(residual) <= tol)
}

/// Outcomes of the rows of one profile; `stems` are the file stems of the folder's instances
/// (for the trace files).
pub fn outcomes(
    dir: &Path,
    rows: &[&SummaryRow],
    stems: &FileStems,
    opts: &ReportOptions,
) -> Result<Vec<Outcome>> {
    rows.iter()
        .map(|r| {
            let spent = [r.time_s, r.iterations as f64, r.matvecs as f64];
            let claimed = r.status == "converged";
            let (solved, cost) = match opts.tol {
                None => (r.success, spent),
                Some(tol) => {
                    let res = opts
                        .residual
                        .or_else(|| ResidualKind::parse(&r.check_residual))
                        .unwrap_or_default();
                    let p = dir.join(trace_path(&stems.of_row(r), &r.solver, &r.profile));
                    let tr = read_trace(&p)?;
                    match first_below(&tr, res, tol) {
                        Some(q) => (true, [q.time_s, q.iteration as f64, q.matvecs as f64]),
                        None => (false, spent),
                    }
                }
            };
            Ok(Outcome {
                instance: r.instance.clone(),
                solver: r.solver.clone(),
                solved,
                claimed,
                cost,
            })
        })
        .collect()
}

/// Performance profile of `metric`: per solver, the sorted finite ratios to the best solver
/// on each problem (`inf` for failures), and the number of problems.
pub fn ratios(
    outs: &[Outcome],
    solvers: &[String],
    metric: Metric,
) -> (BTreeMap<String, Vec<f64>>, usize) {
    let m = metric as usize;
    let mut by_inst: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
    for o in outs {
        by_inst.entry(&o.instance).or_default().push(o);
    }
    let mut out: BTreeMap<String, Vec<f64>> =
        solvers.iter().map(|s| (s.clone(), Vec::new())).collect();
    for os in by_inst.values() {
        // a zero cost (solved at the start point) is floored so ratios stay finite
        let floor = if metric == Metric::Time { 1e-9 } else { 1.0 };
        let best = os
            .iter()
            .filter(|o| o.solved)
            .map(|o| o.cost[m].max(floor))
            .fold(f64::INFINITY, f64::min);
        for o in os {
            let r = if o.solved {
                o.cost[m].max(floor) / best
            } else {
                f64::INFINITY
            };
            out.entry(o.solver.clone()).or_default().push(r);
        }
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| a.total_cmp(b));
    }
    (out, by_inst.len())
}

/// Shifted geometric mean `exp(mean(ln(v + shift))) - shift`.
pub fn shifted_geomean(values: &[f64], shift: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let s: f64 = values.iter().map(|v| (v + shift).ln()).sum();
    (s / values.len() as f64).exp() - shift
}

fn limits(manifest: &serde_json::Value) -> [Option<f64>; 3] {
    let e = &manifest["exec"];
    [
        e["max_time_s"].as_f64(),
        e["max_iter"].as_f64(),
        e["max_matvecs"].as_f64(),
    ]
}

fn fmt_ratio(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "-".into()
    }
}

/// Write `DIR/report.md` and `DIR/report/*`; return the path of `report.md`. The folder is
/// locked while the report is written ([`crate::lock::FolderLock`]): a folder in use by a run
/// gives [`HarnessError::Locked`].
pub fn report(dir: &Path, opts: &ReportOptions) -> Result<PathBuf> {
    let mut rows = read_summary(&dir.join("summary.csv"))?;
    let _lock = crate::lock::FolderLock::acquire(dir)?;
    let manifest: serde_json::Value = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    sort_canonical(&mut rows, &manifest);
    let lim = limits(&manifest);
    let stems = FileStems::from_rows(&rows);
    let rdir = dir.join("report");
    std::fs::create_dir_all(&rdir).map_err(|e| HarnessError::io(&rdir, e))?;
    let mut md = String::new();
    let _ = writeln!(md, "# cpbench report\n");
    let _ = writeln!(
        md,
        "Suite `{}`, git revision `{}`, created {} on {} ({} logical CPUs). {} runs.\n",
        manifest["suite"].as_str().unwrap_or("?"),
        manifest["git_revision"].as_str().unwrap_or("?"),
        manifest["created"].as_str().unwrap_or("?"),
        manifest["machine"]["hostname"].as_str().unwrap_or("?"),
        manifest["machine"]["logical_cpus"].as_u64().unwrap_or(0),
        rows.len()
    );
    match opts.tol {
        Some(t) => {
            let _ = writeln!(
                md,
                "Solved = the first recorded iterate with {} <= {t:e} (from the traces).\n",
                opts.residual
                    .map(|r| r.as_str())
                    .unwrap_or("the check residual")
            );
        }
        None => {
            let _ = writeln!(
                md,
                "Solved = the harness's own check of the returned answer (column `success`).\n"
            );
        }
    }
    if rows.iter().any(|r| r.jobs > 1) {
        let _ = writeln!(md, "**Note:** some runs ran concurrently (`jobs` > 1); compare times only from `--jobs 1` runs.\n");
    }
    let mut solvers: Vec<String> = Vec::new();
    for r in &rows {
        if !solvers.contains(&r.solver) {
            solvers.push(r.solver.clone());
        }
    }
    let mut profiles: Vec<String> = Vec::new();
    for r in &rows {
        if !profiles.contains(&r.profile) {
            profiles.push(r.profile.clone());
        }
    }
    for prof in &profiles {
        let prow: Vec<&SummaryRow> = rows.iter().filter(|r| &r.profile == prof).collect();
        let suffix = if prof == "default" {
            String::new()
        } else {
            format!("__{}", safe_file_name(prof))
        };
        let outs = outcomes(dir, &prow, &stems, opts)?;
        let tol = prow.first().map(|r| r.tol).unwrap_or(f64::NAN);
        let _ = writeln!(md, "## Profile `{prof}` (check tolerance {tol:e})\n");
        // success / correct / shifted geometric means
        let _ = writeln!(
            md,
            "| solver | success rate | correct rate | shgeom time (shift {} ms) | shgeom iterations (shift {}) | shgeom N-products (shift {}) |",
            opts.shift_time_s * 1e3,
            opts.shift_count,
            opts.shift_count
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|");
        let mut sg: BTreeMap<&str, [f64; 3]> = BTreeMap::new();
        for s in &solvers {
            let mine: Vec<&Outcome> = outs.iter().filter(|o| &o.solver == s).collect();
            let mut v = [0.0; 3];
            for m in Metric::ALL {
                let k = m as usize;
                let shift = if m == Metric::Time {
                    opts.shift_time_s
                } else {
                    opts.shift_count
                };
                let vals: Vec<f64> = mine
                    .iter()
                    .map(|o| {
                        if o.solved {
                            o.cost[k]
                        } else {
                            lim[k].unwrap_or(o.cost[k]).max(o.cost[k])
                        }
                    })
                    .collect();
                v[k] = shifted_geomean(&vals, shift);
            }
            sg.insert(s, v);
        }
        let best: Vec<f64> = (0..3)
            .map(|k| {
                sg.values()
                    .map(|v| v[k])
                    .filter(|x| x.is_finite())
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let mut sg_csv = String::from(
            "solver,success_rate,correct_rate,shgeom_time,shgeom_iterations,shgeom_matvecs\n",
        );
        for s in &solvers {
            let mine: Vec<&Outcome> = outs.iter().filter(|o| &o.solver == s).collect();
            let n = mine.len().max(1) as f64;
            let succ = mine.iter().filter(|o| o.solved).count() as f64 / n;
            let corr = mine.iter().filter(|o| o.solved == o.claimed).count() as f64 / n;
            let v = sg[s.as_str()];
            let norm: Vec<f64> = (0..3).map(|k| v[k] / best[k]).collect();
            let _ = writeln!(
                md,
                "| {s} | {:.0}% | {:.0}% | {} | {} | {} |",
                100.0 * succ,
                100.0 * corr,
                fmt_ratio(norm[0]),
                fmt_ratio(norm[1]),
                fmt_ratio(norm[2])
            );
            let _ = writeln!(
                sg_csv,
                "{s},{succ},{corr},{},{},{}",
                norm[0], norm[1], norm[2]
            );
        }
        write_atomic(&rdir.join(format!("shgeom{suffix}.csv")), sg_csv.as_bytes())?;
        let _ = writeln!(md, "\nShifted geometric means are normalised: the best solver is 1.00 ([CSV](report/shgeom{suffix}.csv)).\n");
        // Factorising and external solvers (the registry's cost model): an iteration is a
        // factorisation, and their N-product count says nothing of their cost.
        let second_order: Vec<&str> = solvers
            .iter()
            .filter(|s| {
                cpbench_solvers::registry::cost_model(s)
                    .is_some_and(|c| c != cpbench_solvers::registry::CostModel::FirstOrder)
            })
            .map(|s| s.as_str())
            .collect();
        if !second_order.is_empty() {
            let _ = writeln!(
                md,
                "Iterations and N-products do not measure the cost of {}: each of their \
                 iterations factorises a matrix (see their factorisation counters, e.g. \
                 `factorizations`, `factor_time_s`, `clarabel_factor_nnz`, in the `counters` \
                 column); compare them by time.\n",
                second_order
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        // performance profiles
        let _ = writeln!(md, "### Performance profiles\n");
        for m in Metric::ALL {
            let (rat, nprob) = ratios(&outs, &solvers, m);
            let tmax = rat
                .values()
                .flatten()
                .filter(|r| r.is_finite())
                .fold(1.0f64, |a, &b| a.max(b))
                .max(2.0)
                * 1.5;
            let mut csv = String::from("solver,tau,rho\n");
            let series: Vec<Series> = solvers
                .iter()
                .map(|s| {
                    let rs = &rat[s];
                    let np = nprob.max(1) as f64;
                    let mut pts = vec![(1.0, rs.iter().filter(|&&r| r <= 1.0).count() as f64 / np)];
                    for (i, &r) in rs.iter().enumerate() {
                        if r.is_finite() && r > 1.0 {
                            pts.push((r, pts.last().map(|p| p.1).unwrap_or(0.0)));
                            pts.push((r, (i + 1) as f64 / np));
                        }
                    }
                    pts.push((tmax, pts.last().map(|p| p.1).unwrap_or(0.0)));
                    for p in &pts {
                        let _ = writeln!(csv, "{s},{},{}", p.0, p.1);
                    }
                    Series {
                        label: s.clone(),
                        points: pts,
                        color: solvers.iter().position(|x| x == s),
                    }
                })
                .collect();
            let name = format!("profile_{}{suffix}", m.as_str());
            write_atomic(&rdir.join(format!("{name}.csv")), csv.as_bytes())?;
            let plot = LinePlot {
                title: format!(
                    "Performance profile by {} ({} problems){}",
                    m.as_str(),
                    nprob,
                    profile_title(prof)
                ),
                x_label: "tau (ratio to the best solver, log2 scale)".into(),
                y_label: "share of problems solved within tau".into(),
                series,
                hline: None,
                x_axis: Axis::Log2,
                y_axis: Axis::Linear,
                y_range: Some((0.0, 1.02)),
                legend_lower_right: true,
            };
            draw_plot(
                &plot,
                &rdir.join(format!("{name}.png")),
                &rdir.join(format!("{name}.svg")),
            )?;
            let _ = writeln!(
                md,
                "![profile by {m}](report/{name}.png)\n\n[SVG](report/{name}.svg) · [CSV](report/{name}.csv)\n",
                m = m.as_str()
            );
        }
        // convergence plots per instance, and the overview grid
        let _ = writeln!(md, "### Instances\n");
        let mut grid = Vec::new();
        for ((inst, _), group) in group_rows(&prow.iter().map(|r| (*r).clone()).collect::<Vec<_>>())
        {
            let first = group[0];
            let residual = opts
                .residual
                .or_else(|| ResidualKind::parse(&first.check_residual))
                .unwrap_or_default();
            let inst_stem = stems.of_row(first);
            let mut traces = Vec::new();
            for r in &group {
                let p = dir.join(trace_path(&inst_stem, &r.solver, &r.profile));
                if p.exists() {
                    traces.push((r.solver.clone(), read_trace(&p)?));
                }
            }
            let _ = writeln!(
                md,
                "#### {inst} ({}, n = {}, nnz = {})\n\n| solver | status | success | iterations | N-products | time [s] | {} |\n|---|---|---|---|---|---|---|",
                first.class,
                first.n,
                first.nnz,
                residual.as_str()
            );
            for r in &group {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {:.3e} | {:.2e} |",
                    r.solver,
                    r.status,
                    if r.success { "yes" } else { "no" },
                    r.iterations,
                    r.matvecs,
                    r.time_s,
                    r.residuals.get(residual)
                );
            }
            let _ = writeln!(md);
            let base = format!("{inst_stem}{suffix}");
            let mut links = Vec::new();
            for m in Metric::ALL {
                let mut csv = String::from("solver,x,residual\n");
                let series: Vec<Series> = traces
                    .iter()
                    .map(|(s, tr)| {
                        let pts: Vec<(f64, f64)> = tr
                            .iter()
                            .map(|p| {
                                let x = match m {
                                    Metric::Time => p.time_s,
                                    Metric::Iterations => p.iteration as f64,
                                    Metric::Matvecs => p.matvecs as f64,
                                };
                                (x, p.residuals.get(residual))
                            })
                            .collect();
                        for p in &pts {
                            let _ = writeln!(csv, "{s},{:e},{:e}", p.0, p.1);
                        }
                        Series {
                            label: s.clone(),
                            points: pts,
                            color: solvers.iter().position(|x| x == s),
                        }
                    })
                    .collect();
                let plot = LinePlot::convergence(
                    format!(
                        "{inst} ({}, n = {}){}",
                        first.class,
                        first.n,
                        profile_title(prof)
                    ),
                    m.label(),
                    residual_label(residual).to_string(),
                    series,
                    Some(first.tol),
                );
                let name = format!("{base}__{}", m.as_str());
                let cdir = rdir.join("convergence");
                write_atomic(&cdir.join(format!("{name}.csv")), csv.as_bytes())?;
                draw_plot(
                    &plot,
                    &cdir.join(format!("{name}.png")),
                    &cdir.join(format!("{name}.svg")),
                )?;
                if m == Metric::Iterations {
                    let _ = writeln!(md, "![{inst}](report/convergence/{name}.png)\n");
                    let mut small = plot.clone();
                    small.title = inst.clone();
                    grid.push(small);
                }
                links.push(format!(
                    "vs {}: [PNG](report/convergence/{name}.png) [SVG](report/convergence/{name}.svg) [CSV](report/convergence/{name}.csv)",
                    m.as_str()
                ));
            }
            let _ = writeln!(md, "{}\n", links.join(" · "));
        }
        let gname = format!("overview{suffix}");
        draw_grid(
            &format!("Convergence overview{}", profile_title(prof)),
            &grid,
            3,
            &rdir.join(format!("{gname}.png")),
            &rdir.join(format!("{gname}.svg")),
        )?;
        let _ = writeln!(md, "### Overview\n\n![overview](report/{gname}.png)\n");
    }
    if let Some(bdir) = &opts.baseline {
        let base_rows = read_summary(&bdir.join("summary.csv"))?;
        let base: Vec<BaselineRow> = base_rows.iter().map(BaselineRow::from_summary).collect();
        let cmp = compare(&base, &rows, RegressionOptions::default());
        let _ = writeln!(
            md,
            "## Compared with {}\n\n```text\n{}```\n",
            bdir.display(),
            format_comparison(&cmp)
        );
    }
    if let Some(pfile) = &opts.peer {
        let peer = read_summary(pfile)?;
        md.push_str(&peer_section(&rows, &peer, &pfile.display().to_string()));
    }
    let path = dir.join("report.md");
    write_atomic(&path, md.as_bytes())?;
    Ok(path)
}

fn fmt_opt(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.2e}")
    }
}

/// The "Side by side" section of a report: for every instance name of `peer` (in its order), a
/// table of `ours`' rows of that name followed by the peer rows, with status, the check
/// (`success`), iterations, time, `nat_map_rel_2`, `complementarity` (`-` where the CSV holds
/// NaN) and the counters (where a peer puts its own error measures, e.g.
/// `fc3d_error=...;siconos_error=...`). A peer row whose `n` differs from ours is flagged.
/// `origin` names the peer file in the heading.
pub fn peer_section(ours: &[SummaryRow], peer: &[SummaryRow], origin: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Side by side with {origin}\n\nRows of this folder and of the peer file with the same \
         instance name. Peer rows were produced by another program with its own stopping test \
         (see its `check_residual` and `counters`); their residual columns are recomputed by it \
         on the same instance (`-`: not computed). Times compare only between runs on one \
         machine with `jobs` = 1.\n"
    );
    let mut names: Vec<&str> = Vec::new();
    for p in peer {
        if !names.contains(&p.instance.as_str()) {
            names.push(&p.instance);
        }
    }
    for name in names {
        let mine: Vec<&SummaryRow> = ours.iter().filter(|r| r.instance == name).collect();
        let theirs: Vec<&SummaryRow> = peer.iter().filter(|r| r.instance == name).collect();
        let first = mine.first().unwrap_or(&theirs[0]);
        let _ = writeln!(
            md,
            "#### {name} ({}, n = {}, nnz = {})\n\n| solver | status | success | iterations | time [s] | nat_map_rel_2 | fc3d_error | complementarity | check | counters |\n|---|---|---|---|---|---|---|---|---|---|",
            first.class, first.n, first.nnz
        );
        for r in mine.iter().chain(&theirs) {
            let mut solver = r.solver.clone();
            if r.profile != "default" {
                solver.push_str(&format!(" ({})", r.profile));
            }
            let mut counters = r.counters.clone();
            if r.n != first.n {
                counters.push_str(&format!(" **n = {} differs**", r.n));
            }
            let _ = writeln!(
                md,
                "| {solver} | {} | {} | {} | {:.3e} | {} | {} | {} | {} <= {:.0e} | {} |",
                r.status,
                if r.success { "yes" } else { "no" },
                r.iterations,
                r.time_s,
                fmt_opt(r.residuals.nat_map_rel_2),
                fmt_opt(r.residuals.fc3d_error),
                fmt_opt(r.residuals.complementarity),
                r.check_residual,
                r.tol,
                counters
            );
        }
        if mine.is_empty() {
            let _ = writeln!(md, "\n(no run of this instance in this folder)");
        }
        let _ = writeln!(md);
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written peer row (NaN and empty-looking residuals, counters with the peer's own
    /// errors) reads with `read_summary` and lands next to our row of the same instance.
    #[test]
    fn peer_rows_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let header = crate::results::summary_header().join(",");
        let peer_csv = format!(
            "{header}\n\
             Rover4396__ccp,ccp,6,36,siconos-nsgs,,converged,yes,17,0,1.25e-4,\
             1e-9,5e-10,2.5e-9,NaN,1e-9,NaN,NaN,NaN,0e0,0e0,3e-10,3e-10,-0.5,4.5e-9,\
             ,17,fc3d_error,1e-8,default,1,,fc3d_error=4.5e-9;siconos_error=4.4e-9\n"
        );
        let p = dir.path().join("peer.csv");
        std::fs::write(&p, peer_csv).unwrap();
        let peer = read_summary(&p).unwrap();
        assert_eq!(peer.len(), 1);
        assert_eq!(peer[0].iterations, 17);
        assert!(peer[0].residuals.nat_map_rel_inf.is_nan());
        let mut ours = peer[0].clone();
        ours.solver = "pgs".into();
        ours.iterations = 123;
        ours.residuals.nat_map_rel_2 = 7e-7;
        ours.counters = String::new();
        let mut other = ours.clone();
        other.instance = "elsewhere".into();
        let md = peer_section(&[ours, other], &peer, "peer.csv");
        assert!(
            md.contains("#### Rover4396__ccp (ccp, n = 6, nnz = 36)"),
            "{md}"
        );
        let lines: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(lines.len(), 3, "{md}");
        assert!(lines[1].starts_with("| pgs | converged | yes | 123 | 1.250e-4 | 7.00e-7 |"));
        assert!(lines[2].starts_with("| siconos-nsgs | converged | yes | 17 | 1.250e-4 | 2.50e-9 | 4.50e-9 | 3.00e-10 | fc3d_error <= 1e-8 | fc3d_error=4.5e-9;siconos_error=4.4e-9 |"), "{}", lines[2]);
        assert!(!md.contains("elsewhere"));
    }

    fn o(inst: &str, solver: &str, solved: bool, it: f64) -> Outcome {
        Outcome {
            instance: inst.into(),
            solver: solver.into(),
            solved,
            claimed: solved,
            cost: [it * 1e-3, it, it],
        }
    }

    #[test]
    fn profile_ratios_and_failures() {
        let outs = vec![
            o("a", "x", true, 10.0),
            o("a", "y", true, 20.0),
            o("b", "x", false, 5.0),
            o("b", "y", true, 40.0),
        ];
        let solvers = vec!["x".to_string(), "y".to_string()];
        let (r, n) = ratios(&outs, &solvers, Metric::Iterations);
        assert_eq!(n, 2);
        assert_eq!(r["x"], vec![1.0, f64::INFINITY]);
        assert_eq!(r["y"], vec![1.0, 2.0]);
    }

    #[test]
    fn shifted_geometric_mean() {
        // exp(mean(ln(v + 10))) - 10 for v = (10, 30): sqrt(20 * 40) - 10
        let g = shifted_geomean(&[10.0, 30.0], 10.0);
        assert!((g - (800f64.sqrt() - 10.0)).abs() < 1e-12);
        assert!((shifted_geomean(&[7.0, 7.0], 1.0) - 7.0).abs() < 1e-12);
    }
}
