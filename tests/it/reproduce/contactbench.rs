//! `le-lidec2024-contactbench`: the fidelity criteria per formulation on ContactBench's
//! sliding cube and two cubes and on the sliding ball, as the relaxations imply them: the
//! Coulomb answer meets all, the CCP lifts the sliding cube and ball, the boxed LCP leaves the
//! cone on the cube (slip not along a box axis) but not on the ball (slip along x), the pyramid
//! LCP is not maximally dissipative on the cube; nothing published is compared.

use super::common::quick;

/// The five criteria of the row (`problem` prefix, formulation), as printed.
fn criteria(rows: &[Vec<String>], problem: &str, formulation: &str) -> [f64; 5] {
    let r = rows
        .iter()
        .find(|r| r[0].starts_with(problem) && r[1] == formulation)
        .unwrap_or_else(|| panic!("{problem} {formulation}"));
    let v: Vec<f64> = r[6..11].iter().map(|c| c.parse().unwrap()).collect();
    v.try_into().unwrap()
}

#[test]
fn each_relaxation_violates_its_criterion() {
    let (done, _dir) = quick("le-lidec2024-contactbench");
    let o = &done.outcome;
    assert!(o.comparisons.is_empty() && o.not_compared.len() == 1);
    let rows = &o.tables[0].rows;
    assert_eq!(rows.len(), 3 * 5);
    // [signorini, ncp_desaxce, mdp_gap, spurious_velocity, cone_violation]
    for p in ["sliding_cube", "2cubes_t0", "ball"] {
        let c = criteria(rows, p, "coulomb");
        assert!(c.iter().all(|v| *v < 1e-8), "{p}: {c:?}");
    }
    for p in ["sliding_cube", "ball"] {
        let c = criteria(rows, p, "ccp");
        assert!(c[3] > 0.1 && c[0] > 1e-2 && c[4] < 1e-12, "{p}: {c:?}");
    }
    let c = criteria(rows, "sliding_cube", "blcp");
    assert!(c[4] > 1e-3 && c[3] < 1e-8, "{c:?}");
    let c = criteria(rows, "ball", "blcp");
    assert!(c.iter().all(|v| *v < 1e-12), "{c:?}");
    let c = criteria(rows, "sliding_cube", "lcp-pyramid:4");
    assert!(c[2] > 1e-5 && c[4] < 1e-12, "{c:?}");
}
