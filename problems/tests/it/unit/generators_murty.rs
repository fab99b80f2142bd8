//! The tests of `cpbench_problems::generators::murty` (until now its `#[cfg(test)]` module in
//! `problems/src/generators/murty.rs`).

use cpbench_problems::generators::murty::*;

#[test]
fn murty_and_fathi_matrices() {
    let m = murty(3).unwrap();
    assert_eq!(m.name(), "murty-n3");
    assert!(!m.is_symmetric());
    let a = m.n_mat();
    let want = [[1.0, 0.0, 0.0], [2.0, 1.0, 0.0], [2.0, 2.0, 1.0]];
    for (i, row) in want.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            assert_eq!(a.get(i, j), v);
        }
    }
    assert_eq!(m.r(), &[-1.0, -1.0, -1.0]);
    assert_eq!(m.provenance().parameters["n"], "3");
    // L L^T of n = 3: [[1, 2, 2], [2, 5, 6], [2, 6, 9]]
    let f = fathi(3).unwrap();
    assert!(f.is_symmetric());
    let b = f.n_mat();
    let want = [[1.0, 2.0, 2.0], [2.0, 5.0, 6.0], [2.0, 6.0, 9.0]];
    for (i, row) in want.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            assert_eq!(b.get(i, j), v);
        }
    }
    // z = e_1 solves both: w = M e_1 - e = (0, 1, 1) >= 0
    for inst in [&m, &f] {
        let mut g = vec![0.0; 3];
        inst.gradient(&[1.0, 0.0, 0.0], &mut g);
        assert_eq!(g, vec![0.0, 1.0, 1.0]);
    }
    assert!(murty(0).is_err());
    assert!(fathi(31).is_err());
}
