use cpbench_problems::io::{load, LoadOptions};
use cpbench_problems::OperatorKind;
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let t = Instant::now();
    let inst = load(std::path::Path::new(&path), &LoadOptions::default()).unwrap();
    eprintln!(
        "load {:.3} s, kind {}",
        t.elapsed().as_secs_f64(),
        inst.operator_kind()
    );
    let n = inst.n();
    let x: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    let mut y = vec![0.0; n];
    for kind in [OperatorKind::Block, OperatorKind::Csc] {
        let t = Instant::now();
        let i2 = inst.clone().with_operator(kind).unwrap();
        eprintln!("convert to {kind}: {:.3} s", t.elapsed().as_secs_f64());
        for _ in 0..3 {
            i2.matvec(&x, &mut y);
        }
        let reps = 30;
        let t = Instant::now();
        for _ in 0..reps {
            i2.matvec(&x, &mut y);
        }
        let dt = t.elapsed().as_secs_f64() / reps as f64;
        eprintln!(
            "{kind}: {:.2} ms per product, {:.1} GB/s of {:.1} MB",
            dt * 1e3,
            i2.operator_bytes() as f64 / dt / 1e9,
            i2.operator_bytes() as f64 / 1e6
        );
        let t = Instant::now();
        let h = i2.hash().to_string();
        eprintln!("hash {:.3} s {}", t.elapsed().as_secs_f64(), &h[..12]);
    }
}
