//! Regression testing of solver accuracy (`cpbench check DIR --baseline FILE`).
//!
//! A baseline is a CSV of the deterministic outcome of each (instance, solver, profile):
//! `instance, solver, profile, success, status, iterations, matvecs, residual, check_residual,
//! tol, instance_hash, settings_hash, settings` (times are never stored nor compared; `solver` is
//! the variant label, `settings` the JSON of every setting of the run, as in `summary.csv`;
//! baselines written before that column read with it empty). A current run
//! *regresses* on a baseline row when
//! - the row is missing from the run,
//! - a checked success became a failure,
//! - its checked residual got worse than `max(baseline_residual * residual_factor, tol)`,
//! - its iterations grew beyond `baseline * (1 + iter_growth) + iter_slack`.
//!
//! A row of the run the baseline lacks ([`new_rows`]: a new variant, instance or profile) fails
//! the check when it failed itself ([`new_row_fails`]), unless the caller accepts new rows
//! (`cpbench check --allow-new`).
//!
//! Improvements (failure to success, fewer iterations, smaller residual) and changed instance or
//! settings hashes are reported, never failures. A changed setting is named by its flattened key
//! path ([`settings_diff`]: `exec.max_iter 20000 -> 1000`, `pgs.omega 1.0 -> 0.8`) when both
//! rows carry the settings JSON, else reported by hash only.

use crate::error::{HarnessError, Result};
use crate::fsutil::write_atomic;
use crate::results::{read_named_columns, RowStatus, SummaryRow};
use cpbench_problems::ResidualKind;
use std::collections::HashMap;
use std::path::Path;

/// Thresholds of the check.
#[derive(Clone, Copy, Debug)]
pub struct RegressionOptions {
    /// Allowed growth factor of the checked residual (default 10).
    pub residual_factor: f64,
    /// Allowed relative growth of the iteration count (default 0.10).
    pub iter_growth: f64,
    /// Allowed absolute growth of the iteration count on top (default 2: counts of a few
    /// iterations may move by one when the last bits of the data change across CPUs).
    pub iter_slack: u64,
}

impl Default for RegressionOptions {
    fn default() -> Self {
        Self {
            residual_factor: 10.0,
            iter_growth: 0.10,
            iter_slack: 2,
        }
    }
}

/// One baseline row.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselineRow {
    /// Instance name.
    pub instance: String,
    /// Solver variant label (the summary's `solver`: `pgs`, `pgs@omega=0.8`).
    pub solver: String,
    /// Settings profile.
    pub profile: String,
    /// Checked success.
    pub success: bool,
    /// Claimed status.
    pub status: RowStatus,
    /// Iterations.
    pub iterations: u64,
    /// `N`-products.
    pub matvecs: u64,
    /// Checked residual (the `check_residual` column's value).
    pub residual: f64,
    /// Which residual.
    pub check_residual: String,
    /// Tolerance of the check.
    pub tol: f64,
    /// Instance content hash.
    pub instance_hash: String,
    /// Settings hash.
    pub settings_hash: String,
    /// Every setting of the run as compact JSON (`{"exec":{..},"settings":{..},"solver":..}`,
    /// what the hash hashes); empty in baselines and summaries written before the column.
    pub settings: String,
}

const HEADER: [&str; 13] = [
    "instance",
    "solver",
    "profile",
    "success",
    "status",
    "iterations",
    "matvecs",
    "residual",
    "check_residual",
    "tol",
    "instance_hash",
    "settings_hash",
    "settings",
];

/// Columns a baseline may lack (files written before they were added read them as empty).
const OPTIONAL: [&str; 1] = ["settings"];

impl BaselineRow {
    /// The baseline row of a summary row.
    pub fn from_summary(r: &SummaryRow) -> Self {
        Self {
            instance: r.instance.clone(),
            solver: r.solver.clone(),
            profile: r.profile.clone(),
            success: r.success,
            status: r.status,
            iterations: r.iterations,
            matvecs: r.matvecs,
            residual: r
                .residuals
                .get(ResidualKind::parse(&r.check_residual).unwrap_or_default()),
            check_residual: r.check_residual.clone(),
            tol: r.tol,
            instance_hash: r.instance_hash.clone(),
            settings_hash: r.settings_hash.clone(),
            settings: r.settings.clone(),
        }
    }

    fn key(&self) -> (String, String, String) {
        (
            self.instance.clone(),
            self.solver.clone(),
            self.profile.clone(),
        )
    }
}

/// Write a baseline file (atomically) from summary rows.
pub fn write_baseline(path: &Path, rows: &[SummaryRow]) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| HarnessError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    w.write_record(HEADER).map_err(err)?;
    for r in rows.iter().map(BaselineRow::from_summary) {
        w.write_record([
            r.instance,
            r.solver,
            r.profile,
            if r.success { "yes" } else { "no" }.into(),
            r.status.as_str().to_string(),
            r.iterations.to_string(),
            r.matvecs.to_string(),
            format!("{:e}", r.residual),
            r.check_residual,
            format!("{:e}", r.tol),
            r.instance_hash,
            r.settings_hash,
            r.settings,
        ])
        .map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| HarnessError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    write_atomic(path, &bytes)
}

/// Read a baseline file; a file without the `settings` column (written before it was added)
/// reads with empty settings. Errors name the file and line.
pub fn read_baseline(path: &Path) -> Result<Vec<BaselineRow>> {
    let err = |m: String| HarnessError::Csv {
        path: path.to_path_buf(),
        message: m,
    };
    let mut rdr = csv::Reader::from_path(path).map_err(|e| err(e.to_string()))?;
    let mut out = Vec::new();
    for r in read_named_columns(&mut rdr, &HEADER, &OPTIONAL, &err)? {
        let r = r?;
        out.push(BaselineRow {
            instance: r.text(0),
            solver: r.text(1),
            profile: r.text(2),
            success: r.text(3) == "yes",
            status: RowStatus::parse(&r.text(4)).map_err(|m| r.error(&m))?,
            iterations: r.num(5)? as u64,
            matvecs: r.num(6)? as u64,
            residual: r.num(7)?,
            check_residual: r.text(8),
            tol: r.num(9)?,
            instance_hash: r.text(10),
            settings_hash: r.text(11),
            settings: r.text(12),
        });
    }
    Ok(out)
}

/// Outcome of one compared row.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Within thresholds, no change worth noting.
    Same,
    /// Better than the baseline.
    Improved(String),
    /// Worse beyond thresholds: the check fails.
    Regressed(String),
    /// Within thresholds, but worth a note (changed hash, small drift).
    Note(String),
}

/// A compared row.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The baseline row.
    pub baseline: BaselineRow,
    /// The current row, if present.
    pub current: Option<BaselineRow>,
    /// The verdict.
    pub verdict: Verdict,
    /// What changed in the settings when the hashes differ: the changed key paths
    /// ([`settings_diff`], `exec.max_iter 20000 -> 1000`), or `(hash)` when a side lacks the
    /// settings JSON; `None` when the hashes agree or the row is missing.
    pub settings_change: Option<String>,
}

/// Compare a run with a baseline; `failed()` on the result tells whether anything regressed.
pub fn compare(
    baseline: &[BaselineRow],
    current: &[SummaryRow],
    opts: RegressionOptions,
) -> Vec<Comparison> {
    let cur: HashMap<_, BaselineRow> = current
        .iter()
        .map(BaselineRow::from_summary)
        .map(|r| (r.key(), r))
        .collect();
    baseline
        .iter()
        .map(|b| {
            let c = cur.get(&b.key()).cloned();
            let settings_change = c.as_ref().and_then(|c| settings_change(b, c));
            let verdict = match &c {
                None => Verdict::Regressed("missing from the run".into()),
                Some(c) => judge(b, c, opts, settings_change.as_deref()),
            };
            Comparison {
                baseline: b.clone(),
                current: c,
                verdict,
                settings_change,
            }
        })
        .collect()
}

/// The settings change between two rows with different settings hashes: [`settings_diff`] of
/// their JSON, or `(hash)` when either lacks it (or it does not parse, or nothing differs).
fn settings_change(b: &BaselineRow, c: &BaselineRow) -> Option<String> {
    if b.settings_hash == c.settings_hash {
        return None;
    }
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
    let diff = match (parse(&b.settings), parse(&c.settings)) {
        (Some(x), Some(y)) => settings_diff(&x, &y),
        _ => Vec::new(),
    };
    Some(if diff.is_empty() {
        "(hash)".to_string()
    } else {
        diff.join(", ")
    })
}

/// The differences of two settings JSON objects (`{"exec":{..},"settings":{..},"solver":..}`)
/// as `path old -> new`, one per changed leaf, in key order. Paths are the flattened keys
/// (`exec.max_iter`); the solver's own settings are shown under the solver's name
/// (`settings.omega` of solver `pgs` as `pgs.omega`); a key on one side only shows `(none)` on
/// the other.
pub fn settings_diff(old: &serde_json::Value, new: &serde_json::Value) -> Vec<String> {
    let mut a = Vec::new();
    let mut b = Vec::new();
    flatten("", old, &mut a);
    flatten("", new, &mut b);
    let solver = new
        .get("solver")
        .or_else(|| old.get("solver"))
        .and_then(|s| s.as_str())
        .unwrap_or("settings")
        .to_string();
    let rename = |k: &str| match k.strip_prefix("settings.") {
        Some(rest) => format!("{solver}.{rest}"),
        None => k.to_string(),
    };
    let a: std::collections::BTreeMap<_, _> = a.into_iter().collect();
    let b: std::collections::BTreeMap<_, _> = b.into_iter().collect();
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let none = "(none)".to_string();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "{} {} -> {}",
                rename(k),
                a.get(k).unwrap_or(&none),
                b.get(k).unwrap_or(&none)
            )
        })
        .collect()
}

/// `(dotted path, value as JSON text)` of every leaf of `v` (an empty object is a leaf).
pub(crate) fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, out);
            }
        }
        _ => out.push((prefix.to_string(), v.to_string())),
    }
}

fn judge(
    b: &BaselineRow,
    c: &BaselineRow,
    o: RegressionOptions,
    settings: Option<&str>,
) -> Verdict {
    let mut bad = Vec::new();
    let mut good = Vec::new();
    if b.success && !c.success {
        bad.push("success -> failure".to_string());
    }
    if !b.success && c.success {
        good.push("failure -> success".to_string());
    }
    let limit = (b.residual * o.residual_factor).max(b.tol);
    // a NaN residual regresses too
    if c.residual.is_nan() || c.residual > limit {
        bad.push(format!("residual {:.2e} > limit {:.2e}", c.residual, limit));
    } else if c.residual < b.residual / o.residual_factor {
        good.push(format!("residual {:.2e} -> {:.2e}", b.residual, c.residual));
    }
    let it_limit = (b.iterations as f64 * (1.0 + o.iter_growth)).floor() as u64 + o.iter_slack;
    if c.iterations > it_limit {
        bad.push(format!(
            "iterations {} -> {} (limit {it_limit})",
            b.iterations, c.iterations
        ));
    } else if c.iterations < b.iterations {
        good.push(format!("iterations {} -> {}", b.iterations, c.iterations));
    }
    let mut changed = Vec::new();
    if let Some(s) = settings {
        changed.push(format!("settings changed: {s}"));
    }
    if c.instance_hash != b.instance_hash {
        changed.push("instance data changed (hash)".to_string());
    }
    let with_changes = |mut v: Vec<String>| {
        v.extend(changed.iter().cloned());
        v.join("; ")
    };
    if !bad.is_empty() {
        return Verdict::Regressed(with_changes(bad));
    }
    if !good.is_empty() {
        return Verdict::Improved(with_changes(good));
    }
    let mut notes = Vec::new();
    if c.iterations != b.iterations {
        notes.push(format!("iterations {} -> {}", b.iterations, c.iterations));
    }
    if notes.is_empty() && changed.is_empty() {
        Verdict::Same
    } else {
        Verdict::Note(with_changes(notes))
    }
}

/// The rows of a run that the baseline lacks (a new variant, instance or profile), in the
/// run's order, as baseline rows. `cpbench check` lists them; a failing one ([`new_row_fails`])
/// fails the check unless `--allow-new`.
pub fn new_rows(baseline: &[BaselineRow], current: &[SummaryRow]) -> Vec<BaselineRow> {
    let known: std::collections::HashSet<_> = baseline.iter().map(|b| b.key()).collect();
    current
        .iter()
        .map(BaselineRow::from_summary)
        .filter(|r| !known.contains(&r.key()))
        .collect()
}

/// Whether a new row is a failure: not a checked success and not a refusal (status
/// `unsupported`: the solver declined the instance's class, see [`crate::results::REFUSED`]).
pub fn new_row_fails(r: &BaselineRow) -> bool {
    !r.success && !r.status.is_refused()
}

/// The listing of the new rows (empty string when there are none): one line per row, failing
/// rows first and marked `NEW FAIL` with their status, then a line saying what they do to the
/// check (`allow_new`: accepted) and how to add them to the baseline.
pub fn format_new_rows(new: &[BaselineRow], allow_new: bool) -> String {
    if new.is_empty() {
        return String::new();
    }
    let mut rows: Vec<&BaselineRow> = new.iter().collect();
    rows.sort_by_key(|r| !new_row_fails(r));
    let w = rows
        .iter()
        .map(|r| r.solver.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut s = format!(
        "{} rows of the run are not in the baseline:\n{:<10} {:<34} {:<w$} {:<8} {:<14} {:>9} {:>10}\n",
        new.len(),
        "verdict",
        "instance",
        "solver",
        "profile",
        "status",
        "iter",
        "residual"
    );
    for r in &rows {
        let v = if new_row_fails(r) { "NEW FAIL" } else { "new" };
        // a refusal ran nothing: no count, no residual
        let (it, res) = if r.status.is_refused() {
            ("-".to_string(), "-".to_string())
        } else {
            (r.iterations.to_string(), format!("{:.2e}", r.residual))
        };
        s.push_str(&format!(
            "{:<10} {:<34} {:<w$} {:<8} {:<14} {:>9} {:>10}\n",
            v, r.instance, r.solver, r.profile, r.status, it, res
        ));
    }
    let n_fail = new.iter().filter(|r| new_row_fails(r)).count();
    if n_fail > 0 && !allow_new {
        s.push_str(&format!(
            "{n_fail} new rows failed: the check fails (--allow-new accepts new rows; --update writes them into the baseline)\n"
        ));
    } else if n_fail > 0 {
        s.push_str(&format!(
            "{n_fail} new rows failed, accepted by --allow-new (--update writes them into the baseline)\n"
        ));
    } else {
        s.push_str("no new row failed (--update writes them into the baseline)\n");
    }
    s
}

/// Whether any comparison regressed.
pub fn failed(cmp: &[Comparison]) -> bool {
    cmp.iter()
        .any(|c| matches!(c.verdict, Verdict::Regressed(_)))
}

/// The report of a comparison. Regressed rows come first, as a table whose `detail` names
/// what regressed and any changed setting; no table when nothing regressed. Then one line
/// summarising the notes and improvements (`66 notes: 66 settings changed (exec.max_iter 20000
/// -> 1000); 3 improved`), or, with `verbose`, their rows in the table too. Last, a count line.
pub fn format_comparison(cmp: &[Comparison], verbose: bool) -> String {
    let rank = |c: &Comparison| match c.verdict {
        Verdict::Regressed(_) => 0,
        Verdict::Improved(_) => 1,
        Verdict::Note(_) => 2,
        Verdict::Same => 3,
    };
    let mut shown: Vec<&Comparison> = cmp
        .iter()
        .filter(|c| rank(c) == 0 || (verbose && rank(c) < 3))
        .collect();
    shown.sort_by_key(|c| rank(c));
    let w = cmp
        .iter()
        .map(|c| c.baseline.solver.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut s = String::new();
    if !shown.is_empty() {
        s.push_str(&format!(
            "{:<10} {:<34} {:<w$} {:<8} {:>9} {:>9} {:>10} {:>10}  {}\n",
            "verdict",
            "instance",
            "solver",
            "profile",
            "iter base",
            "iter now",
            "res base",
            "res now",
            "detail"
        ));
    }
    for c in &shown {
        let (v, d) = match &c.verdict {
            Verdict::Regressed(d) => ("REGRESSED", d.as_str()),
            Verdict::Improved(d) => ("improved", d.as_str()),
            Verdict::Note(d) => ("note", d.as_str()),
            Verdict::Same => ("same", ""),
        };
        let (it, res) = match &c.current {
            Some(x) => (x.iterations.to_string(), format!("{:.2e}", x.residual)),
            None => ("-".into(), "-".into()),
        };
        s.push_str(&format!(
            "{:<10} {:<34} {:<w$} {:<8} {:>9} {:>9} {:>10.2e} {:>10}  {}\n",
            v,
            c.baseline.instance,
            c.baseline.solver,
            c.baseline.profile,
            c.baseline.iterations,
            it,
            c.baseline.residual,
            res,
            d
        ));
    }
    let count = |r: usize| cmp.iter().filter(|c| rank(c) == r).count();
    let (n_reg, n_imp, n_note) = (count(0), count(1), count(2));
    if !verbose && n_imp + n_note > 0 {
        s.push_str(&summarise(cmp, n_imp, n_note));
    }
    s.push_str(&format!(
        "{} baseline rows: {} regressed, {} improved, {} unchanged or within thresholds\n",
        cmp.len(),
        n_reg,
        n_imp,
        cmp.len() - n_reg - n_imp
    ));
    s
}

/// One line on the notes and improvements: how many, and what changed (settings changes
/// grouped by what changed, most frequent first, at most 3 named).
fn summarise(cmp: &[Comparison], n_imp: usize, n_note: usize) -> String {
    let notes: Vec<&Comparison> = cmp
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Note(_)))
        .collect();
    let mut parts = Vec::new();
    let mut groups: Vec<(&str, usize)> = Vec::new();
    for c in &notes {
        if let Some(ch) = c.settings_change.as_deref() {
            match groups.iter_mut().find(|(g, _)| *g == ch) {
                Some(g) => g.1 += 1,
                None => groups.push((ch, 1)),
            }
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.1));
    let n_settings: usize = groups.iter().map(|g| g.1).sum();
    if n_settings > 0 {
        let mut named: Vec<String> = groups
            .iter()
            .take(3)
            .map(|(g, n)| {
                if groups.len() == 1 {
                    g.to_string()
                } else {
                    format!("{n}: {g}")
                }
            })
            .collect();
        if groups.len() > 3 {
            named.push(format!("{} more", groups.len() - 3));
        }
        parts.push(format!(
            "{n_settings} settings changed ({})",
            named.join("; ")
        ));
    }
    // Notes whose current row differs from the baseline row in one field.
    let n_differ = |differs: fn(&BaselineRow, &BaselineRow) -> bool| {
        notes
            .iter()
            .filter(|c| c.current.as_ref().is_some_and(|x| differs(x, &c.baseline)))
            .count()
    };
    let n_inst = n_differ(|x, b| x.instance_hash != b.instance_hash);
    if n_inst > 0 {
        parts.push(format!("{n_inst} instance data changed (hash)"));
    }
    let n_iter = n_differ(|x, b| x.iterations != b.iterations);
    if n_iter > 0 {
        parts.push(format!("{n_iter} iterations changed within thresholds"));
    }
    let mut line = String::new();
    if n_note > 0 {
        line.push_str(&format!("{n_note} notes: {}", parts.join(", ")));
    }
    if n_imp > 0 {
        if !line.is_empty() {
            line.push_str("; ");
        }
        line.push_str(&format!("{n_imp} improved"));
    }
    line.push_str(" (--verbose lists them)\n");
    line
}
