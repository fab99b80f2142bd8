//! The tests of `cpbench_problems::derive` (until now its `#[cfg(test)]` module in
//! `problems/src/derive.rs`).

use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::derive::*;
use cpbench_problems::error::ProblemError;
use cpbench_problems::instance::Provenance;
use cpbench_problems::instance::{Instance, ValidationOptions};
use cpbench_problems::linalg::CscMatrix;

#[test]
fn k_out_of_range_is_refused() {
    for k in [0, 1, 2, MAX_PYRAMID_K + 1] {
        assert!(matches!(
            FrictionPyramid::new(k),
            Err(ProblemError::InvalidParameter { ref name, .. }) if name == "k"
        ));
    }
    let p = FrictionPyramid::new(4).unwrap();
    assert_eq!(
        p.directions(),
        &[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]]
    );
}

#[test]
fn two_contact_matrix_entries() {
    // W: 6 x 6 with a coupling entry W(1, 5) = W(5, 1) = 0.5 (tangent 1 of contact 0 with
    // tangent 2 of contact 1), diagonal (2, 3, 3, 1, 1, 1), q = (-1, 0.5, 0, -2, 0, 0.25)
    let mut t = vec![(1, 5, 0.5), (5, 1, 0.5)];
    for (i, v) in [2.0, 3.0, 3.0, 1.0, 1.0, 1.0].into_iter().enumerate() {
        t.push((i, i, v));
    }
    let w = CscMatrix::from_triplets(6, 6, &t).unwrap();
    let q = vec![-1.0, 0.5, 0.0, -2.0, 0.0, 0.25];
    let inst = Instance::new(
        "two__ccp",
        w,
        q,
        ConstraintSet::coulomb(vec![0.5, 0.2]),
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap();
    let lcp = inst.pyramid_lcp(4).unwrap();
    assert_eq!(lcp.n(), 12);
    assert_eq!(lcp.name(), "two__lcp-pyramid-4");
    assert_eq!(lcp.provenance().derivation, "lcp-pyramid:4");
    assert_eq!(lcp.provenance().parameters["source_class"], "ccp");
    assert!(!lcp.is_symmetric());
    let m = lcp.n_mat();
    // contact 0: z = (c_n, b1..b4, lambda) at 0..6; d = +x, +y, -x, -y
    assert_eq!(m.get(0, 0), 2.0);
    assert_eq!(m.get(1, 1), 3.0); // d_1 . W_tt d_1
    assert_eq!(m.get(1, 3), -3.0); // d_1 . W_tt d_3, d_3 = -d_1
    assert_eq!(m.get(1, 2), 0.0);
    assert_eq!(m.get(1, 5), 1.0); // E
    assert_eq!(m.get(5, 1), -1.0); // -E^T
    assert_eq!(m.get(5, 0), 0.5); // mu
    assert_eq!(m.get(5, 5), 0.0);
    // coupling: beta_1 of contact 0 (row 1) with beta_2 of contact 1 (col 6 + 2):
    // d_1^0 . W(1, 5) d_2^1 = 1 * 0.5 * 1
    assert_eq!(m.get(1, 8), 0.5);
    assert_eq!(m.get(8, 1), 0.5);
    assert_eq!(m.get(3, 8), -0.5);
    assert_eq!(m.get(1, 10), -0.5);
    assert_eq!(m.get(11, 6), 0.2);
    // q_lcp = (q_n, d_j . q_t, 0)
    assert_eq!(
        lcp.r(),
        &[-1.0, 0.5, 0.0, -0.5, 0.0, 0.0, -2.0, 0.0, 0.25, 0.0, -0.25, 0.0]
    );
    // the impulse map
    let p = FrictionPyramid::new(4).unwrap();
    let z = [1.0, 0.25, 0.0, 0.0, 0.1, 9.0, 2.0, 0.0, 0.0, 0.3, 0.0, 9.0];
    assert_eq!(
        p.impulse(&z).unwrap(),
        vec![1.0, 0.25, -0.1, 2.0, -0.3, 0.0]
    );
    assert!(matches!(
        p.impulse(&z[..7]),
        Err(ProblemError::SizeMismatch { .. })
    ));
    // an LCP has no friction
    assert!(matches!(
        inst.normal_block_lcp().unwrap().pyramid_lcp(4),
        Err(ProblemError::WrongClass { .. })
    ));
}
