//! The boxed LCP of ODE-style engines (`ProblemClass::Blcp`, friction boxes with moving bounds)
//! solved by `pgs` (ODE's projected Gauss-Seidel): agreement with the CCP where nothing slides,
//! the analytic answers where it slides, real fixtures, and the solvers that refuse it.

use cpbench_problems::io::{load, ClassChoice, LoadOptions};
use cpbench_problems::residual::{coulomb_gap, residuals};
use cpbench_problems::{CscMatrix, Instance, ProblemClass, Provenance, ValidationOptions};
use cpbench_solvers::Status;
use cpbench_test_support::{fixture, random_psd, solve, TestRng};

fn coulomb(w: &[f64], n: usize, q: Vec<f64>, mu: Vec<f64>) -> Instance {
    let m = CscMatrix::from_dense_col_major(n, n, w).unwrap();
    Instance::new_coulomb(
        "t",
        m,
        q,
        mu,
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

const EYE: [f64; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

/// Two coupled contacts sticking: `q = -W gamma*` with `gamma*` strictly inside the cones
/// (hence inside the boxes), `W` symmetric positive definite, so `u = 0` at the one solution of
/// every formulation. pgs on the BLCP, apgd and pgs on the CCP, nsgs on the Coulomb problem all
/// find `gamma*` to 1e-8.
#[test]
fn sticking_contacts_blcp_equals_ccp() {
    let mut rng = TestRng::new(7);
    let w = random_psd(6, 9, 0.5, &mut rng);
    let star = [1.0, 0.1, -0.05, 0.8, -0.1, 0.2];
    let mut q = vec![0.0; 6];
    for (i, qi) in q.iter_mut().enumerate() {
        *qi = -(0..6).map(|j| w[j * 6 + i] * star[j]).sum::<f64>();
    }
    let c = coulomb(&w, 6, q, vec![0.5, 0.4]);
    let blcp = c.blcp().unwrap();
    let ccp = c.ccp_relaxation().unwrap();
    let runs = [("pgs", &blcp), ("pgs", &ccp), ("apgd", &ccp), ("nsgs", &c)];
    let mut sols = Vec::new();
    for (name, inst) in runs {
        let r = solve(name, inst, 1e-12, 100_000);
        assert_eq!(r.status, Status::Converged, "{name} on {}", inst.class());
        for (x, y) in r.gamma.iter().zip(star) {
            assert!(
                (x - y).abs() < 1e-8,
                "{name} on {}: {:?}",
                inst.class(),
                r.gamma
            );
        }
        sols.push(r.gamma);
    }
    let g = coulomb_gap(&c, &sols[0], &sols[2]);
    assert!(g.r_rel < 1e-8 && g.u_n_rel < 1e-8, "{g:?}");
}

/// One sliding contact, `W = I`, `mu = 0.5`, `q_n = -1`:
/// along an axis (`q_t = (2, 0)`) the BLCP gives Coulomb's answer `(1, -0.5, 0)`, the CCP
/// `(1.6, -0.8, 0)` (a spurious separation `u_n = mu |u_t| = 0.6`); along the diagonal
/// (`q_t = (sqrt 2, sqrt 2)`) the box corner gives `(1, -0.5, -0.5)`, friction `sqrt 2` times
/// Coulomb's `(1, -0.354, -0.354)`, in the same direction and still without normal velocity.
#[test]
fn sliding_contact_blcp_is_the_box_answer() {
    let s2 = 2f64.sqrt();
    for (qt, blcp_sol, coulomb_sol) in [
        ([2.0, 0.0], [1.0, -0.5, 0.0], [1.0, -0.5, 0.0]),
        ([s2, s2], [1.0, -0.5, -0.5], [1.0, -0.5 / s2, -0.5 / s2]),
    ] {
        let c = coulomb(&EYE, 3, vec![-1.0, qt[0], qt[1]], vec![0.5]);
        let blcp = c.blcp().unwrap();
        let a = solve("pgs", &blcp, 1e-12, 1000);
        assert_eq!(a.status, Status::Converged);
        for (x, y) in a.gamma.iter().zip(blcp_sol) {
            assert!((x - y).abs() < 1e-12, "{:?}", a.gamma);
        }
        assert!(a.residuals.nat_map_rel_2 <= 1e-12);
        let b = solve("nsgs", &c, 1e-12, 1000);
        for (x, y) in b.gamma.iter().zip(coulomb_sol) {
            assert!((x - y).abs() < 1e-10, "{:?}", b.gamma);
        }
        // both have u_n = 0; the impulses differ by the box corner only
        let g = coulomb_gap(&c, &a.gamma, &b.gamma);
        assert!(g.u_n_rel < 1e-10, "{g:?}");
        let want = if qt[1] == 0.0 {
            0.0
        } else {
            (0.5 * s2 - 0.5) / 1.5f64.sqrt()
        };
        assert!((g.r_rel - want).abs() < 1e-10, "{g:?} vs {want}");
        // the CCP lifts off: u_n = mu |u_t|
        let ccp = solve("apgd", &c.ccp_relaxation().unwrap(), 1e-12, 10_000);
        let mut u = [0.0; 3];
        c.gradient(&ccp.gamma, &mut u);
        assert!((ccp.gamma[0] - 1.6).abs() < 1e-9, "{:?}", ccp.gamma);
        assert!((u[0] - 0.5 * u[1].hypot(u[2])).abs() < 1e-9, "{u:?}");
        // the Coulomb problem's fc3d error at the BLCP's answer: 0 along the axis, not on the
        // diagonal (the box corner lies outside the cone)
        let e = residuals(&c, &a.gamma).fc3d_error;
        assert_eq!(e < 1e-12, qt[1] == 0.0, "{e}");
    }
}

/// ODE's projected Gauss-Seidel on the BLCP of real fixtures reaches the BLCP natural map
/// `1e-8` (relative to `||q||`); the QP and Coulomb solvers refuse the class.
#[test]
fn pgs_solves_the_blcp_of_fixtures() {
    let opts = LoadOptions {
        class: ClassChoice::Blcp,
        ..Default::default()
    };
    for (f, max_iter) in [
        ("siconos-fc3d/NESpheres_10_1.dat", 20_000),
        ("siconos-fc3d/FC3D_Example1_SBM.dat", 20_000),
        ("siconos-fc3d/Rover4396.dat", 20_000),
        ("fclib/Box_Stacks-i0122-82-5.hdf5", 50_000),
    ] {
        let inst = load(&fixture(f), &opts).unwrap();
        assert_eq!(inst.class(), ProblemClass::Blcp);
        let r = solve("pgs", &inst, 1e-8, max_iter);
        assert_eq!(r.status, Status::Converged, "{f}: {:?}", r.residuals);
        let res = residuals(&inst, &r.gamma);
        assert!(
            res.nat_map_rel_2 <= 1e-8 && res.primal_feas == 0.0,
            "{f}: {res:?}"
        );
    }
    let inst = load(&fixture("siconos-fc3d/NESpheres_10_1.dat"), &opts).unwrap();
    for name in ["apgd", "spgqp", "mprgp", "nsgs", "desaxce-apgd", "jacobi"] {
        assert_eq!(
            solve(name, &inst, 1e-8, 10).status,
            Status::Unsupported,
            "{name}"
        );
    }
}
