//! Measured wall times of the recipes, for `cpbench reproduce --list`.
//!
//! Every recipe run into its default folder ([`super::reproduce`], `results/reproduce/<id>` or
//! `<id>-quick`) records its wall time, its size (`full` or `quick`), its timed repeats, how
//! many of its verdicts it decided and the machine in `results/reproduce/timings.csv`,
//! replacing the earlier row of the same recipe and size (a run into another folder has the
//! same numbers in its `reproduce.json`). `--list` shows the rows of
//! `results/reproduce/timings.csv` under the working directory when there is one, else the
//! copy committed with the source (built into the binary), and says when they were measured on
//! another kind of machine than the one it runs on.
//!
//! Columns: `recipe, size, wall_s, repeat, decided, verdicts, logical_cpus, cpu, git_revision,
//! finished` (`decided`: verdicts other than "not decided"; `finished`: RFC 3339, UTC).

use cpbench_harness::error::{HarnessError, Result};
use cpbench_harness::fsutil::write_atomic;
use cpbench_harness::results::read_named_columns;
use std::path::Path;

/// File name of the timings table.
pub const TIMINGS_FILE: &str = "timings.csv";

/// The timings committed with the source (`results/reproduce/timings.csv`).
const COMMITTED: &str = include_str!("../../results/reproduce/timings.csv");

const HEADER: &str =
    "recipe,size,wall_s,repeat,decided,verdicts,logical_cpus,cpu,git_revision,started";

/// One measured recipe run.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// Recipe id.
    pub recipe: String,
    /// `full` or `quick`.
    pub size: String,
    /// Wall time of the recipe, s.
    pub wall_s: f64,
    /// Timed repeats per compared solve (`--repeat`).
    pub repeat: usize,
    /// Verdicts decided (match, no match, claim holds, claim not reproduced).
    pub decided: usize,
    /// All verdicts of the run.
    pub verdicts: usize,
    /// Logical CPUs of the machine.
    pub logical_cpus: usize,
    /// CPU model (`/proc/cpuinfo`'s `model name`; the architecture elsewhere).
    pub cpu: String,
    /// Git revision of the build.
    pub git_revision: String,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
}

/// The CPU model of this machine: the first `model name` of `/proc/cpuinfo` (Linux), else the
/// architecture.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Parse a timings table; `source` names it in errors. Errors: a missing column, a malformed
/// number (naming the line).
pub fn parse_timings(text: &str, source: &str) -> Result<Vec<Timing>> {
    let err = |m: String| HarnessError::Invalid(format!("timings {source}: {m}"));
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let names: Vec<&str> = HEADER.split(',').collect();
    let mut out = Vec::new();
    for r in read_named_columns(&mut rdr, &names, &[], &err)? {
        let r = r?;
        out.push(Timing {
            recipe: r.text(0),
            size: r.text(1),
            wall_s: r.num(2)?,
            repeat: r.num(3)? as usize,
            decided: r.num(4)? as usize,
            verdicts: r.num(5)? as usize,
            logical_cpus: r.num(6)? as usize,
            cpu: r.text(7),
            git_revision: r.text(8),
            started: r.text(9),
        });
    }
    Ok(out)
}

/// The table as CSV text, rows sorted by recipe and size.
pub fn timings_csv(rows: &[Timing]) -> String {
    let mut rows = rows.to_vec();
    rows.sort_by(|a, b| (&a.recipe, &a.size).cmp(&(&b.recipe, &b.size)));
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(HEADER.split(','));
    for t in &rows {
        let _ = w.write_record([
            t.recipe.clone(),
            t.size.clone(),
            format!("{:.3}", t.wall_s),
            t.repeat.to_string(),
            t.decided.to_string(),
            t.verdicts.to_string(),
            t.logical_cpus.to_string(),
            t.cpu.clone(),
            t.git_revision.clone(),
            t.started.clone(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// Record `t` in `dir/timings.csv`, replacing the row of the same recipe and size (a missing
/// or unreadable file starts a new table). Errors: I/O errors.
pub fn record_timing(dir: &Path, t: Timing) -> Result<()> {
    let path = dir.join(TIMINGS_FILE);
    let mut rows = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| parse_timings(&s, &path.display().to_string()).ok())
        .unwrap_or_default();
    rows.retain(|r| !(r.recipe == t.recipe && r.size == t.size));
    rows.push(t);
    write_atomic(&path, timings_csv(&rows).as_bytes())
}

/// The timings `--list` shows, and where they come from: `results/reproduce/timings.csv`
/// under `cwd` when it parses, else the committed copy built into the binary.
pub fn known_timings(cwd: &Path) -> (Vec<Timing>, String) {
    let local = cwd.join("results/reproduce").join(TIMINGS_FILE);
    if let Ok(s) = std::fs::read_to_string(&local) {
        if let Ok(rows) = parse_timings(&s, &local.display().to_string()) {
            return (rows, local.display().to_string());
        }
    }
    (
        parse_timings(COMMITTED, "built in").unwrap_or_default(),
        "the table built into this binary (results/reproduce/timings.csv of its source)".into(),
    )
}

/// A `--list` cell for one recipe and size: `1m 52s` or `0.26 s`, with `decides k of n` for
/// quick runs; `not measured` without a row.
pub fn cell(rows: &[Timing], recipe: &str, size: &str) -> String {
    match rows.iter().find(|r| r.recipe == recipe && r.size == size) {
        None => "not measured".into(),
        Some(t) if size == "quick" => format!(
            "{} (decides {} of {})",
            super::fmt_duration(t.wall_s),
            t.decided,
            t.verdicts
        ),
        Some(t) => super::fmt_duration(t.wall_s),
    }
}

/// The machines the rows were measured on that differ from this one (`2 CPUs, <model>`), for
/// a note under `--list`.
pub fn other_machines(rows: &[Timing]) -> Vec<String> {
    let (cpus, cpu) = (
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu_model(),
    );
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        if r.logical_cpus != cpus || (r.cpu != cpu && r.cpu != "not recorded") {
            let m = format!("{} logical CPUs, {}", r.logical_cpus, r.cpu);
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}
