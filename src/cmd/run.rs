//! `cpbench run`: solvers x suite -> results folder.

use crate::{AnyError, ReadArgs};
use clap::Args;
use cpbench_harness::run::{default_out_dir, format_table};
use cpbench_harness::{Profile, RunConfig, Shard, SolverSpec, Suite};
use cpbench_problems::ResidualKind;
use std::path::PathBuf;

/// Arguments of `cpbench run`.
#[derive(Args)]
pub struct RunArgs {
    /// Built-in suite name (`default`, `permon`) or a suite JSON file.
    #[arg(long, default_value = "default")]
    pub suite: String,
    /// Instance files or directories (replace the suite).
    #[arg(long, num_args = 1..)]
    pub instances: Vec<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Comma-separated solver names, `name` or `name:preset` [default: the suite's solvers,
    /// else pgs,jacobi,apgd,spgqp].
    #[arg(long, value_delimiter = ',')]
    pub solvers: Option<Vec<String>>,
    /// Settings profiles (comma-separated): default (tol 1e-6), low (1e-4), high (1e-8)
    /// [default: the suite's tolerance (profile named after the suite), else default].
    #[arg(long, value_delimiter = ',')]
    pub profile: Option<Vec<String>>,
    /// A custom stopping and check tolerance (replaces the profiles by one named `custom`).
    #[arg(long)]
    pub tol: Option<f64>,
    /// Stopping and check residual: nat_map_rel_2, nat_map_rel_inf, nat_map_abs_2,
    /// nat_map_rel_max1_2, proj_grad_rel, res4, fc3d_error. A residual given here is used on
    /// every instance, Coulomb ones included [default: the suite's, else each instance's class
    /// default: fc3d_error on Coulomb instances, nat_map_rel_2 on the others].
    #[arg(long)]
    pub residual: Option<String>,
    /// Iteration budget per solve.
    #[arg(long, default_value_t = 20_000)]
    pub max_iter: u64,
    /// Time budget per solve, seconds.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Solver settings: a JSON file mapping solver name to its settings object.
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Output folder (default results/runs/TIMESTAMP, UTC).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Record every k-th iteration in the traces.
    #[arg(long, default_value_t = 1)]
    pub trace_every: u64,
    /// Skip the plots.
    #[arg(long)]
    pub no_plots: bool,
    /// Runs executed concurrently (one thread each); times are comparable only with 1.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Execute again the runs already present in the output folder (default: skip them).
    #[arg(long)]
    pub rerun: bool,
    /// Run only shard i of n (`i/n`) of the instance x solver x profile matrix.
    #[arg(long)]
    pub shard: Option<Shard>,
}

/// Run the matrix and print the summary table.
pub fn run(a: RunArgs) -> Result<(), AnyError> {
    let suite = if !a.instances.is_empty() {
        let o = a.read.options();
        Suite::from_paths("instances", &a.instances, o.class, a.read.symmetrize)?
    } else if let Some(s) = Suite::builtin(&a.suite) {
        s
    } else {
        Suite::from_file(std::path::Path::new(&a.suite))?
    };
    let residual = match &a.residual {
        Some(r) => Some(ResidualKind::parse(r).ok_or_else(|| format!("unknown residual '{r}'"))?),
        None => suite.default_residual,
    };
    let default_solvers = || -> Vec<String> {
        suite.default_solvers.clone().unwrap_or_else(|| {
            ["pgs", "jacobi", "apgd", "spgqp", "ipm"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        })
    };
    let solvers = a.solvers.clone().unwrap_or_else(default_solvers);
    let settings: Option<serde_json::Map<String, serde_json::Value>> = match &a.settings {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Some(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?)
        }
        None => None,
    };
    let instances = suite.load()?;
    let out = a.out.unwrap_or_else(default_out_dir);
    let mut cfg = RunConfig::new(out.clone());
    cfg.suite = suite.name.clone();
    cfg.solvers = solvers
        .iter()
        .map(|s| SolverSpec {
            name: s.trim().to_string(),
            settings: settings.as_ref().and_then(|m| m.get(s.trim()).cloned()),
        })
        .collect();
    cfg.profiles = match (a.tol, &a.profile, suite.default_tol) {
        (Some(tol), _, _) => vec![Profile {
            name: "custom".into(),
            tol,
        }],
        (None, None, Some(tol)) => vec![Profile {
            name: suite.name.clone(),
            tol,
        }],
        (None, profiles, _) => profiles
            .clone()
            .unwrap_or_else(|| vec!["default".to_string()])
            .iter()
            .map(|p| {
                Profile::builtin(p.trim())
                    .ok_or_else(|| format!("unknown profile '{p}' (default, low, high)"))
            })
            .collect::<Result<_, _>>()?,
    };
    cfg.jobs = a.jobs;
    cfg.rerun = a.rerun;
    cfg.shard = a.shard;
    cfg.exec.residual = residual;
    cfg.check_residual = residual;
    cfg.exec.max_iter = a.max_iter;
    cfg.exec.max_time_s = a.time_limit;
    cfg.trace_every = a.trace_every;
    cfg.plots = !a.no_plots;
    eprintln!(
        "suite '{}': {} instances x {} solvers -> {}",
        suite.name,
        instances.len(),
        cfg.solvers.len(),
        out.display()
    );
    let outcome = cpbench_harness::run(&instances, &cfg)?;
    let rows = &outcome.rows;
    print!("{}", format_table(rows));
    let ok = rows.iter().filter(|r| r.success).count();
    println!(
        "{ok}/{} runs checked successful ({} run now, {} already present); results in {}",
        rows.len(),
        outcome.executed,
        outcome.skipped,
        out.display()
    );
    Ok(())
}
