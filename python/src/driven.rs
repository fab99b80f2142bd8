//! Python callables as solvers: [`PySolver`] implements
//! [`cpbench_solvers::DrivenSolver`], so the executor records and checks a Python solver's
//! iterates as it does those of cpbench's own solvers ([`cpbench_solvers::driven`]).
//!
//! A solve attaches to the interpreter (the harness runs solves on its worker threads with
//! the GIL released) and calls `cpbench._call_solver(func, instance, exec, gamma0, callback)`
//! (pure Python, `python/cpbench/__init__.py`), which calls the user's
//! `func(N, r, cone, settings, callback)` and normalises its answer. The [`Callback`] handed
//! to it forwards every iterate to the executor's [`Monitor`] (one copy of `gamma`, into the
//! monitor, when the iterate is a C-contiguous float64 array) and answers `False` when the
//! harness says stop (converged, iteration cap, time budget, divergence).
//!
//! Outcomes: an exception raised by `func` ends the solve as status `crashed` with the
//! exception's type and message (and where it was raised); an iterate or answer of the wrong
//! length or shape as `bad_output`; otherwise the answer is checked like any other.

use crate::buffer::Buffer;
use crate::errors::invalid;
use crate::instance::RawInstance;
use cpbench_problems::Instance;
use cpbench_solvers::{DrivenAnswer, DrivenSolver, ExecSettings, Monitor, SolverError, Status};
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::{Arc, Mutex};

/// What a [`PySolver`] shares with the solves that run it.
struct Inner {
    /// `py:<name>`.
    name: String,
    /// The user's callable `func(N, r, cone, settings, callback)`.
    func: Py<PyAny>,
    /// The user's settings, handed to `func` (merged with the executor's values).
    settings: Py<PyAny>,
    /// The settings as JSON (manifest, settings hash).
    settings_json: serde_json::Value,
    /// Where the callable is defined (`module.qualname`), for the manifest.
    qualname: String,
    /// Python `cpbench.Instance` objects of instances solved by `cpbench.solve`, by the
    /// address of the Rust instance: handed to `func` as they are (their arrays are shared,
    /// not copied). Instances not found here (those of `cpbench.run`) are copied once per
    /// solve into a new `cpbench.Instance`.
    known: Mutex<Vec<(usize, Py<PyAny>)>>,
}

/// A Python callable as a driven solver (see the module documentation). Made by
/// `cpbench._cpbench.PySolver(func, name, settings, settings_json, qualname)`.
#[pyclass(frozen, module = "cpbench._cpbench")]
pub struct PySolver {
    inner: Arc<Inner>,
}

impl PySolver {
    /// The solver for the executor and the harness.
    pub fn driven(&self) -> Arc<dyn DrivenSolver> {
        Arc::new(Shared(self.inner.clone()))
    }

    /// Hand `obj` (a `cpbench.Instance`) to `func` as it is when `inst` is solved.
    pub fn remember(&self, inst: &Instance, obj: Py<PyAny>) {
        if let Ok(mut k) = self.inner.known.lock() {
            k.push((inst as *const Instance as usize, obj));
        }
    }

    /// Forget what [`PySolver::remember`] recorded for `inst`.
    pub fn forget(&self, inst: &Instance) {
        let addr = inst as *const Instance as usize;
        if let Ok(mut k) = self.inner.known.lock() {
            if let Some(i) = k.iter().position(|(a, _)| *a == addr) {
                k.remove(i);
            }
        }
    }
}

#[pymethods]
impl PySolver {
    /// `func(N, r, cone, settings, callback) -> gamma` under the name `name` (`py:` is
    /// prepended when missing); `settings` (a dict) is handed to `func`, `settings_json` (its
    /// JSON text) goes to the manifest and the settings hash; `qualname` names the callable
    /// in the manifest. Errors: `CpbenchError` for settings that are not valid JSON.
    #[new]
    fn new(
        func: Py<PyAny>,
        name: &str,
        settings: Py<PyAny>,
        settings_json: &str,
        qualname: &str,
    ) -> PyResult<Self> {
        let settings_json = serde_json::from_str(settings_json)
            .map_err(|e| invalid(format!("settings of {name}: {e}")))?;
        let name = if name.starts_with("py:") {
            name.to_string()
        } else {
            format!("py:{name}")
        };
        Ok(Self {
            inner: Arc::new(Inner {
                name,
                func,
                settings,
                settings_json,
                qualname: qualname.to_string(),
                known: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The solver's name (`py:...`).
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }
}

/// [`Inner`] as the [`DrivenSolver`] the executor runs.
struct Shared(Arc<Inner>);

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PySolver")
            .field("name", &self.0.name)
            .field("callable", &self.0.qualname)
            .finish()
    }
}

/// The executor's monitor while a Python solve runs; see [`Callback`].
struct MonitorPtr(*mut Monitor<'static, 'static>);

// SAFETY: the pointer is only dereferenced under the `Callback`'s mutex, while the solve that
// owns the monitor is blocked inside the Python call that received the callback (the pointer
// is cleared before that call's frame ends).
unsafe impl Send for MonitorPtr {}

/// The `callback(gamma) -> bool` handed to a Python solver: records `gamma` (length `n`) as
/// the next iterate and answers whether to go on (`False`: the harness says stop). Valid only
/// during its solve; afterwards a call raises `CpbenchError`.
#[pyclass(frozen, module = "cpbench._cpbench")]
pub struct Callback {
    monitor: Mutex<Option<MonitorPtr>>,
    /// The monitor's error (a wrong length), reported as the solve's status.
    error: Mutex<Option<SolverError>>,
}

impl Callback {
    /// Record `gamma` with the monitor. Errors: the monitor's (wrong length), or a solve
    /// that has ended.
    fn iterate(&self, gamma: &[f64]) -> PyResult<bool> {
        let guard = self
            .monitor
            .lock()
            .map_err(|_| invalid("callback: the solve panicked"))?;
        let Some(ptr) = guard.as_ref() else {
            return Err(invalid(
                "callback called after its solve ended (it is valid only during the call)",
            ));
        };
        // SAFETY: see `MonitorPtr`: the monitor outlives this call and nothing else uses it
        // while the mutex is held.
        let monitor = unsafe { &mut *ptr.0 };
        match monitor.iterate(gamma) {
            Ok(go_on) => Ok(go_on),
            Err(e) => {
                let msg = e.to_string();
                if let Ok(mut slot) = self.error.lock() {
                    slot.get_or_insert(e);
                }
                Err(invalid(msg))
            }
        }
    }

    /// Record a bad iterate (not a 1-D float array) as the solve's error and raise it.
    fn bad(&self, message: String) -> PyErr {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(SolverError::External {
                status: Status::BadOutput,
                message: message.clone(),
            });
        }
        invalid(message)
    }
}

#[pymethods]
impl Callback {
    /// Record `gamma` (a 1-D array-like of length `n`; a C-contiguous float64 array is read
    /// in place, anything else converted with `numpy.ascontiguousarray` first) as the next
    /// iterate; `True` to go on, `False` when the harness says stop. Errors: `CpbenchError`
    /// for a wrong length or shape (the solve then ends as `bad_output`) or a solve that has
    /// ended.
    fn __call__(&self, py: Python<'_>, gamma: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(buf) = PyBuffer::<f64>::get(gamma) {
            if buf.dimensions() == 1 {
                if let Some(p) = buf.as_slice_ptr() {
                    // SAFETY: the buffer export keeps the memory alive and un-resized while
                    // `buf` lives; we hold the GIL, so no Python code writes to it meanwhile.
                    let s: &[f64] = unsafe { p.as_ref() };
                    return self.iterate(s);
                }
            }
        }
        let arr = py
            .import("numpy")?
            .call_method1("ascontiguousarray", (gamma, "float64"))?;
        let buf = PyBuffer::<f64>::get(&arr)?;
        if buf.dimensions() != 1 {
            return Err(self.bad(format!(
                "iterate has shape {:?}, expected a 1-D array of length n",
                buf.shape()
            )));
        }
        let v = buf.to_vec(py)?;
        self.iterate(&v)
    }

    /// Iterations recorded so far (`None` after the solve).
    #[getter]
    fn iterations(&self) -> Option<u64> {
        let g = self.monitor.lock().ok()?;
        // SAFETY: as in `iterate`.
        g.as_ref().map(|p| unsafe { &*p.0 }.iterations())
    }

    /// Solver time so far, seconds, monitoring excluded (`None` after the solve).
    #[getter]
    fn elapsed(&self) -> Option<f64> {
        let g = self.monitor.lock().ok()?;
        // SAFETY: as in `iterate`.
        g.as_ref().map(|p| unsafe { &*p.0 }.elapsed_s())
    }
}

/// `TypeName: message (raised at file:line in function)` of a Python exception.
fn describe(py: Python<'_>, err: &PyErr) -> String {
    let ty = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let msg = err
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let mut out = if msg.is_empty() {
        ty
    } else {
        format!("{ty}: {msg}")
    };
    // the innermost frame of the traceback
    if let Some(tb) = err.traceback(py) {
        let mut tb = tb.into_any();
        while let Ok(next) = tb.getattr("tb_next") {
            if next.is_none() {
                break;
            }
            tb = next;
        }
        let at = (|| -> PyResult<String> {
            let line: u64 = tb.getattr("tb_lineno")?.extract()?;
            let code = tb.getattr("tb_frame")?.getattr("f_code")?;
            let file: String = code.getattr("co_filename")?.extract()?;
            let func: String = code.getattr("co_name")?.extract()?;
            Ok(format!(" (raised at {file}:{line} in {func})"))
        })();
        if let Ok(at) = at {
            out.push_str(&at);
        }
    }
    out
}

impl DrivenSolver for Shared {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({"callable": self.0.qualname, "settings": self.0.settings_json})
    }

    fn solve(
        &self,
        instance: &Instance,
        exec: &ExecSettings,
        gamma0: &[f64],
        monitor: &mut Monitor<'_, '_>,
    ) -> Result<DrivenAnswer, SolverError> {
        let crashed = |message: String| SolverError::External {
            status: Status::Crashed,
            message,
        };
        let bad = |message: String| SolverError::External {
            status: Status::BadOutput,
            message,
        };
        Python::attach(|py| {
            let addr = instance as *const Instance as usize;
            let known = self.0.known.lock().ok().and_then(|k| {
                k.iter()
                    .find(|(a, _)| *a == addr)
                    .map(|(_, o)| o.clone_ref(py))
            });
            let inst_obj: Py<PyAny> = match known {
                Some(o) => o,
                None => Py::new(py, RawInstance::new(instance.clone()))
                    .map_err(|e| crashed(describe(py, &e)))?
                    .into_any(),
            };
            let kind = cpbench_problems::ResidualKind::resolve(exec.residual, instance.class());
            let prepare = || -> PyResult<(Bound<'_, PyAny>, Bound<'_, PyDict>)> {
                let adapter = py.import("cpbench")?.getattr("_call_solver")?;
                let e = PyDict::new(py);
                e.set_item("tol", exec.tol)?;
                e.set_item("max_iter", exec.max_iter)?;
                e.set_item("time_limit", exec.max_time_s)?;
                e.set_item("residual", kind.as_str())?;
                e.set_item("gamma0", Py::new(py, Buffer::owned(gamma0.to_vec()))?)?;
                Ok((adapter, e))
            };
            let (adapter, exec_dict) = prepare().map_err(|e| crashed(describe(py, &e)))?;
            let ptr: *mut Monitor<'static, 'static> = (monitor as *mut Monitor<'_, '_>).cast();
            let cb = Py::new(
                py,
                Callback {
                    monitor: Mutex::new(Some(MonitorPtr(ptr))),
                    error: Mutex::new(None),
                },
            )
            .map_err(|e| crashed(describe(py, &e)))?;
            let args = PyTuple::new(
                py,
                [
                    self.0.func.clone_ref(py),
                    inst_obj,
                    self.0.settings.clone_ref(py),
                    exec_dict.into_any().unbind(),
                    cb.clone_ref(py).into_any(),
                ],
            )
            .map_err(|e| crashed(describe(py, &e)))?;
            let out = adapter.call1(args);
            // the monitor is the executor's again: the callback is dead from here on
            let cbr = cb.get();
            if let Ok(mut m) = cbr.monitor.lock() {
                *m = None;
            }
            if let Some(e) = cbr.error.lock().ok().and_then(|mut e| e.take()) {
                return Err(e);
            }
            let out = out.map_err(|e| crashed(describe(py, &e)))?;
            let get = |k: &str| out.get_item(k).ok().filter(|v| !v.is_none());
            if let Some(m) = get("bad_output") {
                return Err(bad(m.str().map(|s| s.to_string()).unwrap_or_default()));
            }
            let gamma = match get("gamma") {
                Some(g) => PyBuffer::<f64>::get(&g)
                    .and_then(|b| b.to_vec(py))
                    .map_err(|e| bad(describe(py, &e)))?,
                None => return Err(bad("the callable returned no answer (None)".into())),
            };
            let status = match get("status") {
                Some(s) => {
                    let s: String = s.str().map(|s| s.to_string()).unwrap_or_default();
                    Some(Status::parse(&s).ok_or_else(|| {
                        bad(format!(
                            "unknown status '{s}' (one of {})",
                            Status::ALL.map(Status::as_str).join(", ")
                        ))
                    })?)
                }
                None => None,
            };
            let iterations = get("iterations").and_then(|v| v.extract::<u64>().ok());
            let message = get("message").and_then(|v| v.str().ok().map(|s| s.to_string()));
            // the callable's own time for the solve, when it measures one (seconds)
            let time_s = get("time_s").and_then(|v| v.extract::<f64>().ok());
            Ok(DrivenAnswer {
                gamma,
                status,
                iterations,
                message,
                counters: Vec::new(),
                time_s,
            })
        })
    }
}
