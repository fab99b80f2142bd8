//! External solvers: programs in any language run through the external-solver protocol
//! (docs/external.md), as driven solvers ([`crate::driven::DrivenSolver`]).
//!
//! - `ext:NAME`: a program defined in a JSON file ([`ExternalDefs`], `cpbench run --external
//!   FILE`);
//! - `siconos:NAME`: Siconos' solvers through the same protocol ([`siconos`]).
//!
//! One solve ([`ExternalSolver`]): the instance is written in the definition's format into a
//! fresh scratch folder under [`std::env::temp_dir`]; the program is started there (its own
//! process group, placeholders of `command` substituted); at the time limit (the smaller of the
//! definition's `time_limit` and the run's `--time-limit`) the whole group is killed
//! ([`Status::MaxTime`]); a non-zero exit or a signal is [`Status::Crashed`] with the end of
//! its standard error; a missing, unreadable or wrong-length `gamma` is [`Status::BadOutput`].
//! Its trace CSV (`{trace}`) becomes trace rows (own residual in the column `ext_residual`), its
//! info JSON (`{info}`) the iterations, the status claim, the message and the counters. The
//! scratch folder is removed afterwards, unless the program crashed or its output was bad (the
//! message then names the folder). The answer is checked by the harness like every other row.

pub mod defs;
pub mod process;
pub mod siconos;

pub use defs::{DefsError, ExternalDef, ExternalDefs, InstanceFormat, OutputFormat};

use crate::driven::{DrivenAnswer, DrivenSolver, Monitor};
use crate::executor::ExecSettings;
use crate::observer::IterInfo;
use crate::status::{SolverError, Status};
use cpbench_problems::io::{mtx, write_bundle, write_fclib, FclibInfo};
use cpbench_problems::{Instance, ProblemClass, ResidualKind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The name prefix of solvers from a definition file.
pub const EXT_PREFIX: &str = "ext:";
/// The name prefix of the built-in Siconos solvers.
pub const SICONOS_PREFIX: &str = "siconos:";

/// The placeholders substituted in `command` (docs/external.md).
pub const PLACEHOLDERS: [&str; 13] = [
    "instance",
    "gamma",
    "trace",
    "info",
    "tol",
    "max_iter",
    "time_limit",
    "n",
    "contacts",
    "class",
    "residual",
    "dir",
    "work",
];

/// The driven solver of `name` (`ext:NAME` from `defs`, `siconos:NAME` built in), for the
/// harness, the CLI and the Python package.
///
/// `None` when `name` has neither prefix (a registry name: not ours). Errors:
/// [`SolverError::UnknownSolver`] for an unknown `ext:` name (listing the file's solvers) or
/// `siconos:` name (listing the built-in ones), [`SolverError::ExternalDefs`] for an `ext:`
/// name without a definition file.
pub fn resolve(
    name: &str,
    defs: Option<&ExternalDefs>,
) -> Option<Result<Arc<dyn DrivenSolver>, SolverError>> {
    resolve_with_settings(name, defs, None)
}

/// [`resolve`] with the settings of `name` from a settings map (`--settings`): a `siconos:`
/// solver takes [`siconos::SiconosOptions`], an `ext:` one none. `None` when `name` has
/// neither prefix. Errors: those of [`resolve`], and those of [`check_settings`].
pub fn resolve_with_settings(
    name: &str,
    defs: Option<&ExternalDefs>,
    settings: Option<&serde_json::Value>,
) -> Option<Result<Arc<dyn DrivenSolver>, SolverError>> {
    if let Some(short) = name.strip_prefix(SICONOS_PREFIX) {
        let Some(e) = siconos::entry(short) else {
            return Some(Err(SolverError::UnknownSolver(
                name.to_string(),
                siconos::known_names(),
            )));
        };
        let options = match settings.map(|v| siconos::SiconosOptions::parse(name, v)) {
            None => siconos::SiconosOptions::default(),
            Some(Ok(o)) => o,
            Some(Err(err)) => return Some(Err(err)),
        };
        let s = ExternalSolver::siconos(e).with_options(options);
        return Some(Ok(Arc::new(s) as Arc<dyn DrivenSolver>));
    }
    let short = name.strip_prefix(EXT_PREFIX)?;
    if let Some(Err(e)) = check_settings(name, settings) {
        return Some(Err(e));
    }
    let Some(defs) = defs else {
        return Some(Err(DefsError::NoFile {
            name: name.to_string(),
        }
        .into()));
    };
    Some(match defs.solvers.get(short) {
        Some(def) => Ok(Arc::new(ExternalSolver::new(
            name,
            def.clone(),
            &defs.dir,
            defs.path.file_name().map_or_else(
                || defs.path.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            ),
        )) as Arc<dyn DrivenSolver>),
        None => Err(SolverError::UnknownSolver(
            name.to_string(),
            defs.known_names(),
        )),
    })
}

/// Check the settings a settings map gives the driven solver `name`, before anything runs:
/// `siconos:NAME` takes [`siconos::SiconosOptions`] (the name must be a built-in one), `ext:NAME`
/// takes none. `None` when `name` has neither prefix (a registry name). Errors:
/// [`SolverError::UnknownSolver`] for an unknown `siconos:` name,
/// [`SolverError::BadSettings`] for malformed options or any settings of an `ext:` solver.
pub fn check_settings(
    name: &str,
    settings: Option<&serde_json::Value>,
) -> Option<Result<(), SolverError>> {
    if let Some(short) = name.strip_prefix(SICONOS_PREFIX) {
        if siconos::entry(short).is_none() {
            return Some(Err(SolverError::UnknownSolver(
                name.to_string(),
                siconos::known_names(),
            )));
        }
        return Some(settings.map_or(Ok(()), |v| {
            siconos::SiconosOptions::parse(name, v).map(|_| ())
        }));
    }
    if name.starts_with(EXT_PREFIX) {
        return Some(match settings {
            None => Ok(()),
            Some(_) => Err(SolverError::BadSettings {
                solver: name.to_string(),
                message: "ext: solvers take no settings (their definition file sets the \
                          command; pass options there)"
                    .into(),
            }),
        });
    }
    None
}

/// A program run through the external-solver protocol (module documentation).
#[derive(Clone, Debug)]
pub struct ExternalSolver {
    name: String,
    def: ExternalDef,
    /// the definition file's folder (`{dir}`, base of relative paths)
    dir: PathBuf,
    /// where the definition comes from (the file's name, or `built-in`)
    source: String,
    siconos: Option<&'static siconos::SiconosEntry>,
    /// The options of a `siconos:` solver (its settings; empty: Siconos' defaults).
    options: siconos::SiconosOptions,
}

/// Makes scratch folder names unique within the process.
static SCRATCH_COUNTER: AtomicU64 = AtomicU64::new(0);

impl ExternalSolver {
    /// The solver `name` (as result files show it, e.g. `ext:pg`) running `def`, with relative
    /// paths resolved against `dir`; `source` names the definition file in the settings.
    pub fn new(name: &str, def: ExternalDef, dir: &Path, source: String) -> Self {
        Self {
            name: name.to_string(),
            def,
            dir: dir.to_path_buf(),
            source,
            siconos: None,
            options: siconos::SiconosOptions::default(),
        }
    }

    /// The built-in Siconos solver `e` (`siconos:NAME`).
    pub fn siconos(e: &'static siconos::SiconosEntry) -> Self {
        Self {
            name: format!("{SICONOS_PREFIX}{}", e.name),
            def: siconos::definition(e),
            dir: std::env::temp_dir(),
            source: "built-in".into(),
            siconos: Some(e),
            options: siconos::SiconosOptions::default(),
        }
    }

    /// The same solver with Siconos `options` (a `siconos:` solver's settings): passed to the
    /// script, and part of [`DrivenSolver::settings`] when not empty.
    pub fn with_options(mut self, options: siconos::SiconosOptions) -> Self {
        self.options = options;
        self
    }

    /// Its definition.
    pub fn definition(&self) -> &ExternalDef {
        &self.def
    }

    /// Whether the program can be started: Siconos importable (for `siconos:*`), the program
    /// `command[0]` found (in the definition's folder or on `PATH`). Errors: why not, as the
    /// refusal message of its solves.
    pub fn availability(&self) -> Result<(), String> {
        if self.siconos.is_some() {
            return siconos::availability();
        }
        let prog = &self.def.command[0];
        if prog.contains('{') && !prog.starts_with("{dir}") {
            return Ok(()); // decided by the solve's own placeholders
        }
        let prog = self
            .resolve_arg(prog, true)
            .replace("{dir}", &self.dir_str());
        if prog.contains('/') {
            return if Path::new(&prog).is_file() {
                Ok(())
            } else {
                Err(format!("program '{prog}' not found"))
            };
        }
        let found = std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(&prog).is_file()));
        if found {
            Ok(())
        } else {
            Err(format!(
                "program '{prog}' not found (neither in {} nor on PATH)",
                self.dir.display()
            ))
        }
    }

    fn dir_str(&self) -> String {
        self.dir.display().to_string()
    }

    /// `arg` of `command` resolved against the definition's folder: a relative path (no
    /// placeholder, not an option) that exists there becomes absolute; anything else is kept.
    fn resolve_arg(&self, arg: &str, first: bool) -> String {
        let p = Path::new(arg);
        if arg.is_empty()
            || arg.contains('{')
            || (!first && arg.starts_with('-'))
            || p.is_absolute()
            || self.siconos.is_some()
        {
            return arg.to_string();
        }
        let there = self.dir.join(p);
        if there.exists() {
            there.display().to_string()
        } else {
            arg.to_string()
        }
    }

    /// The argv of one solve: the definition's `command` with each relative path that exists
    /// in the definition's folder made absolute (not the placeholders, not options after the
    /// program), then every placeholder `{key}` replaced by its value in `values`
    /// (`(key, value)` pairs, e.g. `("tol", number(1e-8))`; the folder itself is `{dir}`).
    pub fn argv(&self, values: &[(&str, String)]) -> Vec<String> {
        self.def
            .command
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut s = self.resolve_arg(a, i == 0);
                for (k, v) in values {
                    s = s.replace(&format!("{{{k}}}"), v);
                }
                s
            })
            .collect()
    }

    /// A fresh scratch folder under the system's temporary folder.
    fn scratch(&self) -> std::io::Result<PathBuf> {
        let tag: String = self
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        loop {
            let k = SCRATCH_COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir =
                std::env::temp_dir().join(format!("cpbench-{tag}-{}-{k}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Write `instance` in the definition's format into `work`; the `{instance}` path.
    fn write_instance(&self, instance: &Instance, work: &Path) -> Result<PathBuf, String> {
        let e = |e: cpbench_problems::ProblemError| e.to_string();
        match self.def.format {
            InstanceFormat::Npz => {
                let p = work.join("instance.npz");
                cpbench_problems::io::npz::write_npz(instance, &p).map_err(e)?;
                Ok(p)
            }
            InstanceFormat::Bundle => {
                let p = work.join("instance");
                write_bundle(instance, &p).map_err(e)?;
                Ok(p)
            }
            InstanceFormat::Fclib => {
                let p = work.join("instance.hdf5");
                write_fclib(instance, &FclibInfo::for_instance(instance), &p).map_err(e)?;
                Ok(p)
            }
            InstanceFormat::Mtx => {
                let dir = work.join("instance");
                write_bundle(instance, &dir).map_err(e)?;
                let vec_file = |name: &str, v: &[f64]| -> Result<(), String> {
                    let p = dir.join(name);
                    let mut b = Vec::new();
                    mtx::write_vector(&mut b, v).map_err(|x| x.to_string())?;
                    std::fs::write(&p, b).map_err(|x| format!("{}: {x}", p.display()))
                };
                // the set's data vectors, one `<name>.mtx` each (`mu.mtx`; `lo.mtx`, `hi.mtx`)
                for (name, v) in instance.constraints().data() {
                    vec_file(&format!("{name}.mtx"), v)?;
                }
                Ok(dir.join("N.mtx"))
            }
        }
    }

    /// The settings for the manifest and the settings hash: the definition (not the folder,
    /// which differs between machines).
    fn settings_json(&self) -> serde_json::Value {
        let d = &self.def;
        let mut v = serde_json::json!({
            "command": d.command,
            "format": d.format.as_str(),
            "output": d.output.as_str(),
            "classes": d.classes.as_ref().map(|c| c.iter().map(|c| c.as_str()).collect::<Vec<_>>()),
            "time_limit": d.time_limit,
            "env": d.env,
            "source": self.source,
        });
        if let Some(e) = self.siconos {
            v["siconos_solver"] = e.solver_id.into();
            v["driver"] = e.driver.into();
            // only when set, so that the settings hash of the defaults stays
            if !self.options.is_empty() {
                v["options"] = self.options.to_json();
            }
        }
        v
    }
}

/// Unknowns per contact: the number of contacts of cones and friction boxes, else 0.
fn contacts(instance: &Instance) -> usize {
    instance.constraints().friction().map_or(0, <[f64]>::len)
}

/// A number as the numeric placeholders (`{tol}`, `{time_limit}`, ...) write it: Rust's `{:e}`
/// (`1e-8`, `6e1`), `inf` for an infinite limit.
pub fn number(x: f64) -> String {
    if x.is_infinite() {
        "inf".into()
    } else {
        format!("{x:e}")
    }
}

/// The program's info file (`{info}`, docs/external.md), as [`read_info`] reads it; every field
/// is optional in the file.
#[derive(Debug, Default)]
pub struct Info {
    /// `iterations`: the iterations the program made.
    pub iterations: Option<u64>,
    /// `status`: the program's claim, when it is a cpbench status ([`Status`]'s CSV value).
    pub status: Option<Status>,
    /// `message`, followed by a note when `status` was not a cpbench status (joined by `; `).
    pub message: Option<String>,
    /// `counters`: named numbers, in the file's order (names without `;` or `=`).
    pub counters: Vec<(String, f64)>,
    /// `time_s`: the program's own solve time, seconds.
    pub time_s: Option<f64>,
}

fn bad(message: String) -> SolverError {
    SolverError::External {
        status: Status::BadOutput,
        message,
    }
}

/// Read the info JSON at `path` ([`Info`]). Errors (naming the file and the field): unreadable,
/// not JSON, not an object, fields of the wrong type, counter names holding `;` or `=`.
pub fn read_info(path: &Path) -> Result<Info, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not valid JSON: {e}", path.display()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| format!("{}: expected a JSON object", path.display()))?;
    let field = |k: &str, what: &str| format!("{}: field '{k}': expected {what}", path.display());
    let mut info = Info::default();
    if let Some(x) = obj.get("iterations").filter(|x| !x.is_null()) {
        info.iterations = Some(
            x.as_u64()
                .or_else(|| {
                    x.as_f64()
                        .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                        .map(|f| f as u64)
                })
                .ok_or_else(|| field("iterations", "a non-negative integer"))?,
        );
    }
    let mut notes = Vec::new();
    if let Some(x) = obj.get("status").filter(|x| !x.is_null()) {
        let s = x.as_str().ok_or_else(|| field("status", "a string"))?;
        match serde_json::from_value::<Status>(serde_json::Value::String(s.to_string())) {
            Ok(st) => info.status = Some(st),
            Err(_) => notes.push(format!(
                "info status '{s}' is not a cpbench status (ignored)"
            )),
        }
    }
    if let Some(x) = obj.get("message").filter(|x| !x.is_null()) {
        let m = x.as_str().ok_or_else(|| field("message", "a string"))?;
        if !m.is_empty() {
            notes.insert(0, m.to_string());
        }
    }
    if !notes.is_empty() {
        info.message = Some(notes.join("; "));
    }
    if let Some(x) = obj.get("time_s").filter(|x| !x.is_null()) {
        info.time_s = Some(
            x.as_f64()
                .filter(|t| t.is_finite() && *t >= 0.0)
                .ok_or_else(|| field("time_s", "a non-negative number of seconds"))?,
        );
    }
    if let Some(x) = obj.get("counters").filter(|x| !x.is_null()) {
        let m = x
            .as_object()
            .ok_or_else(|| field("counters", "an object of numbers"))?;
        for (k, v) in m {
            // the summary's `counters` cell is `name=value;...`: a name must not break it
            if k.is_empty() || k.contains([';', '=']) {
                return Err(field(
                    "counters",
                    &format!("names without ';' or '=' (got '{k}')"),
                ));
            }
            let f = v
                .as_f64()
                .ok_or_else(|| field("counters", &format!("a number for '{k}'")))?;
            info.counters.push((k.clone(), f));
        }
    }
    Ok(info)
}

/// One row of the program's trace CSV (`{trace}`, docs/external.md), as [`read_trace`] reads it.
#[derive(Debug)]
pub struct TraceRow {
    /// `iteration`: the iteration the row records.
    pub iteration: u64,
    /// `time_s`: seconds since the program's start, when given.
    pub time_s: Option<f64>,
    /// `residual`: the program's own residual, when given (the trace's `ext_residual`).
    pub residual: Option<f64>,
}

/// Read the trace CSV at `path`: a header row with `iteration` (required), `time_s`,
/// `residual` (others ignored), comma-separated. Errors name the file and the line.
pub fn read_trace(path: &Path) -> Result<Vec<TraceRow>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Ok(Vec::new());
    };
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let find = |c: &str| cols.iter().position(|h| *h == c);
    let it = find("iteration").ok_or_else(|| {
        format!(
            "{}: line 1: the header has no 'iteration' column (found: {header})",
            path.display()
        )
    })?;
    let (tc, rc) = (find("time_s"), find("residual"));
    let mut rows = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let at = |c: usize, what: &str| -> Result<f64, String> {
            f.get(c).and_then(|s| s.parse::<f64>().ok()).ok_or_else(|| {
                format!(
                    "{}: line {}: column '{what}' is not a number ({line})",
                    path.display(),
                    i + 1
                )
            })
        };
        let iteration = at(it, "iteration")?;
        if !(iteration >= 0.0 && iteration.fract() == 0.0) {
            return Err(format!(
                "{}: line {}: iteration {iteration} is not a non-negative integer",
                path.display(),
                i + 1
            ));
        }
        rows.push(TraceRow {
            iteration: iteration as u64,
            time_s: tc.map(|c| at(c, "time_s")).transpose()?,
            residual: rc.map(|c| at(c, "residual")).transpose()?,
        });
    }
    Ok(rows)
}

/// Read the answer `gamma` at `path` in `format` (a `.npy` vector of float64, or a MatrixMarket
/// `n x 1` array), checking its length `n`. Errors: a missing or unreadable file, or what was
/// expected instead (the format, the length).
pub fn read_gamma(path: &Path, format: OutputFormat, n: usize) -> Result<Vec<f64>, String> {
    let expected = match format {
        OutputFormat::Npy => format!("a 1-D float64 .npy array of length n = {n}"),
        OutputFormat::Mtx => format!("a MatrixMarket array of n = {n} rows"),
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "the program did not write gamma to {} (expected {expected})",
                path.display()
            ))
        }
        Err(e) => return Err(format!("{}: {e} (expected {expected})", path.display())),
    };
    let gamma = match format {
        OutputFormat::Npy => {
            let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| {
                format!(
                    "{}: not a .npy file: {e} (expected {expected})",
                    path.display()
                )
            })?;
            let shape = npy.shape().to_vec();
            if shape.len() != 1 {
                return Err(format!(
                    "{}: shape {shape:?}, expected {expected}",
                    path.display()
                ));
            }
            npy.into_vec::<f64>()
                .map_err(|e| format!("{}: {e} (expected {expected})", path.display()))?
        }
        OutputFormat::Mtx => {
            mtx::read_vector(path, &bytes).map_err(|e| format!("{e} (expected {expected})"))?
        }
    };
    if gamma.len() != n {
        return Err(format!(
            "{}: gamma has length {}, expected {expected}",
            path.display(),
            gamma.len()
        ));
    }
    Ok(gamma)
}

impl DrivenSolver for ExternalSolver {
    fn name(&self) -> &str {
        &self.name
    }

    fn settings(&self) -> serde_json::Value {
        self.settings_json()
    }

    fn refusal(&self, instance: &Instance) -> Option<String> {
        let class = instance.class();
        if let Some(classes) = &self.def.classes {
            if !classes.contains(&class) {
                let names: Vec<&str> = classes.iter().map(|c| c.as_str()).collect();
                return Some(format!(
                    "{} takes class {} (the instance is {class})",
                    self.name,
                    names.join(", ")
                ));
            }
        }
        let cones = instance.constraints().cone_dim().is_some();
        if self.def.format == InstanceFormat::Fclib
            && !(cones && matches!(class, ProblemClass::Ccp | ProblemClass::Coulomb))
        {
            return Some(format!(
                "{}: format fclib holds only Coulomb-cone problems (class ccp or coulomb), the \
                 instance is {class}",
                self.name
            ));
        }
        if self.def.format == InstanceFormat::Mtx && instance.matrix_free().is_some() {
            return Some(format!(
                "{}: format mtx needs N.mtx, and this matrix-free instance never forms N (use \
                 format npz or bundle)",
                self.name
            ));
        }
        if let Some(e) = self.siconos {
            if instance.matrix_free().is_some() {
                return Some(format!(
                    "{}: Siconos needs N formed; the instance is matrix-free",
                    self.name
                ));
            }
            let dim = instance.constraints().cone_dim();
            if e.cone_dim.is_some() && dim != e.cone_dim {
                return Some(format!(
                    "{} solves {}-D Coulomb problems (the instance has {}-D cones)",
                    self.name,
                    e.cone_dim.unwrap_or(3),
                    dim.unwrap_or(0)
                ));
            }
        }
        self.availability().err()
    }

    fn solve(
        &self,
        instance: &Instance,
        exec: &ExecSettings,
        _gamma0: &[f64],
        monitor: &mut Monitor<'_, '_>,
    ) -> Result<DrivenAnswer, SolverError> {
        let setup = Instant::now();
        let failed = |status: Status, message: String| SolverError::External { status, message };
        let work = self.scratch().map_err(|e| {
            failed(
                Status::Crashed,
                format!(
                    "cannot create a scratch folder under {}: {e}",
                    std::env::temp_dir().display()
                ),
            )
        })?;
        let remove = |w: &Path| {
            let _ = std::fs::remove_dir_all(w);
        };
        let inst_path = match self.write_instance(instance, &work) {
            Ok(p) => p,
            Err(e) => {
                remove(&work);
                return Err(failed(
                    Status::Unsupported,
                    format!(
                        "cannot write the instance as {}: {e}",
                        self.def.format.as_str()
                    ),
                ));
            }
        };
        if self.siconos.is_some() {
            if let Err(e) = std::fs::write(work.join(siconos::SCRIPT_NAME), siconos::SCRIPT) {
                remove(&work);
                return Err(failed(
                    Status::Crashed,
                    format!("cannot write the Siconos script: {e}"),
                ));
            }
        }
        let gamma_path = work.join(format!("gamma.{}", self.def.output.as_str()));
        let trace_path = work.join("trace.csv");
        let info_path = work.join("info.json");
        let limit = match (self.def.time_limit, exec.max_time_s) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let residual = ResidualKind::resolve(exec.residual, instance.class());
        let path = |p: &Path| p.display().to_string();
        let values = [
            ("instance", path(&inst_path)),
            ("gamma", path(&gamma_path)),
            ("trace", path(&trace_path)),
            ("info", path(&info_path)),
            ("tol", number(exec.tol)),
            ("max_iter", exec.max_iter.to_string()),
            ("time_limit", number(limit.unwrap_or(f64::INFINITY))),
            ("n", instance.n().to_string()),
            ("contacts", contacts(instance).to_string()),
            ("class", instance.class().as_str().to_string()),
            ("residual", residual.as_str().to_string()),
            ("dir", self.dir_str()),
            ("work", path(&work)),
        ];
        let mut argv = self.argv(&values);
        if self.siconos.is_some() && !self.options.is_empty() {
            let p = work.join(siconos::OPTIONS_NAME);
            if let Err(e) = std::fs::write(&p, self.options.to_json().to_string()) {
                remove(&work);
                return Err(failed(
                    Status::Crashed,
                    format!("cannot write the Siconos options: {e}"),
                ));
            }
            argv.push(path(&p));
        }
        let env: Vec<(String, String)> = self
            .def
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        monitor.exclude(setup.elapsed());
        let finished = match process::run(&argv, &work, &env, limit) {
            Ok(f) => f,
            Err(e) => {
                remove(&work);
                let status = if e.kind() == std::io::ErrorKind::NotFound {
                    Status::Unsupported
                } else {
                    Status::Crashed
                };
                return Err(failed(status, format!("cannot start '{}': {e}", argv[0])));
            }
        };
        let after = Instant::now();
        let result = self.collect(
            instance,
            monitor,
            &finished,
            &gamma_path,
            &trace_path,
            &info_path,
        );
        match &result {
            Err(SolverError::External {
                status: Status::Crashed | Status::BadOutput,
                ..
            }) => {}
            _ => remove(&work),
        }
        let result = result.map_err(|e| match e {
            SolverError::External {
                status: status @ (Status::Crashed | Status::BadOutput),
                message,
            } => SolverError::External {
                status,
                message: format!("{message} [scratch folder kept: {}]", work.display()),
            },
            e => e,
        });
        monitor.exclude(after.elapsed());
        result
    }
}

impl ExternalSolver {
    /// Turn a finished program into the answer: trace rows recorded, info read, the ending
    /// judged, gamma read.
    fn collect(
        &self,
        instance: &Instance,
        monitor: &mut Monitor<'_, '_>,
        finished: &process::Finished,
        gamma_path: &Path,
        trace_path: &Path,
        info_path: &Path,
    ) -> Result<DrivenAnswer, SolverError> {
        let trace = if trace_path.exists() {
            Some(read_trace(trace_path))
        } else {
            None
        };
        let mut trace_iterations = None;
        if let Some(Ok(rows)) = &trace {
            for r in rows {
                let mut info = IterInfo::new();
                if let Some(x) = r.residual {
                    info.push("ext_residual", x);
                }
                monitor.record(r.iteration, r.time_s, info);
                trace_iterations = Some(trace_iterations.unwrap_or(0).max(r.iteration));
            }
        }
        let stderr = if finished.stderr_tail.is_empty() {
            "(nothing on stderr)".to_string()
        } else {
            format!("stderr: {}", finished.stderr_tail)
        };
        match &finished.ending {
            process::Ending::Killed => {
                return Err(SolverError::External {
                    status: Status::MaxTime,
                    message: format!(
                        "killed after {:.2} s (time limit)",
                        finished.wall.as_secs_f64()
                    ),
                })
            }
            process::Ending::Exited(st) if !st.success() => {
                return Err(SolverError::External {
                    status: Status::Crashed,
                    message: format!(
                        "{} ended with {}; {stderr}",
                        self.def.command[0],
                        process::describe(st)
                    ),
                })
            }
            process::Ending::Exited(_) => {}
        }
        if let Some(Err(e)) = trace {
            return Err(bad(format!("unreadable trace: {e}")));
        }
        let info = if info_path.exists() {
            read_info(info_path).map_err(|e| bad(format!("unreadable info: {e}")))?
        } else {
            Info::default()
        };
        let gamma = read_gamma(gamma_path, self.def.output, instance.n()).map_err(bad)?;
        Ok(DrivenAnswer {
            gamma,
            status: info.status,
            iterations: Some(info.iterations.or(trace_iterations).unwrap_or(1)),
            message: info.message,
            counters: info.counters,
            time_s: info.time_s,
        })
    }
}
