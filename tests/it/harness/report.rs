//! `cpbench report` on a written folder (`cpbench_harness::report`): the means are over the
//! common set.

use cpbench_harness::report::{report, ReportOptions};
use cpbench_harness::results::{write_summary, SummaryRow};

fn row(inst: &str, solver: &str, status: &str, ok: bool, t: f64, it: u64) -> SummaryRow {
    SummaryRow {
        instance: inst.into(),
        class: Some(cpbench_problems::ProblemClass::Lcp),
        n: 2,
        nnz: 4,
        solver: solver.into(),
        status: cpbench_harness::results::RowStatus::parse(status).unwrap(),
        success: ok,
        iterations: it,
        matvecs: it,
        time_s: t,
        instance_hash: format!("h-{inst}"),
        check_residual: "nat_map_rel_2".into(),
        tol: 1e-6,
        profile: "default".into(),
        jobs: 1,
        base_solver: solver.into(),
        message: if status == "unsupported" {
            "psor takes no such problem".into()
        } else {
            String::new()
        },
        ..SummaryRow::default()
    }
}

/// Issue 27: a solver that refuses half the instances gains nothing. The summary table's
/// means are over the common set (the instances every solver took), the refusals are
/// counted as refusals, not failures, and the failures table lists real failures only.
#[test]
fn means_are_over_the_common_set_when_a_solver_refuses_half() {
    let dir = tempfile::tempdir().unwrap();
    // pgs solves a, b, c, d; psor solves a and b (faster than pgs) and refuses c and d;
    // psor used to get the best mean by being charged nothing on c and d
    let rows = vec![
        row("a", "pgs", "converged", true, 0.010, 100),
        row("b", "pgs", "converged", true, 0.020, 200),
        row("c", "pgs", "converged", true, 0.400, 4000),
        row("d", "pgs", "converged", true, 0.800, 8000),
        row("a", "psor", "converged", true, 0.020, 150),
        row("b", "psor", "converged", true, 0.030, 250),
        row("c", "psor", "unsupported", false, 0.0, 0),
        row("d", "psor", "unsupported", false, 0.0, 0),
    ];
    write_summary(&dir.path().join("summary.csv"), &rows).unwrap();
    report(dir.path(), &ReportOptions::default()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("report/shgeom.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "solver,took,refused,success_rate,correct_rate,common_set,shgeom_time,shgeom_iterations,shgeom_matvecs"
    );
    let cells = |l: &str| -> Vec<String> { l.split(',').map(String::from).collect() };
    let pgs = cells(lines.next().unwrap());
    let psor = cells(lines.next().unwrap());
    assert_eq!(&pgs[..6], ["pgs", "4", "0", "1", "1", "2"]);
    assert_eq!(&psor[..6], ["psor", "2", "2", "1", "1", "2"]);
    // over the common set {a, b}, shift 10 ms: pgs sqrt(0.02 * 0.03) - 0.01, psor
    // sqrt(0.03 * 0.04) - 0.01; pgs is the faster, psor 1.70x slower
    let g_pgs = (0.02f64 * 0.03).sqrt() - 0.01;
    let g_psor = (0.03f64 * 0.04).sqrt() - 0.01;
    let t_pgs: f64 = pgs[6].parse().unwrap();
    let t_psor: f64 = psor[6].parse().unwrap();
    assert!((t_pgs - 1.0).abs() < 1e-12, "{t_pgs}");
    assert!((t_psor - g_psor / g_pgs).abs() < 1e-12, "{t_psor}");
    assert!((t_psor - 1.69998).abs() < 1e-5, "{t_psor}");
    // iterations over {a, b}, shift 10: pgs sqrt(110 * 210) - 10, psor sqrt(160 * 260) - 10
    let i_psor: f64 = psor[7].parse().unwrap();
    let want = ((160.0f64 * 260.0).sqrt() - 10.0) / ((110.0f64 * 210.0).sqrt() - 10.0);
    assert!((i_psor - want).abs() < 1e-12, "{i_psor} {want}");
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| psor | 2 | 2 | 100% | 100% | 1.70 |"), "{md}");
    assert!(
        md.contains("the means are over the 2 of 4 instances"),
        "{md}"
    );
    assert!(md.contains("No failures."), "{md}");
    assert!(
        md.contains("- `psor` refused 2 instance(s) (`c`, `d`): psor takes no such problem"),
        "{md}"
    );
    // the performance profile of psor is over the two problems it took
    let prof = std::fs::read_to_string(dir.path().join("report/profile_time.csv")).unwrap();
    assert!(prof.lines().any(|l| l == "psor,1,0"), "{prof}");
    assert!(
        prof.lines()
            .any(|l| l.starts_with("psor,") && l.ends_with(",1")),
        "{prof}"
    );
}
