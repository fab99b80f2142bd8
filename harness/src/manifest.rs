//! `manifest.json`: what produced a results folder (revision, machine, versions, settings,
//! instances with their hashes and provenance, seeds), as the typed [`Manifest`] that `run` and
//! `merge` write and `merge` and `report` read.
//!
//! The JSON keeps the field names and nesting of the manifests written before the type existed
//! (keys in alphabetical order, a merged folder's shard manifests nested under `merged_from`);
//! every field has a default, so older manifests that lack a field still read, and fields this
//! version does not know are kept in [`Manifest::extra`] and written back unchanged.

use crate::error::{HarnessError, Result};
use crate::fsutil::write_json_atomic;
use cpbench_problems::{Instance, Provenance};
use cpbench_solvers::ExecSettings;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The contents of `manifest.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    /// Version of the `cpbench` that wrote the folder (`CARGO_PKG_VERSION`).
    pub cpbench_version: String,
    /// Creation time, RFC 3339 UTC ([`now_utc`]).
    pub created: String,
    /// Git revision ([`git_revision`]).
    pub git_revision: String,
    /// The machine ([`machine`]).
    pub machine: Machine,
    /// Suite name (`default`, `permon`, `instances`, ...).
    pub suite: String,
    /// Executor settings shared by the profiles. The tolerance is each profile's
    /// ([`Profile::exec_settings`]), so the JSON's `exec` has no `tol` (older manifests wrote
    /// a number no run used, or a note; either is ignored on reading).
    #[serde(with = "exec_json")]
    pub exec: ExecSettings,
    /// Settings profiles, in canonical order.
    pub profiles: Vec<Profile>,
    /// The harness's check.
    pub check: CheckRecord,
    /// Every k-th iteration recorded in the traces.
    pub trace_every: u64,
    /// Concurrent runs.
    pub jobs: usize,
    /// The shard this folder holds (`null`: the whole matrix, or a merged folder).
    pub shard: Option<Shard>,
    /// Runs executed by the call that wrote the manifest.
    pub runs_executed: usize,
    /// Runs skipped because their row was already in `summary.csv`.
    pub runs_skipped_as_present: usize,
    /// Random seeds (a sentence: every solver and instance is deterministic today).
    pub seeds: String,
    /// Solvers with their effective settings, in canonical order.
    pub solvers: Vec<SolverEntry>,
    /// Instances, in canonical order.
    pub instances: Vec<InstanceEntry>,
    /// Memory bandwidth of the machine, GB/s: the best STREAM-style triad
    /// ([`crate::bandwidth::triad`], `3 x 8` bytes per element, write-allocate not counted)
    /// over the threads the runs used ([`Self::bandwidth_threads`]). Measured when asked
    /// (`cpbench run --bandwidth`, always for the `scale` suite); left out of the JSON
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_gbs: Option<f64>,
    /// Threads of the rayon pool the triad ran on: the pool the runs' kernels use (`jobs`
    /// threads, or every thread when runs execute one at a time on the whole machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_threads: Option<usize>,
    /// How the summary's `peak_rss_bytes` was measured ([`crate::memory::PeakMethod`]:
    /// `vmhwm-reset` = the peak during each run, `vmhwm-process` or `getrusage` = the
    /// process's peak so far); left out when not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_method: Option<String>,
    /// Runs executed one at a time on rayon's global pool, so that the kernels inside a run
    /// (the `N`-product of large instances) use every thread (the `scale` suite); left out
    /// of the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub whole_machine: bool,
    /// A merged folder ([`crate::merge`]): the manifests of the folders it was merged from, in
    /// argument order (left out of the JSON when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedFrom>,
    /// Timed solves per run (`cpbench run --repeat K`): `time_s` is their median, and the
    /// summary's `time_min_s` / `time_max_s` their range (left out of the JSON when 1).
    #[serde(skip_serializing_if = "is_one")]
    pub repeat: usize,
    /// The machine's load when the runs started ([`crate::load::LoadSample`]); left out when
    /// not sampled (files written before it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_start: Option<crate::load::LoadSample>,
    /// The machine's load when the runs ended; the manifest is written again with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_end: Option<crate::load::LoadSample>,
    /// Fields this version does not know (from another version), kept as read.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

fn is_one(v: &usize) -> bool {
    *v <= 1
}

/// `exec` without `tol` (the tolerance lives in `profiles[].tol`); a `tol` in an older
/// manifest (a number, or the note "per profile: see profiles[].tol") is ignored.
mod exec_json {
    use cpbench_solvers::ExecSettings;
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;

    pub fn serialize<S: Serializer>(e: &ExecSettings, s: S) -> Result<S::Ok, S::Error> {
        let mut v = serde_json::to_value(e).map_err(S::Error::custom)?;
        if let Some(o) = v.as_object_mut() {
            o.remove("tol");
        }
        v.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ExecSettings, D::Error> {
        let mut v = Value::deserialize(d)?;
        if let Some(o) = v.as_object_mut() {
            o.remove("tol");
        }
        serde_json::from_value(v).map_err(D::Error::custom)
    }
}

/// The `machine` object of a manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Machine {
    /// `std::env::consts::OS`.
    pub os: String,
    /// `std::env::consts::ARCH`.
    pub arch: String,
    /// Logical CPUs (`available_parallelism`).
    pub logical_cpus: usize,
    /// Threads of rayon's global pool.
    pub rayon_threads: usize,
    /// Host name ([`host_name`]).
    pub hostname: String,
}

/// The `check` object of a manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckRecord {
    /// The residual checked (`ResidualKind::as_str`), or `class default`.
    pub residual: String,
}

/// A solver of a manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SolverEntry {
    /// Variant label (the summary's `solver` column); manifests written before variants
    /// existed read it as empty, meaning `name` (and write it back without the field).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// Registry name.
    pub name: String,
    /// Effective settings (the JSON object of the solver's settings struct).
    pub settings: Value,
    /// Settings hash ([`crate::run::settings_hash`]) per profile name.
    pub settings_hash: BTreeMap<String, String>,
}

impl SolverEntry {
    /// The variant label, or the registry name for manifests without labels.
    pub fn label(&self) -> &str {
        if self.label.is_empty() {
            &self.name
        } else {
            &self.label
        }
    }
}

/// An instance of a manifest ([`instance_entry`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InstanceEntry {
    /// Full instance name.
    pub name: String,
    /// Problem class (`lcp`, `boxqp`, `ccp`, `coulomb`).
    pub class: String,
    /// Dimension of `gamma`.
    pub n: usize,
    /// Stored non-zeros of `N`.
    pub nnz: usize,
    /// Content hash (SHA-256, hex).
    pub hash: String,
    /// Where the instance came from.
    pub provenance: Provenance,
    /// Storage behind its `N`-products (`csc`, `block`, `matrix-free`); empty (and left out
    /// of the JSON) in manifests written before it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub operator: String,
    /// Bytes one `N`-product reads ([`Instance::operator_bytes`]); left out when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_bytes: Option<u64>,
}

/// A folder a merged folder was made from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MergedFrom {
    /// The folder, as given to `cpbench merge`.
    pub folder: String,
    /// Its manifest.
    pub manifest: Manifest,
}

impl Manifest {
    /// Read `dir/manifest.json`. Errors: [`HarnessError::Io`] when it cannot be read,
    /// [`HarnessError::Csv`] naming the file when it is not a manifest.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let p = dir.join("manifest.json");
        let text = std::fs::read_to_string(&p).map_err(|e| HarnessError::io(&p, e))?;
        serde_json::from_str(&text).map_err(|e| HarnessError::Csv {
            path: p,
            message: e.to_string(),
        })
    }

    /// Write `dir/manifest.json` atomically, pretty-printed with the keys in alphabetical
    /// order (as every manifest so far). Errors: I/O errors.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let value = serde_json::to_value(self).unwrap_or_default();
        write_json_atomic(&dir.join("manifest.json"), &value)
    }
}

/// A settings profile (qpbenchmark's third axis): a name and the tolerance used both by the
/// stopping test and by the harness's check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// `default`, `low`, `high` or `custom`.
    pub name: String,
    /// Tolerance on the chosen residual.
    pub tol: f64,
}

impl Profile {
    /// The executor settings of this profile's runs: `base` with the profile's `tol`, the one
    /// number that stops the solver and that the harness checks the answer against.
    pub fn exec_settings(&self, base: &ExecSettings) -> ExecSettings {
        ExecSettings {
            tol: self.tol,
            ..base.clone()
        }
    }

    /// The built-in profiles: `default` (1e-6), `low` (1e-4), `high` (1e-8).
    pub fn builtin(name: &str) -> Option<Profile> {
        let tol = match name {
            "default" => cpbench_solvers::executor::DEFAULT_TOL,
            "low" => 1e-4,
            "high" => 1e-8,
            _ => return None,
        };
        Some(Profile {
            name: name.into(),
            tol,
        })
    }
}

/// A 1-based shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based index.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    /// Parse `i/n` with `1 <= i <= n`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (a, b) = s
            .split_once('/')
            .ok_or_else(|| format!("shard '{s}' is not of the form i/n"))?;
        let index: usize = a
            .trim()
            .parse()
            .map_err(|_| format!("bad shard index in '{s}'"))?;
        let count: usize = b
            .trim()
            .parse()
            .map_err(|_| format!("bad shard count in '{s}'"))?;
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard '{s}' needs 1 <= i <= n"));
        }
        Ok(Shard { index, count })
    }
}

/// Git revision of the working directory (`git rev-parse HEAD`, with `-dirty` when tracked
/// files outside `results/` have uncommitted changes); outside a checkout, the revision the binary was built from with the
/// suffix ` (build)`, or `unknown`.
pub fn git_revision() -> String {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(rev) if !rev.is_empty() => {
            // the revision describes the code: results being written (under `results/`, e.g.
            // a recipe regenerating its committed folder) do not make it dirty
            let dirty = run(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ":(top)",
                ":(top,exclude)results",
            ])
            .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{rev}-dirty")
            } else {
                rev
            }
        }
        _ => format!("{} (build)", env!("CPBENCH_BUILD_GIT_REV")),
    }
}

/// Host name from `/etc/hostname` (`unknown` when unreadable or empty), as written in the
/// manifest and in lock files.
pub fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Machine description: OS, architecture, logical CPUs, host name, rayon threads.
pub fn machine() -> Machine {
    Machine {
        os: std::env::consts::OS.into(),
        arch: std::env::consts::ARCH.into(),
        logical_cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        rayon_threads: rayon::current_num_threads(),
        hostname: host_name(),
    }
}

/// Current UTC time as `(YYYYmmdd-HHMMSS, RFC 3339)`.
pub fn now_utc() -> (String, String) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // civil-from-days (Howard Hinnant's algorithm)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        format!("{y:04}{m:02}{d:02}-{h:02}{mi:02}{s:02}"),
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z"),
    )
}

/// Manifest entry of an instance.
pub fn instance_entry(inst: &Instance) -> InstanceEntry {
    InstanceEntry {
        name: inst.name().to_string(),
        class: inst.class().as_str().to_string(),
        n: inst.n(),
        nnz: inst.nnz(),
        hash: inst.hash().to_string(),
        provenance: inst.provenance().clone(),
        operator: inst.operator_kind().as_str().to_string(),
        operator_bytes: Some(inst.operator_bytes()),
    }
}
