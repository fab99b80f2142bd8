//! The binary `.npz` instance through the CLI: `convert` writes it, `info` and `run` read it
//! with the same content hash as the source, `generate --format npz` exports steps that a
//! folder sweep runs.

use cpbench_test_support::{fixture, succeed};

use crate::support::{cpbench, stdout_of, summary_rows};

#[test]
fn convert_generate_and_run_npz() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("rover.npz");
    let src = fixture("siconos-fc3d/Rover4396.dat");
    succeed(cpbench("convert").arg(&src).arg(&npz).arg("--symmetrize"));
    let hash = |p: &std::path::Path, sym: bool| -> String {
        let mut c = cpbench("info");
        c.arg(p);
        if sym {
            c.arg("--symmetrize");
        }
        let out = stdout_of(&mut c);
        out.lines()
            .find(|l| l.starts_with("hash"))
            .unwrap_or_else(|| panic!("no hash line in {out}"))
            .to_string()
    };
    assert_eq!(hash(&src, true), hash(&npz, false));

    let gen = dir.path().join("gen");
    succeed(
        cpbench("generate --scene fill --size 2 --steps 40 --export-every 20 --format npz --out")
            .arg(&gen),
    );
    assert!(gen.join("fill-2_step0040__ccp.npz").exists());
    let out = dir.path().join("res");
    succeed(
        cpbench("run --no-plots --solvers apgd --instances")
            .arg(&gen)
            .arg(&npz)
            .arg("--out")
            .arg(&out),
    );
    let rows = summary_rows(&out);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.success), "{rows:?}");
    assert!(rows.iter().any(|r| r.instance == "Rover4396__ccp"));
}
