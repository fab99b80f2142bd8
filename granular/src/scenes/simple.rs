//! Two small scenes with a known answer, for trajectories and solvers in the loop (issue 32):
//! `stack`, a vertical column of equal spheres resting on a floor (every step alike: the
//! resting case), and `slide`, balls set down on a floor with a horizontal speed and no spin
//! (the sliding ball: friction `mu m g` decelerates each ball and spins it up until it rolls,
//! at `t* = 2 v0 / (7 mu g)`, from then on at `5/7 v0`; the `sliding-ball` recipe checks every
//! solver against this). The seed is unused (no randomness).

use super::{built, check_size, scene_params, Scene};
use crate::{check_non_negative, check_positive, Body, Plane, Result};
use nalgebra::Vector3;

/// A column of `count` equal spheres, each resting on the one below, the lowest on a floor
/// (`y = 0`); gravity along `-y`. Every contact's normal is `+y`: the answer is the weights
/// carried down, `gamma_n = (count - i) m g h` on contact `i` from the top, no friction.
#[derive(Clone, Debug, PartialEq)]
pub struct StackParams {
    /// Spheres (size), `>= 1`; default 10.
    pub count: usize,
    /// Radius (m); default 0.1.
    pub radius: f64,
    /// Mass of each sphere (kg); default 1.
    pub mass: f64,
    /// Friction coefficient; default 0.5.
    pub mu: f64,
    /// Time step (s); default 5e-3 (as `pyramid`).
    pub h: f64,
    /// Minimum envelope (m); default 1e-3.
    pub envelope: f64,
}

impl Default for StackParams {
    fn default() -> Self {
        Self {
            count: 10,
            radius: 0.1,
            mass: 1.0,
            mu: 0.5,
            h: 5e-3,
            envelope: 1e-3,
        }
    }
}

impl StackParams {
    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] for `count = 0`, a
    /// non-positive radius, mass or `h`, `mu < 0`.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        let r = self.radius;
        self.on_floor("stack", seed, frictionless, &[], |i| {
            (
                Vector3::new(0.0, r + 2.0 * r * i as f64, 0.0),
                Vector3::zeros(),
            )
        })
    }
}

/// `count` balls side by side (along `z`, `4 radius` apart), each touching the floor (`y = 0`)
/// and moving along `+x` at `v0` without spin; gravity along `-y`. Defaults: the
/// `sliding-ball` recipe's ball (radius 0.1 m, mass 1 kg, `v0 = 2` m/s, `mu = 0.1`,
/// `h = 1e-3` s), rolling from `t* = 0.5825` s at `10/7` m/s.
#[derive(Clone, Debug, PartialEq)]
pub struct SlideParams {
    /// Balls (size), `>= 1`; default 1.
    pub count: usize,
    /// Radius (m); default 0.1.
    pub radius: f64,
    /// Mass of each ball (kg); default 1.
    pub mass: f64,
    /// Initial speed along `x` (m/s), `>= 0`; default 2.
    pub v0: f64,
    /// Friction coefficient; default 0.1.
    pub mu: f64,
    /// Time step (s); default 1e-3.
    pub h: f64,
    /// Minimum envelope (m); default 1e-3.
    pub envelope: f64,
}

impl Default for SlideParams {
    fn default() -> Self {
        Self {
            count: 1,
            radius: 0.1,
            mass: 1.0,
            v0: 2.0,
            mu: 0.1,
            h: 1e-3,
            envelope: 1e-3,
        }
    }
}

impl SlideParams {
    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] for `count = 0`, a
    /// non-positive radius, mass or `h`, `v0 < 0`, `mu < 0`.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_non_negative("v0", self.v0)?;
        let r = self.radius;
        let floor = StackParams {
            count: self.count,
            radius: r,
            mass: self.mass,
            mu: self.mu,
            h: self.h,
            envelope: self.envelope,
        };
        let v0 = [("v0", self.v0.to_string())];
        floor.on_floor("slide", seed, frictionless, &v0, |i| {
            let x = Vector3::new(0.0, r, 4.0 * r * i as f64);
            (x, Vector3::new(self.v0, 0.0, 0.0))
        })
    }
}

/// A light sphere crushed between two heavy ones: a column of three spheres of radius 0.1 m
/// on a floor, the bottom and top ones of mass `ratio` kg, the middle one of 1 kg (issue 33's
/// `mass-ratio` scene: the Delassus matrix couples the two contacts of the light sphere with
/// `1 / m` against `1 / M` elsewhere, so its condition number grows with the ratio). At rest
/// the answer is the weights carried down: `gamma_n = M g h`, `(M + m) g h`, `(2 M + m) g h`
/// from the top contact to the floor's, no friction. Size = the ratio `M / m`.
#[derive(Clone, Debug, PartialEq)]
pub struct MassRatioParams {
    /// Mass ratio heavy / light (size), `>= 1`; default 100.
    pub ratio: usize,
    /// Friction coefficient; default 0.5.
    pub mu: f64,
    /// Time step (s); default 5e-3.
    pub h: f64,
}

impl Default for MassRatioParams {
    fn default() -> Self {
        Self {
            ratio: 100,
            mu: 0.5,
            h: 5e-3,
        }
    }
}

impl MassRatioParams {
    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] for `ratio = 0` or
    /// above 1e9, a non-positive `h`, `mu < 0`.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_size("size (mass ratio)", self.ratio, 1_000_000_000)?;
        let column = StackParams {
            count: 3,
            mu: self.mu,
            h: self.h,
            ..StackParams::default()
        };
        let r = column.radius;
        let ratio = [("ratio", self.ratio.to_string())];
        let mut scene = column.on_floor("mass-ratio", seed, frictionless, &ratio, |i| {
            (
                Vector3::new(0.0, r + 2.0 * r * i as f64, 0.0),
                Vector3::zeros(),
            )
        })?;
        for i in [0, 2] {
            let b = &mut scene.world.bodies[i];
            *b = Body::sphere(b.pos, r, self.ratio as f64 * column.mass)?;
        }
        scene.label = format!("mass-ratio-{}", self.ratio);
        scene
            .parameters
            .insert("size".into(), self.ratio.to_string());
        Ok(scene)
    }
}

impl StackParams {
    /// What both scenes share: `count` equal spheres above a floor `y = 0`, gravity `9.81`
    /// along `-y`; the scene `kind` with sphere `i` at `place(i) = (position, velocity)`, its
    /// recorded parameters the common ones and `extra`. Errors: as the scenes' `build`.
    fn on_floor(
        &self,
        kind: &'static str,
        seed: u64,
        frictionless: bool,
        extra: &[(&str, String)],
        place: impl Fn(usize) -> (Vector3<f64>, Vector3<f64>),
    ) -> Result<Scene> {
        check_size("size", self.count, 1 << 20)?;
        check_positive("radius", self.radius)?;
        check_positive("mass", self.mass)?;
        let params = scene_params(self.h, 9.81, self.mu, self.envelope, frictionless)?;
        let bodies = (0..self.count)
            .map(|i| {
                let (x, v) = place(i);
                let mut b = Body::sphere(x, self.radius, self.mass)?;
                b.vel = v;
                Ok(b)
            })
            .collect::<Result<Vec<_>>>()?;
        let floor = Plane::new(Vector3::y(), Vector3::zeros())?;
        let mut kv = vec![
            ("size", self.count.to_string()),
            ("radius", self.radius.to_string()),
            ("mass", self.mass.to_string()),
            ("mu", self.mu.to_string()),
            ("h", self.h.to_string()),
        ];
        kv.extend(extra.iter().cloned());
        Ok(built(
            kind,
            self.count,
            seed,
            &kv,
            bodies,
            vec![floor],
            params,
        ))
    }
}
