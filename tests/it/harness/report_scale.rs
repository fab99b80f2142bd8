//! The report's "Scale" section (`cpbench_harness::report`, module `scale`).

use cpbench_harness::manifest::Manifest;
use cpbench_harness::names::FileStems;
use cpbench_harness::plot::FigureOptions;
use cpbench_harness::report::{is_scale_instance, scale_section};
use cpbench_harness::results::SummaryRow;

#[test]
fn scale_instance_names() {
    assert!(is_scale_instance("pyramid-38_step0001__ccp"));
    assert!(!is_scale_instance("pyramid-38_step0002__ccp"));
    assert!(!is_scale_instance("pyramid-_step0001__ccp"));
    assert!(!is_scale_instance("pyramid-3x_step0001__ccp"));
    assert!(!is_scale_instance("fill-10_step0001__ccp"));
}

/// Two sizes x two solvers (one factorising): the section, its table and files; the
/// factorising solver has no time per product; achieved bandwidth and its share of the
/// triad are computed from operator bytes and time per product.
#[test]
fn section_numbers_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let row = |l: usize, n: usize, solver: &str, t: f64, bytes: u64| SummaryRow {
        instance: format!("pyramid-{l}_step0001__ccp"),
        class: Some(cpbench_problems::ProblemClass::Ccp),
        n,
        solver: solver.into(),
        base_solver: solver.into(),
        iterations: 100,
        matvecs: 200,
        time_s: t,
        profile: "default".into(),
        peak_rss_bytes: Some(50_000_000),
        operator: Some(cpbench_problems::OperatorKind::Csc),
        operator_bytes: Some(bytes),
        ..SummaryRow::default()
    };
    // apgd at 72 contacts counts its vector passes: 99,308,800 bytes in 100 iterations
    let counted = SummaryRow {
        counters: cpbench_harness::results::Counters(vec![("vector_bytes".into(), 99_308_800.0)]),
        ..row(4, 216, "apgd", 0.02, 1_000_000)
    };
    let rows = vec![
        counted,
        row(4, 216, "ipm", 0.5, 1_000_000),
        row(6, 900, "apgd", 0.2, 10_000_000),
        row(6, 900, "ipm", 5.0, 10_000_000),
    ];
    let m = Manifest {
        suite: "instances".into(),
        bandwidth_gbs: Some(10.0),
        bandwidth_threads: Some(2),
        ..Manifest::default()
    };
    let mut md = String::new();
    let fig = FigureOptions::default();
    // the section for `rows` with manifest `m` into `md` (no traces in the folder: no time
    // to tolerance)
    let stems = FileStems::from_rows(&rows);
    let section = |md: &mut String, rows: &[SummaryRow], m: &Manifest| {
        scale_section(md, rows, Some(m), (dir.path(), &stems), dir.path(), &fig).unwrap()
    };
    assert!(section(&mut md, &rows, &m));
    for f in ["scale.png", "scale.svg", "scale.csv"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    // apgd at 72 contacts: 0.02 s / 200 products = 1e-4 s, 1e6 bytes -> 10 GB/s = 100%;
    // per iteration (200 x (1e6 + 16 x 216) + 99,308,800) / 100 = 3e6 bytes in 2e-4 s:
    // 15 GB/s, 150% of the triad
    assert!(
        md.contains(
            "| 72 | 216 | csc | 1.0 | apgd | 100 | 2.000e-4 | 1.000e-4 | 10.00 | 100% | 3.0 | 150% \
             | 50.0 |"
        ),
        "{md}"
    );
    // apgd at 300 contacts reports no vector passes: no bytes per iteration
    assert!(
        md.contains("| 300 | 900 | csc | 10.0 | apgd | 100 | 2.000e-3 | 1.000e-3 | 10.00 | 100% | - | - | 50.0 |"),
        "{md}"
    );
    // ipm: no time per product
    assert!(
        md.contains("| 300 | 900 | csc | 10.0 | ipm | 100 | 5.000e-2 | - | - | - | - | - | 50.0 |"),
        "{md}"
    );
    assert!(md.contains("10.00 GB/s (STREAM triad"), "{md}");
    let csv = std::fs::read_to_string(dir.path().join("scale.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5);
    // one size of another suite: no section
    let mut md = String::new();
    assert!(!section(&mut md, &rows[..2], &m));
    assert!(md.is_empty());
    // ... but always for the scale suite
    let m = Manifest {
        suite: "scale".into(),
        ..m
    };
    assert!(section(&mut md, &rows[..2], &m));
}
