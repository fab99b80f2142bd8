//! `cpbench run` with the pivoting LCP solvers on the LCP fixtures, end to end: every file
//! that has a solution is solved by `lemke` to an LCP error <= 1e-10, the two LCPs Lemke cannot
//! solve end as `ray_termination`, and a QP solver is refused the non-symmetric files.

use crate::support::{cpbench, run_fixtures};

#[test]
fn run_lemke_enum_and_pgs_on_the_lcp_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let (_, rows) = run_fixtures(
        &mut cpbench("run --solvers lemke,enum,pgs --tol 1e-10"),
        &["lcp"],
        &dir.path().join("r"),
    );
    let mut seen = 0;
    for r in &rows {
        let (i, s, st) = (r.instance.as_str(), r.solver.as_str(), r.status.as_str());
        let err = r.residuals.fc3d_error;
        match (s, i) {
            ("lemke", "lcp_CPS_3" | "lcp_Pang_isolated_sol_perturbed") => {
                assert_eq!(st, "ray_termination", "{i}")
            }
            ("lemke", _) => {
                assert_eq!(st, "converged", "{i}");
                assert!(err <= 1e-10, "{i}: {err}");
            }
            ("enum", "lcp_mmc" | "lcp_tobenna") => assert_eq!(st, "unsupported", "{i}"),
            ("enum", "lcp_Pang_isolated_sol_perturbed") => assert_eq!(st, "stalled"),
            ("enum", _) => assert_eq!(st, "converged", "{i}"),
            ("pgs", "lcp_CPS_2" | "lcp_CPS_3" | "lcp_tobenna" | "lcp_Pang_isolated_sol") => {
                assert_eq!(st, "unsupported", "{i}")
            }
            _ => {}
        }
        seen += 1;
    }
    assert_eq!(seen, 15 * 3);
}
