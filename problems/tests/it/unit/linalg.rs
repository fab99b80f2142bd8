//! The tests of `cpbench_problems::linalg` (until now its `#[cfg(test)]` module in
//! `problems/src/linalg.rs`).

use cpbench_problems::error::ProblemError;
use cpbench_problems::linalg::*;

#[test]
fn triplets_sum_duplicates_and_matvec() {
    let a = CscMatrix::from_triplets(
        2,
        2,
        &[
            (0, 0, 1.0),
            (0, 0, 1.0),
            (1, 0, 3.0),
            (0, 1, 3.0),
            (1, 1, 4.0),
        ],
    )
    .unwrap();
    assert_eq!(a.nnz(), 4);
    assert_eq!(a.get(0, 0), 2.0);
    let mut y = [0.0; 2];
    a.sym_matvec(&[1.0, 2.0], &mut y);
    assert_eq!(y, [8.0, 11.0]);
    a.matvec(&[1.0, 2.0], &mut y);
    assert_eq!(y, [8.0, 11.0]);
    assert_eq!(a.asymmetry().0, 0.0);
}

#[test]
fn csc_parts_round_trip_and_checks() {
    let a =
        CscMatrix::from_csc_parts(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 3.0, 4.0]).unwrap();
    assert_eq!(
        (a.get(0, 0), a.get(1, 0), a.get(0, 1), a.get(1, 1)),
        (1.0, 3.0, 0.0, 4.0)
    );
    let (cp, ri, va) = a.into_csc_parts();
    assert_eq!(
        (cp, ri, va),
        (vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 3.0, 4.0])
    );
    assert!(matches!(
        CscMatrix::from_csc_parts(2, 2, vec![0, 2, 3], vec![1, 0, 1], vec![1.0; 3]),
        Err(ProblemError::IndexOutOfRange { row: 0, col: 0, .. })
    ));
    assert!(matches!(
        CscMatrix::from_csc_parts(2, 2, vec![0, 2], vec![0, 1], vec![1.0; 2]),
        Err(ProblemError::SizeMismatch { .. })
    ));
    assert!(matches!(
        CscMatrix::from_csc_parts(2, 1, vec![0, 1], vec![0], vec![f64::NAN]),
        Err(ProblemError::NonFinite { .. })
    ));
}

#[test]
fn rejects_bad_input() {
    assert!(matches!(
        CscMatrix::from_triplets(2, 2, &[(2, 0, 1.0)]),
        Err(ProblemError::IndexOutOfRange { row: 2, .. })
    ));
    assert!(matches!(
        CscMatrix::from_triplets(2, 2, &[(0, 1, f64::NAN)]),
        Err(ProblemError::NonFinite { .. })
    ));
}

#[test]
fn asymmetry_and_symmetrize() {
    let a = CscMatrix::from_triplets(2, 2, &[(0, 1, 1.0), (1, 0, 3.0)]).unwrap();
    let (rel, max_abs, _, _) = a.asymmetry();
    assert!((rel - (8.0f64).sqrt() / (10.0f64).sqrt()).abs() < 1e-15);
    assert_eq!(max_abs, 2.0);
    let s = a.symmetrized();
    assert_eq!(s.get(0, 1), 2.0);
    assert_eq!(s.get(1, 0), 2.0);
}

#[test]
fn asymmetry_matches_the_definition_on_random_patterns() {
    // xorshift pattern: entries, some mirrored exactly, some not, some missing
    let mut x = 88172645463325252u64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let n = 40;
    let mut t = Vec::new();
    for _ in 0..300 {
        let (i, j) = ((rnd() % n) as usize, (rnd() % n) as usize);
        let v = (rnd() % 1000) as f64 / 100.0 - 5.0;
        t.push((i, j, v));
        match rnd() % 3 {
            0 => t.push((j, i, v)),
            1 => t.push((j, i, v + 0.5)),
            _ => {}
        }
    }
    let a = CscMatrix::from_triplets(n as usize, n as usize, &t).unwrap();
    let (mut sum, mut max_abs, mut at) = (0.0, 0.0f64, (0, 0));
    for j in 0..a.ncols() {
        let (rows, vals) = a.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            let d: f64 = v - a.get(j, i);
            sum += d * d;
            if d.abs() > max_abs {
                max_abs = d.abs();
                at = (i, j);
            }
        }
    }
    let (rel, m, i, j) = a.asymmetry();
    assert_eq!(rel, sum.sqrt() / a.frobenius_norm());
    assert_eq!((m, (i, j)), (max_abs, at));
    assert!(rel > 0.0);
    assert_eq!(a.symmetrized().asymmetry().0, 0.0);
}

#[test]
fn power_iteration_finds_largest_eigenvalue() {
    let a = CscMatrix::from_triplets(2, 2, &[(0, 0, 2.0), (1, 1, 5.0), (0, 1, 1.0), (1, 0, 1.0)])
        .unwrap();
    let exact = 3.5 + (2.25f64 + 1.0).sqrt();
    assert!((a.power_iteration(200) - exact).abs() < 1e-10);
    // PERMON's rule: stops on the relative change, counts its products
    let (mut x, mut y) = ([0.0; 2], [0.0; 2]);
    let apply = |x: &[f64], y: &mut [f64]| a.sym_matvec(x, y);
    let rule = PowerRule::Relative {
        max_iter: 500,
        rtol: 1e-14,
    };
    let (lam, k) = power_iteration(apply, &mut x, &mut y, rule);
    assert!((lam - exact).abs() < 1e-12, "{lam}");
    assert!(k > 2 && k < 500, "{k}");
    // the all-ones vector in the null space of [[1, -1], [-1, 1]]: one restart finds 2
    let b = CscMatrix::from_triplets(
        2,
        2,
        &[(0, 0, 1.0), (1, 1, 1.0), (0, 1, -1.0), (1, 0, -1.0)],
    )
    .unwrap();
    let apply = |x: &[f64], y: &mut [f64]| b.sym_matvec(x, y);
    let (lam, _) = power_iteration(apply, &mut x, &mut y, rule);
    assert!((lam - 2.0).abs() < 1e-14, "{lam}");
    // the fixed rule on it: A 1 = 0 gives 0 after one product
    let apply = |x: &[f64], y: &mut [f64]| b.sym_matvec(x, y);
    let fixed = PowerRule::Fixed { iters: 10 };
    assert_eq!(power_iteration(apply, &mut x, &mut y, fixed), (0.0, 1));
}

#[test]
fn debug_forms_become_plain_words() {
    #[derive(Debug)]
    #[allow(dead_code)]
    enum E {
        NonPositivePivot { index: usize },
        Generic(Inner),
    }
    #[derive(Debug)]
    enum Inner {
        OutOfMemory,
    }
    assert_eq!(
        plain_debug(&E::NonPositivePivot { index: 3 }),
        "non positive pivot (index = 3)"
    );
    assert_eq!(
        plain_debug(&E::Generic(Inner::OutOfMemory)),
        "generic: out of memory"
    );
}
