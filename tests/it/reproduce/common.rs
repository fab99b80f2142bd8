//! Helpers shared by the recipe tests.

use cpbench_reproduce::sim::{read_steps, trace_path, StepRow};
use cpbench_reproduce::{find, reproduce, Context, Reproduced, Verdict};
use std::path::Path;

/// Run recipe `id` at its quick size into a temporary folder; returns the outcome and the
/// folder (kept alive by the returned guard).
pub fn quick(id: &str) -> (Reproduced, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Context {
        out: dir.path().to_path_buf(),
        quick: true,
        rerun: false,
        progress: false,
        repeat: 1,
    };
    let r = find(id).unwrap();
    let done = reproduce(r.as_ref(), &ctx).unwrap();
    for f in [
        "reproduce.md",
        "comparison.csv",
        "reproduce.json",
        "summary.csv",
        "manifest.json",
    ] {
        assert!(dir.path().join(f).is_file(), "{id}: {f} missing");
    }
    // no published number is compared more loosely than its printed digits without a stated
    // reason (issue 27), and reproduce.md opens with the count of what was compared
    for c in &done.outcome.comparisons {
        if let Err(e) = c.tolerance_check() {
            panic!("{id}: {e}");
        }
    }
    let md = std::fs::read_to_string(dir.path().join("reproduce.md")).unwrap();
    let second = md.lines().nth(2).unwrap_or_default();
    assert_eq!(
        second,
        done.outcome.headline(),
        "{id}: reproduce.md's opening line"
    );
    assert!(
        second.contains("published numbers compared strictly"),
        "{id}: {second}"
    );
    for fig in &done.outcome.figures {
        assert!(
            dir.path().join(&fig.file).is_file(),
            "{id}: figure {} missing",
            fig.file
        );
    }
    (done, dir)
}

/// The per-step rows of the trace of `scene` and `label` in the recipe folder `dir`.
pub fn steps(dir: &Path, scene: &str, label: &str) -> Vec<StepRow> {
    read_steps(&trace_path(dir, scene, label)).unwrap()
}

/// The comparison whose quantity is `q`.
#[allow(dead_code)]
pub fn verdict_of(done: &Reproduced, q: &str) -> Verdict {
    done.outcome
        .comparisons
        .iter()
        .find(|c| c.quantity == q)
        .unwrap_or_else(|| panic!("no comparison '{q}'"))
        .verdict()
}
