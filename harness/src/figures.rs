//! Figures shared by `run`, `merge` and `report`: the per-instance convergence plots of a results
//! folder, the grouping of its rows by (instance, profile) and the titles and axis labels.

use crate::error::Result;
use crate::names::{plot_paths, trace_path, FileStems};
use crate::plot::{draw_plot, LinePlot, Series};
use crate::results::{read_trace, SummaryRow};
use cpbench_problems::ResidualKind;
use std::path::Path;

/// For every (instance, profile) of `rows`, draw `plots/<instance>[__<profile>].png/.svg`:
/// `residual` (`None`: the check residual of the group's first row) against iterations, one
/// line per solver, from the trace files in `dir`.
pub fn draw_iteration_plots(
    dir: &Path,
    rows: &[SummaryRow],
    residual: Option<ResidualKind>,
) -> Result<()> {
    let mut solvers: Vec<&str> = Vec::new();
    for r in rows {
        if !solvers.contains(&r.solver.as_str()) {
            solvers.push(&r.solver);
        }
    }
    let stems = FileStems::from_rows(rows);
    for ((inst, prof), group) in group_rows(rows) {
        let stem = stems.of_row(group[0]);
        let first = group[0];
        let residual = residual
            .or_else(|| ResidualKind::parse(&first.check_residual))
            .unwrap_or_default();
        let mut series = Vec::new();
        for r in &group {
            let p = dir.join(trace_path(&stem, &r.solver, &r.profile));
            if !p.exists() {
                continue;
            }
            let pts = read_trace(&p)?;
            series.push(Series {
                label: r.solver.clone(),
                points: pts
                    .iter()
                    .map(|q| (q.iteration as f64, q.residuals.get(residual)))
                    .collect(),
                color: solvers.iter().position(|s| *s == r.solver),
            });
        }
        let plot = LinePlot::convergence(
            format!(
                "{} ({}, n = {}){}",
                inst,
                first.class,
                first.n,
                profile_title(&prof)
            ),
            "iteration",
            residual_label(residual).to_string(),
            series,
            Some(first.tol),
        );
        let (png, svg) = plot_paths(&stem, &prof);
        draw_plot(&plot, &dir.join(png), &dir.join(svg))?;
    }
    Ok(())
}

/// ` [profile]` for non-default profiles (plot titles).
pub fn profile_title(profile: &str) -> String {
    if profile == "default" {
        String::new()
    } else {
        format!(" [{profile}]")
    }
}

/// Rows grouped by (instance, profile), in first-appearance order; two instances of the same
/// name and different data (instance hash) are two groups.
pub fn group_rows(rows: &[SummaryRow]) -> Vec<((String, String), Vec<&SummaryRow>)> {
    let mut groups: Vec<((String, String), Vec<&SummaryRow>)> = Vec::new();
    for r in rows {
        let k = (r.instance.clone(), r.profile.clone());
        match groups
            .iter_mut()
            .find(|(g, v)| *g == k && v[0].instance_hash == r.instance_hash)
        {
            Some((_, v)) => v.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    groups
}

/// Human label of a residual for axis titles.
pub fn residual_label(k: ResidualKind) -> &'static str {
    match k {
        ResidualKind::NatMapRel2 => "relative natural-map residual",
        ResidualKind::NatMapRelInf => "relative natural-map residual (inf-norm)",
        ResidualKind::NatMapAbs2 => "natural-map residual",
        ResidualKind::NatMapRelMax1 => "natural-map residual / max(1, ||r||)",
        ResidualKind::ProjGradRel => "relative projected gradient",
        ResidualKind::Res4 => "Res4",
        ResidualKind::Fc3dError => "Siconos fc3d error",
    }
}
