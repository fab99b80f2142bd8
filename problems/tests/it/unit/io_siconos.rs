//! The tests of `cpbench_problems::io::siconos` (until now its `#[cfg(test)]` module in
//! `problems/src/io/siconos.rs`).

use cpbench_problems::io::siconos::*;
use cpbench_problems::io::Format;
use cpbench_problems::ProblemError;
use std::path::Path;

fn p() -> &'static Path {
    Path::new("t.dat")
}

#[test]
fn dense_is_column_major() {
    // 2x2 LCP, first line is the first column: M = [[1, 3], [2, 4]]
    let f = read_lcp(p(), b"2\n0\n2\n2\n2\t2\n1 2\n3 4\n-1 -1\n\nfree text here").unwrap();
    assert_eq!(f.m.get(0, 0), 1.0);
    assert_eq!(f.m.get(1, 0), 2.0);
    assert_eq!(f.m.get(0, 1), 3.0);
    assert_eq!(f.m.get(1, 1), 4.0);
    assert_eq!(f.q, vec![-1.0, -1.0]);
    assert_eq!(f.notes["ignored_trailing_tokens"], "3");
}

#[test]
fn sbm_blocks_column_major() {
    // 6x6, 2 block rows/cols of size 3; blocks (0,0), (0,1), (1,1).
    let mut s = String::from("3\n2\n1\n6\n6\n3\n2\n2\n3 6\n3 6\n3\n3\n0 2 3\n0 1 1\n");
    for b in 0..3 {
        s += &format!("{b}\n");
        for k in 0..9 {
            s += &format!("{}\n", (b * 9 + k + 1) as f64);
        }
    }
    s += "1 2 3 4 5 6\n0.5 0.25\n";
    let f = read_fc3d(p(), s.as_bytes()).unwrap();
    let w = &f.problem.w;
    // block 0 values 1..9 column-major: W[1,0] = 2, W[0,1] = 4
    assert_eq!(w.get(1, 0), 2.0);
    assert_eq!(w.get(0, 1), 4.0);
    // block 1 at (0, 1): values 10..18, W[0,3] = 10, W[1,3] = 11, W[0,4] = 13
    assert_eq!(w.get(0, 3), 10.0);
    assert_eq!(w.get(1, 3), 11.0);
    assert_eq!(w.get(0, 4), 13.0);
    assert_eq!(w.get(3, 0), 0.0);
    // block 2 at (1, 1): W[5,5] = 27
    assert_eq!(w.get(5, 5), 27.0);
    assert_eq!(f.problem.mu, vec![0.5, 0.25]);
}

#[test]
fn errors_are_located() {
    let e = read_lcp(p(), b"2\n0\n2\n2\n2 2\n1 2\n3 nan\n-1 -1\n").unwrap_err();
    match e {
        ProblemError::Parse {
            location, message, ..
        } => {
            assert_eq!(location.as_deref(), Some("line 7, token 10"), "{message}");
            assert!(message.contains("non-finite"));
        }
        e => panic!("{e:?}"),
    }
    let e = read_lcp(p(), b"2\n0\n2\n2\n2 2\n1 2\n3").unwrap_err();
    assert!(matches!(e, ProblemError::Parse { .. }), "{e}");
    let e = read_fc3d(p(), b"4\n1\n0\n4\n4\n4 4\n1 0 0 1\n0 0\n1\n").unwrap_err();
    assert!(e.to_string().contains("only 3-D and 2-D"), "{e}");
    let e = read_fc3d(p(), b"3\n2\n0\n3\n3\n3 3\n1 2 3 4 5 6 7 8 9\n").unwrap_err();
    assert!(e.to_string().contains("header asks for 6 x 6"), "{e}");
    let e = read_lcp(p(), b"1\n5\n1\n1\n").unwrap_err();
    assert!(e.to_string().contains("storage type 5"), "{e}");
    let e = read_lcp(
        p(),
        b"1000000000\n0\n1000000000\n1000000000\n1000000000 1000000000\n1\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("file ends early"), "{e}");
}

/// `(location, message)` of a Parse error.
fn parse_err(e: Option<ProblemError>) -> (String, String) {
    match e {
        Some(ProblemError::Parse {
            location, message, ..
        }) => (location.unwrap_or_default(), message),
        e => panic!("{e:?}"),
    }
}

#[test]
fn header_defects_get_their_own_messages() {
    // (file, location, the message's start), one line each
    #[rustfmt::skip]
    let cases: [(&[u8], &str, &str); 8] = [
        // wrong space dimension
        (b"4\n2\n0\n8\n8\n8 8\n", "line 1, token 1", "space dimension d = 4 is not supported"),
        // negative contact count
        (b"3\n-2\n0\n-6\n-6\n", "line 2, token 2", "negative number of contacts -2"),
        // contact count inconsistent with the matrix size
        (b"3 2 0 5 5\n5 5\n", "line 1, token 4", "W is 5 x 5, but 2 contacts in 3-D need a 6 x 6"),
        // unknown storage types, fc3d and LCP
        (b"3 2 7 6 6\n", "line 1, token 3", "W: NumericsMatrix storage type '7' is not supported"),
        (b"4\n7\n4\n4\n", "line 2, token 2", "M: NumericsMatrix storage type '7'"),
        // LCP size inconsistent with n
        (b"5 0 4 4 4 4\n", "line 1, token 3", "M is 4 x 4, but the header says n = 5 (M is n x n)"),
        // issue 30: a matrix that is not square was "unrecognised format"
        (b"3 1 0 3 4\n1 0 0 0 1 0 0 0 1 1 1 1\n", "line 1, token 5", "W is 3 x 4, but 1 contacts"),
        (b"3 0 3 4 3 4\n1 0 0 0 1 0 0 0 1 1 1 1\n", "line 1, token 4", "M is 3 x 4, but the"),
    ];
    for (file, location, start) in cases {
        let (l, m) = parse_err(diagnose(p(), file));
        assert_eq!(l, location, "{}", String::from_utf8_lossy(file));
        assert!(m.starts_with(start), "{m}");
    }
    // not a Siconos text at all
    assert!(diagnose(p(), b"hello world").is_none());
    assert!(diagnose(p(), b"1 2 3 4 5").is_none());
}

#[test]
fn declared_sizes_must_fit_the_file() {
    let head = b"3 1000 0 3000 3000\n3000 3000\n1 2\n";
    let e = check_declared_size(p(), head, head.len() as u64).unwrap_err();
    let (l, m) = parse_err(Some(e));
    assert_eq!(l, "line 1, token 2");
    assert!(m.contains("at least 9004000 numbers"), "{m}");
    // 2 x 2 dense LCP: 4 + 2 numbers, 11 bytes at least
    let lcp = b"2 0 2 2 2 2 1 0 0 1 -1 -1";
    assert!(check_declared_size(p(), lcp, lcp.len() as u64).is_ok());
    assert!(check_declared_size(p(), lcp, 10).is_err());
    assert!(check_declared_size(p(), lcp, 11).is_ok());
}

#[test]
fn detection() {
    assert_eq!(detect(b"3\n2\n0\n6\n6\n"), Some(Format::SiconosFc3d));
    assert_eq!(detect(b"3\n2\n1\n6\n6\n"), Some(Format::SiconosFc3d));
    assert_eq!(detect(b"26\n0\n26\n26\n"), Some(Format::SiconosLcp));
    assert_eq!(detect(b"2\n1\n2\n2\n"), Some(Format::SiconosLcp));
    assert_eq!(detect(b"3\n2\n0\n5\n"), None);
    assert_eq!(detect(b"3 x"), None);
}
