//! The coloured sweeps of `pgs`, `nsgs` and `psor` on the block storage, rows read from the
//! whole-row copy of `N` (`ColouredSweep`), allocate nothing per sweep once `init` has built
//! the copy: a counting global allocator, in its own test binary with one test, so no other
//! test allocates meanwhile (on a one-thread rayon pool, whose set-up allocates before the
//! count).

use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::instance::{Instance, Provenance};
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::operator::BlockSymMatrix;
use cpbench_problems::rng::SplitMix64;
use cpbench_solvers::{IterState, Problem};
use cpbench_test_support::CountingAlloc;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// A random symmetric, diagonally dominant `N` of `nb` blocks of `bs` on the block storage.
fn block_instance(nb: usize, bs: usize, set: ConstraintSet) -> Instance {
    let mut rng = SplitMix64::new(5 + bs as u64);
    let n = nb * bs;
    let mut t: Vec<(usize, usize, f64)> = (0..n).map(|i| (i, i, 10.0 + rng.next_f64())).collect();
    for bi in 0..nb {
        for bj in bi + 1..nb {
            if rng.next_f64() < 8.0 / nb as f64 {
                for a in 0..bs {
                    for b in 0..bs {
                        let v = 0.3 * (rng.next_f64() - 0.5);
                        t.push((bs * bi + a, bs * bj + b, v));
                        t.push((bs * bj + b, bs * bi + a, v));
                    }
                }
            }
        }
    }
    let m = CscMatrix::from_triplets(n, n, &t).unwrap();
    let r: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin() - 0.3).collect();
    let b = BlockSymMatrix::from_csc(&m, bs).unwrap();
    Instance::on_operator("alloc", b, r, set, Provenance::default()).unwrap()
}

#[test]
fn coloured_sweeps_on_whole_rows_do_not_allocate() {
    let nb = 700;
    let ccp = block_instance(nb, 3, ConstraintSet::coulomb(vec![0.5; nb]));
    let cou = ccp.clone().into_coulomb().unwrap();
    let lcp = block_instance(nb, 1, ConstraintSet::NonNegative);
    for (name, inst) in [("pgs", &ccp), ("nsgs", &cou), ("pgs", &lcp), ("psor", &lcp)] {
        let (allocated, counters, gamma) = cpbench_test_support::on_threads(1, || {
            let settings = serde_json::json!({"sweep": "coloured"});
            let mut b = cpbench_solvers::registry::build(name, Some(&settings)).unwrap();
            let solver = b.solver.as_mut();
            let problem = Problem::new(inst);
            let mut state = IterState::new(vec![0.0; inst.n()]);
            solver.init(&problem, &mut state).unwrap();
            solver.step(&problem, &mut state).unwrap();
            let before = CountingAlloc::count();
            for _ in 0..20 {
                solver.step(&problem, &mut state).unwrap();
            }
            let allocated = CountingAlloc::count() - before;
            (allocated, solver.counters(), state.gamma)
        });
        let layout = counters
            .iter()
            .find(|(k, _)| *k == "colour_layout")
            .map(|(_, v)| *v);
        assert_eq!(layout, Some(1.0), "{name}: {counters:?}");
        assert_eq!(
            allocated,
            0,
            "{name} on {} blocks",
            inst.constraints().block_size()
        );
        assert!(gamma.iter().any(|&v| v != 0.0), "{name}: nothing moved");
    }
}
