//! `cpbench reproduce` from the command line: `--list`, a recipe by id, an unknown id.

use cpbench_reproduce::recipes;
use cpbench_test_support::succeed;

use crate::support::{cpbench, output, typed_error};

#[test]
fn list_names_every_recipe_with_its_run_times() {
    let text = String::from_utf8(succeed(&mut cpbench("reproduce --list")).stdout).unwrap();
    for r in recipes() {
        let i = r.info();
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{} ", i.id)))
            .unwrap_or_else(|| panic!("{} not listed:\n{text}", i.id));
        assert!(line.contains(i.paper), "{line}");
        // the full-size time is the committed measured one (results/reproduce/timings.csv,
        // read from the working directory: the repository root under cargo test)
        let times = cpbench_reproduce::timings::known_timings(std::path::Path::new(env!(
            "CARGO_MANIFEST_DIR"
        )))
        .0;
        let full = times
            .iter()
            .find(|t| t.recipe == i.id && t.size == "full")
            .unwrap_or_else(|| panic!("{} has no measured full-size time", i.id));
        assert!(
            line.contains(&cpbench_reproduce::fmt_duration(full.wall_s)),
            "{line}"
        );
    }
    assert!(text.contains("Wall times measured"), "{text}");
}

#[test]
fn a_recipe_runs_by_id_and_an_unknown_id_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = succeed(cpbench("reproduce permon-mprgp --quick --quiet --out").arg(dir.path()));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("permon-mprgp: 185 of 185 published numbers matched"),
        "{text}"
    );
    let md = std::fs::read_to_string(dir.path().join("reproduce.md")).unwrap();
    assert!(md.contains(&format!(
        "cpbench reproduce permon-mprgp --quick --out {} --rerun",
        dir.path().display()
    )));
    let bad = output(&mut cpbench("reproduce nope"));
    typed_error(&bad, &["unknown recipe 'nope'", "permon-mprgp"]);
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(!err.contains("panicked"));
}
