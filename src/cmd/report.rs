//! `cpbench report DIR`: report.md with performance profiles, shifted geometric means and
//! convergence plots.

use crate::cmd::args;
use crate::AnyError;
use clap::Args;
use cpbench_harness::plot::{FigureOptions, XScale};
use cpbench_harness::report::{report, sweep_figures, Metric, ReportOptions};
use std::path::PathBuf;

/// Arguments of `cpbench report`.
#[derive(Args)]
pub struct ReportArgs {
    /// Results folder of `cpbench run` (or `merge`).
    pub dir: PathBuf,
    /// Another results folder to compare with.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Peer results in the summary.csv format (e.g. from scripts/peer_siconos.py), shown side
    /// by side with this folder's rows of the same instance names.
    #[arg(long)]
    pub peer: Option<PathBuf>,
    #[command(flatten)]
    pub trace_tol: TraceTolArgs,
    /// Shift of the geometric mean of times, milliseconds.
    #[arg(long, default_value_t = 10.0)]
    pub shift_time_ms: f64,
    /// Shift of the geometric means of iterations and N-products.
    #[arg(long, default_value_t = 10.0)]
    pub shift_count: f64,
    /// One table, mean and profile over all problem classes of a settings profile (default:
    /// one section per class; a CCP and a Coulomb problem from the same file are different
    /// problems).
    #[arg(long)]
    pub pool_classes: bool,
    #[command(flatten)]
    pub figure: FigureArgs,
}

/// The tolerance at which `cpbench report` and `cpbench sweep-plot` read the traces.
#[derive(Args, Clone, Debug)]
pub struct TraceTolArgs {
    /// Tolerance read from the traces: a run counts as solved, and its cost is taken, at its
    /// first traced iterate below it (default: each run's own check).
    #[arg(long)]
    pub tol: Option<f64>,
    /// Residual of `--tol` (default: the run's check residual).
    #[arg(long)]
    pub residual: Option<String>,
}

impl TraceTolArgs {
    /// The report options with this tolerance and residual, the rest default. Errors: an
    /// unknown residual.
    fn options(&self) -> Result<ReportOptions, AnyError> {
        Ok(ReportOptions {
            tol: self.tol,
            residual: args::residual(self.residual.as_deref())?,
            ..ReportOptions::default()
        })
    }
}

/// Figure options shared by `cpbench run` and `cpbench report`.
#[derive(Args, Clone, Debug)]
pub struct FigureArgs {
    /// Size of one figure, WxH in inches (a cell of the overview grid is 0.55 x 0.6 of it).
    #[arg(long, default_value = "6.4x4")]
    pub figure_size: String,
    /// Resolution of the PNGs in dots per inch (SVGs: 96 px per inch, text kept as text).
    #[arg(long, default_value_t = 150, allow_negative_numbers = true)]
    pub dpi: i64,
    /// x scale of convergence plots: auto (log when the solvers' final iteration counts,
    /// N-products or times differ by more than 100x), linear or log.
    #[arg(long, default_value = "auto")]
    pub x_scale: String,
}

impl FigureArgs {
    /// The figure options. Errors: a malformed size, a resolution outside 30..=1200, an unknown
    /// x scale.
    pub fn options(&self) -> Result<FigureOptions, AnyError> {
        Ok(FigureOptions {
            size_in: FigureOptions::parse_size(&self.figure_size)?,
            dpi: FigureOptions::check_dpi(self.dpi)?,
            x_scale: XScale::parse(&self.x_scale).ok_or_else(|| {
                format!("--x-scale '{}': expected auto, linear or log", self.x_scale)
            })?,
        })
    }
}

/// Write the report and print its path.
pub fn run(a: ReportArgs) -> Result<(), AnyError> {
    let trace_tol = a.trace_tol.options()?;
    let opts = ReportOptions {
        shift_time_s: a.shift_time_ms * 1e-3,
        shift_count: a.shift_count,
        baseline: a.baseline,
        peer: a.peer,
        figure: a.figure.options()?,
        pool_classes: a.pool_classes,
        ..trace_tol
    };
    let path = report(&a.dir, &opts)?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Arguments of `cpbench sweep-plot`.
#[derive(Args)]
pub struct SweepPlotArgs {
    /// Results folder of `cpbench run` holding a sweep (e.g. `--solvers pgs@omega=0.6:1.4:0.1`).
    pub dir: PathBuf,
    /// The swept setting: a solver setting by name (`omega`), an executor setting as
    /// `exec.<name>` (`exec.max_iter`).
    #[arg(long)]
    pub setting: String,
    /// Only the sweeps of this base solver (registry name, e.g. `pgs`).
    #[arg(long)]
    pub solver: Option<String>,
    /// Cost measure: iterations, matvecs (N-products) or time.
    #[arg(long, default_value = "iterations")]
    pub measure: String,
    /// Settings profile of the rows (default: the folder's first).
    #[arg(long)]
    pub profile: Option<String>,
    #[command(flatten)]
    pub trace_tol: TraceTolArgs,
    /// Folder of the figure and its CSV (default: DIR/report).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub figure: FigureArgs,
}

/// Draw the sweep figures of one setting and print their paths.
pub fn sweep_plot(a: SweepPlotArgs) -> Result<(), AnyError> {
    let opts = a.trace_tol.options()?;
    let m = match a.measure.as_str() {
        "iterations" | "iter" => Metric::Iterations,
        "matvecs" | "n-products" => Metric::Matvecs,
        "time" => Metric::Time,
        other => {
            return Err(format!("--measure '{other}': expected iterations, matvecs or time").into())
        }
    };
    let opts = ReportOptions {
        figure: a.figure.options()?,
        ..opts
    };
    let files = sweep_figures(
        &a.dir,
        &a.setting,
        a.solver.as_deref(),
        m,
        a.profile.as_deref(),
        a.out.as_deref(),
        &opts,
    )?;
    for (png, svg, csv) in files {
        println!(
            "wrote {} ({}, data {})",
            png.display(),
            svg.display(),
            csv.display()
        );
    }
    Ok(())
}
