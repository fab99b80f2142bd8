//! Instance generation with cpbench's own granular time stepper
//! ([`cpbench_granular`]): the adapter that puts any registered solver in
//! the loop ([`RegistrySolver`]), the driver behind `cpbench generate` ([`generate`]: bundles of
//! exported steps plus `trajectory.csv`), and the default suite's generated instances
//! ([`instance_from_snapshot`]).

use crate::error::HarnessError;
use crate::fsutil::write_atomic;
use cpbench_granular::{
    ContactSolution, ContactSolver, GranularError, SceneSpec, Snapshot, StepReport, StepTimings,
};
use cpbench_problems::io::ClassChoice;
use cpbench_problems::operator::OperatorKind;
use cpbench_problems::{Instance, ProblemError, ResidualKind};
use cpbench_solvers::registry::build;
use cpbench_solvers::{ExecSettings, Executor, Solver, SolverError, Status};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Errors of [`generate`].
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The simulation failed (bad parameters, solver failure, non-finite state).
    #[error(transparent)]
    Granular(#[from] GranularError),
    /// The solver could not be built.
    #[error(transparent)]
    Solver(#[from] SolverError),
    /// Writing a bundle failed.
    #[error(transparent)]
    Problem(#[from] ProblemError),
    /// Writing `trajectory.csv` or the state failed.
    #[error(transparent)]
    Harness(#[from] HarnessError),
    /// Invalid driver settings.
    #[error("invalid setting {name}: {reason}")]
    Setting {
        /// Setting name.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// A registry solver run by an [`Executor`], as the stepper's [`ContactSolver`].
pub struct RegistrySolver {
    solver: Box<dyn Solver + Send>,
    executor: Executor,
    /// Effective settings of the solver (JSON, defaults filled in).
    pub settings: serde_json::Value,
}

impl RegistrySolver {
    /// Build solver `name` with `settings` (JSON object or defaults) under `exec` limits.
    /// Errors: those of [`build`] and [`ExecSettings::validate`].
    pub fn new(
        name: &str,
        settings: Option<&serde_json::Value>,
        exec: ExecSettings,
    ) -> Result<Self, SolverError> {
        exec.validate()?;
        let b = build(name, settings)?;
        Ok(Self {
            solver: b.solver,
            executor: Executor::new(exec),
            settings: b.settings,
        })
    }

    /// Solver name.
    pub fn name(&self) -> &'static str {
        self.solver.name()
    }

    /// Whether the solver takes problems of `class`.
    pub fn supports(&self, class: cpbench_problems::ProblemClass) -> bool {
        self.solver.supports(class)
    }
}

impl ContactSolver for RegistrySolver {
    /// Runs the executor from the warm start. A solve that stops short of the tolerance
    /// (iteration budget, stall) still returns its best iterate with `converged = false`;
    /// only a numerical error or an unsupported class is an error.
    fn solve(&mut self, inst: &Instance, warm: Option<&[f64]>) -> Result<ContactSolution, String> {
        let res = self
            .executor
            .run(self.solver.as_mut(), inst, warm, &mut [])
            .map_err(|e| e.to_string())?;
        match res.status {
            Status::NumericalError
            | Status::Unsupported
            | Status::Diverged
            | Status::RayTermination
            | Status::Crashed
            | Status::BadOutput => Err(format!(
                "{} on {}: {}{}",
                res.solver,
                inst.name(),
                res.status.as_str(),
                res.message.map(|m| format!(" ({m})")).unwrap_or_default()
            )),
            st => Ok(ContactSolution {
                residual: res.residuals.get(ResidualKind::resolve(
                    self.executor.settings.residual,
                    inst.class(),
                )),
                converged: st == Status::Converged,
                solver_time: Some(res.time_s),
                iterations: res.iterations,
                gamma: res.gamma,
            }),
        }
    }
}

/// How [`generate`] writes the exported steps: the one list of written formats,
/// [`cpbench_problems::io::OutputFormat`]. A bundle directory `{label}_step{NNNN}__{ccp|lcp}`,
/// an fclib local problem `{label}_step{NNNN}.hdf5` (CCP only; read back, its instance name is
/// `{label}_step{NNNN}__ccp`, the bundle's name), or `{label}_step{NNNN}__{ccp|lcp}.npz`.
pub use cpbench_problems::io::OutputFormat as ExportFormat;

/// What every generate run does, in 3-D ([`GenerateConfig`]) and in the plane
/// ([`crate::generate_planar::PlanarGenerateConfig`]): its steps, exports and solver.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// Steps to simulate, `>= 1`.
    pub steps: u64,
    /// Export the instance of every step whose number is a multiple of this (0: none).
    pub export_every: u64,
    /// Output folder (exports, `trajectory.csv`).
    pub out: PathBuf,
    /// Solver name in the registry.
    pub solver: String,
    /// Solver settings (JSON object) or defaults.
    pub solver_settings: Option<serde_json::Value>,
    /// Executor limits and tolerance of each solve.
    pub exec: ExecSettings,
    /// Format of the exported steps (fclib: frictional scenes only).
    pub export_format: ExportFormat,
}

impl RunSettings {
    /// Check the settings ([`check_steps_and_format`]), build the solver and create the
    /// output folder. Errors: those of the checks, of [`RegistrySolver::new`], I/O errors.
    pub(crate) fn start(&self, frictionless: bool) -> Result<RegistrySolver, GenerateError> {
        check_steps_and_format(self.steps, self.export_format, frictionless)?;
        let solver = RegistrySolver::new(
            &self.solver,
            self.solver_settings.as_ref(),
            self.exec.clone(),
        )?;
        std::fs::create_dir_all(&self.out).map_err(|e| HarnessError::io(&self.out, e))?;
        Ok(solver)
    }
}

/// What [`generate`] does.
#[derive(Clone, Debug)]
pub struct GenerateConfig {
    /// Scene, size, seed, frictionless mode.
    pub spec: SceneSpec,
    /// Steps, exports, output folder (bundles, `trajectory.csv`, `state.json`) and solver.
    pub run: RunSettings,
    /// Write the final state to `state.json` ([`Snapshot`]).
    pub save_state: bool,
    /// Write VTK files of the bodies and contacts at every view step
    /// ([`crate::simout::write_vtk_step`]: `{out}/vtk/bodies_NNNN.vtk`, `contacts_NNNN.vtk`).
    pub vtk: bool,
    /// Draw PNG views of the scene at every view step ([`crate::simout::write_snapshots`],
    /// drawn at the end of the run with one colour scale:
    /// `{out}/snapshots/step_NNNN.png`).
    pub snapshots: bool,
    /// Storage of `N` in the instances ([`cpbench_granular::Simulation::set_operator`]):
    /// `None` automatic (CSC below `cpbench_problems::operator::BLOCK_MIN_NNZ` stored
    /// entries, block storage above), or a given kind; [`OperatorKind::MatrixFree`] exports
    /// `D` and `M` and needs [`ExportFormat::Npz`] when anything is exported.
    pub operator: Option<OperatorKind>,
    /// Build (and export, unless `export_every` is 0) the problem of the first step only,
    /// without solving it or moving anything; needs `steps = 1`. The summary has one report
    /// with the detection, assembly and instance times.
    pub no_solve: bool,
    /// Write the views (VTK, PNG) of every step whose number is a multiple of this; `None`:
    /// `export_every`. 0: none.
    pub view_every: Option<u64>,
    /// Newton's coefficient of restitution `e` in `[0, 1]` of every contact
    /// ([`cpbench_granular::SimParams::restitution`]: Moreau's impact law on the impacting
    /// normal rows); `None`: the scene's own (0 for fill, pile, pyramid and tube: the
    /// inelastic scheme, bit for bit). Recorded in the provenance of every exported instance
    /// when `> 0`.
    pub restitution: Option<f64>,
    /// Closing-speed threshold of the impact law (m/s,
    /// [`cpbench_granular::SimParams::restitution_threshold`]); `None`: its default, 1e-2.
    pub restitution_threshold: Option<f64>,
    /// Rolling resistance `mu_r >= 0` of every contact
    /// ([`cpbench_granular::SimParams::rolling_friction`]); `None`: the scene's own (0.05 for
    /// the ellipsoid scenes, 0 for the others: bit for bit the earlier scheme). Recorded in
    /// the provenance when `> 0`.
    pub rolling_friction: Option<f64>,
    /// Compliant contact ([`cpbench_granular::SimParams::compliance`]: SAP's or MuJoCo's `R`
    /// and constant term); `None`: rigid. Recorded in the provenance (`compliance`) and in the
    /// instances' `compliance` field.
    pub compliance: Option<cpbench_granular::ContactCompliance>,
}

/// Outcome of [`generate`].
#[derive(Clone, Debug, Default)]
pub struct GenerateSummary {
    /// One report per step.
    pub steps: Vec<StepReport>,
    /// Bundle directories (or fclib files) written.
    pub exported: Vec<PathBuf>,
    /// VTK and PNG files written (in step order).
    pub views: Vec<PathBuf>,
    /// Bodies in the scene.
    pub bodies: usize,
    /// Total wall time.
    pub wall: Duration,
    /// Pile height of the final state (m): [`cpbench_granular::penalty::pile_height`], the
    /// observable shared with the penalty stepper.
    pub pile_height: f64,
    /// Kinetic energy below which the scene counts as settled (J):
    /// [`cpbench_granular::penalty::settle_threshold`] of the scene's bodies and gravity.
    pub settle_threshold: f64,
}

impl GenerateSummary {
    /// Mean phase times per step in seconds: `(detection, assembly, instance, solve, update)`.
    pub fn mean_timings(&self) -> [f64; 5] {
        StepTimings::mean(self.steps.iter().map(|r| &r.timings))
    }
}

/// Columns of `trajectory.csv`.
pub const TRAJECTORY_HEADER: &str = "step,time,kinetic_energy,contacts,max_penetration,\
iterations,residual,converged,warm_matched,n,nnz,envelope,t_detection_s,t_assembly_s,\
t_instance_s,t_solve_s,t_update_s";

/// A row of `trajectory.csv`: the 3-D stepper's [`StepReport`] ([`TRAJECTORY_HEADER`]) or
/// the planar one's ([`crate::generate_planar::PLANAR_TRAJECTORY_HEADER`]).
pub trait TrajectoryRow {
    /// The header line (no newline).
    const HEADER: &'static str;
    /// The step number (1-based).
    fn step_number(&self) -> u64;
    /// Append the row and its newline to `s`.
    fn write_row(&self, s: &mut String);
}

/// The solve's columns of a trajectory row: `iterations, residual, converged, warm_matched,
/// n, nnz, envelope`.
pub(crate) struct SolveColumns<'a>(pub &'a StepReport);

impl std::fmt::Display for SolveColumns<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.0;
        write!(
            f,
            "{},{:e},{},{},{},{},{:e}",
            r.iterations, r.residual, r.converged, r.warm_matched, r.n, r.nnz, r.envelope
        )
    }
}

/// The timing columns of a trajectory row (s): detection, assembly, instance, solve, update.
pub(crate) struct TimingColumns<'a>(pub &'a StepTimings);

impl std::fmt::Display for TimingColumns<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [a, b, c, d, e] = self.0.seconds();
        write!(f, "{a:e},{b:e},{c:e},{d:e},{e:e}")
    }
}

impl TrajectoryRow for StepReport {
    const HEADER: &'static str = TRAJECTORY_HEADER;

    fn step_number(&self) -> u64 {
        self.step
    }

    fn write_row(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "{},{},{:e},{},{:e},{},{}",
            self.step,
            self.time,
            self.kinetic_energy,
            self.contacts,
            self.max_penetration,
            SolveColumns(self),
            TimingColumns(&self.timings)
        );
    }
}

/// `trajectory.csv` of `steps`: the header and one row per step.
pub(crate) fn trajectory_csv<R: TrajectoryRow>(steps: &[R]) -> String {
    let mut s = String::with_capacity(180 * (steps.len() + 1));
    s.push_str(R::HEADER);
    s.push('\n');
    for r in steps {
        r.write_row(&mut s);
    }
    s
}

/// Write `inst` into `out` as `format` asks: the bundle directory `{out}/{name}`, the file
/// `{out}/{name}.npz`, or the fclib file `{out}/{stem}.hdf5` (`stem` the name without
/// `__ccp`); returns the path. Shared by [`generate`] and
/// [`crate::generate_planar::generate_planar`]. Errors: the writers' I/O and format errors.
pub fn export_instance(
    inst: &Instance,
    format: ExportFormat,
    out: &Path,
) -> Result<PathBuf, GenerateError> {
    let path = format.path_in(out, inst);
    format.write(inst, &path)?;
    Ok(path)
}

/// The settings checks shared by [`generate`] and
/// [`crate::generate_planar::generate_planar`]: [`GenerateError::Setting`] for `steps = 0` or
/// fclib export of a frictionless scene (fclib holds Coulomb-cone problems only).
pub fn check_steps_and_format(
    steps: u64,
    format: ExportFormat,
    frictionless: bool,
) -> Result<(), GenerateError> {
    if steps == 0 {
        return Err(GenerateError::Setting {
            name: "steps",
            reason: "must be >= 1".into(),
        });
    }
    if format == ExportFormat::Fclib && frictionless {
        return Err(GenerateError::Setting {
            name: "fclib",
            reason: "fclib holds frictional (Coulomb-cone) problems only, not a frictionless \
                     scene"
                .into(),
        });
    }
    Ok(())
}

/// What [`drive`] does with the steps of a run.
pub(crate) struct Drive<'a> {
    /// Steps, exports and output folder.
    pub run: &'a RunSettings,
    /// Export every step (when `export_every > 0`), whatever its number.
    pub export_all: bool,
}

/// The loop shared by [`generate`] and [`crate::generate_planar::generate_planar`]: `steps`
/// times, `step` advances `sim`; the instance of an exported step (`last_instance`, none
/// without contacts) is written ([`export_instance`]) with its contacts file
/// ([`crate::trajectory::contacts_csv`]) and its path pushed on `exported`, then
/// `after` sees the step and its report is pushed on `reports`. Stops at the first error
/// (the reports so far are kept, for `trajectory.csv`); the index `trajectory.json` of what
/// was exported is written in either case.
pub(crate) fn drive<S: Stepped, R: TrajectoryRow>(
    sim: &mut S,
    d: &Drive,
    mut step: impl FnMut(&mut S) -> Result<R, GranularError>,
    mut after: impl FnMut(&S, &R) -> Result<(), GenerateError>,
    reports: &mut Vec<R>,
    exported: &mut Vec<PathBuf>,
) -> Result<(), GenerateError> {
    let run = d.run;
    let mut index = Vec::new();
    let mut result = Ok(());
    for _ in 0..run.steps {
        let rep = match step(sim) {
            Ok(r) => r,
            Err(e) => {
                result = Err(e.into());
                break;
            }
        };
        if run.export_every > 0 && (d.export_all || rep.step_number() % run.export_every == 0) {
            if let Some(inst) = sim.last_instance() {
                let path = export_instance(inst, run.export_format, &run.out)?;
                let ids = sim.last_contact_ids();
                let frames = sim.last_contact_frames();
                let contacts = crate::trajectory::contacts_file_name(&path);
                write_atomic(
                    &run.out.join(&contacts),
                    crate::trajectory::contacts_csv(&ids, Some(&frames)).as_bytes(),
                )?;
                index.push(crate::trajectory::IndexStep {
                    step: rep.step_number(),
                    instance: path
                        .file_name()
                        .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
                    contacts,
                    contacts_count: ids.len(),
                });
                exported.push(path);
            }
        }
        if let Err(e) = after(sim, &rep) {
            result = Err(e);
            break;
        }
        reports.push(rep);
    }
    // the index of what was exported, also when the simulation failed part-way
    if !index.is_empty() {
        crate::trajectory::write_index(&run.out, sim.label(), index)?;
    }
    result
}

/// What [`drive`] reads of a simulation after a step: the instance and the identities of its
/// contacts, and the scene label (for the trajectory index).
pub(crate) trait Stepped {
    /// The last step's instance (`None` without contacts).
    fn last_instance(&self) -> Option<&Instance>;
    /// The identities of its contacts, in its order.
    fn last_contact_ids(&self) -> Vec<cpbench_granular::contact::ContactId>;
    /// The frames of its contacts, in its order.
    fn last_contact_frames(&self) -> cpbench_granular::contact::ContactFrames;
    /// The scene label.
    fn label(&self) -> &str;
}

impl Stepped for cpbench_granular::Simulation {
    fn last_instance(&self) -> Option<&Instance> {
        cpbench_granular::Simulation::last_instance(self)
    }
    fn last_contact_ids(&self) -> Vec<cpbench_granular::contact::ContactId> {
        cpbench_granular::Simulation::last_contact_ids(self)
    }
    fn last_contact_frames(&self) -> cpbench_granular::contact::ContactFrames {
        cpbench_granular::Simulation::last_contact_frames(self)
    }
    fn label(&self) -> &str {
        cpbench_granular::Simulation::label(self)
    }
}

impl Stepped for cpbench_granular::planar::PlanarSimulation {
    fn last_instance(&self) -> Option<&Instance> {
        cpbench_granular::planar::PlanarSimulation::last_instance(self)
    }
    fn last_contact_ids(&self) -> Vec<cpbench_granular::contact::ContactId> {
        cpbench_granular::planar::PlanarSimulation::last_contact_ids(self)
    }
    fn last_contact_frames(&self) -> cpbench_granular::contact::ContactFrames {
        cpbench_granular::planar::PlanarSimulation::last_contact_frames(self)
    }
    fn label(&self) -> &str {
        cpbench_granular::planar::PlanarSimulation::label(self)
    }
}

/// Simulate `cfg.run.steps` steps of `cfg.spec` with `cfg.run.solver` in the loop; write one native
/// bundle per exported step (`{out}/{label}_step{NNNN}__{ccp|lcp}`; with
/// [`ExportFormat::Fclib`] the fclib file `{out}/{label}_step{NNNN}.hdf5`; steps without
/// contacts are not exported) with its contacts file `{label}_step{NNNN}.contacts.csv` and,
/// at the end, the trajectory index `trajectory.json` ([`crate::trajectory`]),
/// `trajectory.csv` (one row per step, see [`TRAJECTORY_HEADER`];
/// written atomically, also when the simulation fails part-way), if asked VTK files and PNG
/// views of the steps that are multiples of `view_every` ([`crate::simout`]), and, if asked,
/// `state.json`.
/// `progress` is called after every step.
///
/// Errors: [`GenerateError::Setting`] for `steps = 0` or fclib export of a frictionless scene,
/// scene and solver errors, I/O errors.
pub fn generate(
    cfg: &GenerateConfig,
    mut progress: impl FnMut(&StepReport),
) -> Result<GenerateSummary, GenerateError> {
    let run = &cfg.run;
    check_steps_and_format(run.steps, run.export_format, cfg.spec.frictionless)?;
    if cfg.operator == Some(OperatorKind::MatrixFree)
        && run.export_every > 0
        && run.export_format == ExportFormat::Fclib
    {
        return Err(GenerateError::Setting {
            name: "operator",
            reason: "a matrix-free instance (D and M, N never formed) is exported as .npz or \
                     as a bundle (D.mtx, M_diag.mtx), not fclib (which stores W = N): use \
                     --format npz or bundle"
                .into(),
        });
    }
    if cfg.no_solve && run.steps != 1 {
        return Err(GenerateError::Setting {
            name: "no_solve",
            reason: format!(
                "builds the problem of the first step only: needs steps = 1, not {}",
                run.steps
            ),
        });
    }
    let start = Instant::now();
    let mut solver =
        RegistrySolver::new(&run.solver, run.solver_settings.as_ref(), run.exec.clone())?;
    let mut scene = cfg.spec.build()?;
    let params = &mut scene.world.params;
    if let Some(e) = cfg.restitution {
        params.restitution = e;
    }
    if let Some(t) = cfg.restitution_threshold {
        params.restitution_threshold = t;
    }
    if let Some(m) = cfg.rolling_friction {
        params.rolling_friction = m;
    }
    if cfg.compliance.is_some() {
        params.compliance = cfg.compliance;
    }
    // checked (with the other parameters) by `into_simulation`
    let mut sim = scene.into_simulation()?;
    sim.set_operator(cfg.operator);
    let mut summary = GenerateSummary {
        bodies: sim.world().bodies.len(),
        ..Default::default()
    };
    std::fs::create_dir_all(&run.out).map_err(|e| HarnessError::io(&run.out, e))?;
    // the PNG views are drawn at the end, with one colour scale over the run
    let mut frames: Vec<crate::simout::SnapshotFrame> = Vec::new();
    let mut views = Vec::new();
    let view_every = cfg.view_every.unwrap_or(run.export_every);
    let stepped = drive(
        &mut sim,
        &Drive {
            run,
            export_all: cfg.no_solve,
        },
        |sim| {
            if cfg.no_solve {
                sim.build_instance_report()
            } else {
                sim.step(&mut solver)
            }
        },
        |sim, rep| {
            if (cfg.vtk || cfg.snapshots) && view_every > 0 && rep.step % view_every == 0 {
                let label = sim.label().to_string();
                if cfg.vtk {
                    views.extend(crate::simout::write_vtk_step(sim, &label, &run.out)?);
                }
                if cfg.snapshots {
                    frames.push(crate::simout::SnapshotFrame::of(sim));
                }
            }
            progress(rep);
            Ok(())
        },
        &mut summary.steps,
        &mut summary.exported,
    );
    let traj = run.out.join("trajectory.csv");
    write_atomic(&traj, trajectory_csv(&summary.steps).as_bytes())?;
    let snapshots = crate::simout::write_snapshots(&frames, sim.label(), &run.out)?;
    stepped?;
    summary.views = views;
    summary.views.extend(snapshots);
    if cfg.save_state {
        let note = format!(
            "{} steps with {} (tol {:e}, max_iter {}), warm-started",
            run.steps, run.solver, run.exec.tol, run.exec.max_iter
        );
        let snap = Snapshot::capture(&sim, &cfg.spec, note);
        write_atomic(&run.out.join("state.json"), snap.to_json().as_bytes())?;
    }
    summary.pile_height = cpbench_granular::penalty::pile_height(&sim.world().bodies);
    summary.settle_threshold = cpbench_granular::penalty::settle_threshold(
        &sim.world().bodies,
        &sim.world().params.gravity,
    );
    summary.wall = start.elapsed();
    Ok(summary)
}

/// The instance of the state saved in `snapshot` (JSON of a [`Snapshot`]): the CCP, or for
/// [`ClassChoice::Lcp`] the frictionless LCP (which equals the CCP's normal block), for
/// [`ClassChoice::Coulomb`] the Coulomb problem on the CCP's data (and the BLCP and pyramid LCP
/// of [`ClassChoice::derive_from`] likewise). `origin`
/// names the snapshot in errors. Errors: [`HarnessError::Suite`] for a malformed snapshot or
/// a state without contacts.
pub fn instance_from_snapshot(
    origin: &str,
    snapshot: &str,
    class: ClassChoice,
) -> Result<Instance, HarnessError> {
    let err = |message: String| HarnessError::Suite {
        path: Path::new(origin).to_path_buf(),
        message,
    };
    let snap = Snapshot::from_json(snapshot).map_err(|e| err(e.to_string()))?;
    let mut sim = snap
        .restore(class == ClassChoice::Lcp)
        .map_err(|e| err(e.to_string()))?;
    let inst = sim.build_instance().map_err(|e| err(e.to_string()))?;
    let inst = inst
        .cloned()
        .ok_or_else(|| err("the saved state has no contacts".into()))?;
    match class {
        // the frictionless LCP is the restored state's own instance
        ClassChoice::Ccp | ClassChoice::Lcp => Ok(inst),
        other => other.derive_from(inst).map_err(|e| err(e.to_string())),
    }
}
