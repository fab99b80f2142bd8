//! Names given as text by Python callers, resolved as the command line resolves them: a
//! residual's name, an external-solver definition file, a driven solver's name. Shared by
//! [`crate::solve`] and [`crate::run`] (a leaf module, so that neither depends on the other).

use crate::errors::{invalid, py_err};
use cpbench_problems::ResidualKind;
use cpbench_solvers::external::ExternalDefs;
use cpbench_solvers::DrivenSolver;
use pyo3::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// The stopping / check residual called `name` (`None`: each class's default). Errors:
/// `CpbenchError` naming the known residuals.
pub fn residual_kind(name: Option<&str>) -> PyResult<Option<ResidualKind>> {
    name.map(|r| {
        ResidualKind::parse(r).ok_or_else(|| {
            invalid(format!(
                "unknown residual '{r}' ({})",
                ResidualKind::ALL.map(ResidualKind::as_str).join(", ")
            ))
        })
    })
    .transpose()
}

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
