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
    assert_eq!(default_solvers(), ["pgs", "jacobi", "apgd", "spgqp", "ipm"]);
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
    let bad = ExecSettings {
        tol: 0.0,
        ..Default::default()
    };
    assert_eq!(
        bad.validate().unwrap_err().to_string(),
        "invalid setting tol = 0 for the executor: must be > 0, finite"
    );
    let bad = ExecSettings {
        max_iter: 0,
        ..Default::default()
    };
    assert_eq!(
        bad.validate().unwrap_err().to_string(),
        "invalid setting max_iter = 0 for the executor: must be >= 1"
    );
    let bad = ExecSettings {
        max_time_s: Some(-1.0),
        ..Default::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("max_time_s = -1"));
}
