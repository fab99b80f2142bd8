//! Instance generation with the planar (2-D) stepper ([`cpbench_granular::planar`]): the driver
//! behind `cpbench generate --scene disc-hopper|beam-impact` ([`generate_planar`]): a registry
//! solver in the loop ([`crate::generate::RegistrySolver`], warm-started), one bundle, `.npz` or fclib file per
//! exported step (fc2d instances: CCP on 2-D Coulomb cones, or the normal LCP when
//! frictionless) and `trajectory.csv` ([`PLANAR_TRAJECTORY_HEADER`]).

use crate::fsutil::write_atomic;
use crate::generate::{
    drive, trajectory_csv, Drive, GenerateError, RunSettings, SolveColumns, TimingColumns,
    TrajectoryRow,
};
use cpbench_granular::planar::{Disc, PlanarSceneKind, PlanarStepReport};
use cpbench_granular::StepTimings;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Whether `name` is a planar scene (`disc-hopper`, `beam-impact`), which
/// [`generate_planar`] runs instead of [`crate::generate::generate`].
pub fn is_planar_scene(name: &str) -> bool {
    PlanarSceneKind::from_name(name).is_some()
}

/// What [`generate_planar`] does.
#[derive(Clone, Debug)]
pub struct PlanarGenerateConfig {
    /// The scene.
    pub scene: PlanarSceneKind,
    /// Its size (discs of `disc-hopper`, columns of `beam-impact`).
    pub size: usize,
    /// Scene seed.
    pub seed: u64,
    /// Frictionless mode (LCP on the normal impulses).
    pub frictionless: bool,
    /// Compliant contact (`None`: rigid), as the 3-D stepper's
    /// ([`cpbench_granular::ContactCompliance`]).
    pub compliance: Option<cpbench_granular::ContactCompliance>,
    /// Steps, exports (fclib: 2-D fclib local problems), output folder and solver.
    pub run: RunSettings,
    /// Storage of `N` in the instances ([`cpbench_granular::planar::PlanarSimulation::set_operator`]):
    /// `None` automatic (CSC below [`cpbench_problems::operator::BLOCK_MIN_NNZ`] stored
    /// entries, 2x2 blocks from there), `Some(Csc)`, `Some(Block)`; `Some(MatrixFree)` is
    /// refused by the stepper (a typed error).
    pub operator: Option<cpbench_problems::OperatorKind>,
}

/// Outcome of [`generate_planar`].
#[derive(Clone, Debug, Default)]
pub struct PlanarGenerateSummary {
    /// One report per step.
    pub steps: Vec<PlanarStepReport>,
    /// Bundle directories, `.npz` or fclib files written.
    pub exported: Vec<PathBuf>,
    /// Discs in the scene.
    pub bodies: usize,
    /// Bonds at the start (live and broken at the end: the last report's `bonds`,
    /// `broken_bonds`).
    pub bonds: usize,
    /// The discs at the end.
    pub final_discs: Vec<Disc>,
    /// Total wall time.
    pub wall: Duration,
}

impl PlanarGenerateSummary {
    /// Mean phase times per step in seconds: `(detection, assembly, instance, solve, update)`.
    pub fn mean_timings(&self) -> [f64; 5] {
        StepTimings::mean(self.steps.iter().map(|r| &r.core.timings))
    }
}

/// Columns of the planar `trajectory.csv`.
pub const PLANAR_TRAJECTORY_HEADER: &str = "step,time,kinetic_energy,bond_energy,contacts,\
max_penetration,iterations,residual,converged,warm_matched,n,nnz,envelope,bonds,broken_bonds,\
t_detection_s,t_assembly_s,t_instance_s,t_solve_s,t_update_s";

impl TrajectoryRow for PlanarStepReport {
    const HEADER: &'static str = PLANAR_TRAJECTORY_HEADER;

    fn step_number(&self) -> u64 {
        self.core.step
    }

    fn write_row(&self, s: &mut String) {
        let r = &self.core;
        let _ = writeln!(
            s,
            "{},{},{:e},{:e},{},{:e},{},{},{},{}",
            r.step,
            r.time,
            r.kinetic_energy,
            self.bond_energy,
            r.contacts,
            r.max_penetration,
            SolveColumns(r),
            self.bonds,
            self.broken_bonds,
            TimingColumns(&r.timings)
        );
    }
}

/// Simulate `cfg.run.steps` steps of the planar scene with `cfg.run.solver` in the loop; write one
/// export per exported step (`{out}/{label}_step{NNNN}__{ccp|lcp}` bundle, `.npz`, or fclib
/// `{out}/{label}_step{NNNN}.hdf5`; steps without contacts are not exported) and
/// `trajectory.csv` (written atomically, also when the simulation fails part-way).
/// `progress` is called after every step.
///
/// Errors: [`GenerateError::Setting`] for `steps = 0` or fclib export of a frictionless scene,
/// scene and solver errors, I/O errors.
pub fn generate_planar(
    cfg: &PlanarGenerateConfig,
    mut progress: impl FnMut(&PlanarStepReport),
) -> Result<PlanarGenerateSummary, GenerateError> {
    let start = Instant::now();
    let mut solver = cfg.run.start(cfg.frictionless)?;
    let mut scene = cfg.scene.build(cfg.size, cfg.seed, cfg.frictionless)?;
    scene.params.compliance = cfg.compliance;
    let mut sim = scene.into_simulation()?;
    sim.set_operator(cfg.operator)?;
    let mut summary = PlanarGenerateSummary {
        bodies: sim.discs().len(),
        bonds: sim.bonds().bonds().len(),
        ..Default::default()
    };
    let stepped = drive(
        &mut sim,
        &Drive {
            run: &cfg.run,
            export_all: false,
        },
        |sim| sim.step(&mut solver),
        |_, rep| {
            progress(rep);
            Ok(())
        },
        &mut summary.steps,
        &mut summary.exported,
    );
    let traj = cfg.run.out.join("trajectory.csv");
    write_atomic(&traj, trajectory_csv(&summary.steps).as_bytes())?;
    stepped?;
    summary.final_discs = sim.discs().to_vec();
    summary.wall = start.elapsed();
    Ok(summary)
}
