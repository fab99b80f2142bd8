//! Runs a solver x instance x settings-profile matrix: every answer re-checked, every
//! iteration recorded, tidy CSV, a manifest and convergence plots written into one folder:
//!
//! ```text
//! DIR/summary.csv                                 one row per instance x solver x profile
//! DIR/traces/<instance>__<solver>[__<profile>].csv one row per recorded iteration
//! DIR/manifest.json                               revision, machine, versions, settings, instances
//! DIR/plots/<instance>[__<profile>].png, .svg     residual vs iteration, one line per solver
//! DIR/.cpbench.lock                               while a process writes the folder
//! ```
//! (the `__<profile>` suffix is left out for the `default` profile; `<instance>` is the file
//! stem of [`crate::names`]: the full instance name, made unique within the folder).
//!
//! Runs at scale: `jobs` runs execute concurrently on a rayon pool (each run on one thread;
//! the `jobs` column records it so that timing-sensitive reports can insist on 1); a rerun into
//! the same folder skips runs already in `summary.csv` (keyed by instance hash, solver,
//! settings hash and profile) unless `rerun`; `shard = i/n` runs the deterministic subset of the
//! matrix whose canonical index is `i - 1` modulo `n` (folders joined again by `crate::merge`).

use crate::error::{HarnessError, Result};
use crate::figures::draw_iteration_plots;
use crate::manifest::{self, CheckRecord, Manifest, SolverEntry};
use crate::names::{plot_paths, trace_path, FileStems};
use crate::order::sort_canonical;
use crate::results::{read_summary, write_summary, write_trace, SummaryAppender, SummaryRow};
use cpbench_problems::{Instance, ResidualKind};
use cpbench_solvers::registry;
use cpbench_solvers::{ExecSettings, ObserverMode, Status, TraceRecorder};
use rayon::prelude::*;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use crate::manifest::{Profile, Shard};

pub use crate::solve::SolverSpec;
use crate::solve::{checked_solve, Runnable};

/// Everything a run needs besides the instances.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Suite name (manifest).
    pub suite: String,
    /// Solvers, in column order.
    pub solvers: Vec<SolverSpec>,
    /// Executor limits and stopping residual (`tol` is replaced by each profile's).
    pub exec: ExecSettings,
    /// Settings profiles.
    pub profiles: Vec<Profile>,
    /// Residual the harness checks at the profile's tolerance, always honoured when given;
    /// `None` means each instance's class default ([`ResidualKind::class_default`]).
    pub check_residual: Option<ResidualKind>,
    /// Output folder.
    pub out_dir: PathBuf,
    /// Record every k-th iteration in traces (1 = all).
    pub trace_every: u64,
    /// Draw plots.
    pub plots: bool,
    /// Size, resolution and x scale of the plots.
    pub figure: crate::plot::FigureOptions,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Concurrent runs.
    pub jobs: usize,
    /// Re-execute runs already present in the folder.
    pub rerun: bool,
    /// Run only this shard of the matrix.
    pub shard: Option<Shard>,
    /// Inputs of the suite that did not load (a folder sweep goes on without them): each
    /// becomes a `summary.csv` row with status `load_error` and the error as its message.
    pub load_errors: Vec<LoadFailure>,
    /// Measure the memory bandwidth (a triad, [`crate::bandwidth::triad`], about 0.5 s and
    /// 192 MiB) on the pool the runs use and record it in the manifest (`bandwidth_gbs`,
    /// `bandwidth_threads`), unless there is nothing to run. Without a measurement the
    /// folder's earlier one, if any, is kept.
    pub measure_bandwidth: bool,
    /// Execute the runs one at a time on rayon's global pool (`jobs` must be 1), so that the
    /// kernels inside a run (the `N`-product above
    /// [`cpbench_problems::linalg::PAR_NNZ_THRESHOLD`] stored entries) use every thread, as a
    /// solve at scale would; otherwise each run executes on one thread of a pool of `jobs`
    /// threads. Recorded in the manifest (`whole_machine`).
    pub whole_machine: bool,
    /// Timed solves per run (at least 1): every run that passes its check is solved `repeat`
    /// times from the same start (a failed run once: its time is a budget charge); the row
    /// keeps the first solve's answer, trace and counters, its `time_s` is the median of the
    /// solver times and `time_min_s` / `time_max_s` their range (`repeats` says how many). Solvers are
    /// deterministic, so only the times differ (a time-limited run may stop elsewhere: its
    /// first solve is the one recorded).
    pub repeat: usize,
    /// Sample the machine's load ([`crate::load::LoadSample`], half a second each) before and
    /// after the runs, into the manifest (`load_start`, `load_end`), when there is anything
    /// to run. The CLI and the recipes set it; library callers and tests may leave it off.
    pub sample_load: bool,
}

/// An input that did not load ([`RunConfig::load_errors`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadFailure {
    /// The path (or embedded file name) as the suite gives it.
    pub source: String,
    /// The error, as printed.
    pub message: String,
}

/// A (instance, variant) pair that a solver refuses before it runs ([`refusals`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// Instance name.
    pub instance: String,
    /// Variant label.
    pub solver: String,
    /// Why (the class, or the solver's own reason such as a non-symmetric `W`).
    pub reason: String,
}

/// The pairs of the matrix that will end as `unsupported` (their rows are still written,
/// with this reason as the message), in canonical order: a solver whose class does not
/// match, or whose own test refuses the instance ([`cpbench_solvers::Solver::refusal`]).
/// Errors: an unknown solver or invalid settings.
pub fn refusals(instances: &[Instance], solvers: &[SolverSpec]) -> Result<Vec<Refusal>> {
    let mut out = Vec::new();
    let built: Vec<_> = solvers.iter().map(Runnable::of).collect::<Result<_>>()?;
    for inst in instances {
        for (spec, b) in solvers.iter().zip(&built) {
            if let Some(reason) = b.refusal(inst) {
                out.push(Refusal {
                    instance: inst.name().to_string(),
                    solver: spec.label.clone(),
                    reason,
                });
            }
        }
    }
    Ok(out)
}

impl RunConfig {
    /// Defaults: the registry's default solvers ([`registry::default_solvers`]: `pgs, jacobi,
    /// apgd, spgqp, ipm`), executor defaults, profile `default`,
    /// every iteration traced, plots and progress bar on, one job, no shard.
    pub fn new(out_dir: PathBuf) -> Self {
        Self {
            suite: "default".into(),
            solvers: registry::default_solvers()
                .iter()
                .map(|s| SolverSpec::named(s))
                .collect(),
            exec: ExecSettings::default(),
            profiles: vec![Profile::builtin("default").expect("built in")],
            check_residual: None,
            out_dir,
            trace_every: 1,
            plots: true,
            figure: Default::default(),
            progress: true,
            jobs: 1,
            rerun: false,
            shard: None,
            load_errors: Vec::new(),
            measure_bandwidth: false,
            whole_machine: false,
            repeat: 1,
            sample_load: false,
        }
    }
}

/// What a call to [`run`] did.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// Every row of the folder's `summary.csv` after the run (previous rows included).
    pub rows: Vec<SummaryRow>,
    /// Runs executed now.
    pub executed: usize,
    /// Runs skipped because their row was already present.
    pub skipped: usize,
}

/// Default output folder `results/runs/<UTC timestamp>`.
pub fn default_out_dir() -> PathBuf {
    Path::new("results")
        .join("runs")
        .join(manifest::now_utc().0)
}

/// Every setting of a run as compact JSON (the summary's `settings` column):
/// `{"exec": {...}, "settings": {...}, "solver": base}` with keys sorted.
pub fn settings_json(solver: &str, settings: &serde_json::Value, exec: &ExecSettings) -> String {
    json!({"solver": solver, "settings": settings, "exec": exec}).to_string()
}

/// Hash of a solver's effective settings together with the executor settings (16 hex digits):
/// the first 8 bytes of the SHA-256 of [`settings_json`].
pub fn settings_hash(solver: &str, settings: &serde_json::Value, exec: &ExecSettings) -> String {
    let d = Sha256::digest(settings_json(solver, settings, exec).as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

struct Task<'a> {
    inst: &'a Instance,
    solver: usize,
    profile: usize,
}

/// Per solver and profile, the settings hash and JSON of each run, and per solver its effective
/// settings: every solver is built once up front, so that bad names or settings fail before
/// any work. Errors: two variants with one label, invalid settings, invalid executor settings
/// at a profile's tolerance.
#[allow(clippy::type_complexity)]
fn settings_tables(
    cfg: &RunConfig,
) -> Result<(Vec<Vec<String>>, Vec<Vec<String>>, Vec<serde_json::Value>)> {
    let mut hashes = vec![vec![String::new(); cfg.profiles.len()]; cfg.solvers.len()];
    let mut jsons = hashes.clone();
    let mut effective = Vec::new();
    // labels seen so far, by label: a linear check however many variants there are
    let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for (s, spec) in cfg.solvers.iter().enumerate() {
        if let Some(other) = seen.insert(&spec.label, &spec.name) {
            return Err(HarnessError::Invalid(format!(
                "two solver variants are labelled '{}' ({} and {}): give each its own name",
                spec.label, other, spec.name
            )));
        }
        let settings = spec.effective_settings()?;
        for (p, prof) in cfg.profiles.iter().enumerate() {
            let exec = prof.exec_settings(&cfg.exec);
            exec.validate()?;
            hashes[s][p] = settings_hash(&spec.name, &settings, &exec);
            jsons[s][p] = settings_json(&spec.name, &settings, &exec);
        }
        effective.push(settings);
    }
    Ok((hashes, jsons, effective))
}

/// The runs of the matrix in canonical order (instance, solver, profile), then this shard's.
fn plan_tasks<'a>(instances: &'a [Instance], cfg: &RunConfig) -> Vec<Task<'a>> {
    let mut tasks = Vec::new();
    let mut index = 0usize;
    for inst in instances {
        for solver in 0..cfg.solvers.len() {
            for profile in 0..cfg.profiles.len() {
                if cfg.shard.is_none_or(|sh| index % sh.count == sh.index - 1) {
                    tasks.push(Task {
                        inst,
                        solver,
                        profile,
                    });
                }
                index += 1;
            }
        }
    }
    tasks
}

/// The folder's rows this run keeps: a label names one set of settings per folder, so rows of
/// this run's labels and profiles with other settings are dropped under `--rerun` and refused
/// otherwise (naming what changed); rows of inputs that did not load are dropped (the files
/// are tried again). The summary is rewritten when rows are dropped. Errors: a clash without
/// `--rerun`, I/O errors.
fn reconcile_existing(
    existing: Vec<SummaryRow>,
    cfg: &RunConfig,
    hashes: &[Vec<String>],
    jsons: &[Vec<String>],
    summary_path: &Path,
) -> Result<Vec<SummaryRow>> {
    // a label names one set of settings per folder: rows of this run's labels and profiles
    // with other settings are replaced under --rerun and refused otherwise
    let mine: std::collections::HashMap<(&str, &str), &str> = cfg
        .solvers
        .iter()
        .enumerate()
        .flat_map(|(s, spec)| {
            cfg.profiles.iter().enumerate().map(move |(p, prof)| {
                (
                    (spec.label.as_str(), prof.name.as_str()),
                    hashes[s][p].as_str(),
                )
            })
        })
        .collect();
    let clash = |r: &SummaryRow| {
        mine.get(&(r.solver.as_str(), r.profile.as_str()))
            .is_some_and(|h| *h != r.settings_hash)
    };
    let mut existing = existing;
    if let Some(r) = existing.iter().find(|r| clash(r)) {
        if !cfg.rerun {
            // name what changed when the folder's row carries its settings
            let s = cfg.solvers.iter().position(|x| x.label == r.solver);
            let p = cfg.profiles.iter().position(|x| x.name == r.profile);
            let changed = match (s, p, serde_json::from_str(&r.settings)) {
                (Some(s), Some(p), Ok(old)) => serde_json::from_str(&jsons[s][p])
                    .map(|new| crate::regression::settings_diff(&old, &new).join(", "))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            let changed = if changed.is_empty() {
                format!(
                    "hash {} -> {}",
                    r.settings_hash,
                    mine[&(r.solver.as_str(), r.profile.as_str())]
                )
            } else {
                changed
            };
            return Err(HarnessError::Invalid(format!(
                "{} holds rows of '{}' (profile {}) run with other settings ({changed}): \
                 give this variant a name of its own (`{}@setting=value`, or --variants), \
                 pass --rerun to replace those rows, or use another --out",
                summary_path.display(),
                r.solver,
                r.profile,
                r.base(),
            )));
        }
        existing.retain(|r| !clash(r));
        write_summary(summary_path, &existing)?;
    }
    // rows of inputs that did not load reflect the latest run: earlier ones are dropped (the
    // files are tried again), this run's failures are appended below
    if existing.iter().any(|r| r.status == LOAD_ERROR) {
        existing.retain(|r| r.status != LOAD_ERROR);
        write_summary(summary_path, &existing)?;
    }
    Ok(existing)
}

/// The manifest of this run (before the folder's earlier variants are merged in).
#[allow(clippy::too_many_arguments)]
fn run_manifest(
    instances: &[Instance],
    cfg: &RunConfig,
    hashes: &[Vec<String>],
    effective: &[serde_json::Value],
    tasks: &[Task],
    skipped: usize,
    jobs: usize,
    triad: Option<crate::bandwidth::Triad>,
    peak_method: Option<crate::memory::PeakMethod>,
) -> Manifest {
    let (_, created) = manifest::now_utc();
    Manifest {
        cpbench_version: env!("CARGO_PKG_VERSION").to_string(),
        created,
        git_revision: manifest::git_revision(),
        machine: manifest::machine(),
        suite: cfg.suite.clone(),
        exec: cfg.exec.clone(),
        profiles: cfg.profiles.clone(),
        check: CheckRecord {
            residual: cfg
                .check_residual
                .map_or("class default", |k| k.as_str())
                .to_string(),
        },
        trace_every: cfg.trace_every,
        jobs,
        shard: cfg.shard,
        runs_executed: tasks.len(),
        runs_skipped_as_present: skipped,
        seeds: "none: every solver and instance here is deterministic".to_string(),
        solvers: cfg
            .solvers
            .iter()
            .enumerate()
            .map(|(s, spec)| SolverEntry {
                label: spec.label.clone(),
                name: spec.name.clone(),
                settings: effective[s].clone(),
                settings_hash: cfg
                    .profiles
                    .iter()
                    .enumerate()
                    .map(|(p, prof)| (prof.name.clone(), hashes[s][p].clone()))
                    .collect(),
            })
            .collect(),
        instances: instances.iter().map(manifest::instance_entry).collect(),
        bandwidth_gbs: triad.map(|t| t.gbs),
        bandwidth_threads: triad.map(|t| t.threads),
        peak_rss_method: peak_method.map(|m| m.as_str().to_string()),
        whole_machine: cfg.whole_machine,
        repeat: cfg.repeat.max(1),
        load_start: (cfg.sample_load && !tasks.is_empty()).then(crate::load::LoadSample::now),
        ..Manifest::default()
    }
}

/// The runs still to do and what the folder keeps.
struct Resumed<'a> {
    /// The runs to execute, in canonical order (this shard's).
    tasks: Vec<Task<'a>>,
    /// Runs of the matrix the folder already holds (not executed again).
    skipped: usize,
    /// File stems of every instance the folder will hold.
    stems: FileStems,
    /// Content hashes of the instances whose rows the folder keeps.
    kept_hashes: HashSet<String>,
}

/// Plan the matrix (canonical order, then this shard) against the folder's `summary.csv`:
/// runs present are skipped, or with `cfg.rerun` their old rows dropped first; traces of
/// earlier runs whose file stem changes (a clashing instance joins the folder) are renamed.
/// Errors: a malformed existing summary, file-system errors.
fn resume<'a>(
    instances: &'a [Instance],
    cfg: &RunConfig,
    hashes: &[Vec<String>],
    jsons: &[Vec<String>],
    summary_path: &Path,
) -> Result<Resumed<'a>> {
    let out = &cfg.out_dir;
    // the matrix in canonical order, then this shard
    let mut tasks = plan_tasks(instances, cfg);
    // resume: skip runs present; with --rerun drop their old rows first
    let key_of = |t: &Task| {
        (
            t.inst.hash().to_string(),
            cfg.solvers[t.solver].label.clone(),
            hashes[t.solver][t.profile].clone(),
            cfg.profiles[t.profile].name.clone(),
        )
    };
    let existing = if summary_path.exists() {
        read_summary(summary_path)?
    } else {
        Vec::new()
    };
    // file stems of every instance the folder will hold; traces of earlier runs whose stem
    // changes (a clashing instance joins the folder) are renamed
    let stems = FileStems::new(
        existing
            .iter()
            .map(|r| (r.instance.as_str(), r.instance_hash.as_str()))
            .chain(tasks.iter().map(|t| (t.inst.name(), t.inst.hash()))),
    );
    rename_changed_stems(out, &existing, &stems)?;
    let existing = reconcile_existing(existing, cfg, hashes, jsons, summary_path)?;
    let before = tasks.len();
    // instances whose rows the folder keeps (their manifest entries are kept too)
    let kept_hashes: HashSet<String> = existing.iter().map(|r| r.instance_hash.clone()).collect();
    if cfg.rerun {
        let todo: HashSet<_> = tasks.iter().map(key_of).collect();
        let kept: Vec<_> = existing
            .into_iter()
            .filter(|r| !todo.contains(&r.key()))
            .collect();
        write_summary(summary_path, &kept)?;
    } else {
        let done: HashSet<_> = existing.iter().map(|r| r.key()).collect();
        tasks.retain(|t| !done.contains(&key_of(t)));
    }
    let skipped = before - tasks.len();
    Ok(Resumed {
        tasks,
        skipped,
        stems,
        kept_hashes,
    })
}

/// Run the matrix; write summary rows as runs finish, traces, the manifest and plots into
/// `cfg.out_dir`, holding its lock ([`crate::lock::FolderLock`]) throughout. Errors: invalid
/// executor settings, unknown solver or invalid settings (before anything runs), the folder
/// locked by another process, a malformed existing `summary.csv`, file-system errors.
pub fn run(instances: &[Instance], cfg: &RunConfig) -> Result<RunOutcome> {
    cfg.exec.validate()?;
    let jobs = cfg.jobs.max(1);
    if cfg.whole_machine && jobs > 1 {
        return Err(HarnessError::Invalid(format!(
            "runs on the whole machine execute one at a time: jobs must be 1, not {jobs}"
        )));
    }
    // Build every solver once up front so that bad names/settings fail before any work.
    let (hashes, jsons, effective) = settings_tables(cfg)?;
    let out = &cfg.out_dir;
    let _lock = crate::lock::FolderLock::acquire(out)?;
    std::fs::create_dir_all(out.join("traces")).map_err(|e| HarnessError::io(out, e))?;
    let summary_path = out.join("summary.csv");

    let Resumed {
        tasks,
        skipped,
        stems,
        kept_hashes,
    } = resume(instances, cfg, &hashes, &jsons, &summary_path)?;

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| HarnessError::io(out, std::io::Error::other(e.to_string())))?;
    // the bandwidth available to the runs' kernels: measured on the pool they use, when
    // there is anything to run (otherwise the folder's earlier measurement is kept)
    let triad = (cfg.measure_bandwidth && !tasks.is_empty()).then(|| {
        if cfg.whole_machine {
            crate::bandwidth::triad(crate::bandwidth::TRIAD_LEN, crate::bandwidth::TRIAD_REPEATS)
        } else {
            pool.install(|| {
                crate::bandwidth::triad(
                    crate::bandwidth::TRIAD_LEN,
                    crate::bandwidth::TRIAD_REPEATS,
                )
            })
        }
    });
    // one run at a time: the high-water mark is reset before each run
    let reset_peak = jobs == 1;
    let peak_method = crate::memory::PeakRss::start(false).method().map(|m| {
        if reset_peak && crate::memory::reset_peak() {
            crate::memory::PeakMethod::VmhwmReset
        } else {
            m
        }
    });
    let manifest = run_manifest(
        instances,
        cfg,
        &hashes,
        &effective,
        &tasks,
        skipped,
        jobs,
        triad,
        peak_method,
    );
    let mut manifest = keep_earlier_variants(manifest, out, &kept_hashes);
    manifest.write(out)?;

    let bar = if cfg.progress {
        indicatif::ProgressBar::new(tasks.len() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let appender = Mutex::new(SummaryAppender::open(&summary_path)?);
    for f in &cfg.load_errors {
        let row = load_error_row(f, &cfg.profiles[0], jobs);
        appender
            .lock()
            .map_err(|_| HarnessError::Invalid("summary writer poisoned".into()))?
            .append(&row)?;
    }
    let mode = if cfg.trace_every <= 1 {
        ObserverMode::Always
    } else {
        ObserverMode::Every(cfg.trace_every)
    };
    let ctx = TaskCtx {
        cfg,
        hashes: &hashes,
        jsons: &jsons,
        stems: &stems,
        out,
        mode,
        reset_peak,
        jobs,
    };
    let run_one = |t: &Task| -> Result<()> {
        let spec = &cfg.solvers[t.solver];
        let prof = &cfg.profiles[t.profile];
        bar.set_message(format!(
            "{} / {} / {}",
            t.inst.name(),
            spec.label,
            prof.name
        ));
        let row = execute_task(t, &ctx)?;
        appender
            .lock()
            .map_err(|_| HarnessError::Csv {
                path: summary_path.clone(),
                message: "a run panicked while writing".into(),
            })?
            .append(&row)?;
        bar.inc(1);
        Ok(())
    };
    let results: Vec<Result<()>> = if cfg.whole_machine {
        tasks.iter().map(run_one).collect()
    } else {
        pool.install(|| tasks.par_iter().with_max_len(1).map(run_one).collect())
    };
    bar.finish_and_clear();
    results.into_iter().collect::<Result<Vec<()>>>()?;
    if manifest.load_start.is_some() {
        manifest.load_end = Some(crate::load::LoadSample::now());
        manifest.write(out)?;
    }

    let mut rows = read_summary(&summary_path)?;
    sort_canonical(&mut rows, &manifest);
    if cfg.plots {
        let solved: Vec<SummaryRow> = rows
            .iter()
            .filter(|r| r.status != LOAD_ERROR)
            .cloned()
            .collect();
        draw_iteration_plots(out, &solved, cfg.check_residual, &cfg.figure)?;
    }
    Ok(RunOutcome {
        executed: tasks.len(),
        skipped,
        rows,
    })
}

/// What every run of a matrix shares.
#[derive(Clone, Copy)]
struct TaskCtx<'a> {
    cfg: &'a RunConfig,
    hashes: &'a [Vec<String>],
    jsons: &'a [Vec<String>],
    stems: &'a FileStems,
    out: &'a Path,
    mode: ObserverMode,
    reset_peak: bool,
    jobs: usize,
}

/// One run: solve (then the timed repeats of a checked success), check, write the trace and
/// return the summary row. Errors: a solver that cannot be built, I/O errors.
fn execute_task(t: &Task, ctx: &TaskCtx) -> Result<SummaryRow> {
    let TaskCtx {
        cfg,
        hashes,
        jsons,
        stems,
        out,
        mode,
        reset_peak,
        jobs,
    } = *ctx;
    let spec = &cfg.solvers[t.solver];
    let prof = &cfg.profiles[t.profile];
    let exec = prof.exec_settings(&cfg.exec);
    let mut runnable = Runnable::of(spec)?;
    let mut rec = TraceRecorder::new(mode);
    let peak = crate::memory::PeakRss::start(reset_peak);
    let checked = checked_solve(
        &mut runnable,
        exec.clone(),
        t.inst,
        None,
        cfg.check_residual,
        &mut [&mut rec],
    )?;
    let peak_rss_bytes = peak.read();
    let (res, verdict, check_residual) = (checked.result, checked.verdict, checked.check_residual);
    // the repeats: the same solve again, only its time kept. A refusal is not timed, and
    // a run that fails its check is timed once (its time is a budget charge in the
    // report, not a cost to solve)
    let mut times = vec![res.time_s];
    if res.status != Status::Unsupported && verdict.success {
        for _ in 1..cfg.repeat.max(1) {
            let mut again = Runnable::of(spec)?;
            let mut quiet = TraceRecorder::new(ObserverMode::Never);
            times.push(
                again
                    .run(exec.clone(), t.inst, None, &mut [&mut quiet])?
                    .time_s,
            );
        }
    }
    let (time_med, time_min, time_max) = median_min_max(&times);
    write_trace(
        &out.join(trace_path(
            &stems.stem(t.inst.name(), t.inst.hash()),
            &spec.label,
            &prof.name,
        )),
        &rec.records,
    )?;
    let row = SummaryRow {
        instance: t.inst.name().to_string(),
        class: Some(t.inst.class()),
        n: t.inst.n(),
        nnz: t.inst.nnz(),
        solver: spec.label.clone(),
        settings_hash: hashes[t.solver][t.profile].clone(),
        status: res.status.into(),
        success: verdict.success,
        iterations: res.iterations,
        matvecs: res.matvecs,
        time_s: time_med,
        residuals: verdict.residuals,
        instance_hash: t.inst.hash().to_string(),
        best_iteration: res.best_iteration,
        check_residual: check_residual.as_str().to_string(),
        tol: prof.tol,
        profile: prof.name.clone(),
        jobs,
        // a refusal is not a run: its message is the refusal's reason alone
        message: row_message(
            res.message.as_deref(),
            verdict
                .reason
                .as_deref()
                .filter(|_| res.status != Status::Unsupported),
        ),
        counters: res.counters.clone().into(),
        base_solver: spec.name.clone(),
        settings: jsons[t.solver][t.profile].clone(),
        peak_rss_bytes,
        operator: Some(t.inst.operator_kind()),
        operator_bytes: Some(t.inst.operator_bytes()),
        repeats: Some(times.len() as u64),
        time_min_s: time_min,
        time_max_s: time_max,
        // a refusal is not an answer
        fidelity: if res.status == Status::Unsupported {
            cpbench_problems::Fidelity::NAN
        } else {
            verdict.fidelity
        },
    };
    Ok(row)
}

pub use crate::results::{LOAD_ERROR, REFUSED};

/// The `summary.csv` row of an input that did not load: instance = the path as given,
/// solver `-`, status [`LOAD_ERROR`], not a success, zero counts, NaN residuals, the error as
/// the message.
fn load_error_row(f: &LoadFailure, profile: &Profile, jobs: usize) -> SummaryRow {
    SummaryRow {
        instance: f.source.clone(),
        solver: "-".into(),
        status: LOAD_ERROR,
        residuals: cpbench_problems::Residuals::from_values(
            [f64::NAN; cpbench_problems::Residuals::COUNT],
        ),
        tol: profile.tol,
        profile: profile.name.clone(),
        jobs,
        message: f.message.clone(),
        base_solver: "-".into(),
        ..SummaryRow::default()
    }
}

/// Move the traces and drop the plots of the rows of `existing` (the folder's rows before this
/// run) whose file stem differs in `stems` (a clashing instance joined the folder).
fn rename_changed_stems(out: &Path, existing: &[SummaryRow], stems: &FileStems) -> Result<()> {
    let old = FileStems::from_rows(existing);
    for r in existing {
        let (a, b) = (old.of_row(r), stems.of_row(r));
        if a == b {
            continue;
        }
        let from = out.join(trace_path(&a, &r.solver, &r.profile));
        let to = out.join(trace_path(&b, &r.solver, &r.profile));
        if from.exists() && !to.exists() {
            std::fs::rename(&from, &to).map_err(|e| HarnessError::io(&from, e))?;
        }
        let (png, svg) = plot_paths(&a, &r.profile);
        for p in [png, svg] {
            let _ = std::fs::remove_file(out.join(p));
        }
    }
    Ok(())
}

/// Add to `m` the solver variants of the folder's previous manifest that this run does not
/// name, so that the manifest keeps the settings of every variant whose rows the folder
/// holds (a folder filled by several runs with different variants); likewise the instances
/// of the previous manifest that this run does not hold but whose rows the folder keeps
/// (hashes in `kept`), and its bandwidth measurement when this run measured none. Earlier
/// entries come first, in their order; an unreadable or missing previous manifest adds
/// nothing.
fn keep_earlier_variants(mut m: Manifest, out: &Path, kept: &HashSet<String>) -> Manifest {
    let Ok(old) = Manifest::read(out) else {
        return m;
    };
    let mine: HashSet<String> = m.instances.iter().map(|i| i.hash.clone()).collect();
    let mut insts: Vec<manifest::InstanceEntry> = old
        .instances
        .into_iter()
        .filter(|i| !mine.contains(&i.hash) && kept.contains(&i.hash))
        .collect();
    insts.append(&mut m.instances);
    m.instances = insts;
    if m.bandwidth_gbs.is_none() {
        m.bandwidth_gbs = old.bandwidth_gbs;
        m.bandwidth_threads = old.bandwidth_threads;
    }
    let label = |e: &SolverEntry| e.label().to_string();
    let now: HashSet<String> = m.solvers.iter().map(label).collect();
    let mut solvers: Vec<SolverEntry> = old
        .solvers
        .into_iter()
        .filter(|e| !now.contains(&label(e)))
        .map(|mut e| {
            e.label = label(&e);
            e
        })
        .collect();
    solvers.append(&mut m.solvers);
    m.solvers = solvers;
    m
}

/// `(median, min, max)` of `v` (the mean of the two middle values for an even count); NaNs for
/// an empty slice.
pub fn median_min_max(v: &[f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let k = s.len();
    let med = if k % 2 == 1 {
        s[k / 2]
    } else {
        0.5 * (s[k / 2 - 1] + s[k / 2])
    };
    (med, s[0], s[k - 1])
}

/// The `message` cell of a row: the solver's message, then the check's reason when the check
/// failed ([`crate::check::Verdict::reason`]), `; `-separated; empty when there is neither.
pub fn row_message(solver: Option<&str>, check: Option<&str>) -> String {
    match (solver.filter(|m| !m.is_empty()), check) {
        (Some(m), Some(c)) => format!("{m}; {c}"),
        (Some(m), None) => m.to_string(),
        (None, Some(c)) => c.to_string(),
        (None, None) => String::new(),
    }
}
