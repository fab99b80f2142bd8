//! The tests of `cpbench_problems::io::bundle` (until now its `#[cfg(test)]` module in
//! `problems/src/io/bundle.rs`).

use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::instance::ValidationOptions;
use cpbench_problems::io::bundle::*;
use cpbench_problems::ProblemClass;
use std::path::{Path, PathBuf};

/// Process id and a per-process counter, to make names unique.
fn unique_tag() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{k}", std::process::id())
}

/// A fresh empty directory under the system temp dir.
fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "cpbench-bundle-{tag}-{}-{}",
        std::process::id(),
        unique_tag()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 6 x 6 SPD `N` (tridiagonal 4, -1) in SciPy's symmetric layout (lower triangle, 16
/// stored entries: 6 diagonal + 5 below; 16 in full storage), `r = -1`.
fn hand_bundle(dir: &Path, json: &str) {
    let mut n = String::from("%%MatrixMarket matrix coordinate real symmetric\n%\n6 6 11\n");
    for i in 1..=6 {
        n.push_str(&format!("{i} {i} 4\n"));
        if i > 1 {
            n.push_str(&format!("{i} {} -1\n", i - 1));
        }
    }
    std::fs::write(dir.join("N.mtx"), n).unwrap();
    std::fs::write(
        dir.join("r.mtx"),
        "%%MatrixMarket matrix array real general\n%\n6 1\n-1\n-1\n-1\n-1\n-1\n-1\n",
    )
    .unwrap();
    std::fs::write(dir.join("instance.json"), json).unwrap();
}

fn err(dir: &Path) -> (Option<String>, String) {
    match read_bundle(dir, ValidationOptions::default()) {
        Err(e @ cpbench_problems::ProblemError::Parse { .. }) => {
            let msg = e.to_string();
            match e {
                cpbench_problems::ProblemError::Parse { location, .. } => (location, msg),
                _ => unreachable!(),
            }
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

/// Write `json` as the bundle's `instance.json`, read it: a parse error at `location`
/// whose message contains `fragment`. Returns the message.
fn refused(dir: &Path, json: &str, location: &str, fragment: &str) -> String {
    hand_bundle(dir, json);
    let (loc, msg) = err(dir);
    assert_eq!(loc.as_deref(), Some(location), "{msg}");
    assert!(msg.contains(fragment), "{msg}");
    msg
}

/// A matrix-free instance is written as `D.mtx`, `M_diag.mtx`, `r.mtx` and read back with
/// the same factors, hash and products; a wrong-length `M_diag.mtx` is a positioned error.
#[test]
fn matrix_free_bundle_round_trip() {
    use cpbench_problems::operator::OperatorKind;
    let a = super::random_matrix_free(12, 3);
    let dir = tmp("mf");
    write_bundle(&a, &dir).unwrap();
    assert!(dir.join("D.mtx").is_file() && !dir.join("N.mtx").exists());
    let b = read_bundle(&dir, ValidationOptions::default()).unwrap();
    assert_eq!(b.operator_kind(), OperatorKind::MatrixFree);
    assert_eq!(a.hash(), b.hash());
    let (oa, ob) = (a.matrix_free().unwrap(), b.matrix_free().unwrap());
    assert_eq!(oa.d().values(), ob.d().values());
    assert_eq!(ob.mass_diagonal(), oa.mass_diagonal());
    super::assert_same_products(&a, &b);
    std::fs::write(
        dir.join("M_diag.mtx"),
        "%%MatrixMarket matrix array real general\n2 1\n1.0\n2.0\n",
    )
    .unwrap();
    let e = read_bundle(&dir, ValidationOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("M_diag.mtx") && e.contains("M_diag.mtx has 2 entries but D.mtx is 12 x 9"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn minimal_json_infers_version_name_n_nnz() {
    let d = tmp("minimal").join("my_lcp");
    std::fs::create_dir_all(&d).unwrap();
    hand_bundle(&d, r#"{"class": "lcp"}"#);
    let inst = read_bundle(&d, ValidationOptions::default()).unwrap();
    assert_eq!(inst.name(), "my_lcp");
    assert_eq!(inst.n(), 6);
    assert_eq!(inst.n_mat().nnz(), 16);
    assert_eq!(inst.n_mat().get(0, 1), -1.0);
    assert_eq!(inst.n_mat().get(1, 0), -1.0);
    assert_eq!(inst.class(), ProblemClass::Lcp);
    assert_eq!(inst.provenance().format, "bundle");
    // the same with every count given correctly
    hand_bundle(
        &d,
        r#"{"format_version": 1, "name": "x", "class": "lcp", "n": 6, "nnz": 16}"#,
    );
    let again = read_bundle(&d, ValidationOptions::default()).unwrap();
    assert_eq!(again.name(), "x");
    assert_eq!(again.hash(), inst.hash());
    std::fs::remove_dir_all(d.parent().unwrap()).unwrap();
}

#[test]
fn scalar_mu_applies_to_every_contact() {
    let d = tmp("mu");
    hand_bundle(&d, r#"{"class": "ccp", "mu": 0.3}"#);
    let inst = read_bundle(&d, ValidationOptions::default()).unwrap();
    assert_eq!(inst.class(), ProblemClass::Ccp);
    match inst.constraints() {
        ConstraintSet::CoulombCones { mu, .. } => assert_eq!(mu, &vec![0.3, 0.3]),
        c => panic!("{c:?}"),
    }
    // a list must have one entry per contact, and says so
    refused(
        &d,
        r#"{"class": "ccp", "mu": [0.3, 0.3, 0.3]}"#,
        "mu",
        "instance.json: mu has 3 entries but the instance needs 2 (one per contact, n / 3)",
    );
    // coulomb too; a missing mu names the field
    refused(
        &d,
        r#"{"class": "coulomb"}"#,
        "mu",
        "class 'coulomb' needs the field 'mu'",
    );
    // box bounds may be scalars too; null means no bound
    hand_bundle(&d, r#"{"class": "box", "lo": 0, "hi": null}"#);
    let inst = read_bundle(&d, ValidationOptions::default()).unwrap();
    match inst.constraints() {
        ConstraintSet::Box { lo, hi } => {
            assert_eq!(lo, &vec![0.0; 6]);
            assert_eq!(hi, &vec![f64::INFINITY; 6]);
        }
        c => panic!("{c:?}"),
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Issue 30: an unknown field, a field of another class, a key twice: refused, named.
#[test]
fn fields_the_format_does_not_define_or_the_class_does_not_use_are_refused() {
    let d = tmp("strict");
    refused(
        &d,
        r#"{"class": "ccp", "muu": 0.3, "mu": 0.3}"#,
        "muu",
        "unknown field 'muu' (expected one of: format_version, name, class,",
    );
    refused(
        &d,
        r#"{"class": "lcp", "provenance": {"source": "x", "format": "y", "derivation": "z", "sede": 3}}"#,
        "provenance.sede",
        "unknown field 'provenance.sede'",
    );
    refused(&d, r#"{"class": "lcp", "mu": 0.3}"#, "mu", "the field 'mu' does not apply to class 'lcp' (its fields: none beyond n, nnz and the matrices)");
    refused(
        &d,
        r#"{"class": "ccp", "mu": 0.3, "hi": 1}"#,
        "hi",
        "does not apply to class 'ccp' (its fields: mu, cone_dim, joints)",
    );
    refused(
        &d,
        r#"{"class": "ccp", "mu": 0.3, "mu": 0.9}"#,
        "line 1, column 32",
        "the key \"mu\" is given twice",
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn wrong_counts_say_what_they_should_be() {
    let d = tmp("counts");
    let msg = refused(&d, r#"{"class": "lcp", "nnz": 11}"#, "nnz", "instance.json: nnz = 11 but N.mtx stores 16 entries (both triangles count; nnz should be 16, or omit it)");
    assert!(
        msg.starts_with(&d.join("instance.json").display().to_string()),
        "{msg}"
    );
    refused(&d, r#"{"class": "lcp", "n": 5}"#, "n", "instance.json: n = 5 but N.mtx is 6 x 6 and r.mtx has 6 entries (n should be 6, or omit it)");
    refused(
        &d,
        r#"{"class": "lcp", "format_version": 2}"#,
        "format_version",
        "unsupported bundle format_version 2",
    );
    // class is the one required field
    hand_bundle(&d, r#"{"name": "x"}"#);
    let (_, msg) = err(&d);
    assert!(
        msg.contains("missing field `class`") && msg.contains("docs/formats.md"),
        "{msg}"
    );
    refused(
        &d,
        r#"{"class": "qp"}"#,
        "class",
        "expected lcp, box, ccp, coulomb or blcp",
    );
    // N and r of different sizes: named in N.mtx
    hand_bundle(&d, r#"{"class": "ccp", "mu": 0.5}"#);
    std::fs::write(
        d.join("r.mtx"),
        "%%MatrixMarket matrix array real general\n5 1\n1\n1\n1\n1\n1\n",
    )
    .unwrap();
    let (_, msg) = err(&d);
    assert!(
        msg.contains("N.mtx is 6 x 6 but r.mtx has 5 entries"),
        "{msg}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// The bundle in `tests/fixtures/bundles/scipy_ccp/` was written by `scripts/write_bundle.py`
/// (the README's example) and committed unchanged: it must load as it is.
#[test]
fn scipy_written_bundle_loads() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/bundles/scipy_ccp");
    let text = std::fs::read_to_string(d.join("N.mtx")).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real symmetric"));
    let inst = read_bundle(&d, ValidationOptions::default()).unwrap();
    assert_eq!(inst.name(), "scipy_ccp");
    assert_eq!(inst.class(), ProblemClass::Ccp);
    assert_eq!(inst.n(), 6);
    assert_eq!(inst.n_mat().nnz(), 36);
    // values as SciPy wrote them, mirrored: line `2 1 2.9883299301680555E-1`
    assert_eq!(inst.n_mat().get(0, 1), 2.988_329_930_168_055_5e-1);
    assert_eq!(inst.n_mat().get(1, 0), 2.988_329_930_168_055_5e-1);
    assert_eq!(inst.n_mat().get(5, 5), 1.689_521_035_192_25e1);
    assert_eq!(inst.r()[0], -5.140_063_716_874_629e-1);
    match inst.constraints() {
        ConstraintSet::CoulombCones { mu, .. } => assert_eq!(mu, &vec![0.5, 0.5]),
        c => panic!("{c:?}"),
    }
    // written back by cpbench and read again: the same instance
    let out = tmp("scipy").join("again");
    write_bundle(&inst, &out).unwrap();
    let back = read_bundle(&out, ValidationOptions::default()).unwrap();
    assert_eq!(back.hash(), inst.hash());
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}
