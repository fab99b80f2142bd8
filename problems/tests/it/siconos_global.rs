//! Siconos global friction problems (`GFC3D_*`, `gfc2d_*`): detection among the other `.dat`
//! fixtures, and the condensed `W = H^T M^-1 H`, `q = H^T M^-1 q + b` against the numbers
//! Siconos' own data gives.
//!
//! Reference numbers: Siconos 4.4 (Debian python3-siconos) reads each file
//! (`globalFrictionContact_new_from_filename`: `M`, `H`, `q`, `b`, `mu`), and numpy condenses
//! it densely (`scripts/peer_siconos_global.py`; the values printed with 17 digits).

// The reference numbers are printed with 17 significant digits (round-trip exact).
#![allow(clippy::excessive_precision)]

use cpbench_problems::io::siconos_global::{read_global, read_siconos_global};
use cpbench_problems::io::{detect_format, load, ClassChoice, Format, LoadOptions};
use cpbench_test_support::{fixture, fixtures};

#[test]
fn every_dat_fixture_is_classified() {
    let mut seen = 0;
    for (folder, want) in [
        ("gfc3d", Format::SiconosGlobal),
        ("siconos-fc3d", Format::SiconosFc3d),
        ("lcp", Format::SiconosLcp),
    ] {
        for e in std::fs::read_dir(fixtures().join(folder)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "dat") {
                assert_eq!(detect_format(&p).unwrap(), want, "{}", p.display());
                seen += 1;
            }
        }
    }
    // fc2d/: the local 2-D files are read as friction problems, the gfc2d_* ones as global
    for e in std::fs::read_dir(fixtures().join("fc2d")).unwrap() {
        let p = e.unwrap().path();
        let global = p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("gfc2d_");
        let want = if global {
            Format::SiconosGlobal
        } else {
            Format::SiconosFc3d
        };
        assert_eq!(detect_format(&p).unwrap(), want, "{}", p.display());
        seen += 1;
    }
    assert!(fixture("fc2d/gfc2d_granularflowonwall_00069_00350.dat").exists());
    assert_eq!(seen, 6 + 5 + 15 + 5);
}

/// Row-major 3 x 3 `W` and `q` of the six one-contact GFC3D files (Siconos' data, numpy).
const CONDENSED: &[(&str, [f64; 9], [f64; 3])] = &[
    (
        "GFC3D_Example0.dat",
        [2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0],
        [-2.0, -4.0, -6.0],
    ),
    (
        "GFC3D_Example00.dat",
        [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        [-1.0, -1.0, -1.0],
    ),
    (
        "GFC3D_Example00_badly_scaled.dat",
        [
            1e4,
            0.0,
            0.0,
            0.0,
            1.0,
            0.0,
            0.0,
            0.0,
            1.00000000000000005e-04,
        ],
        [-1e4, -1.0, -1.00000000000000005e-04],
    ),
    (
        "GFC3D_Example0_SBM.dat",
        [2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0],
        [-2.0, -4.0, -6.0],
    ),
    (
        "GFC3D_Example1.dat",
        [
            1.30502229978670115e-01,
            3.06379678107427875e-02,
            -1.21582315299593111e-01,
            3.06379678107427701e-02,
            6.43557015592741005e-02,
            -6.70020189576703978e-02,
            -1.21582315299593111e-01,
            -6.70020189576704256e-02,
            1.45262293399035319e-01,
        ],
        [-2.5, -10.0, -5.5],
    ),
    (
        "GFC3D_OneContact.dat",
        [
            4.21725127667990474e-01,
            3.43592660658618820e-01,
            -2.23788185463933614e-01,
            3.43592660658618987e-01,
            5.50984511331061078e-01,
            1.85654443932455282e-01,
            -2.23788185463936445e-01,
            1.85654443932451590e-01,
            7.14692164088823079e-01,
        ],
        [
            -2.02159696703250978e-02,
            2.47955211612030137e-02,
            4.45782972038215736e-02,
        ],
    ),
];

#[test]
fn gfc3d_condensation_matches_siconos_data() {
    for (file, w, q) in CONDENSED {
        let path = fixture(&format!("gfc3d/{file}"));
        let g = read_siconos_global(&path, &std::fs::read(&path).unwrap()).unwrap();
        let p = &g.problem;
        assert_eq!((p.spacedim, p.mu.len(), p.q.len()), (3, 1, 3), "{file}");
        let wnorm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        for i in 0..3 {
            for j in 0..3 {
                let d = (p.w.get(i, j) - w[3 * i + j]).abs();
                assert!(
                    d <= 1e-13 * wnorm,
                    "{file}: W[{i},{j}] {} vs {}",
                    p.w.get(i, j),
                    w[3 * i + j]
                );
            }
        }
        let qnorm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        for (k, (a, b)) in p.q.iter().zip(q).enumerate() {
            assert!((a - b).abs() <= 1e-12 * qnorm, "{file}: q[{k}] {a}");
        }
    }
}

#[test]
fn gfc3d_instances_record_the_condensation() {
    let inst = load(
        &fixture("gfc3d/GFC3D_OneContact.dat"),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(inst.name(), "GFC3D_OneContact__ccp");
    let prov = inst.provenance();
    assert_eq!(prov.format, "siconos-global");
    let p = &prov.parameters;
    assert_eq!(p["dofs"], "39");
    assert_eq!(p["contacts"], "1");
    assert_eq!(p["spacedim"], "3");
    assert!(p["condensed"].starts_with("W = H^T M^-1 H"), "{p:?}");
    assert_eq!(p["m_storage"], "sparse block (SBM)");
    assert_eq!(p["h_storage"], "sparse block (SBM)");
    assert!(p["m_factorization"].contains("Cholesky"), "{p:?}");
    let lcp = load(
        &fixture("gfc3d/GFC3D_Example1.dat"),
        &LoadOptions {
            class: ClassChoice::Lcp,
            ..Default::default()
        },
    )
    .unwrap();
    // the normal block of W: W[0,0] of GFC3D_Example1 (Siconos' data, numpy)
    assert_eq!(lcp.n(), 1);
    assert!((lcp.csc().get(0, 0) - 1.30502229978670115e-01).abs() < 1e-15);
}

/// The 2-D global files: `M` (900 x 900) and `H` in CSparse text (storage 2), condensed at the
/// `FrictionProblem` level (`spacedim = 2`); an instance is refused until 2-D cones exist.
#[test]
fn gfc2d_condensation_matches_siconos_data() {
    let path = fixture("fc2d/gfc2d_granularflowonwall_00069_00350.dat");
    let bytes = std::fs::read(&path).unwrap();
    let raw = read_global(&path, &bytes).unwrap();
    assert_eq!((raw.dofs(), raw.contacts(), raw.spacedim), (900, 69, 2));
    assert_eq!((raw.h.nrows(), raw.h.ncols(), raw.h.nnz()), (900, 138, 724));
    // M[0,0] and H[343,0] as printed by CSparse (%g): Siconos reads the same numbers
    assert_eq!(raw.m.get(0, 0), 0.00150187);
    assert_eq!(raw.m.get(2, 2), 1.46527e-10);
    assert_eq!(raw.h.get(343, 0), -1.0);
    assert_eq!(raw.h.get(344, 0), -1.40662e-05);
    let g = read_siconos_global(&path, &bytes).unwrap();
    let p = &g.problem;
    assert_eq!((p.spacedim, p.q.len(), p.mu.len()), (2, 138, 69));
    assert_eq!((p.w.nrows(), p.w.ncols()), (138, 138));
    assert!(p.mu.iter().all(|&m| m == 0.5));
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
    // ||W||_F 2.81792139039444373e+04, entries (0,0), (0,1), (1,1), (2,3), (136,137), max |W|
    // at (97,97); ||q|| and q[0..4], q[137]
    assert!(close(p.w.frobenius_norm(), 2.81792139039444373e+04));
    for (i, j, v) in [
        (0, 0, 9.28664926497406782e+02),
        (0, 1, 5.00672992916600350e+01),
        (1, 1, 2.67757708299376145e+03),
        (2, 3, -1.69409538892234849e+02),
        (97, 97, 4.04769364073838142e+03),
    ] {
        assert!(close(p.w.get(i, j), v), "W[{i},{j}] = {}", p.w.get(i, j));
    }
    // a small entry, relative to ||W||_F
    assert!((p.w.get(136, 137) + 1.39779060572023865e-05).abs() <= 1e-12 * 2.8e4);
    let qn = p.q.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!(close(qn, 2.25739440599337327e+00), "{qn}");
    for (k, v) in [
        (0, 1.98779405626073796e-01),
        (1, 1.90572260656355935e-01),
        (2, 4.01892973797968352e-03),
        (3, 1.98229373405198972e-01),
        (137, -4.23716503843042797e-02),
    ] {
        assert!((p.q[k] - v).abs() <= 1e-12 * qn, "q[{k}] = {}", p.q[k]);
    }
    // 0 contacts: a 0 x 0 problem
    let empty = fixture("fc2d/gfc2d_granularflowonwall_00000_00117.dat");
    let g0 = read_siconos_global(&empty, &std::fs::read(&empty).unwrap()).unwrap();
    assert_eq!((g0.problem.w.nrows(), g0.problem.q.len()), (0, 0));
    assert_eq!(g0.notes["dofs"], "900");
    // loaded: a 2-D CCP of 69 contacts (138 unknowns) on the condensed W
    let inst = load(&path, &LoadOptions::default()).unwrap();
    assert_eq!((inst.n(), inst.constraints().cone_dim()), (138, Some(2)));
    assert_eq!(inst.provenance().format, "siconos-global");
}
