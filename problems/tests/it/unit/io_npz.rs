//! The tests of `cpbench_problems::io::npz` (until now its `#[cfg(test)]` module in
//! `problems/src/io/npz.rs`).

use cpbench_problems::instance::ValidationOptions;
use cpbench_problems::io::npz::*;
use cpbench_problems::io::{load, ClassChoice, LoadOptions};
use std::io::{Read, Write};
use std::path::Path;

fn fixture(p: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(p)
}

/// Every class written and read back is the same instance, bit for bit (content hash),
/// through the format-detecting `load` too.
#[test]
fn round_trip_is_bit_exact() {
    let dir = tempfile::tempdir().unwrap();
    let opts = LoadOptions {
        validation: ValidationOptions {
            symmetrize: true,
            ..Default::default()
        },
        ..Default::default()
    };
    for f in [
        "siconos-fc3d/Rover4396.dat",
        "lcp/lcp_mmc.dat",
        "fclib/Spheres-i099-356-679.hdf5",
    ] {
        let a = load(&fixture(f), &opts).unwrap();
        let p = dir.path().join(format!("{}.npz", a.name()));
        write_npz(&a, &p).unwrap();
        let b = read_npz(&p, ValidationOptions::default()).unwrap();
        assert_eq!(a.hash(), b.hash(), "{f}");
        assert_eq!(a.name(), b.name());
        assert_eq!(a.n_mat().values(), b.n_mat().values());
        assert_eq!(a.r(), b.r());
        let c = load(&p, &LoadOptions::default()).unwrap();
        assert_eq!(c.hash(), a.hash());
    }
}

/// A matrix-free instance (`D`, `M`) is written as its factors and read back bit for
/// bit: same `D`, `M`, `r`, content hash and products; `N` is never formed.
#[test]
fn matrix_free_round_trip_is_bit_exact() {
    use cpbench_problems::operator::OperatorKind;
    let a = super::random_matrix_free(18, 5);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mf.npz");
    write_npz(&a, &p).unwrap();
    let b = read_npz(&p, ValidationOptions::default()).unwrap();
    assert_eq!(b.operator_kind(), OperatorKind::MatrixFree);
    let (oa, ob) = (a.matrix_free().unwrap(), b.matrix_free().unwrap());
    assert_eq!(oa.d().col_ptr(), ob.d().col_ptr());
    assert_eq!(oa.d().row_idx(), ob.d().row_idx());
    assert_eq!(oa.d().values(), ob.d().values());
    assert_eq!(ob.mass_diagonal(), oa.mass_diagonal());
    assert_eq!(oa.mass_inverse(), ob.mass_inverse());
    assert_eq!(a.r(), b.r());
    assert_eq!(a.hash(), b.hash());
    assert_eq!(a.name(), b.name());
    super::assert_same_products(&a, &b);
    let c = load(&p, &LoadOptions::default()).unwrap();
    assert_eq!(c.hash(), a.hash());
    // the members are D's and M's, not N's
    let zip = zip::ZipArchive::new(std::fs::File::open(&p).unwrap()).unwrap();
    let mut names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "D_data.npy",
            "D_indices.npy",
            "D_indptr.npy",
            "D_shape.npy",
            "M_diag.npy",
            "instance.npy",
            "r.npy"
        ]
    );
    // a broken D is a positioned error
    let mut bad = Vec::new();
    std::fs::File::open(&p)
        .unwrap()
        .read_to_end(&mut bad)
        .unwrap();
    let e = read_npz_from(
        std::io::Cursor::new(rewrite_member(&bad, "M_diag.npy", &|w| {
            write_array(w, &[2], [1.0f64, 2.0]).unwrap()
        })),
        &p,
        ValidationOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("array 'M_diag'") && e.contains("m = 18"), "{e}");
    // a header declaring more values than the member holds is refused before allocating
    let e = read_npz_from(
        std::io::Cursor::new(rewrite_member(&bad, "r.npy", &|w| {
            let mut h =
                "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }".to_string();
            while (10 + h.len() + 1) % 64 != 0 {
                h.push(' ');
            }
            h.push('\n');
            w.write_all(b"\x93NUMPY\x01\x00").unwrap();
            w.write_all(&(h.len() as u16).to_le_bytes()).unwrap();
            w.write_all(h.as_bytes()).unwrap();
            w.write_all(&[0u8; 16]).unwrap();
        })),
        &p,
        ValidationOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("array 'r'") && e.contains("declares 1000000000000 values"),
        "{e}"
    );
}

/// An archive being written in memory.
type MemZip = zip::ZipWriter<std::io::Cursor<Vec<u8>>>;

/// The archive `bytes` with member `name` rewritten by `f`.
fn rewrite_member(bytes: &[u8], name: &str, f: &dyn Fn(&mut MemZip)) -> Vec<u8> {
    let mut src = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..src.len() {
        let mut m = src.by_index(i).unwrap();
        let n = m.name().unwrap().to_string();
        w.start_file(n.clone(), opts).unwrap();
        if n == name {
            f(&mut w);
        } else {
            let mut b = Vec::new();
            m.read_to_end(&mut b).unwrap();
            w.write_all(&b).unwrap();
        }
    }
    w.finish().unwrap().into_inner()
}

/// Broken arrays give positioned errors naming the file and the array.
#[test]
fn bad_arrays_are_positioned_errors() {
    let dir = tempfile::tempdir().unwrap();
    let a = load(&fixture("lcp/lcp_mmc.dat"), &LoadOptions::default()).unwrap();
    let good = dir.path().join("good.npz");
    write_npz(&a, &good).unwrap();
    // rewrite one member of the archive
    let good = std::fs::read(&good).unwrap();
    let rewrite = |key: &str, f: &dyn Fn(&mut MemZip)| {
        let p = dir.path().join(format!("bad-{key}.npz"));
        std::fs::write(&p, rewrite_member(&good, &format!("{key}.npy"), f)).unwrap();
        read_npz(&p, ValidationOptions::default())
            .unwrap_err()
            .to_string()
    };
    let nnz = a.n_mat().nnz();
    let mut idx: Vec<i32> = a.n_mat().row_idx().iter().map(|&x| x as i32).collect();
    idx[5] = 10_000;
    let e = rewrite("indices", &|w| {
        write_array(w, &[nnz as u64], idx.iter().copied()).unwrap()
    });
    assert!(
        e.contains("bad-indices.npz") && e.contains("array 'indices', index 5"),
        "{e}"
    );
    let e = rewrite("r", &|w| write_array(w, &[3], [1.0f64, 2.0, 3.0]).unwrap());
    assert!(
        e.contains("array 'r'") && e.contains("r has 3 entries"),
        "{e}"
    );
    let e = rewrite("data", &|w| {
        write_array(w, &[nnz as u64], (0..nnz).map(|k| k as i32)).unwrap()
    });
    assert!(e.contains("array 'data'") && e.contains("dtype"), "{e}");
    let e = rewrite("instance", &|w| write_array(w, &[3], *b"{x}").unwrap());
    assert!(e.contains("line 1, column 2"), "{e}");
    let e = rewrite("format", &|w| write_bytes_scalar(w, *b"coo").unwrap());
    assert!(e.contains("stored as 'coo'"), "{e}");
}

/// A directory that claims more bytes for a member than the archive holds (a forged
/// size) is refused before anything is allocated from it.
#[test]
fn a_forged_member_size_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.npz");
    let inst =
        cpbench_problems::io::load(&fixture("lcp/lcp_mmc.dat"), &Default::default()).unwrap();
    write_npz(&inst, &p).unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    // the central directory entry of data.npy: signature, then the name at offset 46;
    // its uncompressed size (offset 24) becomes 3.9 GiB
    let sig = b"PK\x01\x02";
    let at = (0..bytes.len() - 54)
        .find(|&k| &bytes[k..k + 4] == sig && &bytes[k + 46..k + 54] == b"data.npy")
        .expect("the directory entry of data.npy");
    bytes[at + 24..at + 28].copy_from_slice(&0xF000_0000u32.to_le_bytes());
    std::fs::write(&p, &bytes).unwrap();
    let e = read_npz(&p, ValidationOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("array 'data'")
            && e.contains("the ZIP directory claims 4026531840 bytes for data.npy")
            && e.contains("a damaged or forged archive"),
        "{e}"
    );
}

/// Issue 30: an empty archive was "unrecognised format" with a list that omitted `.npz`;
/// a member whose data is shorter than its header declares gave "failed to fill whole
/// buffer" and a hint about compression; dtypes were printed in Rust's debug form.
#[test]
fn empty_archives_and_short_members_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.npz");
    let mut eocd = b"PK\x05\x06".to_vec();
    eocd.resize(22, 0);
    std::fs::write(&empty, &eocd).unwrap();
    let e = cpbench_problems::io::load(&empty, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("the archive is empty (an instance .npz holds format, shape, indptr, indices, data, r and instance; see docs/formats.md) (at ZIP directory)"),
        "{e}"
    );
    // the same archive with two values cut from r's data
    let whole = dir.path().join("whole.npz");
    let inst =
        cpbench_problems::io::load(&fixture("lcp/lcp_mmc.dat"), &Default::default()).unwrap();
    write_npz(&inst, &whole).unwrap();
    let mut src = zip::ZipArchive::new(std::fs::File::open(&whole).unwrap()).unwrap();
    let short = dir.path().join("short.npz");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&short).unwrap());
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for k in 0..src.len() {
        let mut f = src.by_index(k).unwrap();
        let name = f.name().unwrap().to_string();
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut b).unwrap();
        if name == "r.npy" {
            b.truncate(b.len() - 16);
        }
        w.start_file(name, opts).unwrap();
        std::io::Write::write_all(&mut w, &b).unwrap();
    }
    w.finish().unwrap();
    let e = read_npz(&short, ValidationOptions::default())
        .unwrap_err()
        .to_string();
    let n = inst.n();
    assert!(
        e.contains(&format!(
            "the .npy header declares {n} values of dtype '<f8' ({} bytes), but the member \
             holds {} bytes of data (a truncated or damaged member) (at array 'r')",
            8 * n,
            8 * n - 16
        )),
        "{e}"
    );
}

/// An archive of ContactBench's layout: `G` of `g_shape`, `g` of `q_shape`, `mus` of `nc`
/// values (all 1, except `G`'s diagonal 2 and `g`'s entries their row index).
fn contactbench_file(g_shape: &[u64], q_shape: &[u64], nc: usize) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let len = |s: &[u64]| s.iter().product::<u64>() as usize;
    let cols = *g_shape.last().unwrap() as usize;
    w.start_file("G.npy", opts).unwrap();
    let g: Vec<f64> = (0..len(g_shape))
        .map(|k| if k / cols == k % cols { 2.0 } else { 0.0 })
        .collect();
    cpbench_problems::io::npz::write_array(&mut w, g_shape, g).unwrap();
    w.start_file("g.npy", opts).unwrap();
    cpbench_problems::io::npz::write_array(&mut w, q_shape, (0..len(q_shape)).map(|i| i as f64))
        .unwrap();
    w.start_file("mus.npy", opts).unwrap();
    cpbench_problems::io::npz::write_array(&mut w, &[nc as u64], vec![1.0; nc]).unwrap();
    w.finish().unwrap().into_inner()
}

/// ContactBench's `.npz` layout: read with the normal first (rows and columns permuted), the
/// class chosen as for fc3d files; shapes that disagree are errors naming the file and array.
#[test]
fn contactbench_files_are_read_normal_first_and_bad_shapes_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("cb.npz");
    std::fs::write(&p, contactbench_file(&[6, 6], &[6, 1], 2)).unwrap();
    let inst = load(&p, &LoadOptions::default()).unwrap();
    assert_eq!(inst.class().as_str(), "ccp");
    assert_eq!(inst.provenance().format, "contactbench");
    // g's entries are their ContactBench row: ours 3c is its 3c + 2
    assert_eq!(inst.r(), [2.0, 0.0, 1.0, 5.0, 3.0, 4.0]);
    let coulomb = load(
        &p,
        &LoadOptions {
            class: ClassChoice::Coulomb,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert_eq!(coulomb.class().as_str(), "coulomb");
    for (g, q, nc, needle) in [
        (&[6u64, 5][..], &[6u64][..], 2, "array 'G'"),
        (&[6, 6], &[6], 3, "mus has 3 contacts"),
        (&[6, 6], &[5, 1], 2, "array 'g'"),
        (&[6, 6], &[6, 2], 2, "expected shape (6,) or (6, 1)"),
    ] {
        std::fs::write(&p, contactbench_file(g, q, nc)).unwrap();
        let e = load(&p, &LoadOptions::default()).unwrap_err().to_string();
        assert!(e.contains("cb.npz") && e.contains(needle), "{needle}: {e}");
    }
}
