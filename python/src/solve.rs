//! One solve and the residuals of an answer, on the harness's own path so that the numbers
//! equal a `cpbench run` row: the solver variant resolved to a
//! [`cpbench_harness::run::SolverSpec`] (a registry token through
//! [`cpbench_harness::variants::expand`], or a driven solver: a Python callable, an `ext:` /
//! `siconos:` program), then [`cpbench_harness::solve::checked_solve`], the function behind
//! every row of `cpbench run`, with a [`TraceRecorder`].

use crate::buffer::Buffer;
use crate::driven::PySolver;
use crate::errors::{invalid, py_err};
use crate::instance::RawInstance;
use crate::names::residual_kind;
use cpbench_harness::run::SolverSpec;
use cpbench_harness::solve::{checked_solve, Runnable};
use cpbench_problems::{residuals as all_residuals, Residuals};
use cpbench_solvers::{ExecSettings, ObserverMode, TraceRecorder};
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// The residuals as a dict, in the column order of `summary.csv`.
pub fn residual_dict<'py>(py: Python<'py>, r: &Residuals) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in Residuals::NAMES.iter().zip(r.values()) {
        d.set_item(*k, v)?;
    }
    Ok(d)
}

/// Every residual of `gamma` (length `n`) for `inst`: `cpbench_problems::residual::residuals`,
/// the function behind `summary.csv`'s residual columns, as `{column: value}`. Errors:
/// `CpbenchError` for a wrong length.
#[pyfunction]
pub fn residuals<'py>(
    py: Python<'py>,
    inst: &RawInstance,
    gamma: PyBuffer<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let g = gamma.to_vec(py)?;
    let n = inst.inner.n();
    if g.len() != n {
        return Err(invalid(format!(
            "gamma has length {}, instance has n = {n}",
            g.len()
        )));
    }
    let i = inst.inner.clone();
    let r = py.detach(move || all_residuals(&i, &g));
    residual_dict(py, &r)
}

/// The solver `solver` stands for: a `PySolver`, a driven name (`ext:` / `siconos:`,
/// resolved with `external`, the path of a definition file), or a registry token (a name,
/// `name:preset`, `name@key=value`) with `settings` (JSON text of a settings object) on top.
/// Errors: an unknown solver, bad settings, a sweep (more than one variant).
pub fn which(
    solver: &Bound<'_, PyAny>,
    settings: Option<&str>,
    external: Option<&std::path::Path>,
) -> PyResult<SolverSpec> {
    if let Ok(p) = solver.cast::<PySolver>() {
        return Ok(SolverSpec::driven(p.get().driven()));
    }
    let token: String = solver
        .extract()
        .map_err(|_| invalid("solver: expected a registry name (str) or a Python callable"))?;
    let defs = crate::names::load_defs(external)?;
    if let Some(d) = crate::names::resolve_driven(&token, defs.as_ref())? {
        return Ok(SolverSpec::driven(d));
    }
    let base = token.split('@').next().unwrap_or("").trim().to_string();
    let map = match settings {
        Some(s) => {
            let v: serde_json::Value =
                serde_json::from_str(s).map_err(|e| invalid(format!("settings: {e}")))?;
            let mut m = serde_json::Map::new();
            m.insert(base, v);
            Some(m)
        }
        None => None,
    };
    let mut specs =
        cpbench_harness::variants::expand(std::slice::from_ref(&token), map.as_ref(), None)
            .map_err(py_err)?;
    if specs.len() != 1 {
        return Err(invalid(format!(
            "solver '{token}' stands for {} variants: solve runs one (use cpbench.run for sweeps)",
            specs.len()
        )));
    }
    Ok(specs.remove(0))
}

/// Solve `inst` with `solver` (see [`which`]) under the executor settings (`tol`, `max_iter`,
/// `time_limit` seconds, stopping and check `residual`), from `warm_start` (projected onto
/// `K`) or zero; `py_instance` (the `cpbench.Instance` wrapping `inst`) is handed to a Python
/// solver as it is. Returns a dict: `solver`, `status`, `success`, `iterations`, `matvecs`,
/// `time_s`, `best_iteration`, `residuals` (dict), `check_residual`, `message`, `counters`
/// (dict), `gamma` (a [`Buffer`]) and `trace` (a list of `(column, Buffer)` in the trace
/// CSV's column order). Errors: invalid settings, an unknown solver, a warm start of the wrong
/// size (`CpbenchError`). The solve runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (inst, solver, tol=1e-6, max_iter=20000, settings=None, warm_start=None, residual=None, time_limit=None, trace_every=1, external=None, py_instance=None))]
#[allow(clippy::too_many_arguments)]
pub fn solve<'py>(
    py: Python<'py>,
    inst: &RawInstance,
    solver: &Bound<'py, PyAny>,
    tol: f64,
    max_iter: u64,
    settings: Option<&str>,
    warm_start: Option<PyBuffer<f64>>,
    residual: Option<&str>,
    time_limit: Option<f64>,
    trace_every: u64,
    external: Option<std::path::PathBuf>,
    py_instance: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let kind = residual_kind(residual)?;
    let exec = ExecSettings {
        tol,
        max_iter,
        max_time_s: time_limit,
        residual: kind,
        ..Default::default()
    };
    exec.validate().map_err(py_err)?;
    if trace_every == 0 {
        return Err(invalid(
            "trace_every must be at least 1 (1 records every iteration)",
        ));
    }
    let spec = which(solver, settings, external.as_deref())?;
    let mut runnable = Runnable::of(&spec).map_err(py_err)?;
    let warm = warm_start.map(|w| w.to_vec(py)).transpose()?;
    let py_solver = solver.cast::<PySolver>().ok().map(|p| p.get());
    let i: Arc<cpbench_problems::Instance> = inst.inner.clone();
    if let (Some(p), Some(obj)) = (py_solver, py_instance) {
        p.remember(&i, obj);
    }
    let mode = if trace_every <= 1 {
        ObserverMode::Always
    } else {
        ObserverMode::Every(trace_every)
    };
    let ii = i.clone();
    // the solve and the check, with the GIL released (a Python solver takes it back)
    let outcome = py.detach(move || {
        let mut rec = TraceRecorder::new(mode);
        checked_solve(
            &mut runnable,
            exec,
            &ii,
            warm.as_deref(),
            kind,
            &mut [&mut rec],
        )
        .map(|c| (c, rec.records))
    });
    if let Some(p) = py_solver {
        p.forget(&i);
    }
    let (checked, records) = outcome.map_err(py_err)?;
    let (res, verdict, check_residual) = (checked.result, checked.verdict, checked.check_residual);
    let d = PyDict::new(py);
    d.set_item("solver", &res.solver)?;
    d.set_item("status", res.status.as_str())?;
    d.set_item("success", verdict.success)?;
    d.set_item("iterations", res.iterations)?;
    d.set_item("matvecs", res.matvecs)?;
    d.set_item("time_s", res.time_s)?;
    d.set_item("best_iteration", res.best_iteration)?;
    d.set_item("residuals", residual_dict(py, &verdict.residuals)?)?;
    d.set_item("check_residual", check_residual.as_str())?;
    d.set_item(
        "message",
        cpbench_harness::run::row_message(res.message.as_deref(), verdict.reason.as_deref()),
    )?;
    let counters = PyDict::new(py);
    for (k, v) in &res.counters {
        counters.set_item(k, v)?;
    }
    d.set_item("counters", counters)?;
    d.set_item("trace", trace_columns(py, &records)?)?;
    d.set_item("gamma", Py::new(py, Buffer::owned(res.gamma))?)?;
    Ok(d)
}

/// The trace as `[(column, Buffer)]` in the order of the trace CSV (`iteration`, `time_s`,
/// `matvecs`, the residual columns, then the solver's extra columns in order of first
/// appearance, NaN where a record has no value).
fn trace_columns<'py>(
    py: Python<'py>,
    records: &[cpbench_solvers::IterRecord],
) -> PyResult<Vec<(String, Py<Buffer>)>> {
    let mut out = Vec::new();
    let ints = |f: &dyn Fn(&cpbench_solvers::IterRecord) -> u64| {
        Buffer::owned_int(records.iter().map(|r| f(r) as i64).collect())
    };
    out.push((
        "iteration".to_string(),
        Py::new(py, ints(&|r| r.iteration))?,
    ));
    out.push((
        "time_s".to_string(),
        Py::new(
            py,
            Buffer::owned(records.iter().map(|r| r.time_s).collect()),
        )?,
    ));
    out.push(("matvecs".to_string(), Py::new(py, ints(&|r| r.matvecs))?));
    for (k, name) in Residuals::NAMES.iter().enumerate() {
        let col = records.iter().map(|r| r.residuals.values()[k]).collect();
        out.push((name.to_string(), Py::new(py, Buffer::owned(col))?));
    }
    let mut extra: Vec<&'static str> = Vec::new();
    for r in records {
        for &(k, _) in r.info.items() {
            if !extra.contains(&k) {
                extra.push(k);
            }
        }
    }
    for k in extra {
        let col = records
            .iter()
            .map(|r| {
                r.info
                    .items()
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map_or(f64::NAN, |&(_, x)| x)
            })
            .collect();
        out.push((k.to_string(), Py::new(py, Buffer::owned(col))?));
    }
    Ok(out)
}
