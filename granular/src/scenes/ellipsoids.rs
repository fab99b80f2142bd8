//! Ellipsoid scenes: `ellipsoid-fill` (the seed experiment's 1000 ellipsoids in a box) and
//! `ellipsoid-pile` (polydisperse ellipsoids poured onto a floor). The shape is a spheroid with
//! semi-axes `(a, b, b)` along its body axes and aspect ratio `a / b`: prolate (`a / b > 1`,
//! cigar), oblate (`< 1`, lentil) or a sphere (`= 1`, through the ellipsoid narrow phase), with
//! the largest semi-axis equal to the bounding radius. Orientations are uniformly random
//! (Shoemake 1992, "Uniform random rotations", Graphics Gems III), drawn from the seed.

use crate::rng::SplitMix64;
use crate::{invalid, Result};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

/// Default aspect ratio `a / b` of the ellipsoid scenes (prolate, 2:1:1).
pub const DEFAULT_ASPECT: f64 = 2.0;

/// Default rolling resistance `mu_r` of the ellipsoid scenes ([`crate::SimParams::rolling_friction`]):
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
