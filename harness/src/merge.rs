//! `cpbench merge`: join the result folders of shards (`cpbench run --shard i/n`) into one.
//!
//! Rows are deduplicated by their run key (instance hash, solver, settings hash, profile) and
//! put in the canonical order of the first folder's manifest (instances, then solvers, then
//! profiles), which is the order of an unsharded `--jobs 1` run; the traces of the merged rows
//! are copied (renamed when the merged folder's file stems differ, see [`crate::names`]); the
//! manifest records the shard manifests; the convergence plots are drawn again from the traces.

use crate::error::{HarnessError, Result};
use crate::figures::draw_iteration_plots;
use crate::manifest::{Manifest, MergedFrom};
use crate::names::{trace_path, FileStems};
use crate::order::sort_canonical;
use crate::results::{read_summary, write_summary, SummaryRow};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Merge the result folders `inputs` into `out` (created; an existing `summary.csv` there is
/// replaced), holding its lock ([`crate::lock::FolderLock`]). Returns the merged rows. Errors:
/// `out` locked by another process, a folder without `summary.csv` or `manifest.json`, the same
/// run key with different results in two folders, I/O errors.
pub fn merge(out: &Path, inputs: &[PathBuf], plots: bool) -> Result<Vec<SummaryRow>> {
    let _lock = crate::lock::FolderLock::acquire(out)?;
    std::fs::create_dir_all(out.join("traces")).map_err(|e| HarnessError::io(out, e))?;
    let mut rows: Vec<SummaryRow> = Vec::new();
    let mut seen: HashMap<_, usize> = HashMap::new();
    let mut manifests = Vec::new();
    // (folder, row) of the first appearance of each run, for copying its trace
    let mut sources: Vec<(usize, SummaryRow)> = Vec::new();
    let mut folder_stems = Vec::new();
    for (k, dir) in inputs.iter().enumerate() {
        let m = Manifest::read(dir)?;
        let shard_rows = read_summary(&dir.join("summary.csv"))?;
        folder_stems.push(FileStems::from_rows(&shard_rows));
        for r in shard_rows {
            match seen.get(&r.key()) {
                Some(&i) => {
                    let a = &rows[i];
                    if a.iterations != r.iterations
                        || a.status != r.status
                        || a.success != r.success
                    {
                        return Err(HarnessError::Csv {
                            path: dir.join("summary.csv"),
                            message: format!(
                                "run {} / {} / {} appears in two folders with different results",
                                r.instance, r.solver, r.profile
                            ),
                        });
                    }
                }
                None => {
                    seen.insert(r.key(), rows.len());
                    sources.push((k, r.clone()));
                    rows.push(r);
                }
            }
        }
        manifests.push(MergedFrom {
            folder: dir.display().to_string(),
            manifest: m,
        });
    }
    // traces, renamed to the stems of the merged folder (instances of two shards may clash)
    let stems = FileStems::from_rows(&rows);
    for (k, r) in &sources {
        let from = inputs[*k].join(trace_path(
            &folder_stems[*k].of_row(r),
            &r.solver,
            &r.profile,
        ));
        if from.exists() {
            let to = out.join(trace_path(&stems.of_row(r), &r.solver, &r.profile));
            std::fs::copy(&from, &to).map_err(|err| HarnessError::io(&to, err))?;
        }
    }
    if let Some(first) = manifests.first() {
        sort_canonical(&mut rows, &first.manifest);
    }
    write_summary(&out.join("summary.csv"), &rows)?;
    // the first folder's manifest, no longer a shard, recording every folder's manifest
    let mut merged = manifests
        .first()
        .map(|m| m.manifest.clone())
        .unwrap_or_default();
    merged.shard = None;
    merged.merged_from = manifests;
    merged.write(out)?;
    if plots {
        // each instance's plot shows its rows' own check residual
        draw_iteration_plots(out, &rows, None, &Default::default())?;
    }
    Ok(rows)
}
