//! `sliding-ball`: every solver in the stepper's loop brings the ball to the rolling speed
//! 5/7 v0 = 10/7 m/s.

use super::common::quick;
use cpbench_harness::reproduce::sliding::{runs, MAZHAR_SPEED, ROLLING_SPEED};
use cpbench_harness::reproduce::Verdict;

#[test]
fn every_solver_rolls_at_five_sevenths_of_v0() {
    let (done, _dir) = quick("sliding-ball");
    let cs = &done.outcome.comparisons;
    assert_eq!(cs.len(), 2 * runs().len());
    assert!((ROLLING_SPEED - 10.0 / 7.0).abs() < 1e-15);
    for c in cs {
        assert_eq!(
            c.verdict(),
            Verdict::Match,
            "{}: ours {}",
            c.quantity,
            c.ours_text
        );
        if c.quantity.ends_with("(analytic 10/7)") {
            assert!(
                (c.ours - ROLLING_SPEED).abs() <= 1e-6 * ROLLING_SPEED,
                "{}: {}",
                c.quantity,
                c.ours
            );
        } else {
            assert!((c.ours - MAZHAR_SPEED).abs() <= 0.1 * MAZHAR_SPEED);
        }
    }
}
