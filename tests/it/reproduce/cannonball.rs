//! `chrono-cannonball`: the quick pyramid (6 layers, 20 steps) with Chrono's five solver
//! runs: every step within the cap, APGD below Jacobi and GS in mean iterations.

use super::common::quick;
use cpbench_reproduce::cannonball::{size, MAX_ITER, SOLVERS};
use cpbench_reproduce::sim::{read_steps, trace_path};
use cpbench_reproduce::Verdict;

#[test]
fn cannonball_quick_runs_every_solver_within_the_cap() {
    let (done, dir) = quick("chrono-cannonball");
    let (layers, steps) = size(true);
    let case = format!("pyramid-{layers}");
    let mut mean = std::collections::BTreeMap::new();
    for (_, label, _, _) in SOLVERS {
        let rows = read_steps(&trace_path(dir.path(), &case, label)).unwrap();
        assert_eq!(rows.len() as u64, steps, "{label}");
        // the pyramid is in contact from the first step: every step has a problem
        assert!(rows.iter().all(|r| r.contacts > 0), "{label}");
        assert!(rows.iter().all(|r| r.iterations <= MAX_ITER), "{label}");
        let m = rows.iter().map(|r| r.iterations as f64).sum::<f64>() / rows.len() as f64;
        mean.insert(label, m);
    }
    assert!(mean["apgd"] < mean["jacobi"], "{mean:?}");
    assert!(mean["apgd"] < mean["gs"], "{mean:?}");
    // the abstract's claim, quoted verbatim, on its measure (time to simulate, GS / APGD);
    // one timed repeat decides nothing by time
    let cs = &done.outcome.comparisons;
    assert_eq!(cs.len(), 1);
    assert_eq!(cs[0].verdict(), Verdict::ClaimOpen, "{}", cs[0].ours_text);
    assert!(cs[0].ours.is_finite() && cs[0].ours > 0.0);
    assert!(
        cs[0]
            .ours_text
            .contains("decides nothing (fewer than 3 timed repeats: 1)"),
        "{}",
        cs[0].ours_text
    );
    match &cs[0].published {
        cpbench_reproduce::Published::Claim { text, .. } => {
            assert!(text.contains("compared to the traditional Gauss-Seidel approach"))
        }
        p => panic!("{p:?}"),
    }
    // six Chrono solvers in the table (APGDREF repeats APGD's run)
    assert_eq!(done.outcome.tables[0].rows.len(), 6);
    let summary = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + SOLVERS.len());
}
