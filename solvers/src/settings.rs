//! One validation path for solver settings: the [`SolverSettings`] trait and the [`Validator`]
//! whose range helpers (`in_open`, `positive`, `at_least`, ...) both check a value and record
//! the documented range, so that `cpbench solvers` prints the same ranges the checks enforce.

use crate::status::SolverError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Display;

/// The settings struct of one solver: JSON in and out (missing fields take their defaults,
/// unknown fields are rejected), and its range checks in [`SolverSettings::check`].
pub trait SolverSettings: Serialize + DeserializeOwned + Default {
    /// Registry name of the solver these settings belong to (error messages name it).
    const SOLVER: &'static str;

    /// Renamed fields, `(old name, field)`: the struct accepts the old name through
    /// `#[serde(alias)]`; this list lets presets merge old names and `cpbench solvers` show
    /// them.
    const ALIASES: &'static [(&'static str, &'static str)] = &[];

    /// Check every field with the helpers of `v` (each call records the field's range).
    fn check(&self, v: &mut Validator);

    /// Run [`SolverSettings::check`]. Errors: the first [`SolverError::OutOfRange`], naming
    /// the solver, the field, the value and the allowed range.
    fn validate(&self) -> Result<(), SolverError> {
        let mut v = Validator::new(format!("solver '{}'", Self::SOLVER));
        self.check(&mut v);
        v.finish()
    }

    /// `(field, allowed range)` of every checked field, in the order of the checks.
    fn ranges() -> Vec<(&'static str, String)> {
        let mut v = Validator::describing(format!("solver '{}'", Self::SOLVER));
        Self::default().check(&mut v);
        v.ranges
    }
}

/// Collects range checks: the first failure (as [`SolverError::OutOfRange`]) and the
/// description of every range checked.
#[derive(Debug)]
pub struct Validator {
    owner: String,
    describe: bool,
    error: Option<SolverError>,
    ranges: Vec<(&'static str, String)>,
}

impl Validator {
    /// A validator for the settings of `owner` (`solver 'pgs'`, `the executor`: error
    /// messages name it). It allocates only on a failure.
    pub fn new(owner: impl Into<String>) -> Self {
        Self {
            owner: owner.into(),
            describe: false,
            error: None,
            ranges: Vec::new(),
        }
    }

    /// A validator that also records the range of every check ([`Validator::ranges`]).
    pub fn describing(owner: impl Into<String>) -> Self {
        Self {
            describe: true,
            ..Self::new(owner)
        }
    }

    /// The first failed check, if any.
    pub fn finish(self) -> Result<(), SolverError> {
        self.error.map_or(Ok(()), Err)
    }

    /// `(field, allowed range)` of every check made so far (empty unless
    /// [`Validator::describing`]).
    pub fn ranges(&self) -> &[(&'static str, String)] {
        &self.ranges
    }

    /// The general check: fail (once) unless `ok`; `range` says what is allowed (`in (0, 2)`,
    /// `> 0, finite`) and is only formatted on a failure or when describing.
    pub fn require(
        &mut self,
        field: &'static str,
        ok: bool,
        value: impl Display,
        range: impl FnOnce() -> String,
    ) -> &mut Self {
        if !ok && self.error.is_none() {
            self.error = Some(SolverError::OutOfRange {
                owner: self.owner.clone(),
                field,
                value: value.to_string(),
                range: range(),
            });
        } else if self.describe {
            self.ranges.push((field, range()));
        }
        self
    }

    /// `lo < x < hi` (NaN fails).
    pub fn in_open(&mut self, field: &'static str, x: f64, lo: f64, hi: f64) -> &mut Self {
        self.require(field, x > lo && x < hi, x, || format!("in ({lo}, {hi})"))
    }

    /// `lo < x <= hi` (NaN fails).
    pub fn in_open_closed(&mut self, field: &'static str, x: f64, lo: f64, hi: f64) -> &mut Self {
        self.require(field, x > lo && x <= hi, x, || format!("in ({lo}, {hi}]"))
    }

    /// `x > lo` (NaN fails; infinity passes).
    pub fn greater(&mut self, field: &'static str, x: f64, lo: f64) -> &mut Self {
        self.require(field, x > lo, x, || format!("> {lo}"))
    }

    /// `0 < x < inf`.
    pub fn positive(&mut self, field: &'static str, x: f64) -> &mut Self {
        self.require(field, x > 0.0 && x.is_finite(), x, || "> 0, finite".into())
    }

    /// `0 <= x < inf`.
    pub fn non_negative(&mut self, field: &'static str, x: f64) -> &mut Self {
        self.require(field, x >= 0.0 && x.is_finite(), x, || {
            ">= 0, finite".into()
        })
    }

    /// An optional `0 < x < inf` (`None` passes).
    pub fn positive_opt(&mut self, field: &'static str, x: Option<f64>) -> &mut Self {
        let ok = x.is_none_or(|x| x > 0.0 && x.is_finite());
        self.require(field, ok, Opt(x), || "> 0, finite, or null".into())
    }

    /// An integer `x >= lo`.
    pub fn at_least(&mut self, field: &'static str, x: u64, lo: u64) -> &mut Self {
        self.require(field, x >= lo, x, || format!(">= {lo}"))
    }

    /// An optional integer `x >= lo` (`None` passes).
    pub fn at_least_opt(&mut self, field: &'static str, x: Option<u64>, lo: u64) -> &mut Self {
        let ok = x.is_none_or(|x| x >= lo);
        self.require(field, ok, Opt(x), || format!(">= {lo}, or null"))
    }

    /// An integer `x <= hi`.
    pub fn at_most(&mut self, field: &'static str, x: u64, hi: u64) -> &mut Self {
        self.require(field, x <= hi, x, || format!("<= {hi}"))
    }

    /// A string among `allowed`.
    pub fn one_of(&mut self, field: &'static str, x: &str, allowed: &[&str]) -> &mut Self {
        self.require(field, allowed.contains(&x), format_args!("\"{x}\""), || {
            format!("one of {}", allowed.join(", "))
        })
    }
}

/// An optional value as JSON shows it (`null` for `None`), formatted only when needed.
struct Opt<T>(Option<T>);

impl<T: Display> Display for Opt<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(x) => x.fmt(f),
            None => f.write_str("null"),
        }
    }
}

/// Parse the settings of `S` from a JSON value (`None` = defaults) and validate them.
///
/// Errors: [`SolverError::BadSettings`] for a value that is not an object, an unknown field
/// or a wrongly typed field (the message names the field), and [`SolverError::OutOfRange`].
pub fn parse<S: SolverSettings>(
    solver: &str,
    v: Option<&serde_json::Value>,
) -> Result<S, SolverError> {
    let bad = |message: String| SolverError::BadSettings {
        solver: solver.to_string(),
        message,
    };
    let s: S = match v {
        None => S::default(),
        Some(v) => {
            let obj = v
                .as_object()
                .ok_or_else(|| bad(format!("settings must be a JSON object, found {v}")))?;
            serde_json::from_value(v.clone()).map_err(|e| bad(name_field::<S>(obj, e)))?
        }
    };
    s.validate()?;
    Ok(s)
}

/// serde_json's message for a typed-field error does not name the field: find the first
/// field that alone (over the defaults) fails to parse and prefix its name.
fn name_field<S: SolverSettings>(
    obj: &serde_json::Map<String, serde_json::Value>,
    e: serde_json::Error,
) -> String {
    let Ok(serde_json::Value::Object(defaults)) = serde_json::to_value(S::default()) else {
        return e.to_string();
    };
    for (k, val) in obj {
        let mut one = defaults.clone();
        one.insert(k.clone(), val.clone());
        if let Err(e1) = serde_json::from_value::<S>(serde_json::Value::Object(one)) {
            let msg = e1.to_string();
            if msg.contains("unknown field") {
                return msg;
            }
            return format!("field `{k}` = {val}: {msg}");
        }
    }
    e.to_string()
}
