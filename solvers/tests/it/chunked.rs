//! The chunked vector passes of APGD and SPG-QP (`cpbench_solvers::kernels::vec_chunk`): above
//! 65,536 unknowns the passes run in parallel chunks, and every iterate and residual is
//! bit-identical for any number of threads; below it the passes are the plain loops (the small
//! instances' results, and the committed baselines, are unchanged).

use cpbench_problems::linalg::{dist2, norm2};
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

/// `iters` iterations of `solver` with `settings` (tolerance 1e-300: never converged), every
/// iterate traced, inside a rayon pool of `threads` threads.
fn run_in_pool(
    solver: &str,
    settings: Option<&serde_json::Value>,
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
    cpbench_test_support::on_threads(threads, || traced(solver, settings, inst, None, exec))
}

/// `solver` with `settings` on `inst` (above the threshold, its last chunk partial), 40
/// iterations in pools of 1, 2 and 3 threads: the one-thread run ends below the start's
/// natural-map residual and the others are it bit for bit ([`assert_same_run`]); returns the
/// one-thread run. `what` names the case in messages.
fn same_on_1_2_3_threads(
    what: &str,
    solver: &str,
    settings: Option<&serde_json::Value>,
    inst: &Instance,
) -> (SolveResult, TraceRecorder) {
    assert!(inst.n() > PAR_MIN_LEN && inst.n() % PAR_CHUNK != 0);
    let (r1, t1) = run_in_pool(solver, settings, inst, 40, 1);
    assert!(
        r1.residuals.nat_map_rel_2.is_finite()
            && r1.residuals.nat_map_rel_2 < t1.records[0].residuals.nat_map_rel_2,
        "{what}: {:?}",
        r1.residuals
    );
    for threads in [2, 3] {
        let (rk, tk) = run_in_pool(solver, settings, inst, 40, threads);
        let what = format!("{what}, {threads} threads");
        assert_same_run(&what, (&r1, &t1), (&rk, &tk));
    }
    (r1, t1)
}

/// Asserts that a run on more threads (`rk`, `tk`) is the one-thread run (`r1`, `t1`) bit for
/// bit: the final point, every traced residual, the products and the counters.
fn assert_same_run(
    what: &str,
    (r1, t1): (&SolveResult, &TraceRecorder),
    (rk, tk): (&SolveResult, &TraceRecorder),
) {
    assert_eq!(bits(&rk.gamma), bits(&r1.gamma), "{what}: gamma");
    assert_eq!(residual_texts(tk), residual_texts(t1), "{what}: residuals");
    assert_eq!(rk.matvecs, r1.matvecs, "{what}");
    assert_eq!(rk.counters, r1.counters, "{what}");
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
    forty_iterations_same_on_1_2_3_threads(&[("apgd", None), ("spgqp", None)]);
}

/// PGS with Anderson acceleration (its sweep is sequential; the Anderson passes are chunked)
/// on the same two instances, and NSGS (Anderson depth 10 by default) on the CCP's Coulomb
/// problem: 40 sweeps the same bit for bit on 1, 2 and 3 threads, and the extrapolation taken
/// (the iterates are not plain PGS's).
#[test]
fn anderson_passes_are_bit_identical_across_thread_counts() {
    let aa = serde_json::json!({"anderson_depth": 5});
    forty_iterations_same_on_1_2_3_threads(&[("pgs", Some(&aa))]);
    let ccp = chain_ccp(22_000, 7);
    let (plain, _) = run_in_pool("pgs", None, &ccp, 40, 1);
    let (acc, _) = run_in_pool("pgs", Some(&aa), &ccp, 40, 1);
    assert!(
        acc.residuals.nat_map_rel_2 < 0.5 * plain.residuals.nat_map_rel_2,
        "{:?} against plain {:?}",
        acc.residuals,
        plain.residuals
    );
    let coulomb = ccp.into_coulomb().unwrap();
    let (r1, _) = same_on_1_2_3_threads(
        "nsgs on the chain's Coulomb problem",
        "nsgs",
        None,
        &coulomb,
    );
    assert_eq!(r1.iterations, 40);
}

/// Each of `cases` (solver, settings) on the 66,000-unknown CCP and the 66,049-unknown obstacle
/// box QP: all 40 iterations made (the start and the 40 iterates traced), the same bit for bit
/// on 1, 2 and 3 threads ([`same_on_1_2_3_threads`]).
fn forty_iterations_same_on_1_2_3_threads(cases: &[(&str, Option<&serde_json::Value>)]) {
    let ccp = chain_ccp(22_000, 7);
    let boxqp = cpbench_problems::generators::boxqp::obstacle2d(257, 257, 1.0).unwrap();
    for inst in [&ccp, &boxqp] {
        for &(solver, settings) in cases {
            let what = format!("{solver} {settings:?} on {}", inst.name());
            let (r1, t1) = same_on_1_2_3_threads(&what, solver, settings, inst);
            assert_eq!(r1.iterations, 40, "{what}");
            // the start and the 40 iterates
            assert_eq!(t1.records.len(), 41);
        }
    }
}

/// APGD as it was before the chunked passes (the whole-vector loops of `Apgd::init` and
/// `Apgd::step`, operation for operation, restart on, default settings) from the executor's
/// start `P_K(0)`: the last of `iters` iterates.
fn reference_apgd(inst: &Instance, iters: usize) -> Vec<f64> {
    let n = inst.n();
    let (k, r) = (inst.constraints(), inst.r());
    let norm2 = |a: &[f64]| a.iter().map(|x| x * x).sum::<f64>().sqrt();
    // the executor's start point, zero projected onto K
    let mut gamma = vec![0.0; n];
    k.project(&mut gamma);
    let mut y = gamma.clone();
    let (mut ny, mut x, mut nx, mut g) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for (xi, gi) in x.iter_mut().zip(&gamma) {
        *xi = gi - 1.0;
    }
    inst.matvec(&x, &mut nx);
    let mut l = norm2(&nx) / norm2(&x);
    inst.matvec(&y, &mut ny);
    let mut ngk = ny.clone();
    let mut theta = 1.0;
    for _ in 0..iters {
        for ((gi, nyi), ri) in g.iter_mut().zip(&ny).zip(r) {
            *gi = nyi + ri;
        }
        loop {
            let t = 1.0 / l;
            for ((xi, yi), gi) in x.iter_mut().zip(&y).zip(&g) {
                *xi = yi - t * gi;
            }
            k.project(&mut x);
            inst.matvec(&x, &mut nx);
            let (mut dnd, mut dd) = (0.0, 0.0);
            for i in 0..n {
                let d = x[i] - y[i];
                dnd += d * (nx[i] - ny[i]);
                dd += d * d;
            }
            if dnd <= l * dd {
                break;
            }
            l *= 2.0;
        }
        let th = theta;
        let th_new = (-th * th + th * (th * th + 4.0f64).sqrt()) / 2.0;
        let beta = th * (1.0 - th) / (th * th + th_new);
        let gdx: f64 = g
            .iter()
            .zip(&x)
            .zip(&gamma)
            .map(|((g, x), gk)| g * (x - gk))
            .sum();
        if gdx > 0.0 {
            y.copy_from_slice(&x);
            ny.copy_from_slice(&nx);
            theta = 1.0;
        } else {
            for i in 0..n {
                y[i] = x[i] + beta * (x[i] - gamma[i]);
                ny[i] = nx[i] + beta * (nx[i] - ngk[i]);
            }
            theta = th_new;
        }
        std::mem::swap(&mut gamma, &mut x);
        std::mem::swap(&mut ngk, &mut nx);
        l *= 0.9;
    }
    gamma
}

/// Below 65,536 unknowns the passes are the plain loops: on a 3,000-unknown CCP and a
/// 4,096-unknown obstacle box QP, 40 APGD iterations give the iterates of the whole-vector code
/// bit for bit (the best one compared).
#[test]
fn apgd_below_the_threshold_is_the_plain_loops_bit_for_bit() {
    let small_box = cpbench_problems::generators::boxqp::obstacle2d(64, 64, 1.0).unwrap();
    for inst in [chain_ccp(1_000, 5), small_box] {
        let (res, _) = run_in_pool("apgd", None, &inst, 40, 2);
        // the answer is the best iterate (by the residual) of the 40
        let best = res.best_iteration as usize;
        assert!(best > 20, "{}: best iterate {best}", inst.name());
        assert_eq!(
            bits(&res.gamma),
            bits(&reference_apgd(&inst, best)),
            "{}",
            inst.name()
        );
    }
}

/// Above it the chunked APGD follows the plain algorithm: on the 66,000-unknown CCP its iterates
/// (the best of 40 compared) are within rounding of the whole-vector code's (the chunked sums differ only in
/// their order), so the chunks' projections and sums cover every block once at the right
/// offset.
#[test]
fn chunked_apgd_matches_the_plain_loops() {
    let inst = chain_ccp(22_000, 11);
    let (res, _) = run_in_pool("apgd", None, &inst, 40, 2);
    // the answer is the best iterate (by the residual) of the 40
    let best = res.best_iteration as usize;
    assert!(best > 20, "best iterate {best}");
    let gamma = reference_apgd(&inst, best);
    let (diff, scale) = (dist2(&gamma, &res.gamma), norm2(&gamma));
    assert!(scale > 1.0, "a nontrivial iterate: ||gamma|| = {scale}");
    assert!(
        diff <= 1e-12 * scale,
        "chunked APGD vs the plain loops: ||diff|| = {diff:e}, ||gamma|| = {scale:e}"
    );
}

/// SPG-QP as it was before the chunked passes (the whole-vector loops of `SpgQp::init` and
/// `SpgQp::step`, default settings) from the executor's start `P_K(0)`: the
/// `iters`-th iterate.
fn reference_spgqp(inst: &Instance, iters: usize) -> Vec<f64> {
    use cpbench_problems::instance::objective_from_gradient;
    use cpbench_problems::linalg::dot;
    let n = inst.n();
    let (k, r) = (inst.constraints(), inst.r());
    // the executor's start point, zero projected onto K
    let mut x = vec![0.0; n];
    k.project(&mut x);
    let (mut g, mut d, mut nd) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    inst.gradient(&x, &mut g);
    let mut f = objective_from_gradient(&x, &g, r);
    let mut fs = [f; 12];
    let mut pos = 0;
    let lmax = inst.power_iteration(20);
    let mut alpha = 1.0 / lmax;
    for _ in 0..iters {
        for ((di, xi), gi) in d.iter_mut().zip(&x).zip(&g) {
            *di = xi - alpha * gi;
        }
        k.project(&mut d);
        let mut dd = 0.0;
        for (di, xi) in d.iter_mut().zip(&x) {
            *di -= xi;
            dd += *di * *di;
        }
        inst.matvec(&d, &mut nd);
        let (dnd, gd) = (dot(&d, &nd), dot(&g, &d));
        let fmax = fs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let xi = (fmax - f) / dnd;
        let bbar = -gd / dnd;
        let gam = 0.7;
        let beta =
            (gam * bbar + (gam * gam * bbar * bbar + 2.0 * xi).max(0.0).sqrt()).clamp(0.0, 1.0);
        for (xi, di) in x.iter_mut().zip(&d) {
            *xi += beta * di;
        }
        for (gi, ndi) in g.iter_mut().zip(&nd) {
            *gi += beta * ndi;
        }
        f = objective_from_gradient(&x, &g, r);
        fs[pos] = f;
        pos = (pos + 1) % fs.len();
        alpha = dd / dnd;
    }
    x
}

/// `solver` below 65,536 unknowns is its plain loops (`reference`, the code before the chunked
/// passes written out) bit for bit, on a 3,000-unknown CCP and a 4,096-unknown obstacle box
/// QP; above it, on the 66,000-unknown CCP, within rounding (1e-10 relative). The best
/// iterate of the 40-iteration run is past iteration `min_best`; above the threshold its norm is over
/// `min_scale` (a nontrivial iterate).
fn matches_the_plain_loops(
    solver: &str,
    reference: fn(&Instance, usize) -> Vec<f64>,
    min_best: usize,
    min_scale: f64,
) {
    let small_box = cpbench_problems::generators::boxqp::obstacle2d(64, 64, 1.0).unwrap();
    for (inst, exact) in [
        (chain_ccp(1_000, 5), true),
        (small_box, true),
        (chain_ccp(22_000, 11), false),
    ] {
        let (res, _) = run_in_pool(solver, None, &inst, 40, 2);
        let best = res.best_iteration as usize;
        assert!(best > min_best, "{}: best iterate {best}", inst.name());
        let x = reference(&inst, best);
        if exact {
            assert_eq!(bits(&res.gamma), bits(&x), "{}", inst.name());
        } else {
            let (diff, scale) = (dist2(&x, &res.gamma), norm2(&x));
            assert!(scale > min_scale, "a nontrivial iterate: ||x|| = {scale}");
            assert!(
                diff <= 1e-10 * scale,
                "{}: ||diff|| = {diff:e}, ||x|| = {scale:e}",
                inst.name()
            );
        }
    }
}

/// SPG-QP below 65,536 unknowns is the plain loops bit for bit; above, within rounding.
#[test]
fn spgqp_is_the_plain_loops_below_the_threshold_and_close_above() {
    matches_the_plain_loops("spgqp", reference_spgqp, 0, 0.0);
}

/// BB (default settings) and Jacobi (automatic `omega`, and `omega = 0.4`, `lambda = 0.9`) on the
/// 66,000-unknown CCP and the 66,049-unknown obstacle box QP, 40 iterations in pools of 1, 2
/// and 3 threads: the same iterates and residuals bit for bit, the same final point and
/// counters.
#[test]
fn bb_jacobi_chunked_passes_are_bit_identical_across_thread_counts() {
    let relaxed = serde_json::json!({"omega": 0.4, "lambda": 0.9});
    forty_iterations_same_on_1_2_3_threads(&[
        ("bb", None),
        ("jacobi", None),
        ("jacobi", Some(&relaxed)),
    ]);
}

/// BB as it was before the chunked passes (the whole-vector loops of `Bb::init` and `Bb::step`,
/// default settings) from the executor's start `P_K(0)`: the `iters`-th iterate.
fn reference_bb(inst: &Instance, iters: usize) -> Vec<f64> {
    let n = inst.n();
    let k = inst.constraints();
    let mut x = vec![0.0; n];
    k.project(&mut x);
    let (mut g, mut x_old, mut g_old) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    inst.gradient(&x, &mut g);
    let lmax = inst.power_iteration(20);
    let mut alpha = 1.95 / lmax;
    for it in 0..iters {
        x_old.copy_from_slice(&x);
        g_old.copy_from_slice(&g);
        for (xi, gi) in x.iter_mut().zip(&g) {
            *xi -= alpha * gi;
        }
        k.project(&mut x);
        inst.gradient(&x, &mut g);
        let (mut ss, mut sy, mut yy) = (0.0, 0.0, 0.0);
        for ((xi, xo), (gi, go)) in x.iter().zip(&x_old).zip(g.iter().zip(&g_old)) {
            let s = xi - xo;
            let y = gi - go;
            ss += s * s;
            sy += s * y;
            yy += y * y;
        }
        assert!(ss > 0.0);
        let bb2 = it % 2 == 1;
        let a = if sy <= 0.0 {
            if bb2 {
                0.12
            } else {
                0.11
            }
        } else if bb2 {
            sy / yy
        } else {
            ss / sy
        };
        alpha = a.clamp(1e-13, 1e13);
    }
    x
}

/// Projected Jacobi as it was before the chunked pass (the block loop of `Jacobi::step`, a
/// given `omega` and `lambda`, `B` from the trace rule) from the executor's start `P_K(0)`: the
/// `iters`-th iterate.
fn reference_jacobi(inst: &Instance, omega: f64, lambda: f64, iters: usize) -> Vec<f64> {
    use cpbench_solvers::kernels::{inverse_block_scales, trace_mean};
    let n = inst.n();
    let k = inst.constraints();
    let bs = k.block_size();
    let d: Vec<f64> = (0..n / bs)
        .map(|c| {
            let b = inst.diag_block(c);
            if bs == 1 {
                b[0].max(0.0)
            } else {
                trace_mean(&b, bs).max(0.0)
            }
        })
        .collect();
    let binv = inverse_block_scales(&d, bs);
    let mut x = vec![0.0; n];
    k.project(&mut x);
    let mut g = vec![0.0; n];
    let mut old = [0.0f64; 3];
    for _ in 0..iters {
        inst.gradient(&x, &mut g);
        for (c, blk) in x.chunks_exact_mut(bs).enumerate() {
            old[..bs].copy_from_slice(blk);
            let o = c * bs;
            for ((xi, b), gi) in blk.iter_mut().zip(&binv[o..o + bs]).zip(&g[o..o + bs]) {
                *xi -= omega * b * gi;
            }
            k.project_block(c, blk);
            if lambda != 1.0 {
                for i in 0..bs {
                    blk[i] = lambda * blk[i] + (1.0 - lambda) * old[i];
                }
            }
        }
    }
    x
}

/// BB below 65,536 unknowns is the plain loops bit for bit; above, within rounding.
#[test]
fn bb_is_the_plain_loops_below_the_threshold_and_close_above() {
    matches_the_plain_loops("bb", reference_bb, 10, 1.0);
}

/// Jacobi (`omega = 0.4`, `lambda = 0.9`) is the plain block loop bit for bit on either side of
/// the threshold (no reductions): a 3,000-unknown CCP, a 4,096-unknown obstacle box QP, and the
/// 66,000-unknown CCP in a pool of 3 threads.
#[test]
fn jacobi_is_the_plain_loop_bit_for_bit() {
    let small_box = cpbench_problems::generators::boxqp::obstacle2d(64, 64, 1.0).unwrap();
    let settings = serde_json::json!({"omega": 0.4, "lambda": 0.9});
    for inst in [chain_ccp(1_000, 5), small_box, chain_ccp(22_000, 11)] {
        let (res, _) = run_in_pool("jacobi", Some(&settings), &inst, 40, 3);
        let best = res.best_iteration as usize;
        assert!(best > 10, "{}: best iterate {best}", inst.name());
        assert_eq!(
            bits(&res.gamma),
            bits(&reference_jacobi(&inst, 0.4, 0.9, best)),
            "{}",
            inst.name()
        );
    }
}

/// The chain CCP's `N` and `r` (66,000 unknowns for `nc = 22,000`) on another set: `gamma >= 0`
/// (an LCP) or the box `[-0.3, 0.3]^n` (a box QP); `r` of both signs, so the iterates have
/// free and active components.
fn chain_on(nc: usize, seed: u64, set: &str) -> Instance {
    let ccp = chain_ccp(nc, seed);
    let n = ccp.n();
    let k = match set {
        "lcp" => ConstraintSet::NonNegative,
        _ => ConstraintSet::Box {
            lo: vec![-0.3; n],
            hi: vec![0.3; n],
        },
    };
    Instance::new(
        format!("chain-{set}"),
        ccp.n_mat().clone(),
        ccp.r().to_vec(),
        k,
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

/// MPRGP (box QP, LCP) and MPGP (box QP, LCP, CCP) above 65,536 unknowns, 40 iterations in
/// pools of 1, 2 and 3 threads: the same iterates, residuals, products and counters (step
/// kinds, `alpha`) bit for bit.
#[test]
fn mprgp_mpgp_chunked_passes_are_bit_identical_across_thread_counts() {
    let ccp = chain_ccp(22_000, 7);
    let boxqp = cpbench_problems::generators::boxqp::obstacle2d(257, 257, 1.0).unwrap();
    let lcp = chain_on(22_000, 7, "lcp");
    let chain_box = chain_on(22_000, 7, "box");
    for (solver, inst) in [
        ("mprgp", &boxqp),
        ("mprgp", &chain_box),
        ("mprgp", &lcp),
        ("mpgp", &boxqp),
        ("mpgp", &chain_box),
        ("mpgp", &lcp),
        ("mpgp", &ccp),
    ] {
        let what = format!("{solver} on {}", inst.name());
        let (r1, t1) = same_on_1_2_3_threads(&what, solver, None, inst);
        // 40 iterations, or fewer where MPRGP reaches a KKT point to working precision
        assert!(r1.iterations >= 20, "{what}: {:?}", r1.status);
        assert_eq!(t1.records.len() as u64, r1.iterations + 1);
        let count = |name: &str| {
            r1.counters
                .iter()
                .find(|(k, _)| k == name)
                .map_or(0.0, |c| c.1)
        };
        // every kind of step runs: CG steps on the chain sets, expansions and proportioning
        // steps on the obstacle, proportioning (gradient projection) steps on the CCP
        if inst.name().starts_with("chain-") && inst.name() != "chain-ccp" {
            assert!(count("cg_steps") > 0.0, "{what}: {:?}", r1.counters);
        }
        assert!(
            count("expansion_steps") + count("proportioning_steps") > 0.0,
            "{what}: {:?}",
            r1.counters
        );
    }
}
