//! Siconos' solvers (Acary & Brogliato 2008; <https://nonsmooth.gricad-pages.univ-grenoble-alpes.fr/siconos/>)
//! as built-in external solvers, `siconos:NAME`, run through the external-solver protocol by
//! one Python script ([`SCRIPT`], `siconos_solver.py`) with the system interpreter
//! (`/usr/bin/python3`, where Debian's `python3-siconos` installs; the environment variable
//! [`PYTHON_ENV`] overrides it).
//!
//! The script reads the `.npz` instance as `scripts/peer_siconos.py` reads the same problems
//! (same storage of `W`), so a `siconos:nsgs` row has the iterations and error of that script.
//!
//! Settings (`--settings '{"siconos:nsgs": {"iparam": {...}, "dparam": {...}}}'`,
//! [`SiconosOptions`]): entries of Siconos' `SolverOptions.iparam` and `dparam` by the names of
//! `siconos.numerics`' constants, set by the script after the tolerance, the iteration cap and
//! the entry's own options; they are part of the row's settings (and its settings hash).

use super::defs::{ExternalDef, InstanceFormat, OutputFormat};
use crate::status::SolverError;
use cpbench_problems::ProblemClass;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The driver script, written into each solve's scratch folder.
pub const SCRIPT: &str = include_str!("siconos_solver.py");

/// The script's file name in the scratch folder.
pub const SCRIPT_NAME: &str = "siconos_solver.py";

/// Environment variable naming the Python interpreter that has Siconos (default
/// `/usr/bin/python3`).
pub const PYTHON_ENV: &str = "CPBENCH_SICONOS_PYTHON";

/// One built-in Siconos solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiconosEntry {
    /// The name after `siconos:` (`nsgs`).
    pub name: &'static str,
    /// Siconos' solver id (`SICONOS_FRICTION_3D_NSGS`).
    pub solver_id: &'static str,
    /// The Siconos driver called (`fc3d_driver`).
    pub driver: &'static str,
    /// The class it solves.
    pub class: ProblemClass,
    /// The cone dimension it needs (3 or 2) for Coulomb problems; `None` for LCPs.
    pub cone_dim: Option<usize>,
    /// A line for `cpbench solvers`.
    pub description: &'static str,
}

impl SiconosEntry {
    /// A 3-D Coulomb solver called through `fc3d_driver`.
    const fn fc3d(name: &'static str, solver_id: &'static str, description: &'static str) -> Self {
        Self {
            name,
            solver_id,
            driver: "fc3d_driver",
            class: ProblemClass::Coulomb,
            cone_dim: Some(3),
            description,
        }
    }

    /// An LCP solver called through `linearComplementarity_driver`.
    const fn lcp(name: &'static str, solver_id: &'static str, description: &'static str) -> Self {
        Self {
            name,
            solver_id,
            driver: "linearComplementarity_driver",
            class: ProblemClass::Lcp,
            cone_dim: None,
            description,
        }
    }
}

/// The built-in Siconos solvers (Debian's Siconos 4.4 defaults for every option but the
/// tolerance and the iteration cap, except where the description says otherwise; the script
/// sets them, [`SCRIPT`]).
pub const SICONOS_SOLVERS: &[SiconosEntry] = &[
    SiconosEntry::fc3d(
        "nsgs",
        "SICONOS_FRICTION_3D_NSGS",
        "Siconos' nonsmooth Gauss-Seidel for the 3-D Coulomb problem",
    ),
    SiconosEntry::fc3d(
        "nsn-ac",
        "SICONOS_FRICTION_3D_NSN_AC",
        "Siconos' semismooth Newton on the Alart-Curnier function (3-D Coulomb)",
    ),
    SiconosEntry::fc3d(
        "nsn-jm",
        "SICONOS_FRICTION_3D_NSN_AC",
        "Siconos' semismooth Newton on the Jean-Moreau function (NSN_AC with the formulation \
         JEANMOREAU_STD)",
    ),
    SiconosEntry::fc3d(
        "nsn-nm",
        "SICONOS_FRICTION_3D_NSN_NM",
        "Siconos' semismooth Newton on the natural map (3-D Coulomb)",
    ),
    SiconosEntry::fc3d(
        "nsn-fb",
        "SICONOS_FRICTION_3D_NSN_FB",
        "Siconos' semismooth Newton on the Fischer-Burmeister function for SOCs (3-D Coulomb)",
    ),
    SiconosEntry::fc3d(
        "ppa",
        "SICONOS_FRICTION_3D_PROX",
        "Siconos' proximal point algorithm around NSN_AC (3-D Coulomb)",
    ),
    SiconosEntry::fc3d(
        "tfp",
        "SICONOS_FRICTION_3D_TFP",
        "Siconos' Tresca fixed point (3-D Coulomb)",
    ),
    SiconosEntry::fc3d(
        "pfp",
        "SICONOS_FRICTION_3D_PFP",
        "Siconos' Panagiotopoulos fixed point (3-D Coulomb)",
    ),
    SiconosEntry::fc3d(
        "dsfp",
        "SICONOS_FRICTION_3D_DSFP",
        "Siconos' De Saxce fixed point, a projection with a fixed step (3-D Coulomb)",
    ),
    SiconosEntry::fc3d(
        "admm",
        "SICONOS_FRICTION_3D_ADMM",
        "Siconos' ADMM for the 3-D Coulomb problem",
    ),
    SiconosEntry::fc3d(
        "vi-fpp",
        "SICONOS_FRICTION_3D_VI_FPP",
        "Siconos' fixed-point projection on the 3-D Coulomb VI, self-adaptive step",
    ),
    SiconosEntry::fc3d(
        "vi-eg",
        "SICONOS_FRICTION_3D_VI_EG",
        "Siconos' extragradient on the 3-D Coulomb VI, self-adaptive step",
    ),
    SiconosEntry::lcp(
        "lemke",
        "SICONOS_LCP_LEMKE",
        "Siconos' Lemke (lexicographic) for the general LCP, dense",
    ),
    SiconosEntry::lcp(
        "newton-fb",
        "SICONOS_LCP_NEWTON_FB_FBLSA",
        "Siconos' semismooth Newton on Fischer-Burmeister with line search (LCP), dense",
    ),
    SiconosEntry {
        name: "fc2d-nsgs",
        solver_id: "SICONOS_FRICTION_2D_NSGS",
        driver: "fc2d_driver",
        class: ProblemClass::Coulomb,
        cone_dim: Some(2),
        description: "Siconos' nonsmooth Gauss-Seidel for the 2-D Coulomb problem, dense W",
    },
];

/// The entry of `name` (after `siconos:`).
pub fn entry(name: &str) -> Option<&'static SiconosEntry> {
    SICONOS_SOLVERS.iter().find(|e| e.name == name)
}

/// The known names, `siconos:nsgs, siconos:nsn-ac, ...`.
pub fn known_names() -> String {
    let v: Vec<String> = SICONOS_SOLVERS
        .iter()
        .map(|e| format!("siconos:{}", e.name))
        .collect();
    v.join(", ")
}

/// The interpreter: `$CPBENCH_SICONOS_PYTHON`, else `/usr/bin/python3`.
pub fn python() -> PathBuf {
    std::env::var_os(PYTHON_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/python3"))
}

/// Whether Siconos can be used: `python -c "import siconos.numerics, numpy, scipy.sparse"`
/// succeeds. Probed once per process. Errors: why not, with the install hint.
pub fn availability() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let py = python();
            let out = std::process::Command::new(&py)
                .args(["-c", "import siconos.numerics, numpy, scipy.sparse"])
                .stdin(std::process::Stdio::null())
                .output();
            let why = match out {
                Ok(o) if o.status.success() => return Ok(()),
                Ok(o) => String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
                    .trim()
                    .to_string(),
                Err(e) => e.to_string(),
            };
            Err(format!(
                "Siconos is not installed (apt-get install python3-siconos python3-scipy; \
                 {} -c 'import siconos.numerics' failed: {why}; {PYTHON_ENV} names another \
                 interpreter)",
                py.display()
            ))
        })
        .clone()
}

/// The protocol definition of `e`: `python siconos_solver.py NAME {instance} {gamma} {info}
/// {tol} {max_iter}` on the `.npz` instance, answer `.npy`.
pub fn definition(e: &SiconosEntry) -> ExternalDef {
    ExternalDef {
        command: vec![
            python().display().to_string(),
            format!("{{work}}/{SCRIPT_NAME}"),
            e.name.to_string(),
            "{instance}".into(),
            "{gamma}".into(),
            "{info}".into(),
            "{tol}".into(),
            "{max_iter}".into(),
        ],
        format: InstanceFormat::Npz,
        output: OutputFormat::Npy,
        classes: Some(vec![e.class]),
        time_limit: None,
        description: Some(format!(
            "{} ({} via {})",
            e.description, e.solver_id, e.driver
        )),
        env: BTreeMap::new(),
    }
}

/// Options of a `siconos:*` solver, its settings: entries of Siconos' `SolverOptions.iparam`
/// and `dparam` named by `siconos.numerics`' constants (`{"iparam":
/// {"SICONOS_FRICTION_3D_NSGS_RELAXATION": "SICONOS_FRICTION_3D_NSGS_RELAXATION_TRUE"},
/// "dparam": {"SICONOS_FRICTION_3D_NSGS_RELAXATION_VALUE": 0.5}}`). The script sets them after
/// the tolerance, the iteration cap and the entry's own options, so they override all three;
/// a name `siconos.numerics` does not have ends the solve `crashed` ("siconos.numerics has no
/// constant NAME"). Only the form is checked here, before anything runs ([`Self::parse`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SiconosOptions {
    /// `iparam[index] = value`: the index's constant name and the value, an integer or a
    /// constant's name.
    pub iparam: BTreeMap<String, IparamValue>,
    /// `dparam[index] = value`: the index's constant name and a finite number.
    pub dparam: BTreeMap<String, f64>,
}

/// The value of one `iparam` entry of [`SiconosOptions`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IparamValue {
    /// An integer (a C `int`).
    Int(i32),
    /// The name of a `siconos.numerics` constant, looked up by the script.
    Name(String),
}

/// Whether `s` can name a Python constant: ASCII letters, digits and `_`, not starting with a
/// digit.
fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

impl SiconosOptions {
    /// The options of `solver` (its full name, `siconos:nsgs`, for messages) from its
    /// settings: a JSON object with at most the keys `iparam` (an object of constant name to
    /// an integer or a constant's name) and `dparam` (an object of constant name to a finite
    /// number). Errors: [`SolverError::BadSettings`] naming the solver, the key and what was
    /// expected (not an object, an unknown key such as `iparams`, even with an empty object,
    /// a name that is no identifier, a value of another type, an integer outside a C `int`).
    pub fn parse(solver: &str, v: &serde_json::Value) -> Result<Self, SolverError> {
        let bad = |message: String| SolverError::BadSettings {
            solver: solver.to_string(),
            message,
        };
        let obj = v.as_object().ok_or_else(|| {
            bad(format!(
                "expected an object with the keys iparam and dparam (Siconos' SolverOptions),                  found {v}"
            ))
        })?;
        let mut out = Self::default();
        for (key, value) in obj {
            let map = value
                .as_object()
                .filter(|_| key == "iparam" || key == "dparam");
            let Some(map) = map else {
                return Err(bad(if key == "iparam" || key == "dparam" {
                    format!(
                        "'{key}': expected an object of siconos.numerics constant names to                          values, found {value}"
                    )
                } else {
                    format!(
                        "unknown key '{key}' (expected iparam and dparam: entries of Siconos'                          SolverOptions.iparam and .dparam by constant name)"
                    )
                }));
            };
            for (name, x) in map {
                if !is_identifier(name) {
                    return Err(bad(format!(
                        "{key} '{name}': expected the name of a siconos.numerics constant                          (letters, digits, _)"
                    )));
                }
                if key == "iparam" {
                    let val = match x {
                        serde_json::Value::Number(n) => n
                            .as_i64()
                            .and_then(|i| i32::try_from(i).ok())
                            .map(IparamValue::Int),
                        serde_json::Value::String(c) if is_identifier(c) => {
                            Some(IparamValue::Name(c.clone()))
                        }
                        _ => None,
                    };
                    let val = val.ok_or_else(|| {
                        bad(format!(
                            "iparam '{name}': expected an integer (a C int) or the name of a                              siconos.numerics constant, found {x}"
                        ))
                    })?;
                    out.iparam.insert(name.clone(), val);
                } else {
                    let val = x.as_f64().filter(|d| d.is_finite()).ok_or_else(|| {
                        bad(format!(
                            "dparam '{name}': expected a finite number, found {x}"
                        ))
                    })?;
                    out.dparam.insert(name.clone(), val);
                }
            }
        }
        Ok(out)
    }

    /// Whether no option is set.
    pub fn is_empty(&self) -> bool {
        self.iparam.is_empty() && self.dparam.is_empty()
    }

    /// As JSON, the form [`Self::parse`] reads and the script receives: `{"iparam": {...},
    /// "dparam": {...}}` (a key only when it has entries).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::Map::new();
        if !self.iparam.is_empty() {
            let m: serde_json::Map<String, serde_json::Value> = self
                .iparam
                .iter()
                .map(|(k, x)| {
                    let x = match x {
                        IparamValue::Int(i) => serde_json::Value::from(*i),
                        IparamValue::Name(c) => serde_json::Value::from(c.clone()),
                    };
                    (k.clone(), x)
                })
                .collect();
            v.insert("iparam".into(), m.into());
        }
        if !self.dparam.is_empty() {
            let m: serde_json::Map<String, serde_json::Value> = self
                .dparam
                .iter()
                .map(|(k, x)| (k.clone(), serde_json::Value::from(*x)))
                .collect();
            v.insert("dparam".into(), m.into());
        }
        v.into()
    }
}

/// The options file's name in the scratch folder, given to the script as its last argument
/// when options are set.
pub const OPTIONS_NAME: &str = "siconos_options.json";
