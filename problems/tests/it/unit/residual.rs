//! The tests of `cpbench_problems::residual` (until now its `#[cfg(test)]` module in
//! `problems/src/residual.rs`).

use cpbench_problems::instance::Instance;
use cpbench_problems::instance::{Provenance, ValidationOptions};
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::residual::*;
use cpbench_problems::ConstraintSet;

fn inst(n_dense: &[f64], n: usize, r: Vec<f64>, k: ConstraintSet) -> Instance {
    let m = CscMatrix::from_dense_col_major(n, n, n_dense).unwrap();
    Instance::new(
        "t",
        m,
        r,
        k,
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

#[test]
fn json_names_are_the_cli_names_and_old_names_still_read() {
    for k in ResidualKind::ALL {
        let j = serde_json::to_value(k).unwrap();
        assert_eq!(j, serde_json::Value::from(k.as_str()));
        assert_eq!(serde_json::from_value::<ResidualKind>(j).unwrap(), k);
    }
    for (old, k) in [
        ("nat_map_rel2", ResidualKind::NatMapRel2),
        ("nat_map_abs2", ResidualKind::NatMapAbs2),
        ("nat_map_rel_max1", ResidualKind::NatMapRelMax1),
    ] {
        let v = serde_json::Value::from(old);
        assert_eq!(serde_json::from_value::<ResidualKind>(v).unwrap(), k);
    }
}

#[test]
fn heyn_residual_3_takes_the_largest_violation_per_contact() {
    // N = I, one cone with mu = 0.5; gamma = (1, 0.6, 0), r chosen so that g = N gamma + r
    // = (0.2, 0.3, 0): cone violation 0.6 - 0.5 = 0.1, dual 0.3 - 0.2 / 0.5 = -0.1,
    // complementarity 1 * 0.2 + 0.6 * 0.3 = 0.38 -> res3 = 0.38
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let k = ConstraintSet::coulomb(vec![0.5]);
    let i = inst(&eye, 3, vec![-0.8, -0.3, 0.0], k.clone());
    let res = residuals(&i, &[1.0, 0.6, 0.0]);
    assert!((res.res3 - 0.38).abs() < 1e-15, "{}", res.res3);
    assert_eq!(res.get(ResidualKind::Res3), res.res3);
    // a contact separating (gamma = 0, g_n > 0, g_t small) and a stuck one inside the
    // cone with g = 0: res3 = 0
    let i = inst(&eye, 3, vec![1.0, 0.1, 0.0], k.clone());
    assert_eq!(residuals(&i, &[0.0, 0.0, 0.0]).res3, 0.0);
    // dual violation dominates: gamma = 0, g = (0.1, 0.4, 0) -> 0.4 - 0.2 = 0.2
    let i = inst(&eye, 3, vec![0.1, 0.4, 0.0], k);
    assert!((residuals(&i, &[0.0, 0.0, 0.0]).res3 - 0.2).abs() < 1e-15);
    // LCP: z = (2, 0), w = z + r = (0.5, -0.25): max(-w_2, |z_1 w_1|) = 1
    let i = inst(
        &[1.0, 0.0, 0.0, 1.0],
        2,
        vec![-1.5, -0.25],
        ConstraintSet::NonNegative,
    );
    assert!((residuals(&i, &[2.0, 0.0]).res3 - 1.0).abs() < 1e-15);
    assert_eq!(ResidualKind::parse("res3"), Some(ResidualKind::Res3));
}

#[test]
fn lcp_known_solution_has_zero_residuals() {
    // N = [[2,1],[1,2]], r = (-5, -6): z = (4/3, 7/3), w = 0 (interior) -> all zero
    let i = inst(
        &[2.0, 1.0, 1.0, 2.0],
        2,
        vec![-5.0, -6.0],
        ConstraintSet::NonNegative,
    );
    let z = [4.0 / 3.0, 7.0 / 3.0];
    let res = residuals(&i, &z);
    assert!(res.nat_map_abs_2 < 1e-14 && res.proj_grad_2 < 1e-14 && res.res4 < 1e-12);
    assert!(res.complementarity < 1e-14 && res.dual_feas < 1e-14 && res.primal_feas == 0.0);
    // f = 1/2 z.r
    assert!((res.objective - 0.5 * (4.0 / 3.0 * -5.0 + 7.0 / 3.0 * -6.0)).abs() < 1e-14);
}

#[test]
fn lcp_residuals_of_a_wrong_point() {
    // N = I, r = (1, -1): solution z = (0, 1). At z = (1, 0): g = (2, -1).
    let i = inst(
        &[1.0, 0.0, 0.0, 1.0],
        2,
        vec![1.0, -1.0],
        ConstraintSet::NonNegative,
    );
    let res = residuals(&i, &[1.0, 0.0]);
    // z - max(0, z - g) = (1 - 0, 0 - 1) = (1, -1)
    assert!((res.nat_map_abs_2 - 2f64.sqrt()).abs() < 1e-15);
    assert_eq!(res.nat_map_abs_inf, 1.0);
    assert!((res.nat_map_rel_2 - 1.0).abs() < 1e-15);
    assert!((res.nat_map_rel_max1_2 - 1.0).abs() < 1e-15);
    // g^P = (2, min(-1, 0)) -> norm sqrt(5)
    assert!((res.proj_grad_2 - 5f64.sqrt()).abs() < 1e-15);
    assert_eq!(res.dual_feas, 1.0);
    assert_eq!(res.complementarity, 2.0);
    assert_eq!(res.complementarity_max, 2.0);
    // Res4, eps = 1/4: (z - max(0, z - g/4)) * 4 = ((1 - 0.5) * 4, (0 - 0.25) * 4) = (2, -1)
    assert!((res.res4 - 5f64.sqrt()).abs() < 1e-14);
    // infeasible point
    let res = residuals(&i, &[-1.0, 0.0]);
    assert_eq!(res.primal_feas, 1.0);
}

#[test]
fn box_qp_known_solution() {
    // N = I, r = (-3, 3, 0), box [-1, 1]^3: solution (1, -1, 0), g = (-2, 2, 0)
    let k = ConstraintSet::Box {
        lo: vec![-1.0; 3],
        hi: vec![1.0; 3],
    };
    let i = inst(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        3,
        vec![-3.0, 3.0, 0.0],
        k,
    );
    let res = residuals(&i, &[1.0, -1.0, 0.0]);
    assert!(res.nat_map_abs_2 == 0.0 && res.proj_grad_2 == 0.0 && res.complementarity == 0.0);
    assert_eq!(res.objective, 0.5 * 2.0 - 3.0 - 3.0);
    // a wrong interior point has g^P = g
    let res = residuals(&i, &[0.0, 0.0, 0.0]);
    assert!((res.proj_grad_2 - 18f64.sqrt()).abs() < 1e-14);
}

#[test]
fn one_contact_cone_sticking_and_sliding() {
    // N = I3, r = (-1, 0.2, 0), mu = 0.5: unconstrained minimiser (1, -0.2, 0) is inside
    // the cone (0.2 <= 0.5): sticking, g = 0.
    let k = ConstraintSet::coulomb(vec![0.5]);
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let i = inst(&eye, 3, vec![-1.0, 0.2, 0.0], k.clone());
    let res = residuals(&i, &[1.0, -0.2, 0.0]);
    assert!(res.nat_map_abs_2 < 1e-15 && res.proj_grad_2 < 1e-15);
    // r = (-1, 2, 0): minimiser is P_K((1, -2, 0)) = ((1 + 1)/1.25, ...) on the surface
    let i = inst(&eye, 3, vec![-1.0, 2.0, 0.0], k);
    let xn = 2.0 / 1.25;
    let x = [xn, -0.5 * xn, 0.0];
    let res = residuals(&i, &x);
    assert!(res.nat_map_abs_2 < 1e-15, "{res:?}");
    assert!(res.proj_grad_2 < 1e-15, "{res:?}");
    assert!(
        res.complementarity < 1e-15 && res.dual_feas < 1e-15,
        "{res:?}"
    );
}
