//! Instance generation with the planar (2-D) stepper ([`cpbench_granular::planar`]): the driver
//! behind `cpbench generate --scene disc-hopper|beam-impact` ([`generate_planar`]): a registry
//! solver in the loop ([`RegistrySolver`], warm-started), one bundle, `.npz` or fclib file per
//! exported step (fc2d instances: CCP on 2-D Coulomb cones, or the normal LCP when
//! frictionless) and `trajectory.csv` ([`PLANAR_TRAJECTORY_HEADER`]).

use crate::error::HarnessError;
use crate::fsutil::write_atomic;
use crate::generate::{
    check_steps_and_format, export_instance, ExportFormat, GenerateError, RegistrySolver,
};
use cpbench_granular::planar::{Disc, PlanarSceneKind, PlanarStepReport};
use cpbench_solvers::ExecSettings;
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
    /// Steps to simulate, `>= 1`.
    pub steps: u64,
    /// Export the instance of every step whose number is a multiple of this (0: none).
    pub export_every: u64,
    /// Output folder (exported steps and `trajectory.csv`).
    pub out: PathBuf,
    /// Solver name in the registry.
    pub solver: String,
    /// Solver settings (JSON object) or defaults.
    pub solver_settings: Option<serde_json::Value>,
    /// Executor limits and tolerance of each solve.
    pub exec: ExecSettings,
    /// Format of the exported steps (fclib: frictional scenes only; 2-D fclib local problems).
    pub export_format: ExportFormat,
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
        let mut t = [0.0; 5];
        for s in &self.steps {
            let x = &s.timings;
            for (a, d) in t
                .iter_mut()
                .zip([x.detection, x.assembly, x.instance, x.solve, x.update])
            {
                *a += d.as_secs_f64();
            }
        }
        let n = self.steps.len().max(1) as f64;
        t.map(|v| v / n)
    }
}

/// Columns of the planar `trajectory.csv`.
pub const PLANAR_TRAJECTORY_HEADER: &str = "step,time,kinetic_energy,bond_energy,contacts,\
max_penetration,iterations,residual,converged,warm_matched,n,nnz,envelope,bonds,broken_bonds,\
t_detection_s,t_assembly_s,t_instance_s,t_solve_s,t_update_s";

fn trajectory_csv(steps: &[PlanarStepReport]) -> String {
    let mut s = String::with_capacity(180 * (steps.len() + 1));
    s.push_str(PLANAR_TRAJECTORY_HEADER);
    s.push('\n');
    for r in steps {
        let t = &r.timings;
        let _ = writeln!(
            s,
            "{},{},{:e},{:e},{},{:e},{},{:e},{},{},{},{},{:e},{},{},{:e},{:e},{:e},{:e},{:e}",
            r.step,
            r.time,
            r.kinetic_energy,
            r.bond_energy,
            r.contacts,
            r.max_penetration,
            r.iterations,
            r.residual,
            r.converged,
            r.warm_matched,
            r.n,
            r.nnz,
            r.envelope,
            r.bonds,
            r.broken_bonds,
            t.detection.as_secs_f64(),
            t.assembly.as_secs_f64(),
            t.instance.as_secs_f64(),
            t.solve.as_secs_f64(),
            t.update.as_secs_f64()
        );
    }
    s
}

/// Simulate `cfg.steps` steps of the planar scene with `cfg.solver` in the loop; write one
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
    check_steps_and_format(cfg.steps, cfg.export_format, cfg.frictionless)?;
    let start = Instant::now();
    let mut solver =
        RegistrySolver::new(&cfg.solver, cfg.solver_settings.as_ref(), cfg.exec.clone())?;
    let scene = cfg.scene.build(cfg.size, cfg.seed, cfg.frictionless)?;
    let mut sim = scene.into_simulation()?;
    let mut summary = PlanarGenerateSummary {
        bodies: sim.discs().len(),
        bonds: sim.bonds().bonds().len(),
        ..Default::default()
    };
    std::fs::create_dir_all(&cfg.out).map_err(|e| HarnessError::io(&cfg.out, e))?;
    let traj = cfg.out.join("trajectory.csv");
    for _ in 0..cfg.steps {
        let rep = match sim.step(&mut solver) {
            Ok(r) => r,
            Err(e) => {
                write_atomic(&traj, trajectory_csv(&summary.steps).as_bytes())?;
                return Err(e.into());
            }
        };
        if cfg.export_every > 0 && rep.step % cfg.export_every == 0 {
            if let Some(inst) = sim.last_instance() {
                summary
                    .exported
                    .push(export_instance(inst, cfg.export_format, &cfg.out)?);
            }
        }
        progress(&rep);
        summary.steps.push(rep);
    }
    write_atomic(&traj, trajectory_csv(&summary.steps).as_bytes())?;
    summary.final_discs = sim.discs().to_vec();
    summary.wall = start.elapsed();
    Ok(summary)
}
