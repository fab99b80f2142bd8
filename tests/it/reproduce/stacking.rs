//! `horak-trinkle2019-stacking`: the direct LCP solve leaves no penetration (their script's
//! statement), the 30-sweep CCP leaves a penetration that grows with the column height.

use super::common::quick;
use cpbench_reproduce::Verdict;

fn cell(s: &str) -> f64 {
    s.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn lcp_has_no_penetration_and_ccp_penetration_grows_with_height() {
    let (done, dir) = quick("horak-trinkle2019-stacking");
    let o = &done.outcome;
    assert_eq!(o.comparisons.len(), 2);
    assert_eq!(o.comparisons[0].verdict(), Verdict::ClaimHolds);
    assert!(o.comparisons[0].ours > -1e-12);
    // Lemke over the columns: set beside the statement, with its failures, not decided
    assert_eq!(o.comparisons[1].verdict(), Verdict::ClaimOpen);
    assert!(o.comparisons[1].ours_text.contains("failed run(s)"));
    // their error-against-iteration figure: sampled from 1 to 1000 iterations; the CCP's
    // penetration velocity falls by orders of magnitude, the convex model's levels off
    let csv = std::fs::read_to_string(dir.path().join("error_vs_iterations.csv")).unwrap();
    let at = |model: &str, k: u64| -> f64 {
        csv.lines()
            .find(|l| l.starts_with(&format!("{model},{k},")))
            .and_then(|l| l.rsplit(',').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {model} at {k}"))
    };
    assert!(at("CCP", 1) < -1e-3, "{}", at("CCP", 1));
    assert!(at("CCP", 1000).abs() < 1e-8, "{}", at("CCP", 1000));
    assert!(at("Convex", 1000) < -1e-4, "{}", at("Convex", 1000));
    assert!(dir.path().join("error_vs_iterations.png").is_file());
    let pen = &o.tables[0];
    assert_eq!(pen.rows.len(), 4);
    let ccp: Vec<f64> = pen.rows.iter().map(|r| cell(&r[3])).collect();
    assert!(ccp.windows(2).all(|w| w[1] > w[0]), "CCP: {ccp:?}");
    assert!(ccp[3] > 1e-5, "CCP: {ccp:?}");
    for r in &pen.rows {
        assert!(cell(&r[5]) < 1e-12, "LCP: {r:?}");
    }
    // the 1000-sweep error: the regularised (convex) model keeps a penetration velocity,
    // the CCP goes to zero
    let err = &o.tables[2];
    let u = |k: usize| cell(&err.rows[k][2]);
    assert!(u(3) < -1e-4, "convex {}", u(3));
    assert!(u(2).abs() < 1e-8, "ccp {}", u(2));
}
