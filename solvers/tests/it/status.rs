//! Solver statuses (`cpbench_solvers::Status`): every one parses back from its CSV value.

use cpbench_solvers::Status;

#[test]
fn every_status_parses_back_from_its_csv_value() {
    for s in Status::ALL {
        // exhaustive: a new variant stops this match compiling, which points here, where
        // ALL (above) must get it too; below, ALL's names must be distinct and parse back
        match s {
            Status::Converged
            | Status::MaxIterations
            | Status::MaxTime
            | Status::Stalled
            | Status::Diverged
            | Status::NumericalError
            | Status::Unsupported
            | Status::RayTermination
            | Status::Crashed
            | Status::BadOutput => {}
        }
        assert_eq!(Status::parse(s.as_str()), Some(s));
    }
    let names: std::collections::BTreeSet<_> = Status::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(names.len(), Status::ALL.len());
    assert_eq!(Status::parse("ok"), None);
}
