//! MatrixMarket files (a bundle's `N.mtx`, `r.mtx`, `D.mtx`, `M_diag.mtx`).
//!
//! The input is read as a bundle reads its files (`mtx::read_file`: regular file, banner and
//! declared size checked against the file length before it is read whole; then the matrix and
//! the vector reader), then in memory with the readers alone. What reads is written back
//! (`write_general`, `write_vector`) and read again: the module documents a bit-exact round
//! trip, so any difference is a finding too.
#![no_main]
use cpbench_fuzz::write_scratch;
use cpbench_problems::io::mtx;
use cpbench_problems::CscMatrix;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

#[inline(never)]
fn as_bundle_file(data: &[u8]) {
    let path = write_scratch("N.mtx", data);
    if let Ok(bytes) = mtx::read_file(&path) {
        let _ = mtx::read_matrix_counted(&path, &bytes);
        let _ = mtx::read_vector(&path, &bytes);
    }
}

#[inline(never)]
fn in_memory(data: &[u8]) {
    let path = Path::new("fuzz.mtx");
    if let Ok(m) = mtx::read_matrix(path, data) {
        round_trip_matrix(&m);
    }
    if let Ok(v) = mtx::read_vector(path, data) {
        round_trip_vector(&v);
    }
}

fn round_trip_matrix(m: &CscMatrix) {
    let mut out = Vec::new();
    mtx::write_general(&mut out, m).expect("write to a Vec");
    let back = mtx::read_matrix(Path::new("written.mtx"), &out)
        .unwrap_or_else(|e| panic!("a matrix that was read does not read back once written: {e}"));
    assert_eq!(
        (back.nrows(), back.ncols()),
        (m.nrows(), m.ncols()),
        "round trip: shape"
    );
    assert_eq!(back.col_ptr(), m.col_ptr(), "round trip: column pointers");
    assert_eq!(back.row_idx(), m.row_idx(), "round trip: row indices");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(back.values()), bits(m.values()), "round trip: values");
}

fn round_trip_vector(v: &[f64]) {
    let mut out = Vec::new();
    mtx::write_vector(&mut out, v).expect("write to a Vec");
    let back = mtx::read_vector(Path::new("written.mtx"), &out)
        .unwrap_or_else(|e| panic!("a vector that was read does not read back once written: {e}"));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(v), "round trip: vector");
}

fuzz_target!(|data: &[u8]| {
    as_bundle_file(data);
    in_memory(data);
});
