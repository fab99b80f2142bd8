//! Global friction problems kept matrix-free (`N = H^T M^-1 H` from `H` and `M`, issue 34
//! item 5) against their condensed form (`W = H^T M^-1 H` formed by
//! `cpbench_problems::io::condense`), on every global fixture: the Siconos global 3-D files
//! (`gfc3d/*.dat`), the global 2-D ones (`fc2d/gfc2d_*`) and fclib's global files.

use cpbench_problems::io::{load, load_with, GlobalForm, LoadOptions};
use cpbench_problems::operator::MassInverse;
use cpbench_problems::rng::SplitMix64;
use cpbench_problems::{Instance, OperatorKind};
use cpbench_test_support::{fixture, fixtures};
use std::path::PathBuf;

/// Every global fixture (the local 2-D files of `fc2d/` left out).
fn global_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dat: Vec<PathBuf> = std::fs::read_dir(fixtures().join("gfc3d"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .chain(
            std::fs::read_dir(fixtures().join("fc2d"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("gfc2d_")
                }),
        )
        .filter(|p| p.extension().is_some_and(|x| x == "dat"))
        .collect();
    dat.sort();
    out.extend(dat);
    for f in [
        "Box_Stacks-i0122-82-5.hdf5",
        "CubeH8.hdf5",
        "Spheres-i099-356-679.hdf5",
    ] {
        out.push(fixture(&format!("fclib/{f}")));
    }
    out
}

fn both(path: &std::path::Path) -> (Instance, Instance) {
    let opts = LoadOptions::default();
    let cond = load(path, &opts).unwrap();
    let free = load_with(path, &opts, GlobalForm::MatrixFree).unwrap();
    (cond, free)
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |a, x| a.max(x.abs()))
}

#[test]
fn matrix_free_products_equal_the_condensed_w_on_every_global_fixture() {
    let mut rng = SplitMix64::new(34);
    let mut kinds = Vec::new();
    for path in global_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (cond, free) = both(&path);
        assert_eq!(free.operator_kind(), OperatorKind::MatrixFree, "{name}");
        assert_ne!(cond.operator_kind(), OperatorKind::MatrixFree, "{name}");
        assert_eq!(free.name(), cond.name(), "{name}");
        assert_eq!(free.n(), cond.n(), "{name}");
        assert_eq!(free.constraints(), cond.constraints(), "{name}");
        // r = H^T M^-1 f + w, computed apart from the condensation
        let rmax = inf_norm(cond.r()).max(f64::MIN_POSITIVE);
        let dr = cpbench_test_support::max_abs_diff(free.r(), cond.r());
        assert!(
            dr <= 1e-12 * rmax,
            "{name}: r differs by {dr:e} (|r| {rmax:e})"
        );
        let op = free.matrix_free().unwrap();
        kinds.push(match op.mass_inverse() {
            MassInverse::BlockDiagonal(b) => format!("{name}: {} blocks", b.blocks().len()),
            MassInverse::Cholesky(_) => format!("{name}: cholesky"),
            MassInverse::Diagonal(_) => format!("{name}: diagonal"),
        });
        let n = free.n();
        for _ in 0..3 {
            let x: Vec<f64> = (0..n).map(|_| rng.next_f64() - 0.5).collect();
            let (mut yc, mut yf) = (vec![0.0; n], vec![0.0; n]);
            cond.matvec(&x, &mut yc);
            free.matvec(&x, &mut yf);
            let scale = inf_norm(&yc);
            let d = cpbench_test_support::max_abs_diff(&yc, &yf);
            assert!(
                d <= 1e-12 * scale,
                "{name}: |N x - W x| = {d:e}, |W x| = {scale:e}"
            );
        }
        // the diagonal blocks every Gauss-Seidel solver reads
        let nb = cond.n_blocks();
        for c in 0..nb {
            let (a, b) = (cond.diag_block(c), free.diag_block(c));
            let s = inf_norm(&a);
            assert!(
                cpbench_test_support::max_abs_diff(&a, &b) <= 1e-12 * s,
                "{name}: diagonal block {c}: {a:?} {b:?}"
            );
        }
    }
    assert_eq!(
        kinds,
        [
            "gfc2d_granularflowonwall_00000_00117.dat: diagonal",
            "gfc2d_granularflowonwall_00069_00350.dat: diagonal",
            "GFC3D_Example0.dat: diagonal",
            "GFC3D_Example00.dat: diagonal",
            "GFC3D_Example00_badly_scaled.dat: diagonal",
            "GFC3D_Example0_SBM.dat: diagonal",
            "GFC3D_Example1.dat: 1 blocks",
            "GFC3D_OneContact.dat: cholesky",
            "Box_Stacks-i0122-82-5.hdf5: diagonal",
            "CubeH8.hdf5: cholesky",
            "Spheres-i099-356-679.hdf5: diagonal",
        ]
    );
}

/// The CSC arrays of a matrix, for bit-for-bit comparisons.
fn arrays(a: &cpbench_problems::CscMatrix) -> (Vec<usize>, Vec<usize>, Vec<u64>) {
    (
        a.col_ptr().to_vec(),
        a.row_idx().to_vec(),
        a.values().iter().map(|v| v.to_bits()).collect(),
    )
}

#[test]
fn a_general_mass_round_trips_bit_for_bit_through_npz_and_bundles() {
    let dir = tempfile::tempdir().unwrap();
    for (f, kind) in [
        ("fclib/CubeH8.hdf5", "cholesky"),
        ("gfc3d/GFC3D_Example1.dat", "block"),
        ("fclib/Box_Stacks-i0122-82-5.hdf5", "diagonal"),
    ] {
        let a = load_with(&fixture(f), &LoadOptions::default(), GlobalForm::MatrixFree).unwrap();
        let oa = a.matrix_free().unwrap();
        let got = match oa.mass_inverse() {
            MassInverse::Cholesky(_) => "cholesky",
            MassInverse::BlockDiagonal(_) => "block",
            MassInverse::Diagonal(_) => "diagonal",
        };
        assert_eq!(got, kind, "{f}");
        let npz = dir.path().join("g.npz");
        let bundle = dir.path().join("g_bundle");
        cpbench_problems::io::npz::write_npz(&a, &npz).unwrap();
        cpbench_problems::io::write_bundle(&a, &bundle).unwrap();
        assert!(bundle.join("M.mtx").exists() && !bundle.join("M_diag.mtx").exists());
        let opts = cpbench_problems::ValidationOptions::default();
        for b in [
            cpbench_problems::io::npz::read_npz(&npz, opts).unwrap(),
            cpbench_problems::io::read_bundle(&bundle, opts).unwrap(),
        ] {
            assert_eq!(b.operator_kind(), OperatorKind::MatrixFree, "{f}");
            let ob = b.matrix_free().unwrap();
            assert_eq!(
                arrays(ob.mass_matrix().unwrap()),
                arrays(oa.mass_matrix().unwrap()),
                "{f}: M"
            );
            assert_eq!(arrays(ob.d()), arrays(oa.d()), "{f}: H");
            assert_eq!(ob.mass_inverse(), oa.mass_inverse(), "{f}: M^-1");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(b.r()), bits(a.r()), "{f}: r");
            assert_eq!(b.hash(), a.hash(), "{f}: hash");
            assert_eq!(b.constraints(), a.constraints(), "{f}");
        }
    }
}

#[test]
fn the_matrix_free_form_hashes_apart_from_the_condensed_one() {
    // the hash follows the stored data (H and M, not W), as for generated matrix-free instances
    let (cond, free) = both(&fixture("fclib/CubeH8.hdf5"));
    assert_ne!(cond.hash(), free.hash());
    // and forming W from the factors gives the condensed instance's operator class again
    let formed = free.with_operator(OperatorKind::Csc).unwrap();
    assert_eq!(formed.operator_kind(), OperatorKind::Csc);
    let (a, b) = (formed.csc(), cond.csc());
    let mut worst = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            worst = worst.max((a.get(i, j) - b.get(i, j)).abs());
        }
    }
    let scale = b.values().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(worst <= 1e-12 * scale, "{worst:e} {scale:e}");
}

#[test]
fn a_global_file_whose_m_is_not_positive_definite_is_a_typed_error_naming_the_file() {
    // GFC3D_Example1 kept matrix-free, written as a bundle, then its M.mtx replaced by -M
    let a = load_with(
        &fixture("gfc3d/GFC3D_Example1.dat"),
        &LoadOptions::default(),
        GlobalForm::MatrixFree,
    )
    .unwrap();
    let m = a.matrix_free().unwrap().mass_matrix().unwrap();
    let mut t = Vec::new();
    for j in 0..m.ncols() {
        let (rows, vals) = m.col(j);
        for (&i, &v) in rows.iter().zip(vals) {
            t.push((i, j, -v));
        }
    }
    let neg = cpbench_problems::CscMatrix::from_triplets(m.nrows(), m.ncols(), &t).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("neg");
    cpbench_problems::io::write_bundle(&a, &bundle).unwrap();
    let mut f = std::fs::File::create(bundle.join("M.mtx")).unwrap();
    cpbench_problems::io::mtx::write_general(&mut f, &neg).unwrap();
    drop(f);
    let e = cpbench_problems::io::read_bundle(&bundle, Default::default()).unwrap_err();
    assert!(
        matches!(
            &e,
            cpbench_problems::ProblemError::InFile { path, source }
                if path.ends_with("neg/M.mtx")
                    && matches!(**source, cpbench_problems::ProblemError::MassNotPositiveDefinite {
                        column: Some(0),
                        ..
                    })
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains("M.mtx") && text.contains("non-positive Cholesky pivot at column 0"),
        "{text}"
    );
}
