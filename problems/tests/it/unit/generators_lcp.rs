//! The tests of `cpbench_problems::generators::lcp` (until now its `#[cfg(test)]` module in
//! `problems/src/generators/lcp.rs`).

use cpbench_problems::generators::lcp::*;
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::residual::residuals;
use cpbench_problems::Definiteness;

/// Determinant of the dense principal submatrix on `idx` (Gaussian elimination with
/// partial pivoting).
fn principal_minor(m: &CscMatrix, idx: &[usize]) -> f64 {
    let k = idx.len();
    let mut a: Vec<f64> = (0..k * k).map(|p| m.get(idx[p / k], idx[p % k])).collect();
    let mut det = 1.0;
    for c in 0..k {
        let p = (c..k)
            .max_by(|&x, &y| a[x * k + c].abs().total_cmp(&a[y * k + c].abs()))
            .unwrap();
        if a[p * k + c] == 0.0 {
            return 0.0;
        }
        if p != c {
            for j in 0..k {
                a.swap(p * k + j, c * k + j);
            }
            det = -det;
        }
        det *= a[c * k + c];
        for r in c + 1..k {
            let f = a[r * k + c] / a[c * k + c];
            for j in c..k {
                a[r * k + j] -= f * a[c * k + j];
            }
        }
    }
    det
}

/// The smallest principal minor of `m` (all `2^n - 1` of them).
fn min_principal_minor(m: &CscMatrix) -> f64 {
    let n = m.nrows();
    (1u32..1 << n)
        .map(|mask| {
            let idx: Vec<usize> = (0..n).filter(|&i| mask >> i & 1 == 1).collect();
            principal_minor(m, &idx)
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn small_instances_are_p_matrices_or_not_as_stated() {
    for seed in 0..5 {
        for n in [1, 2, 5, 8] {
            for density in [0.3, 1.0] {
                let p = random_lcp(LcpFamily::PMatrix, n, density, seed).unwrap();
                let mp = min_principal_minor(p.instance.n_mat());
                assert!(mp > 0.0, "p-matrix n={n} seed={seed}: min minor {mp}");
                let s = random_lcp(LcpFamily::Psd, n, density, seed).unwrap();
                let ms = min_principal_minor(s.instance.n_mat());
                assert!(ms > 0.0, "psd n={n} seed={seed}: min minor {ms}");
                assert!(matches!(
                    s.instance.definiteness(),
                    Definiteness::PositiveSemidefinite { min_eig } if min_eig > 0.0
                ));
            }
        }
    }
    // n = 8, seed 1: a quarter of the rows negative, so some 1x1 minor is negative
    let nm = random_lcp(LcpFamily::Nonmonotone, 8, 1.0, 1).unwrap();
    assert!(min_principal_minor(nm.instance.n_mat()) < 0.0);
    assert!(matches!(
        nm.instance.definiteness(),
        Definiteness::Indefinite { .. }
    ));
    assert!(!nm.instance.is_symmetric());
}

#[test]
fn known_solution_has_zero_lcp_error() {
    for family in LcpFamily::ALL {
        for (n, density) in [(10, 1.0), (100, 0.1), (1000, 0.01)] {
            let g = random_lcp(family, n, density, 7).unwrap();
            let z = g.solution.as_ref().unwrap();
            let res = residuals(&g.instance, z);
            assert!(
                res.fc3d_error < 1e-14,
                "{family} n={n}: LCP error {:e}",
                res.fc3d_error
            );
            assert!(z.iter().all(|&v| v >= 0.0));
            let support = z.iter().filter(|&&v| v > 0.0).count();
            assert!(support > n / 4 && support < 3 * n / 4, "{support}");
            assert!(!g.instance.is_symmetric());
            assert_eq!(
                g.instance.provenance().parameters["family"],
                family.as_str()
            );
        }
    }
}

#[test]
fn density_sets_the_pattern_and_seeds_reproduce() {
    let a = random_lcp(LcpFamily::PMatrix, 1000, 0.01, 3).unwrap();
    // 10 off-diagonal entries and the diagonal per row
    assert_eq!(a.instance.nnz(), 11 * 1000);
    let b = random_lcp(LcpFamily::PMatrix, 1000, 0.01, 3).unwrap();
    assert_eq!(a.instance.hash(), b.instance.hash());
    let c = random_lcp(LcpFamily::PMatrix, 1000, 0.01, 4).unwrap();
    assert_ne!(a.instance.hash(), c.instance.hash());
    assert_eq!(a.instance.name(), "random-lcp-p-matrix-n1000-d0.01-s3");
    let dense = random_lcp(LcpFamily::Nonmonotone, 10, 1.0, 3).unwrap();
    assert_eq!(dense.instance.nnz(), 100);
    assert!(random_lcp(LcpFamily::Psd, 0, 0.5, 1).is_err());
    assert!(random_lcp(LcpFamily::Psd, 5, 0.0, 1).is_err());
    assert!(random_lcp(LcpFamily::Psd, 5, 1.5, 1).is_err());
    assert_eq!(LcpFamily::parse("psd"), Some(LcpFamily::Psd));
    assert_eq!(LcpFamily::parse("p"), None);
}
