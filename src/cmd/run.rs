//! `cpbench run`: solvers x suite -> results folder.

use crate::cmd::args;
use crate::{AnyError, ReadArgs};
use clap::Args;
use cpbench_harness::request::{RunRequest, ScaleSource, SolverToken, SuiteSource};
use cpbench_harness::run::{default_out_dir, refusals, Refusal};
use cpbench_harness::table::format_table;
use cpbench_harness::variants::VariantsFile;
use cpbench_harness::{Shard, Suite};
use cpbench_solvers::{registry, SolverError};
use std::path::PathBuf;

/// Arguments of `cpbench run`.
#[derive(Args)]
pub struct RunArgs {
    /// Built-in suite name (`default`, `permon`, `lcp`, `scale`) or a suite JSON file. `scale`:
    /// pyramid CCPs of about 1e3, 1e4, 1e5 and 1e6 contacts generated into a cache
    /// (`--cache`), each run alone on the whole machine at 100 iterations (see
    /// `--scale-contacts`, `--scale-max-contacts`).
    #[arg(long, default_value = "default")]
    pub suite: String,
    /// Cache folder of the `scale` suite's generated instances (`.npz`; a missing one is
    /// generated) [default: OUT/cache].
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Contact counts of the `scale` suite, comma-separated; each gives the pyramid nearest
    /// to it [default: 1e3,1e4,1e5,1e6].
    #[arg(long, value_delimiter = ',')]
    pub scale_contacts: Option<Vec<f64>>,
    /// Leave out the `scale` suite's sizes above this many contacts (e.g. 1e5: the 1e6 size
    /// takes minutes and several GB).
    #[arg(long)]
    pub scale_max_contacts: Option<f64>,
    /// Run factorising solvers (`ipm`) of the `scale` suite only on sizes of at most this
    /// many contacts (their sparse Cholesky factor grows about 30x per 10x contacts: some
    /// 5 GB at 1e5) [default: 2e4].
    #[arg(long)]
    pub scale_factorising_max_contacts: Option<f64>,
    /// Measure the memory bandwidth (a STREAM triad, about 0.5 s and 192 MiB) and record it
    /// in the manifest (always done for the `scale` suite).
    #[arg(long)]
    pub bandwidth: bool,
    /// Instance files or directories (replace the suite).
    #[arg(long, num_args = 1..)]
    pub instances: Vec<PathBuf>,
    /// Replay a trajectory folder (`cpbench generate` writes one: step instances, their
    /// contacts files and `trajectory.json`; docs/formats.md), or `builtin` (the built-in
    /// trajectories, generated into OUT/trajectories): every solver goes through the steps
    /// cold and warm-started from its own previous answer mapped by contact identity;
    /// `--max-iter` / `--time-limit` are the per-step budget. Writes `replay_steps.csv` and
    /// `replay_stats.csv` (p50 / p95 / max iterations and time per step) into `--out`.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["instances", "shard", "repeat", "profile"])]
    pub trajectory: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Comma-separated solver names (help generated from the registry).
    #[arg(long, value_delimiter = ',', help = crate::cmd::solvers::run_solvers_help())]
    pub solvers: Option<Vec<String>>,
    /// Settings profiles (comma-separated): default (tol 1e-6), low (1e-4), high (1e-8)
    /// [default: the suite's tolerance (profile named after the suite), else default].
    #[arg(long, value_delimiter = ',')]
    pub profile: Option<Vec<String>>,
    /// A custom stopping and check tolerance (replaces the profiles by one named `custom`).
    #[arg(long, allow_negative_numbers = true)]
    pub tol: Option<f64>,
    /// Stopping and check residual: nat_map_rel_2, nat_map_rel_inf, nat_map_abs_2,
    /// nat_map_rel_max1_2, proj_grad_rel, res4, fc3d_error, res3 (Heyn's residual 3, absolute). A residual given here is used on
    /// every instance, Coulomb ones included [default: the suite's, else each instance's class
    /// default: fc3d_error on Coulomb instances, nat_map_rel_2 on the others].
    #[arg(long)]
    pub residual: Option<String>,
    /// Monitor every K iterations: the stopping residual, the trace row, the best iterate and
    /// the stall and divergence tests at iterations K, 2K, ... and at the end of the solve;
    /// between them the solver runs unmonitored (it may run up to K - 1 iterations past the
    /// tolerance). For large instances, where monitoring costs more than an iteration
    /// [default: 1].
    #[arg(long, allow_negative_numbers = true)]
    pub check_every: Option<i64>,
    /// End a solve as `stalled` when its best residual has not fallen by 1% within N
    /// iterations, or `off`: no such rule (Siconos has none; for comparisons at an iteration
    /// cap) [default: 5000].
    #[arg(long, value_name = "N|off", allow_hyphen_values = true)]
    pub stall_window: Option<String>,
    /// Iteration budget per solve [default: 20000; 100 for the `scale` suite].
    #[arg(long, allow_negative_numbers = true)]
    pub max_iter: Option<i64>,
    /// Time budget per solve, seconds [default: none; 300 for the `scale` suite].
    #[arg(long, allow_negative_numbers = true)]
    pub time_limit: Option<f64>,
    /// Memory budget per solve for a solver's large allocations (factorisations): bytes or a
    /// size with a binary unit (`8G`, `500M`). A solver predicting more refuses (status
    /// unsupported, predicted bytes in `message`) [default: 60% of the machine's memory].
    #[arg(long, allow_hyphen_values = true)]
    pub memory_limit: Option<String>,
    /// Solver settings, a JSON file or inline JSON (`'{"pgs": {"omega": 0.8}}'`) mapping solver
    /// name to its settings object (every key must be a solver name, every field a setting of
    /// that solver; `cpbench solvers` lists them).
    #[arg(long)]
    pub settings: Option<String>,
    /// External solvers: a JSON definition file (docs/external.md) whose solvers are named
    /// `ext:NAME` in `--solvers`. Siconos' solvers (`siconos:nsgs`, ...) need no file.
    #[arg(long, value_name = "FILE")]
    pub external: Option<PathBuf>,
    /// Named solver variants, a JSON file or inline JSON: `{"pgs-slow": {"solver": "pgs",
    /// "omega": 0.8}}`. Their names can be used in `--solvers`; without `--solvers` the file's
    /// variants run, in file order.
    #[arg(long)]
    pub variants: Option<String>,
    /// Stop at the first input that does not load (default: record it as a `load_error` row,
    /// run the rest, exit non-zero at the end).
    #[arg(long)]
    pub fail_fast: bool,
    /// Output folder (default results/runs/TIMESTAMP, UTC).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Record every k-th iteration in the traces [default: 1; 10 for the `scale` suite].
    #[arg(long, allow_negative_numbers = true)]
    pub trace_every: Option<i64>,
    /// Skip the plots (and the report, whose figures they are: `cpbench report DIR` writes it
    /// later).
    #[arg(long)]
    pub no_plots: bool,
    /// Skip the report (report.md and its figures, written by default at the end of the run,
    /// as `cpbench report DIR` would).
    #[arg(long)]
    pub no_report: bool,
    #[command(flatten)]
    pub figure: crate::cmd::report::FigureArgs,
    /// Runs executed concurrently (one thread each); times are comparable only with 1. At least
    /// 1; more than the machine's threads is capped with a warning.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub jobs: i64,
    /// Execute again the runs already present in the output folder (default: skip them).
    #[arg(long)]
    pub rerun: bool,
    /// Run only shard i of n (`i/n`) of the instance x solver x profile matrix.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Timed solves per run (at least 1): `time_s` is the median of K solves from the same
    /// start, `time_min_s` / `time_max_s` their range; the answer, trace and counters are the
    /// first solve's (solvers are deterministic).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub repeat: i64,
}

/// Run the matrix and print the summary table: the arguments mapped onto a [`RunRequest`],
/// which resolves, loads and executes the run (the `scale` suite included).
pub fn run(a: RunArgs) -> Result<(), AnyError> {
    let is_scale = a.instances.is_empty() && a.suite == "scale";
    // numeric arguments first, before anything is read; unset ones keep the request's
    // defaults (the `scale` suite has its own)
    let max_iter = a
        .max_iter
        .map(|m| args::at_least_one("--max-iter", m, "iteration budget per solve"))
        .transpose()?;
    let trace_every = a
        .trace_every
        .map(|k| args::at_least_one("--trace-every", k, "1 records every iteration"))
        .transpose()?;
    let time_limit = a
        .time_limit
        .map(|t| args::positive("--time-limit", t, "seconds per solve"))
        .transpose()?;
    if let Some(t) = a.tol {
        args::positive("--tol", t, "the stopping tolerance")?;
    }
    let stall_window = a
        .stall_window
        .as_deref()
        .map(|v| args::stall_window("--stall-window", v))
        .transpose()?;
    let jobs = args::jobs(a.jobs)?;
    if let Some(dir) = &a.trajectory {
        return replay(&a, dir, max_iter, time_limit, stall_window);
    }
    if !is_scale
        && (a.cache.is_some()
            || a.scale_contacts.is_some()
            || a.scale_max_contacts.is_some()
            || a.scale_factorising_max_contacts.is_some())
    {
        return Err(
            "--cache and the --scale-* options apply to --suite scale only (--cache, \
             --scale-contacts, --scale-max-contacts, --scale-factorising-max-contacts)"
                .into(),
        );
    }
    let figure = a.figure.options()?;
    let max_memory_bytes = a
        .memory_limit
        .as_deref()
        .map(|v| args::memory_size("--memory-limit", v))
        .transpose()?;
    // also the budget of what the run reads and derives (`--class lcp-pyramid:k`)
    cpbench_problems::memory::set_memory_limit(max_memory_bytes);
    let settings = settings_arg(a.settings.as_deref())?;
    let variants = variants_arg(a.variants.as_deref())?;
    let source = if is_scale {
        let mut s = ScaleSource::new(
            a.scale_contacts.as_deref().unwrap_or(&[]),
            a.scale_max_contacts,
        )?;
        s.cache = a.cache.clone();
        if let Some(c) = a.scale_factorising_max_contacts {
            s.factorising_max_contacts = c;
        }
        SuiteSource::Scale(s)
    } else if a.instances.is_empty() {
        SuiteSource::Named(a.suite.clone())
    } else {
        SuiteSource::Paths {
            paths: a.instances.clone(),
            class: a.read.options().class,
            symmetrize: a.read.symmetrize,
        }
    };
    let out = a.out.clone().unwrap_or_else(default_out_dir);
    let mut req = solver_request(&a, source, out.clone(), settings, variants)?;
    req.profiles = a.profile.clone();
    req.tol = a.tol;
    req.max_iter = max_iter.unwrap_or(req.max_iter);
    req.time_limit = time_limit.or(req.time_limit);
    req.trace_every = trace_every.unwrap_or(req.trace_every);
    req.max_memory_bytes = max_memory_bytes;
    if let Some(k) = a.check_every {
        req.check_every = Some(args::at_least_one(
            "--check-every",
            k,
            "1 checks every iteration",
        )?);
    }
    if let Some(w) = stall_window {
        req.stall_window = w;
    }
    req.fail_fast = a.fail_fast;
    req.jobs = jobs;
    req.repeat = args::at_least_one("--repeat", a.repeat, "timed solves per run")? as usize;
    req.sample_load = true;
    req.rerun = a.rerun;
    req.shard = a.shard;
    req.measure_bandwidth |= a.bandwidth;
    req.global_form = a.read.global_form();
    req.plots = !a.no_plots;
    req.figure = figure;
    req.validate()?;
    let suite = req.suite()?;
    req.residual = args::residual(a.residual.as_deref())?;
    if suite.entries.is_empty() && !suite.trajectories.is_empty() {
        // a suite of trajectories alone: replayed only
        return replay_suite(&a, &req, &suite, &out);
    }
    let solvers = req.solver_specs(&suite)?;
    let (instances, load_errors) = req.load(
        &suite,
        |i| a.read.apply_operator(i).map_err(Into::into),
        |e| eprintln!("load error: {e}"),
    )?;
    let cfg = req.config(&suite, solvers, load_errors)?;
    match &req.suite {
        SuiteSource::Scale(s) => eprintln!(
            "suite 'scale': {} sizes ({} contacts) x {} solvers, cache {} -> {}",
            s.sizes.len(),
            s.sizes
                .iter()
                .map(|z| z.contacts.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            cfg.solvers.len(),
            s.cache
                .clone()
                .unwrap_or_else(|| out.join("cache"))
                .display(),
            out.display()
        ),
        _ => {
            eprintln!(
                "suite '{}': {} instances x {} solvers -> {}",
                suite.name,
                instances.len(),
                cfg.solvers.len(),
                out.display()
            );
            print_refusals(&refusals(&instances, &cfg.solvers)?);
        }
    }
    let fact_cap = match &req.suite {
        SuiteSource::Scale(s) => s.factorising_max_contacts,
        _ => f64::INFINITY,
    };
    let outcome = req.execute(&instances, &cfg, |r| print_size(r, fact_cap))?;
    let finished = finish(&a, &outcome, &cfg, &suite, &out, figure);
    // the trajectories run even when an instance did not load (its error comes after)
    if !suite.trajectories.is_empty() {
        replay_suite(&a, &req, &suite, &out)?;
    }
    finished
}

/// A request for `source` into `out` with the solver arguments mapped: `--solvers`, the
/// settings and variants (already read), `--external` (loaded here). Errors: the external
/// definition file's.
fn solver_request(
    a: &RunArgs,
    source: SuiteSource,
    out: PathBuf,
    settings: Option<serde_json::Map<String, serde_json::Value>>,
    variants: Option<VariantsFile>,
) -> Result<RunRequest, AnyError> {
    let mut req = RunRequest::new(source, out);
    req.solvers = a
        .solvers
        .clone()
        .map(|s| s.into_iter().map(SolverToken::Name).collect());
    req.settings = settings;
    req.variants = variants;
    req.external = a
        .external
        .as_deref()
        .map(cpbench_solvers::external::ExternalDefs::load)
        .transpose()
        .map_err(SolverError::from)?;
    Ok(req)
}

/// `cpbench run --trajectory DIR|builtin`: load the trajectory (or generate the built-in ones,
/// [`cpbench_harness::trajectory_suite::BUILTIN`], into `OUT/trajectories/`, reused when present),
/// replay it with the chosen solvers (default: the registry's default list; a solver that
/// refuses a step's class skips it) under the tolerance (`--tol`, else the default profile's)
/// and the per-step budget, print the per-solver table and write the CSVs into `--out` (one
/// folder per built-in trajectory).
fn replay(
    a: &RunArgs,
    dir: &std::path::Path,
    max_iter: Option<u64>,
    time_limit: Option<f64>,
    stall_window: Option<Option<u64>>,
) -> Result<(), AnyError> {
    use cpbench_harness::trajectory;
    let out = a.out.clone().unwrap_or_else(default_out_dir);
    let targets: Vec<(PathBuf, PathBuf)> = if dir == std::path::Path::new("builtin") {
        let mut t = Vec::new();
        for b in &cpbench_harness::trajectory_suite::BUILTIN {
            let name = format!("{}-{}", b.scene, b.size);
            let src = out.join("trajectories").join(&name);
            if !src.join(trajectory::INDEX_FILE).exists() {
                eprintln!("generating {name}: {} ({} steps)", b.about, b.steps);
                cpbench_harness::trajectory_suite::generate_builtin(b, &src)?;
            }
            t.push((src, out.join(name)));
        }
        t
    } else {
        vec![(dir.to_path_buf(), out.clone())]
    };
    let req = solver_request(
        a,
        SuiteSource::Named("default".into()),
        out.clone(),
        settings_arg(a.settings.as_deref())?,
        variants_arg(a.variants.as_deref())?,
    )?;
    // one residual for the stop and the check, as in a profile
    let exec = cpbench_solvers::ExecSettings {
        tol: a.tol.unwrap_or(cpbench_solvers::executor::DEFAULT_TOL),
        residual: args::residual(a.residual.as_deref())?,
        max_iter: max_iter.unwrap_or(req.max_iter),
        max_time_s: time_limit,
        stall_window: stall_window.unwrap_or(req.stall_window),
        ..Default::default()
    };
    for (src, dst) in targets {
        let traj = trajectory::Trajectory::load(&src, &a.read.options())?;
        // no suite defaults: the request's solvers, else the registry's default list
        let solvers = req.solver_specs(&Suite::new(&traj.scene, Vec::new()))?;
        replay_one(a, &traj, &solvers, &exec, &dst)?;
    }
    Ok(())
}

/// Replay one loaded trajectory with `solvers` under `exec` into `dst`: the CSVs, the figure
/// (unless `--no-plots`), `replay.md`, and the per-solver table on standard output.
fn replay_one(
    a: &RunArgs,
    traj: &cpbench_harness::trajectory::Trajectory,
    solvers: &[cpbench_harness::run::SolverSpec],
    exec: &cpbench_solvers::ExecSettings,
    dst: &std::path::Path,
) -> Result<(), AnyError> {
    use cpbench_harness::trajectory;
    eprintln!(
        "trajectory '{}': {} steps x {} solvers, cold and warm -> {}",
        traj.scene,
        traj.steps.len(),
        solvers.len(),
        dst.display()
    );
    let rows = trajectory::replay(traj, solvers, exec)?;
    let stats = trajectory::replay_stats(&rows);
    trajectory::write_replay(dst, &rows, &stats)?;
    let figure = !a.no_plots && !rows.is_empty();
    if figure {
        let fig = a.figure.options()?;
        cpbench_harness::trajectory_plot::draw_replay(dst, &traj.scene, &rows, &fig)?;
    }
    trajectory::write_replay_md(dst, traj, exec, &stats, figure)?;
    print!("{}", trajectory::stats_table(&stats));
    Ok(())
}

/// The trajectories of a suite file, replayed after its instances (a suite of trajectories
/// alone: replayed only) into `OUT/replay/<folder name>/` (`-2`, `-3`, ... for a name met
/// again), with the request's solvers (else the suite's, else the registry's defaults), one
/// residual for the stop and the check (`--residual`, else the suite's, else each class's
/// default) and the tolerance `--tol`, else the suite's, else [`DEFAULT_TOL`]; the request's
/// per-step budget, stall window and monitoring period.
///
/// [`DEFAULT_TOL`]: cpbench_solvers::executor::DEFAULT_TOL
fn replay_suite(
    a: &RunArgs,
    req: &RunRequest,
    suite: &Suite,
    out: &std::path::Path,
) -> Result<(), AnyError> {
    let exec = cpbench_solvers::ExecSettings {
        tol: req
            .tol
            .or(suite.default_tol)
            .unwrap_or(cpbench_solvers::executor::DEFAULT_TOL),
        residual: req.residual.or(suite.default_residual),
        max_iter: req.max_iter,
        max_time_s: req.time_limit,
        stall_window: req.stall_window,
        check_every: req.check_every,
        ..Default::default()
    };
    let solvers = req.solver_specs(suite)?;
    let mut used: Vec<String> = Vec::new();
    for src in &suite.trajectories {
        let traj = cpbench_harness::trajectory::Trajectory::load(src, &a.read.options())?;
        let base = src.file_name().map_or_else(
            || "trajectory".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let mut name = base.clone();
        let mut k = 1;
        while used.contains(&name) {
            k += 1;
            name = format!("{base}-{k}");
        }
        used.push(name.clone());
        replay_one(a, &traj, &solvers, &exec, &out.join("replay").join(name))?;
    }
    Ok(())
}

/// The progress line of one size of the `scale` suite.
fn print_size(r: &cpbench_harness::scale::SizeReport, fact_cap: f64) {
    let left = if r.left_out.is_empty() {
        String::new()
    } else {
        format!(
            " ({} left out above {fact_cap:e} contacts)",
            r.left_out.join(", ")
        )
    };
    if r.n == 0 {
        eprintln!(
            "  pyramid-{}: {} contacts: nothing to run{left}",
            r.size.layers, r.size.contacts
        );
        return;
    }
    eprintln!(
        "  pyramid-{}: {} contacts, n = {}, {} in {:.1} s, runs {:.1} s{left}",
        r.size.layers,
        r.size.contacts,
        r.n,
        if r.generated {
            "generated"
        } else {
            "read from the cache"
        },
        r.load_s,
        r.run_s
    );
}

/// The end of a run: the summary table, the closing line, the report and its summary (unless
/// `--no-report` or `--no-plots`), and an error naming the inputs that did not load.
fn finish(
    a: &RunArgs,
    outcome: &cpbench_harness::run::RunOutcome,
    cfg: &cpbench_harness::RunConfig,
    suite: &Suite,
    out: &std::path::Path,
    figure: cpbench_harness::plot::FigureOptions,
) -> Result<(), AnyError> {
    let rows = &outcome.rows;
    print!("{}", format_table(rows));
    let ok = rows.iter().filter(|r| r.success).count();
    let refused = rows
        .iter()
        .filter(|r| r.status == cpbench_harness::run::REFUSED)
        .count();
    let loaded = rows
        .iter()
        .filter(|r| r.status != cpbench_harness::run::LOAD_ERROR)
        .count();
    println!(
        "{ok}/{} accepted runs checked successful, {refused} refused (a class the solver does \
         not take; not runs) ({} run now, {} already present); results in {}",
        loaded - refused,
        outcome.executed,
        outcome.skipped,
        out.display()
    );
    if a.no_report || a.no_plots {
        println!(
            "no report ({}): `cpbench report {}` writes it",
            if a.no_report {
                "--no-report"
            } else {
                "--no-plots"
            },
            out.display()
        );
    } else {
        let opts = cpbench_harness::report::ReportOptions {
            figure,
            ..Default::default()
        };
        let (path, summary) = cpbench_harness::report::report_with_summary(out, &opts)?;
        println!("report: {}", path.display());
        for line in summary {
            println!("{line}");
        }
    }
    if !cfg.load_errors.is_empty() {
        return Err(format!(
            "{} of {} inputs did not load (rows with status load_error in {}): {}",
            cfg.load_errors.len(),
            suite.entries.len(),
            out.join("summary.csv").display(),
            cfg.load_errors
                .iter()
                .map(|f| f.source.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
        .into());
    }
    Ok(())
}

/// `--settings JSON|FILE`: a JSON object mapping solver names to their settings, checked
/// against the registry (errors name the file).
fn settings_arg(
    v: Option<&str>,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, AnyError> {
    let Some(v) = v else { return Ok(None) };
    let (value, file) = args::json_arg("--settings", v)?;
    let serde_json::Value::Object(map) = value else {
        return Err(
            "--settings: expected a JSON object mapping solver names to their settings".into(),
        );
    };
    // unknown solver names and bad settings fail here, naming the file
    registry::check_settings_map(&map).map_err(|e| match file {
        Some(path) => SolverError::InFile {
            path,
            error: Box::new(e),
        },
        None => e,
    })?;
    Ok(Some(map))
}

/// `--variants JSON|FILE`: named variants.
fn variants_arg(v: Option<&str>) -> Result<Option<VariantsFile>, AnyError> {
    let Some(v) = v else { return Ok(None) };
    let (value, file) = args::json_arg("--variants", v)?;
    let source = file.map_or("(inline JSON)".to_string(), |p| p.display().to_string());
    Ok(Some(VariantsFile::parse(&value.to_string(), &source)?))
}

/// Say before the run which pairs end as `unsupported` and why, one line per variant and
/// reason (instances counted, the first three named).
fn print_refusals(refused: &[Refusal]) {
    if refused.is_empty() {
        return;
    }
    let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for r in refused {
        match groups
            .iter_mut()
            .find(|(s, why, _)| *s == r.solver && *why == r.reason)
        {
            Some(g) => g.2.push(&r.instance),
            None => groups.push((&r.solver, &r.reason, vec![&r.instance])),
        }
    }
    eprintln!(
        "skipped as unsupported ({} pairs; rows with status unsupported, reason in `message`):",
        refused.len()
    );
    for (solver, why, insts) in groups {
        let shown: Vec<&str> = insts.iter().take(3).copied().collect();
        let more = if insts.len() > 3 {
            format!(" and {} more", insts.len() - 3)
        } else {
            String::new()
        };
        eprintln!(
            "  {solver} on {} instance{} ({}{more}): {why}",
            insts.len(),
            if insts.len() == 1 { "" } else { "s" },
            shown.join(", ")
        );
    }
}
