//! `permon-mprgp`: PERMON's counts exactly, jbearing2's objectives to TAO's printed digits,
//! jbearing2_5's MPGP monitor line by line (step kinds exactly, the three gradient norms to
//! their 11 printed digits) and ex1's KKT lines to their 3 printed digits.

use super::common::quick;
use cpbench_reproduce::permon::{mpgp_lines, OBJECTIVES, PUBLISHED};
use cpbench_reproduce::Verdict;

#[test]
fn permon_counts_are_matched_exactly() {
    let (done, dir) = quick("permon-mprgp");
    let cs = &done.outcome.comparisons;
    // jbearing2_5: 5 counts and jbearing2_2's objective, ||gp|| of the start, then per
    // iteration 1..34 the step kind and the three norms; ex1's 5 KKT numbers
    let lines = mpgp_lines();
    assert_eq!(lines.len(), 35);
    assert_eq!(lines[34].0, 34);
    assert_eq!(
        cs.len(),
        5 * PUBLISHED.len() + OBJECTIVES.len() + 6 + 1 + 4 * 34 + 5
    );
    assert!(
        cs.iter().all(|c| c.is_strict()),
        "every comparison is strict"
    );
    for c in cs {
        assert_eq!(
            c.verdict(),
            Verdict::Match,
            "{}: ours {}",
            c.quantity,
            c.ours_text
        );
    }
    // ex1 with PERMON's default settings: 181 iterations, 200 Hessian multiplications
    let it = cs
        .iter()
        .find(|c| c.quantity == "iterations, ex1, `mprgp:permon`")
        .unwrap();
    assert_eq!(it.ours, 181.0);
    // the power method's products come on top of PERMON's Hessian multiplications
    let rows = cpbench_harness::results::read_summary(&dir.path().join("summary.csv")).unwrap();
    assert_eq!(rows.len(), 8);
    for r in &rows {
        let count = |k: &str| -> u64 {
            r.counters
                .get(k)
                .unwrap_or_else(|| panic!("{}: no counter {k} in {}", r.solver, r.counters))
                as u64
        };
        assert_eq!(
            count("hessian_mults") + count("power_matvecs"),
            r.matvecs,
            "{}",
            r.solver
        );
    }
    let md = std::fs::read_to_string(dir.path().join("reproduce.md")).unwrap();
    assert!(
        md.contains("**185 published numbers compared strictly, 185 matched"),
        "{md}"
    );
    // iteration 1 is a proportioning step with ||gf|| = 2.5793945410e-01, to 11 digits
    let gf1 = cs
        .iter()
        .find(|c| c.quantity == "||gf|| at iteration 1, jbearing2_5")
        .unwrap();
    assert!(
        (gf1.ours - 2.5793945410e-01).abs() <= 0.5e-11,
        "{}",
        gf1.ours
    );
    // a second call resumes: nothing is recomputed, the same numbers come back
    let again = cpbench_reproduce::reproduce(
        cpbench_reproduce::find("permon-mprgp").unwrap().as_ref(),
        &cpbench_reproduce::Context {
            out: dir.path().to_path_buf(),
            quick: true,
            rerun: false,
            progress: false,
            repeat: 1,
        },
    )
    .unwrap();
    assert_eq!(again.outcome.comparisons, done.outcome.comparisons);
}
