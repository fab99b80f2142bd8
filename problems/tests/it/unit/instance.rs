//! The tests of `cpbench_problems::instance` (until now its `#[cfg(test)]` module in
//! `problems/src/instance.rs`).

use cpbench_problems::constraints::{ConstraintSet, ProblemClass};
use cpbench_problems::error::ProblemError;
use cpbench_problems::instance::*;
use cpbench_problems::linalg::CscMatrix;

fn sym2() -> CscMatrix {
    CscMatrix::from_triplets(2, 2, &[(0, 0, 2.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 2.0)]).unwrap()
}

#[test]
fn validation_errors() {
    let p = Provenance::default();
    let o = ValidationOptions::default();
    let lcp = |n: CscMatrix, r: Vec<f64>| {
        Instance::new("x", n, r, ConstraintSet::NonNegative, p.clone(), o)
    };
    let a = CscMatrix::from_triplets(2, 3, &[]).unwrap();
    assert!(matches!(
        lcp(a, vec![0.0; 2]),
        Err(ProblemError::NotSquare { .. })
    ));
    assert!(matches!(
        lcp(sym2(), vec![0.0; 3]),
        Err(ProblemError::SizeMismatch { .. })
    ));
    assert!(matches!(
        lcp(sym2(), vec![0.0, f64::NAN]),
        Err(ProblemError::NonFinite { .. })
    ));
    let asym = CscMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (0, 1, 1.0), (1, 1, 1.0)]).unwrap();
    // a box QP needs a symmetric N
    let e = Instance::new(
        "x",
        asym.clone(),
        vec![0.0; 2],
        ConstraintSet::Box {
            lo: vec![0.0; 2],
            hi: vec![1.0; 2],
        },
        p.clone(),
        o,
    );
    assert!(
        matches!(e, Err(ProblemError::Asymmetric { row: 0, col: 1, .. })),
        "{e:?}"
    );
    // a general LCP keeps it as read, and multiplies with N, not N^T
    let g = lcp(asym.clone(), vec![0.0; 2]).unwrap();
    assert!(!g.is_symmetric());
    assert_eq!(g.provenance().parameters["asymmetry"], "5.774e-1");
    let mut y = [0.0; 2];
    g.matvec(&[1.0, 2.0], &mut y);
    assert_eq!(y, [3.0, 2.0]);
    let s = Instance::new(
        "x",
        asym,
        vec![0.0; 2],
        ConstraintSet::NonNegative,
        p,
        ValidationOptions {
            symmetrize: true,
            ..o
        },
    )
    .unwrap();
    assert_eq!(s.n_mat().get(1, 0), 0.5);
    assert!(s.provenance().symmetrized_from.unwrap() > 0.5);
}

#[test]
fn objective_and_hash() {
    let i = Instance::new(
        "x",
        sym2(),
        vec![-1.0, 1.0],
        ConstraintSet::NonNegative,
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap();
    // f(1, 2) = 1/2 (2 + 4 + 8) + (-1 + 2) = 8
    assert_eq!(i.objective(&[1.0, 2.0]), 8.0);
    assert_eq!(i.hash().len(), 64);
    let j = i.clone().with_name("y");
    assert_eq!(i.hash(), j.hash());
}

#[test]
fn coulomb_keeps_a_nonsymmetric_w_and_multiplies_exactly() {
    // W = [[2, 1, 0], [0, 2, 0], [0, 0, 1]] (W[0][1] = 1, W[1][0] = 0)
    let w = CscMatrix::from_triplets(3, 3, &[(0, 0, 2.0), (0, 1, 1.0), (1, 1, 2.0), (2, 2, 1.0)])
        .unwrap();
    let coulomb = |options| {
        let (r, mu) = (vec![1.0, 0.0, 0.0], vec![0.5]);
        Instance::new_coulomb("c", w.clone(), r, mu, Provenance::default(), options).unwrap()
    };
    let i = coulomb(ValidationOptions::default());
    assert_eq!(i.class(), ProblemClass::Coulomb);
    assert!(!i.is_symmetric());
    assert!(i.provenance().parameters.contains_key("asymmetry"));
    let mut g = [0.0; 3];
    i.gradient(&[1.0, 1.0, 1.0], &mut g);
    assert_eq!(g, [4.0, 2.0, 1.0]);
    // the CCP relaxation needs a symmetric N
    assert!(matches!(
        i.ccp_relaxation(),
        Err(ProblemError::Asymmetric { .. })
    ));
    // with symmetrize: (W + W^T)/2, and the class differs from the CCP's in the hash
    let s = coulomb(ValidationOptions {
        symmetrize: true,
        ..Default::default()
    });
    assert!(s.is_symmetric() && s.n_mat().get(1, 0) == 0.5);
    let ccp = s.ccp_relaxation().unwrap();
    assert_eq!(ccp.class(), ProblemClass::Ccp);
    assert_ne!(ccp.hash(), s.hash());
    assert_eq!(ccp.clone().into_coulomb().unwrap().hash(), s.hash());
}
