//! Verdicts against the papers' numbers, their formatting, and the recipe list
//! (`cpbench_reproduce`'s crate root).

use cpbench_reproduce::{
    comparison_csv, find, fmt_tolerance, fmt_value, printed_tolerance, ratio_undecided_reason,
    ratio_verdict, recipes, Comparison, Outcome, Verdict,
};

#[test]
fn verdicts_follow_the_tolerance_and_the_claim() {
    let c = Comparison::value("q", 105.0, "105", 100.0, 0.1, "s");
    assert_eq!(c.verdict(), Verdict::Match);
    let c = Comparison::value("q", 111.0, "111", 100.0, 0.1, "s");
    assert_eq!(c.verdict(), Verdict::Mismatch);
    let c = Comparison::value("q", 181.0, "181", 181.0, 0.0, "s");
    assert_eq!(c.verdict(), Verdict::Match);
    let c = Comparison::value("q", f64::NAN, "failed", 181.0, 0.0, "s");
    assert_eq!(c.verdict(), Verdict::Mismatch);
    let c = Comparison::claim("q", 30.0, "30x", "10-100x", Some(true), "s");
    assert_eq!(c.verdict(), Verdict::ClaimHolds);
    assert_eq!(fmt_value(181.0), "181");
    assert_eq!(fmt_tolerance(0.1), "10%");
    assert_eq!(fmt_tolerance(1e-6), "1e-6 rel.");
    assert_eq!(fmt_tolerance(1e-5), "1e-5 rel.");
    assert_eq!(fmt_value(-0.183437), "-0.183437");
    assert_eq!(fmt_value(6.19e-4), "6.19e-4");
    let csv = comparison_csv(&[c]);
    assert!(csv.contains("claim,,,claim holds,s"), "{csv}");
    // printed digits fix the tolerance: 1.42853 allows 0.5e-5 / 1.42853
    let t = printed_tolerance("1.42853").unwrap();
    assert!((t - 0.5e-5 / 1.42853).abs() < 1e-18, "{t}");
    let t = printed_tolerance("-0.183437").unwrap();
    assert!((t - 0.5e-6 / 0.183437).abs() < 1e-18, "{t}");
    let t = printed_tolerance("1.2e-3").unwrap();
    assert!((t - 0.05e-3 / 1.2e-3).abs() < 1e-15, "{t}");
    assert_eq!(printed_tolerance("0"), None);
    let p = Comparison::printed("q", 1.428764, "1.428764", "1.42853", "s");
    assert!(p.is_strict());
    // 1.428764 is 1.6e-4 relative from 1.42853: outside the printed digits
    assert_eq!(p.verdict(), Verdict::Mismatch);
    assert!(p.tolerance_check().is_ok());
    let q = Comparison::printed("q", 1.42853, "1.42853", "1.42853", "s");
    assert_eq!(q.verdict(), Verdict::Match);
    // a 10 % tolerance on a number printed to six digits needs a stated reason
    let loose = Comparison::value("q", 1.4, "1.4", 1.42853, 0.1, "s");
    assert!(!loose.is_strict());
    assert!(loose.tolerance_check().is_err());
    let why = loose.clone().looser(0.1, "a physical reason");
    assert!(why.tolerance_check().is_ok() && !why.is_strict());
    // exact integers are strict
    let e = Comparison::value("q", 181.0, "181", 181.0, 0.0, "s");
    assert!(e.is_strict() && e.tolerance_check().is_ok());
    let o = Outcome {
        comparisons: vec![
            e,
            q,
            p,
            why,
            Comparison::claim("c", 1.0, "1", "t", None, "s"),
        ],
        not_compared: vec!["Fig. 3 (no data)".into()],
        ..Outcome::default()
    };
    assert_eq!(
        o.headline(),
        "**3 published numbers compared strictly, 2 matched; 1 compared at a stated looser \
         tolerance, 1 matched; 0 claims decided, 0 hold (1 not decided).** Not compared: \
         Fig. 3 (no data)."
    );
}

#[test]
fn ratio_verdicts_respect_caps_and_noise() {
    // exact ratios, 5 % noise: 10.6 clears 10, 9.4 misses it, 10.2 is within noise
    assert_eq!(ratio_verdict(10.6, 10.0, false, false, 0.05), Some(true));
    assert_eq!(ratio_verdict(9.4, 10.0, false, false, 0.05), Some(false));
    assert_eq!(ratio_verdict(10.2, 10.0, false, false, 0.05), None);
    // the slow run capped: a lower bound holds above the threshold, decides nothing below
    assert_eq!(ratio_verdict(12.0, 10.0, true, false, 0.0), Some(true));
    assert_eq!(ratio_verdict(4.0, 10.0, true, false, 0.0), None);
    // the fast run capped: an upper bound fails below the threshold, decides nothing above
    assert_eq!(ratio_verdict(4.0, 10.0, false, true, 0.0), Some(false));
    assert_eq!(ratio_verdict(12.0, 10.0, false, true, 0.0), None);
    assert_eq!(ratio_verdict(50.0, 10.0, true, true, 0.0), None);
    assert_eq!(
        ratio_undecided_reason(12.0, 10.0, false, true, 0.0).as_deref(),
        Some("an upper bound above 10x")
    );
}

#[test]
fn ids_are_unique_and_found() {
    let all = recipes();
    let mut ids: Vec<_> = all.iter().map(|r| r.info().id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len());
    assert!(find("permon-mprgp").is_ok());
    let e = find("nope").err().unwrap().to_string();
    assert!(e.contains("permon-mprgp"), "{e}");
}
