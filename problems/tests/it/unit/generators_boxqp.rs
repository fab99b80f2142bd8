//! The tests of `cpbench_problems::generators::boxqp` (until now its `#[cfg(test)]` module in
//! `problems/src/generators/boxqp.rs`).

use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::generators::boxqp::*;
use cpbench_problems::residual::residuals;
use std::f64::consts::PI;

#[test]
fn ex1_matches_permon_data() {
    let i = permon_ex1(100).unwrap();
    assert_eq!(i.name(), "ex1");
    assert_eq!(i.n(), 100);
    // identity boundary rows, decoupled from the interior
    let m = i.n_mat();
    assert_eq!(m.get(0, 0), 1.0);
    assert_eq!(m.get(1, 0), 0.0);
    assert_eq!(m.get(1, 1), 2.0);
    assert_eq!(m.get(1, 2), -1.0);
    assert_eq!(m.get(98, 99), 0.0);
    assert_eq!(m.nnz(), 2 + 98 + 2 * 97);
    // ||b|| = 30 h^2 sqrt(98), PERMON prints r/||b|| with this norm
    let h = 1.0 / 99.0;
    let nr = cpbench_problems::linalg::norm2(i.r());
    assert!((nr - 30.0 * h * h * 98f64.sqrt()).abs() < 1e-16);
    assert!((nr - 3.0303e-2).abs() < 1e-5);
    if let ConstraintSet::Box { lo, hi } = i.constraints() {
        assert_eq!(lo[0], 0.0);
        assert!((lo[1] - ((4.0 * PI * h - PI / 6.0).sin() / 2.0 - 2.0)).abs() < 1e-15);
        assert!(hi.iter().all(|h| *h == f64::INFINITY));
    } else {
        panic!("not a box");
    }
    assert!(permon_ex1(2).is_err());
}

#[test]
fn jbearing_is_symmetric_with_sin_rhs() {
    let i = jbearing2(8, 12, 0.1, 10.0).unwrap();
    assert_eq!(i.name(), "jbearing2-8x12");
    assert_eq!(i.n(), 96);
    assert_eq!(i.n_mat().asymmetry().0, 0.0);
    let hx = 2.0 * PI / 9.0;
    let hy = 20.0 / 13.0;
    // B_k = -ecc hx hy sin((i+1) hx), the same for every row j
    assert!((i.r()[0] + 0.1 * hx * hy * hx.sin()).abs() < 1e-15);
    assert_eq!(i.r()[0], i.r()[8]);
    // a weighted Laplacian: rows of interior nodes sum to zero (no Dirichlet neighbour),
    // rows of nodes next to the boundary are strictly diagonally dominant
    let m = i.n_mat();
    for k in 0..96 {
        let (rows, vals) = m.col(k);
        let off: f64 = rows
            .iter()
            .zip(vals)
            .filter(|(r, _)| **r != k)
            .map(|(_, v)| v.abs())
            .sum();
        let (ii, jj) = (k % 8, k / 8);
        let interior = ii > 0 && ii < 7 && jj > 0 && jj < 11;
        if interior {
            assert!((m.get(k, k) - off).abs() < 1e-12 * off, "row {k}");
        } else {
            assert!(m.get(k, k) > off * (1.0 + 1e-3), "row {k}");
        }
    }
    assert!(jbearing2(0, 3, 0.1, 10.0).is_err());
    assert!(jbearing2(3, 3, 1.5, 10.0).is_err());
}

#[test]
fn torsion_and_obstacle_bounds() {
    let t = torsion(3, 3, 5.0).unwrap();
    if let ConstraintSet::Box { lo, hi } = t.constraints() {
        // centre node (0.5, 0.5): distance 0.5; corner node (0.25, 0.25): 0.25
        assert_eq!(hi[4], 0.5);
        assert_eq!(lo[0], -0.25);
    }
    assert_eq!(t.r()[0], -5.0 / 16.0);
    let o = obstacle2d(10, 10, 1.0).unwrap();
    if let ConstraintSet::Box { lo, hi } = o.constraints() {
        assert!(lo.iter().zip(hi).all(|(l, h)| l <= h));
    }
    assert!(torsion(0, 1, 1.0).is_err());
    assert!(obstacle2d(2, 2, f64::NAN).is_err());
}

#[test]
fn random_box_qp_solution_is_exact_and_deterministic() {
    let a = random_box_qp(40, 1e3, 0.3, 7).unwrap();
    let b = random_box_qp(40, 1e3, 0.3, 7).unwrap();
    assert_eq!(a.instance.hash(), b.instance.hash());
    assert_eq!(a.active.len(), 12);
    let res = residuals(&a.instance, &a.solution);
    assert!(res.proj_grad_2 < 1e-12, "{res:?}");
    assert!(res.nat_map_abs_2 < 1e-12);
    assert_eq!(res.primal_feas, 0.0);
    // the spectrum: lambda_max = 1 (power iteration), trace = sum of lambda_i
    let tr: f64 = a.instance.n_mat().diag().iter().sum();
    let want: f64 = (0..40).map(|i| 1e3f64.powf(-(i as f64) / 39.0)).sum();
    assert!((tr - want).abs() < 1e-12);
    assert!((a.instance.n_mat().power_iteration(500) - 1.0).abs() < 1e-6);
    assert!(random_box_qp(4, 0.5, 0.1, 1).is_err());
    assert!(random_box_qp(4, 10.0, 1.5, 1).is_err());
}
