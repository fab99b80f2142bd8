//! The chunked vector passes of APGD and SPG-QP (`cpbench_solvers::kernels::vec_chunk`): above
//! 65,536 unknowns the passes run in parallel chunks, and every iterate and residual is
//! bit-identical for any number of threads; below it the passes are the plain loops (the small
//! instances' results, and the committed baselines, are unchanged).

use cpbench_problems::{ConstraintSet, CscMatrix, Instance, Provenance, ValidationOptions};
use cpbench_solvers::kernels::{sum_in_order, vec_chunk, vec_chunks, PAR_CHUNK, PAR_MIN_LEN};
use cpbench_solvers::{ExecSettings, SolveResult, TraceRecorder};
use cpbench_test_support::TestRng;

use crate::support::traced;

/// A CCP on `nc` 3-D contacts: SPD diagonal blocks, a weak coupling of each contact's normal
/// and first tangent with the next contact's (diagonally dominant, so `N` is SPD), pushing
/// normals `r_n < 0` on most contacts (active cones, many on the cone surface) and `mu` in
/// `[0.2, 0.8]`.
fn chain_ccp(nc: usize, seed: u64) -> Instance {
    let mut rng = TestRng::new(seed);
    let n = 3 * nc;
    let mut t = Vec::with_capacity(9 * nc);
    for c in 0..nc {
        let o = 3 * c;
        let a = 2.0 + rng.next().abs();
        let b = 0.3 * rng.next();
        t.extend_from_slice(&[
            (o, o, a),
            (o + 1, o + 1, 1.5 + 0.5 * rng.next().abs()),
            (o + 2, o + 2, 1.5 + 0.5 * rng.next().abs()),
            (o, o + 1, b),
            (o + 1, o, b),
        ]);
        if c + 1 < nc {
            let e = 0.2 * rng.next();
            let f = 0.1 * rng.next();
            t.extend_from_slice(&[
                (o, o + 3, e),
                (o + 3, o, e),
                (o + 1, o + 4, f),
                (o + 4, o + 1, f),
            ]);
        }
    }
    let m = CscMatrix::from_triplets(n, n, &t).unwrap();
    let r: Vec<f64> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                -0.5 + 0.8 * rng.next()
            } else {
                rng.next()
            }
        })
        .collect();
    let mu: Vec<f64> = (0..nc).map(|_| 0.5 + 0.3 * rng.next()).collect();
    Instance::new(
        "chain-ccp",
        m,
        r,
        ConstraintSet::coulomb(mu),
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

/// `iters` iterations of `solver` (tolerance 1e-300: never converged), every iterate traced, inside
/// a rayon pool of `threads` threads.
fn run_in_pool(
    solver: &str,
    inst: &Instance,
    iters: u64,
    threads: usize,
) -> (SolveResult, TraceRecorder) {
    let exec = ExecSettings {
        tol: 1e-300,
        max_iter: iters,
        stall_window: None,
        ..Default::default()
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| traced(solver, None, inst, None, exec))
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Every residual of every traced iteration (`Debug` prints the shortest text that reads back
/// to the same `f64`, so equal texts are equal bits).
fn residual_texts(rec: &TraceRecorder) -> Vec<String> {
    rec.records
        .iter()
        .map(|r| format!("{:?}", r.residuals))
        .collect()
}

#[test]
fn vec_chunk_is_one_chunk_below_the_threshold() {
    assert_eq!(vec_chunk(0), 1);
    assert_eq!(vec_chunks(0), 1);
    assert_eq!(vec_chunk(PAR_MIN_LEN - 1), PAR_MIN_LEN - 1);
    assert_eq!(vec_chunks(PAR_MIN_LEN - 1), 1);
    assert_eq!(vec_chunk(PAR_MIN_LEN), PAR_CHUNK);
    assert_eq!(vec_chunks(PAR_MIN_LEN), PAR_MIN_LEN.div_ceil(PAR_CHUNK));
    // whole blocks of 1, 2 and 3 unknowns
    assert_eq!(PAR_CHUNK % 6, 0);
    // in order from the first part: ((1e16 + 1) + 1) = 1e16, not 1e16 + 2
    assert_eq!(sum_in_order([1e16, 1.0, 1.0]), 1e16);
    assert_eq!(sum_in_order([2.5]).to_bits(), 2.5f64.to_bits());
    assert_eq!(sum_in_order([-0.0]).to_bits(), (-0.0f64).to_bits());
}

/// APGD and SPG-QP on a 66,000-unknown CCP (6 chunks, the last one partial) and a 66,049
/// unknown box QP (the obstacle problem on a 257 x 257 grid), 40 iterations in pools of 1, 2
/// and 3 threads: the same iterates and residuals bit for bit, and the same final point.
#[test]
fn apgd_spgqp_chunked_passes_are_bit_identical_across_thread_counts() {
    let ccp = chain_ccp(22_000, 7);
    let boxqp = cpbench_problems::generators::boxqp::obstacle2d(257, 257, 1.0).unwrap();
    for inst in [&ccp, &boxqp] {
        assert!(inst.n() > PAR_MIN_LEN && inst.n() % PAR_CHUNK != 0);
        for solver in ["apgd", "spgqp"] {
            let (r1, t1) = run_in_pool(solver, inst, 40, 1);
            assert_eq!(r1.iterations, 40, "{solver} on {}", inst.name());
            // the start and the 40 iterates
            assert_eq!(t1.records.len(), 41);
            assert!(
                r1.residuals.nat_map_rel_2.is_finite()
                    && r1.residuals.nat_map_rel_2 < t1.records[0].residuals.nat_map_rel_2,
                "{solver} on {}: {:?}",
                inst.name(),
                r1.residuals
            );
            for threads in [2, 3] {
                let (rk, tk) = run_in_pool(solver, inst, 40, threads);
                let what = format!("{solver} on {}, {threads} threads", inst.name());
                assert_eq!(bits(&rk.gamma), bits(&r1.gamma), "{what}: gamma");
                assert_eq!(
                    residual_texts(&tk),
                    residual_texts(&t1),
                    "{what}: residuals"
                );
                assert_eq!(rk.matvecs, r1.matvecs, "{what}");
                assert_eq!(rk.counters, r1.counters, "{what}");
            }
        }
    }
}

/// The chunked APGD follows the plain algorithm: on the 66,000-unknown CCP its 40th iterate is
/// within rounding of a straightforward sequential APGD (Mazhar et al. 2015, Algorithm 2, the
/// module's formulas with whole-vector loops and projection), so the chunks' projections and
/// sums cover every block once at the right offset.
#[test]
fn chunked_apgd_matches_a_sequential_reference() {
    let inst = chain_ccp(22_000, 11);
    let (res, _) = run_in_pool("apgd", &inst, 40, 2);
    let n = inst.n();
    let (k, r) = (inst.constraints(), inst.r());
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    // L0 = ||N (gamma0 - 1)|| / ||gamma0 - 1||, gamma0 = 0
    let ones = vec![-1.0; n];
    let mut tmp = vec![0.0; n];
    inst.matvec(&ones, &mut tmp);
    let mut l = dot(&tmp, &tmp).sqrt() / dot(&ones, &ones).sqrt();
    let (mut gamma, mut y, mut theta) = (vec![0.0; n], vec![0.0; n], 1.0);
    let (mut x, mut ny, mut nx) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for _ in 0..40 {
        inst.matvec(&y, &mut ny);
        let g: Vec<f64> = ny.iter().zip(r).map(|(a, b)| a + b).collect();
        loop {
            for i in 0..n {
                x[i] = y[i] - g[i] / l;
            }
            k.project(&mut x);
            inst.matvec(&x, &mut nx);
            let d: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
            let nd: Vec<f64> = nx.iter().zip(&ny).map(|(a, b)| a - b).collect();
            if dot(&d, &nd) <= l * dot(&d, &d) {
                break;
            }
            l *= 2.0;
        }
        let th_new = (-theta * theta + theta * (theta * theta + 4.0f64).sqrt()) / 2.0;
        let beta = theta * (1.0 - theta) / (theta * theta + th_new);
        let dx: Vec<f64> = x.iter().zip(&gamma).map(|(a, b)| a - b).collect();
        if dot(&g, &dx) > 0.0 {
            y.copy_from_slice(&x);
            theta = 1.0;
        } else {
            for i in 0..n {
                y[i] = x[i] + beta * dx[i];
            }
            theta = th_new;
        }
        gamma.copy_from_slice(&x);
        l *= 0.9;
    }
    let diff = dot(
        &gamma
            .iter()
            .zip(&res.gamma)
            .map(|(a, b)| a - b)
            .collect::<Vec<_>>(),
        &gamma
            .iter()
            .zip(&res.gamma)
            .map(|(a, b)| a - b)
            .collect::<Vec<_>>(),
    )
    .sqrt();
    let scale = dot(&gamma, &gamma).sqrt();
    assert!(scale > 1.0, "a nontrivial iterate: ||gamma|| = {scale}");
    assert!(
        diff <= 1e-9 * scale,
        "chunked APGD vs reference: ||diff|| = {diff:e}, ||gamma|| = {scale:e}"
    );
}
