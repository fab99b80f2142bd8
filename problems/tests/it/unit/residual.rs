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

/// `n = 3 nc` unknowns on `nc` cones (`mu` 0.1 to 1), `N = I`, `r` and a `gamma` (some inside,
/// some outside the cones) drawn from `seed`.
fn random_cones(nc: usize, seed: u64) -> (Instance, Vec<f64>) {
    let mut rng = cpbench_problems::rng::SplitMix64::new(seed);
    let mu = (0..nc).map(|_| rng.uniform(0.1, 1.0)).collect();
    let r = (0..3 * nc).map(|_| rng.normal()).collect();
    let gamma = (0..3 * nc).map(|_| rng.normal()).collect();
    let i = Instance::new(
        "cones",
        CscMatrix::identity(3 * nc),
        r,
        ConstraintSet::coulomb(mu),
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap();
    (i, gamma)
}

/// From `RESIDUAL_PAR_MIN_BLOCKS` blocks on, the residual pass runs in parallel chunks: the
/// residuals are bit-identical on 1 and 2 threads, and, `N` being block diagonal, the sums and
/// maxima over the whole instance equal those combined from its two halves (each below the
/// threshold, so computed by the sequential pass) to 1e-12 relative.
#[test]
fn the_parallel_residual_pass_is_deterministic_and_agrees_with_the_sequential_one() {
    let nc = RESIDUAL_PAR_MIN_BLOCKS + 7_000;
    let (full, gamma) = random_cones(nc, 7);
    let on =
        |threads: usize| cpbench_test_support::on_threads(threads, || residuals(&full, &gamma));
    let (one, two) = (on(1), on(2));
    assert_eq!(
        one.values().map(f64::to_bits),
        two.values().map(f64::to_bits)
    );
    // the halves: the same blocks, N = I restricted, the same r and gamma
    let half = nc / 2;
    let part = |blocks: std::ops::Range<usize>| {
        let s = 3 * blocks.start..3 * blocks.end;
        let mu = full.constraints().friction().unwrap()[blocks.clone()].to_vec();
        let i = Instance::new(
            "half",
            CscMatrix::identity(s.len()),
            full.r()[s.clone()].to_vec(),
            ConstraintSet::coulomb(mu),
            Provenance::default(),
            ValidationOptions::default(),
        )
        .unwrap();
        assert!(blocks.len() < RESIDUAL_PAR_MIN_BLOCKS);
        residuals(&i, &gamma[s])
    };
    let (a, b) = (part(0..half), part(half..nc));
    let close = |x: f64, y: f64, what: &str| {
        assert!(
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
            "{what}: {x} vs {y}"
        );
    };
    let hyp = |x: f64, y: f64| (x * x + y * y).sqrt();
    close(
        one.nat_map_abs_2,
        hyp(a.nat_map_abs_2, b.nat_map_abs_2),
        "natural map",
    );
    close(
        one.nat_map_abs_inf,
        a.nat_map_abs_inf.max(b.nat_map_abs_inf),
        "inf",
    );
    close(
        one.proj_grad_2,
        hyp(a.proj_grad_2, b.proj_grad_2),
        "projected gradient",
    );
    close(one.primal_feas, hyp(a.primal_feas, b.primal_feas), "primal");
    close(one.dual_feas, hyp(a.dual_feas, b.dual_feas), "dual");
    close(
        one.complementarity_max,
        a.complementarity_max.max(b.complementarity_max),
        "cmax",
    );
    close(one.res3, a.res3.max(b.res3), "res3");
    close(one.objective, a.objective + b.objective, "objective");
    assert!(one.nat_map_abs_2 > 1.0 && one.primal_feas > 1.0, "{one:?}");
}

/// The stopping test's pass (`stopping_residuals`) gives, for every kind, that kind's value and
/// the primal feasibility bit for bit as the full pass does (below and above the parallel
/// threshold, on cones and on a box), and NaN where it skipped a part.
#[test]
fn the_stopping_pass_gives_the_full_pass_values_bit_for_bit() {
    let (small, gs) = random_cones(50, 3);
    let (large, gl) = random_cones(RESIDUAL_PAR_MIN_BLOCKS + 100, 4);
    let boxed = inst(
        &[2.0, 0.5, 0.5, 1.0],
        2,
        vec![-1.0, 3.0],
        ConstraintSet::Box {
            lo: vec![0.0, -1.0],
            hi: vec![1.0, 1.0],
        },
    );
    let gb = vec![1.5, -0.5];
    for (i, gamma) in [(&small, &gs), (&large, &gl), (&boxed, &gb)] {
        let mut g = vec![0.0; i.n()];
        i.gradient(gamma, &mut g);
        let norm_r = cpbench_problems::linalg::norm2(i.r());
        let full = residuals_with_gradient(i, gamma, &g, norm_r);
        for kind in ResidualKind::ALL {
            let light = stopping_residuals(i, (gamma, &g, norm_r), kind);
            assert_eq!(
                light.get(kind).to_bits(),
                full.get(kind).to_bits(),
                "{kind:?}"
            );
            assert_eq!(light.primal_feas.to_bits(), full.primal_feas.to_bits());
            assert!(
                light.get(kind).is_finite() && light.get(kind) > 0.0,
                "{kind:?}"
            );
            if kind == ResidualKind::NatMapRel2 {
                assert!(
                    light.res4.is_nan() && light.proj_grad_2.is_nan(),
                    "{light:?}"
                );
            }
        }
    }
}
