//! `cpbench`: command-line front end of the workbench (thin: the work is in the crates).
//!
//! ```text
//! cpbench run [--suite default|FILE] [--instances PATH...] [--solvers pgs,jacobi,apgd,spgqp]
//!             [--tol 1e-6] [--max-iter N] [--time-limit S] [--out DIR]
//! cpbench info PATH
//! cpbench convert IN OUT
//! ```
#![warn(missing_docs)]

use clap::{Args, Parser, Subcommand, ValueEnum};
use cpbench_harness::run::{default_out_dir, format_table};
use cpbench_harness::{RunConfig, SolverSpec, Suite};
use cpbench_problems::io::{load, write_bundle, ClassChoice, LoadOptions};
use cpbench_problems::linalg::norm2;
use cpbench_problems::{ConstraintSet, ResidualKind, ValidationOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cpbench",
    version,
    about = "Workbench for the complementarity problems of contact dynamics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run solvers on a suite; write summary.csv, traces, manifest.json and plots.
    Run(RunArgs),
    /// Print class, sizes, nnz, symmetry error, mu range and norms of an instance file.
    Info {
        /// fclib HDF5, Siconos .dat or native bundle directory.
        path: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Convert an instance file into a native bundle (N.mtx, r.mtx, instance.json).
    Convert {
        /// Input file (fclib HDF5, Siconos .dat, bundle).
        input: PathBuf,
        /// Output bundle directory.
        output: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ClassArg {
    /// The frictionless normal block as an LCP.
    Lcp,
    /// The Coulomb cones as they are (CCP relaxation).
    Ccp,
}

#[derive(Args)]
struct ReadArgs {
    /// How a frictional file is read.
    #[arg(long, value_enum, default_value = "ccp")]
    class: ClassArg,
    /// Replace a non-symmetric N by (N + N^T)/2 (recorded in the provenance).
    #[arg(long)]
    symmetrize: bool,
}

impl ReadArgs {
    fn options(&self) -> LoadOptions {
        LoadOptions {
            class: match self.class {
                ClassArg::Lcp => ClassChoice::Lcp,
                ClassArg::Ccp => ClassChoice::Ccp,
            },
            validation: ValidationOptions {
                symmetrize: self.symmetrize,
                ..Default::default()
            },
        }
    }
}

#[derive(Args)]
struct RunArgs {
    /// Built-in suite name (`default`) or a suite JSON file.
    #[arg(long, default_value = "default")]
    suite: String,
    /// Instance files or directories (replace the suite).
    #[arg(long, num_args = 1..)]
    instances: Vec<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    /// Comma-separated solver names.
    #[arg(long, default_value = "pgs,jacobi,apgd,spgqp", value_delimiter = ',')]
    solvers: Vec<String>,
    /// Stopping and check tolerance on the residual.
    #[arg(long, default_value_t = 1e-6)]
    tol: f64,
    /// Stopping residual: nat_map_rel_2, nat_map_rel_inf, nat_map_abs_2, nat_map_rel_max1_2, proj_grad_rel, res4.
    #[arg(long, default_value = "nat_map_rel_2")]
    residual: String,
    /// Iteration budget per solve.
    #[arg(long, default_value_t = 20_000)]
    max_iter: u64,
    /// Time budget per solve, seconds.
    #[arg(long)]
    time_limit: Option<f64>,
    /// Solver settings: a JSON file mapping solver name to its settings object.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// Output folder (default results/runs/<timestamp>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Record every k-th iteration in the traces.
    #[arg(long, default_value_t = 1)]
    trace_every: u64,
    /// Skip the plots.
    #[arg(long)]
    no_plots: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut src = e.source();
            while let Some(s) = src {
                eprintln!("  caused by: {s}");
                src = s.source();
            }
            ExitCode::from(2)
        }
    }
}

type AnyError = Box<dyn std::error::Error>;

fn real_main(cli: Cli) -> Result<(), AnyError> {
    match cli.command {
        Command::Run(a) => cmd_run(a),
        Command::Info { path, read } => cmd_info(&path, &read),
        Command::Convert {
            input,
            output,
            read,
        } => {
            let inst = load(&input, &read.options())?;
            write_bundle(&inst, &output)?;
            println!(
                "wrote {} ({}, n = {}) to {}",
                inst.name(),
                inst.class(),
                inst.n(),
                output.display()
            );
            Ok(())
        }
    }
}

fn cmd_run(a: RunArgs) -> Result<(), AnyError> {
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

fn cmd_info(path: &std::path::Path, read: &ReadArgs) -> Result<(), AnyError> {
    let inst = load(path, &read.options())?;
    let n_mat = inst.n_mat();
    let diag = n_mat.diag();
    let (dmin, dmax) = diag
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &d| {
            (a.min(d), b.max(d))
        });
    println!("name            {}", inst.name());
    println!("class           {}", inst.class());
    println!("n               {}", inst.n());
    println!("blocks          {}", inst.n_blocks());
    println!("nnz(N)          {}", n_mat.nnz());
    println!(
        "density         {:.3e}",
        n_mat.nnz() as f64 / (inst.n() as f64 * inst.n() as f64).max(1.0)
    );
    match inst.provenance().symmetrized_from {
        Some(a) => {
            println!("symmetry error  {a:.3e} (||N - N^T||_F / ||N||_F before symmetrisation)")
        }
        None => println!("symmetry error  0"),
    }
    if let ConstraintSet::CoulombCones { mu } = inst.constraints() {
        let (lo, hi) = mu
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &m| {
                (a.min(m), b.max(m))
            });
        println!("mu range        [{lo}, {hi}]");
    }
    println!("||N||_F         {:.6e}", n_mat.frobenius_norm());
    println!(
        "lambda_max(N)   {:.6e} (50 power iterations)",
        n_mat.power_iteration(50)
    );
    println!("diag(N) range   [{dmin:.6e}, {dmax:.6e}]");
    println!("||r||_2         {:.6e}", norm2(inst.r()));
    println!("hash            {}", inst.hash());
    println!(
        "source          {} ({}, {})",
        inst.provenance().source,
        inst.provenance().format,
        inst.provenance().derivation
    );
    Ok(())
}
