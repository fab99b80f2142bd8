//! Integration tests of `cpbench_problems::io`: every reader on the repository fixtures
//! (`tests/fixtures`, origin and licences in `tests/fixtures/NOTICE`), checked against the
//! independently computed reference solutions (`tests/fixtures/reference/README.md`); bundle
//! round trips; malformed and truncated inputs.

use cpbench_problems::io::{
    self, detect_format, load, load_bytes, read_bundle, write_bundle, ClassChoice, Format,
    LoadOptions,
};
use cpbench_problems::{
    residuals, ConstraintSet, CscMatrix, Instance, ProblemClass, ProblemError, Provenance,
    ValidationOptions,
};
use cpbench_test_support::fixtures;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Problem files of reference.csv that the repository does not carry (too large for test
/// fixtures: 0.4 to 4 MB each); every other file of reference.csv is a fixture.
const NOT_CARRIED: [&str; 3] = [
    "Capsules-i100-1090.dat",
    "Capsules-i100-889.dat",
    "KaplasTower-i1061-4.hdf5.dat",
];

fn opts(class: ClassChoice, symmetrize: bool) -> LoadOptions {
    LoadOptions {
        class,
        validation: ValidationOptions {
            symmetrize,
            ..ValidationOptions::default()
        },
    }
}

/// A Siconos fc3d text `bytes` named `name`, loaded with the default options.
fn fc3d(name: &str, bytes: &[u8]) -> Result<Instance, ProblemError> {
    load_bytes(name, bytes, Format::SiconosFc3d, &LoadOptions::default())
}

/// The path, location and message of a [`ProblemError::Parse`]; panics naming `what` on any
/// other error.
fn parse_parts<'a>(what: &str, e: &'a ProblemError) -> (&'a Path, Option<&'a str>, &'a str) {
    match e {
        ProblemError::Parse {
            path,
            location,
            message,
        } => (path, location.as_deref(), message),
        _ => panic!("{what}: expected a parse error, got {e:?}"),
    }
}

/// The location and message of the [`ProblemError::Parse`] that `r` must be; panics naming
/// `what` on a success or another error.
fn parse_error<T: std::fmt::Debug>(
    what: &str,
    r: Result<T, ProblemError>,
) -> (Option<String>, String) {
    match r {
        Ok(v) => panic!("{what}: expected a parse error, got {v:?}"),
        Err(e) => {
            let (_, location, message) = parse_parts(what, &e);
            (location.map(str::to_string), message.to_string())
        }
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "cpbench-io-test-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One row of reference.csv.
#[derive(Debug, Clone)]
struct RefRow {
    file: String,
    kind: String,
    n: usize,
    asymmetry: f64,
    objective: Option<f64>,
    status: String,
}

fn reference_rows() -> Vec<RefRow> {
    let text = std::fs::read_to_string(fixtures().join("reference/reference.csv")).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            // The last column (note) is quoted and holds commas; the first eight never do.
            let f: Vec<&str> = l.splitn(9, ',').collect();
            RefRow {
                file: f[0].into(),
                kind: f[1].into(),
                n: f[2].parse().unwrap(),
                asymmetry: f[4].parse().unwrap(),
                objective: f[5].parse().ok(),
                status: f[7].into(),
            }
        })
        .collect()
}

fn read_solution(path: &Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// Folder of a data file by its name.
fn folder_of(file: &str) -> &'static str {
    if file.ends_with(".hdf5") {
        "fclib"
    } else if file.starts_with("lcp_") {
        "lcp"
    } else {
        "siconos-fc3d"
    }
}

/// Load `file` of `root` the way reference row `kind` describes (symmetrised as the reference).
fn load_for_kind(root: &Path, file: &str, kind: &str) -> Instance {
    let path = root.join(folder_of(file)).join(file);
    let class = if kind == "lcp_normal" {
        ClassChoice::Lcp
    } else {
        ClassChoice::Ccp
    };
    load(&path, &opts(class, true)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Check every `ok` QP/LCP row of reference.csv (all but the [`NOT_CARRIED`] files) against
/// its solution file in `root/reference/solutions`: size, objective to 1e-9 relative,
/// natural-map residual. A missing problem or solution file fails.
fn check_against_reference(root: &Path) -> usize {
    let solutions = root.join("reference/solutions");
    let mut checked = 0;
    for row in reference_rows() {
        if row.kind == "coulomb" || row.status != "ok" || NOT_CARRIED.contains(&row.file.as_str()) {
            continue;
        }
        let data = root.join(folder_of(&row.file)).join(&row.file);
        let sol = solutions.join(format!("{}__{}.txt", row.file, row.kind));
        assert!(data.is_file(), "missing fixture {}", data.display());
        assert!(
            sol.is_file(),
            "missing reference solution {}",
            sol.display()
        );
        let inst = load_for_kind(root, &row.file, &row.kind);
        assert_eq!(inst.n(), row.n, "{} {}", row.file, row.kind);
        let x = read_solution(&sol);
        assert_eq!(x.len(), inst.n(), "{} {}", row.file, row.kind);
        let res = residuals(&inst, &x);
        if row.objective.is_none() && row.kind == "lcp" {
            // Non-symmetric LCP solved by Lemke: check Siconos's LCP error with M as read
            // (column-major), ||z - max(0, z - (M z + q))|| / ||q||, before any symmetrisation.
            let raw = io::siconos::read_lcp(&data, &std::fs::read(&data).unwrap()).unwrap();
            let mut w = vec![0.0; x.len()];
            raw.m.matvec(&x, &mut w);
            let mut num = 0.0;
            for ((zi, wi), qi) in x.iter().zip(&mut w).zip(&raw.q) {
                *wi += qi;
                num += (zi - (zi - *wi).max(0.0)).powi(2);
            }
            let err = num.sqrt() / raw.q.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!(
                err <= 1e-8,
                "{}: Lemke solution has LCP error {err:.2e}",
                row.file
            );
        }
        if let Some(obj) = row.objective {
            let f = inst.objective(&x);
            let rel = (f - obj).abs() / obj.abs().max(f64::MIN_POSITIVE);
            assert!(
                rel <= 1e-9,
                "{} {}: objective {f:.12e} vs reference {obj:.12e} (rel {rel:.1e})",
                row.file,
                row.kind
            );
            // Only symmetric problems are QPs; for them the natural map must vanish.
            assert!(
                res.nat_map_rel_max1_2 <= 1e-8,
                "{} {}: residual {:.2e}",
                row.file,
                row.kind,
                res.nat_map_rel_max1_2
            );
        }
        checked += 1;
    }
    checked
}

#[test]
fn fixtures_match_reference_solutions() {
    let n = check_against_reference(&fixtures());
    // 10 frictional fixtures x (ccp, lcp_normal) + 7 LCPs (lcp_CPS_2, lcp_Pang_isolated_sol
    // and lcp_tobenna non-symmetric, checked by Siconos' LCP error): the 33 `ok` QP/LCP rows
    // of reference.csv minus the 6 of the 3 files not carried, plus the 6 solvable LCP files
    // added with the lemke solver (lcp_CPS_4, lcp_CPS_4bis, lcp_CPS_5, lcp_deudeu_block,
    // lcp_inf_sol_perturbed, lcp_trivial_block)
    assert_eq!(n, 33, "number of reference rows checked");
}

#[test]
fn fixture_sizes_names_and_provenance() {
    let f = fixtures();
    let cases: [(&str, ClassChoice, usize, &str, &str, &str); 10] = [
        (
            "fclib/Spheres-i099-356-679.hdf5",
            ClassChoice::Ccp,
            1068,
            "Spheres-i099-356-679__ccp",
            "fclib-global",
            "ccp-relaxation",
        ),
        (
            "fclib/Spheres-i099-356-679.hdf5",
            ClassChoice::Lcp,
            356,
            "Spheres-i099-356-679__lcp",
            "fclib-global",
            "normal-block-lcp",
        ),
        (
            "fclib/Capsules-i125-1213.hdf5",
            ClassChoice::Ccp,
            858,
            "Capsules-i125-1213__ccp",
            "fclib-local",
            "ccp-relaxation",
        ),
        (
            "fclib/Box_Stacks-i0122-82-5.hdf5",
            ClassChoice::Ccp,
            246,
            "Box_Stacks-i0122-82-5__ccp",
            "fclib-global",
            "ccp-relaxation",
        ),
        (
            "fclib/CubeH8.hdf5",
            ClassChoice::Ccp,
            3,
            "CubeH8__ccp",
            "fclib-global",
            "ccp-relaxation",
        ),
        (
            "siconos-fc3d/Rover4396.dat",
            ClassChoice::Ccp,
            6,
            "Rover4396__ccp",
            "siconos-fc3d",
            "ccp-relaxation",
        ),
        (
            "siconos-fc3d/NESpheres_10_1.dat",
            ClassChoice::Ccp,
            27,
            "NESpheres_10_1__ccp",
            "siconos-fc3d",
            "ccp-relaxation",
        ),
        (
            "siconos-fc3d/FC3D_Example1_SBM.dat",
            ClassChoice::Lcp,
            3,
            "FC3D_Example1_SBM__lcp",
            "siconos-fc3d",
            "normal-block-lcp",
        ),
        (
            "lcp/lcp_mmc.dat",
            ClassChoice::Ccp,
            26,
            "lcp_mmc",
            "siconos-lcp",
            "as-is",
        ),
        (
            "lcp/lcp_CPS_1.dat",
            ClassChoice::Lcp,
            2,
            "lcp_CPS_1",
            "siconos-lcp",
            "as-is",
        ),
    ];
    for (file, class, n, name, format, derivation) in cases {
        let path = f.join(file);
        let inst = load(&path, &opts(class, true)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(inst.n(), n, "{file}");
        assert_eq!(inst.name(), name);
        let p = inst.provenance();
        assert_eq!(p.source, path.display().to_string());
        assert_eq!(p.format, format, "{file}");
        assert_eq!(p.derivation, derivation, "{file}");
        assert!(p.parameters.contains_key("sign_convention"), "{file}");
        let expected_class = match (format, class) {
            ("siconos-lcp", _) | (_, ClassChoice::Lcp) => ProblemClass::Lcp,
            _ => ProblemClass::Ccp,
        };
        assert_eq!(inst.class(), expected_class, "{file}");
    }
    let cube = load(&f.join("fclib/CubeH8.hdf5"), &opts(ClassChoice::Ccp, false)).unwrap();
    let p = &cube.provenance().parameters;
    assert_eq!(p["m_upper_triangle_symmetrized"], "true");
    assert_eq!(p["condensed"], "W = H^T M^-1 H, q = H^T M^-1 f + w");
    assert_eq!(p["spacedim"], "3");
    assert!(p["m_factorization"].contains("Cholesky"), "{p:?}");
}

#[test]
fn detects_formats() {
    let f = fixtures();
    for (file, format) in [
        ("fclib/CubeH8.hdf5", Format::FclibHdf5),
        ("fclib/Capsules-i125-1213.hdf5", Format::FclibHdf5),
        ("siconos-fc3d/Rover4396.dat", Format::SiconosFc3d),
        ("siconos-fc3d/FC3D_Example1_SBM.dat", Format::SiconosFc3d),
        ("lcp/lcp_mmc.dat", Format::SiconosLcp),
        ("lcp/lcp_CPS_1.dat", Format::SiconosLcp),
    ] {
        assert_eq!(detect_format(&f.join(file)).unwrap(), format, "{file}");
    }
    assert_eq!(detect_format(&f.join("fclib")).unwrap(), Format::Bundle);
    assert!(matches!(
        detect_format(&f.join("NOTICE")),
        Err(ProblemError::UnknownFormat { .. })
    ));
    assert!(matches!(
        detect_format(&f.join("does-not-exist.dat")),
        Err(ProblemError::Io { .. })
    ));
}

#[test]
fn dense_siconos_matrices_are_column_major() {
    let num = |s: &str| s.parse::<f64>().unwrap();
    // Rover4396.dat: W[1,0] is the 2nd number of the first matrix line, W[0,1] the first of
    // the second line (W is not symmetric, so a transposed read would differ).
    let path = fixtures().join("siconos-fc3d/Rover4396.dat");
    let bytes = std::fs::read(&path).unwrap();
    let f = io::siconos::read_fc3d(&path, &bytes).unwrap();
    assert_eq!(
        f.problem.w.get(1, 0),
        num("-1.515988037597431909581092e-04")
    );
    assert_eq!(
        f.problem.w.get(0, 1),
        num("-1.543351006400240027841009e-04")
    );
    assert_eq!(f.problem.w.get(0, 0), num("1.206265440170792811735989e-02"));
    assert_eq!(f.problem.mu, vec![0.7, 0.7]);
    assert_eq!(f.problem.q[0], num("-7.993436691636901514357305e-02"));
}

#[test]
fn fclib_sparse_layouts_agree() {
    // The same non-symmetric W stored as CSC, triplets and CSR (tests/fixtures/synthetic).
    let dir = fixtures().join("synthetic");
    let mut mats = Vec::new();
    for name in ["local_csc.hdf5", "local_triplets.hdf5", "local_csr.hdf5"] {
        let path = dir.join(name);
        let f = io::fclib::read_fclib(&path, &std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(f.kind, io::fclib::FclibKind::Local);
        assert_eq!(f.problem.q, vec![-1.0, 0.5, 0.25, -2.0, 0.0, 1.0]);
        assert_eq!(f.problem.mu, vec![0.3, 0.7]);
        mats.push(f.problem.w);
    }
    for w in &mats {
        assert_eq!(w.get(1, 0), 1.5, "row 1, column 0");
        assert_eq!(w.get(0, 1), 1.0);
        assert_eq!(w.get(5, 2), 0.125);
        assert_eq!(w.get(2, 5), 0.25);
        assert_eq!(w.nnz(), 12);
    }
}

#[test]
fn spacedim_2_is_read_as_2d_cones_and_checked() {
    // the synthetic file says spacedim 2 but holds 6 unknowns and 2 friction coefficients
    // (3 per contact): a typed error naming the mu dataset
    let path = fixtures().join("synthetic/spacedim2.hdf5");
    let (location, message) = parse_error("spacedim2.hdf5", load(&path, &LoadOptions::default()));
    assert_eq!(
        location.as_deref(),
        Some("HDF5 object /fclib_local/vectors/mu")
    );
    assert!(
        message.contains("2 friction coefficients for 6 unknowns (expected 2 per contact)"),
        "{message}"
    );
    // a 2-D Siconos text: one contact, W = I, q = 0, mu = 0.5
    let text = b"2\n1\n0\n2\n2\n2 2\n1 0 0 1\n0 0\n0.5\n";
    let i = fc3d("d2.dat", text).unwrap();
    assert_eq!(i.constraints().cone_dim(), Some(2));
    assert_eq!((i.n(), i.n_blocks()), (2, 1));
    // d = 4 is refused at the first token
    let text = b"4\n1\n0\n4\n4\n4 4\n1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1\n0 0 0 0\n0.5\n";
    let (location, message) = parse_error("d4.dat", fc3d("d4.dat", text));
    assert_eq!(location.as_deref(), Some("line 1, token 1"));
    assert!(message.contains("only 3-D and 2-D"), "{message}");
}

#[test]
fn fc2d_sparse_print_out_errors_are_located() {
    // storage 2, CSC print-out of a 2 x 2 W; then q and mu
    let good = "2\n1\n2\n2\n2\n2\nCSparse Version 3.1.9, May 4, 2016.  Copyright (c) T. Davis\n\
                2-by-2, nzmax: 2 nnz: 2, 1-norm: 2\n    col 0 : locations 0 to 0\n      0 : 2\n\
                    col 1 : locations 1 to 1\n      1 : 1.5\n-1 0\n0.5\n";
    let i = fc3d("s.dat", good.as_bytes()).unwrap();
    assert_eq!((i.n_mat().get(0, 0), i.n_mat().get(1, 1)), (2.0, 1.5));
    assert_eq!(
        i.provenance().parameters["matrix_storage"],
        "sparse (CSparse CSC text)"
    );
    // the triplet print-out of the same matrix
    let trip = "2\n1\n2\n2\n2\n1\nCSparse Version 3.1.9\ntriplet: 2-by-2, nzmax: 2 nnz: 2\n\
                0 0 : 2\n1 1 : 1.5\n-1 0\n0.5\n";
    let t = fc3d("t.dat", trip.as_bytes()).unwrap();
    assert_eq!(t.hash(), i.hash());
    // (the defect, the location, a part of the message), one line each
    #[rustfmt::skip]
    let cases = [
        // truncated inside the last entry
        (good.replace(" 1 : 1.5\n-1 0\n0.5\n", " 1 :"), "line 12 (end", "end of file while read"),
        // a row index out of range
        (good.replace(" 1 : 1.5", " 7 : 1.5"), "line 12, token 41", "out of range (must be < 2"),
        // a bad value
        (good.replace("1 : 1.5", "1 : x1.5"), "line 12, token 43", "found 'x1.5'"),
        // column locations out of order
        (good.replace("ons 1 to 1", "ons 0 to 0"), "line 11, token 38", "starts at location 0"),
        // an unknown origin
        (good.replace("2\nCSparse", "7\nCSparse"), "line 6, token 6", "sparse origin 7"),
        // no banner
        (good.replace("CSparse Version", "Other Version"), "line 7, token 7", "the CSparse banner"),
        // size disagreeing with the header
        (good.replace("2-by-2,", "3-by-3,"), "line 8, token 17", "the NumericsMatrix header 2 x 2"),
    ];
    for (text, loc, msg) in cases {
        let (location, message) = parse_error(&text, fc3d("b.dat", text.as_bytes()));
        let l = location.unwrap_or_default();
        assert!(l.starts_with(loc), "{l} / {message}");
        assert!(message.contains(msg), "{message}");
    }
}

/// `Asymmetric` wrapped in `InFile` naming the file.
fn assert_asymmetric(r: Result<Instance, ProblemError>, file: &str) {
    match r {
        Err(ProblemError::InFile { path, source }) => {
            assert!(path.to_string_lossy().contains(file), "{}", path.display());
            assert!(
                matches!(*source, ProblemError::Asymmetric { .. }),
                "{source}"
            );
        }
        other => panic!("{file}: expected InFile(Asymmetric), got {other:?}"),
    }
}

#[test]
fn asymmetric_files_need_symmetrize() {
    let f = fixtures();
    for (file, asym) in [
        ("fclib/Capsules-i125-1213.hdf5", 3.42e-4),
        ("siconos-fc3d/Rover4396.dat", 3.79e-5),
    ] {
        let path = f.join(file);
        assert_asymmetric(load(&path, &opts(ClassChoice::Ccp, false)), file);
        // the normal block of a non-symmetric W is a general LCP, kept as read
        let nb = load(&path, &opts(ClassChoice::Lcp, false)).unwrap();
        assert_eq!(nb.class(), cpbench_problems::ProblemClass::Lcp);
        assert!(!nb.is_symmetric(), "{file}");
        assert!(nb.provenance().parameters.contains_key("asymmetry"));
        for class in [ClassChoice::Ccp, ClassChoice::Lcp] {
            let inst = load(&path, &opts(class, true)).unwrap();
            let s = inst.provenance().symmetrized_from.unwrap();
            assert!((s - asym).abs() < 0.01 * asym, "{file}: asymmetry {s:.3e}");
        }
    }
    // A non-symmetric LCP (lcp_CPS_2.dat of Siconos), embedded.
    let cps2 = b"3\n0\n3\n3\n3\t3\n0 2 -1\n-1 0 1\n2 -2 0\n-3 6 -1\n\nExample 4.4.7 CPS 2009\n";
    // read as the general LCP it is: M kept as read
    let general = load_bytes(
        "lcp_CPS_2.dat",
        cps2,
        Format::SiconosLcp,
        &LoadOptions::default(),
    )
    .unwrap();
    assert!(!general.is_symmetric());
    assert_eq!(general.n_mat().get(1, 0), 2.0);
    assert_eq!(general.n_mat().get(0, 1), -1.0);
    // M = [[0, -1, 2], [2, 0, -2], [-1, 1, 0]]: M + M^T = [[0, 1, 1], [1, 0, -1], [1, -1, 0]]
    // has eigenvalues -2, 1, 1, so the symmetric part has min eigenvalue -1: a non-monotone LCP
    match general.definiteness() {
        cpbench_problems::Definiteness::Indefinite { min_eig } => {
            assert!((min_eig + 1.0).abs() < 1e-14, "{min_eig}")
        }
        d => panic!("{d:?}"),
    }
    let inst = load_bytes(
        "lcp_CPS_2.dat",
        cps2,
        Format::SiconosLcp,
        &opts(ClassChoice::Ccp, true),
    )
    .unwrap();
    assert_eq!(inst.name(), "lcp_CPS_2");
    // Column-major: the first line is column 0 = (0, 2, -1), the second column 1 = (-1, 0, 1),
    // so M[1,0] = 2, M[0,1] = -1 and the symmetrised N[0,1] = (-1 + 2) / 2.
    assert_eq!(inst.n_mat().get(0, 1), 0.5);
    assert_eq!(inst.r(), &[-3.0, 6.0, -1.0]);
}

#[test]
fn load_bytes_names_from_the_file_name() {
    let bytes = std::fs::read(fixtures().join("siconos-fc3d/NESpheres_10_1.dat")).unwrap();
    let i = fc3d("NESpheres_10_1.dat", &bytes).unwrap();
    assert_eq!(i.name(), "NESpheres_10_1__ccp");
    assert_eq!(i.provenance().source, "NESpheres_10_1.dat");
    let bytes = std::fs::read(fixtures().join("fclib/CubeH8.hdf5")).unwrap();
    let i = load_bytes(
        "data/CubeH8.hdf5",
        &bytes,
        Format::FclibHdf5,
        &opts(ClassChoice::Lcp, false),
    )
    .unwrap();
    assert_eq!(i.name(), "CubeH8__lcp");
    assert_eq!(i.n(), 1);
}

#[test]
fn every_fixture_file_loads_in_every_class() {
    let root = fixtures();
    let refs = reference_rows();
    let mut by_file: HashMap<String, Vec<RefRow>> = HashMap::new();
    for r in refs {
        by_file.entry(r.file.clone()).or_default().push(r);
    }
    let mut count = 0;
    for folder in ["fclib", "siconos-fc3d", "lcp"] {
        let mut entries: Vec<_> = std::fs::read_dir(root.join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let rows = by_file
                .get(&file)
                .unwrap_or_else(|| panic!("{file} not in reference.csv"));
            let asymmetric = rows[0].asymmetry > 1e-12;
            let frictional = folder != "lcp";
            let classes: &[ClassChoice] = if frictional {
                &[ClassChoice::Ccp, ClassChoice::Lcp, ClassChoice::Coulomb]
            } else {
                // an LCP file is an LCP whatever the class choice (it names frictional files)
                &[ClassChoice::Lcp]
            };
            for &class in classes {
                let t = Instant::now();
                let plain = load(&path, &opts(class, false));
                let dt = t.elapsed();
                let inst = if class == ClassChoice::Coulomb || class == ClassChoice::Lcp {
                    // the Coulomb problem keeps a non-symmetric W as read (Siconos does), and
                    // so does its normal block, a general LCP; so does an LCP file
                    let inst = plain.unwrap_or_else(|e| panic!("{e}"));
                    assert_eq!(inst.is_symmetric(), !asymmetric, "{file}");
                    inst
                } else if asymmetric {
                    assert_asymmetric(plain, &file);
                    load(&path, &opts(class, true)).unwrap_or_else(|e| panic!("{e}"))
                } else {
                    plain.unwrap_or_else(|e| panic!("{e}"))
                };
                let kind = match (frictional, class) {
                    (false, _) => "lcp",
                    (true, ClassChoice::Ccp) => "ccp",
                    (true, ClassChoice::Lcp) => "lcp_normal",
                    // global fclib files have no `coulomb` row: same n as the CCP
                    (true, ClassChoice::Coulomb) => {
                        if rows.iter().any(|r| r.kind == "coulomb") {
                            "coulomb"
                        } else {
                            "ccp"
                        }
                    }
                    // not read here (tests/it/robotics.rs reads every fixture as both)
                    (true, ClassChoice::Blcp | ClassChoice::LcpPyramid { .. }) => {
                        unreachable!("not in this test's classes")
                    }
                };
                let row = rows.iter().find(|r| r.kind == kind).unwrap();
                assert_eq!(inst.n(), row.n, "{file} {kind}");
                println!(
                    "{file:40} {kind:10} n = {:5} nnz = {:7} load {:.1} ms",
                    inst.n(),
                    inst.n_mat().nnz(),
                    dt.as_secs_f64() * 1e3
                );
                count += 1;
            }
        }
    }
    // (5 fclib + 5 siconos-fc3d files) x (ccp, lcp, coulomb) + 15 LCP files
    assert_eq!(count, 45);
}

#[test]
fn spheres_loads_fast() {
    let path = fixtures().join("fclib/Spheres-i099-356-679.hdf5");
    let t = Instant::now();
    let inst = load(&path, &LoadOptions::default()).unwrap();
    let dt = t.elapsed().as_secs_f64();
    println!(
        "Spheres-i099-356-679.hdf5: {:.1} ms, n = {}, nnz = {}",
        dt * 1e3,
        inst.n(),
        inst.n_mat().nnz()
    );
    // The test profile is lightly optimised; in release it takes a few milliseconds.
    assert!(dt < 5.0, "{dt} s");
}

fn assert_bitwise_equal(a: &Instance, b: &Instance) {
    assert_eq!(a.hash(), b.hash());
    assert_eq!(a.name(), b.name());
    assert_eq!(a.provenance(), b.provenance());
    assert_eq!(a.n_mat().col_ptr(), b.n_mat().col_ptr());
    assert_eq!(a.n_mat().row_idx(), b.n_mat().row_idx());
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(a.n_mat().values()), bits(b.n_mat().values()));
    assert_eq!(bits(a.r()), bits(b.r()));
    match (a.constraints(), b.constraints()) {
        (ConstraintSet::NonNegative, ConstraintSet::NonNegative) => {}
        (
            ConstraintSet::CoulombCones {
                mu: x,
                dim: d1,
                joints: j1,
            },
            ConstraintSet::CoulombCones {
                mu: y,
                dim: d2,
                joints: j2,
            },
        ) => {
            assert_eq!((d1, j1), (d2, j2));
            assert_eq!(bits(x), bits(y))
        }
        (ConstraintSet::Box { lo: l1, hi: h1 }, ConstraintSet::Box { lo: l2, hi: h2 }) => {
            assert_eq!(bits(l1), bits(l2));
            assert_eq!(bits(h1), bits(h2));
        }
        (x, y) => panic!("{x:?} vs {y:?}"),
    }
}

fn box_instance() -> Instance {
    let sub = f64::from_bits(3); // subnormal
    let n_mat = CscMatrix::from_triplets(
        4,
        4,
        &[
            (0, 0, 2.0),
            (1, 1, 1.0 / 3.0),
            (2, 2, 1e300),
            (3, 3, sub),
            (0, 1, -0.1),
            (1, 0, -0.1),
            (2, 3, 0.0), // explicit zeros keep the structure
            (3, 2, 0.0),
        ],
    )
    .unwrap();
    let mut prov = Provenance {
        source: "constructed in tests/it/io.rs".into(),
        format: "test".into(),
        derivation: "as-is".into(),
        seed: Some(42),
        step: Some(7),
        ..Provenance::default()
    };
    prov.parameters
        .insert("note".into(), "infinite bounds".into());
    Instance::new(
        "box_test",
        n_mat,
        vec![-0.0, std::f64::consts::PI, -sub, 1e-310],
        ConstraintSet::Box {
            lo: vec![f64::NEG_INFINITY, -0.0, -1.5, -1e-320],
            hi: vec![f64::INFINITY, f64::INFINITY, 0.1 + 0.2, 0.0],
        },
        prov,
        ValidationOptions::default(),
    )
    .unwrap()
}

#[test]
fn bundle_round_trip_is_bit_exact() {
    let dir = temp_dir("bundle");
    let f = fixtures();
    let ccp = load(
        &f.join("siconos-fc3d/Rover4396.dat"),
        &opts(ClassChoice::Ccp, true),
    )
    .unwrap();
    let glob = load(
        &f.join("fclib/Box_Stacks-i0122-82-5.hdf5"),
        &LoadOptions::default(),
    )
    .unwrap();
    let lcp = load(&f.join("lcp/lcp_mmc.dat"), &LoadOptions::default()).unwrap();
    for inst in [&ccp, &glob, &lcp, &box_instance()] {
        let b = dir.join(inst.name());
        write_bundle(inst, &b).unwrap();
        let back = read_bundle(&b, ValidationOptions::default()).unwrap();
        assert_bitwise_equal(inst, &back);
        // `load` recognises the directory; writing again replaces the bundle.
        assert_eq!(detect_format(&b).unwrap(), Format::Bundle);
        write_bundle(&back, &b).unwrap();
        let again = load(&b, &LoadOptions::default()).unwrap();
        assert_bitwise_equal(inst, &again);
    }
    let json = std::fs::read_to_string(dir.join("box_test/instance.json")).unwrap();
    assert!(
        json.contains("\"-inf\"") && json.contains("\"inf\""),
        "{json}"
    );
    assert!(json.contains("\"sign_convention\": \"f = 1/2 x^T N x + r^T x, g = N x + r\""));
    let n = std::fs::read_to_string(dir.join("Rover4396__ccp/N.mtx")).unwrap();
    assert!(n.starts_with("%%MatrixMarket matrix coordinate real symmetric\n"));
    // a CCP bundle loaded as LCP gives its normal block
    let nb = load(&dir.join("Rover4396__ccp"), &opts(ClassChoice::Lcp, false)).unwrap();
    assert_eq!(nb.name(), "Rover4396__lcp");
    assert_eq!(nb.hash(), ccp.normal_block_lcp().unwrap().hash());
    // never replaces a directory that is not a bundle
    let other = dir.join("not-a-bundle");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("precious.txt"), "keep").unwrap();
    assert!(matches!(
        write_bundle(&lcp, &other),
        Err(ProblemError::Io { .. })
    ));
    assert!(other.join("precious.txt").exists());
    // no temporary directories left behind
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn corrupted_bundles_give_typed_errors() {
    let dir = temp_dir("badbundle");
    let lcp = load(
        &fixtures().join("lcp/lcp_deudeu.dat"),
        &LoadOptions::default(),
    )
    .unwrap();
    let b = dir.join("b");
    write_bundle(&lcp, &b).unwrap();
    let v = ValidationOptions::default();
    // edited value: hash mismatch
    let r = std::fs::read_to_string(b.join("r.mtx")).unwrap();
    std::fs::write(
        b.join("r.mtx"),
        r.replace("-5.0000000000000000e0", "-4.0000000000000000e0"),
    )
    .unwrap();
    let (location, _) = parse_error("edited r.mtx", read_bundle(&b, v));
    assert_eq!(location.as_deref(), Some("hash"));
    // malformed JSON: located by line and column
    std::fs::write(
        b.join("instance.json"),
        "{\n \"format_version\": 1,\n oops }",
    )
    .unwrap();
    let (location, _) = parse_error("malformed instance.json", read_bundle(&b, v));
    assert!(location.unwrap().starts_with("line 3"));
    // missing file
    std::fs::remove_file(b.join("instance.json")).unwrap();
    assert!(matches!(read_bundle(&b, v), Err(ProblemError::Io { .. })));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Any error but a panic; returns it for matching.
fn load_err(name: &str, bytes: &[u8], format: Format) -> ProblemError {
    match load_bytes(name, bytes, format, &opts(ClassChoice::Ccp, true)) {
        Ok(i) => panic!(
            "{name}: malformed input loaded as {} (n = {})",
            i.name(),
            i.n()
        ),
        Err(e) => e,
    }
}

#[test]
fn malformed_inputs_give_typed_errors() {
    let f = fixtures();
    let rover = std::fs::read(f.join("siconos-fc3d/Rover4396.dat")).unwrap();
    let nes = std::fs::read_to_string(f.join("siconos-fc3d/NESpheres_10_1.dat")).unwrap();

    // truncated .dat, cut in the middle
    let e = load_err(
        "Rover4396.dat",
        &rover[..rover.len() / 2],
        Format::SiconosFc3d,
    );
    let (path, location, message) = parse_parts("truncated Rover4396.dat", &e);
    assert_eq!(path, Path::new("Rover4396.dat"));
    assert!(location.unwrap().contains("end of file"), "{e}");
    assert!(
        message.contains("file ends early") || message.contains("end of file"),
        "{e}"
    );

    // NaN injected in the matrix of a .dat
    let text = String::from_utf8(rover.clone()).unwrap();
    let bad = text.replacen("-1.515988037597431909581092e-04", "nan", 1);
    let e = load_err("Rover4396.dat", bad.as_bytes(), Format::SiconosFc3d);
    let (_, location, message) = parse_parts("NaN in Rover4396.dat", &e);
    assert_eq!(location, Some("line 7, token 9"), "{e}");
    assert!(message.contains("non-finite"), "{e}");

    // wrong sizes: 8 contacts declared, matrix of size 27
    let bad = nes.replacen("3\n9\n", "3\n8\n", 1);
    let e = load_err("NESpheres_10_1.dat", bad.as_bytes(), Format::SiconosFc3d);
    let (_, location, message) = parse_parts("wrong sizes in NESpheres_10_1.dat", &e);
    assert_eq!(location, Some("line 5, token 5"), "{e}");
    assert!(
        message.contains("27 x 27") && message.contains("24 x 24"),
        "{e}"
    );

    // truncated HDF5 files (first half of the bytes)
    for file in [
        "Spheres-i099-356-679.hdf5",
        "Capsules-i125-1213.hdf5",
        "Box_Stacks-i0122-82-5.hdf5",
        "CubeH8.hdf5",
    ] {
        let bytes = std::fs::read(f.join("fclib").join(file)).unwrap();
        let e = load_err(file, &bytes[..bytes.len() / 2], Format::FclibHdf5);
        let (path, location, _) = parse_parts(file, &e);
        assert_eq!(path, Path::new(file));
        assert!(location.unwrap().starts_with("HDF5"), "{e}");
    }

    // MatrixMarket with an out-of-range index
    let mtx = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 2 1.0\n";
    let (location, message) =
        parse_error("bad.mtx", io::mtx::read_matrix(Path::new("bad.mtx"), mtx));
    assert_eq!(location.as_deref(), Some("line 4"));
    assert!(message.contains("out of range"), "{message}");

    // garbage text: not detected, and a typed error when forced into any reader
    let garbage = b"Lorem ipsum dolor sit amet\n\x00\xff\xfe 1 2 3\n";
    assert_eq!(io::detect_format_bytes(garbage), None);
    for format in [Format::SiconosFc3d, Format::SiconosLcp, Format::FclibHdf5] {
        assert!(matches!(
            load_err("garbage.dat", garbage, format),
            ProblemError::Parse { .. }
        ));
    }
    assert!(io::mtx::read_matrix(Path::new("garbage.mtx"), garbage).is_err());
    let dir = temp_dir("garbage");
    let p = dir.join("garbage.dat");
    std::fs::write(&p, garbage).unwrap();
    assert!(matches!(
        load(&p, &LoadOptions::default()),
        Err(ProblemError::UnknownFormat { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Byte ranges of the whitespace-separated tokens of a text file.
fn token_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (k, b) in bytes.iter().enumerate() {
        match (b.is_ascii_whitespace(), start) {
            (true, Some(s)) => {
                spans.push((s, k));
                start = None;
            }
            (false, None) => start = Some(k),
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, bytes.len()));
    }
    spans
}

/// Whether the first `cut` bytes of a Siconos text file hold the same problem as the whole
/// file: every token the reader uses is present, the last one possibly cut to a prefix that is
/// the same number (`-6.000e+00` cut to `-6.00`); the free trailing tokens the reader ignores
/// (`ignored_trailing_tokens`) may be cut anywhere.
fn text_cut_is_complete(bytes: &[u8], cut: usize, format: Format) -> bool {
    let p = Path::new("complete.dat");
    let notes = match format {
        Format::SiconosFc3d => io::siconos::read_fc3d(p, bytes).unwrap().notes,
        _ => io::siconos::read_lcp(p, bytes).unwrap().notes,
    };
    let ignored: usize = notes
        .get("ignored_trailing_tokens")
        .map_or(0, |v| v.parse().unwrap());
    let spans = token_spans(bytes);
    let (start, end) = spans[spans.len() - ignored - 1];
    let number = |b: &[u8]| std::str::from_utf8(b).unwrap().parse::<f64>().ok();
    cut >= end || (cut > start && number(&bytes[start..cut]) == number(&bytes[start..end]))
}

#[test]
fn truncated_files_are_errors_unless_complete() {
    // Cut every fixture at 40 points: a cut that keeps the whole problem (see
    // `text_cut_is_complete`; never for HDF5, whose structure covers the whole file) must load
    // the same instance, every other cut must be a typed error (never an Ok, never a panic).
    let f = fixtures();
    let files = [
        ("siconos-fc3d/Rover4396.dat", Format::SiconosFc3d, 0),
        ("siconos-fc3d/FC3D_Example1_SBM.dat", Format::SiconosFc3d, 0),
        ("siconos-fc3d/NESpheres_10_1.dat", Format::SiconosFc3d, 0),
        ("lcp/lcp_deudeu.dat", Format::SiconosLcp, 5),
        ("lcp/lcp_CPS_2.dat", Format::SiconosLcp, 15),
        ("fclib/CubeH8.hdf5", Format::FclibHdf5, 0),
        ("fclib/Box_Stacks-i0122-82-5.hdf5", Format::FclibHdf5, 0),
    ];
    let o = opts(ClassChoice::Ccp, true);
    for (file, format, complete_cuts) in files {
        let bytes = std::fs::read(f.join(file)).unwrap();
        let whole = load_bytes(file, &bytes, format, &o).unwrap();
        let mut complete = 0;
        for k in 0..40 {
            let cut = bytes.len() * k / 40;
            let r = load_bytes(file, &bytes[..cut], format, &o);
            let expect_ok =
                format != Format::FclibHdf5 && text_cut_is_complete(&bytes, cut, format);
            match r {
                Ok(i) if expect_ok => {
                    assert_eq!(i.hash(), whole.hash(), "{file} cut at {cut}: other content");
                    complete += 1;
                }
                Ok(i) => panic!(
                    "{file} cut at {cut} of {} bytes: loaded as {} (n = {})",
                    bytes.len(),
                    i.name(),
                    i.n()
                ),
                Err(e) if expect_ok => panic!("{file} cut at {cut} keeps the problem: {e}"),
                Err(e) => assert!(matches!(e, ProblemError::Parse { .. }), "{file}: {e:?}"),
            }
        }
        assert_eq!(complete, complete_cuts, "{file}: complete cuts");
    }
}

#[test]
fn no_corruption_panics() {
    // Flip bytes of the HDF5 fixtures: every outcome must be an Ok (a flip in unused bytes) or a
    // typed error, never a panic.
    let f = fixtures();
    for file in ["fclib/CubeH8.hdf5", "fclib/Box_Stacks-i0122-82-5.hdf5"] {
        let bytes = std::fs::read(f.join(file)).unwrap();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..60 {
            let mut b = bytes.clone();
            for _ in 0..4 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let pos = (state % b.len() as u64) as usize;
                b[pos] ^= (state >> 32) as u8 | 1;
            }
            let _ = load_bytes(file, &b, Format::FclibHdf5, &LoadOptions::default());
        }
    }
}
