//! `bb` (Barzilai-Borwein projected gradient): settings checks and registry defaults.

use cpbench_solvers::bb::{Bb, BbSettings};
use cpbench_solvers::registry::build;

#[test]
fn settings_are_checked() {
    assert!(Bb::new(BbSettings {
        alpha_factor: 0.0,
        ..Default::default()
    })
    .is_err());
    assert!(Bb::new(BbSettings {
        fallback_bb2: -1.0,
        ..Default::default()
    })
    .is_err());
    let b = build("bb", None).unwrap();
    assert_eq!(b.settings["alpha_factor"], 1.95);
    assert_eq!(b.solver.name(), "bb");
}
