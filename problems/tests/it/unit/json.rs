//! The tests of `cpbench_problems::json` (until now its `#[cfg(test)]` module in
//! `problems/src/json.rs`).

use cpbench_problems::json::*;

#[test]
fn duplicate_keys_are_refused_at_any_depth() {
    assert_eq!(
        parse_strict(r#"{"a": [1, {"b": true}], "c": null}"#).unwrap(),
        serde_json::json!({"a": [1, {"b": true}], "c": null})
    );
    let e = parse_strict(r#"{"a": 1, "a": 2}"#).unwrap_err().to_string();
    assert!(e.contains("the key \"a\" is given twice"), "{e}");
    let e = parse_strict(r#"{"v": {"solver": "pgs", "omega": 1, "omega": 2}}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"omega\" is given twice") && e.contains("line 1"),
        "{e}"
    );
    assert!(parse_strict("{} x").is_err());
}
