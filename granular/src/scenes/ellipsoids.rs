//! Ellipsoid scenes: `ellipsoid-fill` (the seed experiment's 1000 ellipsoids in a box) and
//! `ellipsoid-pile` (polydisperse ellipsoids poured onto a floor). The shape is a spheroid with
//! semi-axes `(a, b, b)` along its body axes and aspect ratio `a / b`: prolate (`a / b > 1`,
//! cigar), oblate (`< 1`, lentil) or a sphere (`= 1`, through the ellipsoid narrow phase), with
//! the largest semi-axis equal to the bounding radius. Orientations are uniformly random
//! (Shoemake 1992, "Uniform random rotations", Graphics Gems III), drawn from the seed.

use super::{
    check_lattice, check_polydisperse, closed_box, lattice_box, lattice_sites, params_map,
    scene_params, Column, Scene,
};
use crate::bodies::Body;
use crate::rng::SplitMix64;
use crate::stepper::World;
use crate::{check_positive, invalid, Result};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

/// Default aspect ratio `a / b` of the ellipsoid scenes (prolate, 2:1:1).
pub const DEFAULT_ASPECT: f64 = 2.0;

/// Default rolling resistance `mu_r` of the ellipsoid scenes ([`SimParams::rolling_friction`]):
/// a resisting torque of at most `0.05 l gamma_n`, the order of the rolling-friction
/// coefficients of DEM for rounded grains (Ai et al. 2011).
pub const DEFAULT_ROLLING_FRICTION: f64 = 0.05;

/// Semi-axes `(a, b, b)` with aspect ratio `aspect = a / b` and bounding radius `bound`
/// (`max(a, b) = bound`), m. Errors: an aspect ratio outside `[1/10, 10]` or not finite.
pub fn spheroid_axes(bound: f64, aspect: f64) -> Result<Vector3<f64>> {
    if !(aspect.is_finite() && (0.1..=10.0).contains(&aspect)) {
        return Err(invalid("aspect", aspect, "must be in [0.1, 10]"));
    }
    Ok(if aspect >= 1.0 {
        Vector3::new(bound, bound / aspect, bound / aspect)
    } else {
        Vector3::new(bound * aspect, bound, bound)
    })
}

/// A uniformly distributed rotation (Shoemake 1992) from three uniform numbers of `rng`.
pub fn random_rotation(rng: &mut SplitMix64) -> UnitQuaternion<f64> {
    let (u1, u2, u3) = (
        rng.uniform(0.0, 1.0),
        rng.uniform(0.0, 1.0),
        rng.uniform(0.0, 1.0),
    );
    let tau = 2.0 * std::f64::consts::PI;
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    UnitQuaternion::new_normalize(Quaternion::new(
        a * (tau * u2).sin(),
        a * (tau * u2).cos(),
        b * (tau * u3).sin(),
        b * (tau * u3).cos(),
    ))
}

/// `ellipsoid-fill`: `n x layers x n` ellipsoids (the seed experiment's 1000 for the default
/// size 10) of bounding radius `bound` and aspect ratio `aspect` ([`spheroid_axes`]), random
/// orientations, on a jittered lattice of spacing `spacing`, falling into the closed box
/// `[0, n s] x [0, (layers + 1) s] x [0, n s]`: the `fill` scene (Melanz et al. 2017
/// TEST_FILL) with ellipsoids (Vyatkin & Dolgovesov, functionally defined objects).
#[derive(Clone, Debug, PartialEq)]
pub struct EllipsoidFillParams {
    /// Ellipsoids per side in `x` and `z` (size), `>= 1`; default 10.
    pub n: usize,
    /// Layers in `y`; default 10.
    pub layers: usize,
    /// Aspect ratio `a / b` of the spheroids `(a, b, b)`, in `[0.1, 10]`; default 2.
    pub aspect: f64,
    /// Bounding radius, the largest semi-axis (m); default 0.4.
    pub bound: f64,
    /// Lattice spacing (m); default 1.
    pub spacing: f64,
    /// Uniform jitter amplitude in `x` and `z` (m); default 0.1.
    pub jitter: f64,
    /// Mass of each ellipsoid (kg); default 1.
    pub mass: f64,
    /// Friction coefficient; default 0.25.
    pub mu: f64,
    /// Time step (s); default 1e-2.
    pub h: f64,
    /// Minimum envelope (m); default 0.01.
    pub envelope: f64,
    /// Rolling resistance `mu_r` ([`SimParams::rolling_friction`]); default
    /// [`DEFAULT_ROLLING_FRICTION`] (without it rigid ellipsoids rock and roll for ever).
    pub rolling_friction: f64,
}

impl Default for EllipsoidFillParams {
    fn default() -> Self {
        Self {
            n: 10,
            layers: 10,
            aspect: DEFAULT_ASPECT,
            bound: 0.4,
            spacing: 1.0,
            jitter: 0.1,
            mass: 1.0,
            mu: 0.25,
            h: 1e-2,
            envelope: 0.01,
            rolling_friction: DEFAULT_ROLLING_FRICTION,
        }
    }
}

impl EllipsoidFillParams {
    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] for `n = 0`,
    /// `layers = 0`, more than `2^26` bodies, an aspect ratio outside `[0.1, 10]`, a
    /// non-positive bound, spacing, mass or `h`, `mu < 0`, or a jitter that could make
    /// neighbours or walls overlap (`bound + jitter > spacing / 2`).
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_lattice(self.n, self.layers, self.bound, self.spacing, self.jitter)?;
        check_positive("mass", self.mass)?;
        let axes = spheroid_axes(self.bound, self.aspect)?;
        let mut params = scene_params(self.h, 9.81, self.mu, self.envelope, frictionless)?;
        params.rolling_friction = self.rolling_friction;
        params.validate()?;
        let mut rng = SplitMix64::new(seed);
        let s = self.spacing;
        let mut bodies = Vec::with_capacity(self.n * self.n * self.layers);
        lattice_sites(self.n, self.layers, s, self.jitter, &mut rng, |c, rng| {
            let rot = random_rotation(rng);
            bodies.push(Body::ellipsoid(c, rot, axes, self.mass)?);
            Ok(())
        })?;
        let planes = lattice_box(self.n, self.layers, s)?;
        let kv = [
            ("size", self.n.to_string()),
            ("layers", self.layers.to_string()),
            ("aspect", self.aspect.to_string()),
            ("semi_axes", format!("{} {} {}", axes.x, axes.y, axes.z)),
            ("spacing", self.spacing.to_string()),
            ("jitter", self.jitter.to_string()),
            ("mass", self.mass.to_string()),
            (
                "source",
                "Vyatkin & Dolgovesov: 1000 ellipsoids in a box (TEST_FILL lattice)".to_string(),
            ),
        ];
        Ok(Scene {
            parameters: params_map("ellipsoid-fill", &kv, &params),
            world: World {
                bodies,
                planes,
                params,
            },
            label: format!("ellipsoid-fill-{}", self.n),
            seed,
        })
    }
}

/// `ellipsoid-pile`: `count` spheroids of aspect ratio `aspect`, bounding radii uniform in
/// `[r_min, r_max]`, density `density`, random orientations, start on a jittered lattice in a
/// column of `k x k` cross-section (`k = ceil(cbrt(count) / 1.5)`) above a smooth floor walled
/// at `+-width / 2` in `x` and `z`, and fall into a heap (ellipsoids, unlike spheres, do not
/// roll away on a smooth floor).
#[derive(Clone, Debug, PartialEq)]
pub struct EllipsoidPileParams {
    /// Number of ellipsoids (size), `>= 1`; default 500.
    pub count: usize,
    /// Aspect ratio `a / b`, in `[0.1, 10]`; default 2.
    pub aspect: f64,
    /// Smallest bounding radius (m); default 0.05.
    pub r_min: f64,
    /// Largest bounding radius (m); default 0.1.
    pub r_max: f64,
    /// Density (kg/m^3); default 2500 (glass).
    pub density: f64,
    /// Friction coefficient; default 0.5.
    pub mu: f64,
    /// Time step (s); default 5e-3.
    pub h: f64,
    /// Minimum envelope (m); default 2e-3.
    pub envelope: f64,
    /// Width of the walled floor (m); default: 4 times the column width.
    pub width: Option<f64>,
    /// Rolling resistance `mu_r` ([`SimParams::rolling_friction`]); default
    /// [`DEFAULT_ROLLING_FRICTION`].
    pub rolling_friction: f64,
}

impl Default for EllipsoidPileParams {
    fn default() -> Self {
        Self {
            count: 500,
            aspect: DEFAULT_ASPECT,
            r_min: 0.05,
            r_max: 0.1,
            density: 2500.0,
            mu: 0.5,
            h: 5e-3,
            envelope: 2e-3,
            width: None,
            rolling_friction: DEFAULT_ROLLING_FRICTION,
        }
    }
}

impl EllipsoidPileParams {
    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] for `count = 0`,
    /// an aspect ratio outside `[0.1, 10]`, `r_min <= 0`, `r_max < r_min`, a non-positive
    /// density, width or `h`, `mu < 0`, a width below the column's.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_polydisperse(self.count, self.r_min, self.r_max, self.density)?;
        spheroid_axes(self.r_max, self.aspect)?;
        let mut params = scene_params(self.h, 9.81, self.mu, self.envelope, frictionless)?;
        params.rolling_friction = self.rolling_friction;
        params.validate()?;
        let mut rng = SplitMix64::new(seed);
        let column = Column::new(self.count, self.r_max);
        let width = self.width.unwrap_or(4.0 * column.width);
        check_positive("width", width)?;
        if width < column.width {
            return Err(invalid("width", width, "must be at least the column width"));
        }
        let mut bodies = Vec::with_capacity(self.count);
        for idx in 0..self.count {
            let r = rng.uniform(self.r_min, self.r_max);
            let p = column.site(idx, self.r_max * 1.05, &mut rng);
            let axes = spheroid_axes(r, self.aspect)?;
            let volume = 4.0 / 3.0 * std::f64::consts::PI * axes.x * axes.y * axes.z;
            let rot = random_rotation(&mut rng);
            bodies.push(Body::ellipsoid(p, rot, axes, self.density * volume)?);
        }
        let top = column.top(self.count, 0.0, self.r_max);
        let planes = closed_box(
            Vector3::new(-0.5 * width, 0.0, -0.5 * width),
            Vector3::new(0.5 * width, top, 0.5 * width),
        )?;
        let kv = [
            ("size", self.count.to_string()),
            ("aspect", self.aspect.to_string()),
            ("r_min", self.r_min.to_string()),
            ("r_max", self.r_max.to_string()),
            ("density", self.density.to_string()),
            ("column", format!("{0}x{0}", column.k)),
            ("width", width.to_string()),
        ];
        Ok(Scene {
            parameters: params_map("ellipsoid-pile", &kv, &params),
            world: World {
                bodies,
                planes,
                params,
            },
            label: format!("ellipsoid-pile-{}", self.count),
            seed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_rotations_are_unit_and_spread() {
        let mut rng = SplitMix64::new(3);
        let mut mean = Vector3::zeros();
        let n = 20_000;
        for _ in 0..n {
            let q = random_rotation(&mut rng);
            assert!((q.quaternion().norm() - 1.0).abs() < 1e-12);
            mean += q * Vector3::x();
        }
        // the rotated x axis is uniform on the sphere: its mean is 0 (+- 3/sqrt(3n))
        assert!((mean / n as f64).norm() < 0.03, "{mean:?}");
    }

    #[test]
    fn spheroid_axes_keep_the_bound() {
        assert_eq!(
            spheroid_axes(0.4, 2.0).unwrap(),
            Vector3::new(0.4, 0.2, 0.2)
        );
        assert_eq!(
            spheroid_axes(0.4, 0.5).unwrap(),
            Vector3::new(0.2, 0.4, 0.4)
        );
        assert!(spheroid_axes(0.4, 0.0).is_err());
        assert!(spheroid_axes(0.4, f64::NAN).is_err());
    }

    #[test]
    fn scenes_start_without_overlap() {
        for aspect in [0.5, 1.0, 3.0] {
            let s = EllipsoidFillParams {
                n: 3,
                layers: 3,
                aspect,
                ..Default::default()
            }
            .build(1, false)
            .unwrap();
            assert_eq!(s.world.bodies.len(), 27);
            let p = EllipsoidPileParams {
                count: 40,
                aspect,
                ..Default::default()
            }
            .build(1, false)
            .unwrap();
            for sc in [s, p] {
                let mut sim = sc.into_simulation().unwrap();
                sim.detect();
                assert!(sim.max_penetration() == 0.0, "aspect {aspect}");
            }
        }
    }
}
