//! File stems of instances (`cpbench_harness::names`): full names, unique stems.

use cpbench_harness::names::{instance_stem, FileStems};

#[test]
fn full_names_and_unique_stems() {
    // dots are kept: the ccp and lcp readings of one file stay apart
    let s = FileStems::new([
        ("BoxesStack1-i100000-32.hdf5__ccp", "h1"),
        ("BoxesStack1-i100000-32.hdf5__lcp", "h2"),
        ("a/x", "h3"),
        ("a_x", "h4"),
        ("box", "h5"),
        ("box", "h6"),
        ("box", "h6"),
        ("Case", "h7"),
        ("case", "h8"),
    ]);
    assert_eq!(
        s.stem("BoxesStack1-i100000-32.hdf5__ccp", "h1"),
        "BoxesStack1-i100000-32.hdf5__ccp"
    );
    assert_eq!(
        s.stem("BoxesStack1-i100000-32.hdf5__lcp", "h2"),
        "BoxesStack1-i100000-32.hdf5__lcp"
    );
    let ax = s.stem("a/x", "h3");
    assert!(ax.starts_with("a_x-") && ax.len() == 12, "{ax}");
    assert_eq!(s.stem("a_x", "h4"), "a_x");
    let (b5, b6) = (s.stem("box", "h5"), s.stem("box", "h6"));
    assert!(
        b5.starts_with("box-") && b6.starts_with("box-") && b5 != b6,
        "{b5} {b6}"
    );
    let (c7, c8) = (s.stem("Case", "h7"), s.stem("case", "h8"));
    assert_ne!(c7.to_lowercase(), c8.to_lowercase());
    // unknown instances get the plain rule; the suffix is deterministic
    assert_eq!(s.stem("zzz", "h9"), "zzz");
    assert_eq!(instance_stem("a/x", "h3", false), ax);
    assert_eq!(instance_stem("", "h", false).len(), 9);
}
