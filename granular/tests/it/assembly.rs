//! The stepper's assembly of the contact problem (`cpbench_granular::stepper`): the block,
//! CSC and matrix-free storages of `N` agree, the results do not depend on the number of
//! threads, and the count of stored entries is exact.

use cpbench_granular::nalgebra::Vector3;
use cpbench_granular::rng::SplitMix64;
use cpbench_granular::{ContactSolution, SceneKind, SceneSpec, Simulation};
use cpbench_problems::{Instance, OperatorKind};

/// A "solver" returning zero impulses: the bodies fall and overlap, which makes contacts
/// with planes, fixed and movable spheres.
fn zero(inst: &Instance, _warm: Option<&[f64]>) -> std::result::Result<ContactSolution, String> {
    Ok(ContactSolution {
        gamma: vec![0.0; inst.n()],
        ..Default::default()
    })
}

/// Scenes with every kind of contact, spinning bodies (rotated frames) and both block
/// sizes, advanced a few steps.
fn scenes() -> Vec<Simulation> {
    let mut out = Vec::new();
    for (kind, size, steps) in [
        (SceneKind::Pyramid, 6, 3),
        (SceneKind::Fill, 3, 40),
        (SceneKind::Tube, 60, 30),
    ] {
        for frictionless in [false, true] {
            let mut sim = SceneSpec {
                kind,
                size,
                seed: 5,
                frictionless,
                aspect: None,
            }
            .build()
            .unwrap()
            .into_simulation()
            .unwrap();
            let mut rng = SplitMix64::new(3);
            for b in sim.bodies_mut().iter_mut().filter(|b| !b.fixed) {
                b.omega = Vector3::new(
                    rng.uniform(-9.0, 9.0),
                    rng.uniform(-9.0, 9.0),
                    rng.uniform(-9.0, 9.0),
                );
            }
            let mut solver = zero;
            for _ in 0..steps {
                sim.step(&mut solver).unwrap();
            }
            out.push(sim);
        }
    }
    out
}

fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// The block assembly gives the CSC assembly's `N` bit for bit (structure, values, content
/// hash), also from recycled buffers, and the same products; the matrix-free instance
/// (`D`, `M` of the movable bodies) gives the same products to rounding; `r` is the same
/// on every storage.
#[test]
fn block_and_matrix_free_assembly_equal_the_csc_assembly() {
    let mut rng = SplitMix64::new(11);
    for mut sim in scenes() {
        let label = format!("{} bs {}", sim.label(), sim.world().params.block_size());
        sim.set_operator(None);
        let auto = sim.build_instance().unwrap().unwrap().clone();
        assert_eq!(auto.operator_kind(), OperatorKind::Csc, "{label}");
        sim.set_operator(Some(OperatorKind::Csc));
        let a = sim.build_instance().unwrap().unwrap().clone();
        assert_eq!(a.hash(), auto.hash());
        assert!(a.n_blocks() > 20, "{label}: {} contacts", a.n_blocks());
        sim.set_operator(Some(OperatorKind::Block));
        let b = sim.build_instance().unwrap().unwrap().clone();
        // the second build reuses the first one's storage
        let b2 = sim.build_instance().unwrap().unwrap().clone();
        let bm = b.block_matrix().expect("block storage");
        let back = bm.to_csc().unwrap();
        let an = a.n_mat();
        assert_eq!(back.col_ptr(), an.col_ptr(), "{label}");
        assert_eq!(back.row_idx(), an.row_idx(), "{label}");
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(back.values()), bits(an.values()), "{label}");
        assert_eq!(bits(b2.block_matrix().unwrap().values()), bits(bm.values()));
        assert_eq!(bm.full_nnz(), an.nnz());
        assert_eq!(b.hash(), a.hash(), "{label}");
        assert_eq!(bits(b.r()), bits(a.r()));
        let rep = sim.build_instance_report().unwrap();
        assert_eq!(rep.nnz, an.nnz());
        sim.set_operator(Some(OperatorKind::MatrixFree));
        let rep = sim.build_instance_report().unwrap();
        assert_eq!(rep.nnz, an.nnz(), "{label}: nnz of the N never formed");
        let c = sim.last_instance().unwrap().clone();
        assert_eq!(c.operator_kind(), OperatorKind::MatrixFree);
        let op = c.matrix_free().unwrap();
        let movable = sim.world().bodies.iter().filter(|b| !b.fixed).count();
        assert_eq!((op.m(), op.n()), (6 * movable, a.n()));
        assert_eq!(bits(c.r()), bits(a.r()));
        let n = a.n();
        for _ in 0..3 {
            let x: Vec<f64> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
            let (mut ya, mut yb, mut yc) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            a.matvec(&x, &mut ya);
            b.matvec(&x, &mut yb);
            c.matvec(&x, &mut yc);
            let (db, dc) = (max_rel_diff(&ya, &yb), max_rel_diff(&ya, &yc));
            assert!(db <= 1e-14, "{label}: block products differ by {db:e}");
            assert!(
                dc <= 1e-12,
                "{label}: matrix-free products differ by {dc:e}"
            );
        }
    }
}

/// Detection and every assembly give the same bits on 1 and 3 threads, on a scene large
/// enough to cut the parallel passes into several tasks (query chunks of bodies, grains
/// of contacts): contacts, `r`, the block and CSC `N`, `D` and `M`.
#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let run = |threads: usize| {
        cpbench_test_support::on_threads(threads, || {
            let mut sim = SceneSpec {
                kind: SceneKind::Pyramid,
                size: 20,
                seed: 2,
                frictionless: false,
                aspect: None,
            }
            .build()
            .unwrap()
            .into_simulation()
            .unwrap();
            let mut out = Vec::new();
            for kind in [
                OperatorKind::Block,
                OperatorKind::Csc,
                OperatorKind::MatrixFree,
            ] {
                sim.set_operator(Some(kind));
                let inst = sim.build_instance().unwrap().unwrap().clone();
                let vals = match kind {
                    OperatorKind::Block => {
                        let b = inst.block_matrix().unwrap();
                        let cols: Vec<f64> = b.cols().iter().map(|&c| c as f64).collect();
                        [bits(b.values()), bits(&cols)].concat()
                    }
                    OperatorKind::Csc => bits(inst.n_mat().values()),
                    OperatorKind::MatrixFree => {
                        let op = inst.matrix_free().unwrap();
                        [bits(op.d().values()), bits(&op.mass_diagonal())].concat()
                    }
                };
                out.push((bits(inst.r()), vals));
            }
            let contacts: Vec<_> = sim
                .contacts()
                .iter()
                .map(|c| {
                    (
                        c.a,
                        format!("{:?}", c.b),
                        c.gap.to_bits(),
                        bits(c.n.as_slice()),
                    )
                })
                .collect();
            (sim.world().bodies.len(), contacts, out)
        })
    };
    let (one, three) = (run(1), run(3));
    assert!(one.0 > 2 * 1024, "{} bodies: one query chunk", one.0);
    assert!(
        one.1.len() > 2 * 2048,
        "{} contacts: one grain",
        one.1.len()
    );
    assert!(one.1 == three.1, "contacts differ");
    for (k, (a, b)) in one.2.iter().zip(&three.2).enumerate() {
        assert!(a == b, "storage {k}: values differ");
    }
}

/// The automatic rule's count is the CSC assembly's exact `nnz`.
#[test]
fn delassus_nnz_is_exact() {
    for mut sim in scenes() {
        sim.set_operator(Some(OperatorKind::Csc));
        let nnz = sim.build_instance().unwrap().unwrap().nnz();
        // the matrix-free report's count is the rule's (`Assembly::delassus_nnz`): its `N` is
        // never formed
        sim.set_operator(Some(OperatorKind::MatrixFree));
        assert_eq!(sim.build_instance_report().unwrap().nnz, nnz);
    }
}
