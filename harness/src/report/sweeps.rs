//! Parameter sweeps: the cost to the tolerance against a swept setting.
//!
//! A *sweep* is a set of at least two variants of one base solver (the summary's
//! `base_solver`) whose settings (the `settings` column: `{"exec": {..}, "settings": {..},
//! "solver": ..}`) differ in one numeric setting only, e.g. the variants of
//! `pgs@omega=0.6:1.4:0.1` together with plain `pgs` (`omega = 1`). Its figure draws, per
//! instance, the cost to the tolerance (iterations, `N`-products where they measure the
//! solver's cost, time) against the setting's value; a run that did not reach the tolerance is a
//! cross at the top edge; a refusal is left out. The CSV next to the figure holds the points.

use super::metrics::{measures_cost, Metric, Outcome};
use crate::error::Result;
use crate::fsutil::{safe_file_name, write_atomic};
use crate::plot::{draw_plot, Axis, FigureOptions, LinePlot, Series};
use crate::results::SummaryRow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One swept setting of one base solver.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// Registry solver behind the variants (`pgs`).
    pub base: String,
    /// The swept setting: a solver setting by its name (`omega`), an executor setting as
    /// `exec.<name>` (`exec.max_iter`).
    pub key: String,
    /// The other settings of the sweep that are not the same in every variant of `base` in the
    /// rows (`gll_memory=5`), empty when the sweep is the only one of its key.
    pub fixed: String,
    /// `(variant label, value)`, by increasing value.
    pub variants: Vec<(String, f64)>,
}

impl Sweep {
    /// File stem of the sweep's files: `sweep-<base>-<key>[-<k>]` (`k`: the sweep's position
    /// among the sweeps of the same base and key, from 2 on).
    pub fn stem(&self, k: usize) -> String {
        let mut s = format!(
            "sweep-{}-{}",
            safe_file_name(&self.base),
            safe_file_name(&self.key)
        );
        if k > 1 {
            let _ = write!(s, "-{k}");
        }
        s
    }
}

/// Flattened settings: key -> value as JSON text.
type Flat = BTreeMap<String, String>;

/// The flattened settings of a row (`omega`, `exec.max_iter`, ... -> value as JSON text),
/// without the `solver` name. A row without settings JSON gives an empty map.
fn flat_settings(r: &SummaryRow) -> Flat {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&r.settings) else {
        return BTreeMap::new();
    };
    let mut out = Vec::new();
    crate::regression::flatten("", &v, &mut out);
    out.into_iter()
        .filter(|(k, _)| k != "solver")
        .map(|(k, v)| match k.strip_prefix("settings.") {
            Some(rest) => (rest.to_string(), v),
            None => (k, v),
        })
        .collect()
}

/// The sweeps among `rows`: for every base solver with at least two variants, and every
/// setting, the groups of at least two variants that agree in every other setting and hold
/// distinct numbers in it. Bases in row order, keys in name order; a row without settings
/// JSON joins no sweep.
pub fn find_sweeps(rows: &[&SummaryRow]) -> Vec<Sweep> {
    // (base, [(label, settings)]) in row order, one entry per label
    let mut bases: Vec<(String, Vec<(String, Flat)>)> = Vec::new();
    for r in rows {
        let base = r.base().to_string();
        let i = match bases.iter().position(|(b, _)| *b == base) {
            Some(i) => i,
            None => {
                bases.push((base, Vec::new()));
                bases.len() - 1
            }
        };
        if !bases[i].1.iter().any(|(l, _)| *l == r.solver) {
            let s = flat_settings(r);
            if !s.is_empty() {
                bases[i].1.push((r.solver.clone(), s));
            }
        }
    }
    let mut out = Vec::new();
    for (base, vars) in &bases {
        if vars.len() < 2 {
            continue;
        }
        let keys: std::collections::BTreeSet<&String> =
            vars.iter().flat_map(|(_, s)| s.keys()).collect();
        // the settings that are not the same in every variant of the base
        let varying: Vec<&String> = keys
            .iter()
            .copied()
            .filter(|k| {
                let first = vars[0].1.get(*k);
                vars.iter().any(|(_, s)| s.get(*k) != first)
            })
            .collect();
        for key in varying.iter().copied() {
            // group by every other setting
            type Group<'a> = (BTreeMap<&'a String, &'a String>, Vec<(String, f64)>);
            let mut groups: Vec<Group> = Vec::new();
            for (label, s) in vars {
                let Some(v) = s.get(key).and_then(|v| v.parse::<f64>().ok()) else {
                    continue;
                };
                if !v.is_finite() {
                    continue;
                }
                let rest: BTreeMap<&String, &String> =
                    s.iter().filter(|(k, _)| *k != key).collect();
                match groups.iter_mut().find(|(g, _)| *g == rest) {
                    Some((_, members)) => {
                        if !members.iter().any(|m| m.1 == v) {
                            members.push((label.clone(), v));
                        }
                    }
                    None => groups.push((rest, vec![(label.clone(), v)])),
                }
            }
            for (rest, mut members) in groups {
                if members.len() < 2 {
                    continue;
                }
                members.sort_by(|a, b| a.1.total_cmp(&b.1));
                let fixed = varying
                    .iter()
                    .filter(|k| **k != key)
                    .filter_map(|k| rest.get(*k).map(|v| format!("{k}={v}")))
                    .collect::<Vec<_>>()
                    .join(", ");
                out.push(Sweep {
                    base: base.clone(),
                    key: key.clone(),
                    fixed,
                    variants: members,
                });
            }
        }
    }
    out
}

/// The measures a sweep of `base` is drawn in: iterations and `N`-products where they measure
/// the solver's cost ([`measures_cost`]), and time.
pub fn sweep_metrics(base: &str) -> Vec<Metric> {
    [Metric::Iterations, Metric::Matvecs, Metric::Time]
        .into_iter()
        .filter(|m| measures_cost(base, *m))
        .collect()
}

/// One point of a sweep: an instance, a variant, the setting's value and its outcome.
struct Point<'a> {
    instance: &'a str,
    label: &'a str,
    value: f64,
    out: &'a Outcome,
}

fn points<'a>(sweep: &'a Sweep, outs: &'a [Outcome]) -> Vec<Point<'a>> {
    outs.iter()
        .filter(|o| !o.refused)
        .filter_map(|o| {
            let (label, value) = sweep.variants.iter().find(|(l, _)| *l == o.solver)?;
            Some(Point {
                instance: &o.instance,
                label,
                value: *value,
                out: o,
            })
        })
        .collect()
}

/// The CSV of a sweep: `instance,solver,setting,value,solved,status,iterations,matvecs,time_s`,
/// one line per run (refusals left out) in the order of `outs`; the costs are the cost to the
/// tolerance when solved, what the run spent otherwise.
pub fn sweep_csv(sweep: &Sweep, outs: &[Outcome]) -> String {
    let mut csv =
        String::from("instance,solver,setting,value,solved,status,iterations,matvecs,time_s\n");
    for p in points(sweep, outs) {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{}",
            p.instance,
            p.label,
            sweep.key,
            p.value,
            if p.out.solved { "yes" } else { "no" },
            p.out.status,
            p.out.cost[1],
            p.out.cost[2],
            p.out.cost[0]
        );
    }
    csv
}

fn metric_index(m: Metric) -> usize {
    match m {
        Metric::Time => 0,
        Metric::Iterations => 1,
        Metric::Matvecs => 2,
    }
}

/// The figure of a sweep in measure `m`: one line per instance through its solved runs, a
/// cross at the top edge per run that was not solved. The y axis is logarithmic when the
/// solved costs span more than a decade (instances of different sizes), else linear from zero;
/// the x axis is logarithmic when the (positive) values span more than two decades.
pub fn sweep_plot(sweep: &Sweep, outs: &[Outcome], m: Metric, tol_title: &str) -> LinePlot {
    let pts = points(sweep, outs);
    let mut instances: Vec<&str> = Vec::new();
    for p in &pts {
        if !instances.contains(&p.instance) {
            instances.push(p.instance);
        }
    }
    let k = metric_index(m);
    let series: Vec<Series> = instances
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let mut points: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.instance == *inst && p.out.solved)
                .map(|p| (p.value, p.out.cost[k]))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                label: inst.to_string(),
                points,
                color: Some(i),
            }
        })
        .collect();
    let failed: Vec<(String, f64)> = pts
        .iter()
        .filter(|p| !p.out.solved)
        .map(|p| (p.instance.to_string(), p.value))
        .collect();
    let span = |v: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = v
            .filter(|x| *x > 0.0 && x.is_finite())
            .fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(x), b.max(x)));
        (lo, hi)
    };
    let (ylo, yhi) = span(&mut series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let y_log = yhi > 10.0 * ylo;
    let (xlo, xhi) = span(&mut sweep.variants.iter().map(|v| v.1));
    let x_log = sweep.variants.iter().all(|v| v.1 > 0.0) && xhi > 100.0 * xlo;
    let what = match m {
        Metric::Time => "solver time [s]",
        Metric::Iterations => "iterations",
        Metric::Matvecs => "N-products",
    };
    let fixed = if sweep.fixed.is_empty() {
        String::new()
    } else {
        format!(", {}", sweep.fixed)
    };
    LinePlot {
        title: format!(
            "{} to the tolerance against {} ({}{fixed}; {tol_title})",
            what, sweep.key, sweep.base
        ),
        x_label: if x_log {
            format!("{} (log scale)", sweep.key)
        } else {
            sweep.key.clone()
        },
        y_label: if y_log {
            format!("{what} (log scale)")
        } else {
            what.to_string()
        },
        series,
        hline: None,
        x_axis: if x_log { Axis::Log10 } else { Axis::Linear },
        y_axis: if y_log { Axis::Log10 } else { Axis::Linear },
        // a linear cost axis starts at zero
        y_range: (!y_log && yhi > 0.0).then_some((0.0, 1.05 * yhi)),
        best_so_far: false,
        markers_at_points: true,
        failed,
    }
}

/// Draw every sweep of `outs` (rows of one report section) into `rdir`: per sweep its CSV
/// (`<stem><suffix>.csv`, [`sweep_csv`]) and one figure per measure
/// (`<stem>-<measure><suffix>.png/.svg`); returns the markdown of the "Sweeps" subsection
/// (empty when there is no sweep). Errors: I/O and plotting errors.
pub(super) fn sweep_section(
    rows: &[&SummaryRow],
    outs: &[Outcome],
    rdir: &Path,
    suffix: &str,
    tol_title: &str,
    fig: &FigureOptions,
) -> Result<String> {
    let sweeps = find_sweeps(rows);
    if sweeps.is_empty() {
        return Ok(String::new());
    }
    let mut md = String::from(
        "### Sweeps\n\nCost to the tolerance against each swept setting (variants of one solver \
         differing in that setting only), one line per instance; a cross at the top edge is a \
         run that did not reach the tolerance.\n\n",
    );
    let mut seen: Vec<(String, String)> = Vec::new();
    for sw in &sweeps {
        seen.push((sw.base.clone(), sw.key.clone()));
        let k = seen
            .iter()
            .filter(|x| x.0 == sw.base && x.1 == sw.key)
            .count();
        let stem = format!("{}{suffix}", sw.stem(k));
        write_atomic(
            &rdir.join(format!("{stem}.csv")),
            sweep_csv(sw, outs).as_bytes(),
        )?;
        let values: Vec<String> = sw.variants.iter().map(|v| format!("{}", v.1)).collect();
        let _ = writeln!(
            md,
            "`{}`, `{}` = {}{} ({} variants) · [CSV](report/{stem}.csv)\n",
            sw.base,
            sw.key,
            values.join(", "),
            if sw.fixed.is_empty() {
                String::new()
            } else {
                format!(" with {}", sw.fixed)
            },
            sw.variants.len()
        );
        for m in sweep_metrics(&sw.base) {
            let name = format!("{}-{}{suffix}", sw.stem(k), m.as_str());
            let plot = sweep_plot(sw, outs, m, tol_title);
            draw_plot(
                &plot,
                &rdir.join(format!("{name}.png")),
                &rdir.join(format!("{name}.svg")),
                fig,
            )?;
            let _ = writeln!(
                md,
                "![{} against {}](report/{name}.png)\n",
                m.as_str(),
                sw.key
            );
        }
    }
    Ok(md)
}

/// Paths written by [`draw_sweep`]: the figure (PNG, SVG) and its CSV.
pub type SweepFiles = (PathBuf, PathBuf, PathBuf);

/// Draw the sweeps of setting `key` (of base solver `base`, if given) in measure `m` from the
/// outcomes `outs` of `rows` into `out_dir` (`cpbench sweep-plot`): per sweep
/// `<stem>-<measure>.png/.svg` and `<stem>.csv`. Errors: no sweep of that key (the message
/// lists the sweeps there are), a measure that does not measure the solver's cost, I/O and
/// plotting errors.
#[allow(clippy::too_many_arguments)]
pub fn draw_sweep(
    rows: &[&SummaryRow],
    outs: &[Outcome],
    key: &str,
    base: Option<&str>,
    m: Metric,
    out_dir: &Path,
    tol_title: &str,
    fig: &FigureOptions,
) -> Result<Vec<SweepFiles>> {
    let all = find_sweeps(rows);
    let chosen: Vec<&Sweep> = all
        .iter()
        .filter(|s| s.key == key && base.is_none_or(|b| s.base == b))
        .collect();
    if chosen.is_empty() {
        let there: Vec<String> = all
            .iter()
            .map(|s| format!("{} of {}", s.key, s.base))
            .collect();
        return Err(crate::error::HarnessError::Invalid(format!(
            "--setting {key}{}: no sweep of it in the folder (sweeps there: {})",
            base.map(|b| format!(" --solver {b}")).unwrap_or_default(),
            if there.is_empty() {
                "none; run variants such as pgs@omega=0.6:1.4:0.2".to_string()
            } else {
                there.join(", ")
            }
        )));
    }
    std::fs::create_dir_all(out_dir).map_err(|e| crate::error::HarnessError::io(out_dir, e))?;
    let mut files = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for sw in chosen {
        if !measures_cost(&sw.base, m) {
            return Err(crate::error::HarnessError::Invalid(format!(
                "--measure {}: {} does not measure the cost of {} (use time)",
                m.as_str(),
                m.as_str(),
                sw.base
            )));
        }
        seen.push((sw.base.clone(), sw.key.clone()));
        let k = seen
            .iter()
            .filter(|x| x.0 == sw.base && x.1 == sw.key)
            .count();
        let stem = sw.stem(k);
        let csv = out_dir.join(format!("{stem}.csv"));
        write_atomic(&csv, sweep_csv(sw, outs).as_bytes())?;
        let png = out_dir.join(format!("{stem}-{}.png", m.as_str()));
        let svg = out_dir.join(format!("{stem}-{}.svg", m.as_str()));
        draw_plot(&sweep_plot(sw, outs, m, tol_title), &png, &svg, fig)?;
        files.push((png, svg, csv));
    }
    Ok(files)
}
