//! Rust errors as Python exceptions.
//!
//! The exception classes live in the pure-Python module `cpbench._errors` (so that they can
//! inherit from two built-in classes): `CpbenchError(ValueError)` for every error of the
//! crates (a malformed file, an unknown solver, invalid settings, a locked output folder, ...)
//! and `CpbenchFileNotFoundError(CpbenchError, FileNotFoundError)` when the cause is a missing
//! file. The message is what `cpbench` prints after `error: `: the error's `Display`, then one
//! `  caused by: ...` line per cause whose text is not already in it
//! (`cpbench_harness::error::message_with_causes`, as the CLI's `chain::format_error_chain`).

use pyo3::prelude::*;
use pyo3::types::PyType;

/// The message of `e` and its causes, as the command line prints it (without `error: `).
pub fn message(e: &dyn std::error::Error) -> String {
    cpbench_harness::error::message_with_causes(e)
}

/// Whether a cause of `e` is an I/O error "not found".
fn not_found(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::NotFound {
                return true;
            }
        }
        cur = c.source();
    }
    false
}

/// The exception class `name` of `cpbench._errors`.
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    Ok(py
        .import("cpbench._errors")?
        .getattr(name)?
        .cast_into::<PyType>()?)
}

/// A Python exception with `message`: `CpbenchFileNotFoundError` when `missing`, else
/// `CpbenchError` (an `ImportError` of `cpbench._errors` is returned instead if that module
/// cannot be imported).
pub fn raise(message: String, missing: bool) -> PyErr {
    Python::attach(|py| {
        let name = if missing {
            "CpbenchFileNotFoundError"
        } else {
            "CpbenchError"
        };
        match class(py, name) {
            Ok(t) => PyErr::from_type(t, (message,)),
            Err(e) => e,
        }
    })
}

/// `e` as a Python exception (see the module documentation).
pub fn to_py(e: &(dyn std::error::Error + 'static)) -> PyErr {
    raise(message(e), not_found(e))
}

/// `CpbenchError` with `message`.
pub fn invalid(message: impl Into<String>) -> PyErr {
    raise(message.into(), false)
}

/// `.map_err(py_err)` for any error of the crates.
pub fn py_err<E: std::error::Error + 'static>(e: E) -> PyErr {
    to_py(&e)
}
