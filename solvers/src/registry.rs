//! Solvers by name, with settings from JSON (missing fields take their defaults).

use crate::apgd::{Apgd, ApgdSettings};
use crate::jacobi::{Jacobi, JacobiSettings};
use crate::pgs::{Pgs, PgsSettings};
use crate::solver::Solver;
use crate::spgqp::{SpgQp, SpgQpSettings};
use crate::status::SolverError;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Names of all registered solvers.
pub const SOLVER_NAMES: [&str; 4] = ["pgs", "jacobi", "apgd", "spgqp"];

/// A solver and its effective settings (defaults filled in), as JSON for manifests and hashes.
pub struct Built {
    /// The solver.
    pub solver: Box<dyn Solver + Send>,
    /// Its settings with defaults filled in.
    pub settings: serde_json::Value,
}

fn parse<T: DeserializeOwned + Serialize + Default>(
    name: &str,
    v: Option<&serde_json::Value>,
) -> Result<(T, serde_json::Value), SolverError> {
    let s: T = match v {
        None => T::default(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| SolverError::BadSettings {
            solver: name.to_string(),
            message: e.to_string(),
        })?,
    };
    let json = serde_json::to_value(&s).map_err(|e| SolverError::BadSettings {
        solver: name.to_string(),
        message: e.to_string(),
    })?;
    Ok((s, json))
}

/// Build the solver called `name` with `settings` (a JSON object of its settings struct, or
/// `None` for defaults). Errors: [`SolverError::UnknownSolver`], [`SolverError::BadSettings`],
/// [`SolverError::InvalidSetting`].
pub fn build(name: &str, settings: Option<&serde_json::Value>) -> Result<Built, SolverError> {
    let (solver, settings): (Box<dyn Solver + Send>, _) = match name {
        "pgs" => {
            let (s, j) = parse::<PgsSettings>(name, settings)?;
            (Box::new(Pgs::new(s)?), j)
        }
        "jacobi" => {
            let (s, j) = parse::<JacobiSettings>(name, settings)?;
            (Box::new(Jacobi::new(s)?), j)
        }
        "apgd" => {
            let (s, j) = parse::<ApgdSettings>(name, settings)?;
            (Box::new(Apgd::new(s)?), j)
        }
        "spgqp" => {
            let (s, j) = parse::<SpgQpSettings>(name, settings)?;
            (Box::new(SpgQp::new(s)?), j)
        }
        _ => {
            return Err(SolverError::UnknownSolver(
                name.to_string(),
                SOLVER_NAMES.join(", "),
            ))
        }
    };
    Ok(Built { solver, settings })
}
