//! Tidy result files: `summary.csv` (one row per instance x solver x settings profile) and
//! per-run traces.
//!
//! `summary.csv` columns, in this order (scripts rely on it): `instance, class, n, nnz, solver,
//! settings_hash, status` (the solver's claim), `success` (the harness's check),
//! `iterations, matvecs, time_s`, every residual of [`Residuals::NAMES`] (ending with
//! `objective, fc3d_error, res3`; older files without `fc3d_error` or `res3` read as NaN), then `instance_hash, best_iteration, check_residual, tol, profile, jobs,
//! message, counters, base_solver, settings, peak_rss_bytes, operator, operator_bytes, repeats,
//! time_min_s, time_max_s`, and the physical-fidelity criteria of the answer
//! ([`Fidelity::NAMES`]: `signorini, ncp_desaxce, mdp_gap, spurious_velocity, cone_violation`,
//! NaN without friction; files written before them read as NaN).
//! `solver` is the label (variant name),
//! `base_solver` the registry name behind it, `settings` every setting of the run as JSON. `jobs` is the number of runs that were executing concurrently (time is only
//! comparable between rows with `jobs = 1`). `peak_rss_bytes` is the peak resident memory
//! ([`SummaryRow::peak_rss_bytes`]), `operator` and `operator_bytes` the storage of `N` and
//! the bytes one product reads; files written before these columns read them as empty.
//!
//! Rows are *appended* as runs finish, each with one `write` followed by `fsync`, so a killed
//! run loses at most the runs in flight; a torn last line (no newline) is ignored on reading.
//! Trace columns: `iteration, time_s, matvecs`, then [`Residuals::NAMES`].

use crate::error::{HarnessError, Result};
use crate::fsutil::write_atomic;
use cpbench_problems::{Fidelity, OperatorKind, ProblemClass, Residuals};
use cpbench_solvers::{IterRecord, Status};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// One row of `summary.csv`. `Default` is an empty row (zero counts, zero residuals, `jobs`
/// 0), for building rows field by field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SummaryRow {
    /// Instance name.
    pub instance: String,
    /// The instance's class; `None` (an empty cell) for an input that did not load.
    pub class: Option<ProblemClass>,
    /// Number of unknowns.
    pub n: usize,
    /// Stored entries of `N`.
    pub nnz: usize,
    /// Solver label: the variant name (`pgs`, `pgs@omega=0.8`, or a name from a variants
    /// file); every grouping, legend, file name and baseline key uses it.
    pub solver: String,
    /// First 16 hex digits of the SHA-256 of the solver and executor settings.
    pub settings_hash: String,
    /// The solver's claimed status, or that the input did not load.
    pub status: RowStatus,
    /// The harness's check.
    pub success: bool,
    /// Iterations run.
    pub iterations: u64,
    /// Counted `N`-products.
    pub matvecs: u64,
    /// Solver time, seconds.
    pub time_s: f64,
    /// Residuals recomputed by the harness.
    pub residuals: Residuals,
    /// Content hash of the instance.
    pub instance_hash: String,
    /// Iteration of the returned (best) iterate.
    pub best_iteration: u64,
    /// Residual used by the check.
    pub check_residual: String,
    /// Check tolerance.
    pub tol: f64,
    /// Settings profile (`default`, `low`, `high`, `custom`).
    pub profile: String,
    /// Runs executing concurrently when this one ran.
    pub jobs: usize,
    /// Solver message (errors), empty otherwise.
    pub message: String,
    /// Solver-specific counters at the end of the run (e.g. MPRGP's CG, expansion and
    /// proportioning steps, APGD's backtracks and restarts); `name=value;...` on disk.
    pub counters: Counters,
    /// Registry name of the solver behind the label (`pgs` for `pgs@omega=0.8`; presets keep
    /// their `name:preset` form). Files written before it read as the `solver` column.
    pub base_solver: String,
    /// Every setting of the run as compact JSON, exactly what [`crate::run::settings_hash`]
    /// hashes: `{"solver": base, "settings": {...}, "exec": {...}}`. Empty in files written
    /// before it.
    pub settings: String,
    /// Peak resident memory of the process during the run, bytes, from the operating system
    /// ([`crate::memory`]): on Linux `VmHWM` after a reset through `/proc/self/clear_refs`
    /// before the run when runs execute one at a time (`jobs = 1`), so the peak of the run
    /// including what was already resident (binary, loaded instances); with `jobs > 1`, or
    /// where the reset is refused, the process's peak so far (`VmHWM`, the same as
    /// `getrusage`'s `ru_maxrss`); off Linux `ru_maxrss`. The manifest's `peak_rss_method`
    /// says which. `None` (empty cell) in files written before it and for inputs that did not
    /// load.
    pub peak_rss_bytes: Option<u64>,
    /// Storage behind the instance's `N`-products (`csc`, `block`, `matrix-free`;
    /// [`OperatorKind`]). `None` (an empty cell) in files written before it and for inputs
    /// that did not load.
    pub operator: Option<OperatorKind>,
    /// Bytes one `N`-product reads from the operator's arrays
    /// ([`cpbench_problems::Instance::operator_bytes`]): `operator_bytes / time per product`
    /// is the bandwidth a product achieves. `None` in files written before it.
    pub operator_bytes: Option<u64>,
    /// Timed solves behind `time_s` (`cpbench run --repeat K`): `time_s` is their median.
    /// `None` in files written before it (one solve).
    pub repeats: Option<u64>,
    /// The fastest of the repeated solves' times (s); NaN in files written before it.
    pub time_min_s: f64,
    /// The slowest of the repeated solves' times (s); NaN in files written before it.
    pub time_max_s: f64,
    /// The physical-fidelity criteria of the answer ([`cpbench_problems::fidelity()`]): NaN for
    /// a class without friction, a run without an answer, and in files written before them.
    pub fidelity: Fidelity,
}

impl SummaryRow {
    /// The relative spread of the repeated solves' times, `(max - min) / median` (NaN when the
    /// row has no repeats, 0 for one solve).
    pub fn time_spread(&self) -> f64 {
        if self.time_s > 0.0 {
            (self.time_max_s - self.time_min_s) / self.time_s
        } else {
            f64::NAN
        }
    }
}

/// Header of `summary.csv`.
pub fn summary_header() -> Vec<&'static str> {
    let mut h = vec![
        "instance",
        "class",
        "n",
        "nnz",
        "solver",
        "settings_hash",
        "status",
        "success",
        "iterations",
        "matvecs",
        "time_s",
    ];
    h.extend(Residuals::NAMES);
    h.extend([
        "instance_hash",
        "best_iteration",
        "check_residual",
        "tol",
        "profile",
        "jobs",
        "message",
        "counters",
        "base_solver",
        "settings",
        "peak_rss_bytes",
        "operator",
        "operator_bytes",
        "repeats",
        "time_min_s",
        "time_max_s",
    ]);
    h.extend(Fidelity::NAMES);
    h
}

/// An optional count as a CSV cell (empty for `None`).
fn opt_u(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn fmt_f(v: f64) -> String {
    format!("{v:e}")
}

/// Key identifying a run for resume and merge: instance hash, solver, settings hash, profile.
pub type RunKey = (String, String, String, String);

impl SummaryRow {
    /// The row as CSV fields, in [`summary_header`] order.
    pub fn to_record(&self) -> Vec<String> {
        let mut r = vec![
            self.instance.clone(),
            self.class_name().to_string(),
            self.n.to_string(),
            self.nnz.to_string(),
            self.solver.clone(),
            self.settings_hash.clone(),
            self.status.as_str().to_string(),
            if self.success { "yes" } else { "no" }.to_string(),
            self.iterations.to_string(),
            self.matvecs.to_string(),
            format!("{:.6e}", self.time_s),
        ];
        r.extend(self.residuals.values().iter().map(|&v| fmt_f(v)));
        r.extend([
            self.instance_hash.clone(),
            self.best_iteration.to_string(),
            self.check_residual.clone(),
            fmt_f(self.tol),
            self.profile.clone(),
            self.jobs.to_string(),
            self.message.clone(),
            self.counters.to_string(),
            self.base_solver.clone(),
            self.settings.clone(),
            opt_u(self.peak_rss_bytes),
            self.operator_name().to_string(),
            opt_u(self.operator_bytes),
            opt_u(self.repeats),
            format!("{:.6e}", self.time_min_s),
            format!("{:.6e}", self.time_max_s),
        ]);
        r.extend(self.fidelity.values().iter().map(|&v| fmt_f(v)));
        r
    }

    /// The class's CSV value (`lcp`, `ccp`, ...; empty for an input that did not load).
    pub fn class_name(&self) -> &'static str {
        self.class.map(|c| c.as_str()).unwrap_or_default()
    }

    /// The operator's CSV value (`csc`, `block`, `matrix-free`; empty when unknown).
    pub fn operator_name(&self) -> &'static str {
        self.operator.map(|o| o.as_str()).unwrap_or_default()
    }

    /// Registry name behind the label ([`Self::base_solver`], or the label for old files).
    pub fn base(&self) -> &str {
        if self.base_solver.is_empty() {
            &self.solver
        } else {
            &self.base_solver
        }
    }

    /// Resume / merge key.
    pub fn key(&self) -> RunKey {
        (
            self.instance_hash.clone(),
            self.solver.clone(),
            self.settings_hash.clone(),
            self.profile.clone(),
        )
    }

    /// Parse a record given the header (columns found by name, extra columns ignored).
    /// `line` is used in error messages.
    pub fn from_record(
        header: &csv::StringRecord,
        rec: &csv::StringRecord,
        path: &Path,
        line: u64,
    ) -> Result<Self> {
        let idx: HashMap<&str, usize> = header.iter().enumerate().map(|(i, h)| (h, i)).collect();
        let err = |m: String| HarnessError::Csv {
            path: path.to_path_buf(),
            message: format!("line {line}: {m}"),
        };
        let get = |name: &str| -> Result<&str> {
            idx.get(name)
                .and_then(|&i| rec.get(i))
                .ok_or_else(|| err(format!("missing column '{name}'")))
        };
        fn num<T: std::str::FromStr>(
            s: &str,
            name: &str,
            err: &dyn Fn(String) -> HarnessError,
        ) -> Result<T> {
            s.parse::<T>()
                .map_err(|_| err(format!("bad value '{s}' in column '{name}'")))
        }
        let f = |name: &str| -> Result<f64> { num::<f64>(get(name)?, name, &err) };
        let u = |name: &str| -> Result<u64> { num::<u64>(get(name)?, name, &err) };
        // optional counts: a missing column (older files) or an empty cell is `None`
        let opt_col = |name: &str| -> Result<Option<u64>> {
            match get(name) {
                Ok(s) if !s.is_empty() => num::<u64>(s, name, &err).map(Some),
                _ => Ok(None),
            }
        };
        // optional times: a missing column (older files) or an empty cell is NaN
        let opt_f = |name: &str| -> Result<f64> {
            match get(name) {
                Ok(s) if !s.is_empty() => num::<f64>(s, name, &err),
                _ => Ok(f64::NAN),
            }
        };
        let mut vals = [0.0; Residuals::COUNT];
        for (v, name) in vals.iter_mut().zip(Residuals::NAMES) {
            // `fc3d_error` and `res3` came later: files written before them read as NaN
            *v = if matches!(name, "fc3d_error" | "res3") && !idx.contains_key(name) {
                f64::NAN
            } else {
                f(name)?
            };
        }
        let residuals = Residuals::from_values(vals);
        Ok(Self {
            instance: get("instance")?.to_string(),
            class: match get("class")? {
                "" => None,
                c => Some(
                    ProblemClass::from_name(c)
                        .ok_or_else(|| err(format!("unknown class '{c}' in column 'class'")))?,
                ),
            },
            n: u("n")? as usize,
            nnz: u("nnz")? as usize,
            solver: get("solver")?.to_string(),
            settings_hash: get("settings_hash")?.to_string(),
            status: RowStatus::parse(get("status")?).map_err(err)?,
            success: match get("success")? {
                "yes" => true,
                "no" => false,
                s => return Err(err(format!("bad success value '{s}'"))),
            },
            iterations: u("iterations")?,
            matvecs: u("matvecs")?,
            time_s: f("time_s")?,
            residuals,
            instance_hash: get("instance_hash")?.to_string(),
            best_iteration: u("best_iteration")?,
            check_residual: get("check_residual")?.to_string(),
            tol: f("tol")?,
            profile: get("profile").unwrap_or("default").to_string(),
            jobs: get("jobs").ok().and_then(|s| s.parse().ok()).unwrap_or(1),
            message: get("message").unwrap_or("").to_string(),
            counters: Counters::parse(get("counters").unwrap_or("")).map_err(err)?,
            base_solver: get("base_solver")
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or(get("solver")?)
                .to_string(),
            settings: get("settings").unwrap_or("").to_string(),
            peak_rss_bytes: opt_col("peak_rss_bytes")?,
            operator: match get("operator").unwrap_or("") {
                "" => None,
                o => Some(OperatorKind::parse(o).ok_or_else(|| {
                    err(format!(
                        "unknown operator '{o}' in column 'operator' (expected csc, block or matrix-free)"
                    ))
                })?),
            },
            operator_bytes: opt_col("operator_bytes")?,
            repeats: opt_col("repeats")?,
            time_min_s: opt_f("time_min_s")?,
            time_max_s: opt_f("time_max_s")?,
            fidelity: {
                let mut v = [f64::NAN; 5];
                for (x, name) in v.iter_mut().zip(Fidelity::NAMES) {
                    *x = opt_f(name)?;
                }
                Fidelity::from_values(v)
            },
        })
    }
}

/// Read a `summary.csv`. A last line without its newline (a write torn by a kill) is ignored;
/// any other malformed line is an error naming the line.
pub fn read_summary(path: &Path) -> Result<Vec<SummaryRow>> {
    let bytes = std::fs::read(path).map_err(|e| HarnessError::io(path, e))?;
    let end = if bytes.ends_with(b"\n") {
        bytes.len()
    } else {
        bytes
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|p| p + 1)
            .unwrap_or(0)
    };
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(&bytes[..end]);
    let header = rdr
        .headers()
        .map_err(|e| HarnessError::Csv {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
        .clone();
    let mut rows = Vec::new();
    for (k, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| HarnessError::Csv {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        rows.push(SummaryRow::from_record(&header, &rec, path, k as u64 + 2)?);
    }
    Ok(rows)
}

fn csv_line(fields: &[String]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // writing to a Vec cannot fail
    let _ = w.write_record(fields);
    w.into_inner().unwrap_or_default()
}

/// Appends rows to a `summary.csv`, one `write` + `fsync` per row.
pub struct SummaryAppender {
    file: std::fs::File,
    path: std::path::PathBuf,
}

impl SummaryAppender {
    /// Open `path` for appending; write the header if the file is new or empty. A torn last
    /// line left by a killed run is cut off first.
    pub fn open(path: &Path) -> Result<Self> {
        if let Ok(bytes) = std::fs::read(path) {
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                let keep = bytes
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map(|p| p + 1)
                    .unwrap_or(0);
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| HarnessError::io(path, e))?;
                f.set_len(keep as u64)
                    .map_err(|e| HarnessError::io(path, e))?;
            }
        }
        // a file written by an older version (fewer columns) is rewritten in the current
        // layout first, so that appended rows match its header
        if let Ok(bytes) = std::fs::read(path) {
            let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
            let h: Vec<String> = summary_header().into_iter().map(String::from).collect();
            let mine = csv_line(&h);
            if !bytes.is_empty() && first != &mine[..mine.len().saturating_sub(1)] {
                let rows = read_summary(path)?;
                write_summary(path, &rows)?;
            }
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| HarnessError::io(path, e))?;
        let len = file
            .metadata()
            .map_err(|e| HarnessError::io(path, e))?
            .len();
        if len == 0 {
            let h: Vec<String> = summary_header().into_iter().map(String::from).collect();
            file.write_all(&csv_line(&h))
                .map_err(|e| HarnessError::io(path, e))?;
            file.sync_data().map_err(|e| HarnessError::io(path, e))?;
        }
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Append one row durably.
    pub fn append(&mut self, row: &SummaryRow) -> Result<()> {
        self.file
            .write_all(&csv_line(&row.to_record()))
            .map_err(|e| HarnessError::io(&self.path, e))?;
        self.file
            .sync_data()
            .map_err(|e| HarnessError::io(&self.path, e))
    }
}

fn csv_bytes(
    header: &[&str],
    rows: impl Iterator<Item = Vec<String>>,
    path: &Path,
) -> Result<Vec<u8>> {
    let err = |e: csv::Error| HarnessError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(&r).map_err(err)?;
    }
    w.into_inner().map_err(|e| HarnessError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Write a whole `summary.csv` atomically (used by `merge`).
pub fn write_summary(path: &Path, rows: &[SummaryRow]) -> Result<()> {
    let bytes = csv_bytes(&summary_header(), rows.iter().map(|r| r.to_record()), path)?;
    write_atomic(path, &bytes)
}

/// Write one trace CSV atomically: `iteration, time_s, matvecs`, the residual columns, then one
/// column per solver-specific value ([`IterRecord::info`], e.g. the interior point's `mu`).
pub fn write_trace(path: &Path, records: &[IterRecord]) -> Result<()> {
    let mut header = vec!["iteration", "time_s", "matvecs"];
    header.extend(Residuals::NAMES);
    // Solver-specific per-iteration values become extra columns, named in order of first
    // appearance; a record without a value leaves its cell empty.
    let mut extra: Vec<&'static str> = Vec::new();
    for r in records {
        for &(k, _) in r.info.items() {
            if !extra.contains(&k) {
                extra.push(k);
            }
        }
    }
    header.extend(extra.iter().copied());
    let rows = records.iter().map(|r| {
        let mut v = vec![
            r.iteration.to_string(),
            format!("{:.6e}", r.time_s),
            r.matvecs.to_string(),
        ];
        v.extend(r.residuals.values().iter().map(|&x| fmt_f(x)));
        for k in &extra {
            v.push(
                r.info
                    .items()
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|&(_, x)| fmt_f(x))
                    .unwrap_or_default(),
            );
        }
        v
    });
    let bytes = csv_bytes(&header, rows, path)?;
    write_atomic(path, &bytes)
}

/// One row of a trace file.
#[derive(Clone, Copy, Debug)]
pub struct TracePoint {
    /// Iteration.
    pub iteration: u64,
    /// Solver time so far, seconds.
    pub time_s: f64,
    /// `N`-products so far.
    pub matvecs: u64,
    /// Residuals.
    pub residuals: Residuals,
}

/// One solver-specific column of a trace CSV written by [`write_trace`] (e.g. MPRGP's `gf`):
/// `(iteration, value)` for every row with a value (empty cells are skipped). Errors: the
/// file unreadable, no such column, a malformed cell (naming the line).
pub fn read_trace_column(path: &Path, column: &str) -> Result<Vec<(u64, f64)>> {
    let err = |m: String| HarnessError::Csv {
        path: path.to_path_buf(),
        message: m,
    };
    let mut rdr = csv::Reader::from_path(path).map_err(|e| err(e.to_string()))?;
    let head = rdr.headers().map_err(|e| err(e.to_string()))?.clone();
    let c = head
        .iter()
        .position(|h| h == column)
        .ok_or_else(|| err(format!("no column '{column}'")))?;
    let mut out = Vec::new();
    for (k, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| err(e.to_string()))?;
        let cell = rec.get(c).unwrap_or("");
        if cell.is_empty() {
            continue;
        }
        let bad = || {
            err(format!(
                "line {}: bad value '{cell}' in column '{column}'",
                k + 2
            ))
        };
        let it: u64 = rec.get(0).and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        out.push((it, cell.parse::<f64>().map_err(|_| bad())?));
    }
    Ok(out)
}

/// One record of a CSV table read by [`read_named_columns`]: its fields in the order of the
/// columns asked for, and its line in the file.
pub struct NamedRecord<'e> {
    fields: Vec<String>,
    line: usize,
    err: &'e dyn Fn(String) -> HarnessError,
}

impl NamedRecord<'_> {
    /// Field `i` (empty for a missing optional column or a short record).
    pub fn text(&self, i: usize) -> String {
        self.fields[i].clone()
    }

    /// Field `i` as a number. Errors: `line {line}: bad number '{field}'`, through the
    /// reader's error maker.
    pub fn num(&self, i: usize) -> Result<f64> {
        let s = &self.fields[i];
        s.parse()
            .map_err(|_| (self.err)(format!("line {}: bad number '{s}'", self.line)))
    }

    /// `line {line}: {message}`, through the reader's error maker (for a field the caller
    /// parses itself).
    pub fn error(&self, message: &str) -> HarnessError {
        (self.err)(format!("line {}: {message}", self.line))
    }
}

/// The records of the CSV table `rdr` with the fields of the columns `names`, found by name
/// in its header (a column in `optional` may be missing: its fields read empty), read one by
/// one. Errors, made by `err` from a message: an unreadable header, a missing column, then
/// an unreadable record; the records' [`NamedRecord::num`] errors go through `err` too.
/// Shared by the readers of baselines and of the recipes' timings.
pub fn read_named_columns<'a, 'e: 'a, R: std::io::Read>(
    rdr: &'a mut csv::Reader<R>,
    names: &[&str],
    optional: &[&str],
    err: &'e dyn Fn(String) -> HarnessError,
) -> Result<impl Iterator<Item = Result<NamedRecord<'e>>> + 'a> {
    let header = rdr.headers().map_err(|e| err(e.to_string()))?.clone();
    let cols: Vec<Option<usize>> = names
        .iter()
        .map(|name| match header.iter().position(|h| h == *name) {
            Some(i) => Ok(Some(i)),
            None if optional.contains(name) => Ok(None),
            None => Err(err(format!("missing column '{name}'"))),
        })
        .collect::<Result<_>>()?;
    Ok(rdr.records().enumerate().map(move |(k, rec)| {
        let rec = rec.map_err(|e| err(e.to_string()))?;
        let fields = cols
            .iter()
            .map(|c| c.and_then(|j| rec.get(j)).unwrap_or("").to_string())
            .collect();
        Ok(NamedRecord {
            fields,
            line: k + 2,
            err,
        })
    }))
}

/// Read a CSV of numbers written by cpbench (a header line, then records): `row` builds a
/// value from each record, given its line in the file and a getter of field `i` as `f64`. A field that is missing or
/// not a number is [`HarnessError::Csv`] naming the file, the line, the field's number (from
/// 1) and its column. Shared by [`read_trace`] and the recipes' step traces.
pub fn read_number_rows<T>(
    path: &Path,
    mut row: impl FnMut(usize, &csv::StringRecord, &dyn Fn(usize) -> Result<f64>) -> Result<T>,
) -> Result<Vec<T>> {
    let err = |m: String| HarnessError::Csv {
        path: path.to_path_buf(),
        message: m,
    };
    let mut rdr = csv::Reader::from_path(path).map_err(|e| err(e.to_string()))?;
    let header = rdr.headers().map_err(|e| err(e.to_string()))?.clone();
    let mut out = Vec::new();
    for (k, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| err(e.to_string()))?;
        let field = |i: usize| -> Result<f64> {
            rec.get(i)
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| {
                    err(format!(
                        "line {}: bad field {} ({})",
                        k + 2,
                        i + 1,
                        header.get(i).unwrap_or("missing")
                    ))
                })
        };
        out.push(row(k + 2, &rec, &field)?);
    }
    Ok(out)
}

/// Read a trace CSV written by [`write_trace`].
pub fn read_trace(path: &Path) -> Result<Vec<TracePoint>> {
    read_number_rows(path, |_, rec, p| {
        let mut v = [0.0; Residuals::COUNT];
        for (i, x) in v.iter_mut().enumerate() {
            // the last columns (`fc3d_error` at 13, `res3` at 14) are missing in traces
            // written before them
            *x = if i >= 13 && rec.len() < 3 + i + 1 {
                f64::NAN
            } else {
                p(3 + i)?
            };
        }
        Ok(TracePoint {
            iteration: p(0)? as u64,
            time_s: p(1)?,
            matvecs: p(2)? as u64,
            residuals: Residuals::from_values(v),
        })
    })
}

/// The `status` column of a row: the solver's claimed [`Status`], or that the input did not load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RowStatus {
    /// The solver's (or the executor's) claim about the run.
    Solver(Status),
    /// The input did not load: no solver ran (`load_error`). The default of an empty row.
    #[default]
    LoadError,
}

/// Status of the row of an input that did not load.
pub const LOAD_ERROR: RowStatus = RowStatus::LoadError;

/// The status of a run the solver refused (a class it does not take, a predicted budget
/// overrun, a missing program): not a run, counted in no rate, mean or profile of the report.
pub const REFUSED: RowStatus = RowStatus::Solver(Status::Unsupported);

impl RowStatus {
    /// The CSV value: [`Status::as_str`], or `load_error`.
    pub fn as_str(self) -> &'static str {
        match self {
            RowStatus::Solver(s) => s.as_str(),
            RowStatus::LoadError => "load_error",
        }
    }

    /// The status of a CSV value; the error names the value and the values expected.
    pub fn parse(s: &str) -> std::result::Result<RowStatus, String> {
        if s == "load_error" {
            return Ok(RowStatus::LoadError);
        }
        Status::parse(s).map(RowStatus::Solver).ok_or_else(|| {
            let known: Vec<&str> = Status::ALL.iter().map(|k| k.as_str()).collect();
            format!(
                "unknown status '{s}' in column 'status' (expected one of {}, load_error)",
                known.join(", ")
            )
        })
    }

    /// Whether the solver refused the instance ([`REFUSED`]).
    pub fn is_refused(self) -> bool {
        self == REFUSED
    }

    /// Whether the input did not load ([`LOAD_ERROR`]).
    pub fn is_load_error(self) -> bool {
        self == LOAD_ERROR
    }
}

impl From<Status> for RowStatus {
    fn from(s: Status) -> Self {
        RowStatus::Solver(s)
    }
}

impl std::fmt::Display for RowStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `counters` column: a run's solver-specific counters, name and value, in the order the
/// solver reports them. On disk `name=value;name=value` (values in Rust's shortest form that
/// reads back to the same `f64`, so a row survives a read and a write unchanged).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters(pub Vec<(String, f64)>);

impl Counters {
    /// The value of counter `name`, if the run reported it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(k, _)| k == name).map(|&(_, v)| v)
    }

    /// Whether the run reported no counter.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The counters, name and value, in the solver's order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// The counters for people (reports): `name=value;...` with whole numbers as integers
    /// and other values in scientific notation (`4.5e-9`, not `0.0000000045`).
    pub fn compact(&self) -> String {
        let one = |v: f64| {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{v}")
            } else {
                format!("{v:e}")
            }
        };
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{k}={}", one(*v)))
            .collect();
        parts.join(";")
    }

    /// Parse the CSV cell `name=value;...` (empty: no counter). A piece without `=` or with a
    /// value that is not a number is an error naming it.
    pub fn parse(s: &str) -> std::result::Result<Counters, String> {
        let mut out = Vec::new();
        for piece in s.split(';').filter(|p| !p.is_empty()) {
            let (k, v) = piece.rsplit_once('=').ok_or_else(|| {
                format!("counter '{piece}' in column 'counters' is not name=value")
            })?;
            let v = v.parse::<f64>().map_err(|_| {
                format!("counter '{k}' in column 'counters' has value '{v}', expected a number")
            })?;
            out.push((k.to_string(), v));
        }
        Ok(Counters(out))
    }
}

impl From<Vec<(String, f64)>> for Counters {
    fn from(v: Vec<(String, f64)>) -> Self {
        Counters(v)
    }
}

impl std::fmt::Display for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}
