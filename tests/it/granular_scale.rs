//! The granular generator's storages of `N` (issue 13): APGD runs the same on the assembled
//! `N` (CSC or block) and on the matrix-free `D^T M^-1 D` of the same step; `generate
//! --no-solve --operator matrix-free --format npz` exports `D` and `M` that load back as a
//! matrix-free instance with the assembled instance's products.

use cpbench_granular::{SceneKind, SceneSpec};
use cpbench_problems::io::{load, LoadOptions};
use cpbench_problems::operator::OperatorKind;
use cpbench_problems::Instance;
use cpbench_test_support::{max_rel_diff, solve};

use crate::support::{cpbench, failure, stdout_of};

fn pyramid(frictionless: bool) -> cpbench_granular::Simulation {
    SceneSpec {
        kind: SceneKind::Pyramid,
        size: 7,
        seed: 1,
        frictionless,
        aspect: None,
    }
    .build()
    .unwrap()
    .into_simulation()
    .unwrap()
}

fn instance(sim: &mut cpbench_granular::Simulation, kind: OperatorKind) -> Instance {
    sim.set_operator(Some(kind));
    let inst = sim.build_instance().unwrap().unwrap().clone();
    assert_eq!(inst.operator_kind(), kind);
    inst
}

/// APGD from zero: a fixed budget of 150 iterations gives the same iterate on every storage
/// to rounding, and a converged solve takes the same iterations to the same solution.
#[test]
fn apgd_runs_the_same_on_assembled_and_matrix_free_operators() {
    for frictionless in [false, true] {
        let mut sim = pyramid(frictionless);
        let csc = instance(&mut sim, OperatorKind::Csc);
        let block = instance(&mut sim, OperatorKind::Block);
        let free = instance(&mut sim, OperatorKind::MatrixFree);
        assert!(csc.n_blocks() > 300, "{} contacts", csc.n_blocks());
        let fixed: Vec<_> = [&csc, &block, &free]
            .iter()
            .map(|i| solve("apgd", i, 1e-30, 150))
            .collect();
        for (k, r) in fixed.iter().enumerate() {
            assert_eq!(r.iterations, 150, "storage {k}");
            let d = max_rel_diff(&fixed[0].gamma, &r.gamma);
            assert!(d < 1e-10, "storage {k}: iterate differs by {d:e}");
        }
        assert!(fixed[0].gamma.iter().any(|&g| g > 1e-3), "trivial solution");
        let conv: Vec<_> = [&csc, &free]
            .iter()
            .map(|i| solve("apgd", i, 1e-8, 20_000))
            .collect();
        assert_eq!(conv[0].iterations, conv[1].iterations);
        let d = max_rel_diff(&conv[0].gamma, &conv[1].gamma);
        assert!(d < 1e-9, "converged solutions differ by {d:e}");
    }
}

/// `generate --no-solve` exports the first step's problem without solving: as `D` and `M`
/// with `--operator matrix-free`, whose products equal those of the assembled export; a
/// matrix-free fclib export and `--no-solve` with several steps are refused.
#[test]
fn no_solve_matrix_free_npz_export() {
    let dir = tempfile::tempdir().unwrap();
    let gen = |name: &str, extra: &[&str]| -> std::path::PathBuf {
        let out = dir.path().join(name);
        let text = stdout_of(
            cpbench(
                "generate --scene pyramid --size 7 --steps 1 --export-every 1 --no-solve \
                 --format npz --out",
            )
            .arg(&out)
            .args(extra),
        );
        assert!(text.contains("without solving"), "{text}");
        out.join("pyramid-7_step0001__ccp.npz")
    };
    let a = load(&gen("csc", &[]), &LoadOptions::default()).unwrap();
    let b = load(
        &gen("free", &["--operator", "matrix-free"]),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(a.operator_kind(), OperatorKind::Csc);
    assert_eq!(b.operator_kind(), OperatorKind::MatrixFree);
    assert_eq!(a.r(), b.r());
    let x: Vec<f64> = (0..a.n()).map(|i| (i as f64 * 0.37).sin()).collect();
    let (mut ya, mut yb) = (vec![0.0; a.n()], vec![0.0; a.n()]);
    a.matvec(&x, &mut ya);
    b.matvec(&x, &mut yb);
    assert!(max_rel_diff(&ya, &yb) < 1e-12);
    for (args, needle) in [
        (
            "--steps 1 --operator matrix-free --format fclib",
            "not fclib",
        ),
        ("--steps 2 --no-solve", "steps = 1"),
    ] {
        let (_, e) = failure(
            cpbench("generate --scene pyramid --size 3 --out")
                .arg(dir.path().join("refused"))
                .args(args.split_whitespace()),
        );
        assert!(e.contains(needle), "{e}");
    }
}
