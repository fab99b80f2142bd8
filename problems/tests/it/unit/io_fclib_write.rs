//! The tests of `cpbench_problems::io::fclib::write` (until now its `#[cfg(test)]` module in
//! `problems/src/io/fclib/write.rs`).

use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::error::ProblemError;
use cpbench_problems::instance::Instance;
use cpbench_problems::instance::{Provenance, ValidationOptions};
use cpbench_problems::io::fclib::write::*;
use cpbench_problems::io::{load_bytes, Format, LoadOptions};
use cpbench_problems::linalg::CscMatrix;
use std::path::Path;

/// Two contacts, a symmetric 6 x 6 `N` with off-diagonal coupling.
fn two_contacts() -> Instance {
    let mut t = Vec::new();
    for k in 0..6 {
        t.push((k, k, 2.0 + k as f64 / 7.0));
    }
    for &(a, b, v) in &[(0usize, 3usize, 0.3), (1, 4, -0.1), (0, 2, 1.0 / 3.0)] {
        t.push((a, b, v));
        t.push((b, a, v));
    }
    let n = CscMatrix::from_triplets(6, 6, &t).unwrap();
    Instance::new(
        "two",
        n,
        vec![-1.0, 0.1, 0.2, -0.5, 1e-300, -3.0],
        ConstraintSet::coulomb(vec![0.5, 0.3]),
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

#[test]
fn round_trip_is_bit_exact() {
    let inst = two_contacts();
    let bytes = fclib_local_bytes(&inst, &FclibInfo::for_instance(&inst), Path::new("x")).unwrap();
    let back = load_bytes(
        "two.hdf5",
        &bytes,
        Format::FclibHdf5,
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(back.name(), "two__ccp");
    assert_eq!(back.hash(), inst.hash());
    assert_eq!(back.n_mat().get(0, 2), 1.0 / 3.0);
    assert_eq!(back.r()[4], 1e-300);
}

#[test]
fn lcp_is_refused() {
    let inst = two_contacts().normal_block_lcp().unwrap();
    let e = fclib_local_bytes(&inst, &FclibInfo::default(), Path::new("x")).unwrap_err();
    assert!(
        matches!(&e, ProblemError::WrongClass { found, .. } if found == "lcp"),
        "{e}"
    );
}

#[test]
fn info_strings_are_ascii_nullterm() {
    let inst = two_contacts();
    let info = FclibInfo {
        title: "Brémond".into(),
        ..Default::default()
    };
    let bytes = fclib_local_bytes(&inst, &info, Path::new("x")).unwrap();
    let f = hdf5_pure::File::from_bytes(bytes).unwrap();
    let ds = f.dataset("fclib_local/info/title").unwrap();
    assert_eq!(ds.read_string().unwrap(), ["Br?mond"]);
    assert_eq!(ds.shape().unwrap(), Vec::<u64>::new());
    let ds = f.dataset("fclib_local/info/math_info").unwrap();
    assert_eq!(ds.read_string().unwrap(), [""]);
}
