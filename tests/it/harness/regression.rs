//! The comparison with a baseline (`cpbench_harness::regression`): settings diffs, verdicts,
//! their printed form, old baselines and new rows.

use cpbench_harness::regression::{
    compare, failed, format_comparison, format_new_rows, new_row_fails, new_rows, read_baseline,
    settings_diff, write_baseline, BaselineRow, Comparison, RegressionOptions, Verdict,
};
use cpbench_harness::results::SummaryRow;
use cpbench_solvers::Status;

/// A converged `pgs` row of instance `inst` after `it` iterations, with `max_iter` in its
/// settings JSON (the hash follows the JSON).
fn row(inst: &str, it: u64, res: f64, success: bool, max_iter: u64) -> SummaryRow {
    let settings = format!(
        r#"{{"exec":{{"max_iter":{max_iter},"tol":1e-6}},"settings":{{"omega":1.0}},"solver":"pgs"}}"#
    );
    SummaryRow {
        instance: inst.into(),
        class: Some(cpbench_problems::ProblemClass::Ccp),
        n: 3,
        nnz: 9,
        solver: "pgs".into(),
        settings_hash: format!("h{max_iter}"),
        status: if success {
            Status::Converged
        } else {
            Status::MaxIterations
        }
        .into(),
        success,
        iterations: it,
        matvecs: it,
        time_s: 0.0,
        residuals: cpbench_problems::Residuals {
            nat_map_rel_2: res,
            ..Default::default()
        },
        instance_hash: "i".into(),
        best_iteration: it,
        check_residual: "nat_map_rel_2".into(),
        tol: 1e-6,
        profile: "default".into(),
        jobs: 1,
        base_solver: "pgs".into(),
        settings,
        ..SummaryRow::default()
    }
}

#[test]
fn diff_names_flattened_paths_and_the_solver() {
    let a: serde_json::Value = serde_json::from_str(
        r#"{"exec":{"max_iter":20000,"tol":1e-6,"residual":null},"settings":{"omega":1.0,"inner":{"x":1}},"solver":"pgs"}"#,
    )
    .unwrap();
    let b: serde_json::Value = serde_json::from_str(
        r#"{"exec":{"max_iter":1000,"tol":1e-6},"settings":{"omega":0.8,"inner":{"x":2}},"solver":"pgs"}"#,
    )
    .unwrap();
    assert_eq!(
        settings_diff(&a, &b),
        [
            "exec.max_iter 20000 -> 1000",
            "exec.residual null -> (none)",
            "pgs.inner.x 1 -> 2",
            "pgs.omega 1.0 -> 0.8",
        ]
    );
    assert!(settings_diff(&a, &a).is_empty());
}

/// The baseline rows of `rows`.
fn baseline(rows: &[SummaryRow]) -> Vec<BaselineRow> {
    rows.iter().map(BaselineRow::from_summary).collect()
}

/// The comparison as printed (`--verbose` or not), checked to have `n` lines.
fn printed(cmp: &[Comparison], verbose: bool, n: usize) -> Vec<String> {
    let text = format_comparison(cmp, verbose);
    let lines: Vec<String> = text.lines().map(String::from).collect();
    assert_eq!(lines.len(), n, "{text}");
    lines
}

#[test]
fn a_lowered_max_iter_prints_regressions_first_naming_the_setting() {
    // 3 rows: two converge in under 1000 iterations (notes: only the setting changed), one
    // needed 5000 and now stops at 1000 unconverged (regressed)
    let base = baseline(&[
        row("a", 100, 9e-7, true, 20000),
        row("b", 5000, 9e-7, true, 20000),
        row("c", 200, 9e-7, true, 20000),
    ]);
    let cur = [
        row("a", 100, 9e-7, true, 1000),
        row("b", 1000, 3e-4, false, 1000),
        row("c", 200, 9e-7, true, 1000),
    ];
    let cmp = compare(&base, &cur, RegressionOptions::default());
    assert!(failed(&cmp));
    let lines = printed(&cmp, false, 4);
    assert!(lines[0].starts_with("verdict"), "{lines:#?}");
    assert!(lines[1].starts_with("REGRESSED  b "), "{lines:#?}");
    assert!(
        lines[1].ends_with(
            "success -> failure; residual 3.00e-4 > limit 9.00e-6; settings changed: \
             exec.max_iter 20000 -> 1000"
        ),
        "{lines:#?}"
    );
    assert_eq!(
        lines[2],
        "2 notes: 2 settings changed (exec.max_iter 20000 -> 1000) (--verbose lists them)"
    );
    assert_eq!(
        lines[3],
        "3 baseline rows: 1 regressed, 0 improved, 2 unchanged or within thresholds"
    );
    // --verbose: the notes as rows, after the regression
    let lines = printed(&cmp, true, 5);
    assert!(lines[1].starts_with("REGRESSED"), "{lines:#?}");
    assert!(lines[2].starts_with("note       a "), "{lines:#?}");
    assert!(
        lines[2].ends_with("settings changed: exec.max_iter 20000 -> 1000"),
        "{lines:#?}"
    );
}

#[test]
fn nothing_regressed_prints_no_table() {
    let base = baseline(&[row("a", 100, 9e-7, true, 20000)]);
    // the comparison of the baseline with one current row, as printed without --verbose
    let text_with =
        |cur: SummaryRow| format_comparison(&compare(&base, &[cur], Default::default()), false);
    assert_eq!(
        text_with(row("a", 100, 9e-7, true, 20000)),
        "1 baseline rows: 0 regressed, 0 improved, 1 unchanged or within thresholds\n"
    );
    assert_eq!(
        text_with(row("a", 50, 9e-7, true, 20000)),
        "1 improved (--verbose lists them)\n\
         1 baseline rows: 0 regressed, 1 improved, 0 unchanged or within thresholds\n"
    );
}

#[test]
fn an_old_baseline_without_settings_reads_and_reports_by_hash() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("old.csv");
    std::fs::write(
        &p,
        "instance,solver,profile,success,status,iterations,matvecs,residual,check_residual,\
         tol,instance_hash,settings_hash\n\
         a,pgs,default,yes,converged,100,100,9e-7,nat_map_rel_2,1e-6,i,hold\n",
    )
    .unwrap();
    let base = read_baseline(&p).unwrap();
    assert_eq!(base[0].settings, "");
    assert_eq!(base[0].iterations, 100);
    let cmp = compare(
        &base,
        &[row("a", 100, 9e-7, true, 20000)],
        Default::default(),
    );
    assert_eq!(cmp[0].settings_change.as_deref(), Some("(hash)"));
    assert_eq!(
        cmp[0].verdict,
        Verdict::Note("settings changed: (hash)".into())
    );
    // a new baseline round-trips with its settings column
    let q = d.path().join("new.csv");
    write_baseline(&q, &[row("a", 100, 9e-7, true, 20000)]).unwrap();
    let back = read_baseline(&q).unwrap();
    assert_eq!(
        back[0],
        BaselineRow::from_summary(&row("a", 100, 9e-7, true, 20000))
    );
}

#[test]
fn new_rows_are_listed_and_a_failing_one_is_marked() {
    let base = baseline(&[row("a", 10, 1e-7, true, 100)]);
    let mut ok = row("b", 12, 1e-7, true, 100);
    ok.solver = "pgs@omega=0.8".into();
    let mut bad = row("a", 100, 1e-2, false, 100);
    bad.solver = "pgs@omega=1.9".into();
    let mut refused = row("a", 0, f64::NAN, false, 100);
    refused.solver = "lemke".into();
    refused.status = cpbench_harness::results::REFUSED;
    let run = vec![row("a", 10, 1e-7, true, 100), ok, bad, refused];
    let new = new_rows(&base, &run);
    let names: Vec<&str> = new.iter().map(|r| r.solver.as_str()).collect();
    assert_eq!(names, ["pgs@omega=0.8", "pgs@omega=1.9", "lemke"]);
    let fails: Vec<bool> = new.iter().map(new_row_fails).collect();
    assert_eq!(fails, [false, true, false]);
    let text = format_new_rows(&new, false);
    let first = text.lines().nth(2).unwrap();
    assert!(
        first.starts_with("NEW FAIL") && first.contains("pgs@omega=1.9"),
        "{text}"
    );
    assert!(
        text.contains("1 new rows failed: the check fails"),
        "{text}"
    );
    assert!(format_new_rows(&new, true).contains("accepted by --allow-new"));
    assert_eq!(format_new_rows(&[], false), "");
}
