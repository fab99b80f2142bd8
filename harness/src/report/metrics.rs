//! Cost measures of the runs of one profile: outcomes (solved or not, cost to solve), ratios to
//! the best solver (performance profiles), shifted geometric means and the summary table.

use super::{ProfileCtx, ReportOptions};
use crate::error::Result;
use crate::fsutil::write_atomic;
use crate::manifest::Manifest;
use crate::names::{trace_path, FileStems};
use crate::results::{read_trace, SummaryRow, TracePoint};
use cpbench_problems::ResidualKind;
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

/// The budgets `[max_time_s, max_iter, max_matvecs]` of the manifest's executor settings
/// (`None`: no manifest, or no such budget).
pub(super) fn limits(manifest: Option<&Manifest>) -> [Option<f64>; 3] {
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

/// The summary table of a profile: per solver, success rate, correct rate and the shifted
/// geometric means of time, iterations and `N`-products, normalised so that the best solver is
/// 1.00 (a failure scored at the budget in `lim`, or at what it spent when there is none); the
/// same numbers in `report/shgeom[__<profile>].csv`. Errors: I/O errors.
pub(super) fn summary_table(
    md: &mut String,
    ctx: &ProfileCtx,
    lim: &[Option<f64>; 3],
) -> Result<()> {
    let (opts, outs, solvers, suffix, rdir) =
        (ctx.opts, &ctx.outs, ctx.solvers, &ctx.suffix, ctx.rdir);
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
    for s in solvers {
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
    for s in solvers {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
