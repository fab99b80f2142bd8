//! `cpbench run`: solvers x suite -> results folder.

use crate::{AnyError, ReadArgs};
use clap::Args;
use cpbench_harness::run::{default_out_dir, format_table};
use cpbench_harness::{RunConfig, SolverSpec, Suite};
use cpbench_problems::ResidualKind;
use std::path::PathBuf;

/// Arguments of `cpbench run`.
#[derive(Args)]
pub struct RunArgs {
    /// Built-in suite name (`default`) or a suite JSON file.
    #[arg(long, default_value = "default")]
    pub suite: String,
    /// Instance files or directories (replace the suite).
    #[arg(long, num_args = 1..)]
    pub instances: Vec<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Comma-separated solver names.
    #[arg(long, default_value = "pgs,jacobi,apgd,spgqp", value_delimiter = ',')]
    pub solvers: Vec<String>,
    /// Stopping and check tolerance on the residual.
    #[arg(long, default_value_t = 1e-6)]
    pub tol: f64,
    /// Stopping residual: nat_map_rel_2, nat_map_rel_inf, nat_map_abs_2, nat_map_rel_max1_2, proj_grad_rel, res4.
    #[arg(long, default_value = "nat_map_rel_2")]
    pub residual: String,
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
    let residual = ResidualKind::parse(&a.residual)
        .ok_or_else(|| format!("unknown residual '{}'", a.residual))?;
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
    cfg.solvers = a
        .solvers
        .iter()
        .map(|s| SolverSpec {
            name: s.trim().to_string(),
            settings: settings.as_ref().and_then(|m| m.get(s.trim()).cloned()),
        })
        .collect();
    cfg.exec.tol = a.tol;
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
    let rows = cpbench_harness::run(&instances, &cfg)?;
    print!("{}", format_table(&rows));
    let ok = rows.iter().filter(|r| r.success).count();
    println!(
        "{ok}/{} runs checked successful at tol {:e}; results in {}",
        rows.len(),
        a.tol,
        out.display()
    );
    Ok(())
}
