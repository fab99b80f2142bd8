//! The harness's own check of an answer (`cpbench_harness::check`).

use cpbench_harness::check::{check, CheckSpec};
use cpbench_problems::{
    ConstraintSet, CscMatrix, Instance, Provenance, ResidualKind, ValidationOptions,
};

fn lcp() -> Instance {
    // N = I, r = (1, -1): solution (0, 1)
    let m = CscMatrix::identity(2);
    Instance::new(
        "t",
        m,
        vec![1.0, -1.0],
        ConstraintSet::NonNegative,
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

#[test]
fn check_accepts_the_solution_and_rejects_wrong_answers() {
    let spec = CheckSpec {
        residual: ResidualKind::NatMapRel2,
        tol: 1e-8,
    };
    let i = lcp();
    assert!(check(&i, &[0.0, 1.0], spec).success);
    // close but not within tolerance
    assert!(!check(&i, &[0.0, 1.0 + 1e-6], spec).success);
    let v = check(&i, &[0.0, 1.0 + 1e-6], spec);
    assert_eq!(
        v.reason.as_deref(),
        Some("check: nat_map_rel_2 = 7.071e-7 > tol 1.0e-8")
    );
    // a zero natural map needs feasibility too: an infeasible point is rejected
    let v = check(&i, &[-1.0, 1.0], spec);
    assert!(!v.success);
    assert!(
        v.reason
            .as_deref()
            .unwrap()
            .contains("primal infeasible: dist(gamma, K) = 1.000e0"),
        "{:?}",
        v.reason
    );
    assert!(check(&i, &[0.0, 1.0], spec).reason.is_none());
    // NaN and wrong length
    assert!(!check(&i, &[f64::NAN, 1.0], spec).success);
    assert!(!check(&i, &[0.0], spec).success);
}
