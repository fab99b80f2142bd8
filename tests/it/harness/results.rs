//! `summary.csv` rows and their counters cell (`cpbench_harness::results`).

use cpbench_harness::results::{
    read_summary, write_summary, Counters, RowStatus, SummaryRow, LOAD_ERROR,
};
use cpbench_problems::{OperatorKind, ProblemClass, Residuals};
use cpbench_solvers::Status;

#[test]
fn counters_read_back_to_the_same_cell() {
    let c = Counters(vec![
        ("cg_steps".into(), 12.0),
        ("factor_time_s".into(), 1.25e-3),
        ("ratio".into(), 0.1 + 0.2),
        ("nan".into(), f64::NAN),
    ]);
    let cell = c.to_string();
    assert_eq!(
        cell,
        "cg_steps=12;factor_time_s=0.00125;ratio=0.30000000000000004;nan=NaN"
    );
    let back = Counters::parse(&cell).unwrap();
    assert_eq!(back.to_string(), cell);
    assert_eq!(back.get("ratio"), Some(0.1 + 0.2));
    assert_eq!(back.get("cg_steps"), Some(12.0));
    assert_eq!(back.get("missing"), None);
    assert_eq!(
        back.compact(),
        "cg_steps=12;factor_time_s=1.25e-3;ratio=3.0000000000000004e-1;nan=NaN"
    );
    assert!(Counters::parse("").unwrap().is_empty());
    assert_eq!(
        Counters::parse("a=1;b").unwrap_err(),
        "counter 'b' in column 'counters' is not name=value"
    );
    assert_eq!(
        Counters::parse("a=x").unwrap_err(),
        "counter 'a' in column 'counters' has value 'x', expected a number"
    );
}

#[test]
fn a_row_survives_a_write_and_a_read_and_bad_cells_name_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("summary.csv");
    let row = SummaryRow {
        instance: "a".into(),
        class: Some(ProblemClass::Coulomb),
        solver: "nsgs".into(),
        status: Status::Stalled.into(),
        counters: Counters(vec![("sweeps".into(), 3.0)]),
        operator: Some(OperatorKind::MatrixFree),
        residuals: Residuals::from_values([0.5; Residuals::COUNT]),
        base_solver: "nsgs".into(),
        time_min_s: 1.0,
        time_max_s: 2.0,
        ..SummaryRow::default()
    };
    let failed = SummaryRow {
        instance: "missing.dat".into(),
        status: LOAD_ERROR,
        residuals: Residuals::from_values([f64::NAN; Residuals::COUNT]),
        base_solver: "-".into(),
        solver: "-".into(),
        time_min_s: 0.0,
        time_max_s: 0.0,
        ..SummaryRow::default()
    };
    write_summary(&p, &[row.clone(), failed]).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(",coulomb,"), "{text}");
    assert!(text.contains(",stalled,"), "{text}");
    assert!(text.contains(",sweeps=3,"), "{text}");
    assert!(text.contains(",matrix-free,"), "{text}");
    assert!(text.contains("missing.dat,,0,0,-,,load_error,"), "{text}");
    let back = read_summary(&p).unwrap();
    assert_eq!(back[0].class, Some(ProblemClass::Coulomb));
    assert_eq!(back[0].status, RowStatus::Solver(Status::Stalled));
    assert_eq!(back[0].counters, row.counters);
    assert_eq!(back[0].operator, Some(OperatorKind::MatrixFree));
    assert_eq!(back[1].class, None);
    assert!(back[1].status.is_load_error());
    assert_eq!(back[1].operator, None);
    // rewriting what was read gives the same bytes
    write_summary(&p, &back).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    // a status the enum does not know is an error naming the line and the value
    std::fs::write(&p, text.replace(",stalled,", ",ok,")).unwrap();
    let e = read_summary(&p).unwrap_err().to_string();
    assert!(
        e.contains("line 2") && e.contains("unknown status 'ok'") && e.contains("load_error"),
        "{e}"
    );
    std::fs::write(&p, text.replace(",coulomb,", ",cones,")).unwrap();
    let e = read_summary(&p).unwrap_err().to_string();
    assert!(
        e.contains("line 2") && e.contains("unknown class 'cones'"),
        "{e}"
    );
}
