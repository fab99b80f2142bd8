//! The tests of `cpbench_problems::constraints::friction_box` (until now its `#[cfg(test)]` module in
//! `problems/src/constraints/friction_box.rs`).

use cpbench_problems::constraints::friction_box::*;
use cpbench_problems::constraints::ConstraintSet;

#[test]
fn ode_clamp_uses_the_new_normal() {
    let mut x = [-1.0, 0.5, -0.2];
    clamp_friction_box(&mut x, 0.5);
    assert_eq!(x, [0.0, 0.0, 0.0]);
    let mut x = [2.0, 1.5, -0.2];
    clamp_friction_box(&mut x, 0.5);
    assert_eq!(x, [2.0, 1.0, -0.2]);
    // the box, not the cone: a corner (1, 1) mu x_n is feasible
    let mut x = [2.0, 1.0, -1.0];
    clamp_friction_box(&mut x, 0.5);
    assert_eq!(x, [2.0, 1.0, -1.0]);
    // bounds frozen at another normal value
    let mut y = [3.0, 1.5, -4.0];
    clamp_at(&mut y, 2.0, 0.5);
    assert_eq!(y, [3.0, 1.0, -1.0]);
    let mut y = [3.0, 1.5, -4.0];
    clamp_at(&mut y, -2.0, 0.5);
    assert_eq!(y, [3.0, 0.0, 0.0]);
}

/// The projected gradient of the one block of a friction box set with friction `mu`.
fn projected_gradient(x: &[f64], g: &[f64], mu: f64) -> [f64; 3] {
    let mut out = [0.0; 3];
    ConstraintSet::FrictionBox { mu: vec![mu] }.projected_gradient_block(0, x, g, &mut out);
    out
}

#[test]
fn projected_gradient_per_bound() {
    let mu = 0.5;
    // x_n = 2: bounds [-1, 1]; t1 at the upper bound, t2 free
    let p = projected_gradient(&[2.0, 1.0, 0.3], &[0.7, -0.4, 0.25], mu);
    assert_eq!(p, [0.7, 0.0, 0.25]);
    let p = projected_gradient(&[2.0, 1.0, -1.0], &[0.7, 0.4, 0.25], mu);
    assert_eq!(p, [0.7, 0.4, 0.0]);
    // x_n = 0: normal at its bound, tangents fixed
    let p = projected_gradient(&[0.0, 0.0, 0.0], &[0.7, 0.4, -0.25], mu);
    assert_eq!(p, [0.0, 0.0, 0.0]);
    let p = projected_gradient(&[0.0, 0.0, 0.0], &[-0.7, 0.4, -0.25], mu);
    assert_eq!(p, [-0.7, 0.0, 0.0]);
}
