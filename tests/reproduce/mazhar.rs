//! `mazhar2015-apgd`: small fills; APGD faster than Gauss-Seidel and Jacobi at the tightest
//! tolerance, every APGD solve converged.

use super::common::quick;
use cpbench_harness::reproduce::mazhar::{size, SOLVERS, TOLS};

#[test]
fn mazhar_quick_apgd_beats_gs_and_jacobi_at_the_tightest_tolerance() {
    let (done, dir) = quick("mazhar2015-apgd");
    let (sizes, _, _) = size(true);
    let summary = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(summary.as_bytes());
    let hdr = rdr.headers().unwrap().clone();
    let col = |name: &str| hdr.iter().position(|h| h == name).unwrap();
    let (solver, success, tol) = (col("solver"), col("success"), col("tol"));
    let recs: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), sizes.len() * SOLVERS.len() * TOLS.len());
    for r in &recs {
        if &r[solver] == "apgd" {
            assert_eq!(&r[success], "yes", "{r:?}");
        }
    }
    assert!(recs
        .iter()
        .any(|r| r[tol].parse::<f64>().unwrap() == TOLS[2]));
    // claims at the largest quick size, tightest tolerance: speed-up > 1 over GS and Jacobi
    let cs = &done.outcome.comparisons;
    assert_eq!(cs.len(), 2 * TOLS.len());
    for c in &cs[cs.len() - 2..] {
        assert!(c.ours > 1.0, "{}: {}", c.quantity, c.ours_text);
    }
    assert_eq!(done.outcome.tables[0].rows.len(), sizes.len() * TOLS.len());
}
