//! The tests of `cpbench_problems::io::siconos_global` (until now its `#[cfg(test)]` module in
//! `problems/src/io/siconos_global.rs`).

use cpbench_problems::error::ProblemError;
use cpbench_problems::io::siconos_global::*;
use std::path::Path;

fn p() -> &'static Path {
    Path::new("g.dat")
}

/// One contact in 3-D, M = diag(2, 4, 8) dense, H = I dense, q = (2, 4, 8), b = (0.5, 0, 0).
const TINY: &str = "3\n1\n0\n3\n3\n3\t3\n2 0 0 0 4 0 0 0 8\n0\n3\n3\n3\t3\n1 0 0 0 1 0 0 0 1\n\
                    2 4 8\n0.5 0 0\n0.25\n";

#[test]
fn tiny_dense_problem_condenses() {
    assert!(detect(TINY.as_bytes()));
    let g = read_global(p(), TINY.as_bytes()).unwrap();
    assert_eq!((g.dofs(), g.contacts(), g.spacedim), (3, 1, 3));
    let f = read_siconos_global(p(), TINY.as_bytes()).unwrap();
    let w = &f.problem.w;
    // W = M^-1 = diag(1/2, 1/4, 1/8), q = M^-1 (2, 4, 8) + b = (1.5, 1, 1)
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-15;
    assert!(close(w.get(0, 0), 0.5) && close(w.get(1, 1), 0.25) && close(w.get(2, 2), 0.125));
    assert_eq!(w.get(0, 1), 0.0);
    assert!(
        close(f.problem.q[0], 1.5) && close(f.problem.q[1], 1.0),
        "{:?}",
        f.problem.q
    );
    assert_eq!(f.problem.mu, vec![0.25]);
    assert_eq!(f.notes["dofs"], "3");
    assert_eq!(f.notes["m_storage"], "dense (column-major)");
}

#[test]
fn csparse_triplet_and_csc_are_read() {
    // 2-D, 1 contact, 3 dofs: M triplet diag(1, 2, 4); H CSC 3 x 2 with an empty column 0
    let text = "2\n1\n2\n3\n3\n1\nCSparse Version 3.1.9, May 4, 2016.  Copyright (c) x\n\
                triplet: 3-by-3, nzmax: 3 nnz: 3\n    0 0 : 1\n    1 1 : 2\n    2 2 : 4\n\
                2\n3\n2\n2\nCSparse Version 3.1.9, May 4, 2016.  Copyright (c) x\n\
                3-by-2, nzmax: 2 nnz: 2, 1-norm: 2\n    col 0 : locations 0 to -1\n\
                \x20   col 1 : locations 0 to 1\n      0 : 1\n      2 : -1\n\
                1 1 1\n0 0.5\n0.3\n";
    assert!(detect(text.as_bytes()));
    let g = read_global(p(), text.as_bytes()).unwrap();
    assert_eq!(g.m.get(2, 2), 4.0);
    assert_eq!((g.h.nrows(), g.h.ncols()), (3, 2));
    assert_eq!(
        (g.h.get(0, 1), g.h.get(2, 1), g.h.get(0, 0)),
        (1.0, -1.0, 0.0)
    );
    assert_eq!(g.notes["m_storage"], "sparse (CSparse triplet text)");
    assert_eq!(g.notes["h_storage"], "sparse (CSparse CSC text)");
    let f = read_siconos_global(p(), text.as_bytes()).unwrap();
    // W[1,1] = 1/1 + 1/4 = 1.25; q[1] = 1 - 1/4 + 0.5 = 1.25
    assert!((f.problem.w.get(1, 1) - 1.25).abs() < 1e-15);
    assert!((f.problem.q[1] - 1.25).abs() < 1e-15 && f.problem.q[0] == 0.0);
    assert_eq!(f.problem.spacedim, 2);
}

#[test]
fn local_files_are_not_global() {
    // fc3d with W = I (3 x 3): q follows, printed as reals
    let fc3d = "3\n1\n0\n3\n3\n3\t3\n1 0 0 0 1 0 0 0 1\n-1.0e+00 0.0e+00 0.0e+00\n0.1\n";
    assert!(!detect(fc3d.as_bytes()));
    assert!(!detect(b"2\n0\n2\n2\n2 2\n1 0 0 1\n-1 -1\n"));
    assert!(!detect(b""));
    // cut inside M, M's size 9 != 3 * 1: no local reading possible
    assert!(cut_head_is_global(b"3 1 0 9 9 9 9 1 0 0"));
    assert!(!cut_head_is_global(b"3 1 0 3 3 3 3 1 0 0"));
    // a hand-made local file whose q and mu are integers (`0 0 0`, `1`): exactly d nc + nc
    // numbers after W, so not a global file with a bad H
    assert!(!detect(
        b"3\n1\n0\n3\n3\n3 3\n1 0 0 0 1 0 0 0 1\n0 0 0\n1\n"
    ));
}

/// Issue 30: a global file whose `H` has the wrong shape, with `ndof = d nc` (the one case
/// a local reading of the header would accept), is global and its error names `H`: it was
/// read as a local problem (`H`'s header taken for `q` and `mu`).
#[test]
fn a_bad_h_never_falls_back_to_a_local_reading() {
    let bad = TINY.replacen("0\n3\n3\n3\t3\n1 0 0", "0\n3\n2\n3\t2\n1 0 0", 1);
    assert_ne!(bad, TINY);
    assert!(detect(bad.as_bytes()));
    assert_eq!(
        cpbench_problems::io::detect_format_bytes(bad.as_bytes()),
        Some(cpbench_problems::io::Format::SiconosGlobal)
    );
    let (at, msg) = located(read_global(p(), bad.as_bytes()).unwrap_err());
    assert_eq!(at, "line 10, token 19", "{msg}");
    assert_eq!(
        msg,
        "H is 3 x 2, but it must be 3 x 3 (one row per degree of freedom of M, one column \
         per contact unknown: d * number of contacts = 3 * 1)"
    );
}

/// `(location, message)` of a Parse error.
fn located(e: ProblemError) -> (String, String) {
    match e {
        ProblemError::Parse {
            location, message, ..
        } => (location.unwrap_or_default(), message),
        e => panic!("{e:?}"),
    }
}

#[test]
fn malformed_inputs_give_located_errors() {
    let tiny = TINY.replace('\t', " ");
    // truncated: mu missing
    let cut = &tiny[..tiny.rfind("0.25").unwrap()];
    let (l, m) = located(read_global(p(), cut.as_bytes()).unwrap_err());
    assert!(l.contains("end of file"), "{l}");
    assert!(m.contains("mu (one per contact, 1)"), "{m}");
    // non-finite value in q
    let bad = tiny.replace("2 4 8", "2 inf 8");
    let (l, m) = located(read_global(p(), bad.as_bytes()).unwrap_err());
    assert_eq!(l, "line 13, token 32");
    assert!(m.contains("non-finite"), "{m}");
    // H of the wrong shape: 3 x 2 for one 3-D contact
    let bad = tiny.replace(
        "0\n3\n3\n3 3\n1 0 0 0 1 0 0 0 1",
        "0\n3\n2\n3 2\n1 0 0 0 1 0",
    );
    let (l, m) = located(read_global(p(), bad.as_bytes()).unwrap_err());
    assert!(m.starts_with("H is 3 x 2, but it must be 3 x 3"), "{m}");
    assert_eq!(l, "line 10, token 19");
    let (l2, m2) = located(diagnose(p(), bad.as_bytes()).unwrap());
    assert_eq!((l2, m2), (l, m));
    // non-square M
    let bad = tiny.replacen("0\n3\n3\n3 3\n2 0 0", "0\n3\n2\n3 2\n2 0 0", 1);
    let (_, m) = located(read_global(p(), bad.as_bytes()).unwrap_err());
    assert!(m.contains("M is 3 x 2"), "{m}");
    // d = 4
    let (l, m) = located(read_global(p(), b"4 1 0 3 3").unwrap_err());
    assert_eq!(l, "line 1, token 1");
    assert!(m.contains("d = 4"), "{m}");
    // negative mu
    let bad = tiny.replace("0.25", "-0.25");
    let (l, m) = located(read_global(p(), bad.as_bytes()).unwrap_err());
    assert_eq!(l, "line 15, token 37");
    assert!(m.contains("negative friction coefficient"), "{m}");
    // bad CSparse banner
    let bad = "2 0 2 1 1 1\nnot a banner\n";
    let (_, m) = located(read_global(p(), bad.as_bytes()).unwrap_err());
    assert!(m.contains("expected the CSparse banner line"), "{m}");
    // singular M: a typed factorisation error, not a panic
    let bad = tiny.replace("2 0 0 0 4 0 0 0 8", "2 0 0 0 0 0 0 0 8");
    let e = read_siconos_global(p(), bad.as_bytes()).unwrap_err();
    assert!(
        matches!(&e, ProblemError::InFile { source, .. }
            if matches!(**source, ProblemError::Factorization(_))),
        "{e:?}"
    );
    assert!(e.to_string().contains("g.dat"), "{e}");
}

#[test]
fn declared_sizes_must_fit() {
    let head = b"3 1000 0 3000 3000\n";
    let e = check_declared_size(p(), head, head.len() as u64).unwrap_err();
    let (l, m) = located(e);
    assert_eq!(l, "line 1, token 2");
    assert!(m.contains("at least 9007000 numbers"), "{m}");
    assert!(check_declared_size(p(), TINY.as_bytes(), TINY.len() as u64).is_ok());
}
