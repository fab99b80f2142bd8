//! ContactBench's problems (`tests/fixtures/contactbench/`, BSD-2): the reader's permutation
//! (normal first) against entries of the file, and the physical-fidelity criteria
//! (`cpbench_problems::fidelity`) of each formulation's answer on the sliding cube, as
//! Le Lidec et al. (ContactBench, 2024) describe the relaxations: the CCP lifts a sliding body
//! (its answer's velocity lies on the polar cone, `u_n = mu ||u_T||` on every sliding contact),
//! the boxed LCP leaves the cone, the Coulomb answer meets every criterion.

use cpbench_problems::fidelity::fidelity;
use cpbench_problems::io::{load, ClassChoice, LoadOptions};
use cpbench_problems::Instance;
use cpbench_solvers::{SolveResult, Status};
use cpbench_test_support::fixture;

/// `name` run to `tol` from zero, asserted converged.
fn solve(name: &str, inst: &Instance, tol: f64) -> SolveResult {
    let r = cpbench_test_support::solve(name, inst, tol, 100_000);
    assert_eq!(r.status, Status::Converged, "{name} on {}", inst.name());
    r
}

fn cube(class: ClassChoice) -> Instance {
    let opts = LoadOptions {
        class,
        ..LoadOptions::default()
    };
    load(&fixture("contactbench/sliding_cube.npz"), &opts).unwrap()
}

#[test]
fn the_sliding_cube_reads_normal_first() {
    let c = cube(ClassChoice::Ccp);
    assert_eq!((c.n(), c.n_blocks()), (12, 4));
    assert_eq!(c.constraints().friction().unwrap(), [0.9; 4]);
    // file: g = (-0.14457191, 1.30114761, -0.00981, ...) with the normal last
    assert!((c.r()[0] + 0.00981).abs() < 1e-10, "{}", c.r()[0]);
    assert!((c.r()[1] + 0.14457191).abs() < 1e-8 && (c.r()[2] - 1.30114761).abs() < 1e-8);
    // file: G[2][2] = 4, G[0][0] = 3.7931, G[1][1] = 4.4517, G[0][2] = 1.7227, G[1][2] = -1.3782
    let w = c.n_mat();
    for (i, j, v) in [
        (0, 0, 4.0),
        (1, 1, 3.7931),
        (2, 2, 4.4517),
        (1, 0, 1.7227),
        (2, 0, -1.3782),
    ] {
        assert!(
            (w.get(i, j) - v).abs() < 1e-4,
            "W({i},{j}) = {}",
            w.get(i, j)
        );
    }
}

#[test]
fn fidelity_of_each_formulation_on_the_sliding_cube() {
    let coulomb = cube(ClassChoice::Coulomb);
    let mu = 0.9;
    // Coulomb (nsgs): every criterion at the tolerance's level
    let g = solve("nsgs", &coulomb, 1e-11).gamma;
    let f = fidelity(&coulomb, &g);
    assert!(f.values().iter().all(|v| *v < 1e-9), "coulomb {f:?}");
    // the cube slides: every contact on the cone's surface
    let mut u = vec![0.0; 12];
    coulomb.gradient(&g, &mut u);
    for c in 0..4 {
        let ut = u[3 * c + 1].hypot(u[3 * c + 2]);
        assert!(ut > 0.1 && (g[3 * c + 1].hypot(g[3 * c + 2]) - mu * g[3 * c]).abs() < 1e-9);
    }

    // CCP (apgd): u_n = mu ||u_T|| on every contact that carries an impulse: force at a
    // distance, the largest such u_n is the spurious velocity
    let ccp = cube(ClassChoice::Ccp);
    let g = solve("apgd", &ccp, 1e-11).gamma;
    let f = fidelity(&coulomb, &g);
    ccp.gradient(&g, &mut u);
    let mut lift: f64 = 0.0;
    for c in 0..4 {
        if g[3 * c] > 1e-6 {
            let ut = u[3 * c + 1].hypot(u[3 * c + 2]);
            assert!((u[3 * c] - mu * ut).abs() < 1e-8, "contact {c}: {u:?}");
            lift = lift.max(u[3 * c] * g[3 * c]);
        }
    }
    let gmax = (0..4).map(|c| g[3 * c]).fold(0.0, f64::max);
    assert!(
        (f.spurious_velocity - lift / gmax).abs() < 1e-9,
        "{f:?} {lift}"
    );
    assert!(
        f.spurious_velocity > 0.1 && f.cone_violation < 1e-12,
        "ccp {f:?}"
    );

    // boxed LCP (pgs): outside the cone, and no normal velocity where it pushes
    let blcp = coulomb.blcp().unwrap();
    let g = solve("pgs", &blcp, 1e-11).gamma;
    let f = fidelity(&coulomb, &g);
    assert!(
        f.cone_violation > 1e-3 && f.spurious_velocity < 1e-8,
        "blcp {f:?}"
    );
}

#[test]
fn the_two_cubes_solve_as_coulomb_and_meet_the_criteria() {
    let opts = LoadOptions {
        class: ClassChoice::Coulomb,
        ..LoadOptions::default()
    };
    let c = load(&fixture("contactbench/2cubes_t0.npz"), &opts).unwrap();
    assert_eq!((c.n(), c.constraints().friction().unwrap()[4]), (24, 0.95));
    let g = solve("nsgs", &c, 1e-9).gamma;
    let f = fidelity(&c, &g);
    assert!(f.values().iter().all(|v| *v < 1e-7), "{f:?}");
}
