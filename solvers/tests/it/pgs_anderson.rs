//! PGS with Anderson acceleration of its sweep map (`anderson_depth`; the preset
//! `pgs:anderson`, depth 5): the same answers as the interior point in far fewer sweeps than
//! plain PGS, and the settings and classes it refuses. Its chunked passes are bit-identical
//! across thread counts (`chunked.rs`).

use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Status};
use cpbench_test_support::{counter, max_abs_diff, solve};
use serde_json::json;

use crate::support::{
    converged, coulomb_file, traced, velocity, BOXES_STACK1, BOX_STACKS, SPHERES,
};

/// The CCP relaxations of three stacks at tolerance 1e-8: `pgs:anderson` converges within the
/// sweeps measured (release build: Box_Stacks 29, Spheres 93, BoxesStack1 3,667) with
/// margin, plain PGS needs at least 2.5 times as many sweeps (84, 986; BoxesStack1 is at
/// 5e-6 after 100,000), and the velocities (relative to `max |r|`: within 1e-7, measured
/// 4.0e-9 / 7.8e-9 / 2.2e-8) and objectives (1e-10 relative, measured 1.5e-16 / 1.2e-15 /
/// 3.5e-12) agree with the interior point's.
#[test]
fn pgs_anderson_reaches_the_interior_point_answer_in_far_fewer_sweeps() {
    for (file, cap) in [(BOX_STACKS, 60), (SPHERES, 200), (BOXES_STACK1, 6000)] {
        let ccp = coulomb_file(file).ccp_relaxation().unwrap();
        let aa = converged("pgs:anderson", &ccp, 1e-8, cap, file);
        let plain = solve("pgs", &ccp, 1e-8, (5 * aa.iterations / 2).max(1));
        assert_ne!(
            plain.status,
            Status::Converged,
            "{file}: plain pgs in {}",
            plain.iterations
        );
        let ipm = converged("ipm", &ccp, 1e-10, 200, file);
        // velocities relative to the free velocity's scale (a resting stack's are near 0)
        let scale = ccp.r().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let gap = max_abs_diff(&velocity(&ccp, &ipm.gamma), &velocity(&ccp, &aa.gamma)) / scale;
        assert!(gap < 1e-7, "{file}: velocity gap {gap:e} to ipm");
        let (fa, fi) = (ccp.objective(&aa.gamma), ccp.objective(&ipm.gamma));
        assert!(
            (fa - fi).abs() <= 1e-10 * fi.abs(),
            "{file}: objective {fa} against ipm's {fi}"
        );
        // the extrapolation was taken, not rejected at every sweep
        assert!(
            counter(&aa, "anderson_rejections") < aa.iterations as f64 / 2.0,
            "{file}: {:?}",
            aa.counters
        );
    }
}

/// The depth's and the safeguard's ranges, and the boxed LCP (moving friction bounds: no
/// fixed set to project the extrapolation onto) refused with the setting named.
#[test]
fn pgs_anderson_settings_and_classes_refused() {
    for bad in [
        json!({"anderson_depth": 21}),
        json!({"anderson_safeguard": 0.0}),
    ] {
        let e = build("pgs", Some(&bad)).err().expect("refused");
        assert!(e.to_string().contains("anderson_"), "{e}");
    }
    let blcp = coulomb_file(BOX_STACKS).blcp().unwrap();
    let exec = ExecSettings {
        tol: 1e-8,
        max_iter: 100,
        ..Default::default()
    };
    let (r, _) = traced(
        "pgs",
        Some(&json!({"anderson_depth": 5})),
        &blcp,
        None,
        exec,
    );
    assert_eq!(r.iterations, 0);
    let msg = r.message.unwrap_or_default();
    assert!(
        msg.contains("anderson_depth = 5") && msg.contains("boxed LCP"),
        "{msg}"
    );
}
