//! Planar (2-D cone) instances on the symmetric block storage with 2x2 blocks: the same
//! entries and content hash as CSC (bit for bit), the same products up to rounding, the same
//! iterations and residuals of the solvers that take 2-D problems, and the automatic choice
//! moving a large 2-D instance to the block storage. Instances: a hexagonal stack of touching
//! discs on a floor (the planar stepper's first step), the disc hopper of the generator after
//! a few steps, and the fc2d fixture files read as CCP and as Coulomb problems.

use cpbench_granular::planar::{PlanarParams, PlanarSceneKind};
use cpbench_harness::generate::RegistrySolver;
use cpbench_problems::io::{load, ClassChoice, LoadOptions};
use cpbench_problems::operator::BLOCK_MIN_NNZ;
use cpbench_problems::{
    ConstraintSet, CscMatrix, Instance, OperatorKind, Provenance, ValidationOptions,
};
use cpbench_solvers::{ExecSettings, SolveResult};
use cpbench_test_support::{fixture, rel_l2_diff, solve_with};

/// The first-step CCP of a hexagonal stack of `base` touching unit discs (base row on a
/// floor, `base - k` discs in row `k`): every disc touches its neighbours.
fn disc_stack(base: usize) -> Instance {
    let mut s = cpbench_granular::planar::disc_stack(base, PlanarParams::default()).unwrap();
    s.build_instance().unwrap().unwrap().clone()
}

/// The disc hopper of the generator (`size` discs, seed 3) after `steps` steps solved by APGD;
/// its last assembled instance.
fn disc_hopper(size: usize, steps: usize) -> Instance {
    let mut s = PlanarSceneKind::DiscHopper
        .build(size, 3, false)
        .unwrap()
        .into_simulation()
        .unwrap();
    let exec = ExecSettings {
        tol: 1e-6,
        max_iter: 2000,
        ..Default::default()
    };
    let mut solver = RegistrySolver::new("apgd", None, exec).unwrap();
    for _ in 0..steps {
        s.step(&mut solver).unwrap();
    }
    s.build_instance().unwrap().unwrap().clone()
}

/// A fc2d fixture file read as `class` (the CCP symmetrised, the Coulomb problem as read).
fn fc2d(rel: &str, class: ClassChoice) -> Instance {
    let mut opts = LoadOptions {
        class,
        ..LoadOptions::default()
    };
    opts.validation.symmetrize = class != ClassChoice::Coulomb;
    load(&fixture(rel), &opts).unwrap()
}

/// The instance on the block storage, checked to hold the same matrix as the CSC one.
fn on_blocks(csc: &Instance) -> Instance {
    assert_eq!(csc.operator_kind(), OperatorKind::Csc);
    assert_eq!(csc.constraints().block_size(), 2);
    let block = csc.clone().with_operator(OperatorKind::Block).unwrap();
    assert_eq!(block.operator_kind(), OperatorKind::Block);
    assert_eq!(block.block_matrix().unwrap().block_size(), 2);
    // the exact round trip: same entries, same content hash
    assert_eq!(block.hash(), csc.hash());
    assert_eq!(block.nnz(), csc.nnz());
    let back = block.clone().with_operator(OperatorKind::Csc).unwrap();
    assert_eq!(back.n_mat().col_ptr(), csc.n_mat().col_ptr());
    assert_eq!(back.n_mat().row_idx(), csc.n_mat().row_idx());
    assert_eq!(back.n_mat().values(), csc.n_mat().values());
    // diagonal blocks bit for bit
    for c in 0..csc.n_blocks() {
        assert_eq!(block.diag_block(c), csc.diag_block(c), "block {c}");
    }
    block
}

/// Products agree to rounding (the block storage sums a row in another order than CSC).
fn check_products(csc: &Instance, block: &Instance) {
    let n = csc.n();
    let x: Vec<f64> = (0..n).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
    let (mut y0, mut y1) = (vec![0.0; n], vec![0.0; n]);
    csc.matvec(&x, &mut y0);
    block.matvec(&x, &mut y1);
    let d = rel_l2_diff(&y0, &y1);
    assert!(d < 1e-14, "{}: product {d:.2e}", csc.name());
}

/// `name` from zero to `tol` within `max_iter` iterations.
fn run(name: &str, inst: &Instance, tol: f64, max_iter: u64) -> SolveResult {
    let exec = ExecSettings {
        tol,
        max_iter,
        ..Default::default()
    };
    solve_with(name, inst, exec)
}

/// Every solver of `names` makes the same run on both storages to `tol`: the same status,
/// iterations and products, iterates within 1e-10 relative, and the relative residuals
/// (natural map, projected gradient) within 1e-12 of each other.
fn check_same_runs(csc: &Instance, block: &Instance, names: &[&str], tol: f64, max_iter: u64) {
    for &name in names {
        let (a, b) = (
            run(name, csc, tol, max_iter),
            run(name, block, tol, max_iter),
        );
        let what = format!("{name} on {}", csc.name());
        assert_eq!(a.status, b.status, "{what}");
        assert_eq!(a.iterations, b.iterations, "{what}");
        assert_eq!(a.matvecs, b.matvecs, "{what}");
        let d = rel_l2_diff(&a.gamma, &b.gamma);
        assert!(d <= 1e-10, "{what}: iterates differ by {d:.2e}");
        let (ra, rb) = (&a.residuals, &b.residuals);
        for (x, y) in [
            (ra.nat_map_rel_2, rb.nat_map_rel_2),
            (ra.proj_grad_rel, rb.proj_grad_rel),
        ] {
            assert!((x - y).abs() <= 1e-12, "{what}: residual {x:e} vs {y:e}");
        }
    }
}

/// The first `iters` iterations of every solver of `names` on both storages: the same
/// products, iterates within `iterate_tol` relative and the relative residuals within 1e-12.
/// For the runs whose path rounding changes (a hyperstatic stack with non-unique impulses,
/// SPG-QP's non-monotone line search): over a short run they agree as closely as the products.
fn check_same_prefix(csc: &Instance, block: &Instance, names: &[&str], iters: u64) {
    for &name in names {
        let (a, b) = (
            run(name, csc, 1e-300, iters),
            run(name, block, 1e-300, iters),
        );
        let what = format!("{name} on {} ({iters} iterations)", csc.name());
        assert_eq!(
            (a.iterations, a.matvecs),
            (b.iterations, b.matvecs),
            "{what}"
        );
        let d = rel_l2_diff(&a.gamma, &b.gamma);
        assert!(d <= 1e-12, "{what}: iterates differ by {d:.2e}");
        let (x, y) = (a.residuals.nat_map_rel_2, b.residuals.nat_map_rel_2);
        assert!((x - y).abs() <= 1e-12, "{what}: residual {x:e} vs {y:e}");
    }
}

/// The solvers of the 2-D CCP that read `N` through the storage (products or block rows).
const CCP_SOLVERS: [&str; 4] = ["pgs", "apgd", "spgqp", "admm"];

#[test]
fn disc_stack_on_2x2_blocks_agrees_with_csc() {
    let csc = disc_stack(30);
    assert!(csc.n_blocks() > 1000, "{} contacts", csc.n_blocks());
    let block = on_blocks(&csc);
    check_products(&csc, &block);
    // hyperstatic (impulses not unique): longer runs drift apart by rounding, as on any two
    // summation orders
    check_same_prefix(&csc, &block, &CCP_SOLVERS, 30);
    check_same_runs(&csc, &block, &["pgs", "admm"], 1e-6, 3000);
    // NSGS on the Coulomb problem of the same data
    let cou = |i: &Instance| i.clone().into_coulomb().unwrap();
    check_same_prefix(&cou(&csc), &cou(&block), &["nsgs"], 30);
}

#[test]
fn disc_hopper_on_2x2_blocks_agrees_with_csc() {
    let csc = disc_hopper(200, 100);
    assert!(csc.n_blocks() > 400, "{} contacts", csc.n_blocks());
    let block = on_blocks(&csc);
    check_products(&csc, &block);
    check_same_runs(&csc, &block, &["pgs", "apgd", "admm"], 1e-6, 3000);
    check_same_prefix(&csc, &block, &["spgqp"], 30);
    let cou = |i: &Instance| i.clone().into_coulomb().unwrap();
    check_same_runs(&cou(&csc), &cou(&block), &["nsgs"], 1e-6, 3000);
}

#[test]
fn fc2d_files_on_2x2_blocks_agree_with_csc() {
    for rel in [
        "fc2d/fc2d_granularflowonwall_00667_00000.dat",
        "fc2d/fc2d_granularflowonwall_02020_00213.dat",
    ] {
        let csc = fc2d(rel, ClassChoice::Ccp);
        let block = on_blocks(&csc);
        check_products(&csc, &block);
        check_same_runs(&csc, &block, &["pgs", "apgd", "admm"], 1e-6, 5000);
        check_same_prefix(&csc, &block, &["spgqp"], 30);
        // the Coulomb problem as read (W symmetric in these files)
        let cou = fc2d(rel, ClassChoice::Coulomb);
        assert!(cou.is_symmetric(), "{rel}");
        let block = on_blocks(&cou);
        check_same_runs(&cou, &block, &["nsgs"], 1e-6, 5000);
    }
}

#[test]
fn auto_moves_large_2d_instances_to_2x2_blocks() {
    // 2x2 diagonal blocks only: 4 entries per contact, just at the threshold
    let nc = BLOCK_MIN_NNZ / 4;
    let mut t = Vec::with_capacity(4 * nc);
    for c in 0..nc {
        t.extend([
            (2 * c, 2 * c, 2.0),
            (2 * c + 1, 2 * c + 1, 1.0),
            (2 * c, 2 * c + 1, 0.5),
            (2 * c + 1, 2 * c, 0.5),
        ]);
    }
    let m = CscMatrix::from_triplets(2 * nc, 2 * nc, &t).unwrap();
    let r: Vec<f64> = (0..2 * nc)
        .map(|i| if i % 2 == 0 { -1.0 } else { 0.3 })
        .collect();
    let k = ConstraintSet::coulomb_dim(vec![0.5; nc], 2);
    let make = |m: CscMatrix| {
        Instance::new(
            "diag2",
            m,
            r.clone(),
            k.clone(),
            Provenance::default(),
            ValidationOptions::default(),
        )
        .unwrap()
    };
    let inst = make(m.clone());
    assert_eq!(inst.operator_kind(), OperatorKind::Block);
    assert_eq!(inst.block_matrix().unwrap().block_size(), 2);
    // 36 bytes per block and 8 per row pointer, against 16 per CSC entry and the pointers
    assert_eq!(inst.operator_bytes(), (36 * nc + 8 * (nc + 1)) as u64);
    // one entry fewer stays CSC
    let small: Vec<_> = t[..t.len() - 4]
        .iter()
        .copied()
        .chain([(2 * nc - 2, 2 * nc - 2, 2.0), (2 * nc - 1, 2 * nc - 1, 1.0)])
        .collect();
    let m2 = CscMatrix::from_triplets(2 * nc, 2 * nc, &small).unwrap();
    assert_eq!(m2.nnz(), BLOCK_MIN_NNZ - 2);
    assert_eq!(make(m2).operator_kind(), OperatorKind::Csc);
}

/// Not a check: writes the first-step CCP of a disc stack with `CPBENCH_DISC_STACK_BASE`
/// discs in its base row (default 260: about 1e5 contacts) to the `.npz` file
/// `CPBENCH_DISC_STACK_OUT` when set, and prints the time of one `N`-product on CSC and on 2x2
/// blocks (median of 5 samples of 20 products each): the planar measurement of docs/scale.md
/// (the generator's `disc-hopper` starts its discs in a tall falling column and reaches 1e4
/// contacts only after many steps). Run with `cargo test --release -p cpbench --test it
/// write_disc_stack -- --ignored --nocapture`.
#[test]
#[ignore = "writes and times a measurement instance; see its documentation"]
fn write_disc_stack() {
    let base = std::env::var("CPBENCH_DISC_STACK_BASE").map_or(260, |b| b.parse().unwrap());
    let inst = disc_stack(base);
    if let Ok(out) = std::env::var("CPBENCH_DISC_STACK_OUT") {
        cpbench_problems::io::npz::write_npz(&inst, std::path::Path::new(&out)).unwrap();
    }
    let n = inst.n();
    eprintln!(
        "{} contacts, {} stored entries",
        inst.n_blocks(),
        inst.nnz()
    );
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut y = vec![0.0; n];
    for kind in [OperatorKind::Csc, OperatorKind::Block] {
        let inst = inst.clone().with_operator(kind).unwrap();
        inst.matvec(&x, &mut y);
        let mut samples: Vec<f64> = (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                for _ in 0..20 {
                    inst.matvec(&x, &mut y);
                }
                t.elapsed().as_secs_f64() / 20.0
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        let bytes = inst.operator_bytes() as f64;
        eprintln!(
            "{kind}: {:.1} MB per product, {:.3} ms per product (median of 5; {:.3}-{:.3}), {:.1} GB/s",
            bytes / 1e6,
            1e3 * samples[2],
            1e3 * samples[0],
            1e3 * samples[4],
            bytes / samples[2] / 1e9
        );
    }
}
