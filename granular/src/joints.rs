//! Ball joints of the 3-D stepper: bilateral rows in the contact problem (issue 33 item 4;
//! docs/formulation.md, "Bilateral rows").
//!
//! A ball joint holds an anchor point of body `a` (fixed in its frame) on an anchor point of
//! body `b`: `p_b - p_a = 0`, `p = x + A s` (`s` the anchor in the body frame, `A` the body's
//! rotation). Its velocity-level form is three equality rows on the relative velocity of the two
//! anchors, `v_b + omega_b x r_b - v_a - omega_a x r_a = 0` in the fixed world frame `(e_x, e_y,
//! e_z)`: exactly what a contact row is (relative velocity at a point in an orthonormal frame),
//! so a joint enters the assembly as a pseudo-contact ([`BallJoint::pseudo_contact`]) placed
//! before the contacts (the first blocks of the instance, free blocks of
//! [`cpbench_problems::ConstraintSet::coulomb_jointed`]), with the lever arms taken at the
//! midpoint of the two anchors (they coincide up to the drift) and the Jacobian, `N`, the block
//! storage and the matrix-free operator of the contacts.
//!
//! **Stabilisation** (Baumgarte-style, velocity level): the constant term of a joint's rows is
//! the anchors' position error over the step, `b = beta (p_b - p_a) / h` with
//! [`JOINT_STABILISATION`] `beta = 1` (the contacts' `Phi / h`), so that the rows ask the step
//! to close the drift of the last one; the drift left after a step is of second order in `h`
//! (the rotation of the lever arms within the step). A body pinned to the world is a joint with
//! a fixed body ([`crate::Body::fixed_sphere`], which has no rows).
//!
//! Hinge joints (5 rows: 3 of the ball, 2 angular) do not fit the blocks of 3 of the contact
//! problem and are not provided. Joints are not in the broad phase; they persist over the steps
//! and are warm-started by joint index. A pair of jointed bodies also has its contacts (the
//! scenes space them so that neighbours do not touch at rest).

use crate::bodies::Body;
use crate::contact::{Contact, Partner};
use crate::{GranularError, Result};
use nalgebra::Vector3;

/// The factor `beta` of the joints' stabilisation term `b = beta (p_b - p_a) / h`: 1, the
/// whole drift closed in one step (module documentation).
pub const JOINT_STABILISATION: f64 = 1.0;

/// A ball (spherical) joint between bodies `a` and `b`: the anchor `anchor_a` of `a` (body
/// frame, m) held on the anchor `anchor_b` of `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallJoint {
    /// Body `a`, index into the world's bodies.
    pub a: usize,
    /// Body `b`, index into the world's bodies.
    pub b: usize,
    /// The anchor on `a`, in `a`'s body frame (m).
    pub anchor_a: Vector3<f64>,
    /// The anchor on `b`, in `b`'s body frame (m).
    pub anchor_b: Vector3<f64>,
}

/// The world position (m) of the anchor `s` (body frame) of `body`: `x + A s`.
#[inline]
pub fn world_anchor(body: &Body, s: &Vector3<f64>) -> Vector3<f64> {
    body.pos + body.rot * s
}

/// The world velocity (m/s) of the point `p` (world, m) carried by `body`:
/// `v + omega_world x (p - x)`; zero for a fixed body.
#[inline]
pub fn point_velocity(body: &Body, p: &Vector3<f64>) -> Vector3<f64> {
    if body.fixed {
        return Vector3::zeros();
    }
    body.vel + body.omega_world().cross(&(p - body.pos))
}

impl BallJoint {
    /// A joint of `a` and `b` whose anchors are both at the world point `p` (m) in the
    /// bodies' current poses (anchors expressed in their body frames).
    pub fn at_point(bodies: &[Body], a: usize, b: usize, p: Vector3<f64>) -> Self {
        let local = |i: usize| bodies[i].rot.inverse_transform_vector(&(p - bodies[i].pos));
        Self {
            a,
            b,
            anchor_a: local(a),
            anchor_b: local(b),
        }
    }

    /// The anchors in the world `(p_a, p_b)` (m).
    pub fn anchors(&self, bodies: &[Body]) -> (Vector3<f64>, Vector3<f64>) {
        (
            world_anchor(&bodies[self.a], &self.anchor_a),
            world_anchor(&bodies[self.b], &self.anchor_b),
        )
    }

    /// The drift `|p_b - p_a|` (m): zero while the joint holds.
    pub fn drift(&self, bodies: &[Body]) -> f64 {
        let (pa, pb) = self.anchors(bodies);
        (pb - pa).norm()
    }

    /// The relative velocity of the anchors `|v(p_b) - v(p_a)|` (m/s), each carried by its
    /// body ([`point_velocity`]): the joint's equality residual after a step.
    pub fn relative_speed(&self, bodies: &[Body]) -> f64 {
        let (pa, pb) = self.anchors(bodies);
        (point_velocity(&bodies[self.b], &pb) - point_velocity(&bodies[self.a], &pa)).norm()
    }

    /// The pseudo-contact of the joint for the assembly (module documentation): movable body
    /// `A` = `a` (or `b` when `a` is fixed, the anchors swapped), partner `B` the other body,
    /// the frame `(e_x, e_y, e_z)`, point the midpoint of the anchors, gap 0 (the stabilisation
    /// term is added by [`BallJoint::bias`]).
    pub fn pseudo_contact(&self, bodies: &[Body]) -> Contact {
        let (pa, pb) = self.anchors(bodies);
        let (a, b) = if bodies[self.a].fixed {
            (self.b, self.a)
        } else {
            (self.a, self.b)
        };
        Contact {
            a,
            b: Partner::Body(b),
            n: Vector3::x(),
            u: Vector3::y(),
            w: Vector3::z(),
            point: 0.5 * (pa + pb),
            gap: 0.0,
        }
    }

    /// The constant term of the joint's three rows, `beta (p_B - p_A) / h` in `(e_x, e_y,
    /// e_z)` (`A` the pseudo-contact's movable body, [`JOINT_STABILISATION`]), m/s.
    pub fn bias(&self, bodies: &[Body], h: f64) -> [f64; 3] {
        let (pa, pb) = self.anchors(bodies);
        let e = if bodies[self.a].fixed {
            pa - pb
        } else {
            pb - pa
        };
        let s = JOINT_STABILISATION / h;
        [s * e.x, s * e.y, s * e.z]
    }
}

/// Check `joints` against `bodies`: each names two distinct existing bodies, not both fixed,
/// with finite anchors. Errors: [`GranularError::BadJoint`] naming the joint (its index) and
/// what is wrong.
pub fn check_joints(joints: &[BallJoint], bodies: &[Body]) -> Result<()> {
    let nb = bodies.len();
    for (k, j) in joints.iter().enumerate() {
        let bad = |message: String| GranularError::BadJoint { joint: k, message };
        for (side, i) in [("a", j.a), ("b", j.b)] {
            if i >= nb {
                return Err(bad(format!(
                    "body {side} = {i} does not exist (the world has {nb} bodies)"
                )));
            }
        }
        if j.a == j.b {
            return Err(bad(format!("joins body {} to itself", j.a)));
        }
        if bodies[j.a].fixed && bodies[j.b].fixed {
            return Err(bad(format!("both bodies {} and {} are fixed", j.a, j.b)));
        }
        if !j
            .anchor_a
            .iter()
            .chain(j.anchor_b.iter())
            .all(|v| v.is_finite())
        {
            return Err(bad("an anchor is not finite".into()));
        }
    }
    Ok(())
}
