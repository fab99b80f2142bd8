//! Solvers in the loop (issue 32, item 3): each solver drives its own copy of a granular
//! simulation (`cpbench simulate`), so that beside the cost per step the physical consequences
//! of its answers show: penetration, energies, momentum, the drift of a resting stack and how
//! far its trajectory moves from the first solver's.
//!
//! The steppers build a CCP (Anitescu's relaxation) every step. A solver that does not take
//! the CCP but takes the Coulomb problem (`nsgs`, `nsn-*`, ...) gets the Coulomb problem on the
//! same data instead ([`Instance::into_coulomb`]: same `N`, `r` and cones, the true Coulomb law
//! with De Saxce's modified velocity), so the two formulations can be compared in the loop; the
//! run's `problem` column says which one a solver solved.
//!
//! The step itself (advance the stepper, then measure the step) is [`Stepping`], which the
//! time-stepping recipes of `cpbench reproduce` use too, so a recipe's trace and a `simulate`
//! row of the same step agree in their shared columns.
//!
//! Every run starts from the same scene (name, size, seed: the same bodies to the bit) and
//! warm-starts each step from its own previous answer (the stepper's warm start, mapped by
//! contact identity). A step whose solve stops short of the tolerance is still taken (its best
//! iterate moves the bodies: that is the point of the comparison); a solver error (numerical
//! error, unsupported class) or a non-finite state ends that solver's run, and its rows so far
//! are kept.
//!
//! Quantities per step, after the step unless said otherwise:
//! - `max_penetration` (m): the largest overlap among the contacts detected at the start of
//!   the step, i.e. what the previous steps' answers left;
//! - `kinetic_energy` (J): translational and rotational, all bodies;
//! - `potential_energy` (J): gravity's, `-sum_i m_i g . x_i` over the movable bodies, measured
//!   from the origin (differences are what matter);
//! - `momentum` (kg m/s): the norm of the movable bodies' linear momentum;
//! - `drift` (m): the largest displacement of a movable body from its initial position (for a
//!   resting stack, the creep the answers cause);
//! - `divergence` (m): the root mean square over the movable bodies of the distance between
//!   their positions in this run and in the first solver's run at the same step (0 for the
//!   first solver, NaN once the first solver's run has ended);
//! - the physical-fidelity criteria of the step's answer ([`cpbench_problems::fidelity()`]:
//!   Signorini, De Saxce's NCP, the MDP gap, the spurious normal velocity, the cone
//!   violation; NaN on a step without contacts), on the step's problem whichever formulation
//!   the solver solved.

use crate::error::{HarnessError, Result};
use crate::fsutil::write_atomic;
use crate::generate::RegistrySolver;
use crate::plot::{draw_grid, Axis, FigureOptions, LinePlot, Series};
use crate::trajectory::quantile;
use cpbench_granular::planar::{PlanarSceneKind, PlanarSimulation};
use cpbench_granular::{
    ContactSolution, ContactSolver, GranularError, SceneKind, SceneSpec, Simulation, StepReport,
};
use cpbench_problems::{Fidelity, Instance, ProblemClass};
use cpbench_solvers::ExecSettings;
use std::path::{Path, PathBuf};

/// What `cpbench simulate` runs.
#[derive(Clone, Debug)]
pub struct ClosedLoopConfig {
    /// Scene name (a `cpbench generate --scene` name, 3-D or planar).
    pub scene: String,
    /// Scene size (the scene's own meaning: layers, bodies, ...), `>= 1`.
    pub size: usize,
    /// Random seed of the scene.
    pub seed: u64,
    /// Steps per run, `>= 1`.
    pub steps: u64,
    /// Registry solver names, one run each; the first is the reference of `divergence`.
    pub solvers: Vec<String>,
    /// Tolerance, residual and per-step budget of every solve.
    pub exec: ExecSettings,
    /// Compliant contact ([`cpbench_granular::SimParams::compliance`], for a planar scene
    /// [`cpbench_granular::planar::PlanarParams::compliance`]); `None`: rigid.
    pub compliance: Option<cpbench_granular::ContactCompliance>,
}

/// One step of one solver's run (module docs for the physical columns).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopRow {
    /// Solver name.
    pub solver: String,
    /// Step number (1-based).
    pub step: u64,
    /// Simulated time after the step (s).
    pub time: f64,
    /// Contacts of the step's problem.
    pub contacts: usize,
    /// Solver iterations of the step.
    pub iterations: u64,
    /// Whether the solve met the tolerance (true without contacts).
    pub converged: bool,
    /// The solver's final stopping residual (NaN without contacts).
    pub residual: f64,
    /// Solver time of the step (s; 0 without contacts).
    pub solve_s: f64,
    /// Largest overlap at the start of the step (m).
    pub max_penetration: f64,
    /// Kinetic energy (J).
    pub kinetic_energy: f64,
    /// Gravitational potential energy (J).
    pub potential_energy: f64,
    /// Norm of the linear momentum (kg m/s).
    pub momentum: f64,
    /// Largest displacement from the initial positions (m).
    pub drift: f64,
    /// RMS distance from the first solver's positions at the same step (m).
    pub divergence: f64,
    /// The physical-fidelity criteria of the step's answer (NaN without contacts).
    pub fidelity: Fidelity,
}

/// One solver's run: its rows and, when it ended early, why.
#[derive(Clone, Debug)]
pub struct LoopRun {
    /// Solver name (`name #2`, ... for a solver named again in [`ClosedLoopConfig::solvers`]).
    pub solver: String,
    /// The problem it solved each step: `ccp`, or `coulomb` on the CCP's data (module docs).
    pub problem: &'static str,
    /// One row per step taken.
    pub rows: Vec<LoopRow>,
    /// The error that ended the run before the last step (`None`: all steps taken).
    pub failure: Option<String>,
}

/// A registry solver in the loop, given the Coulomb problem on the step's data when it does not
/// take the CCP but takes the Coulomb problem (module docs).
struct InLoop {
    inner: RegistrySolver,
    coulomb: bool,
}

impl InLoop {
    fn new(inner: RegistrySolver) -> Self {
        let coulomb = !inner.supports(ProblemClass::Ccp) && inner.supports(ProblemClass::Coulomb);
        Self { inner, coulomb }
    }
}

impl ContactSolver for InLoop {
    fn solve(
        &mut self,
        inst: &Instance,
        warm: Option<&[f64]>,
    ) -> std::result::Result<ContactSolution, String> {
        if self.coulomb && inst.class() == ProblemClass::Ccp {
            let coulomb = inst.clone().into_coulomb().map_err(|e| e.to_string())?;
            self.inner.solve(&coulomb, warm)
        } else {
            self.inner.solve(inst, warm)
        }
    }
}

/// The two steppers behind one interface: a step with a solver, the movable bodies'
/// positions and the energies ([`Simulation`] and [`PlanarSimulation`]; boxed ones too).
pub trait LoopSim {
    /// One time step with `solver` in the loop.
    fn advance(
        &mut self,
        solver: &mut dyn ContactSolver,
    ) -> std::result::Result<StepReport, GranularError>;
    /// The movable bodies' positions, flattened (`dim` entries each), into `out`.
    fn positions(&self, out: &mut Vec<f64>);
    /// Kinetic energy (J), potential energy (J), the norm of the linear momentum (kg m/s).
    fn energies(&self) -> (f64, f64, f64);
    /// Coordinates per position: 3, or 2 in the plane.
    fn dim(&self) -> usize;
    /// The last step's instance and answer (`None` without contacts).
    fn last_answer(&self) -> Option<(&Instance, &[f64])>;
}

impl<T: LoopSim + ?Sized> LoopSim for Box<T> {
    fn advance(
        &mut self,
        solver: &mut dyn ContactSolver,
    ) -> std::result::Result<StepReport, GranularError> {
        (**self).advance(solver)
    }
    fn positions(&self, out: &mut Vec<f64>) {
        (**self).positions(out)
    }
    fn energies(&self) -> (f64, f64, f64) {
        (**self).energies()
    }
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn last_answer(&self) -> Option<(&Instance, &[f64])> {
        (**self).last_answer()
    }
}

/// The step core of a solver in the loop, shared by [`closed_loop`] (`cpbench simulate`) and
/// the time-stepping recipes (`cpbench reproduce`): advance the stepper one step, then measure
/// the step's physics ([`LoopRow`], module docs) against the positions the simulation started
/// from. Allocates two position buffers once; a step allocates nothing of its own.
pub struct Stepping<S: LoopSim> {
    sim: S,
    x0: Vec<f64>,
    x: Vec<f64>,
}

impl<S: LoopSim> Stepping<S> {
    /// The core around a fresh simulation (its current positions are the origin of `drift`).
    pub fn new(sim: S) -> Self {
        let mut x0 = Vec::new();
        sim.positions(&mut x0);
        Self {
            x: x0.clone(),
            x0,
            sim,
        }
    }

    /// The simulation.
    pub fn sim(&self) -> &S {
        &self.sim
    }

    /// The movable bodies' positions after the last step (the initial ones before the first),
    /// `dim` coordinates each.
    pub fn positions(&self) -> &[f64] {
        &self.x
    }

    /// The root mean square distance between the current positions and `reference` (same
    /// bodies, same layout) (m).
    pub fn divergence_from(&self, reference: &[f64]) -> f64 {
        rms_distance(&self.x, reference, self.sim.dim())
    }

    /// One step with `solver` in the loop: the stepper's report and the step's row for
    /// `solver` (named `label`), its `divergence` 0 (the caller measures it against its
    /// reference, [`Self::divergence_from`]). Errors: the stepper's (a solver failure, a
    /// non-finite state).
    pub fn step(
        &mut self,
        solver: &mut dyn ContactSolver,
        label: &str,
    ) -> std::result::Result<(StepReport, LoopRow), GranularError> {
        let rep = self.sim.advance(solver)?;
        self.sim.positions(&mut self.x);
        let drift = max_distance(&self.x, &self.x0, self.sim.dim());
        let (kinetic_energy, potential_energy, momentum) = self.sim.energies();
        let fidelity = match self.sim.last_answer() {
            Some((inst, gamma)) if rep.contacts > 0 => cpbench_problems::fidelity(inst, gamma),
            _ => Fidelity::NAN,
        };
        let row = LoopRow {
            solver: label.to_string(),
            step: rep.step,
            time: rep.time,
            contacts: rep.contacts,
            iterations: rep.iterations,
            converged: rep.converged,
            residual: rep.residual,
            solve_s: rep.solver_time.unwrap_or(rep.timings.solve.as_secs_f64()),
            max_penetration: rep.max_penetration,
            kinetic_energy,
            potential_energy,
            momentum,
            drift,
            divergence: 0.0,
            fidelity,
        };
        Ok((rep, row))
    }
}

/// The [`LoopSim`] methods both steppers implement alike, through the inherent methods they
/// share by name (`kinetic_energy`, `gravity_energy`, `momentum`, `last_instance`,
/// `last_impulses`): written once, expanded in the `impl` for [`Simulation`] and for
/// [`PlanarSimulation`].
macro_rules! shared_loop_sim_methods {
    () => {
        fn energies(&self) -> (f64, f64, f64) {
            (
                self.kinetic_energy(),
                self.gravity_energy(),
                self.momentum().norm(),
            )
        }
        fn last_answer(&self) -> Option<(&Instance, &[f64])> {
            self.last_instance().map(|i| (i, self.last_impulses()))
        }
    };
}

impl LoopSim for Simulation {
    fn advance(
        &mut self,
        solver: &mut dyn ContactSolver,
    ) -> std::result::Result<StepReport, GranularError> {
        self.step(solver)
    }
    fn positions(&self, out: &mut Vec<f64>) {
        out.clear();
        for b in self.world().bodies.iter().filter(|b| !b.fixed) {
            out.extend(b.pos.iter());
        }
    }
    fn dim(&self) -> usize {
        3
    }
    shared_loop_sim_methods!();
}

impl LoopSim for PlanarSimulation {
    fn advance(
        &mut self,
        solver: &mut dyn ContactSolver,
    ) -> std::result::Result<StepReport, GranularError> {
        self.step(solver).map(|r| r.core)
    }
    fn positions(&self, out: &mut Vec<f64>) {
        out.clear();
        for d in self.discs().iter().filter(|d| !d.fixed) {
            out.extend(d.pos.iter());
        }
    }
    fn dim(&self) -> usize {
        2
    }
    shared_loop_sim_methods!();
}

/// A fresh simulation of the configured scene. Errors: an unknown scene or size, the scene's
/// own checks.
fn build(cfg: &ClosedLoopConfig) -> Result<Box<dyn LoopSim>> {
    let bad = |e: GranularError| HarnessError::Invalid(format!("scene {}: {e}", cfg.scene));
    if crate::generate_planar::is_planar_scene(&cfg.scene) {
        let kind = PlanarSceneKind::parse(&cfg.scene).map_err(bad)?;
        let mut scene = kind.build(cfg.size, cfg.seed, false).map_err(bad)?;
        scene.params.compliance = cfg.compliance;
        Ok(Box::new(scene.into_simulation().map_err(bad)?))
    } else {
        let kind = SceneKind::parse(&cfg.scene).map_err(bad)?;
        let mut scene = SceneSpec::new(kind, cfg.size, cfg.seed)
            .build()
            .map_err(bad)?;
        scene.world.params.compliance = cfg.compliance;
        Ok(Box::new(scene.into_simulation().map_err(bad)?))
    }
}

/// Run every solver of `cfg` on its own copy of the scene, in order; `progress` sees each
/// solver's name before its run. Errors (before any run): `steps = 0`, no solvers, an unknown
/// solver, one that takes neither the CCP nor the Coulomb problem, invalid executor settings,
/// an unknown scene. A solver's failure during its run is
/// [`LoopRun::failure`], not an error.
pub fn closed_loop(cfg: &ClosedLoopConfig, mut progress: impl FnMut(&str)) -> Result<Vec<LoopRun>> {
    if cfg.steps == 0 || cfg.solvers.is_empty() {
        return Err(HarnessError::Invalid(format!(
            "simulate needs at least one step and one solver (steps {}, solvers {})",
            cfg.steps,
            cfg.solvers.len()
        )));
    }
    let mut solvers = Vec::with_capacity(cfg.solvers.len());
    for name in &cfg.solvers {
        let s = RegistrySolver::new(name, None, cfg.exec.clone())
            .map_err(|e| HarnessError::Invalid(format!("--solvers {name}: {e}")))?;
        let s = InLoop::new(s);
        if !s.coulomb && !s.inner.supports(ProblemClass::Ccp) {
            return Err(HarnessError::Invalid(format!(
                "--solvers {name}: takes neither the CCP nor the Coulomb problem (the \
                 steppers' problems)"
            )));
        }
        solvers.push(s);
    }
    build(cfg)?;
    let mut reference: Vec<Vec<f64>> = Vec::new();
    let mut runs = Vec::with_capacity(solvers.len());
    for (k, (name, solver)) in cfg.solvers.iter().zip(&mut solvers).enumerate() {
        progress(name);
        let mut core = Stepping::new(build(cfg)?);
        // a solver named twice gets `name #2`, ... (its own line in the tables and figures)
        let seen = cfg.solvers[..k].iter().filter(|s| *s == name).count();
        let label = if seen == 0 {
            name.clone()
        } else {
            format!("{name} #{}", seen + 1)
        };
        let mut run = LoopRun {
            solver: label.clone(),
            problem: if solver.coulomb { "coulomb" } else { "ccp" },
            rows: Vec::with_capacity(cfg.steps as usize),
            failure: None,
        };
        for s in 0..cfg.steps as usize {
            let mut row = match core.step(solver, &label) {
                Ok((_, row)) => row,
                Err(e) => {
                    run.failure = Some(format!("step {}: {e}", s + 1));
                    break;
                }
            };
            row.divergence = if k == 0 {
                reference.push(core.positions().to_vec());
                0.0
            } else {
                reference
                    .get(s)
                    .map_or(f64::NAN, |r| core.divergence_from(r))
            };
            run.rows.push(row);
        }
        runs.push(run);
    }
    Ok(runs)
}

/// The distances between the points of `a` and `b` (`dim` coordinates each, same length).
fn distances<'a>(a: &'a [f64], b: &'a [f64], dim: usize) -> impl Iterator<Item = f64> + 'a {
    a.chunks_exact(dim).zip(b.chunks_exact(dim)).map(|(p, q)| {
        p.iter()
            .zip(q)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt()
    })
}

/// The largest distance between corresponding points of `a` and `b` (0 without points).
pub fn max_distance(a: &[f64], b: &[f64], dim: usize) -> f64 {
    distances(a, b, dim).fold(0.0, f64::max)
}

/// The root mean square of the distances between corresponding points of `a` and `b` (0
/// without points).
pub fn rms_distance(a: &[f64], b: &[f64], dim: usize) -> f64 {
    let m = a.len() / dim.max(1);
    if m == 0 {
        return 0.0;
    }
    (distances(a, b, dim).map(|d| d * d).sum::<f64>() / m as f64).sqrt()
}

/// Header of `closed_loop_steps.csv`, one row per solver and step ([`LoopRow`]).
pub const STEPS_HEADER: &str = "solver,step,time,contacts,iterations,converged,residual,solve_s,\
max_penetration,kinetic_energy,potential_energy,momentum,drift,divergence,signorini,ncp_desaxce,\
mdp_gap,spurious_velocity,cone_violation";

/// Header of `closed_loop_stats.csv` and of the tables, one row per solver ([`LoopStats`]).
pub const STATS_HEADER: &str =
    "solver,problem,steps,unconverged,failure,iter_p50,iter_p95,iter_max,\
total_s,max_penetration,final_kinetic_energy,max_drift,final_divergence,max_spurious_velocity";

/// One solver's run in figures: the per-step cost (nearest-rank percentiles) and the physics
/// at its worst or at the end.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopStats {
    /// Solver name.
    pub solver: String,
    /// The problem solved each step ([`LoopRun::problem`]).
    pub problem: &'static str,
    /// Steps taken.
    pub steps: usize,
    /// Steps whose solve stopped short of the tolerance.
    pub unconverged: usize,
    /// Why the run ended early (empty: it did not).
    pub failure: String,
    /// Median, 95th percentile and maximum of the iterations per step (steps with contacts).
    pub iterations: [f64; 3],
    /// Total solver time (s).
    pub total_s: f64,
    /// Largest penetration over the run (m).
    pub max_penetration: f64,
    /// Kinetic energy after the last step (J).
    pub final_kinetic_energy: f64,
    /// Largest drift over the run (m).
    pub max_drift: f64,
    /// Divergence from the first solver after the last step (m).
    pub final_divergence: f64,
    /// Largest spurious normal velocity over the run (m/s; force at a distance).
    pub max_spurious_velocity: f64,
}

impl LoopStats {
    /// The figures of `run`.
    pub fn of(run: &LoopRun) -> Self {
        let rows = &run.rows;
        let mut it: Vec<f64> = rows
            .iter()
            .filter(|r| r.contacts > 0)
            .map(|r| r.iterations as f64)
            .collect();
        it.sort_by(f64::total_cmp);
        let last = rows.last();
        Self {
            solver: run.solver.clone(),
            problem: run.problem,
            steps: rows.len(),
            unconverged: rows.iter().filter(|r| !r.converged).count(),
            failure: run.failure.clone().unwrap_or_default(),
            iterations: [quantile(&it, 0.5), quantile(&it, 0.95), quantile(&it, 1.0)],
            total_s: rows.iter().map(|r| r.solve_s).fold(0.0, |a, b| a + b),
            max_penetration: rows.iter().map(|r| r.max_penetration).fold(0.0, f64::max),
            final_kinetic_energy: last.map_or(f64::NAN, |r| r.kinetic_energy),
            max_drift: rows.iter().map(|r| r.drift).fold(0.0, f64::max),
            final_divergence: last.map_or(f64::NAN, |r| r.divergence),
            max_spurious_velocity: rows
                .iter()
                .map(|r| r.fidelity.spurious_velocity)
                .filter(|v| !v.is_nan())
                .fold(0.0, f64::max),
        }
    }

    /// The cells of the row, in [`STATS_HEADER`]'s order.
    pub fn cells(&self) -> [String; 14] {
        let [p50, p95, max] = self.iterations;
        [
            self.solver.clone(),
            self.problem.to_string(),
            self.steps.to_string(),
            self.unconverged.to_string(),
            if self.failure.is_empty() {
                "-".into()
            } else {
                self.failure.clone()
            },
            format!("{p50}"),
            format!("{p95}"),
            format!("{max}"),
            format!("{:.3e}", self.total_s),
            format!("{:.3e}", self.max_penetration),
            format!("{:.4e}", self.final_kinetic_energy),
            format!("{:.3e}", self.max_drift),
            format!("{:.3e}", self.final_divergence),
            format!("{:.3e}", self.max_spurious_velocity),
        ]
    }
}

/// Write `closed_loop_steps.csv` and `closed_loop_stats.csv` into `out` (created). Errors: I/O.
pub fn write_closed_loop(out: &Path, runs: &[LoopRun], stats: &[LoopStats]) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| HarnessError::io(out, e))?;
    let mut w = csv::Writer::from_writer(Vec::new());
    // writing records to a Vec cannot fail
    let _ = w.write_record(STEPS_HEADER.split(','));
    for r in runs.iter().flat_map(|r| &r.rows) {
        let reals = [
            r.time,
            r.residual,
            r.solve_s,
            r.max_penetration,
            r.kinetic_energy,
            r.potential_energy,
            r.momentum,
            r.drift,
            r.divergence,
        ]
        .map(|x| format!("{x:e}"));
        let mut rec = vec![
            r.solver.clone(),
            r.step.to_string(),
            reals[0].clone(),
            r.contacts.to_string(),
            r.iterations.to_string(),
            r.converged.to_string(),
        ];
        rec.extend_from_slice(&reals[1..]);
        rec.extend(r.fidelity.values().map(|x| format!("{x:e}")));
        let _ = w.write_record(&rec);
    }
    let steps = w.into_inner().unwrap_or_default();
    write_atomic(&out.join("closed_loop_steps.csv"), &steps)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(STATS_HEADER.split(','));
    for st in stats {
        let _ = w.write_record(st.cells());
    }
    let table = w.into_inner().unwrap_or_default();
    write_atomic(&out.join("closed_loop_stats.csv"), &table)
}

/// The per-solver table (plain text, aligned columns) that `cpbench simulate` prints.
pub fn stats_table(stats: &[LoopStats]) -> String {
    let head: Vec<&str> = STATS_HEADER.split(',').collect();
    let rows: Vec<Vec<String>> = stats
        .iter()
        .map(|t| {
            let mut c = t.cells().to_vec();
            // the terminal table cuts a long failure message (the files keep it whole)
            if c[4].chars().count() > 60 {
                c[4] = c[4].chars().take(57).chain("...".chars()).collect();
            }
            c
        })
        .collect();
    crate::table::aligned(&head, &rows, 5)
}

/// One line per run of `y(row)` against the step.
fn lines(runs: &[LoopRun], y: impl Fn(&LoopRow) -> f64) -> Vec<Series> {
    runs.iter()
        .enumerate()
        .map(|(k, r)| Series {
            label: r.solver.clone(),
            points: r
                .rows
                .iter()
                .map(|x| (x.step as f64, y(x)))
                .filter(|p| p.1.is_finite())
                .collect(),
            color: Some(k),
        })
        .collect()
}

/// Draw `closed_loop.png` and `.svg` into `out`: six panels against the step, one line per
/// solver: iterations per step (log; 0 drawn at 0.5), the largest penetration, the kinetic
/// energy, the potential energy less its value after step 1 (linear), the drift and the
/// divergence from the first solver (log scales without their zeros: the first solver's own
/// divergence is not drawn). Returns the PNG's path. Errors: drawing and I/O.
pub fn draw_closed_loop(
    out: &Path,
    title: &str,
    runs: &[LoopRun],
    fig: &FigureOptions,
) -> Result<PathBuf> {
    let pe0: Vec<f64> = runs
        .iter()
        .map(|r| r.rows.first().map_or(0.0, |x| x.potential_energy))
        .collect();
    let mut delta_pe = lines(runs, |x| x.potential_energy);
    for (s, p0) in delta_pe.iter_mut().zip(&pe0) {
        for p in &mut s.points {
            p.1 -= p0;
        }
    }
    let most = runs
        .iter()
        .flat_map(|r| &r.rows)
        .map(|r| r.iterations)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let panel = |t: &str, y: &str, mut series: Vec<Series>, axis: Axis| {
        if axis == Axis::Log10 {
            // a log axis cannot show 0 (the first solver's divergence, a step at rest)
            for s in &mut series {
                s.points.retain(|p| p.1 > 0.0);
            }
        }
        LinePlot::lines(t, "step", y, series, Axis::Linear, axis)
    };
    // a panel of one per-row value on a log axis (whose zeros are not drawn)
    let log_panel = |t: &str, unit: &str, value: fn(&LoopRow) -> f64| {
        let y = format!("{unit} (log; 0 not drawn)");
        panel(t, &y, lines(runs, value), Axis::Log10)
    };
    let mut iterations = panel(
        "iterations per step",
        "iterations (log; 0 drawn at 0.5)",
        lines(runs, |x| (x.iterations as f64).max(0.5)),
        Axis::Log10,
    );
    iterations.y_range = Some((0.5, 2.0 * most));
    let plots = [
        iterations,
        log_panel(
            "largest penetration (start of step)",
            "penetration [m]",
            |x| x.max_penetration,
        ),
        log_panel("kinetic energy", "energy [J]", |x| x.kinetic_energy),
        panel(
            "potential energy less its value after step 1",
            "energy [J]",
            delta_pe,
            Axis::Linear,
        ),
        log_panel(
            "drift: largest displacement from the start",
            "distance [m]",
            |x| x.drift,
        ),
        log_panel(
            "divergence: RMS distance from the first solver's run",
            "distance [m]",
            |x| x.divergence,
        ),
    ];
    let png = out.join("closed_loop.png");
    draw_grid(title, &plots, 3, &png, &out.join("closed_loop.svg"), fig)?;
    Ok(png)
}

/// Write `closed_loop.md` into `out`: the set-up, the per-solver table and (when drawn) the
/// figure. Errors: I/O.
pub fn write_closed_loop_md(
    out: &Path,
    cfg: &ClosedLoopConfig,
    stats: &[LoopStats],
    figure: bool,
) -> Result<()> {
    let mut s = format!(
        "# Solvers in the loop: {} (size {}, seed {})

{} steps per solver, each solver \
         driving its own copy of the scene from the same start and warm-starting every step \
         from its own previous answer. Tolerance {:e} on each step's {}; budget per step: {} \
         iterations{}. A step that stops short of the tolerance still moves the bodies \
         (`unconverged` counts them). Iteration percentiles by the nearest rank over the steps \
         with contacts; times are solver times (s) of this machine. Penetration is measured at \
         the start of each step (what the previous answers left); drift is the largest \
         displacement of a body from its initial position; divergence the RMS distance of the \
         bodies from their positions in the first solver's run ({}) at the same step.\n\n",
        cfg.scene,
        cfg.size,
        cfg.seed,
        cfg.steps,
        cfg.exec.tol,
        cfg.exec
            .residual
            .map_or("class-default residual", |r| r.as_str()),
        cfg.exec.max_iter,
        cfg.exec
            .max_time_s
            .map_or(String::new(), |t| format!(", {t} s")),
        cfg.solvers.first().map_or("-", String::as_str),
    );
    let head: Vec<&str> = STATS_HEADER.split(',').collect();
    let rows: Vec<Vec<String>> = stats.iter().map(|t| t.cells().to_vec()).collect();
    s.push_str(&crate::table::markdown(&head, &rows));
    if figure {
        s.push_str(
            "\n![iterations and physics per step](closed_loop.png)\n\nTop: iterations per step \
             (0 drawn at 0.5), the largest penetration, the kinetic energy; bottom: the \
             potential energy less its value after step 1, the drift, the divergence from the \
             first solver's run.\n",
        );
    }
    write_atomic(&out.join("closed_loop.md"), s.as_bytes())
}
