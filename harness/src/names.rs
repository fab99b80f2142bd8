//! File names of the per-instance outputs (traces, plots, report figures): one function maps an
//! instance to its file stem, so that every writer and every link agrees; [`trace_path`] and
//! [`plot_paths`] place a run's trace and an instance's plots in a results folder.
//!
//! The stem of an instance is its full name (dots included: `BoxesStack1-i100000-32.hdf5__ccp`
//! stays whole; extensions are appended, never substituted) made safe as a file name
//! ([`safe_file_name`]: characters outside `[A-Za-z0-9._-]` become `_`). Two instances of one
//! results folder must never share a stem, so a `-` and 8 hex digits of
//! `sha256(name "\n" instance hash)` are appended
//!
//! - when sanitising changed the name (`a/x` gives `a_x-1f2e3d4c`, which cannot meet an
//!   instance really named `a_x`), and
//! - when two different instances (different name, or same name and different data: two
//!   bundles both named `box`) would otherwise get the same stem, compared without case (for
//!   case-insensitive file systems).
//!
//! The stems depend on the set of instances of the folder (its `summary.csv` rows), which
//! [`FileStems`] holds; a run that adds a clashing instance to an existing folder renames the
//! earlier traces (see [`crate::run::run`]).

use crate::fsutil::safe_file_name;
use crate::results::SummaryRow;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The file stem of instance `name` (content hash `hash`): the sanitised name, with the
/// `-XXXXXXXX` suffix when sanitising changed it or when `clash` (see the module docs).
pub fn instance_stem(name: &str, hash: &str, clash: bool) -> String {
    let safe = safe_file_name(name);
    if safe == name && !clash && !name.is_empty() {
        return safe;
    }
    let d = Sha256::digest(format!("{name}\n{hash}").as_bytes());
    let tag: String = d.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{safe}-{tag}")
}

/// The file stems of the instances of one results folder, keyed by (name, instance hash).
#[derive(Clone, Debug, Default)]
pub struct FileStems {
    stems: HashMap<(String, String), String>,
}

impl FileStems {
    /// Stems of the instances `(name, hash)` (duplicates allowed), clashes resolved.
    pub fn new<'a>(instances: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut by_plain: HashMap<String, Vec<(String, String)>> = HashMap::new();
        for (name, hash) in instances {
            let plain = instance_stem(name, hash, false).to_lowercase();
            let v = by_plain.entry(plain).or_default();
            let key = (name.to_string(), hash.to_string());
            if !v.contains(&key) {
                v.push(key);
            }
        }
        let mut stems = HashMap::new();
        for group in by_plain.into_values() {
            let clash = group.len() > 1;
            for (name, hash) in group {
                let stem = instance_stem(&name, &hash, clash);
                stems.insert((name, hash), stem);
            }
        }
        FileStems { stems }
    }

    /// Stems of the instances of `rows`.
    pub fn from_rows(rows: &[SummaryRow]) -> Self {
        Self::new(
            rows.iter()
                .map(|r| (r.instance.as_str(), r.instance_hash.as_str())),
        )
    }

    /// The stem of instance `name` with hash `hash` ([`instance_stem`] without clash when the
    /// instance is not one of this set's).
    pub fn stem(&self, name: &str, hash: &str) -> String {
        self.stems
            .get(&(name.to_string(), hash.to_string()))
            .cloned()
            .unwrap_or_else(|| instance_stem(name, hash, false))
    }

    /// The stem of the instance of a summary row.
    pub fn of_row(&self, r: &SummaryRow) -> String {
        self.stem(&r.instance, &r.instance_hash)
    }
}

/// File-name suffix of a profile: `__<profile>` made safe as a file name, empty for
/// `default`.
pub fn profile_suffix(profile: &str) -> String {
    if profile == "default" {
        String::new()
    } else {
        format!("__{}", safe_file_name(profile))
    }
}

/// Trace file of a run, relative to the results folder: `traces/<stem>__<solver>[__<profile>].csv`
/// where `stem` is the instance's file stem ([`FileStems`]) and `solver` the variant label
/// ([`crate::fsutil::solver_file_name`]: `pgs@omega=0.8` kept as is).
pub fn trace_path(stem: &str, solver: &str, profile: &str) -> PathBuf {
    Path::new("traces").join(format!(
        "{stem}__{}{}.csv",
        crate::fsutil::solver_file_name(solver),
        profile_suffix(profile)
    ))
}

/// Plot files of an instance, relative to the results folder:
/// `(plots/<stem>[__<profile>].png, plots/<stem>[__<profile>].svg)`, `stem` as in
/// [`trace_path`]. The extensions are appended, so dots in the stem are kept.
pub fn plot_paths(stem: &str, profile: &str) -> (PathBuf, PathBuf) {
    let base = format!("{stem}{}", profile_suffix(profile));
    (
        Path::new("plots").join(format!("{base}.png")),
        Path::new("plots").join(format!("{base}.svg")),
    )
}
