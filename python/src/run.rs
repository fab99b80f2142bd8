//! [`run`]: `cpbench run` from Python. The suite (a built-in name or paths, read with the
//! CLI's `--class` / `--symmetrize`), the solver specs (registry tokens through
//! [`cpbench_harness::variants::expand`], `ext:` / `siconos:` names through
//! [`resolve_driven`], Python callables as [`PySolver`]s), the profiles and executor limits
//! are built as `src/cmd/run.rs` builds them, then [`cpbench_harness::run`] writes the same
//! folder (`summary.csv`, `traces/`, `manifest.json`, `plots/`).

use crate::driven::PySolver;
use crate::errors::{invalid, py_err};
use crate::solve::residual_kind;
use cpbench_harness::run::LoadFailure;
use cpbench_harness::variants::VariantsFile;
use cpbench_harness::{Profile, RunConfig, SolverSpec, Suite};
use cpbench_solvers::external::ExternalDefs;
use cpbench_solvers::registry;
use cpbench_solvers::{DrivenSolver, ExecSettings};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The definition file of `ext:` solvers (`--external`), read and checked. Errors: the
/// CLI's (`CpbenchError`, `CpbenchFileNotFoundError` for a missing file).
pub fn load_defs(external: Option<&Path>) -> PyResult<Option<ExternalDefs>> {
    external
        .map(ExternalDefs::load)
        .transpose()
        .map_err(|e| py_err(cpbench_solvers::SolverError::from(e)))
}

/// The driven solver a name with a driven prefix stands for (`ext:NAME` from `defs`,
/// `siconos:SOLVER` built in; `py:` names come only as callables), through
/// [`cpbench_solvers::external::resolve`]; `None` for any other name. Errors: an unknown
/// name (listing the known ones), `ext:` without a definition file, a `py:` name given as
/// text (`CpbenchError`).
pub fn resolve_driven(
    name: &str,
    defs: Option<&ExternalDefs>,
) -> PyResult<Option<Arc<dyn DrivenSolver>>> {
    let name = name.trim();
    if name.starts_with("py:") {
        return Err(invalid(format!(
            "'{name}': py: solvers are Python callables: pass the function itself"
        )));
    }
    match cpbench_solvers::external::resolve(name, defs) {
        Some(r) => r.map(Some).map_err(py_err),
        None => Ok(None),
    }
}

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
/// order: suite order, then solver order), `load_errors` (list of `(source, message)`). Errors: as the CLI's
/// (`CpbenchError`), a load failure when `fail_fast`. The run releases the GIL.
#[pyfunction]
#[pyo3(signature = (out, suite=None, paths=None, solvers=None, tol=None, max_iter=20000, cls=None, symmetrize=false, external=None, time_limit=None, plots=true, jobs=1, residual=None, settings=None, variants=None, rerun=false, trace_every=1, fail_fast=false))]
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
    let limit = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = jobs.min(limit);
    ExecSettings {
        tol: tol.unwrap_or(1e-6),
        max_iter,
        max_time_s: time_limit,
        ..Default::default()
    }
    .validate()
    .map_err(py_err)?;
    let suite = match (&paths, suite.as_deref()) {
        (Some(p), _) if !p.is_empty() => {
            let class = crate::instance::class_choice(cls)?;
            Suite::from_paths("instances", p, class, symmetrize).map_err(py_err)?
        }
        (_, Some("scale")) => {
            return Err(invalid(
                "the scale suite runs from the command line only (cpbench run --suite scale)",
            ))
        }
        (_, name) => {
            let name = name.unwrap_or("default");
            match Suite::builtin(name) {
                Some(s) => s,
                None => Suite::from_file(Path::new(name)).map_err(py_err)?,
            }
        }
    };
    let residual = residual_kind(residual)?.or(suite.default_residual);
    let settings = settings.map(|s| json_object("settings", s)).transpose()?;
    if let Some(m) = &settings {
        registry::check_settings_map(m).map_err(py_err)?;
    }
    let variants = match variants {
        Some(v) => Some(VariantsFile::parse(v, "(variants dict)").map_err(py_err)?),
        None => None,
    };
    let items: Vec<Bound<'py, PyAny>> = match solvers {
        Some(s) => s,
        None => {
            let names: Vec<String> = match (&variants, &suite.default_solvers) {
                (Some(v), _) => v.names(),
                (None, Some(d)) => d.clone(),
                (None, None) => registry::default_solvers()
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            };
            names
                .into_iter()
                .map(|n| pyo3::types::PyString::new(py, &n).into_any())
                .collect()
        }
    };
    let defs = load_defs(external.as_deref())?;
    let mut specs: Vec<SolverSpec> = Vec::new();
    for item in &items {
        if let Ok(p) = item.cast::<PySolver>() {
            specs.push(SolverSpec::driven(p.get().driven()));
            continue;
        }
        let token: String = item
            .extract()
            .map_err(|_| invalid("solvers: expected registry names (str) or Python callables"))?;
        if let Some(d) = resolve_driven(&token, defs.as_ref())? {
            specs.push(SolverSpec::driven(d));
            continue;
        }
        specs.extend(
            cpbench_harness::variants::expand(&[token], settings.as_ref(), variants.as_ref())
                .map_err(py_err)?,
        );
    }
    let profiles = match (tol, suite.default_tol) {
        (Some(tol), _) => vec![Profile {
            name: "custom".into(),
            tol,
        }],
        (None, Some(tol)) => vec![Profile {
            name: suite.name.clone(),
            tol,
        }],
        (None, None) => {
            vec![Profile::builtin("default").ok_or_else(|| invalid("no default profile"))?]
        }
    };
    let entries = suite.entries.clone();
    let suite_name = suite.name.clone();
    let out_dir = out.clone();
    let outcome = py.detach(move || -> Result<_, cpbench_harness::HarnessError> {
        let mut instances = Vec::new();
        let mut load_errors = Vec::new();
        for entry in &entries {
            match entry.load() {
                Ok(i) => instances.push(i),
                Err(e) if !fail_fast => load_errors.push(LoadFailure {
                    source: entry.source_name(),
                    message: e.to_string(),
                }),
                Err(e) => return Err(e),
            }
        }
        if instances.is_empty() && load_errors.is_empty() {
            return Err(cpbench_harness::HarnessError::Invalid(format!(
                "suite '{suite_name}' has no instances: nothing to run"
            )));
        }
        let mut cfg = RunConfig::new(out_dir);
        cfg.suite = suite_name;
        cfg.solvers = specs;
        cfg.load_errors = load_errors.clone();
        cfg.profiles = profiles;
        cfg.jobs = jobs;
        cfg.rerun = rerun;
        cfg.exec.residual = residual;
        cfg.check_residual = residual;
        cfg.exec.max_iter = max_iter;
        cfg.exec.max_time_s = time_limit;
        cfg.trace_every = trace_every;
        cfg.plots = plots;
        cfg.progress = false;
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
