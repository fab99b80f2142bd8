//! Solvers by name, with settings from JSON (missing fields take their defaults).
//!
//! A name may carry a preset after a colon, `name:preset` ([`PRESETS`]): the preset replaces the
//! defaults and the JSON settings, if any, are applied on top of it. The full name (with the
//! preset) is what result files show, so that variants of one solver can run side by side.

use crate::apgd::{Apgd, ApgdSettings};
use crate::clarabel::{Clarabel, ClarabelSettings};
use crate::desaxce::{DeSaxce, DeSaxceSettings};
use crate::ipm::{Ipm, IpmSettings};
use crate::jacobi::{Jacobi, JacobiSettings};
use crate::mpgp::{Mpgp, MpgpSettings};
use crate::mprgp::{Expansion, Mprgp, MprgpSettings};
use crate::nsgs::{Nsgs, NsgsSettings};
use crate::nsn::{NsnAc, NsnAcSettings};
use crate::pgs::{Pgs, PgsSettings};
use crate::solver::Solver;
use crate::spgqp::{SpgQp, SpgQpSettings};
use crate::status::SolverError;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Names of all registered solvers. Besides these, `desaxce-<name>` ([`DESAXCE_PREFIX`]) wraps
/// any CCP solver `<name>` in De Saxce's fixed point for the Coulomb problem.
pub const SOLVER_NAMES: [&str; 12] = [
    "pgs",
    "jacobi",
    "apgd",
    "spgqp",
    "mprgp",
    "mpgp",
    "ipm",
    "clarabel",
    "nsgs",
    "nsn-ac",
    "desaxce-apgd",
    "desaxce-spgqp",
];

/// Prefix of the De Saxce drivers: `desaxce-<inner>` solves the Coulomb problem by CCP solves
/// with the inner solver `<inner>` ([`crate::desaxce`]); the settings are
/// [`DeSaxceSettings`], whose field `inner` holds the inner solver's settings.
pub const DESAXCE_PREFIX: &str = "desaxce-";

/// A `'static` copy of `name`, leaked once per distinct name (solver names are few).
fn intern(name: &str) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut set = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&s) = set.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(s);
    s
}

/// Named presets, `solver:preset`, with what they set:
/// `mprgp:permon` (PERMON's `QPSMPGP` defaults, [`MprgpSettings::permon`], standard
/// expansion: PERMON test `ex1_1`), and `mprgp:permon-opt`, `mprgp:permon-optapprox`,
/// `mprgp:permon-bb`, `mprgp:permon-projcg` (the same with the expansion of PERMON's tests
/// `ex1_opt`, `ex1_optapprox`, `ex1_bb`, `ex1_projcg`).
pub const PRESETS: [&str; 5] = [
    "mprgp:permon",
    "mprgp:permon-opt",
    "mprgp:permon-optapprox",
    "mprgp:permon-bb",
    "mprgp:permon-projcg",
];

/// The settings of a preset as JSON, or `None` for an unknown one.
fn preset(name: &str) -> Option<serde_json::Value> {
    let exp = match name {
        "mprgp:permon" => Expansion::Std,
        "mprgp:permon-opt" => Expansion::Opt,
        "mprgp:permon-optapprox" => Expansion::Optapprox,
        "mprgp:permon-bb" => Expansion::Bb,
        "mprgp:permon-projcg" => Expansion::Projcg,
        _ => return None,
    };
    serde_json::to_value(MprgpSettings::permon(exp)).ok()
}

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
///
/// `name` may be `solver:preset` ([`PRESETS`]); the user's settings then override the preset's
/// field by field. An unknown preset is [`SolverError::UnknownSolver`].
pub fn build(name: &str, settings: Option<&serde_json::Value>) -> Result<Built, SolverError> {
    let merged;
    let (base, settings) = match name.split_once(':') {
        None => (name, settings),
        Some((base, _)) => {
            let mut v = preset(name).ok_or_else(|| {
                SolverError::UnknownSolver(
                    name.to_string(),
                    format!(
                        "{}; presets: {}",
                        SOLVER_NAMES.join(", "),
                        PRESETS.join(", ")
                    ),
                )
            })?;
            if let Some(user) = settings {
                let user = user.as_object().ok_or_else(|| SolverError::BadSettings {
                    solver: name.to_string(),
                    message: "settings must be a JSON object".into(),
                })?;
                let obj = v.as_object_mut().expect("settings serialise to an object");
                for (k, val) in user {
                    obj.insert(k.clone(), val.clone());
                }
            }
            merged = v;
            (base, Some(&merged))
        }
    };
    let (solver, settings): (Box<dyn Solver + Send>, _) = match base {
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
        "mprgp" => {
            let (s, j) = parse::<MprgpSettings>(name, settings)?;
            (Box::new(Mprgp::new(s)?), j)
        }
        "mpgp" => {
            let (s, j) = parse::<MpgpSettings>(name, settings)?;
            (Box::new(Mpgp::new(s)?), j)
        }
        "ipm" => {
            let (s, j) = parse::<IpmSettings>(name, settings)?;
            (Box::new(Ipm::new(s)?), j)
        }
        "clarabel" => {
            let (s, j) = parse::<ClarabelSettings>(name, settings)?;
            (Box::new(Clarabel::new(s)?), j)
        }
        "nsgs" => {
            let (s, j) = parse::<NsgsSettings>(name, settings)?;
            (Box::new(Nsgs::new(s)?), j)
        }
        "nsn-ac" => {
            let (s, j) = parse::<NsnAcSettings>(name, settings)?;
            (Box::new(NsnAc::new(s)?), j)
        }
        _ if base.starts_with(DESAXCE_PREFIX) => {
            let inner_name = &base[DESAXCE_PREFIX.len()..];
            let (mut s, _) = parse::<DeSaxceSettings>(name, settings)?;
            let inner = build(inner_name, s.inner.as_ref())?;
            s.inner = Some(inner.settings);
            let j = serde_json::to_value(&s).map_err(|e| SolverError::BadSettings {
                solver: name.to_string(),
                message: e.to_string(),
            })?;
            (Box::new(DeSaxce::new(intern(base), inner.solver, s)?), j)
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
