//! `cpbench._cpbench`: the extension module behind the Python package `cpbench`
//! (`python/cpbench/`). The public API, its documentation and the NumPy / SciPy / pandas
//! conversions are in the pure-Python package; this module holds what needs the Rust crates:
//!
//! - [`instance::RawInstance`]: a loaded or built [`cpbench_problems::Instance`] behind an
//!   `Arc`, and [`buffer::Buffer`], a read-only buffer-protocol view of one of its arrays
//!   (or of an owned vector) that NumPy wraps without copying;
//! - [`solve::solve`] and [`solve::residuals`]: one solve through the harness's path
//!   (`registry::build` or a driven solver, [`cpbench_solvers::Executor`], a
//!   [`cpbench_solvers::TraceRecorder`], [`cpbench_harness::check::check`]);
//! - [`driven::PySolver`]: a Python callable as a [`cpbench_solvers::DrivenSolver`];
//! - [`run::run`]: [`cpbench_harness::run()`] on a suite or files, as `cpbench run` does.
//!
//! Errors become Python exceptions of `cpbench._errors` ([`errors`]) carrying the message
//! the command line prints.
#![deny(missing_docs)]

pub mod buffer;
pub mod driven;
pub mod errors;
pub mod instance;
pub mod names;
pub mod run;
pub mod solve;

use pyo3::prelude::*;

/// The module `cpbench._cpbench`.
#[pymodule]
fn _cpbench(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // the residual columns of summary.csv and traces, in their order (the one list)
    m.add(
        "RESIDUAL_NAMES",
        cpbench_problems::Residuals::NAMES.to_vec(),
    )?;
    m.add_class::<buffer::Buffer>()?;
    m.add_class::<instance::RawInstance>()?;
    m.add_class::<driven::PySolver>()?;
    m.add_class::<driven::Callback>()?;
    m.add_function(wrap_pyfunction!(instance::load, m)?)?;
    m.add_function(wrap_pyfunction!(instance::from_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(instance::save, m)?)?;
    m.add_function(wrap_pyfunction!(solve::residuals, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve, m)?)?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(run::replay, m)?)?;
    m.add_function(wrap_pyfunction!(run::solver_names, m)?)?;
    m.add_function(wrap_pyfunction!(run::default_out_dir, m)?)?;
    Ok(())
}
