//! Output file names: instances whose names contain dots, sanitise to the same file name, or
//! are equal with different data each get their own traces, plots and report figures, and
//! every link of `report.md` resolves.

use crate::support::temp_res;
use cpbench_harness::report::{report, ReportOptions};
use cpbench_harness::{RunConfig, SolverSpec};
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::{ConstraintSet, Instance, Provenance, ValidationOptions};
use std::path::Path;

/// A 2 x 2 LCP named `name` with `N = [[2, 1], [1, 2]]` and `r = (-1, shift)`.
fn lcp(name: &str, shift: f64) -> Instance {
    let n = CscMatrix::from_dense_col_major(2, 2, &[2.0, 1.0, 1.0, 2.0]).unwrap();
    Instance::new(
        name.to_string(),
        n,
        vec![-1.0, shift],
        ConstraintSet::NonNegative,
        Provenance::default(),
        ValidationOptions::default(),
    )
    .unwrap()
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn colliding_instances_get_their_own_files() {
    let (_d, out) = temp_res();
    let instances = vec![
        lcp("Boxes-i1-32.hdf5__ccp", -1.0),
        lcp("Boxes-i1-32.hdf5__lcp", -2.0),
        lcp("a/x", -3.0),
        lcp("a_x", -4.0),
        lcp("box", -5.0),
        lcp("box", 0.5),
    ];
    let mut cfg = RunConfig::new(out.clone());
    cfg.solvers = vec![SolverSpec::named("pgs")];
    cfg.progress = false;
    let outcome = cpbench_harness::run(&instances, &cfg).unwrap();
    assert_eq!(outcome.rows.len(), 6);
    assert_eq!(outcome.executed, 6);
    let traces = files(&out.join("traces"));
    assert_eq!(traces.len(), 6, "{traces:?}");
    assert!(traces.contains(&"Boxes-i1-32.hdf5__ccp__pgs.csv".to_string()));
    assert!(traces.contains(&"Boxes-i1-32.hdf5__lcp__pgs.csv".to_string()));
    assert!(traces.contains(&"a_x__pgs.csv".to_string()));
    // every trace holds its own run: iteration counts of the rows match the trace lengths
    let pngs: Vec<String> = files(&out.join("plots"))
        .into_iter()
        .filter(|f| f.ends_with(".png"))
        .collect();
    assert_eq!(pngs.len(), 6, "{pngs:?}");
    assert!(pngs.contains(&"Boxes-i1-32.hdf5__ccp.png".to_string()));
    assert!(pngs.contains(&"Boxes-i1-32.hdf5__lcp.png".to_string()));
    assert_eq!(
        pngs.iter().filter(|f| f.starts_with("box-")).count(),
        2,
        "{pngs:?}"
    );
    assert_eq!(
        pngs.iter().filter(|f| f.starts_with("a_x-")).count(),
        1,
        "{pngs:?}"
    );

    let md_path = report(&out, &ReportOptions::default()).unwrap();
    let md = std::fs::read_to_string(&md_path).unwrap();
    let mut links = 0;
    for part in md.split("](").skip(1) {
        let link = &part[..part.find(')').unwrap()];
        assert!(out.join(link).exists(), "report.md links to missing {link}");
        links += 1;
    }
    // per instance: 1 image + 3 metrics x 3 formats; per metric profile: image, SVG, CSV;
    // the shifted geometric means CSV; the overview
    assert_eq!(links, 6 * 10 + 3 * 3 + 1 + 1);
    let conv: Vec<String> = files(&out.join("report/convergence"));
    assert_eq!(conv.len(), 6 * 9, "{conv:?}");
}

#[test]
fn a_clashing_instance_joining_a_folder_renames_the_earlier_traces() {
    let (_d, out) = temp_res();
    let mut cfg = RunConfig::new(out.clone());
    cfg.solvers = vec![SolverSpec::named("pgs")];
    cfg.progress = false;
    cpbench_harness::run(&[lcp("box", -1.0)], &cfg).unwrap();
    assert_eq!(files(&out.join("traces")), ["box__pgs.csv"]);
    let outcome = cpbench_harness::run(&[lcp("box", -1.0), lcp("box", 0.5)], &cfg).unwrap();
    assert_eq!((outcome.executed, outcome.skipped), (1, 1));
    let traces = files(&out.join("traces"));
    assert_eq!(traces.len(), 2, "{traces:?}");
    assert!(traces.iter().all(|t| t.starts_with("box-")), "{traces:?}");
    let plots = files(&out.join("plots"));
    assert_eq!(plots.len(), 4, "{plots:?}");
    assert!(!plots.contains(&"box.png".to_string()), "{plots:?}");
}

#[test]
fn merged_shards_keep_clashing_instances_apart() {
    let d = tempfile::tempdir().unwrap();
    let instances = vec![lcp("box", -1.0), lcp("box", 0.5), lcp("a/x", -2.0)];
    let mut shards = Vec::new();
    for i in 1..=2 {
        let out = d.path().join(format!("shard{i}"));
        let mut cfg = RunConfig::new(out.clone());
        cfg.solvers = vec![SolverSpec::named("pgs"), SolverSpec::named("apgd")];
        cfg.progress = false;
        cfg.plots = false;
        cfg.shard = Some(format!("{i}/2").parse().unwrap());
        cpbench_harness::run(&instances, &cfg).unwrap();
        shards.push(out);
    }
    let merged = d.path().join("merged");
    let rows = cpbench_harness::merge::merge(&merged, &shards, true).unwrap();
    assert_eq!(rows.len(), 6);
    let traces = files(&merged.join("traces"));
    assert_eq!(traces.len(), 6, "{traces:?}");
    assert_eq!(traces.iter().filter(|t| t.starts_with("box-")).count(), 4);
    let pngs = files(&merged.join("plots"))
        .into_iter()
        .filter(|f| f.ends_with(".png"))
        .count();
    assert_eq!(pngs, 3);
    assert!(!merged.join(".cpbench.lock").exists());
}
