//! The report's metrics (`cpbench_harness::report`, module `metrics`): profile ratios, the
//! failure charge, refusals and the shifted geometric means.

use cpbench_harness::names::FileStems;
use cpbench_harness::report::{
    common_set, excluded, failure_charge, outcomes, ratios, shifted_geomean, shifted_geomeans,
    takers, Metric, Outcome, ReportOptions,
};
use cpbench_harness::results::SummaryRow;
use cpbench_solvers::Status;

fn o(inst: &str, solver: &str, solved: bool, it: f64) -> Outcome {
    let cost = [it * 1e-3, it, it];
    Outcome {
        instance: inst.into(),
        class: Some(cpbench_problems::ProblemClass::Lcp),
        solver: solver.into(),
        base: solver.into(),
        status: if solved {
            Status::Converged
        } else {
            Status::MaxIterations
        }
        .into(),
        message: String::new(),
        solved,
        claimed: solved,
        refused: false,
        cost,
        charged: cost,
        budget: [None, Some(20_000.0), None],
        bound_by: None,
    }
}

#[test]
fn profile_ratios_and_failures() {
    let outs = vec![
        o("a", "pgs", true, 10.0),
        o("a", "jacobi", true, 20.0),
        o("b", "pgs", false, 5.0),
        o("b", "jacobi", true, 40.0),
    ];
    let solvers = vec!["pgs".to_string(), "jacobi".to_string()];
    let (r, n) = ratios(&outs, &solvers, Metric::Iterations);
    assert_eq!(n, 2);
    assert_eq!(r["pgs"], vec![1.0, f64::INFINITY]);
    assert_eq!(r["jacobi"], vec![1.0, 2.0]);
}

/// Profiles by iterations and N-products leave out the interior point (factorising) and
/// an unknown solver; the profile by time keeps every solver.
#[test]
fn cost_model_filters_count_profiles() {
    let outs = vec![
        o("a", "pgs", true, 100.0),
        o("a", "ipm", true, 10.0),
        o("a", "peer-x", true, 50.0),
        o("b", "pgs", true, 300.0),
        o("b", "ipm", true, 12.0),
        o("b", "peer-x", false, 5.0),
    ];
    let solvers: Vec<String> = ["pgs", "ipm", "peer-x"].map(String::from).to_vec();
    let (r, n) = ratios(&outs, &solvers, Metric::Iterations);
    assert_eq!(n, 2);
    assert_eq!(r.keys().collect::<Vec<_>>(), vec!["pgs"]);
    assert_eq!(r["pgs"], vec![1.0, 1.0]);
    let gone = excluded(&outs, &solvers, Metric::Matvecs);
    assert_eq!(gone.len(), 2);
    assert_eq!(gone[0].0, "ipm");
    assert!(gone[0].1.starts_with("factorising"));
    assert!(gone[1].1.starts_with("not in the registry"));
    let (t, _) = ratios(&outs, &solvers, Metric::Time);
    assert_eq!(t.len(), 3);
    // ipm is the fastest on both: pgs takes 100 / 10 and 300 / 12 times as long
    assert_eq!(t["ipm"], vec![1.0, 1.0]);
    assert!((t["pgs"][0] - 10.0).abs() < 1e-12 && (t["pgs"][1] - 25.0).abs() < 1e-12);
    assert_eq!(t["peer-x"], vec![5.0, f64::INFINITY]);
    let sg = shifted_geomeans(&outs, &solvers, 0.01, 10.0);
    assert!(sg["ipm"][1].is_nan() && sg["ipm"][2].is_nan() && sg["ipm"][0] > 0.0);
}

fn row(
    inst: &str,
    solver: &str,
    status: &str,
    ok: bool,
    it: u64,
    t: f64,
    exec: &str,
) -> SummaryRow {
    SummaryRow {
        instance: inst.into(),
        class: Some(cpbench_problems::ProblemClass::Lcp),
        n: 3,
        nnz: 9,
        solver: solver.into(),
        settings_hash: String::new(),
        status: cpbench_harness::results::RowStatus::parse(status).unwrap(),
        success: ok,
        iterations: it,
        matvecs: it,
        time_s: t,
        instance_hash: inst.into(),
        best_iteration: it,
        check_residual: "nat_map_rel_2".into(),
        tol: 1e-6,
        profile: "default".into(),
        jobs: 1,
        base_solver: solver.into(),
        settings: format!("{{\"exec\":{exec},\"settings\":{{}},\"solver\":\"{solver}\"}}"),
        ..SummaryRow::default()
    }
}

/// The budget rule on hand-built rows, with the shifted geometric means computed by hand.
#[test]
fn failures_charged_at_the_budget_that_bound_them() {
    // the reported case: PGS at the iteration cap after 0.088 s, with a 30 s time limit
    let tl = r#"{"max_iter":20000,"max_time_s":30.0,"max_matvecs":null}"#;
    let no = r#"{"max_iter":20000,"max_time_s":null,"max_matvecs":null}"#;
    let rows = [
        row("a", "pgs", "converged", true, 100, 0.010, tl),
        row("b", "pgs", "max_iterations", false, 20_000, 0.088, tl),
        // stalled at 5000 iterations after 0.02 s: charged 4x (up to the iteration cap)
        row("c", "pgs", "stalled", false, 5_000, 0.020, tl),
        // at the time limit after 1000 iterations: 30 s, 1000 iterations
        row("d", "pgs", "max_time", false, 1_000, 30.0, tl),
        row("b", "jacobi", "max_iterations", false, 20_000, 0.088, no),
    ];
    let refs: Vec<&SummaryRow> = rows.iter().collect();
    let dir = tempfile::tempdir().unwrap();
    let stems = FileStems::from_rows(&rows);
    let outs = outcomes(
        dir.path(),
        &refs,
        &stems,
        &ReportOptions::default(),
        &[None; 3],
    )
    .unwrap();
    assert_eq!(outs[0].charged, [0.010, 100.0, 100.0]);
    assert_eq!(outs[1].charged, [0.088, 20_000.0, 20_000.0]);
    assert_eq!(outs[1].bound_by, Some(Metric::Iterations));
    assert_eq!(outs[2].charged, [0.080, 20_000.0, 20_000.0]);
    assert_eq!(outs[2].bound_by, Some(Metric::Iterations));
    assert_eq!(outs[3].charged, [30.0, 1_000.0, 1_000.0]);
    assert_eq!(outs[3].bound_by, Some(Metric::Time));
    // the time limit changes nothing for a run at the iteration cap
    assert_eq!(outs[4].charged, outs[1].charged);
    let solvers = vec!["pgs".to_string(), "jacobi".to_string()];
    let sg = shifted_geomeans(&outs, &solvers, 0.01, 10.0);
    // time: (0.02 * 0.098 * 0.09 * 30.01)^(1/4) - 0.01
    let t = (0.02f64 * 0.098 * 0.09 * 30.01).powf(0.25) - 0.01;
    assert!((sg["pgs"][0] - t).abs() < 1e-12, "{} {t}", sg["pgs"][0]);
    assert!((sg["pgs"][0] - 0.2597).abs() < 1e-4);
    // iterations: (110 * 20010 * 20010 * 1010)^(1/4) - 10
    let i = (110f64 * 20_010.0 * 20_010.0 * 1_010.0).powf(0.25) - 10.0;
    assert!((sg["pgs"][1] - i).abs() < 1e-9);
    assert!((sg["jacobi"][0] - 0.088).abs() < 1e-12);
    assert!((sg["jacobi"][1] - 20_000.0).abs() < 1e-9);
}

#[test]
fn failure_charge_without_budgets() {
    // nothing spent: each set budget, what was spent elsewhere
    let (c, b) = failure_charge([1e-4, 0.0, 0.0], [None, Some(500.0), None]);
    assert_eq!(c, [1e-4, 500.0, 0.0]);
    assert_eq!(b, None);
    // N-product cap binds before the iteration cap (3 products per iteration)
    let (c, b) = failure_charge([0.5, 100.0, 300.0], [None, Some(1000.0), Some(600.0)]);
    assert_eq!(c, [1.0, 200.0, 600.0]);
    assert_eq!(b, Some(Metric::Matvecs));
}

fn refusal(inst: &str, solver: &str) -> Outcome {
    let mut x = o(inst, solver, false, 0.0);
    x.status = cpbench_harness::results::REFUSED;
    x.refused = true;
    x
}

/// A refusal is not a run: no ratio, not in the common set, no failure charge.
#[test]
fn refusals_enter_no_profile_and_shrink_the_common_set() {
    let outs = vec![
        o("a", "pgs", true, 10.0),
        o("a", "psor", true, 20.0),
        o("b", "pgs", true, 100.0),
        refusal("b", "psor"),
        o("c", "pgs", false, 5.0),
        o("c", "psor", true, 40.0),
    ];
    let solvers = vec!["pgs".to_string(), "psor".to_string()];
    let (r, n) = ratios(&outs, &solvers, Metric::Iterations);
    assert_eq!(n, 3);
    assert_eq!(r["pgs"], vec![1.0, 1.0, f64::INFINITY]);
    // psor: its two accepted problems only (ratio 2 on a, best on c)
    assert_eq!(r["psor"], vec![1.0, 2.0]);
    assert_eq!(common_set(&outs, &solvers), vec!["a", "c"]);
    assert_eq!(takers(&outs, &solvers), solvers);
    assert_eq!(
        takers(&[refusal("b", "psor")], &solvers),
        Vec::<String>::new()
    );
}

#[test]
fn shifted_geometric_mean() {
    // exp(mean(ln(v + 10))) - 10 for v = (10, 30): sqrt(20 * 40) - 10
    let g = shifted_geomean(&[10.0, 30.0], 10.0);
    assert!((g - (800f64.sqrt() - 10.0)).abs() < 1e-12);
    assert!((shifted_geomean(&[7.0, 7.0], 1.0) - 7.0).abs() < 1e-12);
}
