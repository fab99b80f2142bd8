//! Per-instance outcomes and convergence plots of one settings profile, and the overview grid.

use super::metrics::Metric;
use super::ProfileCtx;
use crate::error::Result;
use crate::figures::{group_rows, mixed_cost_models, residual_label, tol_title};
use crate::fsutil::write_atomic;
use crate::names::trace_path;
use crate::plot::{draw_grid, draw_plot, LinePlot, Series};
use crate::results::read_trace;
use cpbench_problems::ResidualKind;
use std::fmt::Write as _;

/// The "Instances" section of a profile (per instance: a table of its runs and convergence
/// plots against iterations, `N`-products and time under `report/convergence/`, with their
/// CSV) and the "Overview" grid (`report/overview[__<profile>].png`). The figure shown in the
/// text and in the grid is the one against iterations, or against time when the instance's
/// solvers mix cost models ([`mixed_cost_models`]). Titles name the tolerance and residual.
/// Errors: I/O errors, a malformed trace, plotting errors.
pub(super) fn instance_sections(md: &mut String, ctx: &ProfileCtx) -> Result<()> {
    let (opts, solvers, suffix, rdir, stems, dir) = (
        ctx.opts,
        ctx.solvers,
        &ctx.suffix,
        ctx.rdir,
        ctx.stems,
        ctx.dir,
    );
    let prow = &ctx.rows;
    // convergence plots per instance, and the overview grid
    let _ = writeln!(md, "### Instances\n");
    let mut grid = Vec::new();
    for ((inst, _), group) in group_rows(&prow.iter().map(|r| (*r).clone()).collect::<Vec<_>>()) {
        let first = group[0];
        let residual = opts
            .residual
            .or_else(|| ResidualKind::parse(&first.check_residual))
            .unwrap_or_default();
        let inst_stem = stems.of_row(first);
        let headline = if mixed_cost_models(group.iter().map(|r| r.base())) {
            Metric::Time
        } else {
            Metric::Iterations
        };
        let tol = opts.tol.unwrap_or(first.tol);
        let title = format!(
            "{inst} ({}, n = {}; {})",
            first.class_name(),
            first.n,
            tol_title(tol, &[residual.as_str().to_string()])
        );
        let mut traces = Vec::new();
        for r in &group {
            let p = dir.join(trace_path(&inst_stem, &r.solver, &r.profile));
            // a refusal is not a run: nothing to draw, no legend entry
            if r.status != crate::run::REFUSED && p.exists() {
                traces.push((r.solver.clone(), read_trace(&p)?));
            }
        }
        let _ = writeln!(
            md,
            "#### {inst} ({}, n = {}, nnz = {})\n\n| solver | status | success | iterations | N-products | time [s] | {} |\n|---|---|---|---|---|---|---|",
            first.class_name(),
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
        fidelity_table(md, &group);
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
                title.clone(),
                m.label(),
                residual_label(residual).to_string(),
                series,
                Some(tol),
                opts.figure.x_scale,
                m == Metric::Time,
            );
            let name = format!("{base}__{}", m.as_str());
            let cdir = rdir.join("convergence");
            write_atomic(&cdir.join(format!("{name}.csv")), csv.as_bytes())?;
            draw_plot(
                &plot,
                &cdir.join(format!("{name}.png")),
                &cdir.join(format!("{name}.svg")),
                &opts.figure,
            )?;
            if m == headline {
                if m == Metric::Time {
                    let _ = writeln!(
                        md,
                        "Solvers of different cost models: the figure is against time.\n"
                    );
                }
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
    let gname = format!("overview{}", ctx.group_suffix);
    draw_grid(
        &format!("Convergence overview ({})", ctx.tol_title),
        &grid,
        3,
        &rdir.join(format!("{gname}.png")),
        &rdir.join(format!("{gname}.svg")),
        &opts.figure,
    )?;
    let _ = writeln!(md, "### Overview\n\n![overview](report/{gname}.png)\n");
    Ok(())
}

/// The physical-fidelity table of one instance's runs (`summary.csv`'s last five columns,
/// [`cpbench_problems::fidelity`]), after its table of runs; nothing when no run has them
/// (classes without friction, refusals, files written before the columns existed).
fn fidelity_table(md: &mut String, group: &[&crate::results::SummaryRow]) {
    let rows: Vec<_> = group
        .iter()
        .filter(|r| r.fidelity.values().iter().any(|v| !v.is_nan()))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "Physical fidelity of each answer (docs/formulation.md section 4; worst contact, with \
         the instance's velocity `u = N gamma + r`; 0 for an exact Coulomb answer):\n\n\
         | solver | signorini [J] | ncp_desaxce [J] | mdp_gap [J] | spurious_velocity [m/s] | \
         cone_violation [N s] |\n|---|---|---|---|---|---|"
    );
    for r in rows {
        let v = r.fidelity.values();
        let _ = writeln!(
            md,
            "| {} | {:.2e} | {:.2e} | {:.2e} | {:.2e} | {:.2e} |",
            r.solver, v[0], v[1], v[2], v[3], v[4]
        );
    }
    let _ = writeln!(md);
}
