//! Canonical row order (`cpbench_harness::order`): rows follow the manifest.

use cpbench_harness::manifest::{InstanceEntry, Manifest, Profile, SolverEntry};
use cpbench_harness::order::sort_canonical;

/// Rows follow the manifest's instances, then solvers, then profiles; rows the manifest
/// does not name go last, in their order.
#[test]
fn rows_follow_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let header = cpbench_harness::results::summary_header().join(",");
    let line = "a,lcp,2,4,pgs,h,converged,yes,3,3,1e-3,\
                1e-7,1e-7,1e-7,1e-7,1e-7,1e-7,1e-7,1e-7,0,0,0,0,0,0,0,,3,nat_map_rel_2,1e-6,default,1,,,,,,,,,,,,,,,";
    let p = dir.path().join("summary.csv");
    std::fs::write(&p, format!("{header}\n{line}\n")).unwrap();
    let row = cpbench_harness::results::read_summary(&p)
        .unwrap()
        .remove(0);
    let mk = |i: &str, s: &str, pr: &str| {
        let mut r = row.clone();
        (r.instance, r.solver, r.profile) = (i.into(), s.into(), pr.into());
        r
    };
    let mut rows = vec![
        mk("zz", "pgs", "default"),
        mk("b", "pgs", "low"),
        mk("a", "apgd", "default"),
        mk("b", "apgd", "default"),
        mk("b", "pgs", "default"),
    ];
    let m = Manifest {
        instances: ["b", "a"]
            .map(|n| InstanceEntry {
                name: n.into(),
                ..InstanceEntry::default()
            })
            .to_vec(),
        solvers: ["pgs", "apgd"]
            .map(|n| SolverEntry {
                name: n.into(),
                ..SolverEntry::default()
            })
            .to_vec(),
        profiles: ["default", "low"]
            .map(|n| Profile::builtin(n).unwrap())
            .to_vec(),
        ..Manifest::default()
    };
    sort_canonical(&mut rows, &m);
    let got: Vec<String> = rows
        .iter()
        .map(|r| format!("{}/{}/{}", r.instance, r.solver, r.profile))
        .collect();
    assert_eq!(
        got,
        [
            "b/pgs/default",
            "b/pgs/low",
            "b/apgd/default",
            "a/apgd/default",
            "zz/pgs/default"
        ]
    );
}
