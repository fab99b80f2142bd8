//! The planar stepper's direct block assembly (`PlanarSimulation::set_operator`): `N` written
//! straight into the 2x2 (1x1 frictionless) block storage equals the CSC path's `N` bit for
//! bit (structure, values, content hash, `r`), also from recycled storage and on 1 and 3
//! threads; the exports (`.npz`, bundle) are the same files; solvers make the same runs; the
//! automatic rule takes the block path from `BLOCK_MIN_NNZ` stored entries, as the 3-D
//! stepper does. Scenes: a hexagonal stack of touching discs on a floor, the disc hopper and
//! the bonded beam of the generator after a few solved steps.
//!
//! Bitwise, not to a tolerance: both paths compute every entry with the same expression
//! (`diag_block`, `coupling` in `planar/mod.rs`) and no entry is a sum of two contributions
//! that the CSC triplet assembly could add in another order (two contacts share at most one
//! disc), so any difference would be a bug.

use cpbench_granular::planar::{PlanarParams, PlanarSceneKind, PlanarSimulation};
use cpbench_granular::{ContactSolution, GranularError};
use cpbench_problems::instance::Instance;
use cpbench_problems::operator::BLOCK_MIN_NNZ;
use cpbench_problems::OperatorKind;
use cpbench_test_support::{rel_l2_diff, solve};

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A hexagonal stack of `base` touching unit discs on a floor (`base - k` discs in row `k`).
fn disc_stack(base: usize, frictionless: bool) -> PlanarSimulation {
    let params = PlanarParams {
        frictionless,
        ..Default::default()
    };
    cpbench_granular::planar::disc_stack(base, params).unwrap()
}

/// APGD to 1e-6 (at most 500 iterations) as the solver in the loop.
fn apgd(inst: &Instance, _warm: Option<&[f64]>) -> Result<ContactSolution, String> {
    Ok(ContactSolution {
        gamma: solve("apgd", inst, 1e-6, 500).gamma,
        ..Default::default()
    })
}

/// A generator scene after `steps` steps solved by APGD.
fn scene(kind: PlanarSceneKind, size: usize, steps: usize, frictionless: bool) -> PlanarSimulation {
    let mut s = kind
        .build(size, 3, frictionless)
        .unwrap()
        .into_simulation()
        .unwrap();
    let mut solver = apgd;
    for _ in 0..steps {
        s.step(&mut solver).unwrap();
    }
    s
}

/// The instance of the current state of `s` on the storage `kind` (nothing moves).
fn build(s: &mut PlanarSimulation, kind: Option<OperatorKind>) -> Instance {
    s.set_operator(kind).unwrap();
    s.build_instance().unwrap().unwrap().clone()
}

/// `block` (direct block assembly) holds `csc`'s matrix (CSC path) bit for bit: structure,
/// values, stored entries, content hash, `r` and the diagonal blocks.
fn check_same_matrix(what: &str, csc: &Instance, block: &Instance) {
    assert_eq!(csc.operator_kind(), OperatorKind::Csc, "{what}");
    assert_eq!(block.operator_kind(), OperatorKind::Block, "{what}");
    let bm = block.block_matrix().unwrap();
    assert_eq!(bm.block_size(), csc.constraints().block_size(), "{what}");
    let (a, back) = (csc.n_mat(), bm.to_csc().unwrap());
    assert_eq!(back.col_ptr(), a.col_ptr(), "{what}");
    assert_eq!(back.row_idx(), a.row_idx(), "{what}");
    assert_eq!(bits(back.values()), bits(a.values()), "{what}");
    assert_eq!(bm.full_nnz(), a.nnz(), "{what}");
    assert_eq!(block.hash(), csc.hash(), "{what}");
    assert_eq!(bits(block.r()), bits(csc.r()), "{what}");
    assert_eq!(block.name(), csc.name(), "{what}");
    assert_eq!(block.provenance(), csc.provenance(), "{what}");
    // the conversion of the CSC path (what `auto` did from 2M entries before) is the same
    // block storage, array for array
    let conv = csc.clone().with_operator(OperatorKind::Block).unwrap();
    let cm = conv.block_matrix().unwrap();
    assert_eq!(cm.cols(), bm.cols(), "{what}");
    assert_eq!(bits(cm.values()), bits(bm.values()), "{what}");
    for c in 0..csc.n_blocks() {
        assert_eq!(block.diag_block(c), csc.diag_block(c), "{what}: block {c}");
    }
}

/// Both paths on the current state of `s`, a second block build from the first one's
/// recycled storage, and `delassus_nnz` against the CSC count. Returns `(csc, block)`.
fn both(what: &str, s: &mut PlanarSimulation) -> (Instance, Instance) {
    let csc = build(s, Some(OperatorKind::Csc));
    assert_eq!(s.delassus_nnz(), csc.nnz(), "{what}");
    let block = build(s, Some(OperatorKind::Block));
    check_same_matrix(what, &csc, &block);
    // the next build reuses the storage of the previous block instance
    let again = build(s, Some(OperatorKind::Block));
    check_same_matrix(&format!("{what} (recycled)"), &csc, &again);
    // below BLOCK_MIN_NNZ the automatic rule keeps the CSC path, bit for bit
    let auto = build(s, None);
    assert_eq!(auto.operator_kind(), OperatorKind::Csc, "{what}");
    assert_eq!(bits(auto.n_mat().values()), bits(csc.n_mat().values()));
    assert_eq!(auto.hash(), csc.hash(), "{what}");
    (csc, block)
}

/// Disc stacks (frictional and frictionless), the disc hopper (walls, segments) and the
/// bonded beam (bonds, bonded pairs without contact, fixed supports) over several steps: the
/// direct block `N` is the CSC path's bit for bit at every step.
#[test]
fn planar_block_assembly_equals_the_csc_assembly() {
    for frictionless in [false, true] {
        let mut s = disc_stack(30, frictionless);
        let what = format!("disc stack, frictionless {frictionless}");
        let (csc, _) = both(&what, &mut s);
        assert!(csc.n_blocks() > 1000, "{what}: {}", csc.n_blocks());
    }
    for (kind, size, steps) in [
        (PlanarSceneKind::DiscHopper, 300, 40),
        (PlanarSceneKind::BeamImpact, 16, 30),
    ] {
        for frictionless in [false, true] {
            let mut s = scene(kind, size, 0, frictionless);
            let mut solver = apgd;
            let mut checked = 0;
            for step in 0..steps {
                if step % 10 == 9 {
                    s.build_instance().unwrap();
                    if !s.contacts().is_empty() {
                        both(&format!("{kind:?} step {step} fl {frictionless}"), &mut s);
                        checked += 1;
                    }
                    s.set_operator(None).unwrap();
                }
                s.step(&mut solver).unwrap();
            }
            assert!(checked >= 2, "{kind:?}: {checked} states with contacts");
        }
    }
}

/// A solver makes the same run on the direct block instance as on the CSC path's instance
/// converted to blocks (the `auto` storage of earlier versions from 2M entries): the same
/// iterations and impulses bit for bit, on the disc stack and the disc hopper; and on the
/// CSC instance itself (disc hopper; on the hyperstatic stack the impulses are not unique and
/// the runs part with the rounding) the same iterations and products, impulses within 1e-10
/// relative (products sum a row in another order).
#[test]
fn solvers_agree_on_the_direct_block_instance() {
    let mut stack = disc_stack(30, false);
    let mut hopper = scene(PlanarSceneKind::DiscHopper, 300, 40, false);
    for (what, s, vs_csc) in [("stack", &mut stack, false), ("hopper", &mut hopper, true)] {
        let (csc, block) = both(what, s);
        assert!(csc.n_blocks() > 50, "{what}: {} contacts", csc.n_blocks());
        let conv = csc.clone().with_operator(OperatorKind::Block).unwrap();
        for name in ["pgs", "apgd"] {
            let (a, b) = (
                solve(name, &block, 1e-6, 3000),
                solve(name, &conv, 1e-6, 3000),
            );
            assert_eq!(a.status, b.status, "{what} {name}");
            assert_eq!(a.iterations, b.iterations, "{what} {name}");
            assert_eq!(bits(&a.gamma), bits(&b.gamma), "{what} {name}");
            if vs_csc {
                let c = solve(name, &csc, 1e-6, 3000);
                assert_eq!(a.status, c.status, "{what} {name}");
                assert_eq!(a.iterations, c.iterations, "{what} {name}");
                assert_eq!(a.matvecs, c.matvecs, "{what} {name}");
                let d = rel_l2_diff(&a.gamma, &c.gamma);
                assert!(d < 1e-10, "{what} {name}: impulses differ by {d:e}");
            }
        }
    }
}

/// The exported files of the direct block instance are those of the CSC path's instance,
/// byte for byte (`.npz` and bundle: both write the CSC form), and read back with the same
/// content hash.
#[test]
fn exports_of_the_direct_block_instance_equal_the_csc_paths() {
    let mut s = disc_stack(12, false);
    let (csc, block) = both("disc stack", &mut s);
    let dir = std::env::temp_dir().join(format!("cpbench-planar-blocks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let read = |p: &std::path::Path| std::fs::read(p).unwrap();
    for (tag, inst) in [("csc", &csc), ("block", &block)] {
        cpbench_problems::io::npz::write_npz(inst, &dir.join(format!("{tag}.npz"))).unwrap();
        cpbench_problems::io::write_bundle(inst, &dir.join(tag)).unwrap();
    }
    assert_eq!(read(&dir.join("csc.npz")), read(&dir.join("block.npz")));
    let mut files: Vec<_> = std::fs::read_dir(dir.join("csc"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    for f in &files {
        assert_eq!(
            read(&dir.join("csc").join(f)),
            read(&dir.join("block").join(f)),
            "{f:?}"
        );
    }
    let opts = cpbench_problems::io::LoadOptions::default();
    let back = cpbench_problems::io::load(&dir.join("block.npz"), &opts).unwrap();
    assert_eq!(back.hash(), csc.hash());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The block path gives the same bits on 1 and 3 threads (more than one grain of 2048 rows).
#[test]
fn planar_block_assembly_does_not_depend_on_the_number_of_threads() {
    let run = |threads: usize| {
        cpbench_test_support::on_threads(threads, || {
            let mut s = disc_stack(60, false);
            let b = build(&mut s, Some(OperatorKind::Block));
            let m = b.block_matrix().unwrap();
            (m.n_block_rows(), m.cols().to_vec(), bits(m.values()))
        })
    };
    let (one, three) = (run(1), run(3));
    assert!(one.0 > 2 * 2048, "{} contacts: one grain", one.0);
    assert!(
        one == three,
        "the block storage differs between 1 and 3 threads"
    );
}

/// The automatic rule is the 3-D stepper's: a disc stack just over `BLOCK_MIN_NNZ` stored
/// entries takes the block path, with the entries and hash of the CSC path (whose instance
/// converts itself to the block storage at that size); one just under keeps CSC.
#[test]
fn auto_takes_the_block_path_from_block_min_nnz() {
    // nnz(N) of a stack of base b: 4 (nc + sum_d k_d (k_d - 1)), about 44 per contact
    let mut s = disc_stack(176, false);
    s.build_instance().unwrap();
    let nnz = s.delassus_nnz();
    assert!(nnz >= BLOCK_MIN_NNZ, "{nnz}");
    let auto = build(&mut s, None);
    assert_eq!(auto.operator_kind(), OperatorKind::Block);
    let csc = build(&mut s, Some(OperatorKind::Csc));
    // the CSC path's instance moved itself to the block storage (Instance::new's rule)
    assert_eq!(csc.operator_kind(), OperatorKind::Block);
    let (a, b) = (auto.block_matrix().unwrap(), csc.block_matrix().unwrap());
    assert_eq!(a.cols(), b.cols());
    assert_eq!(bits(a.values()), bits(b.values()));
    assert_eq!(a.full_nnz(), nnz);
    assert_eq!(auto.hash(), csc.hash());
    assert_eq!(bits(auto.r()), bits(csc.r()));
    let mut small = disc_stack(150, false);
    small.build_instance().unwrap();
    assert!(small.delassus_nnz() < BLOCK_MIN_NNZ);
    assert_eq!(build(&mut small, None).operator_kind(), OperatorKind::Csc);
}

/// The planar stepper does not build the matrix-free operator: a typed error, the setting
/// unchanged.
#[test]
fn matrix_free_is_refused() {
    let mut s = disc_stack(3, false);
    s.set_operator(Some(OperatorKind::Block)).unwrap();
    let e = s.set_operator(Some(OperatorKind::MatrixFree)).unwrap_err();
    assert!(
        matches!(
            e,
            GranularError::InvalidParameter {
                name: "operator",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(s.operator(), Some(OperatorKind::Block));
}

/// Peak resident memory of this process so far (`VmHWM`, bytes; 0 where `/proc` is missing).
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| 1024 * kb)
}

/// Not a check: times the planar assembly of the first-step CCP of a disc stack with
/// `CPBENCH_DISC_STACK_BASE` discs in its base row (default 260: 101,270 contacts, 4.4M
/// stored entries) on the storage `CPBENCH_PLANAR_OPERATOR` (`csc`: triplets, CSC, then the
/// instance's conversion to blocks, the path of earlier versions; `block`: the direct block
/// assembly; `auto`, the default: the rule), three builds (the first on fresh storage, the
/// others recycling the previous instance's), each then hashed; prints the times of
/// detection, of the build (detection, assembly, instance) and of the hash, and the peak
/// resident memory after the builds and after the hashes: the measurement of docs/scale.md.
/// One mode per process (the peak is the process's): `cargo test --release -p
/// cpbench-granular --test it time_planar_assembly -- --ignored --nocapture`.
#[test]
#[ignore = "times the planar assembly at 1e5 contacts; see its documentation"]
fn time_planar_assembly() {
    let base = std::env::var("CPBENCH_DISC_STACK_BASE").map_or(260, |b| b.parse().unwrap());
    let kind = match std::env::var("CPBENCH_PLANAR_OPERATOR").as_deref() {
        Ok("csc") => Some(OperatorKind::Csc),
        Ok("block") => Some(OperatorKind::Block),
        _ => None,
    };
    let mut s = disc_stack(base, false);
    s.set_operator(kind).unwrap();
    let rss0 = peak_rss();
    for k in 0..3 {
        let t = std::time::Instant::now();
        s.detect();
        let t_detect = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let inst = s.build_instance().unwrap().unwrap();
        let t_build = t.elapsed().as_secs_f64();
        let rss_build = peak_rss();
        let t = std::time::Instant::now();
        let hash = inst.hash().to_string();
        let t_hash = t.elapsed().as_secs_f64();
        eprintln!(
            "{kind:?} build {k}: {} contacts, {} stored entries, storage {}, detect {:.1} ms, \
             build {:.1} ms, hash {:.1} ms; peak RSS {:.0} MB before, {:.0} MB after the \
             build, {:.0} MB after the hash; hash {}",
            inst.n_blocks(),
            inst.nnz(),
            inst.operator_kind(),
            1e3 * t_detect,
            1e3 * t_build,
            1e3 * t_hash,
            rss0 as f64 / 1e6,
            rss_build as f64 / 1e6,
            peak_rss() as f64 / 1e6,
            &hash[..16.min(hash.len())]
        );
    }
}
