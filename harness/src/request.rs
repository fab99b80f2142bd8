//! One run request: what `cpbench run` and the Python package's `cpbench.run` both ask for,
//! turned into a suite, its loaded instances and a [`RunConfig`] in one place.
//!
//! The front ends only map their arguments onto a [`RunRequest`]; the request owns
//! - suite resolution: files, a built-in suite, a suite file ([`SuiteSource`]);
//! - the solvers: registry tokens and variants ([`crate::variants::expand`]), driven names
//!   (`ext:NAME`, `siconos:NAME`, [`cpbench_solvers::external::resolve`]) and ready specs (a
//!   Python callable), with the default list (the variants file's, the suite's, the
//!   registry's) when none is given;
//! - the profiles: the tolerance lives in [`Profile`] alone (`--tol T`: one `custom` profile;
//!   a suite's own tolerance; else the named built-in profiles, [`DEFAULT_PROFILE`]);
//! - loading, with a failure recorded as a row or fatal (`fail_fast`);
//! - the [`RunConfig`] handed to [`crate::run()`].
//!
//! - the execution ([`RunRequest::execute`]): [`crate::run()`] on the loaded instances, or for
//!   the `scale` suite ([`SuiteSource::Scale`]: generated pyramids, one size at a time on the
//!   whole machine) [`crate::scale::run_scale`], with the suite's own defaults
//!   ([`RunRequest::new`]).

use crate::error::{HarnessError, Result};
use crate::manifest::{Profile, Shard};
use crate::plot::FigureOptions;
use crate::run::{LoadFailure, RunConfig, RunOutcome, SolverSpec};
use crate::scale::{self, ScaleSize, SizeReport};
use crate::suite::Suite;
use crate::variants::VariantsFile;
use cpbench_problems::io::ClassChoice;
use cpbench_problems::{Instance, ResidualKind};
use cpbench_solvers::external::ExternalDefs;
use cpbench_solvers::{registry, ExecSettings};
use std::path::PathBuf;

/// The profile a run has when no tolerance, profile or suite tolerance is given.
pub const DEFAULT_PROFILE: &str = "default";

/// Where a run's instances come from.
#[derive(Clone, Debug)]
pub enum SuiteSource {
    /// A built-in suite name (`default`, `permon`, `lcp`) or the path of a suite JSON file.
    Named(String),
    /// Instance files or folders, read as `class`, symmetrised on request.
    Paths {
        /// The files or folders.
        paths: Vec<PathBuf>,
        /// How a frictional file is read.
        class: ClassChoice,
        /// Symmetrise `N` (`(N + N^T) / 2`).
        symmetrize: bool,
    },
    /// The `scale` suite: generated pyramids of these sizes ([`crate::scale`]).
    Scale(ScaleSource),
}

/// The `scale` suite's pyramids and where they are kept.
#[derive(Clone, Debug)]
pub struct ScaleSource {
    /// The sizes, in order ([`scale::scale_sizes`]).
    pub sizes: Vec<ScaleSize>,
    /// The `.npz` cache of generated pyramids (`None`: `OUT/cache`).
    pub cache: Option<PathBuf>,
    /// Largest contact count on which factorising solvers run
    /// ([`scale::SCALE_FACTORISING_MAX_CONTACTS`] by default).
    pub factorising_max_contacts: f64,
}

impl ScaleSource {
    /// The default sizes ([`scale::SCALE_TARGETS`]) or `targets`, capped at `max_contacts`,
    /// with the default cache and factorising cap. Errors: those of [`scale::scale_sizes`].
    pub fn new(targets: &[f64], max_contacts: Option<f64>) -> Result<Self> {
        Ok(Self {
            sizes: scale::scale_sizes(targets, max_contacts)?,
            cache: None,
            factorising_max_contacts: scale::SCALE_FACTORISING_MAX_CONTACTS,
        })
    }
}

/// One solver of a request: a token to resolve, or a spec built by the front end (a Python
/// callable).
#[derive(Clone)]
pub enum SolverToken {
    /// A registry name, variant, sweep or driven name (`pgs`, `pgs@omega=0.8`,
    /// `pgs@omega=0.6:1.4:0.2`, `ext:NAME`, `siconos:NAME`).
    Name(String),
    /// A ready spec.
    Spec(SolverSpec),
}

/// Everything a run needs, as the front ends give it. [`RunRequest::new`] has the defaults of
/// `cpbench run`.
#[derive(Clone)]
pub struct RunRequest {
    /// The instances.
    pub suite: SuiteSource,
    /// The solvers; `None`: the variants file's names, else the suite's default list, else
    /// the registry's ([`registry::default_solvers`]).
    pub solvers: Option<Vec<SolverToken>>,
    /// Per-solver settings (`{"pgs": {"omega": 0.8}}`), checked against the registry.
    pub settings: Option<serde_json::Map<String, serde_json::Value>>,
    /// Named variants.
    pub variants: Option<VariantsFile>,
    /// Definitions of `ext:` solvers.
    pub external: Option<ExternalDefs>,
    /// Named built-in profiles (`default`, `low`, `high`); `None`: [`DEFAULT_PROFILE`].
    pub profiles: Option<Vec<String>>,
    /// One custom tolerance instead of the profiles.
    pub tol: Option<f64>,
    /// Stopping and check residual (`None`: the suite's, else each class's default).
    pub residual: Option<ResidualKind>,
    /// Iteration budget per solve.
    pub max_iter: u64,
    /// Time budget per solve, s.
    pub time_limit: Option<f64>,
    /// Memory budget per solve, bytes.
    pub max_memory_bytes: Option<u64>,
    /// Monitor every k iterations ([`ExecSettings::check_every`]; `None`: every iteration).
    pub check_every: Option<u64>,
    /// The stall rule's window ([`ExecSettings::stall_window`]; `None`: no stall rule, as
    /// `cpbench run --stall-window off`).
    pub stall_window: Option<u64>,
    /// Stop at the first input that does not load (else it becomes a `load_error` row).
    pub fail_fast: bool,
    /// Output folder.
    pub out: PathBuf,
    /// Runs executed concurrently.
    pub jobs: usize,
    /// Timed solves per run.
    pub repeat: usize,
    /// Execute again the runs the folder already holds.
    pub rerun: bool,
    /// Run one shard of the runs.
    pub shard: Option<Shard>,
    /// Record every k-th iteration.
    pub trace_every: u64,
    /// Draw the run's plots.
    pub plots: bool,
    /// Figure options.
    pub figure: FigureOptions,
    /// Progress lines on stdout.
    pub progress: bool,
    /// Sample the machine's load at the start and the end.
    pub sample_load: bool,
    /// Measure the memory bandwidth.
    pub measure_bandwidth: bool,
    /// How global friction files are read ([`cpbench_problems::io::GlobalForm`]): condensed
    /// (the default), or kept as `M` and `H` (`--operator matrix-free`).
    pub global_form: cpbench_problems::io::GlobalForm,
}

impl RunRequest {
    /// A request for `suite` into `out` with `cpbench run`'s defaults (the executor's
    /// budgets, [`DEFAULT_PROFILE`], one job, one timed solve, every iteration traced, plots);
    /// for the `scale` suite its own: [`scale::SCALE_MAX_ITER`] iterations,
    /// [`scale::SCALE_TIME_LIMIT_S`] s, every [`scale::SCALE_TRACE_EVERY`]-th iteration
    /// traced, the memory bandwidth measured.
    pub fn new(suite: SuiteSource, out: PathBuf) -> Self {
        let exec = ExecSettings::default();
        let is_scale = matches!(suite, SuiteSource::Scale(_));
        let mut r = Self {
            suite,
            solvers: None,
            settings: None,
            variants: None,
            external: None,
            profiles: None,
            tol: None,
            residual: None,
            max_iter: exec.max_iter,
            time_limit: exec.max_time_s,
            max_memory_bytes: exec.max_memory_bytes,
            check_every: exec.check_every,
            stall_window: exec.stall_window,
            fail_fast: false,
            out,
            jobs: 1,
            repeat: 1,
            rerun: false,
            shard: None,
            trace_every: 1,
            plots: true,
            figure: FigureOptions::default(),
            progress: true,
            sample_load: false,
            measure_bandwidth: false,
            global_form: Default::default(),
        };
        if is_scale {
            r.max_iter = scale::SCALE_MAX_ITER;
            r.time_limit = Some(scale::SCALE_TIME_LIMIT_S);
            r.trace_every = scale::SCALE_TRACE_EVERY;
            r.measure_bandwidth = true;
        }
        r
    }

    /// Whether this is the `scale` suite.
    pub fn is_scale(&self) -> bool {
        matches!(self.suite, SuiteSource::Scale(_))
    }

    /// Check the budgets and the tolerance (as the executor would, before anything is read).
    /// Errors: [`HarnessError::Solver`] naming the bad value.
    pub fn validate(&self) -> Result<()> {
        ExecSettings {
            tol: self.tol.unwrap_or(ExecSettings::default().tol),
            max_iter: self.max_iter,
            max_time_s: self.time_limit,
            max_memory_bytes: self.max_memory_bytes,
            check_every: self.check_every,
            stall_window: self.stall_window,
            ..Default::default()
        }
        .validate()?;
        if self.is_scale() && self.jobs > 1 {
            return Err(HarnessError::Invalid(
                "--suite scale runs one run at a time on the whole machine: leave out --jobs"
                    .into(),
            ));
        }
        if let Some(m) = &self.settings {
            registry::check_settings_map(m)?;
        }
        Ok(())
    }

    /// The suite (for `scale` an empty one with [`scale::SCALE_SOLVERS`] as its default
    /// solvers: its instances are generated by [`Self::execute`]). Errors: an unreadable suite
    /// file or instance path.
    pub fn suite(&self) -> Result<Suite> {
        match &self.suite {
            SuiteSource::Paths {
                paths,
                class,
                symmetrize,
            } => Suite::from_paths("instances", paths, *class, *symmetrize),
            SuiteSource::Scale(_) => Ok(Suite {
                default_solvers: Some(scale::SCALE_SOLVERS.iter().map(|s| s.to_string()).collect()),
                ..Suite::new("scale", Vec::new())
            }),
            SuiteSource::Named(n) if n == "scale" => Err(HarnessError::Invalid(
                "the scale suite is generated, not read: ask for it as SuiteSource::Scale \
                 (cpbench run --suite scale)"
                    .into(),
            )),
            SuiteSource::Named(n) => match Suite::builtin(n) {
                Some(s) => Ok(s),
                None => Suite::from_file(std::path::Path::new(n)),
            },
        }
    }

    /// The profiles of the run: `tol` gives one `custom` profile; else the suite's own
    /// tolerance one named after the suite (when no profile is named); else the named
    /// built-in profiles ([`DEFAULT_PROFILE`] when none is named). Errors: an unknown
    /// profile name.
    pub fn profiles(&self, suite: &Suite) -> Result<Vec<Profile>> {
        if let Some(tol) = self.tol {
            return Ok(vec![Profile {
                name: "custom".into(),
                tol,
            }]);
        }
        if let (None, Some(tol)) = (&self.profiles, suite.default_tol) {
            return Ok(vec![Profile {
                name: suite.name.clone(),
                tol,
            }]);
        }
        let names = self
            .profiles
            .clone()
            .unwrap_or_else(|| vec![DEFAULT_PROFILE.to_string()]);
        names
            .iter()
            .map(|p| {
                Profile::builtin(p.trim()).ok_or_else(|| {
                    HarnessError::Invalid(format!("unknown profile '{p}' (default, low, high)"))
                })
            })
            .collect()
    }

    /// The solver specs in the order given: tokens through [`crate::variants::expand`] (in
    /// runs between driven names, so that errors name the token) and
    /// [`cpbench_solvers::external::resolve`], ready specs as they are; without solvers the
    /// default list. Errors: an unknown name (listing the known ones), `ext:` without
    /// definitions, a bad variant, a `py:` name given as text, a name given twice.
    pub fn solver_specs(&self, suite: &Suite) -> Result<Vec<SolverSpec>> {
        let tokens: Vec<SolverToken> = match (&self.solvers, &self.variants) {
            (Some(s), _) => s.clone(),
            (None, Some(v)) => v.names().into_iter().map(SolverToken::Name).collect(),
            (None, None) => suite
                .default_solvers
                .clone()
                .unwrap_or_else(|| {
                    registry::default_solvers()
                        .iter()
                        .map(|s| s.to_string())
                        .collect()
                })
                .into_iter()
                .map(SolverToken::Name)
                .collect(),
        };
        let mut out: Vec<SolverSpec> = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        let flush = |pending: &mut Vec<String>, out: &mut Vec<SolverSpec>| -> Result<()> {
            if !pending.is_empty() {
                out.extend(crate::variants::expand(
                    pending,
                    self.settings.as_ref(),
                    self.variants.as_ref(),
                )?);
                pending.clear();
            }
            Ok(())
        };
        for t in tokens {
            let spec = match t {
                SolverToken::Spec(s) => s,
                SolverToken::Name(name) => {
                    let name = name.trim().to_string();
                    if name.starts_with("py:") {
                        return Err(HarnessError::Invalid(format!(
                            "'{name}': py: solvers are Python callables: pass the function itself"
                        )));
                    }
                    let settings = self.settings.as_ref().and_then(|m| m.get(&name));
                    match cpbench_solvers::external::resolve_with_settings(
                        &name,
                        self.external.as_ref(),
                        settings,
                    ) {
                        None => {
                            pending.push(name);
                            continue;
                        }
                        Some(driven) => SolverSpec::driven(driven?),
                    }
                }
            };
            flush(&mut pending, &mut out)?;
            if out.iter().any(|s| s.label == spec.label) {
                return Err(HarnessError::Invalid(format!(
                    "--solvers: '{}' is named twice",
                    spec.label
                )));
            }
            out.push(spec);
        }
        flush(&mut pending, &mut out)?;
        Ok(out)
    }

    /// Load the suite's instances, each through `prepare` (e.g. the CLI's `--operator`).
    /// A failure is reported to `on_error` and kept as a [`LoadFailure`] (a `load_error` row),
    /// or returned when `fail_fast`. Errors: that failure; a suite with nothing in it.
    pub fn load(
        &self,
        suite: &Suite,
        mut prepare: impl FnMut(Instance) -> Result<Instance>,
        mut on_error: impl FnMut(&HarnessError),
    ) -> Result<(Vec<Instance>, Vec<LoadFailure>)> {
        let mut instances = Vec::new();
        let mut failures = Vec::new();
        if self.is_scale() {
            return Ok((instances, failures));
        }
        for entry in &suite.entries {
            match entry.load_with(self.global_form).and_then(&mut prepare) {
                Ok(i) => instances.push(i),
                Err(e) if !self.fail_fast => {
                    on_error(&e);
                    failures.push(LoadFailure {
                        source: entry.source_name(),
                        message: e.to_string(),
                    });
                }
                Err(e) => return Err(e),
            }
        }
        if instances.is_empty() && failures.is_empty() {
            return Err(HarnessError::Invalid(format!(
                "suite '{}' has no instances: nothing to run",
                suite.name
            )));
        }
        Ok((instances, failures))
    }

    /// The run's configuration for `suite`, `solvers` and the inputs that did not load:
    /// profiles ([`Self::profiles`]), the residual (the request's, else the suite's), the
    /// budgets and the output options. Errors: those of [`Self::profiles`].
    pub fn config(
        &self,
        suite: &Suite,
        solvers: Vec<SolverSpec>,
        load_errors: Vec<LoadFailure>,
    ) -> Result<RunConfig> {
        let residual = self.residual.or(suite.default_residual);
        let mut cfg = RunConfig::new(self.out.clone());
        cfg.suite = suite.name.clone();
        cfg.solvers = solvers;
        cfg.load_errors = load_errors;
        cfg.profiles = self.profiles(suite)?;
        cfg.jobs = self.jobs;
        cfg.repeat = self.repeat.max(1);
        cfg.sample_load = self.sample_load;
        cfg.rerun = self.rerun;
        cfg.shard = self.shard;
        cfg.exec.residual = residual;
        cfg.check_residual = residual;
        cfg.exec.max_iter = self.max_iter;
        cfg.exec.max_time_s = self.time_limit;
        cfg.exec.max_memory_bytes = self.max_memory_bytes;
        cfg.exec.check_every = self.check_every;
        cfg.exec.stall_window = self.stall_window;
        cfg.measure_bandwidth = self.measure_bandwidth;
        cfg.trace_every = self.trace_every;
        cfg.plots = self.plots;
        cfg.figure = self.figure;
        cfg.progress = self.progress;
        cfg.whole_machine = self.is_scale();
        Ok(cfg)
    }

    /// Execute the run: [`crate::run()`] on `instances`, or for the `scale` suite
    /// [`scale::run_scale`] (each size generated or read from the cache, then run;
    /// `on_size` is called after each). Returns the folder's rows. Errors: those of the run.
    pub fn execute(
        &self,
        instances: &[Instance],
        cfg: &RunConfig,
        on_size: impl FnMut(&SizeReport),
    ) -> Result<RunOutcome> {
        match &self.suite {
            SuiteSource::Scale(s) => {
                let cache = s.cache.clone().unwrap_or_else(|| self.out.join("cache"));
                let (outcome, _) = scale::run_scale(
                    &s.sizes,
                    &cache,
                    cfg,
                    Some(s.factorising_max_contacts),
                    on_size,
                )?;
                Ok(outcome)
            }
            _ => crate::run(instances, cfg),
        }
    }
}
