//! The canonical order of a results folder's rows: instances, then solvers, then profiles, each
//! in the order of the folder's manifest (the order of an unsharded `--jobs 1` run).

use crate::manifest::Manifest;
use crate::results::SummaryRow;

/// Sort rows in the canonical order given by `manifest` (unknown entries last, stable).
pub fn sort_canonical(rows: &mut [SummaryRow], manifest: &Manifest) {
    let inst: Vec<&str> = manifest.instances.iter().map(|i| i.name.as_str()).collect();
    let solv: Vec<&str> = manifest.solvers.iter().map(|s| s.label()).collect();
    let prof: Vec<&str> = manifest.profiles.iter().map(|p| p.name.as_str()).collect();
    let pos = |v: &[&str], s: &str| v.iter().position(|x| *x == s).unwrap_or(usize::MAX);
    rows.sort_by_key(|r| {
        (
            pos(&inst, &r.instance),
            pos(&solv, &r.solver),
            pos(&prof, &r.profile),
        )
    });
}
