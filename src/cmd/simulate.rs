//! `cpbench simulate`: solvers in the loop of a granular simulation, each driving its own copy
//! of the scene ([`cpbench_harness::closed_loop`]).

use super::args;
use crate::AnyError;
use clap::Args;
use cpbench_harness::closed_loop::{self, ClosedLoopConfig, LoopStats};
use std::path::PathBuf;

/// Arguments of `cpbench simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// Scene, as for `cpbench generate --scene` (3-D: fill, pile, pyramid, tube, bounce,
    /// cradle, ellipsoid-fill, ellipsoid-pile, stack, slide, mass-ratio, chain, bridge,
    /// hinge-chain; planar: disc-hopper, beam-impact).
    #[arg(long)]
    pub scene: String,
    /// Scene size (the scene's meaning, see `cpbench generate --help`).
    #[arg(long, allow_negative_numbers = true)]
    pub size: i64,
    /// Random seed of the scene.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Steps per solver.
    #[arg(long, default_value_t = 200, allow_negative_numbers = true)]
    pub steps: i64,
    /// Registry solvers, comma-separated, one run each; the first is the reference of the
    /// divergence.
    #[arg(long, value_delimiter = ',', required = true)]
    pub solvers: Vec<String>,
    /// Stopping tolerance of every step's solve [default: 1e-6].
    #[arg(long, allow_negative_numbers = true)]
    pub tol: Option<f64>,
    /// Stopping residual (a `cpbench run --residual` name) [default: the class default].
    #[arg(long)]
    pub residual: Option<String>,
    /// Iteration budget per step [default: 20000].
    #[arg(long, allow_negative_numbers = true)]
    pub max_iter: Option<i64>,
    /// Time budget per step, seconds [default: none].
    #[arg(long, allow_negative_numbers = true)]
    pub time_limit: Option<f64>,
    /// Compliant contact (3-D and planar scenes), as `cpbench generate --compliance`:
    /// `sap:K,TAU_D[,SIGMA]` or `mujoco:D,TIMECONST,DAMPRATIO` [default: rigid contact].
    #[arg(long, allow_hyphen_values = true, value_parser = crate::cmd::generate::parse_compliance)]
    pub compliance: Option<cpbench_granular::ContactCompliance>,
    /// Output folder [default: results/runs/<UTC time>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Skip the figure.
    #[arg(long)]
    pub no_plots: bool,
    #[command(flatten)]
    pub figure: crate::cmd::report::FigureArgs,
}

/// Run every solver in the loop, print the per-solver table, write `closed_loop_steps.csv`,
/// `closed_loop_stats.csv`, `closed_loop.md` and (unless `--no-plots`) `closed_loop.png`.
pub fn run(a: SimulateArgs) -> Result<(), AnyError> {
    let size = args::at_least_one("--size", a.size, "the scene's size")? as usize;
    let steps = args::at_least_one("--steps", a.steps, "steps per solver")?;
    let defaults = cpbench_solvers::ExecSettings::default();
    let exec = cpbench_solvers::ExecSettings {
        tol: match a.tol {
            Some(t) => args::positive("--tol", t, "the stopping tolerance")?,
            None => cpbench_solvers::executor::DEFAULT_TOL,
        },
        residual: args::residual(a.residual.as_deref())?,
        max_iter: match a.max_iter {
            Some(m) => args::at_least_one("--max-iter", m, "iteration budget per step")?,
            None => defaults.max_iter,
        },
        max_time_s: a
            .time_limit
            .map(|t| args::positive("--time-limit", t, "seconds per step"))
            .transpose()?,
        ..defaults
    };
    let figure = a.figure.options()?;
    let cfg = ClosedLoopConfig {
        scene: a.scene,
        size,
        seed: a.seed,
        steps,
        solvers: a.solvers,
        exec,
        compliance: a.compliance,
    };
    let out = a.out.unwrap_or_else(cpbench_harness::run::default_out_dir);
    let runs = closed_loop::closed_loop(&cfg, |s| {
        eprintln!("{} {} ({} steps) with {s}", cfg.scene, cfg.size, cfg.steps)
    })?;
    let stats: Vec<LoopStats> = runs.iter().map(LoopStats::of).collect();
    closed_loop::write_closed_loop(&out, &runs, &stats)?;
    if !a.no_plots {
        let title = format!(
            "{} {} in the loop: {}",
            cfg.scene,
            cfg.size,
            cfg.solvers.join(", ")
        );
        closed_loop::draw_closed_loop(&out, &title, &runs, &figure)?;
    }
    closed_loop::write_closed_loop_md(&out, &cfg, &stats, !a.no_plots)?;
    print!("{}", closed_loop::stats_table(&stats));
    eprintln!("wrote {}", out.join("closed_loop.md").display());
    Ok(())
}
