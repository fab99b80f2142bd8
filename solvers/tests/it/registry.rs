//! The registration table: every name builds a solver of that name whose `supports` agrees with
//! the table; settings errors name the solver, the field, the value and the allowed range.

use cpbench_problems::ProblemClass;
use cpbench_solvers::registry::{
    build, check_settings_map, cost_model, default_solvers, entry, CostModel, SOLVERS, SOLVER_NAMES,
};
use cpbench_solvers::{ExecSettings, SolverError, SolverSettings};
use serde_json::json;

const CLASSES: [ProblemClass; 4] = [
    ProblemClass::Lcp,
    ProblemClass::BoxQp,
    ProblemClass::Ccp,
    ProblemClass::Coulomb,
];

#[test]
fn every_registered_name_builds_a_solver_of_that_name() {
    assert_eq!(SOLVER_NAMES.len(), SOLVERS.len());
    for e in SOLVERS {
        let b = build(e.name, None).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        assert_eq!(b.solver.name(), e.name);
        for c in CLASSES {
            assert_eq!(
                b.solver.supports(c),
                e.classes.contains(&c),
                "{} on {c}",
                e.name
            );
        }
        // the effective settings are the documented defaults (inner settings aside)
        let doc = (e.settings)();
        let obj = doc.defaults.as_object().unwrap();
        for (k, v) in obj {
            if k != "inner" {
                assert_eq!(&b.settings[k], v, "{}.{k}", e.name);
            }
        }
        // every documented range names a field of the settings
        for (field, _) in &doc.ranges {
            assert!(
                obj.contains_key(*field),
                "{}: range of unknown {field}",
                e.name
            );
        }
        // the old names still parse, into the renamed field
        for (old, new) in doc.aliases {
            let v = b.settings[*new].clone();
            let b2 = build(e.name, Some(&json!({ *old: v.clone() }))).unwrap();
            assert_eq!(b2.settings[*new], v, "{}: alias {old}", e.name);
        }
    }
}

#[test]
fn derived_lists_and_cost_models() {
    assert_eq!(
        default_solvers(),
        [
            "pgs",
            "jacobi",
            "apgd",
            "spgqp",
            "ipm",
            "nsgs-admm",
            "lemke",
            "newton-fb",
            "psor"
        ]
    );
    assert_eq!(cost_model("lemke"), Some(CostModel::Factorising));
    assert_eq!(cost_model("psor"), Some(CostModel::FirstOrder));
    assert_eq!(cost_model("pgs"), Some(CostModel::FirstOrder));
    assert_eq!(cost_model("ipm"), Some(CostModel::Factorising));
    assert_eq!(cost_model("nsn-ac"), Some(CostModel::Factorising));
    assert_eq!(cost_model("clarabel"), Some(CostModel::External));
    assert_eq!(cost_model("mprgp:permon-opt"), Some(CostModel::FirstOrder));
    assert_eq!(cost_model("desaxce-ipm"), Some(CostModel::Factorising));
    assert_eq!(cost_model("siconos-nsgs"), None);
    assert_eq!(entry("mprgp:permon").unwrap().name, "mprgp");
    // the prefix family beyond the listed members still builds
    let b = build("desaxce-mpgp", None).unwrap();
    assert_eq!(b.solver.name(), "desaxce-mpgp");
    assert!(b.solver.supports(ProblemClass::Coulomb));
    assert_eq!(b.settings["inner"]["alpha_factor"], 1.95);
}

fn err_text(name: &str, settings: serde_json::Value) -> String {
    match build(name, Some(&settings)) {
        Ok(_) => panic!("{name} accepted {settings}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn out_of_range_names_solver_field_value_and_range() {
    let t = err_text("pgs", json!({"omega": 5.0}));
    assert_eq!(
        t,
        "invalid setting omega = 5 for solver 'pgs': must be in (0, 2)"
    );
    let t = err_text("spgqp", json!({"m": 0}));
    assert_eq!(
        t,
        "invalid setting gll_memory = 0 for solver 'spgqp': must be >= 1"
    );
    let t = err_text("apgd", json!({"l0": -1.0}));
    assert_eq!(
        t,
        "invalid setting l0 = -1 for solver 'apgd': must be > 0, finite, or null"
    );
    let t = err_text("clarabel", json!({"direct_solve_method": "mkl"}));
    assert_eq!(
        t,
        "invalid setting direct_solve_method = \"mkl\" for solver 'clarabel': must be one of \
         qdldl, auto"
    );
    let t = err_text("desaxce-apgd", json!({"inner": {"shrink": 2.0}}));
    assert_eq!(
        t,
        "invalid setting shrink = 2 for solver 'apgd': must be in (0, 1]"
    );
    let t = err_text("mprgp:permon", json!({"gamma": -1.0}));
    assert_eq!(
        t,
        "invalid setting proportioning_constant = -1 for solver 'mprgp': must be > 0, finite"
    );
}

#[test]
fn direct_constructors_validate_too() {
    use cpbench_solvers::ipm::{Ipm, IpmSettings};
    use cpbench_solvers::nsgs::{Nsgs, NsgsSettings};
    let e = Ipm::new(IpmSettings {
        step_fraction: 1.0,
        ..Default::default()
    })
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        "invalid setting step_fraction = 1 for solver 'ipm': must be in (0, 1)"
    );
    let s = NsgsSettings {
        anderson_depth: 21,
        ..Default::default()
    };
    assert!(matches!(
        s.validate(),
        Err(SolverError::OutOfRange {
            field: "anderson_depth",
            ..
        })
    ));
    assert!(Nsgs::new(s).is_err());
}

#[test]
fn type_errors_and_unknown_names_are_named() {
    let t = err_text("pgs", json!({"omega": "fast"}));
    assert!(
        t.starts_with("cannot parse settings of solver 'pgs': field `omega` = \"fast\""),
        "{t}"
    );
    assert!(t.contains("expected f64"), "{t}");
    let t = err_text("pgs", json!({"omgea": 1.0}));
    assert!(t.contains("unknown field `omgea`"), "{t}");
    assert!(t.contains("omega"), "{t}");
    let t = err_text("pgs", json!(3));
    assert!(t.contains("must be a JSON object"), "{t}");
    let mut map = serde_json::Map::new();
    map.insert("pgs".into(), json!({"omega": 1.5}));
    assert!(check_settings_map(&map).is_ok());
    map.insert("pgss".into(), json!({}));
    let t = check_settings_map(&map).unwrap_err().to_string();
    assert!(
        t.starts_with("unknown solver 'pgss' (known: pgs, jacobi,"),
        "{t}"
    );
    assert!(
        t.contains("desaxce-<ccp solver>") && t.contains("mprgp:permon"),
        "{t}"
    );
}

#[test]
fn exec_settings_are_validated_with_named_fields() {
    // the error of the default settings edited by `edit`
    let err = |edit: fn(&mut ExecSettings)| {
        let mut bad = ExecSettings::default();
        edit(&mut bad);
        bad.validate().unwrap_err().to_string()
    };
    assert_eq!(
        err(|s| s.tol = 0.0),
        "invalid setting tol = 0 for the executor: must be > 0, finite"
    );
    assert_eq!(
        err(|s| s.max_iter = 0),
        "invalid setting max_iter = 0 for the executor: must be >= 1"
    );
    assert!(err(|s| s.max_time_s = Some(-1.0)).contains("max_time_s = -1"));
}

/// Every field of every registered solver's default settings (and of the executor's) has a
/// type and a one-line meaning from its doc comment, and the documented fields are exactly the
/// JSON keys: a new field without a doc comment fails here.
#[test]
fn every_setting_has_a_type_and_a_meaning() {
    for e in SOLVERS {
        let doc = (e.settings)();
        let keys: Vec<&str> = doc
            .defaults
            .as_object()
            .unwrap_or_else(|| panic!("{}: defaults are not an object", e.name))
            .keys()
            .map(String::as_str)
            .collect();
        let mut fields: Vec<&str> = doc.fields.iter().map(|f| f.name).collect();
        fields.sort_unstable();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(fields, sorted, "{}: documented fields vs JSON keys", e.name);
        for f in &doc.fields {
            assert!(
                f.meaning.len() > 8 && f.meaning.len() <= f.doc.len(),
                "{}.{}: no meaning ({:?})",
                e.name,
                f.name,
                f.meaning
            );
            assert!(
                !f.json_type.is_empty() && f.json_type.chars().next().unwrap().is_lowercase(),
                "{}.{}: type {:?} is not a JSON type",
                e.name,
                f.name,
                f.json_type
            );
        }
    }
    let exec = cpbench_solvers::registry::exec_fields();
    let defaults = serde_json::to_value(ExecSettings::default()).unwrap();
    // every serialised key is documented; a documented field missing from the defaults is an
    // optional one left out when unset (`max_memory_bytes`, `check_every`)
    let keys = defaults.as_object().unwrap();
    assert!(keys.keys().all(|k| exec.iter().any(|f| f.name == k)));
    for f in &exec {
        assert!(
            keys.contains_key(f.name) || f.json_type.ends_with("or null"),
            "exec.{}: neither serialised nor optional",
            f.name
        );
    }
    // the optional fields left out of the defaults: max_memory_bytes, check_every
    assert_eq!(exec.len(), keys.len() + 2);
    assert!(exec.iter().all(|f| f.meaning.len() > 8));
}

/// Types and meanings as `cpbench solvers` shows them: enums list their values.
#[test]
fn setting_types_and_enum_values() {
    let pgs = (entry("pgs").unwrap().settings)();
    let f = |name: &str| pgs.fields.iter().find(|f| f.name == name).unwrap().clone();
    assert_eq!(f("omega").json_type, "number");
    assert_eq!(f("omega").meaning, "Relaxation `omega`, in `(0, 2)`.");
    assert_eq!(f("block_step").json_type, "string");
    assert_eq!(
        f("block_step").values,
        ["trace", "max_eigen", "safeguarded"]
    );
    let spg = (entry("spgqp").unwrap().settings)();
    let g = spg
        .fields
        .iter()
        .find(|f| f.name == "gradient_refresh")
        .unwrap();
    assert_eq!(g.json_type, "integer or null");
    let exec = cpbench_solvers::registry::exec_fields();
    let r = exec.iter().find(|f| f.name == "residual").unwrap();
    assert_eq!(r.json_type, "string or null");
    assert!(
        r.values.iter().any(|v| v == "nat_map_rel_2"),
        "{:?}",
        r.values
    );
}

/// `nsn-*` default to Siconos' line search (Goldstein-Price, at most 100 bisections: what
/// `SolverOptions(SICONOS_FRICTION_3D_NSN_AC)` of Siconos 4.4 holds); the Newton phases of
/// `ppa` and `nsgs-nsn` keep Armijo with 20 halvings ([`NsnSettings::ARMIJO`]), also when
/// their `nsn` object is given in part; an unknown field there is still refused.
#[test]
fn nsn_line_search_defaults() {
    use cpbench_solvers::nsn::{LineSearch, NsnSettings};
    assert_eq!(NsnSettings::ARMIJO.line_search, LineSearch::Armijo);
    assert_eq!(NsnSettings::ARMIJO.max_halvings, 20);
    for name in ["nsn-ac", "nsn-jm", "nsn-nm", "nsn-fb"] {
        let s = build(name, None).unwrap().settings;
        assert_eq!(s["line_search"], "goldstein-price", "{name}");
        assert_eq!(s["max_halvings"], 100, "{name}");
    }
    for name in ["ppa", "nsgs-nsn"] {
        let s = build(name, None).unwrap().settings;
        assert_eq!(s["nsn"], serde_json::to_value(NsnSettings::ARMIJO).unwrap());
        let part = serde_json::json!({"nsn": {"rho_strategy": "constant"}});
        let s = build(name, Some(&part)).unwrap().settings;
        assert_eq!(s["nsn"]["line_search"], "armijo", "{name}");
        assert_eq!(s["nsn"]["max_halvings"], 20, "{name}");
        assert_eq!(s["nsn"]["rho_strategy"], "constant", "{name}");
        let bad = serde_json::json!({"nsn": {"halvings": 3}});
        let e = build(name, Some(&bad)).err().unwrap().to_string();
        assert!(e.contains("halvings"), "{name}: {e}");
    }
}
