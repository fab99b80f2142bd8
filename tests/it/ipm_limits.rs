//! The interior point at scale (issue 13) on generated granular CCPs (cannonball pyramids):
//! the `pcg` linear solver reaches the Cholesky variant's solution with O(n) memory, a memory
//! budget refuses the Cholesky factor before allocating it (also through `cpbench run
//! --memory-limit`), and a time limit stops the solve before a factorisation predicted to pass
//! it.

use cpbench_problems::Instance;
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, SolveResult, Status};
use cpbench_test_support::{counter, max_abs_diff};

use crate::support::{cpbench, failure, run_fixtures, temp_res};

/// The contact problem of the first step of a cannonball pyramid of `layers` layers (bottom
/// layer fixed, `mu = 0.5`): a CCP with singular `N` (statically indeterminate).
fn pyramid(layers: usize) -> Instance {
    crate::granular_support::pyramid(layers)
        .build_instance()
        .unwrap()
        .unwrap()
        .clone()
}

/// `ipm` with `settings` under `exec`.
fn ipm(settings: serde_json::Value, inst: &Instance, exec: ExecSettings) -> SolveResult {
    let mut b = build("ipm", Some(&settings)).unwrap();
    Executor::new(exec)
        .run(b.solver.as_mut(), inst, None, &mut [])
        .unwrap()
}

fn exec(tol: f64) -> ExecSettings {
    ExecSettings {
        tol,
        max_iter: 100,
        ..Default::default()
    }
}

#[test]
fn pcg_reaches_the_cholesky_solution_on_a_pyramid() {
    let inst = pyramid(6);
    assert_eq!(inst.n(), 900);
    let chol = ipm(serde_json::json!({}), &inst, exec(1e-8));
    // block Jacobi: the O(n) variant (the default block IC(0) holds about two copies of N)
    let pcg = ipm(
        serde_json::json!({"linear_solver": "pcg", "pcg_preconditioner": "block-jacobi"}),
        &inst,
        exec(1e-8),
    );
    for (what, r) in [("cholesky", &chol), ("pcg", &pcg)] {
        assert_eq!(r.status, Status::Converged, "{what}: {:?}", r.message);
        assert!(
            r.residuals.nat_map_rel_2 <= 1e-8,
            "{what}: {:?}",
            r.residuals
        );
        assert!(r.iterations <= 15, "{what}: {} iterations", r.iterations);
    }
    // the same central path: same number of interior-point iterations, same solution
    assert_eq!(pcg.iterations, chol.iterations);
    let diff = max_abs_diff(&chol.gamma, &pcg.gamma);
    let scale = chol.gamma.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(
        diff <= 1e-6 * scale,
        "max |dgamma| = {diff:e}, max |gamma| = {scale:e}"
    );
    // PCG: no factorisation, every CG iteration a counted N-product, O(n) memory (bytes per
    // variable), far below the Cholesky variant's prediction
    assert_eq!(counter(&pcg, "factorizations"), 0.0);
    let cg = counter(&pcg, "cg_iterations");
    assert!(cg > 0.0 && pcg.matvecs as f64 >= cg + pcg.iterations as f64);
    assert!(counter(&pcg, "cg_max_rel_res") <= 1e-6);
    let (mem_pcg, mem_chol) = (
        counter(&pcg, "predicted_bytes"),
        counter(&chol, "predicted_bytes"),
    );
    assert!(mem_pcg <= 400.0 * inst.n() as f64, "{mem_pcg}");
    assert!(mem_pcg < 0.5 * mem_chol, "{mem_pcg} vs {mem_chol}");
}

#[test]
fn memory_budget_refuses_cholesky_and_lets_pcg_run() {
    let inst = pyramid(6);
    let limited = |bytes: u64| ExecSettings {
        max_memory_bytes: Some(bytes),
        ..exec(1e-6)
    };
    // without a budget: the prediction (factor, scratch, assembled matrix, iterates), about
    // 1.9 MB here
    let free = ipm(serde_json::json!({}), &inst, exec(1e-6));
    assert_eq!(free.status, Status::Converged);
    let predicted = counter(&free, "predicted_bytes") as u64;
    assert!((1 << 20..4 << 20).contains(&predicted), "{predicted}");
    // one byte less: refused after the symbolic analysis, before the factor is allocated,
    // the prediction and the budget in the message
    let r = ipm(serde_json::json!({}), &inst, limited(predicted - 1));
    assert_eq!(r.status, Status::Unsupported);
    assert_eq!(r.iterations, 0);
    let msg = r.message.unwrap();
    assert!(msg.contains("predicted memory"), "{msg}");
    assert!(msg.contains(&format!("({predicted} bytes)")), "{msg}");
    assert!(msg.contains("> memory limit"), "{msg}");
    assert!(msg.contains(&format!("({} bytes)", predicted - 1)), "{msg}");
    // exactly the prediction: allowed
    let r = ipm(serde_json::json!({}), &inst, limited(predicted));
    assert_eq!(r.status, Status::Converged, "{:?}", r.message);
    // 1 MiB: refused before even assembling the pattern of K; PCG (0.3 MB) runs
    let r = ipm(serde_json::json!({}), &inst, limited(1 << 20));
    assert_eq!(r.status, Status::Unsupported);
    let msg = r.message.unwrap();
    assert!(msg.contains("assembling N + G^T W^-2 G"), "{msg}");
    assert!(
        msg.contains("> memory limit 1.00 MiB (1048576 bytes)"),
        "{msg}"
    );
    let pcg = ipm(
        serde_json::json!({"linear_solver": "pcg"}),
        &inst,
        limited(1 << 20),
    );
    assert_eq!(pcg.status, Status::Converged, "{:?}", pcg.message);
    assert!(pcg.residuals.nat_map_rel_2 <= 1e-6);
    assert!(counter(&pcg, "predicted_bytes") < (1 << 20) as f64);
}

#[test]
fn time_limit_stops_before_a_factorisation_that_would_pass_it() {
    // pyramid-20: n = 43320, one numeric factorisation 5.7e10 flop (about 3 s at the 2e10
    // flop/s measured on two cores): predicted at the assumed 1e9 flop/s it cannot fit in
    // 0.5 s, so the solve stops with max_time, without factorising
    let inst = pyramid(20);
    let limit = 0.5;
    let t = std::time::Instant::now();
    let r = ipm(
        serde_json::json!({}),
        &inst,
        ExecSettings {
            max_time_s: Some(limit),
            ..exec(1e-6)
        },
    );
    let wall = t.elapsed().as_secs_f64();
    assert_eq!(r.status, Status::MaxTime, "{:?}", r.message);
    assert!(r.time_s <= 1.1 * limit + 1.0, "{} s", r.time_s);
    assert!(wall <= 1.1 * limit + 1.0, "{wall} s");
    assert_eq!(counter(&r, "factorizations"), 0.0);
    assert_eq!(counter(&r, "factor_nnz"), 0.0, "the factor was allocated");
    let msg = r.message.unwrap();
    assert!(
        msg.contains("stopped before the numeric factorisation"),
        "{msg}"
    );
    assert!(msg.contains("flop/s assumed"), "{msg}");
    // PCG under the same limit stops inside CG, also within the margin
    let r = ipm(
        serde_json::json!({"linear_solver": "pcg"}),
        &inst,
        ExecSettings {
            max_time_s: Some(limit),
            ..exec(1e-6)
        },
    );
    assert_eq!(r.status, Status::MaxTime, "{:?}", r.message);
    assert!(r.time_s <= 1.1 * limit + 1.0, "{} s", r.time_s);
}

#[test]
fn cli_memory_limit_reaches_the_interior_point() {
    let (dir, out) = temp_res();
    let (_, rows) = run_fixtures(
        &mut cpbench("run --solvers ipm --no-plots --memory-limit 1K"),
        &["siconos-fc3d/NESpheres_10_1.dat"],
        &out,
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status.as_str(), "unsupported");
    let msg = &rows[0].message;
    assert!(
        msg.contains("> memory limit 1.00 KiB (1024 bytes)"),
        "{msg}"
    );
    // a malformed size is an error naming the flag
    let (_, err) =
        failure(cpbench("run --solvers ipm --memory-limit 8X --out").arg(dir.path().join("bad")));
    assert!(err.contains("--memory-limit 8X"), "{err}");
}
