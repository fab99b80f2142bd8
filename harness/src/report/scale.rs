//! The "Scale" section of a report: time per iteration, time per `N`-product against the
//! bandwidth bound, peak memory, and the time to reach a tolerance, against the number of
//! contacts (the `scale` suite).
//!
//! **Time to tolerance** (issue 34, item 4) is read from each run's trace: the first traced
//! iteration whose relative natural-map residual `nat_map_rel_2` (and, separately, Heyn's
//! `res4`) is at most each of [`TOLERANCES`], with its solver time and its counted products.
//! The suite traces every 10th iteration, so an iteration count is a multiple of the trace
//! step (an upper bound of the first iteration that met the tolerance, by less than 10). The
//! bandwidth bound of a time to tolerance is the products needed times the least time of one,
//! `matvecs x operator_bytes / triad`. A run that stopped first has no value (`-`): run the
//! suite with a tolerance and a budget that reach them (`cpbench run --suite scale --tol 1e-6
//! --max-iter 20000`).

use super::metrics::{measures_cost, Metric};
use crate::error::Result;
use crate::fsutil::write_atomic;
use crate::manifest::Manifest;
use crate::names::{trace_path, FileStems};
use crate::plot::{draw_grid, Axis, FigureOptions, LinePlot, Series};
use crate::results::{read_trace, SummaryRow, TracePoint};
use cpbench_problems::ResidualKind;
use std::fmt::Write as _;
use std::path::Path;

/// Style index of the bandwidth-bound line (black, dotted, circles: see
/// [`crate::plot::style_parts`]).
const BOUND_STYLE: usize = 41;
/// Style index of the operator-size line (black, solid, crosses: no solver's colour, since
/// the solvers take the first colours in order and five of them are run by default).
const OPERATOR_STYLE: usize = 69;
/// Style offset of a solver's bandwidth bound in the time-to-tolerance panels: the solver's
/// colour (7 colours) with another dash and marker (14).
const BOUND_SHIFT: usize = 14;

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

/// The tolerances whose time to reach is read from the traces ([`Reach`]).
pub const TOLERANCES: [f64; 2] = [1e-4, 1e-6];

/// The first traced iteration at which a residual met a tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reach {
    /// Iteration (a multiple of the trace step, or the last one).
    pub iteration: u64,
    /// Counted `N`-products by then.
    pub matvecs: u64,
    /// Solver time by then, seconds.
    pub time_s: f64,
}

/// The first point of `trace` whose residual `kind` is at most `tol` (`None`: never).
pub fn reach(trace: &[TracePoint], kind: ResidualKind, tol: f64) -> Option<Reach> {
    trace
        .iter()
        .find(|t| t.residuals.get(kind) <= tol)
        .map(|t| Reach {
            iteration: t.iteration,
            matvecs: t.matvecs,
            time_s: t.time_s,
        })
}

/// One measured point of the section.
struct Point<'a> {
    row: &'a SummaryRow,
    contacts: usize,
    per_iteration: Option<f64>,
    per_product: Option<f64>,
    achieved_gbs: Option<f64>,
    /// Bytes one iteration streams, where the solver reports its vector passes (the counter
    /// `vector_bytes`, [`cpbench_solvers::kernels::vector_bytes`]): per counted product the
    /// operator's bytes and `16 n` (its operand read, its result written), plus the vector
    /// passes, over the iterations.
    bytes_per_iteration: Option<f64>,
    /// Per [`TOLERANCES`] entry: the relative natural map's reach, then `res4`'s.
    reach: [(Option<Reach>, Option<Reach>); 2],
}

impl Point<'_> {
    /// Per cent of the triad `bw` (GB/s) that [`Point::bytes_per_iteration`] over the time
    /// per iteration reaches.
    fn pct_per_iteration(&self, bw: Option<f64>) -> Option<f64> {
        let (b, t, g) = (self.bytes_per_iteration?, self.per_iteration?, bw?);
        Some(100.0 * b / t / 1e9 / g)
    }

    /// The bandwidth bound of reaching `TOLERANCES[k]` in the natural map (first-order
    /// solvers with a known bandwidth `bw`, GB/s): products needed x operator bytes / bw.
    fn bound(&self, k: usize, bw: Option<f64>) -> Option<f64> {
        let r = self.reach[k].0?;
        let bytes = self.row.operator_bytes? as f64;
        let g = bw?;
        (self.per_product.is_some() && r.matvecs > 0).then(|| r.matvecs as f64 * bytes / (g * 1e9))
    }
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
/// `operator_bytes / bandwidth_gbs` of the manifest. The time to reach `TOLERANCES` (1e-4, 1e-6) is read
/// from the runs' traces in `dir` (module docs; a missing or unreadable trace gives no value).
/// Returns whether it wrote anything. Errors: I/O and plotting errors.
pub fn scale_section(
    md: &mut String,
    rows: &[SummaryRow],
    manifest: Option<&Manifest>,
    (dir, stems): (&Path, &FileStems),
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
            let trace = read_trace(&dir.join(trace_path(&stems.of_row(r), &r.solver, &r.profile)))
                .unwrap_or_default();
            let at = |tol: f64| {
                (
                    reach(&trace, ResidualKind::NatMapRel2, tol),
                    reach(&trace, ResidualKind::Res4, tol),
                )
            };
            Point {
                row: r,
                contacts: contacts(r),
                per_iteration: Some(r.time_s / r.iterations as f64).filter(|t| *t > 0.0),
                per_product,
                achieved_gbs: per_product
                    .zip(r.operator_bytes)
                    .map(|(t, b)| b as f64 / t / 1e9),
                bytes_per_iteration: r.counters.get("vector_bytes").zip(r.operator_bytes).map(
                    |(v, b)| {
                        let per_product = b as f64 + 16.0 * r.n as f64;
                        (r.matvecs as f64 * per_product + v) / r.iterations as f64
                    },
                ),
                reach: [at(TOLERANCES[0]), at(TOLERANCES[1])],
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
         s_per_iteration,s_per_product,achieved_gbs,triad_gbs,pct_of_triad,peak_rss_bytes,\
         iterations_to_1e-4,time_to_1e-4_s,bound_to_1e-4_s,iterations_to_1e-6,time_to_1e-6_s,\
         bound_to_1e-6_s,res4_time_to_1e-4_s,res4_time_to_1e-6_s,bytes_per_iteration,\
         pct_of_triad_per_iteration\n",
    );
    for p in pts {
        let r = p.row;
        let e = |v: Option<f64>| v.map(|x| format!("{x:e}")).unwrap_or_default();
        let _ = write!(
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
        // time to tolerance
        for k in 0..TOLERANCES.len() {
            let nm = p.reach[k].0;
            let _ = write!(
                csv,
                ",{},{},{}",
                nm.map(|x| x.iteration.to_string()).unwrap_or_default(),
                e(nm.map(|x| x.time_s)),
                e(p.bound(k, bw))
            );
        }
        for k in 0..TOLERANCES.len() {
            let _ = write!(csv, ",{}", e(p.reach[k].1.map(|x| x.time_s)));
        }
        let _ = write!(
            csv,
            ",{},{}",
            e(p.bytes_per_iteration),
            e(p.pct_per_iteration(bw))
        );
        csv.push('\n');
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
        markers_at_points: true,
        ..LinePlot::lines(
            title,
            "contacts (log scale)",
            y,
            series,
            Axis::Log10,
            Axis::Log10,
        )
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
    let mut plots = vec![
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
    // time to each tolerance a run reached, with its bandwidth bound in the solver's colour
    for (k, (tol, letter)) in TOLERANCES.iter().zip(["d", "e"]).enumerate() {
        let mut reached = series(&|p| p.reach[k].0.map(|r| r.time_s));
        if reached.is_empty() {
            continue;
        }
        for (i, s) in solvers.iter().enumerate() {
            let points: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.row.solver == *s)
                .filter_map(|p| p.bound(k, bw).map(|v| (p.contacts as f64, v)))
                .collect();
            if !points.is_empty() {
                reached.push(Series {
                    label: format!("{s}: bandwidth bound"),
                    points,
                    color: Some(i + BOUND_SHIFT),
                });
            }
        }
        plots.push(panel(
            &format!("({letter}) solver time to nat_map_rel_2 <= {tol:.0e}"),
            "seconds",
            reached,
        ));
    }
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
         of the process during the run with the size of the operator; (d), (e) when a run \
         reached them: the solver time to the relative natural-map residual 1e-4 and 1e-6, \
         read from the trace (the first traced iteration at or below the tolerance; a multiple \
         of the trace step), with its bandwidth bound, the products needed x operator bytes / \
         memory bandwidth. The table gives the same for Heyn's `res4`.\n",
        sizes.len()
    );
    match bw {
        Some(g) => {
            let _ = writeln!(
                md,
                "Memory bandwidth: {g:.2} GB/s (STREAM triad, best of several passes over 3 x \
                 64 MiB arrays, {} thread(s), 24 bytes per element, write-allocate not \
                 counted). Achieved GB/s = operator bytes / time per product. Per iteration, \
                 for the solvers that count their vector passes (counter `vector_bytes`: \
                 apgd, spgqp, pgs): MB per iteration = (products x (operator bytes + 16 n) + \
                 vector bytes) / iterations, each vector a pass reads or writes counted once \
                 (a model of the least traffic, not a measurement), and its % of the triad \
                 over the time per iteration.\n",
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
         s/product | GB/s | % of triad | MB/iteration | % of triad per iteration | peak RSS MB | \
         to 1e-4: it / s / bound s | to 1e-6: it / s / bound s | res4 to 1e-4 / 1e-6: s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for p in pts {
        let r = p.row;
        let res4 = [0, 1]
            .map(|k| fmt_opt(p.reach[k].1.map(|x| x.time_s), |v| format!("{v:.3}")))
            .join(" / ");
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
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
            fmt_opt(p.bytes_per_iteration.map(|b| b / 1e6), |v| format!(
                "{v:.1}"
            )),
            fmt_opt(p.pct_per_iteration(bw), |v| format!("{v:.0}%")),
            fmt_opt(r.peak_rss_bytes.map(|b| b as f64 / 1e6), |v| format!(
                "{v:.1}"
            )),
            reached(p, 0, bw),
            reached(p, 1, bw),
            res4,
        );
    }
}

/// A table cell of the natural map's reach of `TOLERANCES[k]`: iterations / seconds / bound.
fn reached(p: &Point, k: usize, bw: Option<f64>) -> String {
    match p.reach[k].0 {
        None => "-".into(),
        Some(r) => format!(
            "{} / {:.3} / {}",
            r.iteration,
            r.time_s,
            fmt_opt(p.bound(k, bw), |v| format!("{v:.3}"))
        ),
    }
}
