//! The "Side by side" section: a peer program's rows next to this folder's rows.

use crate::results::SummaryRow;
use std::fmt::Write as _;

fn fmt_opt(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.2e}")
    }
}

/// The "Side by side" section of a report: for every instance name of `peer` (in its order), a
/// table of `ours`' rows of that name followed by the peer rows, with status, the check
/// (`success`), iterations, time, `nat_map_rel_2`, `complementarity` (`-` where the CSV holds
/// NaN) and the counters (where a peer puts its own error measures, e.g.
/// `fc3d_error=...;siconos_error=...`). A peer row whose `n` differs from ours is flagged.
/// `origin` names the peer file in the heading.
pub fn peer_section(ours: &[SummaryRow], peer: &[SummaryRow], origin: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Side by side with {origin}\n\nRows of this folder and of the peer file with the same \
         instance name. Peer rows were produced by another program with its own stopping test \
         (see its `check_residual` and `counters`); their residual columns are recomputed by it \
         on the same instance (`-`: not computed). Times compare only between runs on one \
         machine with `jobs` = 1.\n"
    );
    table(&mut md, ours, peer);
    md
}

/// The "Side by side with Siconos" section for the `siconos:*` rows of the folder itself
/// (external solvers run by the harness: their residual columns are the harness's, computed
/// from their answers; their `time_s` is the program's wall time, start-up included, and the
/// driver call's time is the counter `siconos_time_s`): the tables of [`peer_section`].
pub fn siconos_section(ours: &[SummaryRow], siconos: &[SummaryRow]) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Side by side with Siconos\n\nThe `siconos:*` rows of this folder (Siconos' solvers \
         run by the harness through the external-solver protocol) next to the folder's other \
         rows of the same instance. Every residual column is the harness's, computed from each \
         answer; the `counters` hold Siconos' own error (`siconos_error`), `info` and the time of \
         the driver call alone (`siconos_time_s`), while `time [s]` of a `siconos:*` row is the \
         program's wall time (Python start-up and reading the instance included). Times \
         compare only between runs on one machine with `jobs` = 1.\n"
    );
    table(&mut md, ours, siconos);
    md
}

/// One table per instance name of `peer` (in its order): `ours`' rows of that name, then the
/// peer rows.
fn table(md: &mut String, ours: &[SummaryRow], peer: &[SummaryRow]) {
    let mut names: Vec<&str> = Vec::new();
    for p in peer {
        if !names.contains(&p.instance.as_str()) {
            names.push(&p.instance);
        }
    }
    for name in names {
        let mine: Vec<&SummaryRow> = ours.iter().filter(|r| r.instance == name).collect();
        let theirs: Vec<&SummaryRow> = peer.iter().filter(|r| r.instance == name).collect();
        let first = mine.first().unwrap_or(&theirs[0]);
        let _ = writeln!(
            md,
            "#### {name} ({}, n = {}, nnz = {})\n\n| solver | status | success | iterations | time [s] | nat_map_rel_2 | fc3d_error | complementarity | check | counters |\n|---|---|---|---|---|---|---|---|---|---|",
            first.class_name(), first.n, first.nnz
        );
        for r in mine.iter().chain(&theirs) {
            let mut solver = r.solver.clone();
            if r.profile != "default" {
                solver.push_str(&format!(" ({})", r.profile));
            }
            let mut counters = r.counters.compact();
            if r.n != first.n {
                counters.push_str(&format!(" **n = {} differs**", r.n));
            }
            let _ = writeln!(
                md,
                "| {solver} | {} | {} | {} | {:.3e} | {} | {} | {} | {} <= {:.0e} | {} |",
                r.status,
                if r.success { "yes" } else { "no" },
                r.iterations,
                r.time_s,
                fmt_opt(r.residuals.nat_map_rel_2),
                fmt_opt(r.residuals.fc3d_error),
                fmt_opt(r.residuals.complementarity),
                r.check_residual,
                r.tol,
                counters
            );
        }
        if mine.is_empty() {
            let _ = writeln!(md, "\n(no run of this instance in this folder)");
        }
        let _ = writeln!(md);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::read_summary;

    /// A hand-written peer row (NaN and empty-looking residuals, counters with the peer's own
    /// errors) reads with `read_summary` and lands next to our row of the same instance.
    #[test]
    fn peer_rows_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let header = crate::results::summary_header().join(",");
        let peer_csv = format!(
            "{header}\n\
             Rover4396__ccp,ccp,6,36,siconos-nsgs,,converged,yes,17,0,1.25e-4,\
             1e-9,5e-10,2.5e-9,NaN,1e-9,NaN,NaN,NaN,0e0,0e0,3e-10,3e-10,-0.5,4.5e-9,NaN,\
             ,17,fc3d_error,1e-8,default,1,,fc3d_error=4.5e-9;siconos_error=4.4e-9,,,,,,,,\n"
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
}
