//! [`run`]: `cpbench run` from Python. The arguments map onto a
//! [`cpbench_harness::request::RunRequest`], the same request `cpbench run` builds (suite
//! resolution, solver tokens and their defaults, driven names, profiles, loading, the run's
//! configuration); Python callables join it as ready [`SolverSpec`]s ([`PySolver`]). Then
//! [`cpbench_harness::run()`] writes the same folder (`summary.csv`, `traces/`,
//! `manifest.json`, `plots/`).

use crate::driven::PySolver;
use crate::errors::{invalid, py_err};
use crate::names::{load_defs, residual_kind};
use cpbench_harness::request::{RunRequest, SolverToken, SuiteSource};
use cpbench_harness::variants::VariantsFile;
use cpbench_harness::SolverSpec;
use cpbench_solvers::registry;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// The CLI's default output folder, `results/runs/<UTC timestamp>` (relative to the working
/// directory).
#[pyfunction]
pub fn default_out_dir() -> PathBuf {
    cpbench_harness::run::default_out_dir()
}

/// Registry solver names (the table of `cpbench solvers`, then the presets), for help and
/// completion.
#[pyfunction]
pub fn solver_names() -> Vec<String> {
    registry::SOLVERS
        .iter()
        .map(|e| e.name.to_string())
        .chain(registry::PRESETS.iter().map(|p| p.to_string()))
        .collect()
}

/// A JSON argument: an object given as JSON text. Errors name `what`.
fn json_object(what: &str, text: &str) -> PyResult<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(invalid(format!("{what}: expected a JSON object (a dict)"))),
        Err(e) => Err(invalid(format!("{what}: {e}"))),
    }
}

/// Run `solvers` on a suite (`suite`: `default`, `permon`, `lcp` or a suite JSON file) or on
/// `paths` (files and folders, read with `cls` and `symmetrize`), writing the results folder
/// `out` as `cpbench run` does. `solvers` holds registry tokens (`pgs`, `mprgp:permon`,
/// `pgs@omega=0.8`, sweeps), `ext:NAME` / `siconos:NAME` names and `PySolver`s; `None` runs
/// the suite's or the registry's default solvers. `tol`: one profile `custom` at that
/// tolerance (`None`: the suite's tolerance, else profile `default`, 1e-6). `settings` and
/// `variants` are JSON text as `--settings` / `--variants`. Returns a dict: `out`,
/// `executed`, `skipped`, `order` (the rows' `(instance, solver, profile)` in canonical
/// order: suite order, then solver order), `load_errors` (list of `(source, message)`).
/// `stall_window`: `None` the executor's default window, `"off"` no stall rule, else a
/// window of at least 1 iteration, as `--stall-window`; `check_every`: monitor every k
/// iterations (`None`: every one), as `--check-every`. Errors: as the CLI's (`CpbenchError`),
/// a load failure when `fail_fast`. The run releases the GIL.
#[pyfunction]
#[pyo3(signature = (out, suite=None, paths=None, solvers=None, tol=None, max_iter=20000, cls=None, symmetrize=false, external=None, time_limit=None, plots=true, jobs=1, residual=None, settings=None, variants=None, rerun=false, trace_every=1, fail_fast=false, stall_window=None, check_every=None))]
#[allow(clippy::too_many_arguments)]
pub fn run<'py>(
    py: Python<'py>,
    out: PathBuf,
    suite: Option<String>,
    paths: Option<Vec<PathBuf>>,
    solvers: Option<Vec<Bound<'py, PyAny>>>,
    tol: Option<f64>,
    max_iter: u64,
    cls: Option<&str>,
    symmetrize: bool,
    external: Option<PathBuf>,
    time_limit: Option<f64>,
    plots: bool,
    jobs: usize,
    residual: Option<&str>,
    settings: Option<&str>,
    variants: Option<&str>,
    rerun: bool,
    trace_every: u64,
    fail_fast: bool,
    stall_window: Option<&str>,
    check_every: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    if max_iter == 0 {
        return Err(invalid(format!(
            "max_iter {max_iter}: must be at least 1 (iteration budget per solve)"
        )));
    }
    if trace_every == 0 {
        return Err(invalid(
            "trace_every 0: must be at least 1 (1 records every iteration)",
        ));
    }
    if jobs == 0 {
        return Err(invalid(
            "jobs 0: must be at least 1 (runs executed concurrently)",
        ));
    }
    if check_every == Some(0) {
        return Err(invalid(
            "check_every 0: must be at least 1 (1 checks every iteration)",
        ));
    }
    let stall_window = match stall_window {
        None => None,
        Some("off") => Some(None),
        Some(w) => match w.parse::<u64>() {
            Ok(k) if k >= 1 => Some(Some(k)),
            _ => {
                return Err(invalid(format!(
                    "stall_window '{w}': expected a whole number of iterations (at least 1) \
                     or 'off'"
                )))
            }
        },
    };
    let limit = std::thread::available_parallelism().map_or(1, |n| n.get());
    let source = match (&paths, suite.as_deref()) {
        (Some(p), _) if !p.is_empty() => SuiteSource::Paths {
            paths: p.clone(),
            class: crate::instance::class_choice(cls)?,
            symmetrize,
        },
        (_, name) => SuiteSource::Named(name.unwrap_or("default").to_string()),
    };
    let mut req = RunRequest::new(source, out.clone());
    req.tol = tol;
    req.max_iter = max_iter;
    req.time_limit = time_limit;
    req.residual = residual_kind(residual)?;
    req.settings = settings.map(|s| json_object("settings", s)).transpose()?;
    req.variants = match variants {
        Some(v) => Some(VariantsFile::parse(v, "(variants dict)").map_err(py_err)?),
        None => None,
    };
    req.external = load_defs(external.as_deref())?;
    req.jobs = jobs.min(limit);
    req.rerun = rerun;
    req.trace_every = trace_every;
    req.check_every = check_every;
    if let Some(w) = stall_window {
        req.stall_window = w;
    }
    req.plots = plots;
    req.fail_fast = fail_fast;
    req.progress = false;
    req.validate().map_err(py_err)?;
    let suite = req.suite().map_err(py_err)?;
    if !suite.trajectories.is_empty() {
        return Err(invalid(format!(
            "suite '{}' lists {} trajectories: cpbench.run runs instances only; replay each \
             trajectory folder with cpbench.replay (or the suite with `cpbench run --suite`)",
            suite.name,
            suite.trajectories.len()
        )));
    }
    if let Some(items) = solvers {
        let mut tokens = Vec::new();
        for item in &items {
            if let Ok(p) = item.cast::<PySolver>() {
                tokens.push(SolverToken::Spec(SolverSpec::driven(p.get().driven())));
                continue;
            }
            let token: String = item.extract().map_err(|_| {
                invalid("solvers: expected registry names (str) or Python callables")
            })?;
            tokens.push(SolverToken::Name(token));
        }
        req.solvers = Some(tokens);
    }
    let specs = req.solver_specs(&suite).map_err(py_err)?;
    let outcome = py.detach(move || -> Result<_, cpbench_harness::HarnessError> {
        let (instances, load_errors) = req.load(&suite, Ok, |_| {})?;
        let cfg = req.config(&suite, specs, load_errors.clone())?;
        let o = cpbench_harness::run(&instances, &cfg)?;
        Ok((o, load_errors))
    });
    let (o, load_errors) = outcome.map_err(py_err)?;
    let d = PyDict::new(py);
    d.set_item("out", out)?;
    d.set_item("executed", o.executed)?;
    d.set_item("skipped", o.skipped)?;
    d.set_item(
        "order",
        o.rows
            .iter()
            .map(|r| (r.instance.clone(), r.solver.clone(), r.profile.clone()))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "load_errors",
        load_errors
            .into_iter()
            .map(|f| (f.source, f.message))
            .collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// Replay the trajectory folder `path` (what `cpbench generate` writes: step instances, their
/// contacts files and `trajectory.json`) with the registry solvers `solvers` (`None`: the
/// registry's default list), each cold and warm-started from its own previous answer mapped by
/// contact identity, every step to `tol` within `max_iter` iterations and `time_limit`
/// seconds, steps read with `cls` as `--class`; writes `replay_steps.csv` and
/// `replay_stats.csv` into `out`, as `cpbench run --trajectory DIR` does
/// ([`cpbench_harness::trajectory`]). Errors: as the CLI's (`CpbenchError`: a broken
/// trajectory names the file and step, an unknown solver). The replay releases the GIL.
#[pyfunction]
#[pyo3(signature = (path, out, solvers=None, tol=1e-6, max_iter=20000, time_limit=None, cls=None))]
#[allow(clippy::too_many_arguments)]
pub fn replay(
    py: Python<'_>,
    path: PathBuf,
    out: PathBuf,
    solvers: Option<Vec<String>>,
    tol: f64,
    max_iter: u64,
    time_limit: Option<f64>,
    cls: Option<&str>,
) -> PyResult<()> {
    use cpbench_harness::trajectory;
    let opts = cpbench_problems::io::LoadOptions {
        class: crate::instance::class_choice(cls)?,
        ..Default::default()
    };
    let names: Vec<String> = solvers.unwrap_or_else(|| {
        registry::SOLVERS
            .iter()
            .filter(|e| e.default_run)
            .map(|e| e.name.to_string())
            .collect()
    });
    let specs: Vec<SolverSpec> = names.iter().map(|s| SolverSpec::named(s)).collect();
    let exec = cpbench_solvers::ExecSettings {
        tol,
        max_iter,
        max_time_s: time_limit,
        ..Default::default()
    };
    exec.validate().map_err(py_err)?;
    py.detach(move || -> Result<(), cpbench_harness::HarnessError> {
        let traj = trajectory::Trajectory::load(&path, &opts)?;
        let rows = trajectory::replay(&traj, &specs, &exec)?;
        let stats = trajectory::replay_stats(&rows);
        trajectory::write_replay(&out, &rows, &stats)
    })
    .map_err(py_err)
}
