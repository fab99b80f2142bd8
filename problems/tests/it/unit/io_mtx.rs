//! The tests of `cpbench_problems::io::mtx` (until now its `#[cfg(test)]` module in
//! `problems/src/io/mtx.rs`).

use cpbench_problems::error::{ProblemError, Result};
use cpbench_problems::io::mtx::*;
use cpbench_problems::linalg::CscMatrix;
use std::path::Path;

fn p() -> &'static Path {
    Path::new("t.mtx")
}

fn tricky_values() -> Vec<f64> {
    vec![
        0.1,
        -0.0,
        0.0,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 3.0, // subnormal
        f64::from_bits(1),       // smallest subnormal
        -f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        1.0 + f64::EPSILON,
        std::f64::consts::PI,
        -1.0 / 3.0,
        1.234_567_891_234_568e108,
        9.999999999999999e-301,
    ]
}

/// Fuzz findings (issue 30, fuzz target `mtx`): a 53-byte `array` file declaring `0 x
/// 620292882` asked for 5 GB of column pointers; duplicates `1e308` twice stored `inf`.
#[test]
fn fuzz_findings_are_refused() {
    let p = Path::new("N.mtx");
    let err = |text: &[u8]| read_matrix(p, text).unwrap_err().to_string();
    let e = err(b"%%MatrixMarket matrix array real general\n0 620292882\n");
    assert!(
        e.contains("implausible size 0 x 620292882 for a file of 53 bytes"),
        "{e}"
    );
    let e =
        err(b"%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1e308\n1 1 1e308\n2 2 1\n");
    assert!(
        e.contains("non-finite value inf in matrix (duplicate entries summed) at (0, 0)"),
        "{e}"
    );
}

#[test]
fn duplicates_are_summed_and_counted() {
    let text = b"%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1\n1 1 2.5\n2 1 1\n2 2 4\n1 1 -0.5\n";
    let (m, d) = read_matrix_counted(p(), text).unwrap();
    assert_eq!(d, 2);
    assert_eq!(m.get(0, 0), 3.0);
    assert_eq!(m.get(1, 0), 1.0);
    assert_eq!(m.nnz(), 3);
    // symmetric: counted on the stored lower triangle, mirrored once
    let text = b"%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n2 1 1\n2 1 2\n1 1 1\n";
    let (m, d) = read_matrix_counted(p(), text).unwrap();
    assert_eq!(d, 1);
    assert_eq!((m.get(1, 0), m.get(0, 1)), (3.0, 3.0));
    let (_, d) =
        read_matrix_counted(p(), b"%%MatrixMarket matrix array real general\n1 1\n1\n").unwrap();
    assert_eq!(d, 0);
}

#[test]
fn declared_sizes_are_checked_before_reading() {
    let dir = tempfile_dir();
    let f = dir.join("N.mtx");
    std::fs::write(
        &f,
        b"%%MatrixMarket matrix coordinate real general\n% c\n3 3 100000000\n1 1 1\n",
    )
    .unwrap();
    let e = read_file(&f).unwrap_err().to_string();
    assert!(
        e.contains("(at line 3)") && e.contains("100000000 entries"),
        "{e}"
    );
    std::fs::write(
        &f,
        b"%%MatrixMarket matrix array real general\n4 1\n1\n2\n3\n",
    )
    .unwrap();
    assert!(read_file(&f).unwrap_err().to_string().contains("4 entries"));
    std::fs::write(
        &f,
        b"%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n",
    )
    .unwrap();
    assert!(read_file(&f).is_ok());
    std::fs::write(&f, b"not a matrix").unwrap();
    assert!(read_file(&f)
        .unwrap_err()
        .to_string()
        .contains("not a MatrixMarket file"));
    if Path::new("/dev/zero").exists() {
        let e = read_file(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh directory under the system temporary directory.
fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "cpbench-mtx-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn vector_round_trip_is_bit_exact() {
    let v = tricky_values();
    let mut buf = Vec::new();
    write_vector(&mut buf, &v).unwrap();
    let w = read_vector(p(), &buf).unwrap();
    assert_eq!(v.len(), w.len());
    for (a, b) in v.iter().zip(&w) {
        assert_eq!(a.to_bits(), b.to_bits(), "{a:e} -> {b:e}");
    }
}

#[test]
fn matrix_round_trip_is_bit_exact() {
    let v = tricky_values();
    let n = v.len();
    // symmetric: diagonal v, off-diagonals (i, i-1) = v[i], plus an explicit zero pair
    let mut t = Vec::new();
    for (i, &x) in v.iter().enumerate() {
        t.push((i, i, x));
        if i > 0 {
            t.push((i, i - 1, x));
            t.push((i - 1, i, x));
        }
    }
    t.push((n - 1, 0, 0.0));
    t.push((0, n - 1, 0.0));
    let a = CscMatrix::from_triplets(n, n, &t).unwrap();
    assert!(is_exactly_symmetric(&a));
    for sym in [true, false] {
        let mut buf = Vec::new();
        if sym {
            write_symmetric_lower(&mut buf, &a).unwrap();
        } else {
            write_general(&mut buf, &a).unwrap();
        }
        let b = read_matrix(p(), &buf).unwrap();
        assert_eq!(a.col_ptr(), b.col_ptr());
        assert_eq!(a.row_idx(), b.row_idx());
        let ab: Vec<u64> = a.values().iter().map(|x| x.to_bits()).collect();
        let bb: Vec<u64> = b.values().iter().map(|x| x.to_bits()).collect();
        assert_eq!(ab, bb);
    }
}

#[test]
fn reads_comments_and_array_matrices() {
    let s = "%%MatrixMarket matrix array real general\n% c\n\n2 2\n1\n2\n3\n4\n";
    let a = read_matrix(p(), s.as_bytes()).unwrap();
    assert_eq!(a.get(1, 0), 2.0);
    assert_eq!(a.get(0, 1), 3.0);
    let s = "%%MatrixMarket matrix coordinate integer general\n2 3 1\n% x\n2 3 7\n";
    let a = read_matrix(p(), s.as_bytes()).unwrap();
    assert_eq!((a.nrows(), a.ncols(), a.get(1, 2)), (2, 3, 7.0));
}

fn parse_err_line(r: Result<CscMatrix>) -> String {
    match r {
        Err(ProblemError::Parse { location, .. }) => location.unwrap(),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn errors_name_the_line() {
    let h = "%%MatrixMarket matrix coordinate real symmetric\n";
    // (file, line of the error)
    let cases = [
        (format!("{h}2 2 1\n3 1 1.0\n"), "line 3"),
        // one triangle only: an upper entry after a lower one is an error at its line
        (format!("{h}3 3 2\n2 1 1.0\n1 3 1.0\n"), "line 4"),
        (format!("{h}2 2 2\n1 1 1.0\n"), "line 3 (end of file)"),
        (format!("{h}2 2 1\n1 1 nan\n"), "line 3"),
        (format!("{h}2 2 1\n1 1 1\n2 2 1\n"), "line 4"),
        (format!("{h}2 x 1\n"), "line 2"),
        ("garbage\n".to_string(), "line 1"),
        (
            "%%MatrixMarket matrix coordinate complex general\n".to_string(),
            "line 1",
        ),
    ];
    for (file, line) in cases {
        assert_eq!(
            parse_err_line(read_matrix(p(), file.as_bytes())),
            line,
            "{file}"
        );
    }
    assert!(read_vector(
        p(),
        b"%%MatrixMarket matrix array real general\n2 2\n1 2 3 4\n"
    )
    .is_err());
    assert!(read_matrix(p(), &[0xff, 0xfe, 0x00]).is_err());
    let huge = b"%%MatrixMarket matrix coordinate real general\n100000000000 1 0\n";
    assert_eq!(parse_err_line(read_matrix(p(), huge)), "line 2");
}

#[test]
fn forgiving_layouts() {
    // upper triangle of a symmetric file is mirrored like the lower one
    let up = read_matrix(
        p(),
        b"%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 4\n1 2 1\n2 2 3\n",
    )
    .unwrap();
    let lo = read_matrix(
        p(),
        b"%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 4\n2 1 1\n2 2 3\n",
    )
    .unwrap();
    for j in 0..2 {
        assert_eq!(up.col(j), lo.col(j));
    }
    assert_eq!(up.nnz(), 4);
    assert_eq!(up.get(0, 1), 1.0);
    // dense symmetric array (SciPy's mmwrite of a symmetric ndarray): column-major lower
    // triangle, 4 1 0 3 0.5 2 for [[4,1,0],[1,3,.5],[0,.5,2]]; exact zeros not stored
    let text = b"%%MatrixMarket matrix array real symmetric\n%\n3 3\n4\n1\n0\n3\n5E-1\n2\n";
    let a = read_matrix(p(), text).unwrap();
    assert_eq!(a.nnz(), 7);
    assert_eq!((a.get(2, 1), a.get(1, 2), a.get(0, 2)), (0.5, 0.5, 0.0));
    assert_eq!(a.get(1, 1), 3.0);
    assert!(read_matrix(
        p(),
        b"%%MatrixMarket matrix array real symmetric\n2 3\n1\n2\n3\n"
    )
    .is_err());
    // a vector as a coordinate column or row; missing entries are 0
    let v = read_vector(
        p(),
        b"%%MatrixMarket matrix coordinate real general\n3 1 2\n1 1 -1\n3 1 2.5\n",
    )
    .unwrap();
    assert_eq!(v, vec![-1.0, 0.0, 2.5]);
    let v = read_vector(
        p(),
        b"%%MatrixMarket matrix coordinate real general\n1 3 1\n1 2 7\n",
    )
    .unwrap();
    assert_eq!(v, vec![0.0, 7.0, 0.0]);
    assert!(read_vector(
        p(),
        b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n"
    )
    .is_err());
}
