//! The tests of `cpbench_problems::io::fclib::global` (until now its `#[cfg(test)]` module in
//! `problems/src/io/fclib/global.rs`).

use cpbench_problems::io::fclib::symmetrize_triangle;
use cpbench_problems::io::Notes;
use cpbench_problems::linalg::CscMatrix;

#[test]
fn upper_triangle_is_mirrored() {
    let u = CscMatrix::from_triplets(2, 2, &[(0, 0, 2.0), (0, 1, 1.0), (1, 1, 3.0)]).unwrap();
    let mut notes = Notes::new();
    let s = symmetrize_triangle(u, &mut notes);
    assert_eq!((s.get(1, 0), s.get(0, 1), s.get(0, 0)), (1.0, 1.0, 2.0));
    assert_eq!(notes["m_upper_triangle_symmetrized"], "true");
}
