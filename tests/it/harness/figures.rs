//! Plot titles and the cost-model note of the convergence figures (`cpbench_harness::figures`).

use cpbench_harness::figures::{mixed_cost_models, tol_title};

#[test]
fn titles_and_cost_models() {
    assert_eq!(
        tol_title(1e-6, &["nat_map_rel_2".to_string()]),
        "tol 1e-6, nat_map_rel_2"
    );
    assert_eq!(tol_title(2.5e-7, &[]), "tol 2.5e-7");
    assert!(mixed_cost_models(["pgs", "ipm"].into_iter()));
    assert!(!mixed_cost_models(["pgs", "jacobi"].into_iter()));
    assert!(!mixed_cost_models(["ipm"].into_iter()));
}
