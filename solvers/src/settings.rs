//! One validation path for solver settings: the [`SolverSettings`] trait and the [`Validator`]
//! whose range helpers (`in_open`, `positive`, `at_least`, ...) both check a value and record
//! the documented range, so that `cpbench solvers` prints the same ranges the checks enforce.
//! The meaning and type of each field come from the settings struct itself: `solvers/build.rs`
//! collects every `*Settings` struct's field names, Rust types and doc comments
//! ([`SolverSettings::fields`], [`field_docs`]), so a field documents itself once, where it is
//! declared.

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

    /// Every field of the struct with its Rust type and doc comment, in declaration order
    /// ([`field_docs`] of the struct's name; empty for a struct the build script did not
    /// find, which the tests reject).
    fn fields() -> &'static [FieldDoc] {
        let name = std::any::type_name::<Self>();
        field_docs(name.rsplit("::").next().unwrap_or(name)).unwrap_or(&[])
    }
}

/// One field of a settings struct as declared: name, Rust type and doc comment (the lines
/// joined by spaces), collected from the sources by `solvers/build.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldDoc {
    /// Field name (the JSON key, as the structs use no `serde(rename)`).
    pub name: &'static str,
    /// Rust type as written (`f64`, `Option<u64>`, `BlockStep`).
    pub rust_type: &'static str,
    /// The doc comment.
    pub doc: &'static str,
}

impl FieldDoc {
    /// One line of meaning: the doc comment's first sentence (up to the first `. ` outside
    /// parentheses and code), cut further at its first `: ` or `; ` when longer than
    /// [`FieldDoc::MEANING_MAX`] characters; rustdoc link brackets removed (`[`X`]` reads
    /// `` `X` ``), ending with a full stop.
    pub fn meaning(&self) -> String {
        let first = cut(self.doc, b".");
        let m = if first.len() > Self::MEANING_MAX {
            cut(first, b":;")
        } else {
            first
        };
        let mut m = m
            .trim_end_matches('.')
            .replace("[`", "`")
            .replace("`]", "`");
        if !m.is_empty() {
            m.push('.');
        }
        m
    }

    /// Length (bytes) above which [`FieldDoc::meaning`] cuts a first sentence at a clause.
    pub const MEANING_MAX: usize = 100;

    /// The JSON type of the field: `number`, `integer`, `bool`, `string`, `object`, `array of
    /// numbers`, the Rust
    /// name of an enum (whose values [`enum_values`] lists), with ` or null` for an `Option`.
    pub fn json_type(&self) -> String {
        fn base(t: &str) -> String {
            match t {
                "f64" | "f32" => "number".into(),
                "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" => "integer".into(),
                "bool" => "bool".into(),
                "String" => "string".into(),
                "serde_json::Value" => "object".into(),
                // another solver's settings nested in a combined solver's (`nsgs-nsn`)
                t if t.ends_with("Settings") => "object".into(),
                "Vec<f64>" => "array of numbers".into(),
                other => other.rsplit("::").next().unwrap_or(other).to_string(),
            }
        }
        let t = self.rust_type.trim();
        match t.strip_prefix("Option<").and_then(|r| r.strip_suffix('>')) {
            Some(inner) => format!("{} or null", base(inner.trim())),
            None => base(t),
        }
    }
}

/// `text` up to the first byte of `stops` that is followed by a space and lies outside
/// parentheses and backquoted code (all of `text` when there is none).
fn cut<'a>(text: &'a str, stops: &[u8]) -> &'a str {
    let (mut depth, mut code) = (0i32, false);
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'`' => code = !code,
            b'(' if !code => depth += 1,
            b')' if !code => depth -= 1,
            _ if !code && depth == 0 && stops.contains(&c) && b.get(i + 1) == Some(&b' ') => {
                return &text[..i];
            }
            _ => {}
        }
    }
    text
}

include!(concat!(env!("OUT_DIR"), "/settings_fields.rs"));

/// The fields of the settings struct named `name` (`PgsSettings`, `ExecSettings`), or `None`
/// for a name the build script did not find.
pub fn field_docs(name: &str) -> Option<&'static [FieldDoc]> {
    SETTINGS_FIELDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
}

/// The JSON values an enum-typed field of `S` (a struct whose missing fields take defaults)
/// accepts (`["trace", "max_eigen", "safeguarded"]`), read from serde's error on a value no
/// variant has, without the old names kept as aliases (a value counts when it is written back
/// as itself); empty for a field that is not an enum.
pub fn enum_values<S: DeserializeOwned + Serialize>(field: &str) -> Vec<String> {
    let with = |v: &str| {
        let mut obj = serde_json::Map::new();
        obj.insert(field.to_string(), serde_json::Value::from(v));
        serde_json::from_value::<S>(serde_json::Value::Object(obj))
    };
    let Err(e) = with("\u{1}") else {
        return Vec::new();
    };
    let msg = e.to_string();
    let Some((_, expected)) = msg.split_once("unknown variant") else {
        return Vec::new();
    };
    let Some((_, list)) = expected.split_once("expected") else {
        return Vec::new();
    };
    list.split('`')
        .skip(1)
        .step_by(2)
        .filter(|v| {
            with(v)
                .ok()
                .and_then(|s| serde_json::to_value(s).ok())
                .is_some_and(|j| j.get(field) == Some(&serde_json::Value::from(*v)))
        })
        .map(str::to_string)
        .collect()
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
