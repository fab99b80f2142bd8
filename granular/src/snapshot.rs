//! Saved simulation states: a scene (kind, size, seed) plus every body's `q` and `v`, as JSON.
//! Restoring one rebuilds the scene (planes, fixed bodies, radii, masses) from its
//! specification and overwrites the state, so the instance of that state can be assembled
//! again, bit for bit, in milliseconds; the default suite's generated instances are made this
//! way from settled states shipped in `tests/fixtures/generated/`.
//!
//! ```json
//! {"format": "cpbench-granular-state", "version": 1, "scene": "fill", "size": 10, "seed": 1,
//!  "steps_done": 300, "h": 0.01, "note": "...", "q": [7 nb numbers], "v": [6 nb numbers],
//!  "radii": [nb numbers]}
//! ```
//! Numbers are written in shortest round-trip form and read back exactly. `radii` (m, one per
//! body) is written since the output-for-viewing work and is for readers outside cpbench (a
//! plot of the saved state needs no scene builder); files without it stay readable, and when
//! present it must match the scene's radii on restore. The fields are documented in
//! `docs/formats.md`.

use super::scenes::{SceneKind, SceneSpec};
use super::stepper::Simulation;
use super::{GranularError, Result};
use serde::{Deserialize, Serialize};

/// Value of [`Snapshot::format`].
pub const SNAPSHOT_FORMAT: &str = "cpbench-granular-state";

/// A saved state of a built-in scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Always [`SNAPSHOT_FORMAT`].
    pub format: String,
    /// Format version (1).
    pub version: u32,
    /// Scene name (`fill`, `pile`, `pyramid`, `tube`, `bounce`, `cradle`).
    pub scene: String,
    /// Scene size.
    pub size: usize,
    /// Scene seed.
    pub seed: u64,
    /// Steps completed when saved.
    pub steps_done: u64,
    /// Time step of the scene (s), checked on restore.
    pub h: f64,
    /// Free text: how the state was produced (solver, tolerance, command).
    #[serde(default)]
    pub note: String,
    /// Generalised positions, 7 per body (m, unit quaternion).
    pub q: Vec<f64>,
    /// Generalised velocities, 6 per body (m/s, rad/s body frame).
    pub v: Vec<f64>,
    /// Radius of each body (m); empty in files written before it was added.
    #[serde(default)]
    pub radii: Vec<f64>,
    /// Aspect ratio of the ellipsoid scenes ([`SceneSpec::aspect`]), written when given;
    /// absent: the scene's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aspect: Option<f64>,
    /// Semi-axes `(a, b, c)` of every body (m, 3 per body, body frame: a sphere writes
    /// `(R, R, R)`), written only when some body is an ellipsoid, for readers outside cpbench;
    /// checked against the scene on restore when present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub semi_axes: Vec<f64>,
    /// Newton's coefficient of restitution of the simulation
    /// ([`crate::SimParams::restitution`]), written only when `> 0`; absent: 0 on restore
    /// (the inelastic scheme of every file written before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restitution: Option<f64>,
    /// Rolling resistance of the simulation ([`crate::SimParams::rolling_friction`]), written
    /// when `> 0` or when the scene has ellipsoids; absent: the scene's default on restore
    /// (0 for the sphere scenes, 0.05 for the ellipsoid scenes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_friction: Option<f64>,
    /// Its closing-speed threshold (m/s, [`crate::SimParams::restitution_threshold`]),
    /// written with `restitution`; absent: the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restitution_threshold: Option<f64>,
}

impl Snapshot {
    /// Capture the state of `sim`, which must have been built from `spec`.
    pub fn capture(sim: &Simulation, spec: &SceneSpec, note: impl Into<String>) -> Self {
        let w = sim.world();
        Self {
            format: SNAPSHOT_FORMAT.into(),
            version: 1,
            scene: spec.kind.as_str().into(),
            size: spec.size,
            seed: spec.seed,
            steps_done: sim.steps_done(),
            h: w.params.h,
            note: note.into(),
            q: w.bodies.iter().flat_map(|b| b.q()).collect(),
            v: w.bodies.iter().flat_map(|b| b.v()).collect(),
            radii: w.bodies.iter().map(|b| b.radius).collect(),
            aspect: spec.aspect,
            semi_axes: if w.bodies.iter().all(|b| b.is_sphere()) {
                Vec::new()
            } else {
                w.bodies
                    .iter()
                    .flat_map(|b| {
                        let a = b.as_ellipsoid().semi_axes;
                        [a.x, a.y, a.z]
                    })
                    .collect()
            },
            restitution: (w.params.restitution > 0.0).then_some(w.params.restitution),
            rolling_friction: (w.params.rolling_friction > 0.0
                || w.bodies.iter().any(|b| !b.is_sphere()))
            .then_some(w.params.rolling_friction),
            restitution_threshold: (w.params.restitution > 0.0)
                .then_some(w.params.restitution_threshold),
        }
    }

    /// Serialise as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a snapshot serialises")
    }

    /// Parse JSON. Errors: [`GranularError::Snapshot`] for malformed JSON or a wrong format.
    pub fn from_json(text: &str) -> Result<Self> {
        let s: Snapshot =
            serde_json::from_str(text).map_err(|e| GranularError::Snapshot(e.to_string()))?;
        if s.format != SNAPSHOT_FORMAT || s.version != 1 {
            return Err(GranularError::Snapshot(format!(
                "format '{}' version {} (expected '{SNAPSHOT_FORMAT}' version 1)",
                s.format, s.version
            )));
        }
        Ok(s)
    }

    /// Rebuild the scene, in frictional or `frictionless` mode, and set the saved state, step
    /// counter and restitution (0 when not saved). Errors: [`GranularError::Snapshot`] when the
    /// body count, `h` or the radii (when saved) do not match the scene,
    /// [`GranularError::UnknownScene`], and the errors of the scene builder, of
    /// [`super::Body::set_state`] or of an invalid saved restitution
    /// ([`GranularError::InvalidParameter`]).
    pub fn restore(&self, frictionless: bool) -> Result<Simulation> {
        let spec = SceneSpec {
            kind: SceneKind::parse(&self.scene)?,
            size: self.size,
            seed: self.seed,
            frictionless,
            aspect: self.aspect,
        };
        let scene = spec.build()?;
        let nb = scene.world.bodies.len();
        if self.q.len() != 7 * nb || self.v.len() != 6 * nb {
            return Err(GranularError::Snapshot(format!(
                "{} bodies in scene {}-{}, but q has {} and v {} numbers",
                nb,
                self.scene,
                self.size,
                self.q.len(),
                self.v.len()
            )));
        }
        if !self.radii.is_empty() {
            let same = self.radii.len() == nb
                && scene
                    .world
                    .bodies
                    .iter()
                    .zip(&self.radii)
                    .all(|(b, &r)| b.radius == r);
            if !same {
                return Err(GranularError::Snapshot(format!(
                    "the snapshot's {} radii differ from those of the {} bodies of scene {}-{}",
                    self.radii.len(),
                    nb,
                    self.scene,
                    self.size
                )));
            }
        }
        if !self.semi_axes.is_empty() {
            let same = self.semi_axes.len() == 3 * nb
                && scene
                    .world
                    .bodies
                    .iter()
                    .zip(self.semi_axes.chunks_exact(3))
                    .all(|(b, a)| b.as_ellipsoid().semi_axes.as_slice() == a);
            if !same {
                return Err(GranularError::Snapshot(format!(
                    "the snapshot's semi-axes differ from those of the {} bodies of scene {}-{}",
                    nb, self.scene, self.size
                )));
            }
        }
        if scene.world.params.h != self.h {
            return Err(GranularError::Snapshot(format!(
                "h = {} in the snapshot, {} in the scene",
                self.h, scene.world.params.h
            )));
        }
        // the saved coefficient (0 when absent), whatever the scene's default
        let mut scene = scene;
        scene.world.params.restitution = self.restitution.unwrap_or(0.0);
        if let Some(t) = self.restitution_threshold {
            scene.world.params.restitution_threshold = t;
        }
        if let Some(m) = self.rolling_friction {
            scene.world.params.rolling_friction = m;
        }
        let mut sim = scene.into_simulation()?;
        for (i, b) in sim.bodies_mut().iter_mut().enumerate() {
            let q: [f64; 7] = self.q[7 * i..7 * i + 7].try_into().expect("length 7");
            let v: [f64; 6] = self.v[6 * i..6 * i + 6].try_into().expect("length 6");
            b.set_state(&q, &v)?;
        }
        sim.set_steps_done(self.steps_done);
        Ok(sim)
    }
}
