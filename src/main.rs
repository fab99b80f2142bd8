//! `cpbench`: command-line front end of the workbench (thin: the work is in the crates).
//!
//! ```text
//! cpbench run [--suite default|FILE] [--instances PATH...] [--solvers NAME,...]
//!             [--tol 1e-6] [--max-iter N] [--time-limit S] [--settings FILE] [--out DIR]
//! cpbench solvers [--json]       (every solver: classes, cost model, settings and ranges)
//! cpbench info PATH [--class lcp|ccp|coulomb|blcp|lcp-pyramid[:k]] [--coulomb-gap [A,B]]
//! cpbench convert IN OUT        (OUT ending in .hdf5/.h5: fclib local problem; .npz: NumPy arrays; else a bundle)
//! ```
#![deny(missing_docs)]
// the doc comments of the clap argument structs are the command-line help, plain text
// (`lcp-pyramid[:k]`, `<id>`), not rustdoc markdown
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod chain;
mod cmd;

use clap::{Args, Parser, Subcommand, ValueEnum};
use cpbench_problems::io::{ClassChoice, LoadOptions, OutputFormat};
use cpbench_problems::ValidationOptions;
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
    Run(Box<cmd::run::RunArgs>),
    /// Write report.md: performance profiles, shifted geometric means, convergence plots.
    Report(cmd::report::ReportArgs),
    /// Draw the cost to the tolerance against a swept setting (variants of one solver that
    /// differ in that setting only), one line per instance, with the CSV behind it.
    SweepPlot(cmd::report::SweepPlotArgs),
    /// Join the result folders of shards into one.
    Merge(cmd::merge::MergeArgs),
    /// Re-run a published experiment by name (--list for the recipes); write its run folder
    /// and reproduce.md with our numbers beside the paper's.
    Reproduce(cmd::reproduce::ReproduceArgs),
    /// Run a granular scene with each solver in the loop (its own copy of the simulation) and
    /// compare the cost per step and the physics of their answers over time.
    Simulate(Box<cmd::simulate::SimulateArgs>),
    /// Compare a results folder with a baseline; exit code 1 on a regression.
    Check(cmd::check::CheckArgs),
    /// List the solvers (or one): classes, cost model, each setting's type, default, range and
    /// meaning.
    Solvers(cmd::solvers::SolversArgs),
    /// Simulate a granular scene (3-D spheres or ellipsoids, planar discs: see --scene) and
    /// export its contact problems, or (`--lcp`) export a seeded random general LCP.
    Generate(Box<cmd::generate::GenerateArgs>),
    /// Print class, sizes, nnz, symmetry error, mu range and norms of an instance file.
    Info {
        /// fclib HDF5, Siconos .dat or native bundle directory.
        path: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        /// Also solve the CCP relaxation (APGD) and the Coulomb problem (NSGS) to 1e-10 and
        /// print how far apart their solutions are (r and normal velocities); the same as
        /// `--formulations ccp,coulomb`.
        #[arg(long)]
        coulomb_gap: bool,
        /// Compare two formulations of the file's frictional problem: solve both to 1e-10
        /// (ccp: apgd, coulomb: nsgs, blcp: pgs, lcp: pgs, lcp-pyramid[:k]: lemke), map the
        /// solutions to contact impulses and print the gaps of the impulses and of the normal
        /// velocities, e.g. `--formulations coulomb,blcp`.
        #[arg(long, value_name = "A,B", value_delimiter = ',')]
        formulations: Option<Vec<ClassChoice>>,
        /// The solvers of the two formulations of `--formulations` (registry names), instead
        /// of the defaults above.
        #[arg(long, value_name = "S1,S2", value_delimiter = ',')]
        gap_solvers: Option<Vec<String>>,
        /// Memory budget for what is read and derived (`--class lcp-pyramid:k` above all):
        /// bytes or a size with a binary unit (`8G`, `500M`); a formulation predicted to need
        /// more is refused with its size [default: 60% of the machine's memory].
        #[arg(long, allow_hyphen_values = true)]
        memory_limit: Option<String>,
    },
    /// Convert an instance file into a native bundle (N.mtx, r.mtx, instance.json), or, when
    /// the output ends in .hdf5 or .h5, into an fclib local problem (Coulomb-cone instances
    /// only), or, when it ends in .npz, into NumPy arrays (SciPy's CSC layout for N).
    Convert {
        /// Input file (fclib HDF5, Siconos .dat, bundle, .npz).
        input: PathBuf,
        /// Output: bundle directory, fclib file `*.hdf5` / `*.h5`, or `*.npz`.
        output: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
    },
}

/// `--operator` values: the storage behind `N`-products.
#[derive(Clone, Copy, Default, ValueEnum)]
pub enum OperatorArg {
    /// Block storage from 2M stored entries of N, CSC below (results bit-identical to CSC).
    #[default]
    Auto,
    /// Full symmetric compressed sparse columns.
    Csc,
    /// Symmetric block storage, upper triangle, u32 indices: 3x3 blocks for 3-D cones, 2x2 for
    /// 2-D (planar) cones, 1x1 for LCP and box QP.
    Block,
    /// D^T M^-1 D from the factors (instances that carry D and M; global fclib and Siconos
    /// files with --class ccp keep M and H instead of condensing).
    MatrixFree,
}

/// How instance files are read (shared by several subcommands).
#[derive(Args)]
pub struct ReadArgs {
    /// How a frictional file is read: ccp (the cones as they are, CCP relaxation), lcp (the
    /// frictionless normal block), coulomb (the true Coulomb problem, W kept as read), blcp
    /// (the boxed LCP of ODE-style engines, |gamma_t,i| <= mu gamma_n), lcp-pyramid[:k] (the
    /// Stewart-Trinkle / Anitescu-Potra LCP of the friction pyramid with k facet directions,
    /// k >= 3, default 4).
    #[arg(long, default_value = "ccp", value_name = "CLASS")]
    pub class: ClassChoice,
    /// Replace a non-symmetric N by (N + N^T)/2 (recorded in the provenance).
    #[arg(long)]
    pub symmetrize: bool,
    /// Storage of N for the products (shown by `info`, recorded in the manifest).
    #[arg(long, value_enum, default_value = "auto")]
    pub operator: OperatorArg,
}

impl ReadArgs {
    /// Put a loaded instance on the storage `--operator` asks for (`auto`: as loaded).
    /// Errors: [`cpbench_problems::ProblemError::OperatorUnavailable`].
    pub fn apply_operator(
        &self,
        inst: cpbench_problems::Instance,
    ) -> Result<cpbench_problems::Instance, cpbench_problems::ProblemError> {
        use cpbench_problems::OperatorKind;
        match self.operator {
            OperatorArg::Auto => Ok(inst),
            OperatorArg::Csc => inst.with_operator(OperatorKind::Csc),
            OperatorArg::Block => inst.with_operator(OperatorKind::Block),
            OperatorArg::MatrixFree => inst.with_operator(OperatorKind::MatrixFree),
        }
    }

    /// How global friction files are read: kept as `M` and `H` under `--operator matrix-free`
    /// (with `--class ccp` or `coulomb`), condensed to `W` otherwise (docs/cli.md, "Storage
    /// of N").
    pub fn global_form(&self) -> cpbench_problems::io::GlobalForm {
        match self.operator {
            OperatorArg::MatrixFree => cpbench_problems::io::GlobalForm::MatrixFree,
            _ => cpbench_problems::io::GlobalForm::Condensed,
        }
    }

    /// Load `path` as these arguments ask ([`ReadArgs::options`], [`ReadArgs::global_form`])
    /// and put it on the storage `--operator` asks for ([`ReadArgs::apply_operator`]).
    pub fn load(
        &self,
        path: &std::path::Path,
    ) -> Result<cpbench_problems::Instance, cpbench_problems::ProblemError> {
        let inst = cpbench_problems::io::load_with(path, &self.options(), self.global_form())?;
        self.apply_operator(inst)
    }

    /// The load options these arguments select.
    pub fn options(&self) -> LoadOptions {
        LoadOptions {
            class: self.class,
            validation: ValidationOptions {
                symmetrize: self.symmetrize,
                ..Default::default()
            },
        }
    }
}

/// A closed stdout (`cpbench info X | head`) ends the program quietly, as it ends C tools
/// (SIGPIPE), instead of the panic `println!` raises on a broken pipe; every other panic
/// keeps the default report.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_broken_pipe();
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprint!("{}", chain::format_error_chain(e.as_ref()));
            ExitCode::from(2)
        }
    }
}

/// Any error, printed with its chain of causes.
pub type AnyError = Box<dyn std::error::Error>;

fn real_main(cli: Cli) -> Result<ExitCode, AnyError> {
    match cli.command {
        Command::Check(a) => {
            return Ok(if cmd::check::run(a)? {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        c => other_commands(c)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn other_commands(command: Command) -> Result<(), AnyError> {
    match command {
        Command::Check(_) => unreachable!("handled by real_main"),
        Command::Report(a) => cmd::report::run(a),
        Command::SweepPlot(a) => cmd::report::sweep_plot(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Reproduce(a) => cmd::reproduce::run(a),
        Command::Run(a) => cmd::run::run(*a),
        Command::Solvers(a) => cmd::solvers::run(a),
        Command::Generate(a) => cmd::generate::generate(*a),
        Command::Simulate(a) => cmd::simulate::run(*a),
        Command::Info {
            path,
            read,
            coulomb_gap,
            formulations,
            gap_solvers,
            memory_limit,
        } => {
            if let Some(m) = memory_limit {
                cpbench_problems::memory::set_memory_limit(Some(cmd::args::memory_size(
                    "--memory-limit",
                    &m,
                )?));
            }
            let two = |what: &str, n: usize| -> AnyError {
                format!("{what} takes two comma-separated values (A,B), found {n}").into()
            };
            let pair = match formulations {
                Some(f) => Some(
                    <[ClassChoice; 2]>::try_from(f).map_err(|f| two("--formulations", f.len()))?,
                ),
                None if coulomb_gap || gap_solvers.is_some() => {
                    Some([ClassChoice::Ccp, ClassChoice::Coulomb])
                }
                None => None,
            };
            let solvers = gap_solvers
                .map(|s| <[String; 2]>::try_from(s).map_err(|s| two("--gap-solvers", s.len())))
                .transpose()?;
            cmd::info::info(&path, &read)?;
            if let Some(pair) = pair {
                cmd::info::formulation_gap(&path, &read, pair, solvers)?;
            }
            Ok(())
        }
        Command::Convert {
            input,
            output,
            read,
        } => {
            // `--operator csc|block` forms N of a matrix-free input (every output holds N then)
            let inst = read.load(&input)?;
            let format = OutputFormat::from_path(&output);
            format.write(&inst, &output)?;
            let kind = match format {
                OutputFormat::Bundle => String::new(),
                f => format!(" ({})", f.describe()),
            };
            println!(
                "wrote {} ({}, n = {}) to {}{kind}",
                inst.name(),
                inst.class(),
                inst.n(),
                output.display(),
            );
            Ok(())
        }
    }
}
