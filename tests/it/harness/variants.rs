//! Solver variants from `name@setting=value` tokens and a variants file
//! (`cpbench_harness::variants`).

use cpbench_harness::variants::{expand, VariantsFile};
use cpbench_harness::SolverSpec;
use serde_json::{Map, Value};

fn toks(s: &[&str]) -> Vec<String> {
    s.iter().map(|t| t.to_string()).collect()
}

/// The labels of the variants `v`, in order.
fn labels(v: &[SolverSpec]) -> Vec<&str> {
    v.iter().map(|s| s.label.as_str()).collect()
}

fn setting(v: &SolverSpec, k: &str) -> Option<Value> {
    v.settings.as_ref().and_then(|s| s.get(k)).cloned()
}

/// Plain names, `@` pairs (an old field name included) and an integer sweep give the
/// labels, registry names and settings expected.
#[test]
fn tokens_expand_to_labelled_variants() {
    let v = expand(
        &toks(&[
            "pgs",
            "pgs@omega=0.8",
            "spgqp@m=5",
            "spgqp@gll_memory=2:6:2",
        ]),
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        labels(&v),
        [
            "pgs",
            "pgs@omega=0.8",
            "spgqp@m=5",
            "spgqp@gll_memory=2",
            "spgqp@gll_memory=4",
            "spgqp@gll_memory=6"
        ]
    );
    assert!(v[0].settings.is_none());
    assert_eq!(v[1].name, "pgs");
    assert_eq!(setting(&v[1], "omega"), Some(Value::from(0.8)));
    assert_eq!(setting(&v[2], "m"), Some(Value::from(5)));
    assert_eq!(setting(&v[5], "gll_memory"), Some(Value::from(6)));
}

/// A real sweep has the endpoint and clean labels (no 0.8000000000000002), values are the
/// rounded numbers, and two sweeps give their product.
#[test]
fn sweeps_include_the_endpoint_and_print_clean_values() {
    let v = expand(&toks(&["pgs@omega=0.6:1.4:0.2"]), None, None).unwrap();
    assert_eq!(
        labels(&v),
        [
            "pgs@omega=0.6",
            "pgs@omega=0.8",
            "pgs@omega=1",
            "pgs@omega=1.2",
            "pgs@omega=1.4"
        ]
    );
    assert_eq!(setting(&v[1], "omega"), Some(Value::from(0.8)));
    let v = expand(&toks(&["pgs@omega=0.5:1:0.5@lambda=0.5:1:0.5"]), None, None).unwrap();
    assert_eq!(
        labels(&v),
        [
            "pgs@omega=0.5@lambda=0.5",
            "pgs@omega=0.5@lambda=1",
            "pgs@omega=1@lambda=0.5",
            "pgs@omega=1@lambda=1"
        ]
    );
}

/// Layers: `--settings` under the variants file under the token; a file variant may build
/// on another; the file's order is kept.
#[test]
fn settings_are_layered() {
    let map: Map<String, Value> =
        serde_json::from_str(r#"{"pgs": {"omega": 1.2, "lambda": 0.9}}"#).unwrap();
    let file = VariantsFile::parse(
        r#"{"pgs-slow": {"solver": "pgs", "omega": 0.8},
            "b-variant": {"solver": "pgs-slow", "lambda": 0.5}}"#,
        "test",
    )
    .unwrap();
    assert_eq!(file.names(), ["pgs-slow", "b-variant"]);
    let v = expand(
        &toks(&["pgs", "pgs-slow", "b-variant", "b-variant@omega=0.7"]),
        Some(&map),
        Some(&file),
    )
    .unwrap();
    let got: Vec<(Value, Value)> = v
        .iter()
        .map(|s| (setting(s, "omega").unwrap(), setting(s, "lambda").unwrap()))
        .collect();
    let f = Value::from;
    assert_eq!(
        got,
        [
            (f(1.2), f(0.9)),
            (f(0.8), f(0.9)),
            (f(0.8), f(0.5)),
            (f(0.7), f(0.5))
        ]
    );
    assert!(v.iter().all(|s| s.name == "pgs"));
    assert_eq!(v[3].label, "b-variant@omega=0.7");
}

/// Bad tokens and files are errors that name the token and what was expected.
#[test]
fn errors_name_the_token() {
    let msg = |t: &[&str]| expand(&toks(t), None, None).unwrap_err().to_string();
    assert!(
        msg(&["pgs@omga=0.8"]).contains("omga"),
        "{}",
        msg(&["pgs@omga=0.8"])
    );
    let m = msg(&["pgs@omega=3"]);
    assert!(m.contains("pgs@omega=3") && m.contains("(0, 2)"), "{m}");
    assert!(msg(&["pgs@omega"]).contains("expected '@setting=value'"));
    assert!(msg(&["pgs@omega=1:0.5:0.1"]).contains("start <= stop"));
    assert!(msg(&["pgs@omega=0:1:0"]).contains("positive step"));
    assert!(msg(&["pgs@omega=0:1:1e-6"]).contains("at most 1000"));
    assert!(msg(&["pgs", "pgs@omega=1:1.2:0.2", "pgs@omega=1"]).contains("named twice"));
    assert!(msg(&["nosuch"]).contains("unknown solver or variant 'nosuch'"));
    let bad = |j: &str| VariantsFile::parse(j, "v.json").unwrap_err().to_string();
    assert!(bad(r#"{"pgs": {"solver": "pgs"}}"#).contains("registry name"));
    assert!(bad(r#"{"a@b": {"solver": "pgs"}}"#).contains("without '@'"));
    assert!(bad(r#"{"slow": {"omega": 0.8}}"#).contains("missing \"solver\""));
    assert!(bad("[1]").contains("expected a JSON object"));
    let loop_file =
        VariantsFile::parse(r#"{"a": {"solver": "b"}, "b": {"solver": "a"}}"#, "v").unwrap();
    let e = expand(&toks(&["a"]), None, Some(&loop_file)).unwrap_err();
    assert!(e.to_string().contains("builds on itself"), "{e}");
}
