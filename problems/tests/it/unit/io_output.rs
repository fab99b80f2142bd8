//! The tests of `cpbench_problems::io::output` (until now its `#[cfg(test)]` module in
//! `problems/src/io/output.rs`).

use cpbench_problems::io::output::*;
use std::path::Path;

#[test]
fn names_paths_and_parsing_agree() {
    for (f, n) in OutputFormat::ALL.into_iter().zip(OutputFormat::NAMES) {
        assert_eq!(f.as_str(), n);
        assert_eq!(OutputFormat::parse(n).unwrap(), f);
    }
    assert_eq!(OutputFormat::parse("hdf5").unwrap(), OutputFormat::Fclib);
    assert_eq!(
        OutputFormat::parse("mtx").unwrap_err().to_string(),
        "unknown output format 'mtx' (expected one of bundle, fclib, npz)"
    );
    let p = |s: &str| OutputFormat::from_path(Path::new(s));
    assert_eq!(p("a/b.H5"), OutputFormat::Fclib);
    assert_eq!(p("b.hdf5"), OutputFormat::Fclib);
    assert_eq!(p("b.NPZ"), OutputFormat::Npz);
    assert_eq!(p("out/bundle"), OutputFormat::Bundle);
    assert_eq!(p("x.dat"), OutputFormat::Bundle);
}
