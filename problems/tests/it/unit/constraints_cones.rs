//! The tests of `cpbench_problems::constraints::cones` (until now its `#[cfg(test)]` module in
//! `problems/src/constraints/cones.rs`).

use cpbench_problems::constraints::cones::*;

fn proj(x: [f64; 3], mu: f64) -> [f64; 3] {
    let mut y = x;
    project_coulomb_cone(&mut y, mu);
    y
}

#[test]
fn cone_projection_three_cases() {
    // inside
    assert_eq!(proj([1.0, 0.3, 0.4], 0.5), [1.0, 0.3, 0.4]);
    // polar cone: mu t <= -x_n
    assert_eq!(proj([-1.0, 0.3, 0.4], 0.5), [0.0, 0.0, 0.0]);
    // surface: x = (0, 3, 4), mu = 1: x_n' = 5/2, x_t' = (1.5, 2)
    let p = proj([0.0, 3.0, 4.0], 1.0);
    assert!((p[0] - 2.5).abs() < 1e-15 && (p[1] - 1.5).abs() < 1e-15 && (p[2] - 2.0).abs() < 1e-15);
}

#[test]
fn cone_projection_mu_zero() {
    assert_eq!(proj([2.0, 1.0, -1.0], 0.0), [2.0, 0.0, 0.0]);
    assert_eq!(proj([-2.0, 1.0, -1.0], 0.0), [0.0, 0.0, 0.0]);
}

fn proj2(x: [f64; 2], mu: f64) -> [f64; 2] {
    let mut y = x;
    project_coulomb_cone(&mut y, mu);
    y
}

#[test]
fn cone2_projection_three_cases() {
    // inside (|x_t| <= mu x_n), both signs of the tangent
    assert_eq!(proj2([1.0, 0.3], 0.5), [1.0, 0.3]);
    assert_eq!(proj2([1.0, -0.5], 0.5), [1.0, -0.5]);
    // polar cone: mu |x_t| <= -x_n
    assert_eq!(proj2([-1.0, 0.3], 0.5), [0.0, 0.0]);
    assert_eq!(proj2([-1.0, -2.0], 0.5), [0.0, 0.0]);
    // surface: x = (0, 2), mu = 1: x_n' = 1, x_t' = 1; x = (1, -3), mu = 0.5:
    // x_n' = (1 + 1.5) / 1.25 = 2, x_t' = -1
    assert_eq!(proj2([0.0, 2.0], 1.0), [1.0, 1.0]);
    let p = proj2([1.0, -3.0], 0.5);
    assert!(
        (p[0] - 2.0).abs() < 1e-15 && (p[1] + 1.0).abs() < 1e-15,
        "{p:?}"
    );
    // mu = 0: the half-line
    assert_eq!(proj2([2.0, 1.0], 0.0), [2.0, 0.0]);
    assert_eq!(proj2([-2.0, 1.0], 0.0), [0.0, 0.0]);
    // the 2-D projection is the 3-D one with a zero second tangent
    for x in [[0.3, -1.7], [-0.2, 0.9], [2.0, 0.1], [0.0, -4.0]] {
        let p2 = proj2(x, 0.7);
        let p3 = proj([x[0], x[1], 0.0], 0.7);
        assert!((p2[0] - p3[0]).abs() < 1e-15 && (p2[1] - p3[1]).abs() < 1e-15);
        assert_eq!(p3[2], 0.0);
    }
}

#[test]
fn cone2_projection_is_orthogonal_and_dual_is_polar() {
    // Moreau: x = P_K(x) - P_{K^*}(-x), <P_K(x), P_{K^*}(-x)> = 0, for several x
    for (x, mu) in [([0.2, -1.3], 0.4), ([1.0, 3.0], 2.0), ([-0.5, 0.1], 0.3)] {
        let p = proj2(x, mu);
        let mut q = [-x[0], -x[1]];
        project_dual_coulomb_cone(&mut q, mu);
        assert!((p[0] - q[0] - x[0]).abs() < 1e-14 && (p[1] - q[1] - x[1]).abs() < 1e-14);
        assert!((p[0] * q[0] + p[1] * q[1]).abs() < 1e-14);
        let d = [x[0] - p[0], x[1] - p[1]];
        assert!((d[0] * p[0] + d[1] * p[1]).abs() < 1e-14);
        assert!(p[1].abs() <= mu * p[0] * (1.0 + 1e-15));
    }
}

#[test]
fn cone2_projected_gradient_cases() {
    let mu = 0.5;
    // interior: g
    assert_eq!(
        cone_projected_gradient(&[1.0, 0.1], &[3.0, -2.0], mu),
        [3.0, -2.0, 0.0]
    );
    // apex: -P_K(-g); g = (1, 0) points into K^*: 0... -g = (-1, 0) in the polar cone -> 0
    assert_eq!(
        cone_projected_gradient(&[0.0, 0.0], &[1.0, 0.0], mu),
        [0.0, 0.0, 0.0]
    );
    // apex, g = (-1, 0): -P_K(1, 0) = (-1, 0)
    assert_eq!(
        cone_projected_gradient(&[0.0, 0.0], &[-1.0, 0.0], mu),
        [-1.0, 0.0, 0.0]
    );
    // surface x = (2, 1) (x_t = mu x_n): a = (-0.5, 1); g = (0, -1): a.g = -1 < 0, so
    // g + (1 / 1.25) a = (-0.4, -0.2): tangent to the surface (a . result = 0)
    let p = cone_projected_gradient(&[2.0, 1.0], &[0.0, -1.0], mu);
    assert!(
        (p[0] + 0.4).abs() < 1e-15 && (p[1] + 0.2).abs() < 1e-15,
        "{p:?}"
    );
    // surface, g pointing inwards (a.g > 0): unchanged
    assert_eq!(
        cone_projected_gradient(&[2.0, 1.0], &[0.0, 1.0], mu),
        [0.0, 1.0, 0.0]
    );
    // mirrored surface x = (2, -1): g = (0, 1) -> (-0.4, 0.2)
    let p = cone_projected_gradient(&[2.0, -1.0], &[0.0, 1.0], mu);
    assert!(
        (p[0] + 0.4).abs() < 1e-15 && (p[1] - 0.2).abs() < 1e-15,
        "{p:?}"
    );
}

#[test]
fn cone_projection_is_orthogonal() {
    // x - P(x) is orthogonal to P(x) and lies in the polar cone: check <x - p, p> = 0.
    let x = [0.2, -1.3, 0.7];
    let p = proj(x, 0.4);
    let d: Vec<f64> = x.iter().zip(&p).map(|(a, b)| a - b).collect();
    let ip: f64 = d.iter().zip(&p).map(|(a, b)| a * b).sum();
    assert!(ip.abs() < 1e-14);
    let t = p[1].hypot(p[2]);
    assert!((t - 0.4 * p[0]).abs() < 1e-14);
}
