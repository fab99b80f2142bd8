//! A contact of the 3-D stepper: its two bodies ([`Partner`]), its geometry and orthonormal
//! frame ([`Contact`], [`tangent_frame`]). A leaf module: the narrow phases of spheres
//! ([`super::narrow`]) and ellipsoids ([`super::ellipsoid`]) both produce contacts, and
//! neither depends on the other through it.

use nalgebra::Vector3;

/// The second body of a contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partner {
    /// Another sphere (movable or fixed), by body index.
    Body(usize),
    /// A plane, by index in [`super::World::planes`].
    Plane(usize),
}

/// One contact: geometry and frame (world coordinates).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Body `A` (movable), index into the world's bodies.
    pub a: usize,
    /// Body `B`.
    pub b: Partner,
    /// Unit normal from `A` to `B`.
    pub n: Vector3<f64>,
    /// First unit tangent.
    pub u: Vector3<f64>,
    /// Second unit tangent, `w = n x u`.
    pub w: Vector3<f64>,
    /// Contact point (m), midway between the closest surface points.
    pub point: Vector3<f64>,
    /// Signed gap `Phi` (m), negative when overlapping.
    pub gap: f64,
}

/// A right-handed orthonormal frame `(n, u, w)` for a unit `n`: `u` is `n x e` normalised,
/// with `e` the coordinate axis least aligned with `n`, and `w = n x u`. Deterministic and
/// continuous except where the choice of `e` switches.
#[inline]
pub fn tangent_frame(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = n.map(f64::abs);
    let e = if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let u = n.cross(&e).normalize();
    let w = n.cross(&u);
    (u, w)
}
