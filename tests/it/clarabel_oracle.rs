//! Clarabel (Goulart & Chen 2024, arXiv:2405.12762) as an independent oracle on the default
//! suite, and the harness's honest reporting of its claims.
//!
//! 1. Oracle: Clarabel with tightened gap tolerances (`tol_gap_abs = tol_gap_rel = 1e-12`;
//!    tightening `tol_feas` as well makes Clarabel stop early with `InsufficientProgress` on
//!    Spheres and Capsules) must pass the harness's own check at 1e-6 on every default
//!    instance, and the objective of every iterative solver run to 1e-6 must match it.
//! 2. Honest reporting: at Clarabel's default tolerances (1e-8 on its scaled residuals and
//!    duality gap) Clarabel claims `Solved` on the Siconos/fclib friction CCPs while the
//!    natural-map residual of its answer is 1e-6 to 1e-3; at `tol = 1e-8` the harness must show
//!    claimed success (`converged`) and checked failure.

use cpbench_harness::check::check;
use cpbench_harness::Suite;
use cpbench_problems::Instance;
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, SolveResult, Status};

use crate::support::{column, cpbench, nat_map_spec, summary, temp_res};

fn solve(
    name: &str,
    settings: Option<serde_json::Value>,
    inst: &Instance,
    tol: f64,
) -> SolveResult {
    let mut b = build(name, settings.as_ref()).unwrap();
    let ex = Executor::new(ExecSettings {
        tol,
        max_iter: 20_000,
        ..Default::default()
    });
    ex.run(b.solver.as_mut(), inst, None, &mut []).unwrap()
}

/// Objective agreements looser than 1e-6 relative, measured (dev profile, this machine):
/// `(instance, solver or "*" for all, bound)`, the bound about 2.5 times the measured relative
/// difference. The objective error of a point with natural-map residual `e` is first order
/// in `||e||`, of size `||e|| ||gamma||` (for feasible `gamma`,
/// `f(gamma) - f* <= ||e|| (||gamma - gamma*|| + ||e|| + ||N gamma + r||)`), while the stopping
/// test bounds `||e|| / ||r||`: where `|f*|` is small against `||r|| ||gamma*||` a 1e-6
/// residual leaves more than 1e-6 relative error in `f`.
/// - Capsules LCP: `|f*| = 3.8e-3`; measured 1.3e-6 (mpgp) to 2.1e-6 (pgs).
/// - settled fill CCPs, APGD (the only solver reaching 1e-6 there within 20000 iterations;
///   the others are in `default_suite.rs`'s `KNOWN_HARD` and not compared here): fill-5
///   7.1e-6, fill-10 9.3e-6, ellipsoid-fill-3 1.9e-6.
const LOOSE: [(&str, &str, f64); 4] = [
    ("Capsules-i125-1213__lcp", "*", 5e-6),
    ("fill-5_step0601__ccp", "apgd", 2e-5),
    ("fill-10_step0601__ccp", "apgd", 2.5e-5),
    ("ellipsoid-fill-3_step0501__ccp", "apgd", 5e-6),
];

/// The solvers compared with the oracle; on the settled fill and ellipsoid-fill CCPs only APGD
/// (see [`LOOSE`]).
fn compared(inst: &Instance) -> &'static [&'static str] {
    let settled_3d = inst.name().starts_with("fill-") || inst.name().starts_with("ellipsoid-fill-");
    if settled_3d && inst.name().ends_with("__ccp") {
        &["apgd"]
    } else {
        &["pgs", "jacobi", "apgd", "spgqp", "mprgp", "mpgp"]
    }
}

#[test]
fn clarabel_oracle_agrees_with_every_solver_on_the_default_suite() {
    let insts = Suite::default_suite().load().unwrap();
    let spec = nat_map_spec(1e-6);
    let tight = serde_json::json!({"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12});
    for inst in &insts {
        if !inst.is_symmetric() {
            // the general LCPs (lcp_tobenna, lcp_CPS_4) are not QPs: the oracle and the QP
            // solvers refuse them (tests/it/lcp_pivoting_cli.rs, solvers/tests/lcp_*.rs)
            let r = solve("clarabel", None, inst, 1e-6);
            assert_eq!(r.status, Status::Unsupported, "{}", inst.name());
            continue;
        }
        let oracle = solve("clarabel", Some(tight.clone()), inst, 1e-6);
        assert_eq!(oracle.status, Status::Converged, "{}", inst.name());
        let v = check(inst, &oracle.gamma, spec);
        assert!(
            v.success,
            "clarabel oracle on {}: natural map {:e}",
            inst.name(),
            v.residuals.nat_map_rel_2
        );
        let f_ref = v.residuals.objective;
        // Issue 5: the interior point at 1e-8 agrees with the oracle to 1e-7 relative.
        let ipm = solve("ipm", None, inst, 1e-8);
        assert_eq!(ipm.status, Status::Converged, "ipm on {}", inst.name());
        let f = ipm.residuals.objective;
        let rel = (f - f_ref).abs() / f_ref.abs();
        println!(
            "{:28} ipm     f {f:.15e} oracle {f_ref:.15e} rel {rel:.2e}",
            inst.name()
        );
        assert!(
            rel <= 1e-7,
            "{}: objective of ipm {f:.15e} vs Clarabel {f_ref:.15e}: relative {rel:.2e}",
            inst.name()
        );
        for &name in compared(inst) {
            if !build(name, None).unwrap().solver.supports(inst.class()) {
                continue; // MPRGP on a CCP
            }
            let res = solve(name, None, inst, 1e-6);
            assert_eq!(res.status, Status::Converged, "{name} on {}", inst.name());
            let f = check(inst, &res.gamma, spec).residuals.objective;
            let rel = (f - f_ref).abs() / f_ref.abs();
            let bound = LOOSE
                .iter()
                .find(|(i, s, _)| *i == inst.name() && (*s == "*" || *s == name))
                .map_or(1e-6, |l| l.2);
            println!(
                "{:28} {name:7} f {f:.15e} oracle {f_ref:.15e} rel {rel:.2e}",
                inst.name()
            );
            assert!(
                rel <= bound,
                "{}: objective of {name} {f:.15e} vs Clarabel {f_ref:.15e}: relative {rel:.2e} > {bound:e}",
                inst.name()
            );
            // the iterates are feasible, so they cannot beat the optimum by more than the
            // oracle's own error
            assert!(
                f >= f_ref - 1e-9 * f_ref.abs(),
                "{}: {name} {f:.15e} below the optimum {f_ref:.15e}",
                inst.name()
            );
        }
    }
}

/// Natural-map relative residual (2-norm) of Clarabel's answer at its default settings,
/// measured on the friction CCPs of the default suite (dev profile, this machine). Clarabel
/// reports `Solved` on all of them.
const CLAIMED_SOLVED: [(&str, f64); 5] = [
    ("Spheres-i099-356-679__ccp", 9.22e-6),
    ("Capsules-i125-1213__ccp", 1.26e-6),
    ("Box_Stacks-i0122-82-5__ccp", 1.01e-3),
    ("NESpheres_10_1__ccp", 1.18e-6),
    ("Rover4396__ccp", 2.15e-5),
];

#[test]
fn clarabel_claims_solved_but_the_natural_map_check_fails_at_1e8() {
    let insts = Suite::default_suite().load().unwrap();
    let spec = nat_map_spec(1e-8);
    for (name, measured) in CLAIMED_SOLVED {
        let inst = insts.iter().find(|i| i.name() == name).unwrap();
        let res = solve("clarabel", None, inst, 1e-8);
        let msg = res.message.clone().unwrap();
        assert!(msg.starts_with("clarabel: Solved in "), "{name}: {msg}");
        // the claim is reported as converged ...
        assert_eq!(res.status, Status::Converged, "{name}");
        // ... and the harness's independent check fails
        let v = check(inst, &res.gamma, spec);
        assert!(!v.success, "{name}");
        let r = v.residuals.nat_map_rel_2;
        assert!(
            r >= measured / 3.0 && r <= measured * 3.0,
            "{name}: natural map {r:e}, measured {measured:e}"
        );
        // Clarabel's own measures are below its 1e-8 tolerances
        let get = |k: &str| res.counters.iter().find(|(n, _)| n == k).unwrap().1;
        assert!(get("clarabel_res_primal") <= 1e-8 && get("clarabel_res_dual") <= 1e-8);
        assert!(get("clarabel_gap_abs") <= 1e-8 || get("clarabel_gap_rel") <= 1e-8);
    }
}

/// The same through the CLI: `cpbench run --solvers clarabel --tol 1e-8` on the Siconos
/// `Rover4396.dat` CCP (symmetrised, as in the default suite) writes a row that claims
/// `converged` and is checked `no`.
#[test]
fn cli_shows_claimed_success_checked_failure() {
    let (_dir, out) = temp_res();
    cpbench_test_support::succeed(
        cpbench("run --solvers clarabel --tol 1e-8 --no-plots --symmetrize --instances")
            .arg(cpbench_test_support::fixture("siconos-fc3d/Rover4396.dat"))
            .arg("--out")
            .arg(&out),
    );
    let (h, rows) = summary(&out);
    assert_eq!(rows.len(), 1);
    let col = |name: &str| column(&h, &rows[0], name);
    assert_eq!(col("instance"), "Rover4396__ccp");
    assert_eq!(col("status"), "converged");
    assert_eq!(col("success"), "no");
    let res: f64 = col("nat_map_rel_2").parse().unwrap();
    assert!(res > 7e-6 && res < 7e-5, "{res:e}"); // measured 2.15e-5
    assert!(col("message").starts_with("clarabel: Solved in "));
    assert!(col("counters").contains("clarabel_iterations="));
}
