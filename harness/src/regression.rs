//! Regression testing of solver accuracy (`cpbench check DIR --baseline FILE`).
//!
//! A baseline is a CSV of the deterministic outcome of each (instance, solver, profile):
//! `instance, solver, profile, success, status, iterations, matvecs, residual, check_residual,
//! tol, instance_hash, settings_hash` (times are never stored nor compared). A current run
//! *regresses* on a baseline row when
//! - the row is missing from the run,
//! - a checked success became a failure,
//! - its checked residual got worse than `max(baseline_residual * residual_factor, tol)`,
//! - its iterations grew beyond `baseline * (1 + iter_growth) + iter_slack`.
//!
//! Improvements (failure to success, fewer iterations, smaller residual) and changed instance or
//! settings hashes are reported, never failures.

use crate::error::{HarnessError, Result};
use crate::fsutil::write_atomic;
use crate::results::SummaryRow;
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
    /// Solver name.
    pub solver: String,
    /// Settings profile.
    pub profile: String,
    /// Checked success.
    pub success: bool,
    /// Claimed status.
    pub status: String,
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
}

const HEADER: [&str; 12] = [
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
];

impl BaselineRow {
    /// The baseline row of a summary row.
    pub fn from_summary(r: &SummaryRow) -> Self {
        Self {
            instance: r.instance.clone(),
            solver: r.solver.clone(),
            profile: r.profile.clone(),
            success: r.success,
            status: r.status.clone(),
            iterations: r.iterations,
            matvecs: r.matvecs,
            residual: r
                .residuals
                .get(ResidualKind::parse(&r.check_residual).unwrap_or_default()),
            check_residual: r.check_residual.clone(),
            tol: r.tol,
            instance_hash: r.instance_hash.clone(),
            settings_hash: r.settings_hash.clone(),
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
            r.status,
            r.iterations.to_string(),
            r.matvecs.to_string(),
            format!("{:e}", r.residual),
            r.check_residual,
            format!("{:e}", r.tol),
            r.instance_hash,
            r.settings_hash,
        ])
        .map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| HarnessError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    write_atomic(path, &bytes)
}

/// Read a baseline file. Errors name the file and line.
pub fn read_baseline(path: &Path) -> Result<Vec<BaselineRow>> {
    let err = |m: String| HarnessError::Csv {
        path: path.to_path_buf(),
        message: m,
    };
    let mut rdr = csv::Reader::from_path(path).map_err(|e| err(e.to_string()))?;
    let header = rdr.headers().map_err(|e| err(e.to_string()))?.clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| err(format!("missing column '{name}'")))
    };
    let c: Vec<usize> = HEADER.iter().map(|h| col(h)).collect::<Result<_>>()?;
    let mut out = Vec::new();
    for (k, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| err(e.to_string()))?;
        let line = k + 2;
        let s = |i: usize| rec.get(c[i]).unwrap_or("").to_string();
        let num = |i: usize| -> Result<f64> {
            s(i).parse()
                .map_err(|_| err(format!("line {line}: bad number '{}'", s(i))))
        };
        out.push(BaselineRow {
            instance: s(0),
            solver: s(1),
            profile: s(2),
            success: s(3) == "yes",
            status: s(4),
            iterations: num(5)? as u64,
            matvecs: num(6)? as u64,
            residual: num(7)?,
            check_residual: s(8),
            tol: num(9)?,
            instance_hash: s(10),
            settings_hash: s(11),
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
            let verdict = match &c {
                None => Verdict::Regressed("missing from the run".into()),
                Some(c) => judge(b, c, opts),
            };
            Comparison {
                baseline: b.clone(),
                current: c,
                verdict,
            }
        })
        .collect()
}

fn judge(b: &BaselineRow, c: &BaselineRow, o: RegressionOptions) -> Verdict {
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
    if !bad.is_empty() {
        return Verdict::Regressed(bad.join("; "));
    }
    if !good.is_empty() {
        return Verdict::Improved(good.join("; "));
    }
    let mut notes = Vec::new();
    if c.iterations != b.iterations {
        notes.push(format!("iterations {} -> {}", b.iterations, c.iterations));
    }
    if c.instance_hash != b.instance_hash {
        notes.push("instance data changed (hash)".to_string());
    }
    if c.settings_hash != b.settings_hash {
        notes.push("settings changed (hash)".to_string());
    }
    if notes.is_empty() {
        Verdict::Same
    } else {
        Verdict::Note(notes.join("; "))
    }
}

/// Whether any comparison regressed.
pub fn failed(cmp: &[Comparison]) -> bool {
    cmp.iter()
        .any(|c| matches!(c.verdict, Verdict::Regressed(_)))
}

/// A table of every row that changed (regressions first), and a count line.
pub fn format_comparison(cmp: &[Comparison]) -> String {
    let mut s = format!(
        "{:<10} {:<34} {:<7} {:<8} {:>9} {:>9} {:>10} {:>10}  {}\n",
        "verdict",
        "instance",
        "solver",
        "profile",
        "iter base",
        "iter now",
        "res base",
        "res now",
        "detail"
    );
    let mut sorted: Vec<&Comparison> = cmp.iter().filter(|c| c.verdict != Verdict::Same).collect();
    sorted.sort_by_key(|c| match c.verdict {
        Verdict::Regressed(_) => 0,
        Verdict::Improved(_) => 1,
        _ => 2,
    });
    for c in &sorted {
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
            "{:<10} {:<34} {:<7} {:<8} {:>9} {:>9} {:>10.2e} {:>10}  {}\n",
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
    let n_reg = cmp
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Regressed(_)))
        .count();
    let n_imp = cmp
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Improved(_)))
        .count();
    s.push_str(&format!(
        "{} baseline rows: {} regressed, {} improved, {} unchanged or within thresholds\n",
        cmp.len(),
        n_reg,
        n_imp,
        cmp.len() - n_reg - n_imp
    ));
    s
}
