//! The solvers' shared kernels (`cpbench_solvers::kernels`): 3x3 blocks of `N` and their
//! eigenvalue bounds, the gather of one block, and the class checks.

use cpbench_problems::{ConstraintSet, CscMatrix, Instance, ProblemClass};
use cpbench_solvers::kernels::{
    check_class, coulomb_mu, diag_block3, gather_block, lambda_max, lambda_max3, sym_part3,
    trace_mean, trace_mean3,
};
use cpbench_solvers::SolverError;

#[test]
fn block_eigen_bounds() {
    // N = diag-block [[2, 1, 0], [1, 2, 0], [0, 0, 1]] plus a second contact
    let t = [
        (0, 0, 2.0),
        (0, 1, 1.0),
        (1, 0, 1.0),
        (1, 1, 2.0),
        (2, 2, 1.0),
        (3, 3, 4.0),
        (4, 4, 5.0),
        (5, 5, 6.0),
        (0, 3, 0.5),
        (3, 0, 0.5),
    ];
    let n = CscMatrix::from_triplets(6, 6, &t).unwrap();
    let b = diag_block3(&n, 0);
    assert_eq!(b, [2.0, 1.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 1.0]);
    assert!((lambda_max3(&b) - 3.0).abs() < 1e-14);
    assert!((trace_mean3(&b) - 5.0 / 3.0).abs() < 1e-15);
    assert_eq!(lambda_max(&b, 3), lambda_max3(&b));
    // 2x2 [[2, 1], [1, 2]] (row-major in the first 4 entries): eigenvalues 1 and 3
    let b2 = [2.0, 1.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    assert!((lambda_max(&b2, 2) - 3.0).abs() < 1e-15);
    assert_eq!(trace_mean(&b2, 2), 2.0);
    // [[4, 0], [0, 1]]: 4
    let b2 = [4.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(lambda_max(&b2, 2), 4.0);
    let b1 = diag_block3(&n, 1);
    assert_eq!(lambda_max3(&b1), 6.0);
    let ns = [1.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    assert_eq!(sym_part3(&ns)[1], 1.0);
    assert_eq!(sym_part3(&ns)[3], 1.0);
    // (N x + r) rows 0..3 and 3..6 with x = (1, 0, 0, 2, 0, 0), r = 1
    let (x, r) = ([1.0, 0.0, 0.0, 2.0, 0.0, 0.0], [1.0; 6]);
    let mut g = [0.0; 3];
    gather_block(&n, &r, &x, 0, &mut g);
    assert_eq!(g, [4.0, 2.0, 1.0]);
    gather_block(&n, &r, &x, 3, &mut g);
    assert_eq!(g, [9.5, 1.0, 1.0]);
    let mut g1 = [0.0; 1];
    gather_block(&n, &r, &x, 4, &mut g1);
    assert_eq!(g1, [1.0]);
}

#[test]
fn class_check_names_the_supported_classes() {
    use cpbench_problems::{Provenance, ValidationOptions};
    use cpbench_solvers::nsgs::{Nsgs, NsgsSettings};
    use cpbench_solvers::pgs::{Pgs, PgsSettings};
    let pgs = Pgs::new(PgsSettings::default()).unwrap();
    assert!(check_class(&pgs, ProblemClass::Ccp).is_ok());
    let e = check_class(&pgs, ProblemClass::Coulomb).unwrap_err();
    assert_eq!(
        e.to_string(),
        "pgs does not support class coulomb (supported: lcp, box, ccp, blcp)"
    );
    let w = CscMatrix::from_triplets(3, 3, &[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0)]).unwrap();
    let (q, mu) = (vec![-1.0, 0.0, 0.0], vec![0.3]);
    let (p, o) = (Provenance::default(), ValidationOptions::default());
    let coulomb =
        Instance::new_coulomb("c", w.clone(), q.clone(), mu.clone(), p.clone(), o).unwrap();
    let ccp = Instance::new("k", w, q, ConstraintSet::coulomb(mu), p, o).unwrap();
    let nsgs = Nsgs::new(NsgsSettings::default()).unwrap();
    assert_eq!(coulomb_mu(&nsgs, &coulomb).unwrap(), &[0.3]);
    let e = coulomb_mu(&nsgs, &ccp).unwrap_err();
    assert!(matches!(
        &e,
        SolverError::WrongClass { solver: "nsgs", class: ProblemClass::Ccp, supported }
            if supported == &[ProblemClass::Coulomb]
    ));
    assert_eq!(
        e.to_string(),
        "nsgs does not support class ccp (supported: coulomb)"
    );
}
