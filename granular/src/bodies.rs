//! Rigid bodies (spheres and ellipsoids), their block of the mass matrix, the quaternion
//! update, and planes.
//!
//! Body `i` has generalised position `q_i = (x, y, z, e0, e1, e2, e3)` (centre of mass in m and
//! unit rotation quaternion, `x_world = A(e) x_body + x`) and generalised velocity
//! `v_i = (vx, vy, vz, wx, wy, wz)` (m/s and rad/s, angular velocity in the body frame).
//! Its block of the mass matrix is `diag(m I3, J)` with `J = diag(J1, J2, J3)` the principal
//! inertia in the body frame; a sphere has `J = 2/5 m R^2 I3` (Pospisil 2014;
//! docs/formulation.md section 1), a solid ellipsoid of semi-axes `(a, b, c)` along its body
//! axes `J = m/5 (b^2 + c^2, a^2 + c^2, a^2 + b^2)` ([`Shape`], [`crate::ellipsoid`]).

use super::{check_positive, invalid, Result};
use nalgebra::{Quaternion, Unit, UnitQuaternion, Vector3};

/// The shape of a body, in its body frame (principal axes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// A sphere of radius [`Body::radius`].
    Sphere,
    /// A solid ellipsoid with semi-axes `(a, b, c)` (m) along the body `x`, `y`, `z` axes;
    /// [`Body::radius`] is its bounding radius `max(a, b, c)` (the broad phase's sphere).
    Ellipsoid {
        /// Semi-axes `(a, b, c)` (m), each `> 0`.
        semi_axes: Vector3<f64>,
    },
}

/// A rigid body (sphere or ellipsoid): state, mass properties, shape and bounding radius;
/// `fixed` bodies never move and add no unknowns (their contacts have one movable side).
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Centre of mass (m), world frame.
    pub pos: Vector3<f64>,
    /// Orientation: unit quaternion `(e0, e1, e2, e3)`, `x_world = A x_body + pos`.
    pub rot: UnitQuaternion<f64>,
    /// Velocity of the centre (m/s), world frame.
    pub vel: Vector3<f64>,
    /// Angular velocity (rad/s), **body** frame.
    pub omega: Vector3<f64>,
    /// Mass (kg), `> 0`.
    pub mass: f64,
    /// Principal moments of inertia (kg m^2), body frame, each `> 0`.
    pub inertia: Vector3<f64>,
    /// Radius (m), `> 0`: the sphere's radius, or an ellipsoid's bounding radius (the largest
    /// semi-axis), which the broad phase and the envelope use.
    pub radius: f64,
    /// The shape ([`Shape::Sphere`] unless built by [`Body::ellipsoid`]).
    pub shape: Shape,
    /// Fixed (static) body: zero velocity, no unknowns.
    pub fixed: bool,
    /// Whether the body rotates (6 DOF, the default). A body with `rotates = false` has 3 DOF
    /// (translation only, infinite inertia: its angular velocity stays zero and contact
    /// impulses exert no torque on it), as the spheres of DVIDE's TEST_FILL (Melanz et al.
    /// 2017). Set by [`Body::without_rotation`].
    pub rotates: bool,
}

impl Body {
    /// A movable sphere at rest at `pos` with radius `radius` (m) and mass `mass` (kg),
    /// inertia `2/5 m R^2`. Errors: [`super::GranularError::InvalidParameter`] for a radius or
    /// mass that is not finite and positive, or a non-finite position.
    pub fn sphere(pos: Vector3<f64>, radius: f64, mass: f64) -> Result<Self> {
        check_positive("radius", radius)?;
        check_positive("mass", mass)?;
        if !pos.iter().all(|x| x.is_finite()) {
            return Err(invalid("position", format!("{pos:?}"), "must be finite"));
        }
        let j = 0.4 * mass * radius * radius;
        Ok(Self {
            pos,
            rot: UnitQuaternion::identity(),
            vel: Vector3::zeros(),
            omega: Vector3::zeros(),
            mass,
            inertia: Vector3::new(j, j, j),
            radius,
            shape: Shape::Sphere,
            fixed: false,
            rotates: true,
        })
    }

    /// A movable solid ellipsoid at rest at `pos` with orientation `rot`, semi-axes
    /// `semi_axes = (a, b, c)` (m) along its body axes and mass `mass` (kg): inertia
    /// `m/5 (b^2 + c^2, a^2 + c^2, a^2 + b^2)`, bounding radius `max(a, b, c)`
    /// ([`crate::ellipsoid::Ellipsoid::new`]). Errors:
    /// [`super::GranularError::InvalidParameter`] for a semi-axis or mass that is not finite
    /// and positive, or a non-finite position or orientation.
    pub fn ellipsoid(
        pos: Vector3<f64>,
        rot: UnitQuaternion<f64>,
        semi_axes: Vector3<f64>,
        mass: f64,
    ) -> Result<Self> {
        let e = crate::ellipsoid::Ellipsoid::new(semi_axes, mass)?;
        if !pos.iter().chain(rot.coords.iter()).all(|x| x.is_finite()) {
            return Err(invalid(
                "position",
                format!("{pos:?} {rot:?}"),
                "must be finite",
            ));
        }
        Ok(Self {
            pos,
            rot,
            vel: Vector3::zeros(),
            omega: Vector3::zeros(),
            mass,
            inertia: e.inertia,
            radius: e.bounding_radius(),
            shape: Shape::Ellipsoid { semi_axes },
            fixed: false,
            rotates: true,
        })
    }

    /// The ellipsoid this body is, for the narrow phase: its semi-axes, or `(R, R, R)` for a
    /// sphere (mass and inertia copied, not recomputed).
    #[inline]
    pub fn as_ellipsoid(&self) -> crate::ellipsoid::Ellipsoid {
        let semi_axes = match self.shape {
            Shape::Sphere => Vector3::repeat(self.radius),
            Shape::Ellipsoid { semi_axes } => semi_axes,
        };
        crate::ellipsoid::Ellipsoid {
            semi_axes,
            mass: self.mass,
            inertia: self.inertia,
        }
    }

    /// Whether the body is a sphere ([`Shape::Sphere`]).
    #[inline]
    pub fn is_sphere(&self) -> bool {
        matches!(self.shape, Shape::Sphere)
    }

    /// The same body with 3 DOF: translation only (see [`Body::rotates`]); its angular velocity
    /// is set to zero.
    pub fn without_rotation(mut self) -> Self {
        self.rotates = false;
        self.omega = Vector3::zeros();
        self
    }

    /// `J^{-1/2}` per principal axis (1 / sqrt(kg m^2)): zero for a body that does not rotate.
    #[inline]
    pub fn inv_sqrt_inertia(&self) -> Vector3<f64> {
        if self.rotates {
            self.inertia.map(|j| 1.0 / j.sqrt())
        } else {
            Vector3::zeros()
        }
    }

    /// `J^{-1}` per principal axis (1 / (kg m^2)): zero for a body that does not rotate.
    #[inline]
    pub fn inv_inertia(&self) -> Vector3<f64> {
        if self.rotates {
            self.inertia.map(|j| 1.0 / j)
        } else {
            Vector3::zeros()
        }
    }

    /// A fixed sphere (never moves, e.g. the bottom layer of the pyramid or the tube wall).
    /// Errors as [`Body::sphere`].
    pub fn fixed_sphere(pos: Vector3<f64>, radius: f64) -> Result<Self> {
        let mut b = Self::sphere(pos, radius, 1.0)?;
        b.fixed = true;
        Ok(b)
    }

    /// Generalised position `q_i = (x, y, z, e0, e1, e2, e3)`.
    pub fn q(&self) -> [f64; 7] {
        let e = self.rot.quaternion();
        [self.pos.x, self.pos.y, self.pos.z, e.w, e.i, e.j, e.k]
    }

    /// Generalised velocity `v_i = (vx, vy, vz, wx, wy, wz)` (angular part in the body frame).
    pub fn v(&self) -> [f64; 6] {
        [
            self.vel.x,
            self.vel.y,
            self.vel.z,
            self.omega.x,
            self.omega.y,
            self.omega.z,
        ]
    }

    /// Set `q_i` (the quaternion is renormalised) and `v_i`. Errors: a non-finite entry or a
    /// zero quaternion.
    pub fn set_state(&mut self, q: &[f64; 7], v: &[f64; 6]) -> Result<()> {
        if !q.iter().chain(v).all(|x| x.is_finite()) {
            return Err(invalid("state", format!("{q:?} {v:?}"), "must be finite"));
        }
        let e = Quaternion::new(q[3], q[4], q[5], q[6]);
        if e.norm() == 0.0 {
            return Err(invalid("quaternion", "0", "must be non-zero"));
        }
        self.pos = Vector3::new(q[0], q[1], q[2]);
        self.rot = UnitQuaternion::new_normalize(e);
        self.vel = Vector3::new(v[0], v[1], v[2]);
        self.omega = Vector3::new(v[3], v[4], v[5]);
        Ok(())
    }

    /// Kinetic energy `1/2 m |v|^2 + 1/2 omega^T J omega` (J); 0 for fixed bodies (a body
    /// without rotation has `omega = 0`).
    pub fn kinetic_energy(&self) -> f64 {
        if self.fixed {
            return 0.0;
        }
        0.5 * self.mass * self.vel.norm_squared()
            + 0.5 * self.omega.component_mul(&self.omega).dot(&self.inertia)
    }

    /// Angular velocity in the world frame, `A omega` (rad/s).
    pub fn omega_world(&self) -> Vector3<f64> {
        self.rot * self.omega
    }

    /// Position update of the scheme (docs/formulation.md section 1, step 5; Pospisil 2014):
    /// `x += h v`, `e += h/2 G(e)^T omega` with `G^T omega = e (x) (0, omega)` for the body-frame
    /// angular velocity (the seed's `1/2 E^T omega`, Haug 1989), then the quaternion is
    /// renormalised. `h` in s.
    pub fn advance_position(&mut self, h: f64) {
        self.pos += h * self.vel;
        let e = *self.rot.quaternion();
        let w = Quaternion::new(0.0, self.omega.x, self.omega.y, self.omega.z);
        let edot = (e * w) * 0.5;
        self.rot = UnitQuaternion::new_normalize(e + edot * h);
    }
}

/// A fixed plane `{x : n . x = offset}`; the free side is `n . x >= offset` (m).
#[derive(Clone, Debug, PartialEq)]
pub struct Plane {
    /// Unit normal pointing into the free half-space.
    pub normal: Unit<Vector3<f64>>,
    /// Offset `d` (m): the plane is `n . x = d`.
    pub offset: f64,
}

impl Plane {
    /// Plane through `point` with free-side normal `normal` (normalised here). Errors: a zero
    /// or non-finite normal or point.
    pub fn new(normal: Vector3<f64>, point: Vector3<f64>) -> Result<Self> {
        let nn = normal.norm();
        if !(nn.is_finite() && nn > 0.0 && point.iter().all(|x| x.is_finite())) {
            return Err(invalid(
                "plane",
                format!("normal {normal:?}, point {point:?}"),
                "normal must be non-zero, both finite",
            ));
        }
        let n = Unit::new_normalize(normal);
        Ok(Self {
            offset: n.dot(&point),
            normal: n,
        })
    }

    /// Signed distance of `x` from the plane (positive on the free side), m.
    pub fn distance(&self, x: &Vector3<f64>) -> f64 {
        self.normal.dot(x) - self.offset
    }
}
