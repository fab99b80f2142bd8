//! The contact formulations of the recipes (`cpbench_reproduce::formulations`): the
//! regularised CCP and one contact solved through every formulation.

use cpbench_granular::ContactSolver;
use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::io::ClassChoice;
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::Provenance;
use cpbench_problems::{Instance, ValidationOptions};
use cpbench_reproduce::formulations::{regularized_ccp, Formulation, FormulationSolver};
use cpbench_solvers::ExecSettings;

fn one_contact() -> Instance {
    #[rustfmt::skip]
    let t = [(0, 0, 2.0), (1, 1, 4.0), (2, 2, 6.0), (0, 1, 0.5), (1, 0, 0.5)];
    Instance::new(
        "one__ccp",
        CscMatrix::from_triplets(3, 3, &t).unwrap(),
        vec![-1.0, 0.5, 0.0],
        ConstraintSet::coulomb(vec![0.5]),
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

#[test]
fn regularization_adds_the_mean_diagonal_times_eps() {
    let inst = one_contact();
    let reg = regularized_ccp(&inst, 1e-3, 1e-5).unwrap();
    let m = reg.n_mat();
    assert_eq!(m.get(0, 0), 2.0 + 4e-3);
    assert_eq!(m.get(2, 2), 6.0 + 4e-3);
    assert_eq!(m.get(0, 1), 0.5);
    let floor = regularized_ccp(&inst, 0.0, 1e-5).unwrap();
    assert_eq!(floor.n_mat().get(1, 1), 4.0 + 1e-5);
    assert!(regularized_ccp(&inst, -1.0, 0.0).is_err());
    let lcp = inst.normal_block_lcp().unwrap();
    assert!(regularized_ccp(&lcp, 1e-3, 0.0).is_err());
}

#[test]
fn every_formulation_solves_one_contact_to_the_same_sticking_impulse() {
    // sticking: gamma = -N^-1 r lies inside the cone
    let inst = one_contact();
    let exec = ExecSettings {
        tol: 1e-12,
        ..ExecSettings::default()
    };
    let det: f64 = 2.0 * 4.0 - 0.25;
    let want: [f64; 3] = [
        (4.0 * 1.0 + 0.5 * 0.5) / det,
        (-2.0 * 0.5 - 0.5 * 1.0) / det,
        0.0,
    ];
    assert!(want[1].abs() <= 0.5 * want[0]);
    for (f, s) in [
        (Formulation::Class(ClassChoice::Ccp), "pgs"),
        (Formulation::Class(ClassChoice::Coulomb), "nsgs"),
        (Formulation::Class(ClassChoice::Blcp), "pgs"),
        (
            Formulation::Class(ClassChoice::LcpPyramid { k: 4 }),
            "lemke",
        ),
    ] {
        let mut fs = FormulationSolver::new(f, s, None, exec.clone()).unwrap();
        let sol = fs.solve(&inst, Some(&[0.1, 0.0, 0.0])).unwrap();
        assert_eq!(sol.gamma.len(), 3, "{}", f.label());
        for (g, w) in sol.gamma.iter().zip(want) {
            assert!((g - w).abs() < 1e-9, "{}: {:?}", f.label(), sol.gamma);
        }
    }
    assert!(!Formulation::Class(ClassChoice::LcpPyramid { k: 4 }).shares_impulses());
    assert_eq!(Formulation::HORAK_TRINKLE_CONVEX.label(), "ccp+reg(1e-3)");
}
