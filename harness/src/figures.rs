//! Figures shared by `run`, `merge` and `report`: the per-instance convergence plots of a results
//! folder, the grouping of its rows by (instance, profile) and the titles and axis labels.

use crate::error::Result;
use crate::names::{plot_paths, trace_path, FileStems};
use crate::plot::{draw_plot, fmt_num, FigureOptions, LinePlot, Series};
use crate::results::{read_trace, SummaryRow};
use cpbench_problems::ResidualKind;
use std::path::Path;

/// For every (instance, profile) of `rows`, draw `plots/<instance>[__<profile>].png/.svg`:
/// `residual` (`None`: the check residual of the group's first row) against iterations, one
/// line per solver, from the trace files in `dir`; against solver time instead when the
/// group mixes cost models ([`mixed_cost_models`], e.g. first-order methods and an interior
/// point, whose iterations cost differently). Size, resolution and x scale from `fig`.
pub fn draw_iteration_plots(
    dir: &Path,
    rows: &[SummaryRow],
    residual: Option<ResidualKind>,
    fig: &FigureOptions,
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
        let by_time = mixed_cost_models(group.iter().map(|r| r.base()));
        let mut series = Vec::new();
        for r in &group {
            let p = dir.join(trace_path(&stem, &r.solver, &r.profile));
            if r.status == crate::results::REFUSED || !p.exists() {
                continue;
            }
            let pts = read_trace(&p)?;
            series.push(Series {
                label: r.solver.clone(),
                points: pts
                    .iter()
                    .map(|q| {
                        let x = if by_time {
                            q.time_s
                        } else {
                            q.iteration as f64
                        };
                        (x, q.residuals.get(residual))
                    })
                    .collect(),
                color: solvers.iter().position(|s| *s == r.solver),
            });
        }
        let plot = LinePlot::convergence(
            format!(
                "{} ({}, n = {}; {})",
                inst,
                first.class_name(),
                first.n,
                tol_title(first.tol, &[residual.as_str().to_string()])
            ),
            if by_time {
                "solver time [s]"
            } else {
                "iteration"
            },
            residual_label(residual).to_string(),
            series,
            Some(first.tol),
            fig.x_scale,
            by_time,
        );
        let (png, svg) = plot_paths(&stem, &prof);
        draw_plot(&plot, &dir.join(png), &dir.join(svg), fig)?;
    }
    Ok(())
}

/// The tolerance and residual(s) of a figure, for its title: `tol 1e-6, nat_map_rel_2`
/// (several residuals joined by ` / `).
pub fn tol_title(tol: f64, residuals: &[String]) -> String {
    if residuals.is_empty() {
        format!("tol {}", fmt_num(tol))
    } else {
        format!("tol {}, {}", fmt_num(tol), residuals.join(" / "))
    }
}

/// Whether the registry names `bases` mix cost models (first-order with factorising,
/// external or unknown ones): iterations then mean different work, and per-instance figures
/// are drawn against time.
pub fn mixed_cost_models<'a>(bases: impl Iterator<Item = &'a str>) -> bool {
    let first_order = |b: &str| {
        cpbench_solvers::registry::cost_model(b)
            == Some(cpbench_solvers::registry::CostModel::FirstOrder)
    };
    let (mut fo, mut other) = (false, false);
    for b in bases {
        if first_order(b) {
            fo = true;
        } else {
            other = true;
        }
    }
    fo && other
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
        ResidualKind::Res3 => "Heyn residual 3",
    }
}
