//! `nsgs`'s local one-contact solvers (the De Saxce iteration, the exact 2-D enumeration) and its
//! settings (`cpbench_solvers::nsgs`).

use cpbench_solvers::nsgs::{local_solve, local_solve2_exact, Nsgs, NsgsSettings};

#[test]
fn local_solve_sliding_one_contact() {
    // W = I, q = (-1, 2, 0), mu = 0.5: sliding, r = (1, -0.5, 0), u = (0, 1.5, 0)
    let b = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let mut r = [0.0; 3];
    local_solve::<3>(&b, &[-1.0, 2.0, 0.0], 0.5, 1.0, 200, 1e-15, &mut r);
    assert!(
        (r[0] - 1.0).abs() < 1e-12 && (r[1] + 0.5).abs() < 1e-12,
        "{r:?}"
    );
    assert!(r[2].abs() < 1e-14);
}

#[test]
fn local_2d_cases_analytic() {
    // B = [[2, 0], [0, 1]] (row-major), mu = 0.5
    let b = [2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    let mut r = [9.0, 9.0];
    // take-off: lin_n >= 0
    assert!(local_solve2_exact(&b, &[1.0, -3.0, 0.0], 0.5, &mut r));
    assert_eq!(r, [0.0, 0.0]);
    // stick: lin = (-2, 0.2): r = (1, -0.2), |r_t| = 0.2 <= 0.5
    assert!(local_solve2_exact(&b, &[-2.0, 0.2, 0.0], 0.5, &mut r));
    assert!(
        (r[0] - 1.0).abs() < 1e-15 && (r[1] + 0.2).abs() < 1e-15,
        "{r:?}"
    );
    // slide-: lin = (-2, 3): stick would need r_t = -3; r_n = 1, r_t = -0.5,
    // u_t = -0.5 + 3 = 2.5 >= 0 (sliding in +t, friction opposes)
    assert!(local_solve2_exact(&b, &[-2.0, 3.0, 0.0], 0.5, &mut r));
    assert!(
        (r[0] - 1.0).abs() < 1e-15 && (r[1] + 0.5).abs() < 1e-15,
        "{r:?}"
    );
    // slide+: lin = (-2, -3): r = (1, 0.5), u_t = 0.5 - 3 = -2.5 <= 0
    assert!(local_solve2_exact(&b, &[-2.0, -3.0, 0.0], 0.5, &mut r));
    assert!(
        (r[0] - 1.0).abs() < 1e-15 && (r[1] - 0.5).abs() < 1e-15,
        "{r:?}"
    );
    // the local De Saxce iteration reaches the same slide- answer
    let mut g = [0.0, 0.0];
    local_solve::<2>(&b, &[-2.0, 3.0, 0.0], 0.5, 0.5, 500, 1e-15, &mut g);
    assert!(
        (g[0] - 1.0).abs() < 1e-12 && (g[1] + 0.5).abs() < 1e-12,
        "{g:?}"
    );
}

#[test]
fn settings_validation() {
    let bad = NsgsSettings {
        omega: 2.0,
        ..NsgsSettings::default()
    };
    assert!(Nsgs::new(bad).is_err());
    let bad = NsgsSettings {
        local_max_iter: 0,
        ..NsgsSettings::default()
    };
    assert!(Nsgs::new(bad).is_err());
    assert!(Nsgs::new(NsgsSettings::default()).is_ok());
}
