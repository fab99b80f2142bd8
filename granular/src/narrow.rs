//! Narrow phase: contact geometry of sphere-sphere, sphere-fixed sphere and sphere-plane pairs,
//! the dispatch to the ellipsoid narrow phase ([`body_body`], [`body_plane`]), and the
//! orthonormal contact frame.
//!
//! A contact joins body `A` (a movable sphere, the body that found it in the broad phase) and
//! a partner `B` ([`Partner`]). The normal `n` points from `A` to `B`; the gap `Phi` is the
//! signed distance between the surfaces (m, negative when they overlap); the contact point is
//! the midpoint between the two closest surface points, so a lever arm is `r = point - centre`
//! (Pospisil 2014, "Kontakt a omezeni"; Matulewski 2010, sphere collision detection).

use super::bodies::{Body, Plane};
use super::ellipsoid::{
    ellipsoid_ellipsoid, ellipsoid_plane, DistanceParams, EllipsoidError, Pose,
};
use nalgebra::Vector3;

pub use super::contact::{tangent_frame, Contact, Partner};

/// Parameters of the ellipsoid distance in the stepper: tolerance `1e-10` relative, 50
/// iterations, no restarts from the principal axes (the overlaps of a time stepper are small,
/// where the run from the centre direction ends at the answer; see
/// [`crate::ellipsoid::DistanceParams::restarts`]). A run that fails still restarts.
pub const STEPPER_DISTANCE: DistanceParams = DistanceParams {
    tol: 1e-10,
    max_iter: 50,
    restarts: false,
};

/// Body `a` against body `b`, any shapes: [`sphere_sphere`] for two spheres (bit for bit the
/// sphere scenes of earlier versions), otherwise [`ellipsoid_ellipsoid`] on the bodies as
/// ellipsoids ([`Body::as_ellipsoid`], a sphere being the ellipsoid `(R, R, R)`) with
/// [`STEPPER_DISTANCE`]; the contact point is the midpoint of the witness points, so the
/// lever arms `point - x` are the witness lever arms up to `+- gap/2 n`
/// ([`crate::ellipsoid::EllipsoidContact::to_contact`]).
///
/// Errors: [`EllipsoidError`] when the ellipsoid distance fails (a non-finite pose, or no
/// start converged).
#[inline]
pub fn body_body(
    ia: usize,
    a: &Body,
    ib: usize,
    b: &Body,
    envelope: f64,
) -> Result<Option<Contact>, EllipsoidError> {
    if a.is_sphere() && b.is_sphere() {
        return Ok(sphere_sphere(ia, a, ib, b, envelope));
    }
    let c = ellipsoid_ellipsoid(
        &Pose::new(a.pos, a.rot),
        &a.as_ellipsoid(),
        &Pose::new(b.pos, b.rot),
        &b.as_ellipsoid(),
        envelope,
        &STEPPER_DISTANCE,
    )?;
    Ok(c.map(|c| c.to_contact(ia, Partner::Body(ib))))
}

/// Body `a` (any shape) against plane `p` (index `ip`): [`sphere_plane`] for a sphere,
/// the exact [`ellipsoid_plane`] for an ellipsoid.
#[inline]
pub fn body_plane(ia: usize, a: &Body, ip: usize, p: &Plane, envelope: f64) -> Option<Contact> {
    if a.is_sphere() {
        return sphere_plane(ia, a, ip, p, envelope);
    }
    ellipsoid_plane(&Pose::new(a.pos, a.rot), &a.as_ellipsoid(), p, envelope)
        .map(|c| c.to_contact(ia, Partner::Plane(ip)))
}

/// Sphere `a` against sphere `b` (either may be fixed): `Some(contact)` when the gap is below
/// `envelope` (m). Coincident centres get the normal `+y`.
#[inline]
pub fn sphere_sphere(ia: usize, a: &Body, ib: usize, b: &Body, envelope: f64) -> Option<Contact> {
    let d = b.pos - a.pos;
    let reach = a.radius + b.radius + envelope;
    let d2 = d.norm_squared();
    if d2 >= reach * reach {
        return None;
    }
    let dist = d2.sqrt();
    let n = if dist > 0.0 { d / dist } else { Vector3::y() };
    let gap = dist - a.radius - b.radius;
    Some(sphere_contact(ia, a, Partner::Body(ib), n, gap))
}

/// The contact of sphere `a` (index `ia`) with partner `b` along the unit normal `n` at gap
/// `gap`: frame from [`tangent_frame`], point midway in the gap.
#[inline]
fn sphere_contact(ia: usize, a: &Body, b: Partner, n: Vector3<f64>, gap: f64) -> Contact {
    let (u, w) = tangent_frame(&n);
    Contact {
        a: ia,
        b,
        n,
        u,
        w,
        point: a.pos + (a.radius + 0.5 * gap) * n,
        gap,
    }
}

/// Sphere `a` against plane `p` (index `ip`): `Some(contact)` when the gap is below `envelope`.
/// The normal points from the sphere into the plane (`-plane.normal`).
#[inline]
pub fn sphere_plane(ia: usize, a: &Body, ip: usize, p: &Plane, envelope: f64) -> Option<Contact> {
    let gap = p.distance(&a.pos) - a.radius;
    if gap >= envelope {
        return None;
    }
    let n = -p.normal.into_inner();
    Some(sphere_contact(ia, a, Partner::Plane(ip), n, gap))
}
