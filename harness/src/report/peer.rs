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
