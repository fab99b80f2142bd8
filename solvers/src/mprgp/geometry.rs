//! The active-set geometry of MPRGP and MPGP: which blocks are free, the free / chopped split of
//! the gradient, the reduced free gradient, the largest feasible step and the landing on the
//! boundary. The set answers these itself ([`cpbench_problems::SetFamily`], forwarded by
//! [`ConstraintSet::split_gradient`], [`ConstraintSet::reduced_free_gradient`],
//! [`ConstraintSet::reduced_free_dot`], [`ConstraintSet::max_feasible_step`],
//! [`ConstraintSet::land_on_boundary`], [`ConstraintSet::block_is_free`]), in each family's
//! module of `cpbench_problems::constraints`, so the iteration in [`super::core`] reads
//! `k.split_gradient(..)` and a new class brings its geometry with it; the scalar sets keep one
//! tight loop each (the hot path of MPRGP's CG steps). This module keeps their tests.
//!
//! Definitions: Dostal & Schoberl 2005 (Comput. Optim. Appl. 30), eq. (2.2) for bounds; Dostal
//! & Kozubek 2012 (Math. Program. 135), section 2, for separable convex sets. A block is *free*
//! in the interior of its set and *active* on its boundary; with `g = N x + r`: the projected
//! gradient `g^P = -P_{T_K(x)}(-g)`, the free gradient `phi` (`g` on free blocks, `0` on active
//! ones), the chopped gradient `beta = g^P - phi`, the reduced free gradient
//! `phi~_alpha = (x - P_K(x - alpha phi)) / alpha`. Special blocks: a box component with
//! `lo = hi` is fixed (`g^P = 0`); a cone with `mu = 0` is the half-line `{x_t = 0, x_n >= 0}`,
//! whose free gradient is `(g_n, 0, 0)` when `x_n > 0`.

#[cfg(doc)]
use cpbench_problems::ConstraintSet;

#[cfg(test)]
mod tests {
    use cpbench_problems::ConstraintSet;

    #[test]
    fn split_gradient_box_and_fixed_component() {
        // x = (lo, hi, free, fixed), g = (-1, -1, 2, 5)
        let k = ConstraintSet::Box {
            lo: vec![0.0, 0.0, 0.0, 1.0],
            hi: vec![1.0, 1.0, 1.0, 1.0],
        };
        let x = [0.0, 1.0, 0.5, 1.0];
        let g = [-1.0, -1.0, 2.0, 5.0];
        let (mut phi, mut beta) = ([0.0; 4], [0.0; 4]);
        k.split_gradient(&x, &g, &mut phi, &mut beta);
        assert_eq!(phi, [0.0, 0.0, 2.0, 0.0]);
        // at lo: min(g, 0) = -1; at hi: max(g, 0) = 0; fixed: 0
        assert_eq!(beta, [-1.0, 0.0, 0.0, 0.0]);
        // reduced free gradient: min(phi, (x - lo)/alpha) = min(2, 0.5/0.5) = 1
        let mut r = [0.0; 4];
        k.reduced_free_gradient(&x, &phi, 0.5, &mut r);
        assert_eq!(r, [0.0, 0.0, 1.0, 0.0]);
        // largest feasible step along -d
        let d = [0.0, 0.0, 0.25, 0.0];
        assert_eq!(k.max_feasible_step(&x, &d), (2.0, Some(2)));
        let d = [0.0, 0.0, -1.0, 0.0];
        assert_eq!(k.max_feasible_step(&x, &d), (0.5, Some(2)));
        let mut xb = [0.5];
        k.land_on_boundary(2, &mut xb, &[-1.0]);
        assert_eq!(xb, [1.0]);
    }

    #[test]
    fn split_gradient_cone_sums_to_projected_gradient() {
        let k = ConstraintSet::coulomb(vec![0.5, 0.5, 0.5, 0.0]);
        // interior, surface, apex, mu = 0 half-line
        let x = [1.0, 0.1, 0.0, 2.0, 0.6, 0.8, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        let g = [
            0.3, -0.2, 0.7, -1.0, 0.5, 0.5, -1.0, 3.0, 0.0, 2.0, 1.0, -1.0,
        ];
        let (mut phi, mut beta) = ([0.0; 12], [0.0; 12]);
        k.split_gradient(&x, &g, &mut phi, &mut beta);
        assert_eq!(&phi[..3], &g[..3]);
        assert_eq!(&beta[..3], &[0.0; 3]);
        assert_eq!(&phi[3..9], &[0.0; 6]);
        assert_eq!(&phi[9..], &[2.0, 0.0, 0.0]);
        assert_eq!(&beta[9..], &[0.0; 3]);
        let mut gp = [0.0; 3];
        for b in 0..4 {
            let s = 3 * b..3 * b + 3;
            k.projected_gradient_block(b, &x[s.clone()], &g[s.clone()], &mut gp);
            for i in 0..3 {
                assert!((phi[3 * b + i] + beta[3 * b + i] - gp[i]).abs() < 1e-15);
            }
        }
        // surface block: -g^P is in the tangent half-space {a.d <= 0}, a = (-mu, x_t/|x_t|)
        let a = [-0.5, 0.6, 0.8];
        let ad: f64 = (0..3).map(|i| -a[i] * beta[3 + i]).sum();
        assert!(ad <= 1e-15);
        assert!(!k.block_is_free(1, &x[3..6]) && k.block_is_free(0, &x[..3]));
    }

    #[test]
    fn cone_max_feasible_step() {
        let k = ConstraintSet::coulomb(vec![0.5]);
        let x = [1.0, 0.0, 0.0];
        // y = (1, t, 0) leaves the cone at t = 0.5
        let (t, b) = k.max_feasible_step(&x, &[0.0, -1.0, 0.0]);
        assert!((t - 0.5).abs() < 1e-15 && b == Some(0));
        // y = (1 - t, 0, 0) reaches the apex at t = 1
        assert!((k.max_feasible_step(&x, &[1.0, 0.0, 0.0]).0 - 1.0).abs() < 1e-15);
        // y = (1 + t, 0, 0): never leaves
        assert_eq!(k.max_feasible_step(&x, &[-1.0, 0.0, 0.0]).0, f64::INFINITY);
        // y = (1 - t/2, -t/2, 0): t/2 <= (1 - t/2)/2 until t = 2/3
        let t = k.max_feasible_step(&x, &[0.5, 0.5, 0.0]).0;
        assert!((t - 2.0 / 3.0).abs() < 1e-15, "{t}");
        // after the step the point lies on the surface
        let mut y = [1.0 - t * 0.5, -t * 0.5, 0.0];
        k.land_on_boundary(0, &mut y, &[0.5, 0.5, 0.0]);
        assert!(!k.block_is_free(0, &y));
        // mu = 0: any tangential motion is blocked at once
        let k0 = ConstraintSet::coulomb(vec![0.0]);
        assert_eq!(k0.max_feasible_step(&x, &[0.0, 1.0, 0.0]).0, 0.0);
        assert_eq!(k0.max_feasible_step(&x, &[0.5, 0.0, 0.0]).0, 2.0);
    }
}
