//! `cpbench run` with the pivoting LCP solvers on the LCP fixtures, end to end: every file
//! that has a solution is solved by `lemke` to an LCP error <= 1e-10, the two LCPs Lemke cannot
//! solve end as `ray_termination`, and a QP solver is refused the non-symmetric files.

use cpbench_test_support::{fixture, succeed};

use crate::support::cpbench;

#[test]
fn run_lemke_enum_and_pgs_on_the_lcp_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    succeed(
        cpbench("run --instances")
            .arg(fixture("lcp"))
            .args(["--solvers", "lemke,enum,pgs", "--tol", "1e-10", "--out"])
            .arg(&out),
    );
    let text = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (inst, solver, status) = (col("instance"), col("solver"), col("status"));
    let err = col("fc3d_error");
    let mut seen = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let (i, s, st) = (f[inst], f[solver], f[status]);
        match (s, i) {
            ("lemke", "lcp_CPS_3" | "lcp_Pang_isolated_sol_perturbed") => {
                assert_eq!(st, "ray_termination", "{i}")
            }
            ("lemke", _) => {
                assert_eq!(st, "converged", "{i}");
                assert!(f[err].parse::<f64>().unwrap() <= 1e-10, "{i}: {}", f[err]);
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
