//! The three storages of `N` (CSC, block, matrix-free `D^T M^-1 D`) give the same problem:
//! equal products, and every first-order and Gauss-Seidel solver reaches the same solution on
//! each, with its own products only (no CSC formed behind the scenes).

use cpbench_problems::{CscMatrix, Instance, OperatorKind};
use cpbench_solvers::ExecSettings;
use cpbench_test_support::{solve, solve_with};

/// The first step of a 7-layer cannonball pyramid (140 spheres; the bottom layer fixed):
/// its instance and the matrix-free instance of the same step (`D` restricted to the movable
/// bodies' rows, `M` their masses and inertias).
fn pyramid() -> (Instance, Instance) {
    let mut s = crate::granular_support::pyramid(7);
    let inst = s.build_instance().unwrap().unwrap().clone();
    let d = s.jacobian().unwrap();
    let minv = s.mass_inverse_diagonal();
    let keep: Vec<usize> = (0..minv.len()).filter(|&k| minv[k] > 0.0).collect();
    let mut row_of = vec![usize::MAX; minv.len()];
    for (i, &k) in keep.iter().enumerate() {
        row_of[k] = i;
    }
    let mut t = Vec::new();
    for j in 0..d.ncols() {
        let (rows, vals) = d.col(j);
        for (&k, &v) in rows.iter().zip(vals) {
            if row_of[k] != usize::MAX {
                t.push((row_of[k], j, v));
            }
        }
    }
    let d = CscMatrix::from_triplets(keep.len(), d.ncols(), &t).unwrap();
    let mass: Vec<f64> = keep.iter().map(|&k| 1.0 / minv[k]).collect();
    let op = cpbench_problems::operator::MatrixFree::with_diagonal_mass(d, &mass).unwrap();
    let mf = Instance::new_matrix_free(
        "pyramid-7-mf",
        op,
        inst.r().to_vec(),
        inst.constraints().clone(),
        inst.provenance().clone(),
    )
    .unwrap();
    (inst, mf)
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den = a.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-300);
    num / den
}

#[test]
fn storages_agree_on_products_and_solutions() {
    let (csc, mf) = pyramid();
    assert_eq!(csc.operator_kind(), OperatorKind::Csc);
    let block = csc.clone().with_operator(OperatorKind::Block).unwrap();
    assert_eq!(block.operator_kind(), OperatorKind::Block);
    assert_eq!(mf.operator_kind(), OperatorKind::MatrixFree);
    let n = csc.n();
    assert!(n > 1500, "n = {n}");
    // same content hash through the exact CSC round trip
    assert_eq!(block.hash(), csc.hash());
    let back = block.clone().with_operator(OperatorKind::Csc).unwrap();
    assert_eq!(back.n_mat().values(), csc.n_mat().values());
    // products
    let x: Vec<f64> = (0..n).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
    let mut y = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    for (inst, yk) in [&csc, &block, &mf].iter().zip(y.iter_mut()) {
        inst.matvec(&x, yk);
    }
    assert!(
        rel_diff(&y[0], &y[1]) < 1e-14,
        "block {}",
        rel_diff(&y[0], &y[1])
    );
    assert!(
        rel_diff(&y[0], &y[2]) < 1e-12,
        "matrix-free {}",
        rel_diff(&y[0], &y[2])
    );
    // diagonal blocks
    for c in [0, n / 6, n / 3 - 1] {
        let (a, b, m) = (csc.diag_block(c), block.diag_block(c), mf.diag_block(c));
        for k in 0..9 {
            assert!((a[k] - b[k]).abs() <= 1e-14 * a[0].abs());
            assert!((a[k] - m[k]).abs() <= 1e-12 * a[0].abs());
        }
    }
    // solvers: a fixed number of iterations gives the same iterate up to rounding (the
    // summation order differs), and each converges on each storage
    for name in ["apgd", "pgs", "jacobi", "spgqp"] {
        let exec = ExecSettings {
            tol: 1e-300,
            max_iter: 40,
            stall_window: None,
            ..Default::default()
        };
        let r0 = solve_with(name, &csc, exec.clone());
        for inst in [&block, &mf] {
            let r1 = solve_with(name, inst, exec.clone());
            let d = rel_diff(&r0.gamma, &r1.gamma);
            assert!(
                d < 1e-9,
                "{name} on {}: iterates differ by {d:.2e}",
                inst.operator_kind()
            );
            assert_eq!(r0.matvecs, r1.matvecs, "{name}");
        }
    }
    for inst in [&csc, &block, &mf] {
        let r = solve("pgs", inst, 1e-8, 5000);
        assert!(
            r.residuals.nat_map_rel_2 <= 1e-8,
            "pgs on {}: {:?}",
            inst.operator_kind(),
            r.residuals
        );
    }
    // NSGS on the Coulomb problem of the same data (rows of the block and matrix-free forms)
    let cou = |i: &Instance| i.clone().into_coulomb().unwrap();
    let exec = ExecSettings {
        tol: 1e-300,
        max_iter: 30,
        stall_window: None,
        ..Default::default()
    };
    let g0 = solve_with("nsgs", &cou(&csc), exec.clone()).gamma;
    for inst in [&block, &mf] {
        let g1 = solve_with("nsgs", &cou(inst), exec.clone()).gamma;
        let d = rel_diff(&g0, &g1);
        assert!(d < 1e-9, "nsgs on {}: {d:.2e}", inst.operator_kind());
    }
    // no CSC was formed for the block products of these solvers
    assert!(block.block_matrix().is_some());
}
