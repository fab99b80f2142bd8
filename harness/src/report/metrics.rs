//! Cost measures of the runs of one profile: outcomes (solved or not, cost to solve), ratios to
//! the best solver (performance profiles), shifted geometric means and the summary table.

use super::{ProfileCtx, ReportOptions};
use crate::error::Result;
use crate::fsutil::write_atomic;
use crate::manifest::Manifest;
use crate::names::{trace_path, FileStems};
use crate::results::{read_trace, RowStatus, SummaryRow, TracePoint};
use cpbench_problems::{ProblemClass, ResidualKind};
use cpbench_solvers::Status;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

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

    pub(super) fn label(self) -> &'static str {
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
    /// Problem class of the instance (`None` for an input that did not load).
    pub class: Option<ProblemClass>,
    /// Solver label.
    pub solver: String,
    /// Registry name behind the label (for the cost model).
    pub base: String,
    /// The solver's claimed status (`converged`, `max_iterations`, `stalled`, ...).
    pub status: RowStatus,
    /// The row's message (why it stopped or failed the check; a refusal's reason).
    pub message: String,
    /// Solved (by the check or the report tolerance).
    pub solved: bool,
    /// Claimed converged.
    pub claimed: bool,
    /// The solver refused the instance ([`crate::run::REFUSED`]): not a run; it enters no
    /// rate, mean or profile.
    pub refused: bool,
    /// `[time_s, iterations, matvecs]` to solve (or spent, for a failure).
    pub cost: [f64; 3],
    /// `[time_s, iterations, matvecs]` the shifted geometric means charge: `cost` when solved,
    /// the failure charge of [`failure_charge`] otherwise.
    pub charged: [f64; 3],
    /// The run's budgets `[max_time_s, max_iter, max_matvecs]` (`None`: not set).
    pub budget: [Option<f64>; 3],
    /// For a failure: the budget that bound it ([`failure_charge`]); `None` when solved or when
    /// no budget could be applied.
    pub bound_by: Option<Metric>,
}

impl Outcome {
    /// The outcome of row `r`: its instance, class, labels, status and message, whether it
    /// `solved` (by the check or the report's tolerance), its `cost`, what the means
    /// `charged`, its `budget` and the budget that bound a failure (`bound_by`).
    pub fn of_row(
        r: &SummaryRow,
        solved: bool,
        cost: [f64; 3],
        charged: [f64; 3],
        budget: [Option<f64>; 3],
        bound_by: Option<Metric>,
    ) -> Self {
        Outcome {
            instance: r.instance.clone(),
            class: r.class,
            solver: r.solver.clone(),
            base: r.base().to_string(),
            status: r.status,
            message: r.message.clone(),
            solved,
            claimed: r.status == RowStatus::Solver(Status::Converged),
            refused: r.status.is_refused(),
            cost,
            charged,
            budget,
            bound_by,
        }
    }
}

/// What a failed run is charged in the shifted geometric means (the budget rule of the
/// report): `spent` and `budget` are `[time_s, iterations, matvecs]`, a budget `None` when not
/// set. The rule follows the benchmarking convention (qpbenchmark, Mittelmann) that a failure
/// costs the budget that bound it, without charging a budget the run never met:
/// - a run stopped by a budget (it spent at least that budget: iteration cap, time limit,
///   `N`-product cap) is charged that budget in its measure and what it actually spent in the
///   others (a PGS run at the iteration cap after 0.088 s is charged 0.088 s, whatever the
///   time limit);
/// - a run that stopped early without success (stalled, diverged, numerical error, or
///   converged to a looser tolerance than the report's) is charged as if it had run on at its
///   own cost per unit until the first budget it would have met: every measure is scaled by
///   `f = min_k budget_k / spent_k` over the set budgets;
/// - a run that spent nothing measurable (0 iterations) is charged each set budget, and what it
///   spent where there is none.
///
/// Returns the charge and the binding budget (`None` in the last case).
pub fn failure_charge(spent: [f64; 3], budget: [Option<f64>; 3]) -> ([f64; 3], Option<Metric>) {
    let mut best: Option<(f64, Metric)> = None;
    for m in Metric::ALL {
        let k = m as usize;
        if let Some(b) = budget[k] {
            if spent[k] > 0.0 && b > 0.0 {
                let f = b / spent[k];
                if best.is_none_or(|(g, _)| f < g) {
                    best = Some((f, m));
                }
            }
        }
    }
    match best {
        Some((f, m)) => {
            let f = f.max(1.0);
            let mut c = spent.map(|v| v * f);
            let k = m as usize;
            c[k] = budget[k].unwrap_or(spent[k]).max(spent[k]);
            (c, Some(m))
        }
        None => {
            let mut c = spent;
            for k in 0..3 {
                c[k] = budget[k].unwrap_or(spent[k]).max(spent[k]);
            }
            (c, None)
        }
    }
}

/// The budgets `[max_time_s, max_iter, max_matvecs]` of a row: from its `settings` column
/// (the executor settings it ran with), else `fallback` (the manifest's).
pub fn row_budget(r: &SummaryRow, fallback: &[Option<f64>; 3]) -> [Option<f64>; 3] {
    let v: serde_json::Value = match serde_json::from_str(&r.settings) {
        Ok(v) => v,
        Err(_) => return *fallback,
    };
    let exec = match v.get("exec") {
        Some(e) if e.is_object() => e,
        _ => return *fallback,
    };
    let num = |k: &str| exec.get(k).and_then(|x| x.as_f64());
    [num("max_time_s"), num("max_iter"), num("max_matvecs")]
}

fn first_below(trace: &[TracePoint], residual: ResidualKind, tol: f64) -> Option<&TracePoint> {
    trace.iter().find(|p| p.residuals.get(residual) <= tol)
}

/// Outcomes of the rows of one profile; `stems` are the file stems of the folder's instances
/// (for the trace files).
/// `lim` are the manifest's budgets ([`limits`]) for rows without their own `settings`.
pub fn outcomes(
    dir: &Path,
    rows: &[&SummaryRow],
    stems: &FileStems,
    opts: &ReportOptions,
    lim: &[Option<f64>; 3],
) -> Result<Vec<Outcome>> {
    rows.iter()
        .map(|r| {
            let spent = [r.time_s, r.iterations as f64, r.matvecs as f64];
            let (solved, cost) = match opts.tol {
                _ if r.status.is_refused() => (false, spent),
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
            let budget = row_budget(r, lim);
            let (charged, bound_by) = if solved {
                (cost, None)
            } else {
                failure_charge(spent, budget)
            };
            Ok(Outcome::of_row(r, solved, cost, charged, budget, bound_by))
        })
        .collect()
}

/// Whether `metric` measures the cost of the solver whose registry name is `base`: time
/// always; iterations and `N`-products only for first-order solvers (the registry's
/// [`cpbench_solvers::registry::cost_model`]): an iteration of a factorising solver
/// factorises a matrix, an external solver's inner work is not counted, and a solver unknown
/// to the registry has no known cost model.
pub fn measures_cost(base: &str, metric: Metric) -> bool {
    metric == Metric::Time
        || cpbench_solvers::registry::cost_model(base)
            == Some(cpbench_solvers::registry::CostModel::FirstOrder)
}

/// Why `metric` does not measure the cost of solver `base` (`None`: it does).
pub fn excluded_reason(base: &str, metric: Metric) -> Option<&'static str> {
    use cpbench_solvers::registry::CostModel;
    if measures_cost(base, metric) {
        return None;
    }
    Some(match cpbench_solvers::registry::cost_model(base) {
        Some(CostModel::Factorising) => "factorising: each iteration factorises a matrix",
        Some(CostModel::External) => "external: its inner work is not counted",
        _ => "not in the registry: cost model unknown",
    })
}

/// The solvers (labels, in `solvers` order) whose cost `metric` does not measure
/// (`excluded_reason`), with the reason.
pub fn excluded(
    outs: &[Outcome],
    solvers: &[String],
    metric: Metric,
) -> Vec<(String, &'static str)> {
    solvers
        .iter()
        .filter_map(|s| {
            let o = outs.iter().find(|o| &o.solver == s)?;
            excluded_reason(&o.base, metric).map(|why| (s.clone(), why))
        })
        .collect()
}

/// Performance profile of `metric`: per solver whose cost `metric` measures
/// ([`measures_cost`]; the others have no entry), the sorted ratios to the best of those
/// solvers on each problem it accepted (`inf` for failures), and the number of problems.
/// Refusals ([`Outcome::refused`]) are not runs: a solver has no ratio on a problem it
/// refused (its profile is over the problems it took: `rho_s(tau)` = share of those solved
/// within `tau`), and a problem every solver refused is not counted.
pub fn ratios(
    outs: &[Outcome],
    solvers: &[String],
    metric: Metric,
) -> (BTreeMap<String, Vec<f64>>, usize) {
    let m = metric as usize;
    let mut by_inst: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
    for o in outs
        .iter()
        .filter(|o| !o.refused && measures_cost(&o.base, metric))
    {
        by_inst.entry(&o.instance).or_default().push(o);
    }
    let gone = excluded(outs, solvers, metric);
    let mut out: BTreeMap<String, Vec<f64>> = solvers
        .iter()
        .filter(|s| !gone.iter().any(|(g, _)| g == *s))
        .map(|s| (s.clone(), Vec::new()))
        .collect();
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

/// The solvers of `solvers` that accepted at least one of `outs` (in `solvers` order): the
/// rows of the summary table. A solver that refused everything is named on the refusals line
/// only.
pub fn takers(outs: &[Outcome], solvers: &[String]) -> Vec<String> {
    solvers
        .iter()
        .filter(|s| outs.iter().any(|o| &o.solver == *s && !o.refused))
        .cloned()
        .collect()
}

/// The common set: the instances (in first-appearance order) that every one of `solvers` ran
/// (none refused, none missing). The shifted geometric means of the summary table are over
/// these, so that no solver gains by refusing a problem.
pub fn common_set(outs: &[Outcome], solvers: &[String]) -> Vec<String> {
    let mut insts: Vec<&str> = Vec::new();
    for o in outs {
        if !insts.contains(&o.instance.as_str()) {
            insts.push(&o.instance);
        }
    }
    insts
        .into_iter()
        .filter(|i| {
            solvers.iter().all(|s| {
                outs.iter()
                    .any(|o| o.instance == *i && &o.solver == s && !o.refused)
            })
        })
        .map(String::from)
        .collect()
}

/// The budgets `[max_time_s, max_iter, max_matvecs]` of the manifest's executor settings
/// (`None`: no manifest, or no such budget).
pub fn limits(manifest: Option<&Manifest>) -> [Option<f64>; 3] {
    match manifest {
        Some(m) => [
            m.exec.max_time_s,
            Some(m.exec.max_iter as f64),
            m.exec.max_matvecs.map(|v| v as f64),
        ],
        None => [None; 3],
    }
}

fn fmt_ratio(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "-".into()
    }
}

/// Shifted geometric means per solver of the charged costs `[time, iterations, N-products]`
/// ([`Outcome::charged`]: the cost to solve, or the failure charge of [`failure_charge`]), with
/// `shift_time_s` for times and `shift_count` for counts, over the outcomes given that the
/// solver accepted (refusals are skipped; pass the outcomes of [`common_set`] to compare
/// solvers on the same problems); NaN where the measure does not measure the solver's cost
/// ([`measures_cost`]) or the solver accepted none of them.
pub fn shifted_geomeans(
    outs: &[Outcome],
    solvers: &[String],
    shift_time_s: f64,
    shift_count: f64,
) -> BTreeMap<String, [f64; 3]> {
    let mut sg = BTreeMap::new();
    for s in solvers {
        let mine: Vec<&Outcome> = outs
            .iter()
            .filter(|o| &o.solver == s && !o.refused)
            .collect();
        let mut v = [f64::NAN; 3];
        for m in Metric::ALL {
            let k = m as usize;
            if mine.iter().any(|o| !measures_cost(&o.base, m)) {
                continue;
            }
            let shift = if m == Metric::Time {
                shift_time_s
            } else {
                shift_count
            };
            let vals: Vec<f64> = mine.iter().map(|o| o.charged[k]).collect();
            v[k] = shifted_geomean(&vals, shift);
        }
        sg.insert(s.clone(), v);
    }
    sg
}

fn fmt_budget(b: &[Option<f64>; 3]) -> String {
    format!(
        "iteration cap {}, {}, {}",
        b[1].map_or("none".into(), |v| format!("{v}")),
        b[0].map_or("no time limit".into(), |v| format!("time limit {v} s")),
        b[2].map_or("no N-product cap".into(), |v| format!("N-product cap {v}"))
    )
}

fn budget_name(m: Option<Metric>) -> &'static str {
    match m {
        Some(Metric::Time) => "time limit",
        Some(Metric::Iterations) => "iteration cap",
        Some(Metric::Matvecs) => "N-product cap",
        None => "no budget (spent nothing)",
    }
}

/// The summary table of a group (one settings profile and, unless pooled, one problem class):
/// per solver that accepted at least one instance, how many it took and refused, its success
/// rate and "correct" rate over the runs it took (refusals are not runs), and the shifted
/// geometric means of time, iterations and `N`-products ([`shifted_geomeans`]) over the
/// common set ([`common_set`]: the instances every solver of the table took), normalised so
/// that the best solver is 1.00 (`n/a` where the measure does not measure the solver's cost or
/// the common set is empty); the same numbers in `report/shgeom<suffix>.csv`. Solvers that
/// refused every instance of the group are named below the table. Errors: I/O errors.
pub(super) fn summary_table(md: &mut String, ctx: &ProfileCtx) -> Result<String> {
    let (opts, outs, suffix, rdir) = (ctx.opts, &ctx.outs, &ctx.group_suffix, ctx.rdir);
    let table = takers(outs, ctx.solvers);
    let common = common_set(outs, &table);
    let n_inst = {
        let mut v: Vec<&str> = outs.iter().map(|o| o.instance.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let _ = writeln!(
        md,
        "| solver | took | refused | success rate | correct rate | shgeom time (shift {} ms) | shgeom iterations (shift {}) | shgeom N-products (shift {}) |",
        opts.shift_time_s * 1e3,
        opts.shift_count,
        opts.shift_count
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    let on_common: Vec<Outcome> = outs
        .iter()
        .filter(|o| common.contains(&o.instance))
        .cloned()
        .collect();
    let sg = shifted_geomeans(&on_common, &table, opts.shift_time_s, opts.shift_count);
    let best: Vec<f64> = (0..3)
        .map(|k| {
            sg.values()
                .map(|v| v[k])
                .filter(|x| x.is_finite())
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let mut sg_csv = String::from(
        "solver,took,refused,success_rate,correct_rate,common_set,shgeom_time,shgeom_iterations,shgeom_matvecs\n",
    );
    for s in &table {
        let mine: Vec<&Outcome> = outs.iter().filter(|o| &o.solver == s).collect();
        let took: Vec<&&Outcome> = mine.iter().filter(|o| !o.refused).collect();
        let refused = mine.len() - took.len();
        let n = took.len() as f64;
        let succ = took.iter().filter(|o| o.solved).count() as f64 / n;
        let corr = took.iter().filter(|o| o.solved == o.claimed).count() as f64 / n;
        let v = sg[s.as_str()];
        let norm: Vec<f64> = (0..3).map(|k| v[k] / best[k]).collect();
        let cell = |k: usize| {
            if v[k].is_nan() {
                "n/a".to_string()
            } else {
                fmt_ratio(norm[k])
            }
        };
        let _ = writeln!(
            md,
            "| {s} | {} | {refused} | {:.0}% | {:.0}% | {} | {} | {} |",
            took.len(),
            100.0 * succ,
            100.0 * corr,
            cell(0),
            cell(1),
            cell(2)
        );
        let _ = writeln!(
            sg_csv,
            "{s},{},{refused},{succ},{corr},{},{},{},{}",
            took.len(),
            common.len(),
            norm[0],
            norm[1],
            norm[2]
        );
    }
    write_atomic(&rdir.join(format!("shgeom{suffix}.csv")), sg_csv.as_bytes())?;
    let line = summary_line(outs, &table, &sg, &best, common.len(), n_inst);
    let common_note = if common.len() == n_inst {
        format!("every solver above took all {n_inst} instances")
    } else if common.is_empty() {
        format!(
            "no instance of the {n_inst} was taken by every solver above, so there are no means \
             (compare them per class, or run the solvers that take the same instances)"
        )
    } else {
        format!(
            "the means are over the {} of {n_inst} instances that every solver above took (the \
             common set: {}), so that no solver gains by refusing; success and correct rates are \
             over the runs each solver took",
            common.len(),
            common
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let _ = writeln!(
        md,
        "\nRefusals (status `unsupported`: a class the solver does not take) are not runs: they \
         enter no rate, mean or profile; {common_note}. Shifted geometric means are normalised: \
         the best solver is 1.00 ([CSV](report/shgeom{suffix}.csv)); `n/a`: iterations and \
         N-products do not measure that solver's cost. A failure is charged the budget that \
         bound it (see \"Budgets and failures\" below).\n"
    );
    let none: Vec<&String> = ctx
        .solvers
        .iter()
        .filter(|s| !table.contains(s))
        .filter(|s| outs.iter().any(|o| &o.solver == *s))
        .collect();
    if !none.is_empty() {
        let _ = writeln!(
            md,
            "Refused every instance here: {}.\n",
            none.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(line)
}
/// One sentence on a report section, for the report's summary and the console: the solvers
/// by shifted geometric mean of time over the common set (normalised, best first), who solved
/// every run it took, who failed how many, who refused how many.
fn summary_line(
    outs: &[Outcome],
    table: &[String],
    sg: &BTreeMap<String, [f64; 3]>,
    best: &[f64],
    n_common: usize,
    n_inst: usize,
) -> String {
    let mut parts = Vec::new();
    let mut by_time: Vec<(&String, f64)> = table
        .iter()
        .map(|s| (s, sg[s.as_str()][0] / best[0]))
        .filter(|(_, v)| v.is_finite())
        .collect();
    by_time.sort_by(|a, b| a.1.total_cmp(&b.1));
    if !by_time.is_empty() && n_common > 0 {
        parts.push(format!(
            "by time (shifted geometric mean over the {n_common} instance{} all took, best = 1) {}",
            if n_common == 1 { "" } else { "s" },
            by_time
                .iter()
                .map(|(s, v)| format!("{s} {}", fmt_ratio(*v)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut all = Vec::new();
    let mut failed = Vec::new();
    let mut refused = Vec::new();
    for s in table {
        let mine: Vec<&Outcome> = outs.iter().filter(|o| &o.solver == s).collect();
        let took = mine.iter().filter(|o| !o.refused).count();
        let bad = mine.iter().filter(|o| !o.refused && !o.solved).count();
        if took > 0 && bad == 0 {
            all.push(s.as_str().to_string());
        } else if bad > 0 {
            failed.push(format!("{s} {bad} of {took}"));
        }
        if mine.len() > took {
            refused.push(format!("{s} {}", mine.len() - took));
        }
    }
    if all.len() == table.len() && all.len() > 3 {
        parts.push(format!(
            "all {} solvers solved every run they took",
            all.len()
        ));
    } else if !all.is_empty() {
        parts.push(format!("solved every run they took: {}", all.join(", ")));
    }
    if !failed.is_empty() {
        parts.push(format!("failed: {}", failed.join(", ")));
    }
    if !refused.is_empty() {
        parts.push(format!("refused: {}", refused.join(", ")));
    }
    let plural = if n_inst == 1 { "" } else { "s" };
    format!("{n_inst} instance{plural}; {}.", parts.join("; "))
}

/// The "Budgets and failures" section of a profile: the budgets the runs had, the charging
/// rule of [`failure_charge`], and per failure its status, what it spent, what it was charged
/// and which budget bound it; the same table in `report/failures[__<profile>].csv`.
/// Errors: I/O errors.
pub(super) fn failure_table(md: &mut String, ctx: &ProfileCtx) -> Result<()> {
    let (outs, suffix, rdir) = (&ctx.outs, &ctx.group_suffix, ctx.rdir);
    let _ = writeln!(md, "### Budgets and failures\n");
    let mut budgets: Vec<String> = Vec::new();
    for o in outs.iter() {
        let b = fmt_budget(&o.budget);
        if !budgets.contains(&b) {
            budgets.push(b);
        }
    }
    let _ = writeln!(
        md,
        "Budgets per run: {}.\n\n\
         Charging rule (shifted geometric means): a solved run costs what it took to solve. A failed \
         run is charged the budget that bound it in that budget's measure and what it actually \
         spent in the others (a run at the iteration cap is charged the time it used, never a \
         time limit it did not meet). A run that stopped early without success (stalled, \
         diverged, numerical error, or converged only to a looser tolerance than the report's) \
         is charged as if it had gone on at its own cost per iteration until the first budget \
         it would have met (every measure scaled by the same factor). Performance profiles count \
         every failure as never solved (ratio infinity), whatever it was charged.\n",
        budgets.join("; ")
    );
    let fails: Vec<&Outcome> = outs.iter().filter(|o| !o.solved && !o.refused).collect();
    let mut csv = String::from(
        "instance,solver,status,spent_time_s,spent_iterations,spent_matvecs,charged_time_s,charged_iterations,charged_matvecs,bound_by,message\n",
    );
    if fails.is_empty() {
        let _ = writeln!(md, "No failures.\n");
    } else {
        let _ = writeln!(
            md,
            "| instance | solver | status | why (the row's message) | spent: time [s], iterations, N-products | charged: time [s], iterations, N-products | bound by |\n|---|---|---|---|---|---|---|"
        );
        for o in &fails {
            let early = o.bound_by.is_some_and(|m| {
                let k = m as usize;
                o.budget[k].is_some_and(|b| o.cost[k] < b)
            });
            let bound = if early {
                format!("{} (extrapolated)", budget_name(o.bound_by))
            } else {
                budget_name(o.bound_by).to_string()
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {:.3e}, {}, {} | {:.3e}, {:.0}, {:.0} | {bound} |",
                o.instance,
                o.solver,
                o.status,
                o.message.replace('|', "\\|"),
                o.cost[0],
                o.cost[1],
                o.cost[2],
                o.charged[0],
                o.charged[1],
                o.charged[2]
            );
            let _ = writeln!(
                csv,
                "{},{},{},{:e},{},{},{:e},{},{},{},{}",
                o.instance,
                o.solver,
                o.status,
                o.cost[0],
                o.cost[1],
                o.cost[2],
                o.charged[0],
                o.charged[1],
                o.charged[2],
                bound.replace(' ', "_"),
                csv_field(&o.message)
            );
        }
        let _ = writeln!(md, "\n[CSV](report/failures{suffix}.csv)\n");
    }
    write_atomic(&rdir.join(format!("failures{suffix}.csv")), csv.as_bytes())?;
    refusal_lines(md, outs, ctx.solvers);
    Ok(())
}

/// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or a newline.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One line per solver that refused instances of the group: how many, which, and the reason
/// (the message of its first refusal). Refusals are not failures: they cost nothing and are in
/// no table above.
fn refusal_lines(md: &mut String, outs: &[Outcome], solvers: &[String]) {
    let mut lines = Vec::new();
    for s in solvers {
        let mine: Vec<&Outcome> = outs
            .iter()
            .filter(|o| &o.solver == s && o.refused)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let insts: Vec<String> = mine.iter().map(|o| format!("`{}`", o.instance)).collect();
        let why = if mine[0].message.is_empty() {
            String::new()
        } else {
            format!(": {}", mine[0].message)
        };
        lines.push(format!(
            "- `{s}` refused {} instance(s) ({}){why}",
            mine.len(),
            insts.join(", ")
        ));
    }
    if !lines.is_empty() {
        let _ = writeln!(
            md,
            "Refusals (not runs, not failures; in no rate, mean or profile):\n\n{}\n",
            lines.join("\n")
        );
    }
}
