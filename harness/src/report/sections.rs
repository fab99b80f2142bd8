//! The text sections of a report: the header (what produced the folder, what "solved" means),
//! the note on the cost model of factorising solvers, and the comparison with a baseline.

use super::ReportOptions;
use crate::error::Result;
use crate::manifest::Manifest;
use crate::regression::{
    compare, format_comparison, format_new_rows, new_rows, BaselineRow, RegressionOptions,
};
use crate::results::{read_summary, SummaryRow};
use std::fmt::Write as _;
use std::path::Path;

/// The header: title, suite, revision, creation time and machine from the manifest (`?` where
/// there is none), the number of runs, the meaning of "solved" and a note when some runs ran
/// concurrently.
pub(super) fn header(
    md: &mut String,
    manifest: Option<&Manifest>,
    rows: &[SummaryRow],
    opts: &ReportOptions,
) {
    let text = |f: fn(&Manifest) -> &str| manifest.map_or("?", f);
    let _ = writeln!(md, "# cpbench report\n");
    let _ = writeln!(
        md,
        "Suite `{}`, git revision `{}`, created {} on {} ({} logical CPUs). {} runs.\n",
        text(|m| &m.suite),
        text(|m| &m.git_revision),
        text(|m| &m.created),
        text(|m| &m.machine.hostname),
        manifest.map_or(0, |m| m.machine.logical_cpus),
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
    timing_notes(md, manifest, rows);
    if rows.iter().any(|r| r.jobs > 1) {
        let _ = writeln!(md, "**Note:** some runs ran concurrently (`jobs` > 1); compare times only from `--jobs 1` runs.\n");
    }
}

/// What the reader must know about the times: how many solves each is the median of, the
/// runs whose repeated solves spread by more than 10 % (`(max - min) / median`), and a
/// warning when the machine was busy at the start or the end of the runs (load average above
/// the logical CPUs, or other processes above a tenth of them: [`crate::load::LoadSample`]).
pub(super) fn timing_notes(md: &mut String, manifest: Option<&Manifest>, rows: &[SummaryRow]) {
    let cpus = manifest.map_or(0, |m| m.machine.logical_cpus);
    match manifest.map(|m| (m.load_start, m.load_end)) {
        Some((Some(a), b)) => {
            let end = b.map_or("not recorded".to_string(), |b| b.describe());
            let busy = a.busy(cpus) || b.is_some_and(|b| b.busy(cpus));
            if busy {
                let _ = writeln!(
                    md,
                    "**Warning: the machine was busy** while these runs were timed (start: {}; \
                     end: {end}; {cpus} logical CPUs): times may be inflated and noisy; rerun \
                     on a quiet machine before comparing them.\n",
                    a.describe()
                );
            } else {
                let _ = writeln!(
                    md,
                    "Machine load: start {}; end {end} ({cpus} logical CPUs).\n",
                    a.describe()
                );
            }
        }
        _ => {
            let _ = writeln!(
                md,
                "The machine's load was not recorded for these runs (folder written before \
                 `load_start` existed, or by a library call): nothing says whether it was quiet.\n"
            );
        }
    }
    let timed: Vec<&SummaryRow> = rows
        .iter()
        .filter(|r| r.repeats.is_some_and(|k| k > 1))
        .collect();
    if timed.is_empty() {
        let _ = writeln!(
            md,
            "Each time is one solve (`cpbench run --repeat K` times K solves and reports their \
             median and range).\n"
        );
        return;
    }
    let k: Vec<u64> = {
        let mut v: Vec<u64> = timed.iter().filter_map(|r| r.repeats).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // the noisiest first; the list names at most 12 (every row's spread is in summary.csv)
    let mut spread: Vec<&&SummaryRow> = timed.iter().filter(|r| r.time_spread() > 0.1).collect();
    spread.sort_by(|a, b| b.time_spread().total_cmp(&a.time_spread()));
    let short = spread.iter().filter(|r| r.time_s < 1e-3).count();
    let mut noisy: Vec<String> = spread
        .iter()
        .take(12)
        .map(|r| {
            format!(
                "`{}` / `{}` ({:.0}% of {:.2e} s)",
                r.instance,
                r.solver,
                100.0 * r.time_spread(),
                r.time_s
            )
        })
        .collect();
    if spread.len() > 12 {
        noisy.push(format!("and {} more", spread.len() - 12));
    }
    let _ = writeln!(
        md,
        "Times are medians of {} solves each (columns `time_min_s`, `time_max_s` give the range).{}\n",
        k.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" or "),
        if noisy.is_empty() {
            " Every run's spread (max - min) / median is at most 10%.".to_string()
        } else {
            format!(
                " **Warning:** {} of {} runs spread by more than 10% ((max - min) / median; \
                 {short} of them take under 1 ms, where the timer and the caches dominate), the \
                 noisiest first: {}.",
                spread.len(),
                timed.len(),
                noisy.join(", ")
            )
        }
    );
}

/// Factorising and external solvers (the registry's cost model of each label's base solver,
/// read from `rows`): an iteration is a factorisation, and their N-product count says nothing
/// of their cost. Writes a note naming those of `solvers` (labels), nothing when there is none.
pub(super) fn cost_model_note(md: &mut String, solvers: &[String], rows: &[SummaryRow]) {
    let second_order: Vec<&str> = solvers
        .iter()
        .filter(|s| {
            rows.iter().find(|r| &r.solver == *s).is_some_and(|r| {
                cpbench_solvers::registry::cost_model(r.base())
                    .is_some_and(|c| c != cpbench_solvers::registry::CostModel::FirstOrder)
            })
        })
        .map(|s| s.as_str())
        .collect();
    // driven solvers (external programs, Python callables): not factorising, but uncounted
    let driven = |s: &str| {
        rows.iter().find(|r| r.solver == s).is_some_and(|r| {
            cpbench_solvers::registry::DRIVEN_PREFIXES
                .iter()
                .any(|p| r.base().starts_with(p))
        })
    };
    let (driven, second_order): (Vec<&str>, Vec<&str>) =
        second_order.into_iter().partition(|s| driven(s));
    if !driven.is_empty() {
        let _ = writeln!(
            md,
            "Iterations and N-products do not measure the cost of {}: they run as external \
             programs or callables, their iterations are their own count and their N-products \
             are not counted; their time is the solve time the program reports (Siconos: \
             the driver call alone; the program's wall time is the counter `wall_time_s`), \
             else the program's wall time, start-up and instance reading included. Compare \
             them by time. Their traces hold the start point and the answer only: the \
             figures draw them as points, not curves. They are left out of the means and \
             profiles by iterations and N-products.\n",
            driven
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !second_order.is_empty() {
        let _ = writeln!(
            md,
            "Iterations and N-products do not measure the cost of {}: each of their \
             iterations factorises a matrix (see their factorisation counters, e.g. \
             `factorizations`, `factor_time_s`, `clarabel_factor_nnz`, in the `counters` \
             column); compare them by time. They are left out of the means and profiles by \
             iterations and N-products.\n",
            second_order
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// The "Compared with" section: the regression comparison ([`compare`]) of `rows` with the
/// rows of the baseline folder `bdir`, and the rows `bdir` lacks ([`new_rows`]). Errors: `bdir/summary.csv` missing or malformed.
pub(super) fn baseline_section(md: &mut String, bdir: &Path, rows: &[SummaryRow]) -> Result<()> {
    let base_rows = read_summary(&bdir.join("summary.csv"))?;
    let base: Vec<BaselineRow> = base_rows.iter().map(BaselineRow::from_summary).collect();
    let cmp = compare(&base, rows, RegressionOptions::default());
    let _ = writeln!(
        md,
        "## Compared with {}\n\n```text\n{}{}```\n",
        bdir.display(),
        format_new_rows(&new_rows(&base, rows), false),
        format_comparison(&cmp, true)
    );
    Ok(())
}
