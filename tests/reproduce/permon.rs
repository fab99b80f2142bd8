//! `permon-mprgp`: PERMON's counts exactly, jbearing2's objectives to TAO's printed digits.

use super::common::quick;
use cpbench_harness::reproduce::permon::{OBJECTIVES, PUBLISHED};
use cpbench_harness::reproduce::Verdict;

#[test]
fn permon_counts_are_matched_exactly() {
    let (done, dir) = quick("permon-mprgp");
    let cs = &done.outcome.comparisons;
    assert_eq!(cs.len(), 5 * PUBLISHED.len() + OBJECTIVES.len());
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
    assert_eq!(rows.len(), 7);
    for r in &rows {
        let count = |k: &str| -> u64 {
            r.counters
                .split(';')
                .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                .and_then(|v| v.parse::<f64>().ok())
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
    assert!(md.contains("37 of 37 published numbers matched"), "{md}");
    // a second call resumes: nothing is recomputed, the same numbers come back
    let again = cpbench_harness::reproduce::reproduce(
        cpbench_harness::reproduce::find("permon-mprgp")
            .unwrap()
            .as_ref(),
        &cpbench_harness::reproduce::Context {
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
