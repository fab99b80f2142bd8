//! The definition file of external solvers (`cpbench run --external FILE`, docs/external.md):
//! a JSON object `{"solvers": {"NAME": {...}}}`, each solver with its `command` (an argv list
//! with placeholders), the instance `format` written for it, the `output` format of its
//! answer, and optional `classes`, `time_limit`, `description` and `env`.
//!
//! Parsing is by hand over [`serde_json::Value`] so that every error names the file, the solver
//! and the field: `defs.json: solver 'x': field 'format': expected one of npz, bundle, fclib,
//! mtx`.

use cpbench_problems::ProblemClass;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

impl From<DefsError> for crate::status::SolverError {
    /// The boundary conversion: the definition error's message
    /// ([`crate::status::SolverError::ExternalDefs`]).
    fn from(e: DefsError) -> Self {
        crate::status::SolverError::ExternalDefs(e.to_string())
    }
}

/// Errors of reading a definition file ([`ExternalDefs::load`], [`ExternalDefs::parse`]).
#[derive(Debug, thiserror::Error)]
pub enum DefsError {
    /// The file could not be read.
    #[error("external solver definitions {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid JSON.
    #[error("{}: not valid JSON: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// serde_json's message (line and column).
        message: String,
    },
    /// A field is missing, of the wrong type or out of range.
    #[error("{}: {}field '{field}': {message}", path.display(), solver.as_ref().map(|s| format!("solver '{s}': ")).unwrap_or_default())]
    Field {
        /// The file.
        path: PathBuf,
        /// The solver whose definition is wrong (`None`: the top level).
        solver: Option<String>,
        /// The field (`solvers`, `command`, `format`, ...).
        field: String,
        /// What was expected.
        message: String,
    },
    /// An `ext:` solver was asked for without a definition file.
    #[error("solver '{name}': ext: solvers are defined in a JSON file given with --external FILE (docs/external.md)")]
    NoFile {
        /// The name asked for (`ext:NAME`).
        name: String,
    },
}

/// The instance file written for an external program (`format` of a definition).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InstanceFormat {
    /// cpbench's `.npz` (SciPy's CSC layout for `N`, plus `r` and the `instance` header;
    /// docs/formats.md section 6): `{instance}` is the `.npz` file.
    Npz,
    /// A bundle folder (`N.mtx`, `r.mtx`, `instance.json`): `{instance}` is the folder.
    Bundle,
    /// An fclib local problem (`.hdf5`; Coulomb-cone classes only): `{instance}` is the file.
    Fclib,
    /// The bundle's MatrixMarket files with `mu.mtx` (cones, friction boxes) or `lo.mtx` and
    /// `hi.mtx` (boxes; `inf`/`-inf` for infinite bounds) beside them: `{instance}` is `N.mtx`.
    Mtx,
}

impl InstanceFormat {
    /// Every format, in the order of the documentation.
    pub const ALL: [InstanceFormat; 4] = [Self::Npz, Self::Bundle, Self::Fclib, Self::Mtx];

    /// The name in definition files (`npz`, `bundle`, `fclib`, `mtx`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Npz => "npz",
            Self::Bundle => "bundle",
            Self::Fclib => "fclib",
            Self::Mtx => "mtx",
        }
    }
}

/// The format of the answer `gamma` an external program writes (`output` of a definition).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// A 1-D float64 NumPy `.npy` array of length `n` (`{gamma}` ends in `.npy`).
    Npy,
    /// A MatrixMarket `array real general` vector, `n x 1` (`{gamma}` ends in `.mtx`).
    Mtx,
}

impl OutputFormat {
    /// Every format.
    pub const ALL: [OutputFormat; 2] = [Self::Npy, Self::Mtx];

    /// The name in definition files (`npy`, `mtx`), also the extension of `{gamma}`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Npy => "npy",
            Self::Mtx => "mtx",
        }
    }
}

/// One external solver of a definition file.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalDef {
    /// The program and its arguments (no shell), with placeholders such as `{instance}`,
    /// `{gamma}`, `{tol}` (docs/external.md); at least one element.
    pub command: Vec<String>,
    /// The instance file written for the program.
    pub format: InstanceFormat,
    /// The format of the answer it writes to `{gamma}`.
    pub output: OutputFormat,
    /// The classes it takes (`None`: all); other instances end as `unsupported`.
    pub classes: Option<Vec<ProblemClass>>,
    /// Its own time limit in seconds (the run's `--time-limit` wins when smaller).
    pub time_limit: Option<f64>,
    /// A line for `cpbench solvers`.
    pub description: Option<String>,
    /// Extra environment variables of the program.
    pub env: BTreeMap<String, String>,
}

/// A parsed definition file: the solvers by name (without the `ext:` prefix), and the folder
/// the file lies in (against which `command[0]` and relative paths are resolved).
#[derive(Clone, Debug)]
pub struct ExternalDefs {
    /// The file, as given (for messages).
    pub path: PathBuf,
    /// Its folder, absolute when it could be made so.
    pub dir: PathBuf,
    /// The solvers, by name, sorted.
    pub solvers: BTreeMap<String, ExternalDef>,
}

/// Fields of a solver definition.
const FIELDS: [&str; 7] = [
    "command",
    "format",
    "output",
    "classes",
    "time_limit",
    "description",
    "env",
];

impl ExternalDefs {
    /// Read and check the definition file `path`. Errors: [`DefsError`] naming the file, and
    /// the solver and field for a bad definition.
    pub fn load(path: &Path) -> Result<Self, DefsError> {
        let text = std::fs::read_to_string(path).map_err(|source| DefsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Check the JSON `text` of a definition file that lies at `path` (used for messages and
    /// as the base folder of relative paths). Errors as [`ExternalDefs::load`].
    pub fn parse(text: &str, path: &Path) -> Result<Self, DefsError> {
        let value: serde_json::Value =
            cpbench_problems::json::parse_strict(text).map_err(|e| DefsError::Syntax {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        let top_err = |field: &str, message: String| DefsError::Field {
            path: path.to_path_buf(),
            solver: None,
            field: field.to_string(),
            message,
        };
        let top = value.as_object().ok_or_else(|| {
            top_err(
                "solvers",
                format!(
                    "expected an object {{\"solvers\": {{...}}}}, found {}",
                    kind(&value)
                ),
            )
        })?;
        if let Some(k) = top.keys().find(|k| *k != "solvers") {
            return Err(top_err(
                k,
                "unknown field (the file holds only \"solvers\")".into(),
            ));
        }
        let solvers = top
            .get("solvers")
            .ok_or_else(|| top_err("solvers", "missing".into()))?;
        let solvers = solvers.as_object().ok_or_else(|| {
            top_err(
                "solvers",
                format!(
                    "expected an object mapping names to definitions, found {}",
                    kind(solvers)
                ),
            )
        })?;
        let mut out = BTreeMap::new();
        for (name, def) in solvers {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                return Err(top_err(
                    "solvers",
                    format!(
                        "solver name '{name}': expected letters, digits, '-', '_' or '.' \
                         (it is used as ext:{name} in --solvers)"
                    ),
                ));
            }
            out.insert(name.clone(), parse_def(path, name, def)?);
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        Ok(Self {
            path: path.to_path_buf(),
            dir,
            solvers: out,
        })
    }

    /// The names of the solvers as `--solvers` takes them (`ext:NAME`), comma-separated.
    pub fn known_names(&self) -> String {
        if self.solvers.is_empty() {
            return format!("none: {} defines no solver", self.path.display());
        }
        let names: Vec<String> = self.solvers.keys().map(|n| format!("ext:{n}")).collect();
        format!("{}, from {}", names.join(", "), self.path.display())
    }
}

/// The JSON type of `v`, for messages.
fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn parse_def(path: &Path, name: &str, def: &serde_json::Value) -> Result<ExternalDef, DefsError> {
    let err = |field: &str, message: String| DefsError::Field {
        path: path.to_path_buf(),
        solver: Some(name.to_string()),
        field: field.to_string(),
        message,
    };
    let obj = def.as_object().ok_or_else(|| {
        err(
            "command",
            format!(
                "the definition must be an object with command, format, output, found {}",
                kind(def)
            ),
        )
    })?;
    if let Some(k) = obj.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(err(
            k,
            format!("unknown field (known: {})", FIELDS.join(", ")),
        ));
    }
    let command = match obj.get("command") {
        None => return Err(err("command", "missing (an argv list of strings)".into())),
        Some(serde_json::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    err(
                        "command",
                        format!("element {i}: expected a string, found {}", kind(v)),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(v) => {
            return Err(err(
                "command",
                format!(
                    "expected a non-empty array of strings (argv, no shell), found {}",
                    if v.as_array().is_some() {
                        "an empty array"
                    } else {
                        kind(v)
                    }
                ),
            ))
        }
    };
    if let Some(i) = command.iter().position(|a| a.contains('\0')) {
        return Err(err(
            "command",
            format!("element {i} holds a NUL byte (\\u0000), which no argument can carry"),
        ));
    }
    if command[0].is_empty() {
        return Err(err("command", "element 0 (the program) is empty".into()));
    }
    let choice = |field: &str, names: &[&str]| -> Result<usize, DefsError> {
        let expected = format!("expected one of {}", names.join(", "));
        match obj.get(field) {
            None => Err(err(field, format!("missing ({expected})"))),
            Some(serde_json::Value::String(s)) => names
                .iter()
                .position(|n| n == s)
                .ok_or_else(|| err(field, format!("{expected}, found \"{s}\""))),
            Some(v) => Err(err(field, format!("{expected}, found {}", kind(v)))),
        }
    };
    let format =
        InstanceFormat::ALL[choice("format", &InstanceFormat::ALL.map(InstanceFormat::as_str))?];
    let output = OutputFormat::ALL[choice("output", &OutputFormat::ALL.map(OutputFormat::as_str))?];
    let class_names: Vec<&str> = ProblemClass::ALL.iter().map(|c| c.as_str()).collect();
    let classes = match obj.get("classes") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Array(a)) if !a.is_empty() => Some(
            a.iter()
                .map(|v| {
                    v.as_str().and_then(ProblemClass::from_name).ok_or_else(|| {
                        err(
                            "classes",
                            format!(
                                "expected class names ({}), found {v}",
                                class_names.join(", ")
                            ),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(v) => {
            return Err(err(
                "classes",
                format!(
                    "expected a non-empty array of class names ({}), found {}",
                    class_names.join(", "),
                    kind(v)
                ),
            ))
        }
    };
    let time_limit = match obj.get("time_limit") {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(t) if t > 0.0 && t.is_finite() => Some(t),
            _ => {
                return Err(err(
                    "time_limit",
                    format!("expected a positive number of seconds, found {v}"),
                ))
            }
        },
    };
    let description = match obj.get("description") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(v) => {
            return Err(err(
                "description",
                format!("expected a string, found {}", kind(v)),
            ))
        }
    };
    let env = match obj.get("env") {
        None | Some(serde_json::Value::Null) => BTreeMap::new(),
        Some(serde_json::Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) if k.contains('\0') || s.contains('\0') => Err(err(
                    "env",
                    format!(
                        "variable '{}' holds a NUL byte (\\u0000) in its {}, which no \
                         environment can carry",
                        k.escape_default(),
                        if k.contains('\0') { "name" } else { "value" }
                    ),
                )),
                serde_json::Value::String(s) if !k.is_empty() && !k.contains('=') => {
                    Ok((k.clone(), s.clone()))
                }
                serde_json::Value::String(_) => Err(err(
                    "env",
                    format!("variable name '{k}' is empty or holds '='"),
                )),
                _ => Err(err(
                    "env",
                    format!("variable '{k}': expected a string value, found {}", kind(v)),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(v) => {
            return Err(err(
                "env",
                format!("expected an object of strings, found {}", kind(v)),
            ))
        }
    };
    Ok(ExternalDef {
        command,
        format,
        output,
        classes,
        time_limit,
        description,
        env,
    })
}
