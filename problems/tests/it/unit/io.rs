//! The tests of `cpbench_problems::io` (until now its `#[cfg(test)]` module in
//! `problems/src/io/mod.rs`).

use cpbench_problems::error::ProblemError;
use cpbench_problems::io::*;
use std::path::Path;

#[test]
fn stems() {
    assert_eq!(file_stem(Path::new("a/Rover4396.dat")), "Rover4396");
    assert_eq!(
        file_stem(Path::new("BoxesStack1-i100000-32.hdf5.dat")),
        "BoxesStack1-i100000-32.hdf5"
    );
    assert_eq!(file_stem(Path::new("noext")), "noext");
    assert_eq!(file_stem(Path::new("")), "instance");
}

/// The HDF5 file signature (found at offset 0, or at 512, 1024, ... after a user block).
const HDF5_MAGIC: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Whether the content detection finds the HDF5 signature in `bytes` (fclib HDF5).
fn has_hdf5_magic(bytes: &[u8]) -> bool {
    detect_format_bytes(bytes) == Some(Format::FclibHdf5)
}

#[test]
fn hdf5_magic_offsets() {
    let mut b = vec![0u8; 1100];
    assert!(!has_hdf5_magic(&b));
    b[1024..1032].copy_from_slice(HDF5_MAGIC);
    assert!(has_hdf5_magic(&b));
    assert!(has_hdf5_magic(HDF5_MAGIC));
    assert!(!has_hdf5_magic(b"\x89HD"));
}

#[test]
fn detect_text() {
    assert_eq!(
        detect_format_bytes(b"2\n0\n2\n2\n2 2\n1 0 0 1\n-1 -1\n"),
        Some(Format::SiconosLcp)
    );
    assert_eq!(
        detect_format_bytes(b"3\n1\n0\n3\n3\n3 3\n"),
        Some(Format::SiconosFc3d)
    );
    assert_eq!(detect_format_bytes(b"hello world"), None);
    assert_eq!(detect_format_bytes(b""), None);
}

#[test]
fn header_defects_are_not_unknown_formats() {
    let dir = std::env::temp_dir().join(format!("cpbench-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text, needle) in [
        ("d.dat", &b"4 2 0 8 8\n"[..], "space dimension d = 4"),
        (
            "nc.dat",
            b"3 -2 0 -6 -6\n",
            "negative number of contacts -2",
        ),
        ("size.dat", b"3 2 0 5 5\n", "W is 5 x 5"),
        ("storage.dat", b"3 2 7 6 6\n", "storage type '7'"),
        (
            "big.dat",
            b"3 9 0 27 27\n27 27\n1\n",
            "at least 765 numbers",
        ),
    ] {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        let e = load(&f, &LoadOptions::default()).unwrap_err();
        assert!(matches!(e, ProblemError::Parse { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(needle) && msg.contains(name), "{msg}");
        assert!(msg.contains("(at line 1, token"), "{msg}");
    }
    let f = dir.join("m.mtx");
    std::fs::write(
        &f,
        "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n",
    )
    .unwrap();
    let msg = load(&f, &LoadOptions::default()).unwrap_err().to_string();
    assert!(msg.contains("holds one matrix, not an instance"), "{msg}");
    let _ = std::fs::remove_dir_all(&dir);
    if Path::new("/dev/zero").exists() {
        let e = load(Path::new("/dev/zero"), &LoadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(detect_format(Path::new("/dev/zero")).is_err());
    }
}

#[test]
fn bundle_format_rejected_by_load_bytes() {
    let e = load_bytes("x", b"", Format::Bundle, &LoadOptions::default()).unwrap_err();
    assert!(matches!(e, ProblemError::UnknownFormat { .. }));
}
