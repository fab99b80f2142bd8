//! The built-in trajectory suite (`cpbench run --trajectory builtin`, issue 32): small scenes
//! generated on demand, every step exported with its contact identities
//! ([`crate::trajectory`]), then replayed like any trajectory folder.

use crate::error::{HarnessError, Result};
use cpbench_solvers::ExecSettings;
use std::path::Path;

/// One trajectory of the built-in suite ([`BUILTIN`]): a scene, its size and steps, every step
/// exported.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinTrajectory {
    /// The scene (a `cpbench generate --scene` name).
    pub scene: &'static str,
    /// Its size.
    pub size: usize,
    /// Steps simulated (and exported: `--export-every 1`).
    pub steps: u64,
    /// What it shows.
    pub about: &'static str,
}

/// The built-in trajectory suite (`cpbench run --trajectory builtin`), small enough for a
/// quick run; generated with `apgd` in the loop at 1e-6 (generate's defaults), seed 1. There
/// is no box shape in the steppers, so the resting case of Siconos issue 214 (a cube at rest
/// on a plane, NSGS at its iteration cap on every step) is a resting pyramid and a resting
/// column of spheres.
pub const BUILTIN: [BuiltinTrajectory; 6] = [
    BuiltinTrajectory {
        scene: "pyramid",
        size: 4,
        steps: 100,
        about: "a pyramid of 30 spheres at rest on a floor (72 contacts, every step alike)",
    },
    BuiltinTrajectory {
        scene: "stack",
        size: 10,
        steps: 100,
        about: "a column of 10 spheres at rest on a floor (10 contacts, every step alike)",
    },
    BuiltinTrajectory {
        scene: "slide",
        size: 1,
        steps: 200,
        about: "a ball sliding on a floor (1 contact at the cone's boundary; rolls from step 583)",
    },
    BuiltinTrajectory {
        scene: "fill",
        size: 3,
        steps: 60,
        about: "90 spheres falling into a box and settling (6 to 176 contacts)",
    },
    BuiltinTrajectory {
        scene: "ellipsoid-pile",
        size: 40,
        steps: 80,
        about: "40 spheroids poured into a heap",
    },
    BuiltinTrajectory {
        scene: "disc-hopper",
        size: 60,
        steps: 100,
        about: "60 discs flowing through a hopper orifice (2-D, fc2d)",
    },
];

/// Generate the built-in trajectory `b` into `dir` (`.npz` steps, every step exported), with
/// generate's defaults (`apgd` in the loop, tolerance 1e-6, seed 1). Errors: those of
/// [`crate::generate::generate`] and [`crate::generate_planar::generate_planar`].
pub fn generate_builtin(b: &BuiltinTrajectory, dir: &Path) -> Result<()> {
    use crate::generate::{ExportFormat, RunSettings};
    let run = RunSettings {
        steps: b.steps,
        export_every: 1,
        out: dir.to_path_buf(),
        solver: "apgd".into(),
        solver_settings: None,
        exec: ExecSettings::default(),
        export_format: ExportFormat::Npz,
    };
    let fail = |e: crate::generate::GenerateError| {
        HarnessError::Invalid(format!("built-in trajectory {} {}: {e}", b.scene, b.size))
    };
    if crate::generate_planar::is_planar_scene(b.scene) {
        let cfg = crate::generate_planar::PlanarGenerateConfig {
            scene: cpbench_granular::planar::PlanarSceneKind::parse(b.scene)
                .map_err(|e| HarnessError::Invalid(e.to_string()))?,
            size: b.size,
            seed: 1,
            frictionless: false,
            compliance: None,
            run,
            operator: None,
        };
        crate::generate_planar::generate_planar(&cfg, |_| {}).map_err(fail)?;
    } else {
        let kind = cpbench_granular::SceneKind::parse(b.scene)
            .map_err(|e| HarnessError::Invalid(e.to_string()))?;
        let cfg = crate::generate::GenerateConfig {
            spec: cpbench_granular::SceneSpec::new(kind, b.size, 1),
            run,
            save_state: false,
            vtk: false,
            snapshots: false,
            operator: None,
            no_solve: false,
            view_every: Some(0),
            restitution: None,
            restitution_threshold: None,
            rolling_friction: None,
            compliance: None,
        };
        crate::generate::generate(&cfg, |_| {}).map_err(fail)?;
    }
    Ok(())
}
