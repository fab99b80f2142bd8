//! The "Scale" section of a report: time per iteration, time per `N`-product against the
//! bandwidth bound, and peak memory, against the number of contacts (the `scale` suite).

use super::metrics::{measures_cost, Metric};
use crate::error::Result;
use crate::fsutil::write_atomic;
use crate::manifest::Manifest;
use crate::plot::{draw_grid, Axis, FigureOptions, LinePlot, Series};
use crate::results::SummaryRow;
use std::fmt::Write as _;
use std::path::Path;

/// Style index of the bandwidth-bound line (black, dotted, circles: see
/// [`crate::plot::style_parts`]).
const BOUND_STYLE: usize = 41;
/// Style index of the operator-size line (bluish green, solid, crosses).
const OPERATOR_STYLE: usize = 9;

/// Whether `name` is an instance of the `scale` suite: the first step of a pyramid,
/// `pyramid-<L>_step0001__ccp`.
pub fn is_scale_instance(name: &str) -> bool {
    name.strip_prefix("pyramid-")
        .and_then(|r| r.strip_suffix("_step0001__ccp"))
        .is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
}

/// Contacts of a row: `n / 3` for cone problems, `n` otherwise.
fn contacts(r: &SummaryRow) -> usize {
    match r.class_name() {
        "ccp" | "coulomb" => r.n / 3,
        _ => r.n,
    }
}

/// One measured point of the section.
struct Point<'a> {
    row: &'a SummaryRow,
    contacts: usize,
    per_iteration: Option<f64>,
    per_product: Option<f64>,
    achieved_gbs: Option<f64>,
}

fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// Write the "Scale" section and `report/scale.png/.svg/.csv` when `rows` hold runs of the
/// `scale` suite ([`is_scale_instance`] with an `operator_bytes` value): always when the
/// manifest's suite is `scale`, otherwise when they cover at least two sizes. Uses the rows
/// of the first settings profile only. Time per product is solver time over counted
/// products (vector work and projections included, so an upper bound of the product's own
/// time), drawn only for first-order solvers ([`measures_cost`]); the bandwidth bound is
/// `operator_bytes / bandwidth_gbs` of the manifest. Returns whether it wrote anything.
/// Errors: I/O and plotting errors.
pub fn scale_section(
    md: &mut String,
    rows: &[SummaryRow],
    manifest: Option<&Manifest>,
    rdir: &Path,
    fig: &FigureOptions,
) -> Result<bool> {
    let Some(profile) = rows.first().map(|r| r.profile.clone()) else {
        return Ok(false);
    };
    let mut pts: Vec<Point> = rows
        .iter()
        .filter(|r| r.profile == profile && is_scale_instance(&r.instance))
        .filter(|r| r.operator_bytes.is_some() && r.iterations > 0)
        .map(|r| {
            let per_product = (r.matvecs > 0 && measures_cost(r.base(), Metric::Matvecs))
                .then(|| r.time_s / r.matvecs as f64)
                .filter(|t| *t > 0.0);
            Point {
                row: r,
                contacts: contacts(r),
                per_iteration: Some(r.time_s / r.iterations as f64).filter(|t| *t > 0.0),
                per_product,
                achieved_gbs: per_product
                    .zip(r.operator_bytes)
                    .map(|(t, b)| b as f64 / t / 1e9),
            }
        })
        .collect();
    let mut sizes: Vec<usize> = pts.iter().map(|p| p.contacts).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let scale_suite = manifest.is_some_and(|m| m.suite == "scale");
    if sizes.is_empty() || (!scale_suite && sizes.len() < 2) {
        return Ok(false);
    }
    pts.sort_by_key(|p| p.contacts);
    let mut solvers: Vec<&str> = Vec::new();
    for r in rows {
        if !solvers.contains(&r.solver.as_str()) {
            solvers.push(&r.solver);
        }
    }
    let bw = manifest.and_then(|m| m.bandwidth_gbs.filter(|g| *g > 0.0));
    let bw_threads = manifest.and_then(|m| m.bandwidth_threads);

    write_csv(&pts, bw, rdir)?;

    draw_panels(&pts, &sizes, &solvers, bw, rdir, fig)?;

    write_text(md, &pts, &sizes, &profile, bw, bw_threads);
    md.push('\n');
    Ok(true)
}

/// `scale.csv`: one line per measured point, with the bandwidth `bw` (GB/s) when known.
fn write_csv(pts: &[Point], bw: Option<f64>, rdir: &Path) -> Result<()> {
    // the CSV behind the figure
    let mut csv = String::from(
        "instance,contacts,n,operator,operator_bytes,solver,iterations,matvecs,time_s,\
         s_per_iteration,s_per_product,achieved_gbs,triad_gbs,pct_of_triad,peak_rss_bytes\n",
    );
    for p in pts {
        let r = p.row;
        let e = |v: Option<f64>| v.map(|x| format!("{x:e}")).unwrap_or_default();
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{:e},{},{},{},{},{},{}",
            r.instance,
            p.contacts,
            r.n,
            r.operator_name(),
            r.operator_bytes.unwrap_or(0),
            r.solver,
            r.iterations,
            r.matvecs,
            r.time_s,
            e(p.per_iteration),
            e(p.per_product),
            e(p.achieved_gbs),
            e(bw),
            e(p.achieved_gbs.zip(bw).map(|(a, b)| 100.0 * a / b)),
            r.peak_rss_bytes.map(|b| b.to_string()).unwrap_or_default()
        );
    }
    write_atomic(&rdir.join("scale.csv"), csv.as_bytes())?;
    Ok(())
}

/// `scale.png` / `scale.svg`: time per iteration, time per product (with the bandwidth
/// bound) and peak memory against contacts, one series per solver.
fn draw_panels(
    pts: &[Point],
    sizes: &[usize],
    solvers: &[&str],
    bw: Option<f64>,
    rdir: &Path,
    fig: &FigureOptions,
) -> Result<()> {
    // the three panels
    let series = |f: &dyn Fn(&Point) -> Option<f64>| -> Vec<Series> {
        solvers
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let points: Vec<(f64, f64)> = pts
                    .iter()
                    .filter(|p| p.row.solver == *s)
                    .filter_map(|p| f(p).map(|v| (p.contacts as f64, v)))
                    .collect();
                (!points.is_empty()).then(|| Series {
                    label: s.to_string(),
                    points,
                    color: Some(i),
                })
            })
            .collect()
    };
    // one value per size (the instance's, from its first row)
    let per_size = |f: &dyn Fn(&SummaryRow) -> Option<f64>| -> Vec<(f64, f64)> {
        sizes
            .iter()
            .filter_map(|&c| {
                let p = pts.iter().find(|p| p.contacts == c)?;
                f(p.row).map(|v| (c as f64, v))
            })
            .collect()
    };
    let panel = |title: &str, y: &str, series: Vec<Series>| LinePlot {
        title: title.into(),
        x_label: "contacts (log scale)".into(),
        y_label: y.into(),
        series,
        hline: None,
        x_axis: Axis::Log10,
        y_axis: Axis::Log10,
        y_range: None,
        best_so_far: false,
        markers_at_points: true,
        failed: Vec::new(),
    };
    let mut products = series(&|p| p.per_product);
    if let Some(g) = bw {
        products.push(Series {
            label: format!("bandwidth bound: operator bytes / triad {g:.1} GB/s"),
            points: per_size(&|r| r.operator_bytes.map(|b| b as f64 / (g * 1e9))),
            color: Some(BOUND_STYLE),
        });
    }
    let mut memory = series(&|p| p.row.peak_rss_bytes.map(|b| b as f64 / 1e6));
    memory.push(Series {
        label: "operator N (bytes one product reads)".into(),
        points: per_size(&|r| r.operator_bytes.map(|b| b as f64 / 1e6)),
        color: Some(OPERATOR_STYLE),
    });
    let plots = [
        panel(
            "(a) time per iteration",
            "seconds per iteration",
            series(&|p| p.per_iteration),
        ),
        panel(
            "(b) time per N-product (first-order)",
            "seconds per N-product",
            products,
        ),
        panel("(c) peak resident memory", "MB (1e6 bytes)", memory),
    ];
    draw_grid(
        &format!(
            "Scale: {} sizes, {} to {} contacts",
            sizes.len(),
            sizes[0],
            sizes[sizes.len() - 1]
        ),
        &plots,
        3,
        &rdir.join("scale.png"),
        &rdir.join("scale.svg"),
        fig,
    )?;
    Ok(())
}

/// The section's text: what is drawn, the bandwidth, the figure and the table.
fn write_text(
    md: &mut String,
    pts: &[Point],
    sizes: &[usize],
    profile: &str,
    bw: Option<f64>,
    bw_threads: Option<usize>,
) {
    // the text and table
    let _ = writeln!(md, "## Scale\n");
    let _ = writeln!(
        md,
        "Cost against size on {} pyramid instance(s) (profile `{profile}`): (a) solver time per \
         iteration, (b) solver time per counted N-product for first-order solvers (vector work \
         and projections included: an upper bound of a product's own time) with the least \
         time a product can take, operator bytes / memory bandwidth, (c) peak resident memory \
         of the process during the run with the size of the operator.\n",
        sizes.len()
    );
    match bw {
        Some(g) => {
            let _ = writeln!(
                md,
                "Memory bandwidth: {g:.2} GB/s (STREAM triad, best of several passes over 3 x \
                 64 MiB arrays, {} thread(s), 24 bytes per element, write-allocate not \
                 counted). Achieved GB/s = operator bytes / time per product.\n",
                bw_threads.map_or("?".to_string(), |t| t.to_string())
            );
        }
        None => {
            let _ = writeln!(
                md,
                "No memory bandwidth in the manifest (run with `--bandwidth`): no bound drawn.\n"
            );
        }
    }
    let _ = writeln!(
        md,
        "![scale](report/scale.png)\n\n[SVG](report/scale.svg) · [CSV](report/scale.csv)\n"
    );
    let _ = writeln!(
        md,
        "| contacts | n | operator | operator MB | solver | iterations | s/iteration | \
         s/product | GB/s | % of triad | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for p in pts {
        let r = p.row;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            p.contacts,
            r.n,
            match r.operator {
                None => "-",
                Some(o) => o.as_str(),
            },
            fmt_opt(r.operator_bytes.map(|b| b as f64 / 1e6), |v| format!(
                "{v:.1}"
            )),
            r.solver,
            r.iterations,
            fmt_opt(p.per_iteration, |v| format!("{v:.3e}")),
            fmt_opt(p.per_product, |v| format!("{v:.3e}")),
            fmt_opt(p.achieved_gbs, |v| format!("{v:.2}")),
            fmt_opt(p.achieved_gbs.zip(bw).map(|(a, b)| 100.0 * a / b), |v| {
                format!("{v:.0}%")
            }),
            fmt_opt(r.peak_rss_bytes.map(|b| b as f64 / 1e6), |v| format!(
                "{v:.1}"
            )),
        );
    }
}
