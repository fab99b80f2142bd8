//! The tests of `cpbench_problems::io::fclib` (until now its `#[cfg(test)]` module in
//! `problems/src/io/fclib/mod.rs`).

use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::error::ProblemError;
use cpbench_problems::instance::{Instance, Provenance, ValidationOptions};
use cpbench_problems::io::fclib::*;
use cpbench_problems::io::FclibInfo;
use cpbench_problems::linalg::CscMatrix;
use std::path::Path;

/// `nc` uncoupled contacts, `N = I`.
fn diagonal(nc: usize) -> Instance {
    let n = 3 * nc;
    Instance::new(
        "d",
        CscMatrix::identity(n),
        vec![-1.0; n],
        ConstraintSet::coulomb(vec![0.5; nc]),
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

#[test]
fn dataset_larger_than_the_file_is_refused_at_once() {
    // 2000 contacts: W/p holds 6001 int32 (24004 bytes), the whole file about 160 kB
    let inst = diagonal(2000);
    let bytes = write::fclib_local_bytes(&inst, &FclibInfo::default(), Path::new("x")).unwrap();
    let full = read_fclib(Path::new("full.hdf5"), &bytes).unwrap();
    assert_eq!(full.problem.q.len(), 6000);
    // truncated to 8000 bytes: the headers survive, W/p's data does not
    let cut = &bytes[..8000];
    let e = read_fclib(Path::new("cut.hdf5"), cut).unwrap_err();
    assert!(e.to_string().contains("truncated file"), "{e}");
    // behind the superblock's end-of-file check (which a file with a user block skips: here
    // 512 bytes before the cut file), the dataset's own declared size gives the truncation
    // away before anything is read
    let mut with_user_block = vec![0u8; 512];
    with_user_block.extend_from_slice(cut);
    let Err(e) = read_fclib(Path::new("cut.hdf5"), &with_user_block) else {
        panic!("a truncated file was read")
    };
    match &e {
        ProblemError::DatasetTooLarge {
            path,
            dataset,
            elements,
            declared_bytes,
            file_bytes,
        } => {
            assert_eq!(path, Path::new("cut.hdf5"));
            assert_eq!(dataset, "/fclib_local/W/p");
            assert_eq!(
                (*elements, *declared_bytes, *file_bytes),
                (6001, 24004, 8000)
            );
        }
        other => panic!("expected DatasetTooLarge, got {other:?}"),
    }
    assert_eq!(
        e.to_string(),
        "cut.hdf5: HDF5 dataset /fclib_local/W/p declares 24004 bytes of data (6001 \
         elements), more than the whole file (8000 bytes): truncated or corrupt file"
    );
}
