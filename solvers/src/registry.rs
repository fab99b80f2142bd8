//! Solvers by name, with settings from JSON (missing fields take their defaults).
//!
//! [`SOLVERS`] is the one registration table: one [`SolverEntry`] per solver (name,
//! description and source, supported classes, cost model, membership of the default `run`
//! list, and a builder from JSON through its [`SolverSettings`] type). The name list, the
//! default solver list, the cost model the report uses and `cpbench solvers` all derive from
//! it. Adding a solver is its folder, `pub mod` in `lib.rs` and one `entry!` line in
//! [`SOLVERS`].
//!
//! A name may carry a preset after a colon, `name:preset` ([`PRESETS`]): the preset replaces the
//! defaults and the JSON settings, if any, are applied on top of it. The full name (with the
//! preset) is what result files show, so that variants of one solver can run side by side.

use crate::admm::{Admm, AdmmSettings};
use crate::apgd::{Apgd, ApgdSettings};
use crate::bb::{Bb, BbSettings};
use crate::clarabel::{Clarabel, ClarabelSettings};
use crate::desaxce::{DeSaxce, DeSaxceSettings};
use crate::enumerative::{EnumSettings, Enumerative};
use crate::fixed_point::{Dsfp, DsfpSettings, Pfp, Tfp, TrescaSettings};
use crate::hybrid::admm::{NsgsAdmm, NsgsAdmmSettings};
use crate::hybrid::{Hybrid, HybridSettings};
use crate::ipm::{Ipm, IpmSettings};
use crate::jacobi::{Jacobi, JacobiSettings};
use crate::lemke::{Lemke, LemkeSettings};
use crate::mpgp::{Mpgp, MpgpSettings};
use crate::mprgp::{Expansion, Mprgp, MprgpSettings};
use crate::newton_fb::{NewtonFb, NewtonFbSettings};
use crate::nsgs::{Nsgs, NsgsSettings};
use crate::nsn::{Nsn, NsnSettings};
use crate::pgs::{Pgs, PgsSettings};
use crate::ppa::{Ppa, PpaSettings};
use crate::psor::{Psor, PsorSettings};
use crate::sap::{PrimalCg, Sap, SapSettings};
use crate::settings::{enum_values, parse, FieldDoc, SolverSettings};
use crate::solver::Solver;
use crate::spgqp::{SpgQp, SpgQpSettings};
use crate::status::SolverError;
use crate::vi::{Vi, ViSettings};
use cpbench_problems::ProblemClass;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use crate::solver::CostModel;

/// A solver with default settings as JSON plus the documented range of every checked field.
#[derive(Clone, Debug)]
pub struct SettingsDoc {
    /// The default settings (a JSON object; field names as in settings files).
    pub defaults: serde_json::Value,
    /// `(field, allowed range)` as the validation enforces them ([`SolverSettings::ranges`]).
    pub ranges: Vec<(&'static str, String)>,
    /// Renamed fields, `(old name, field)` ([`SolverSettings::ALIASES`]).
    pub aliases: &'static [(&'static str, &'static str)],
    /// Every field in declaration order: its JSON type and meaning ([`SettingField`]).
    pub fields: Vec<SettingField>,
}

/// One setting as `cpbench solvers` documents it.
#[derive(Clone, Debug)]
pub struct SettingField {
    /// Field name (JSON key).
    pub name: &'static str,
    /// JSON type: `number`, `integer`, `bool`, `string`, `object`, with ` or null` for an
    /// optional field; enums are `string` and list their values in [`SettingField::values`].
    pub json_type: String,
    /// The values an enum field accepts (empty for other fields).
    pub values: Vec<String>,
    /// One line of meaning ([`FieldDoc::meaning`]: the first sentence of the doc comment).
    pub meaning: String,
    /// The whole doc comment of the field.
    pub doc: &'static str,
}

/// A built solver and its effective settings as JSON; what an entry's builder returns.
type BuildResult = Result<(Box<dyn Solver + Send>, serde_json::Value), SolverError>;

/// One registered solver.
#[derive(Clone, Copy)]
pub struct SolverEntry {
    /// Registry name (`pgs`); what [`Solver::name`] of the built solver returns.
    pub name: &'static str,
    /// One line: the method.
    pub description: &'static str,
    /// Where the method comes from (paper, software).
    pub source: &'static str,
    /// The problem classes the solver supports (what [`Solver::supports`] accepts).
    pub classes: &'static [ProblemClass],
    /// What an iteration costs.
    pub cost: CostModel,
    /// Whether `cpbench run` runs it when neither `--solvers` nor the suite names solvers.
    pub default_run: bool,
    /// Build from the full name (with any preset, for messages) and the JSON settings
    /// (`None` = defaults): parse, validate, construct.
    pub build: fn(&str, Option<&serde_json::Value>) -> BuildResult,
    /// Default settings and documented ranges.
    pub settings: fn() -> SettingsDoc,
}

/// Parse and validate `S` from JSON, construct the solver with `ctor`, and return it with its
/// effective settings (defaults filled in) as JSON.
fn build_with<S: SolverSettings, T: Solver + Send + 'static>(
    name: &str,
    v: Option<&serde_json::Value>,
    ctor: fn(S) -> Result<T, SolverError>,
) -> BuildResult {
    let s: S = parse(name, v)?;
    let json = to_json(name, &s)?;
    Ok((Box::new(ctor(s)?), json))
}

fn to_json<S: Serialize>(name: &str, s: &S) -> Result<serde_json::Value, SolverError> {
    serde_json::to_value(s).map_err(|e| SolverError::BadSettings {
        solver: name.to_string(),
        message: e.to_string(),
    })
}

/// The [`SettingsDoc`] of `S`.
fn settings_doc<S: SolverSettings>() -> SettingsDoc {
    SettingsDoc {
        defaults: serde_json::to_value(S::default()).unwrap_or(serde_json::Value::Null),
        ranges: S::ranges(),
        aliases: S::ALIASES,
        fields: setting_fields::<S>(S::fields()),
    }
}

/// [`SettingField`]s of `fields` (the doc of a settings struct `S`, whose enums are probed).
fn setting_fields<S: DeserializeOwned + Serialize>(fields: &[FieldDoc]) -> Vec<SettingField> {
    fields
        .iter()
        .map(|f| {
            let values = enum_values::<S>(f.name);
            let mut json_type = f.json_type();
            if !values.is_empty() {
                let inner = f.rust_type.trim().strip_prefix("Option<").is_some();
                json_type = if inner { "string or null" } else { "string" }.into();
            }
            SettingField {
                name: f.name,
                json_type,
                values,
                meaning: f.meaning(),
                doc: f.doc,
            }
        })
        .collect()
}

/// The executor's settings (`exec` in manifests and the summary's `settings` column; set by
/// `run`'s flags and profiles, common to every solver): fields with type and meaning.
pub fn exec_fields() -> Vec<SettingField> {
    setting_fields::<crate::executor::ExecSettings>(
        crate::settings::field_docs("ExecSettings").unwrap_or(&[]),
    )
}

use ProblemClass::{BoxQp, Ccp, Coulomb, Lcp};
/// The convex QP classes of the class table ([`ProblemClass::QP`]: LCP, box QP, CCP).
const QP: &[ProblemClass] = &ProblemClass::QP;

/// One table line: `entry!(name, Settings => constructor, classes, cost, default_run,
/// description, source)`, or `entry!(desaxce name, description, source)` for a listed member
/// of the De Saxce family.
macro_rules! entry {
    ($name:literal, $settings:ty => $ctor:expr, $classes:expr, $cost:ident, $default:expr,
     $desc:literal, $source:literal) => {
        SolverEntry {
            name: $name,
            description: $desc,
            source: $source,
            classes: $classes,
            cost: CostModel::$cost,
            default_run: $default,
            build: |name, v| build_with::<$settings, _>(name, v, $ctor),
            settings: settings_doc::<$settings>,
        }
    };
    (desaxce $name:literal, $desc:literal, $source:literal) => {
        SolverEntry {
            name: $name,
            description: $desc,
            source: $source,
            classes: &[Coulomb],
            cost: CostModel::FirstOrder,
            default_run: false,
            build: |name, v| build_desaxce(name, $name, v),
            settings: settings_doc::<DeSaxceSettings>,
        }
    };
}

/// The registration table: every solver, in the order of listings and of the default list.
pub const SOLVERS: &[SolverEntry] = &[
    entry!("pgs", PgsSettings => Pgs::new, QP, FirstOrder, true,
        "projected block Gauss-Seidel / PSOR", "Tasora & Anitescu 2011"),
    entry!("jacobi", JacobiSettings => Jacobi::new, QP, FirstOrder, true,
        "projected Jacobi", "Tasora & Anitescu 2011"),
    entry!("apgd", ApgdSettings => Apgd::new, QP, FirstOrder, true,
        "Nesterov APGD with backtracking and restart", "Mazhar et al. 2015"),
    entry!("spgqp", SpgQpSettings => SpgQp::new, QP, FirstOrder, true,
        "spectral projected gradient (BB + GLL)", "Pospisil & Dostal 2018"),
    entry!("bb", BbSettings => Bb::new, QP, FirstOrder, false,
        "projected Barzilai-Borwein, BB1/BB2 alternating, no line search (Chrono's BB)",
        "Barzilai & Borwein 1988; Mazhar et al. 2015 (Chrono)"),
    entry!("mprgp", MprgpSettings => Mprgp::new, &[Lcp, BoxQp], FirstOrder, false,
        "MPRGP (box QP, LCP), with PERMON's expansion variants",
        "Dostal & Schoberl 2005; Kruzik et al. 2020"),
    entry!("mpgp", MpgpSettings => Mpgp::new, QP, FirstOrder, false,
        "MPGP (separable convex sets: cones, boxes)", "Dostal & Kozubek 2012"),
    entry!("ipm", IpmSettings => Ipm::new, QP, Factorising, true,
        "primal-dual interior point (Mehrotra, NT scaling, sparse LDL^T)",
        "Vandenberghe 2010; Mehrotra 1992"),
    entry!("clarabel", ClarabelSettings => Clarabel::new, QP, External, false,
        "external reference: Clarabel's conic interior point, one-shot", "Goulart & Chen 2024"),
    entry!("nsgs", NsgsSettings => Nsgs::new, &[Coulomb], FirstOrder, false,
        "non-smooth Gauss-Seidel for the true Coulomb problem",
        "Acary & Brogliato 2008; De Saxce & Feng 1991"),
    entry!("nsn-ac", NsnSettings => Nsn::alart_curnier, &[Coulomb], Factorising, false,
        "semismooth Newton on the Alart-Curnier function (Coulomb; sparse LU)",
        "Alart & Curnier 1991; Acary, Bremond & Huber 2018"),
    entry!("nsn-jm", NsnSettings => Nsn::jean_moreau, &[Coulomb], Factorising, false,
        "semismooth Newton on the Jean-Moreau function (Coulomb; sparse LU)",
        "Acary, Bremond & Huber 2018, sec. 4"),
    entry!("nsn-nm", NsnSettings => Nsn::natural_map, &[Coulomb], Factorising, false,
        "semismooth Newton on the natural map with De Saxce's velocity (Coulomb; sparse LU)",
        "Acary, Bremond & Huber 2018, sec. 4"),
    entry!("nsn-fb", NsnSettings => Nsn::fischer_burmeister, &[Coulomb], Factorising, false,
        "semismooth Newton on the Fischer-Burmeister function for SOCs with De Saxce's velocity (Coulomb; sparse LU)",
        "Fukushima, Luo & Tseng 2001; Acary, Bremond & Huber 2018, sec. 4"),
    entry!("ppa", PpaSettings => Ppa::new, &[Coulomb], Factorising, false,
        "proximal point around semismooth Newton (Coulomb; sparse LU; Siconos' PROX rules)",
        "Rockafellar 1976; Acary, Bremond & Huber 2018, sec. 5; Siconos PROX"),
    entry!("nsgs-nsn", HybridSettings => Hybrid::new, &[Coulomb], Factorising, false,
        "NSGS until it stalls, then semismooth Newton (Alart-Curnier; preset ppa: the proximal point algorithm); back to NSGS on failure",
        "Acary, Bremond & Huber 2018, sec. 5; Siconos NSN hybrid strategy"),
    entry!("nsgs-admm", NsgsAdmmSettings => NsgsAdmm::new, &[Coulomb], Factorising, true,
        "NSGS while it converges fast, then ADMM from its iterate (Coulomb; sparse LU)",
        "Acary, Bremond & Huber 2018, sec. 5 (hybrid strategies); ADMM as `admm`"),
    entry!("vi-fpp", ViSettings => Vi::fpp, &[Coulomb], FirstOrder, false,
        "fixed-point projection on the Coulomb VI, self-adaptive step (Khobotov ratio)",
        "Acary, Bremond & Huber 2018; Siconos VI_FPP"),
    entry!("vi-eg", ViSettings => Vi::eg, &[Coulomb], FirstOrder, false,
        "extragradient on the Coulomb VI, self-adaptive step of Khobotov / Marcotte, corrector from the predictor as Siconos' VI_EG (setting corrector)",
        "Korpelevich 1976; Khobotov 1987; Marcotte 1991; Siconos VI_EG"),
    entry!("dsfp", DsfpSettings => Dsfp::new, &[Coulomb], FirstOrder, false,
        "De Saxce's fixed point r <- P_K(r - rho (u + mu ||u_T|| e_n)), constant step (Coulomb)",
        "De Saxce & Feng 1991; Acary, Bremond & Huber 2018; Siconos DSFP"),
    entry!("tfp", TrescaSettings => Tfp::new, &[Coulomb], FirstOrder, false,
        "Tresca fixed point: outer iteration on s = mu r_n, Gauss-Seidel sweeps on the Tresca problem (Coulomb)",
        "Acary, Bremond & Huber 2018; Siconos TFP"),
    entry!("pfp", TrescaSettings => Pfp::new, &[Coulomb], FirstOrder, false,
        "Panagiotopoulos' fixed point: Gauss-Seidel on the normal LCP and the tangential Tresca problem, alternately (Coulomb)",
        "Panagiotopoulos 1975; Acary, Bremond & Huber 2018; Siconos PFP"),
    entry!("admm", AdmmSettings => Admm::new, &[Lcp, BoxQp, Ccp, Coulomb], Factorising, false,
        "ADMM on N + rho I (sparse LU), De Saxce's shift on Coulomb; presets siconos, chrono, pinocchio",
        "Boyd et al. 2011; Goldstein et al. 2014; Tasora et al. 2021; Carpentier et al. 2024; Siconos ADMM"),
    entry!("sap", SapSettings => Sap::new, &[Ccp], Factorising, false,
        "SAP: Newton with exact line search on the primal of the compliant CCP (matrix-free instances with R > 0; sparse Cholesky)",
        "Castro, Permenter & Han 2022"),
    entry!("primal-cg", SapSettings => PrimalCg::new, &[Ccp], FirstOrder, false,
        "MuJoCo's nonlinear CG (Polak-Ribiere+, M-preconditioned, exact line search) on SAP's primal of the compliant CCP (matrix-free instances with R > 0)",
        "Todorov 2014 (MuJoCo); Castro, Permenter & Han 2022"),
    entry!("lemke", LemkeSettings => Lemke::new, &[Lcp], Factorising, true,
        "Lemke's complementary pivoting, lexicographic ratio test (general LCP)",
        "Cottle, Pang & Stone 1992, sec. 4.4, 4.9"),
    entry!("enum", EnumSettings => Enumerative::new, &[Lcp], Factorising, false,
        "enumeration of the 2^n complementary bases (general LCP, n <= 20)",
        "Murty 1988; Siconos LCP ENUM"),
    entry!("newton-fb", NewtonFbSettings => NewtonFb::new, &[Lcp], Factorising, true,
        "semismooth Newton on the Fischer-Burmeister function (general LCP; sparse LU)",
        "De Luca, Facchinei & Kanzow 1996"),
    entry!("psor", PsorSettings => Psor::new, &[Lcp], FirstOrder, true,
        "projected SOR for the general LCP (positive diagonal of M)",
        "Cryer 1971; Cottle, Pang & Stone 1992"),
    entry!(desaxce "desaxce-apgd",
        "De Saxce's fixed point on s = mu ||u_T|| around APGD (Coulomb)",
        "De Saxce & Feng 1991; Acary et al. 2011"),
    entry!(desaxce "desaxce-spgqp",
        "De Saxce's fixed point on s = mu ||u_T|| around SPG-QP (Coulomb)",
        "De Saxce & Feng 1991; Acary et al. 2011"),
];

/// Names of all registered solvers, in table order ([`SOLVERS`]). Besides these,
/// `desaxce-<name>` ([`DESAXCE_PREFIX`]) wraps any CCP solver `<name>` in De Saxce's fixed
/// point for the Coulomb problem.
pub const SOLVER_NAMES: [&str; SOLVERS.len()] = {
    let mut names = [""; SOLVERS.len()];
    let mut i = 0;
    while i < SOLVERS.len() {
        names[i] = SOLVERS[i].name;
        i += 1;
    }
    names
};

/// The table entry of `name` (a preset suffix `:preset` is ignored); `None` for a name that
/// is not in the table (including `desaxce-<inner>` for an unlisted inner solver).
pub fn entry(name: &str) -> Option<&'static SolverEntry> {
    let base = name.split_once(':').map_or(name, |(b, _)| b);
    SOLVERS.iter().find(|e| e.name == base)
}

/// The solvers `cpbench run` runs when neither `--solvers` nor the suite names any: the
/// entries with `default_run`, in table order.
pub fn default_solvers() -> Vec<&'static str> {
    SOLVERS
        .iter()
        .filter(|e| e.default_run)
        .map(|e| e.name)
        .collect()
}

/// The cost model of a solver name as result files show it (`name`, `name:preset`,
/// `desaxce-<inner>`: the inner solver's, which does the work); `None` for an unknown name.
pub fn cost_model(name: &str) -> Option<CostModel> {
    if DRIVEN_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Some(CostModel::External);
    }
    if let Some(e) = entry(name) {
        return Some(e.cost);
    }
    let base = name.split_once(':').map_or(name, |(b, _)| b);
    base.strip_prefix(DESAXCE_PREFIX).and_then(cost_model)
}

/// Name prefixes of driven solvers ([`crate::driven`]), which are not in the table: `ext:` (an
/// external program defined in a JSON file, [`crate::external`]), `siconos:` (Siconos'
/// solvers through that protocol) and `py:` (a Python callable of the Python package). Their
/// cost model is [`CostModel::External`].
pub const DRIVEN_PREFIXES: [&str; 3] = ["ext:", "siconos:", "py:"];

/// The known names for error messages: the table, the `desaxce-<ccp solver>` family and the
/// presets.
fn known_names() -> String {
    format!(
        "{}, {DESAXCE_PREFIX}<ccp solver>; presets: {}",
        SOLVER_NAMES.join(", "),
        PRESETS.join(", ")
    )
}

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
/// `ex1_opt`, `ex1_optapprox`, `ex1_bb`, `ex1_projcg`); `admm:siconos`, `admm:chrono`,
/// `admm:pinocchio` (the defaults of Siconos' `SICONOS_FRICTION_3D_ADMM`, Chrono's
/// `ChSolverADMM` and Pinocchio's `ADMMContactSolver`: [`AdmmSettings::siconos`],
/// [`AdmmSettings::chrono`], [`AdmmSettings::pinocchio`]); `vi-eg:siconos` (Siconos'
/// `SICONOS_FRICTION_3D_VI_EG`, whose corrector starts from the predictor:
/// [`ViSettings::siconos`]); `nsgs-nsn:ppa` (NSGS, then the proximal point algorithm:
/// [`HybridSettings::ppa`]); `pgs:anderson` (PGS with Anderson acceleration of depth 5:
/// [`PgsSettings::anderson`]).
pub const PRESETS: [&str; 11] = [
    "mprgp:permon",
    "mprgp:permon-opt",
    "mprgp:permon-optapprox",
    "mprgp:permon-bb",
    "mprgp:permon-projcg",
    "admm:siconos",
    "admm:chrono",
    "admm:pinocchio",
    "vi-eg:siconos",
    "nsgs-nsn:ppa",
    "pgs:anderson",
];

/// The settings of a preset as JSON, or `None` for an unknown one.
fn preset(name: &str) -> Option<serde_json::Value> {
    let admm = match name {
        "admm:siconos" => Some(AdmmSettings::siconos()),
        "admm:chrono" => Some(AdmmSettings::chrono()),
        "admm:pinocchio" => Some(AdmmSettings::pinocchio()),
        _ => None,
    };
    if let Some(s) = admm {
        return serde_json::to_value(s).ok();
    }
    if name == "vi-eg:siconos" {
        return serde_json::to_value(ViSettings::siconos()).ok();
    }
    if name == "nsgs-nsn:ppa" {
        return serde_json::to_value(HybridSettings::ppa()).ok();
    }
    if name == "pgs:anderson" {
        return serde_json::to_value(PgsSettings::anderson()).ok();
    }
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

/// Build the solver called `name` with `settings` (a JSON object of its settings struct, or
/// `None` for defaults): parse, validate ([`SolverSettings::validate`]), construct. Errors:
/// [`SolverError::UnknownSolver`] (listing the known names), [`SolverError::BadSettings`]
/// (not an object, unknown or mistyped field, named), [`SolverError::OutOfRange`].
///
/// `name` may be `solver:preset` ([`PRESETS`]); the user's settings then override the preset's
/// field by field. An unknown preset is [`SolverError::UnknownSolver`].
pub fn build(name: &str, settings: Option<&serde_json::Value>) -> Result<Built, SolverError> {
    let merged;
    let (base, settings) = match name.split_once(':') {
        None => (name, settings),
        Some((base, _)) => {
            let mut v = preset(name)
                .ok_or_else(|| SolverError::UnknownSolver(name.to_string(), known_names()))?;
            if let Some(user) = settings {
                let user = user.as_object().ok_or_else(|| SolverError::BadSettings {
                    solver: name.to_string(),
                    message: "settings must be a JSON object".into(),
                })?;
                let obj = v.as_object_mut().expect("settings serialise to an object");
                let aliases = entry(base).map_or(&[][..], |e| (e.settings)().aliases);
                for (k, val) in user {
                    // an old field name replaces the preset's value of the renamed field
                    let k = aliases
                        .iter()
                        .find(|(old, _)| old == k)
                        .map_or(k.as_str(), |(_, new)| new);
                    obj.insert(k.to_string(), val.clone());
                }
            }
            merged = v;
            (base, Some(&merged))
        }
    };
    let (solver, settings) = if let Some(e) = SOLVERS.iter().find(|e| e.name == base) {
        (e.build)(name, settings)?
    } else if base.starts_with(DESAXCE_PREFIX) {
        build_desaxce(name, intern(base), settings)?
    } else {
        return Err(SolverError::UnknownSolver(name.to_string(), known_names()));
    };
    let solver: Box<dyn Solver + Send> = Box::new(crate::embed::Embed2d::new(solver));
    Ok(Built { solver, settings })
}

/// De Saxce's driver `base = desaxce-<inner>` with the inner solver built from the field
/// `inner`; the effective inner settings replace it, so that they show in manifests and hashes.
fn build_desaxce(name: &str, base: &'static str, v: Option<&serde_json::Value>) -> BuildResult {
    let mut s: DeSaxceSettings = parse(name, v)?;
    let inner = build(&base[DESAXCE_PREFIX.len()..], s.inner.as_ref())?;
    s.inner = Some(inner.settings);
    let json = to_json(name, &s)?;
    Ok((Box::new(DeSaxce::new(base, inner.solver, s)?), json))
}

/// Check a settings file's map of solver name to settings: every key must be a name
/// [`build`] accepts and its settings must build, or a `siconos:` solver with well-formed
/// Siconos options ([`crate::external::siconos::SiconosOptions`]); an `ext:` solver takes none
/// ([`crate::external::check_settings`]). Errors: as [`build`] and
/// [`crate::external::check_settings`], for the first bad key.
pub fn check_settings_map(
    map: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), SolverError> {
    for (name, v) in map {
        match crate::external::check_settings(name, Some(v)) {
            Some(r) => r?,
            None => {
                build(name, Some(v))?;
            }
        }
    }
    Ok(())
}
