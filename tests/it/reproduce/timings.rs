//! The table of recipe run times (`cpbench_reproduce::timings`).

use cpbench_reproduce::timings::{
    cell, known_timings, parse_timings, record_timing, Timing, TIMINGS_FILE,
};

fn t(recipe: &str, size: &str, wall: f64) -> Timing {
    Timing {
        recipe: recipe.into(),
        size: size.into(),
        wall_s: wall,
        repeat: 3,
        decided: 2,
        verdicts: 5,
        logical_cpus: 2,
        cpu: "Some CPU, 2.0GHz".into(),
        git_revision: "abc".into(),
        started: "2026-11-26T10:00:00Z".into(),
    }
}

/// A run replaces the row of its recipe and size and keeps the others; the file reads back.
#[test]
fn a_run_replaces_its_row() {
    let dir = tempfile::tempdir().unwrap();
    record_timing(dir.path(), t("a", "quick", 0.26)).unwrap();
    record_timing(dir.path(), t("a", "full", 70.0)).unwrap();
    record_timing(dir.path(), t("a", "quick", 0.31)).unwrap();
    let text = std::fs::read_to_string(dir.path().join(TIMINGS_FILE)).unwrap();
    let rows = parse_timings(&text, "test").unwrap();
    assert_eq!(rows, vec![t("a", "full", 70.0), t("a", "quick", 0.31)]);
    assert_eq!(cell(&rows, "a", "quick"), "0.31 s (decides 2 of 5)");
    assert_eq!(cell(&rows, "a", "full"), "70.0 s");
    assert_eq!(cell(&rows, "b", "full"), "not measured");
}

/// The committed table parses and names only known recipes, each size at most once.
#[test]
fn the_committed_table_parses() {
    // the table built into the binary is this file (`include_str!` in timings.rs)
    let committed = include_str!("../../../results/reproduce/timings.csv");
    let rows = parse_timings(committed, "built in").unwrap();
    let nowhere = tempfile::tempdir().unwrap();
    assert_eq!(known_timings(nowhere.path()).0, rows);
    let ids: Vec<&str> = cpbench_reproduce::recipes()
        .iter()
        .map(|r| r.info().id)
        .collect();
    for r in &rows {
        assert!(ids.contains(&r.recipe.as_str()), "{}", r.recipe);
        assert!(r.size == "full" || r.size == "quick");
        assert!(r.wall_s > 0.0 && r.decided <= r.verdicts);
        assert_eq!(
            rows.iter()
                .filter(|x| x.recipe == r.recipe && x.size == r.size)
                .count(),
            1
        );
    }
}
