//! The report's side-by-side sections (`cpbench_harness::report`, module `peer`): a peer file,
//! Siconos rows.

use cpbench_harness::report::{peer_section, siconos_section};
use cpbench_harness::results::read_summary;

/// A hand-written peer row (NaN and empty-looking residuals, counters with the peer's own
/// errors) reads with `read_summary` and lands next to our row of the same instance.
#[test]
fn peer_rows_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let header = cpbench_harness::results::summary_header().join(",");
    let peer_csv = format!(
        "{header}\n\
         Rover4396__ccp,ccp,6,36,siconos-nsgs,,converged,yes,17,0,1.25e-4,\
         1e-9,5e-10,2.5e-9,NaN,1e-9,NaN,NaN,NaN,0e0,0e0,3e-10,3e-10,-0.5,4.5e-9,NaN,\
         ,17,fc3d_error,1e-8,default,1,,fc3d_error=4.5e-9;siconos_error=4.4e-9,,,,,,,,,,,,,\n"
    );
    let p = dir.path().join("peer.csv");
    std::fs::write(&p, peer_csv).unwrap();
    let peer = read_summary(&p).unwrap();
    assert_eq!(peer.len(), 1);
    assert_eq!(peer[0].iterations, 17);
    assert!(peer[0].residuals.nat_map_rel_inf.is_nan());
    let mut ours = peer[0].clone();
    ours.solver = "pgs".into();
    ours.iterations = 123;
    ours.residuals.nat_map_rel_2 = 7e-7;
    ours.counters = Default::default();
    let mut other = ours.clone();
    other.instance = "elsewhere".into();
    let md = peer_section(&[ours, other], &peer, "peer.csv");
    assert!(
        md.contains("#### Rover4396__ccp (ccp, n = 6, nnz = 36)"),
        "{md}"
    );
    let lines: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(lines.len(), 3, "{md}");
    assert!(lines[1].starts_with("| pgs | converged | yes | 123 | 1.250e-4 | 7.00e-7 |"));
    assert!(lines[2].starts_with("| siconos-nsgs | converged | yes | 17 | 1.250e-4 | 2.50e-9 | 4.50e-9 | 3.00e-10 | fc3d_error <= 1e-8 | fc3d_error=4.5e-9;siconos_error=4.4e-9 |"), "{}", lines[2]);
    assert!(!md.contains("elsewhere"));

    // the same rows as `siconos:*` rows of the folder: the same tables, under the Siconos
    // heading that says the residuals are the harness's
    let mut sic = peer[0].clone();
    sic.solver = "siconos:nsgs".into();
    let mut ours = sic.clone();
    ours.solver = "nsgs".into();
    let md = siconos_section(&[ours], &[sic]);
    assert!(md.starts_with("## Side by side with Siconos\n"), "{md}");
    assert!(md.contains("Every residual column is the harness's"));
    let lines: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(lines.len(), 3, "{md}");
    assert!(lines[1].starts_with("| nsgs | converged |"), "{}", lines[1]);
    assert!(
        lines[2].starts_with("| siconos:nsgs | converged |"),
        "{}",
        lines[2]
    );
}
