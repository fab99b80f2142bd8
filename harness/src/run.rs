//! Runs a solver x instance matrix: every answer re-checked, every iteration recorded, tidy
//! CSV, a manifest and convergence plots written into one results folder:
//!
//! ```text
//! DIR/summary.csv                       one row per instance x solver (see results.rs)
//! DIR/traces/<instance>__<solver>.csv   one row per recorded iteration
//! DIR/manifest.json                     revision, machine, versions, settings, instances
//! DIR/plots/<instance>.png, .svg        residual vs iteration, one line per solver
//! ```

use crate::check::{check, CheckSpec};
use crate::error::Result;
use crate::fsutil::{safe_file_name, write_atomic};
use crate::manifest;
use crate::plot::{draw_convergence, ConvergencePlot, Series};
use crate::results::{write_summary, write_trace, SummaryRow};
use cpbench_problems::{Instance, ResidualKind};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, ObserverMode, TraceRecorder};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A solver and its settings (a JSON object of its settings struct; `None` = defaults).
#[derive(Clone, Debug)]
pub struct SolverSpec {
    /// Registry name.
    pub name: String,
    /// Settings overrides.
    pub settings: Option<serde_json::Value>,
}

impl SolverSpec {
    /// A solver with default settings.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_string(),
            settings: None,
        }
    }
}

/// Everything a run needs besides the instances.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Suite name (manifest).
    pub suite: String,
    /// Solvers, in column order.
    pub solvers: Vec<SolverSpec>,
    /// Executor limits and stopping test.
    pub exec: ExecSettings,
    /// Residual the harness checks at `exec.tol` (default: relative natural map).
    pub check_residual: ResidualKind,
    /// Output folder.
    pub out_dir: PathBuf,
    /// Record every k-th iteration in traces (1 = all).
    pub trace_every: u64,
    /// Draw plots.
    pub plots: bool,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

impl RunConfig {
    /// Defaults: solvers `pgs, jacobi, apgd, spgqp`, executor defaults, every iteration
    /// traced, plots and progress bar on.
    pub fn new(out_dir: PathBuf) -> Self {
        Self {
            suite: "default".into(),
            solvers: ["pgs", "jacobi", "apgd", "spgqp"]
                .iter()
                .map(|s| SolverSpec::named(s))
                .collect(),
            exec: ExecSettings::default(),
            check_residual: ResidualKind::NatMapRel2,
            out_dir,
            trace_every: 1,
            plots: true,
            progress: true,
        }
    }
}

/// Default output folder `results/runs/<UTC timestamp>`.
pub fn default_out_dir() -> PathBuf {
    Path::new("results")
        .join("runs")
        .join(manifest::now_utc().0)
}

/// Hash of a solver's effective settings together with the executor settings (16 hex digits).
pub fn settings_hash(solver: &str, settings: &serde_json::Value, exec: &ExecSettings) -> String {
    let v = json!({"solver": solver, "settings": settings, "exec": exec});
    let d = Sha256::digest(v.to_string().as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Run every solver on every instance; write summary, traces, manifest and plots into
/// `cfg.out_dir`; return the summary rows. Errors: unknown solver or invalid settings (before
/// anything runs), and file-system errors.
pub fn run(instances: &[Instance], cfg: &RunConfig) -> Result<Vec<SummaryRow>> {
    cfg.exec.validate()?;
    // Build every solver once up front so that bad names/settings fail before any work.
    let mut solver_meta = Vec::new();
    for spec in &cfg.solvers {
        let b = build(&spec.name, spec.settings.as_ref())?;
        let h = settings_hash(&spec.name, &b.settings, &cfg.exec);
        solver_meta.push((spec.clone(), b.settings, h));
    }
    let out = &cfg.out_dir;
    std::fs::create_dir_all(out.join("traces"))
        .map_err(|e| crate::error::HarnessError::io(out, e))?;
    let (_, created) = manifest::now_utc();
    let manifest = json!({
        "cpbench_version": env!("CARGO_PKG_VERSION"),
        "created": created,
        "git_revision": manifest::git_revision(),
        "machine": manifest::machine(),
        "suite": cfg.suite,
        "exec": cfg.exec,
        "check": {"residual": cfg.check_residual.as_str(), "tol": cfg.exec.tol},
        "trace_every": cfg.trace_every,
        "seeds": "none: every solver and instance here is deterministic",
        "solvers": solver_meta.iter().map(|(s, set, h)| json!({"name": s.name, "settings": set, "settings_hash": h})).collect::<Vec<_>>(),
        "instances": instances.iter().map(manifest::instance_entry).collect::<Vec<_>>(),
    });
    write_atomic(
        &out.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)
            .unwrap_or_default()
            .as_bytes(),
    )?;

    let total = (instances.len() * cfg.solvers.len()) as u64;
    let bar = if cfg.progress {
        indicatif::ProgressBar::new(total)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let executor = Executor::new(cfg.exec.clone());
    let spec = CheckSpec {
        residual: cfg.check_residual,
        tol: cfg.exec.tol,
    };
    let mode = if cfg.trace_every <= 1 {
        ObserverMode::Always
    } else {
        ObserverMode::Every(cfg.trace_every)
    };
    let mut rows = Vec::new();
    for inst in instances {
        let mut series = Vec::new();
        for (spec_s, _, hash) in &solver_meta {
            bar.set_message(format!("{} / {}", inst.name(), spec_s.name));
            let mut built = build(&spec_s.name, spec_s.settings.as_ref())?;
            let mut rec = TraceRecorder::new(mode);
            let res = executor.run(built.solver.as_mut(), inst, None, &mut [&mut rec])?;
            let verdict = check(inst, &res.gamma, spec);
            let trace_path = out.join("traces").join(format!(
                "{}__{}.csv",
                safe_file_name(inst.name()),
                safe_file_name(&spec_s.name)
            ));
            write_trace(&trace_path, &rec.records)?;
            series.push(Series {
                label: spec_s.name.clone(),
                points: rec
                    .records
                    .iter()
                    .map(|r| (r.iteration as f64, r.residuals.get(cfg.check_residual)))
                    .collect(),
            });
            rows.push(SummaryRow {
                instance: inst.name().to_string(),
                class: inst.class().as_str().to_string(),
                n: inst.n(),
                nnz: inst.n_mat().nnz(),
                solver: spec_s.name.clone(),
                settings_hash: hash.clone(),
                status: res.status.as_str().to_string(),
                success: verdict.success,
                iterations: res.iterations,
                matvecs: res.matvecs,
                time_s: res.time_s,
                residuals: verdict.residuals,
                instance_hash: inst.hash().to_string(),
                best_iteration: res.best_iteration,
                check_residual: cfg.check_residual.as_str().to_string(),
                tol: cfg.exec.tol,
                message: res.message.clone().unwrap_or_default(),
            });
            write_summary(&out.join("summary.csv"), &rows)?;
            bar.inc(1);
        }
        if cfg.plots {
            let name = safe_file_name(inst.name());
            let plot = ConvergencePlot {
                title: format!("{} ({}, n = {})", inst.name(), inst.class(), inst.n()),
                x_label: "iteration".into(),
                y_label: format!("{} (log)", residual_label(cfg.check_residual)),
                series,
                tol: Some(cfg.exec.tol),
            };
            draw_convergence(
                &plot,
                &out.join("plots").join(format!("{name}.png")),
                &out.join("plots").join(format!("{name}.svg")),
            )?;
        }
    }
    bar.finish_and_clear();
    Ok(rows)
}

/// Human label of a residual for axis titles.
pub fn residual_label(k: ResidualKind) -> &'static str {
    match k {
        ResidualKind::NatMapRel2 => "relative natural-map residual",
        ResidualKind::NatMapRelInf => "relative natural-map residual (inf-norm)",
        ResidualKind::NatMapAbs2 => "natural-map residual",
        ResidualKind::NatMapRelMax1 => "natural-map residual / max(1, ||r||)",
        ResidualKind::ProjGradRel => "relative projected gradient",
        ResidualKind::Res4 => "Res4",
    }
}

/// A plain-text table of the summary for the terminal: instance, solver, status, check,
/// iterations, residual, time.
pub fn format_table(rows: &[SummaryRow]) -> String {
    let mut s = format!(
        "{:<34} {:<7} {:<15} {:<7} {:>7} {:>10} {:>10}\n",
        "instance", "solver", "status", "success", "iter", "residual", "time [s]"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<34} {:<7} {:<15} {:<7} {:>7} {:>10.2e} {:>10.4}\n",
            r.instance,
            r.solver,
            r.status,
            if r.success { "yes" } else { "no" },
            r.iterations,
            r.residuals.nat_map_rel_2,
            r.time_s
        ));
    }
    s
}
