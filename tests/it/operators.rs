//! The three storages of `N` (CSC, block, matrix-free `D^T M^-1 D`) give the same problem:
//! equal products, and every first-order and Gauss-Seidel solver reaches the same solution on
//! each, with its own products only (no CSC formed behind the scenes).

use cpbench_problems::{CscMatrix, Instance, OperatorKind};
use cpbench_solvers::{ExecSettings, Status};
use cpbench_test_support::{solve, solve_with};

/// The first step of a 7-layer cannonball pyramid (140 spheres; the bottom layer fixed):
/// its instance and the matrix-free instance of the same step (`D` restricted to the movable
/// bodies' rows, `M` their masses and inertias).
fn pyramid() -> (Instance, Instance) {
    let mut s = crate::granular_support::pyramid(7);
    let inst = s.build_instance().unwrap().unwrap().clone();
    let d = s.jacobian().unwrap();
    let minv = s.mass_inverse_diagonal();
    let keep: Vec<usize> = (0..minv.len()).filter(|&k| minv[k] > 0.0).collect();
    let mut row_of = vec![usize::MAX; minv.len()];
    for (i, &k) in keep.iter().enumerate() {
        row_of[k] = i;
    }
    let mut t = Vec::new();
    for j in 0..d.ncols() {
        let (rows, vals) = d.col(j);
        for (&k, &v) in rows.iter().zip(vals) {
            if row_of[k] != usize::MAX {
                t.push((row_of[k], j, v));
            }
        }
    }
    let d = CscMatrix::from_triplets(keep.len(), d.ncols(), &t).unwrap();
    let mass: Vec<f64> = keep.iter().map(|&k| 1.0 / minv[k]).collect();
    let op = cpbench_problems::operator::MatrixFree::with_diagonal_mass(d, &mass).unwrap();
    let mf = Instance::on_operator(
        "pyramid-7-mf",
        op,
        inst.r().to_vec(),
        inst.constraints().clone(),
        inst.provenance().clone(),
    )
    .unwrap();
    (inst, mf)
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den = a.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-300);
    num / den
}

#[test]
fn storages_agree_on_products_and_solutions() {
    let (csc, mf) = pyramid();
    assert_eq!(csc.operator_kind(), OperatorKind::Csc);
    let block = csc.clone().with_operator(OperatorKind::Block).unwrap();
    assert_eq!(block.operator_kind(), OperatorKind::Block);
    assert_eq!(mf.operator_kind(), OperatorKind::MatrixFree);
    let n = csc.n();
    assert!(n > 1500, "n = {n}");
    // same content hash through the exact CSC round trip
    assert_eq!(block.hash(), csc.hash());
    let back = block.clone().with_operator(OperatorKind::Csc).unwrap();
    assert_eq!(back.n_mat().values(), csc.n_mat().values());
    // products
    let x: Vec<f64> = (0..n).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
    let mut y = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    for (inst, yk) in [&csc, &block, &mf].iter().zip(y.iter_mut()) {
        inst.matvec(&x, yk);
    }
    assert!(
        rel_diff(&y[0], &y[1]) < 1e-14,
        "block {}",
        rel_diff(&y[0], &y[1])
    );
    assert!(
        rel_diff(&y[0], &y[2]) < 1e-12,
        "matrix-free {}",
        rel_diff(&y[0], &y[2])
    );
    // diagonal blocks
    for c in [0, n / 6, n / 3 - 1] {
        let (a, b, m) = (csc.diag_block(c), block.diag_block(c), mf.diag_block(c));
        for k in 0..9 {
            assert!((a[k] - b[k]).abs() <= 1e-14 * a[0].abs());
            assert!((a[k] - m[k]).abs() <= 1e-12 * a[0].abs());
        }
    }
    // solvers: a fixed number of iterations gives the same iterate up to rounding (the
    // summation order differs), and each converges on each storage
    for name in ["apgd", "pgs", "jacobi", "spgqp"] {
        let exec = ExecSettings {
            tol: 1e-300,
            max_iter: 40,
            stall_window: None,
            ..Default::default()
        };
        let r0 = solve_with(name, &csc, exec.clone());
        for inst in [&block, &mf] {
            let r1 = solve_with(name, inst, exec.clone());
            let d = rel_diff(&r0.gamma, &r1.gamma);
            assert!(
                d < 1e-9,
                "{name} on {}: iterates differ by {d:.2e}",
                inst.operator_kind()
            );
            assert_eq!(r0.matvecs, r1.matvecs, "{name}");
        }
    }
    for inst in [&csc, &block, &mf] {
        let r = solve("pgs", inst, 1e-8, 5000);
        assert!(
            r.residuals.nat_map_rel_2 <= 1e-8,
            "pgs on {}: {:?}",
            inst.operator_kind(),
            r.residuals
        );
    }
    // NSGS on the Coulomb problem of the same data (rows of the block and matrix-free forms)
    let cou = |i: &Instance| i.clone().into_coulomb().unwrap();
    let exec = ExecSettings {
        tol: 1e-300,
        max_iter: 30,
        stall_window: None,
        ..Default::default()
    };
    let g0 = solve_with("nsgs", &cou(&csc), exec.clone()).gamma;
    for inst in [&block, &mf] {
        let g1 = solve_with("nsgs", &cou(inst), exec.clone()).gamma;
        let d = rel_diff(&g0, &g1);
        assert!(d < 1e-9, "nsgs on {}: {d:.2e}", inst.operator_kind());
    }
    // no CSC was formed for the block products of these solvers
    assert!(block.block_matrix().is_some());
}

/// Solve `inst` with registry solver `name` and `settings` under `exec` from zero.
fn solve_set(
    name: &str,
    settings: serde_json::Value,
    inst: &Instance,
    exec: &ExecSettings,
) -> cpbench_solvers::SolveResult {
    let mut b = cpbench_solvers::registry::build(name, Some(&settings)).unwrap();
    cpbench_solvers::Executor::new(exec.clone())
        .run(b.solver.as_mut(), inst, None, &mut [])
        .unwrap()
}

/// `||N (a - b)|| / ||r||`: how far apart the velocities of two answers are, relative to the
/// free velocity.
fn velocity_gap(inst: &Instance, a: &[f64], b: &[f64]) -> f64 {
    let diff: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let mut y = vec![0.0; inst.n()];
    inst.matvec(&diff, &mut y);
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    norm(&y) / norm(inst.r())
}

#[test]
fn colouring_separates_coupled_blocks_on_every_storage() {
    use cpbench_problems::colouring::Colouring;
    let (csc, mf) = pyramid();
    let block = csc.clone().with_operator(OperatorKind::Block).unwrap();
    let nb = csc.n_blocks();
    // the coupling of the blocks, read from the formed CSC matrix (independent of the
    // storages' own neighbour lists)
    let n_mat = csc.n_mat();
    let mut max_degree = 0;
    let mut coupled = vec![Vec::new(); nb];
    for j in 0..n_mat.ncols() {
        for (&i, &v) in n_mat.col(j).0.iter().zip(n_mat.col(j).1) {
            if v != 0.0 && i / 3 != j / 3 {
                coupled[j / 3].push(i / 3);
            }
        }
    }
    for c in &mut coupled {
        c.sort_unstable();
        c.dedup();
        max_degree = max_degree.max(c.len());
    }
    for inst in [&csc, &block, &mf] {
        let col = Colouring::greedy(inst);
        assert_eq!(col.blocks(), nb);
        let mut colour = vec![usize::MAX; nb];
        for k in 0..col.colours() {
            for &c in col.members(k) {
                assert_eq!(colour[c as usize], usize::MAX, "block {c} coloured twice");
                colour[c as usize] = k;
            }
        }
        for (c, ds) in coupled.iter().enumerate() {
            for &d in ds {
                assert_ne!(
                    colour[c],
                    colour[d],
                    "{}: {c} and {d}",
                    inst.operator_kind()
                );
            }
        }
        assert!(
            col.colours() <= max_degree + 1 && col.colours() >= 4,
            "{}: {} colours, degree {max_degree}",
            inst.operator_kind(),
            col.colours()
        );
    }
    // CSC and block storages hold the same pattern: the same colouring
    assert_eq!(Colouring::greedy(&csc), Colouring::greedy(&block));
}

#[test]
fn coloured_sweeps_reach_the_sequential_answers_and_do_not_depend_on_threads() {
    let (csc, mf) = pyramid();
    let block = csc.clone().with_operator(OperatorKind::Block).unwrap();
    let cou = |i: &Instance| i.clone().into_coulomb().unwrap();
    let tight = ExecSettings {
        tol: 1e-9,
        max_iter: 20_000,
        ..Default::default()
    };
    let fixed = ExecSettings {
        tol: 1e-300,
        max_iter: 25,
        stall_window: None,
        ..Default::default()
    };
    let seq = serde_json::json!({"sweep": "sequential"});
    let col = serde_json::json!({"sweep": "coloured"});
    let cases: [(&str, Instance); 5] = [
        ("pgs", csc.clone()),
        ("pgs", block.clone()),
        ("pgs", mf.clone()),
        ("nsgs", cou(&block)),
        ("nsgs", cou(&mf)),
    ];
    for (name, inst) in &cases {
        let what = format!("{name} on {}", inst.operator_kind());
        // the same answer as the sequential sweep, to the tolerance
        let a = solve_set(name, seq.clone(), inst, &tight);
        let b = solve_set(name, col.clone(), inst, &tight);
        assert!(
            a.status == Status::Converged && b.status == Status::Converged,
            "{what}: {:?} {:?}",
            a.status,
            b.status
        );
        // the resting pyramid's N is singular: the impulses need not be unique, the
        // velocities u = N gamma + r are (relative to the free velocity r)
        let d = velocity_gap(inst, &a.gamma, &b.gamma);
        assert!(d < 1e-6, "{what}: velocities differ by {d:.2e} of ||r||");
        assert!(
            b.counters.iter().any(|(k, v)| k == "colours" && *v >= 4.0),
            "{what}: {:?}",
            b.counters
        );
        // the whole-row copy on the block storage only; CSC and matrix-free keep their rows
        let whole = f64::from(u8::from(inst.operator_kind() == OperatorKind::Block));
        assert!(
            b.counters
                .iter()
                .any(|(k, v)| k == "colour_layout" && *v == whole),
            "{what}: {:?}",
            b.counters
        );
        assert_eq!(b.message, None, "{what}");
        // other iterates than the sequential sweep, the same for 1, 2 and 3 threads
        let runs: Vec<Vec<f64>> = [1, 2, 3]
            .iter()
            .map(|&t| {
                cpbench_test_support::on_threads(t, || {
                    solve_set(name, col.clone(), inst, &fixed).gamma
                })
            })
            .collect();
        assert_ne!(
            runs[0],
            solve_set(name, seq.clone(), inst, &fixed).gamma,
            "{what}"
        );
        assert!(
            runs.iter().all(|g| g == &runs[0]),
            "{what}: thread counts differ"
        );
    }
    // psor on the normal-block LCP of the pyramid
    let lcp = csc.normal_block_lcp().unwrap();
    let a = solve_set("psor", seq, &lcp, &tight);
    let b = solve_set("psor", col, &lcp, &tight);
    assert!(a.status == Status::Converged && b.status == Status::Converged);
    assert!(velocity_gap(&lcp, &a.gamma, &b.gamma) < 1e-6);
}

/// The coloured sweep on the block storage reads each row from the whole-row copy of `N` in
/// colour order (counter `colour_layout` 1 and the copy's bytes in `coloured_rows_bytes`) and
/// its iterates are those of the rows read through the transposed index bit for bit (the copy
/// refused by a memory limit below it: `colour_layout` 0 and the reason in the message), for 1
/// and 2 threads alike: pgs and nsgs on 3x3 blocks (the pyramid), pgs and nsgs on 2x2 blocks
/// (a stack of discs), pgs and psor on 1x1 blocks (the pyramid's normal-block LCP).
#[test]
fn coloured_sweeps_on_whole_rows_equal_the_transposed_index_bit_for_bit() {
    let (csc, _) = pyramid();
    let block = |i: &Instance| i.clone().with_operator(OperatorKind::Block).unwrap();
    let cou = |i: &Instance| i.clone().into_coulomb().unwrap();
    let discs = {
        let mut s = cpbench_granular::planar::disc_stack(
            8,
            cpbench_granular::planar::PlanarParams::default(),
        )
        .unwrap();
        s.build_instance().unwrap().unwrap().clone()
    };
    let lcp = block(&csc.normal_block_lcp().unwrap());
    let cases: [(&str, Instance, usize); 6] = [
        ("pgs", block(&csc), 3),
        ("nsgs", cou(&block(&csc)), 3),
        ("pgs", block(&discs), 2),
        ("nsgs", cou(&block(&discs)), 2),
        ("pgs", lcp.clone(), 1),
        ("psor", lcp, 1),
    ];
    let fixed = |limit: Option<u64>| ExecSettings {
        tol: 1e-300,
        max_iter: 25,
        stall_window: None,
        max_memory_bytes: limit,
        ..Default::default()
    };
    let col = serde_json::json!({"sweep": "coloured"});
    let counter = |r: &cpbench_solvers::SolveResult, name: &str| {
        r.counters
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no counter {name}: {:?}", r.counters))
    };
    for (name, inst, bs) in &cases {
        let b = inst.block_matrix().expect("block storage");
        assert_eq!(
            (b.block_size(), inst.constraints().block_size()),
            (*bs, *bs)
        );
        let what = format!("{name} on {bs}x{bs} blocks");
        let runs: Vec<_> = [1, 2]
            .iter()
            .map(|&t| {
                cpbench_test_support::on_threads(t, || {
                    solve_set(name, col.clone(), inst, &fixed(None))
                })
            })
            .collect();
        for r in &runs {
            assert_eq!(counter(r, "colour_layout"), 1.0, "{what}");
            assert_eq!(
                counter(r, "coloured_rows_bytes"),
                b.whole_rows_bytes() as f64,
                "{what}"
            );
            assert!(counter(r, "colours") >= 2.0, "{what}");
            assert_eq!(r.message, None, "{what}");
        }
        assert_eq!(runs[0].gamma, runs[1].gamma, "{what}: thread counts differ");
        // the storage alone fits the limit, the copy besides it does not
        let limit = b.bytes() + b.whole_rows_bytes() / 2;
        let old = solve_set(name, col.clone(), inst, &fixed(Some(limit)));
        assert_eq!(counter(&old, "colour_layout"), 0.0, "{what}");
        assert_eq!(counter(&old, "coloured_rows_bytes"), 0.0, "{what}");
        let msg = old.message.clone().unwrap_or_default();
        assert!(
            msg.contains("whole-row copy") && msg.contains("memory limit"),
            "{what}: {msg}"
        );
        assert_eq!(runs[0].iterations, 25, "{what}");
        assert_eq!(
            runs[0].gamma, old.gamma,
            "{what}: whole rows differ from the index"
        );
        assert!(
            runs[0].gamma.iter().any(|&v| v != 0.0),
            "{what}: nothing moved"
        );
    }
}

#[test]
fn a_coloured_sweep_is_refused_with_shuffle() {
    let e = cpbench_solvers::registry::build(
        "nsgs",
        Some(&serde_json::json!({"shuffle": true, "sweep": "coloured"})),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("sweep") && e.contains("not coloured with shuffle"),
        "{e}"
    );
    // auto with shuffle is the sequential sweep: no colours
    let (csc, _) = pyramid();
    let r = solve_set(
        "nsgs",
        serde_json::json!({"shuffle": true, "sweep": "auto"}),
        &csc.into_coulomb().unwrap(),
        &ExecSettings::default(),
    );
    assert!(!r.counters.iter().any(|(k, _)| k == "colours"));
}
