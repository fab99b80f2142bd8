//! Named solver variants: a registry solver plus settings under a name of its own, usable
//! wherever a solver name is (`cpbench run --solvers`, suites, baselines).
//!
//! A `--solvers` token is one of
//!
//! - a registry name (`pgs`, `mprgp:permon1`, `desaxce-apgd`): the solver with its defaults
//!   (and the `--settings` map's entry for it, if any), labelled by that name;
//! - `base@key=value[@key=value...]` (`pgs@omega=0.8`, `spgqp@gll_memory=5@gll_sufficient_decrease=1e-4`):
//!   `base` (a registry name or a variant of the variants file) with those settings on top,
//!   labelled by the token itself. A value is read as JSON (`0.8`, `5`, `true`, `null`) and
//!   otherwise kept as a string (`variant=wright`);
//! - a sweep `base@key=a:b:h` (`pgs@omega=0.6:1.4:0.2`): one variant per value
//!   `a, a + h, ..., b` (`b` included when it is on the grid up to a relative 1e-9; integer
//!   values when `a`, `b` and `h` are all integers), labelled `pgs@omega=0.6`, `pgs@omega=0.8`,
//!   ...; several sweeps in one token give their Cartesian product;
//! - the name of a variant of a variants file: `{"pgs-slow": {"solver": "pgs", "omega": 0.8}}`
//!   (the object holds `solver`, the registry name or another variant of the file, and the
//!   settings on top of it).
//!
//! Settings are layered: the solver's defaults, then the `--settings` map's entry for the
//! registry name, then the variants file's settings, then the token's `@key=value` pairs. Every
//! variant is built once here, so a bad name, field or value is an error naming the token
//! before anything runs. Labels must be unique within a run.

use crate::error::{HarnessError, Result};
use crate::run::SolverSpec;
use cpbench_solvers::registry;
use serde_json::{Map, Value};

/// The largest number of values one sweep may expand to.
pub const MAX_SWEEP: usize = 1000;

/// The largest number of variants one `--solvers` list may expand to (the product of a
/// token's sweeps included).
pub const MAX_VARIANTS: usize = 10_000;

/// Named variants in file order (`{"name": {"solver": base, setting: value, ...}, ...}`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantsFile {
    /// `(name, solver, settings)` in the order of the file.
    pub variants: Vec<(String, String, Map<String, Value>)>,
}

impl VariantsFile {
    /// Parse the JSON value of a variants file (`source` names it in errors: a path or
    /// "inline JSON"). Errors: not an object, an entry that is not an object or lacks a string
    /// `solver`, a name holding `@`, `,` or blanks, a name that is a registry solver's name.
    /// Order is kept as written only when `text` is given (the raw JSON); otherwise it is the
    /// map's (alphabetical) order.
    pub fn parse(text: &str, source: &str) -> Result<Self> {
        let err = |m: String| HarnessError::Invalid(format!("variants {source}: {m}"));
        // a key given twice anywhere (a variant, a setting of one) is an error
        crate::json::parse_strict(text).map_err(|e| err(e.to_string()))?;
        let ordered: OrderedMap =
            serde_json::from_str(text).map_err(|e| err(format!("{e} (expected a JSON object)")))?;
        if ordered.0.is_empty() {
            return Err(err(
                "no variants: the object is empty (expected {\"name\": {\"solver\": ..., setting: value}})"
                    .into(),
            ));
        }
        let mut variants = Vec::new();
        for (name, v) in ordered.0 {
            if name.is_empty() || name.contains(['@', ',']) || name.contains(char::is_whitespace) {
                return Err(err(format!(
                    "'{name}': a variant name must be non-empty without '@', ',' or blanks"
                )));
            }
            if registry::entry(&name).is_some() || name.starts_with(registry::DESAXCE_PREFIX) {
                return Err(err(format!(
                    "'{name}' is a solver's registry name: give the variant a name of its own"
                )));
            }
            let Value::Object(mut obj) = v else {
                return Err(err(format!(
                    "'{name}': expected an object {{\"solver\": NAME, setting: value, ...}}"
                )));
            };
            let solver = match obj.remove("solver") {
                Some(Value::String(s)) => s,
                _ => {
                    return Err(err(format!(
                        "'{name}': missing \"solver\" (a registry name, see `cpbench solvers`)"
                    )))
                }
            };
            if variants.iter().any(|(n, _, _)| n == &name) {
                return Err(err(format!("'{name}' is defined twice")));
            }
            variants.push((name, solver, obj));
        }
        Ok(Self { variants })
    }

    fn get(&self, name: &str) -> Option<&(String, String, Map<String, Value>)> {
        self.variants.iter().find(|(n, _, _)| n == name)
    }

    /// The variants' names, in file order.
    pub fn names(&self) -> Vec<String> {
        self.variants.iter().map(|(n, _, _)| n.clone()).collect()
    }
}

/// A JSON object read with its keys in file order.
struct OrderedMap(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for OrderedMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OrderedMap;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object of named variants")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<OrderedMap, A::Error> {
                let mut v: Vec<(String, Value)> = Vec::new();
                while let Some(kv) = a.next_entry::<String, Value>()? {
                    if v.iter().any(|(k, _)| *k == kv.0) {
                        return Err(serde::de::Error::custom(format!(
                            "the variant '{}' is defined twice",
                            kv.0
                        )));
                    }
                    v.push(kv);
                }
                Ok(OrderedMap(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// Expand `--solvers` tokens into solver variants (see the module docs). `settings` is the
/// `--settings` map (registry name -> settings object), `file` the variants file. Errors name
/// the token: an unknown solver or variant, a malformed `@key=value` or sweep, a setting the
/// solver rejects (unknown field, wrong type, out of range), two variants with one label.
pub fn expand(
    tokens: &[String],
    settings: Option<&Map<String, Value>>,
    file: Option<&VariantsFile>,
) -> Result<Vec<SolverSpec>> {
    let mut out: Vec<SolverSpec> = Vec::new();
    // labels seen so far: a linear check however many variants a sweep makes
    let mut labels: std::collections::HashSet<String> = std::collections::HashSet::new();
    for token in tokens {
        let token = token.trim();
        let err = |m: String| HarnessError::Invalid(format!("--solvers '{token}': {m}"));
        let mut parts = token.split('@');
        let base = parts.next().unwrap_or("").trim();
        if base.is_empty() {
            return Err(err("expected a solver or variant name before '@'".into()));
        }
        // resolve the base: a variants-file entry (possibly built on another) or the registry
        let (registry_name, mut layered) = resolve(base, file, 0).map_err(err)?;
        if let Some(Value::Object(m)) = settings.and_then(|s| s.get(&registry_name)) {
            let mut under = m.clone();
            under.extend(layered);
            layered = under;
        }
        // the token's pairs, each a list of values (one, or a sweep's)
        let mut pairs: Vec<(String, Vec<(String, Value)>)> = Vec::new();
        for p in parts {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| err(format!("'@{p}': expected '@setting=value'")))?;
            let (k, v) = (k.trim(), v.trim());
            if k.is_empty() || v.is_empty() {
                return Err(err(format!("'@{p}': expected '@setting=value'")));
            }
            if pairs.iter().any(|(q, _)| q == k) {
                return Err(err(format!(
                    "the setting '{k}' is given twice (one '@{k}=...' per token)"
                )));
            }
            pairs.push((
                k.to_string(),
                values(v).map_err(|m| err(format!("{k}={v}: {m}")))?,
            ));
        }
        // the product of the sweeps is capped like one sweep, before anything is built
        let product = pairs
            .iter()
            .try_fold(1usize, |acc, (_, v)| acc.checked_mul(v.len()));
        match product {
            Some(n) if n + out.len() <= MAX_VARIANTS => {}
            n => {
                let sizes: Vec<String> = pairs
                    .iter()
                    .filter(|(_, v)| v.len() > 1)
                    .map(|(k, v)| format!("{k}: {}", v.len()))
                    .collect();
                return Err(err(format!(
                    "the sweeps give {} variants ({}), {} with the tokens before it: at most \
                     {MAX_VARIANTS} per run",
                    n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
                    sizes.join(" x "),
                    n.map_or_else(|| "more".to_string(), |n| (n + out.len()).to_string()),
                )));
            }
        }
        // Cartesian product of the pairs' values, first pair slowest
        let mut combos: Vec<Vec<usize>> = vec![vec![]];
        for (_, vals) in &pairs {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    (0..vals.len()).map(move |i| {
                        let mut c = c.clone();
                        c.push(i);
                        c
                    })
                })
                .collect();
        }
        let sweep = pairs.iter().any(|(_, v)| v.len() > 1);
        for combo in combos {
            let mut s = layered.clone();
            let mut label = base.to_string();
            for ((k, vals), &i) in pairs.iter().zip(&combo) {
                let (text, value) = &vals[i];
                s.insert(k.clone(), value.clone());
                label.push_str(&format!("@{k}={text}"));
            }
            let label = if sweep || pairs.is_empty() {
                label
            } else {
                // as written, blanks dropped
                token.chars().filter(|c| !c.is_whitespace()).collect()
            };
            let settings = (!s.is_empty()).then_some(Value::Object(s));
            registry::build(&registry_name, settings.as_ref())
                .map_err(|e| HarnessError::Invalid(format!("--solvers '{label}': {e}")))?;
            if !labels.insert(label.clone()) {
                return Err(err(format!("the variant '{label}' is named twice")));
            }
            out.push(SolverSpec {
                driven: None,
                label,
                name: registry_name.clone(),
                settings,
            });
        }
    }
    Ok(out)
}

/// The registry name and settings of `name`: a variants-file entry (settings of the chain of
/// entries it builds on, outermost last) or a registry solver with no settings.
fn resolve(
    name: &str,
    file: Option<&VariantsFile>,
    depth: usize,
) -> std::result::Result<(String, Map<String, Value>), String> {
    if let Some((_, solver, s)) = file.and_then(|f| f.get(name)) {
        if depth > 16 {
            return Err(format!("variant '{name}' builds on itself"));
        }
        let (base, mut under) = resolve(solver, file, depth + 1)?;
        under.extend(s.clone());
        return Ok((base, under));
    }
    let known = registry::build(name, None).is_ok();
    if !known {
        let variants = file.map(|f| f.names().join(", ")).unwrap_or_default();
        return Err(format!(
            "unknown solver or variant '{name}' (solvers: `cpbench solvers`{})",
            if variants.is_empty() {
                String::new()
            } else {
                format!("; variants of the file: {variants}")
            }
        ));
    }
    Ok((name.to_string(), Map::new()))
}

/// The values of one `@key=value`: a sweep `a:b:h` or a single value, each with its label text.
fn values(v: &str) -> std::result::Result<Vec<(String, Value)>, String> {
    let fields: Vec<&str> = v.split(':').collect();
    if fields.len() != 3 {
        let value = serde_json::from_str::<Value>(v).unwrap_or_else(|_| Value::String(v.into()));
        return Ok(vec![(v.to_string(), value)]);
    }
    let num = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("sweep 'start:stop:step' needs numbers, got '{s}'"))
    };
    let (a, b, h) = (num(fields[0])?, num(fields[1])?, num(fields[2])?);
    if h <= 0.0 || b < a {
        return Err(format!(
            "sweep {a}:{b}:{h} needs start <= stop and a positive step"
        ));
    }
    // counted in floating point first: a tiny step must not overflow the count
    let steps = ((b - a) / h * (1.0 + 1e-9) + 1e-9).floor();
    if steps.is_nan() || steps >= MAX_SWEEP as f64 {
        return Err(format!(
            "sweep {a}:{b}:{h} gives {} values (at most {MAX_SWEEP})",
            if steps.is_finite() && steps < 1e15 {
                format!("{}", steps as u64 + 1)
            } else {
                format!("{:.3e}", steps + 1.0)
            }
        ));
    }
    let count = steps as usize + 1;
    if count < 2 {
        return Err(format!(
            "sweep {a}:{b}:{h} gives one value: write the value itself, or a stop at least one \
             step above the start"
        ));
    }
    let integer = fields.iter().all(|s| s.trim().parse::<i64>().is_ok());
    Ok((0..count)
        .map(|k| {
            let x = a + k as f64 * h;
            if integer {
                let i = x.round() as i64;
                (i.to_string(), Value::from(i))
            } else {
                // 12 significant digits: 0.6 + 0.2 prints 0.8, not 0.8000000000000002
                let r: f64 = format!("{x:.11e}").parse().unwrap_or(x);
                (format!("{r}"), Value::from(r))
            }
        })
        .collect())
}
