//! The per-step trace files of the simulation recipes (`cpbench_reproduce::sim`).

use cpbench_reproduce::sim::{read_steps, write_steps, RunStats, StepRow};

#[test]
fn step_traces_round_trip_with_and_without_probe() {
    let dir = tempfile::tempdir().unwrap();
    let row = |k: u64| StepRow {
        step: k,
        time: 0.01 * k as f64,
        contacts: 3,
        n: 9,
        iterations: 17,
        residual: 2.5e-4,
        converged: k % 2 == 0,
        solve_s: 1.25e-4,
        solve_wall_s: 2e-4,
        max_penetration: 1e-5,
        kinetic_energy: 0.5,
        warm_matched: 2,
        probe: 1.428571,
        other_s: 1.5e-4,
        solve_repeats: if k == 2 {
            vec![2.5e-3, 2.25e-3, 2.75e-3]
        } else {
            Vec::new()
        },
    };
    let rows: Vec<StepRow> = (1..4).map(row).collect();
    let p = dir.path().join("a.csv");
    write_steps(&p, &rows, Some("speed")).unwrap();
    assert_eq!(read_steps(&p).unwrap(), rows);
    write_steps(&p, &rows, None).unwrap();
    let back = read_steps(&p).unwrap();
    assert!(back.iter().all(|r| r.probe.is_nan()));
    let s = RunStats::of("c", "s", &rows);
    assert_eq!((s.steps, s.unconverged_steps, s.max_iterations), (3, 2, 17));
    assert!((s.total_solve_s - 3.75e-4).abs() < 1e-18);
}
