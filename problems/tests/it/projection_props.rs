//! Property tests of the Coulomb-cone projection (docs/formulation.md section 3): idempotence,
//! non-expansiveness, the variational characterisation `<x - P(x), y - P(x)> <= 0` for `y in K`,
//! Moreau's decomposition `x = P_K(x) + P_{K°}(x)` with orthogonal parts, and `mu = 0`.

use cpbench_problems::constraints::{project_coulomb_cone, project_dual_coulomb_cone};
use proptest::prelude::*;

fn proj(x: [f64; 3], mu: f64) -> [f64; 3] {
    let mut y = x;
    project_coulomb_cone(&mut y, mu);
    y
}

fn in_cone(x: [f64; 3], mu: f64, tol: f64) -> bool {
    x[1].hypot(x[2]) <= mu * x[0] + tol && x[0] >= -tol
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

fn v3() -> impl Strategy<Value = [f64; 3]> {
    prop::array::uniform3(-10.0f64..10.0)
}

proptest! {
    #[test]
    fn idempotent_and_feasible(x in v3(), mu in 0.0f64..2.0) {
        let p = proj(x, mu);
        prop_assert!(in_cone(p, mu, 1e-12 * (1.0 + dist(x, [0.0; 3]))));
        let pp = proj(p, mu);
        prop_assert!(dist(p, pp) <= 1e-12 * (1.0 + dist(p, [0.0; 3])));
    }

    #[test]
    fn non_expansive(x in v3(), y in v3(), mu in 0.0f64..2.0) {
        prop_assert!(dist(proj(x, mu), proj(y, mu)) <= dist(x, y) * (1.0 + 1e-12) + 1e-12);
    }

    #[test]
    fn variational_inequality(x in v3(), y in v3(), mu in 0.0f64..2.0) {
        let p = proj(x, mu);
        let yk = proj(y, mu); // an arbitrary point of K
        let ip: f64 = (0..3).map(|i| (x[i] - p[i]) * (yk[i] - p[i])).sum();
        prop_assert!(ip <= 1e-10 * (1.0 + dist(x, [0.0; 3])).powi(2));
    }

    #[test]
    fn moreau_decomposition(x in v3(), mu in 0.01f64..2.0) {
        // polar cone K° = -K* ; P_{K°}(x) = -P_{K*}(-x)
        let p = proj(x, mu);
        let mut q = [-x[0], -x[1], -x[2]];
        project_dual_coulomb_cone(&mut q, mu);
        let q = [-q[0], -q[1], -q[2]];
        for i in 0..3 {
            prop_assert!((p[i] + q[i] - x[i]).abs() <= 1e-10 * (1.0 + x[i].abs()));
        }
        let ip: f64 = (0..3).map(|i| p[i] * q[i]).sum();
        prop_assert!(ip.abs() <= 1e-9 * (1.0 + dist(x, [0.0; 3])).powi(2));
    }

    #[test]
    fn mu_zero_keeps_only_a_nonnegative_normal(x in v3()) {
        let p = proj(x, 0.0);
        prop_assert_eq!(p, [x[0].max(0.0), 0.0, 0.0]);
    }
}
