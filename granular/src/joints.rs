//! Ball and hinge joints of the 3-D stepper: bilateral rows in the contact problem (issue 33 item 4;
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
//! **Hinge joints** ([`HingeJoint`], issue 33: "a stepper with ball and hinge joints") remove 5
//! degrees of freedom: the 3 relative translations and the 2 relative rotations about axes
//! perpendicular to the hinge axis. The contact problem stores free blocks of 3 rows, each
//! wholly an equality ("free reaction, zero velocity" for all 3 rows), so 5 rows cannot be one
//! block, and a 3-row angular block with its axial row left free is not expressible (a free
//! block has no unconstrained row; a zero row would make the block's `N_bb` singular, which
//! the Gauss-Seidel solvers invert; engines with a per-row equality flag, e.g. ODE's and
//! Bullet's hinges, use the 3 + 2 rows instead). A hinge is therefore the classical **pair of
//! ball joints at two bearings on the hinge axis** (a door on two hinges, a shaft in two
//! bearings: Hibbeler, *Engineering Mechanics: Statics*, ch. 5, rigid bodies in 3-D supported
//! by properly aligned hinges or bearings): bearings at `c +- l a` (`c` the hinge centre, `a`
//! the unit axis, `l` [`HingeJoint::half_length`]), 2 free blocks of 3 rows, placed after the
//! ball joints' blocks. Each block is an ordinary ball joint: its `N_bb` is positive definite
//! whenever one of the bodies moves (`m^-1 I` at least), so every joint solver's block step is
//! unchanged. The 6 rows have rank 5: with the lever arms at the bearings' midpoints `c_1`,
//! `c_2` and the world axis taken as `a_w = (c_2 - c_1) / |c_2 - c_1|`, the rows satisfy
//! `a_w^T (u_1 - u_2) = a_w^T ((omega_B - omega_A) x (c_1 - c_2)) = 0` identically, so
//! `D (a_w, -a_w) = 0`: the Delassus matrix is singular along `(a_w, -a_w)` on the hinge's
//! blocks (an equal and opposite axial load on the two bearings, which moves nothing: the
//! statically indeterminate axial split of a shaft on two bearings). The impulses on the
//! bodies `D gamma`, the velocities and every other component of `gamma` are unique; the
//! axial split is not. The problem `N gamma + r = 0` on those rows has solutions only if `r`
//! has no component along the null direction; its part `D^T M^-1 k` has none, and the
//! stabilisation term `b_k = beta e_k / h` (the bearings' [`BallJoint::bias`]) has none either
//! in exact arithmetic: the bearings sit `-+ l` along the unit axes `a_A`, `a_B` of both
//! bodies, so `e_2 - e_1 = 2 l (a_B - a_A)` and `c_2 - c_1 = l (a_A + a_B)`, whose product is
//! `2 l^2 (|a_B|^2 - |a_A|^2) = 0` whatever the drift and misalignment. In floating point the
//! anchors carry rounding `eps |x|` (2e-15 m for an anchor 10 m from its body's centre), so
//! the two axial components differ by about `eps |x| / h`, a component along the null direction
//! that no solver can remove: it is a floor under the equality residual (pgs stalls at
//! 4.6e-12 on the door of `tests/it/hinges.rs`, `h = 5e-3`, instead of converging to 1e-12 in
//! 15 sweeps). [`HingeJoint::bias`] therefore replaces the two axial components by their mean
//! (the projection of `(b_1, b_2)` onto the complement of `(a_w, -a_w)`), which changes `b` by
//! rounding only. Which solvers take the rank deficiency (all that take joints) is recorded in
//! docs/formulation.md ("Hinge joints") and checked by the tests of `tests/it/hinges.rs`.
//!
//! Joints are not in the broad phase; they persist over the steps and are warm-started by
//! joint (block) index. A pair of jointed bodies also has its contacts (the scenes space them
//! so that neighbours do not touch at rest).

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

/// A hinge (revolute) joint between bodies `a` and `b` (module documentation, "Hinge
/// joints"): the hinge centre `anchor_a` of `a` held on `anchor_b` of `b` and the axis
/// `axis_a` of `a` held along `axis_b` of `b`, as two ball joints at the bearings
/// `anchor +- half_length * axis / |axis|` ([`HingeJoint::bearings`]). Only the rotation about
/// the axis is free. Anchors in the body frames (m); the axes in the body frames, any non-zero
/// finite length (normalised where used); `half_length > 0` (m). Centres or axes that disagree
/// in the world at the start are a drift of the bearings, closed by the stabilisation term in
/// the first step (as anchors apart for a ball joint); [`HingeJoint::at_point`] builds a
/// hinge without drift.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HingeJoint {
    /// Body `a`, index into the world's bodies.
    pub a: usize,
    /// Body `b`, index into the world's bodies.
    pub b: usize,
    /// The hinge centre on `a`, in `a`'s body frame (m).
    pub anchor_a: Vector3<f64>,
    /// The hinge centre on `b`, in `b`'s body frame (m).
    pub anchor_b: Vector3<f64>,
    /// The hinge axis in `a`'s body frame (non-zero, any length).
    pub axis_a: Vector3<f64>,
    /// The hinge axis in `b`'s body frame (non-zero, any length).
    pub axis_b: Vector3<f64>,
    /// Half the distance of the two bearings along the axis (m), `> 0`: the lever of the two
    /// angular reactions (their torque is `2 l` times a bearing's transverse load).
    pub half_length: f64,
}

impl HingeJoint {
    /// A hinge of `a` and `b` at the world point `p` (m) with the world axis `axis` (any
    /// non-zero length) and bearings `half_length` (m) from `p`, in the bodies' current poses.
    /// Errors: [`GranularError::InvalidParameter`] when `a` or `b` is not a body of `bodies`,
    /// `p` is not finite, `axis` is zero or not finite, or `half_length` is not finite and
    /// positive (the joint has no index yet; [`check_hinges`] names it once it has).
    pub fn at_point(
        bodies: &[Body],
        a: usize,
        b: usize,
        p: Vector3<f64>,
        axis: Vector3<f64>,
        half_length: f64,
    ) -> Result<Self> {
        let body = |i: usize, name: &'static str| {
            bodies
                .get(i)
                .ok_or_else(|| crate::invalid(name, i, "must index a body of the world"))
        };
        let (ba, bb) = (body(a, "hinge body a")?, body(b, "hinge body b")?);
        if !p.iter().all(|v| v.is_finite()) {
            return Err(crate::invalid(
                "hinge point",
                p.transpose(),
                "must be finite",
            ));
        }
        if !(axis.iter().all(|v| v.is_finite()) && axis.norm() > 0.0) {
            return Err(crate::invalid(
                "hinge axis",
                axis.transpose(),
                "must be finite and non-zero",
            ));
        }
        crate::check_positive("hinge half_length", half_length)?;
        let local = |body: &Body| body.rot.inverse_transform_vector(&(p - body.pos));
        let dir = |body: &Body| body.rot.inverse_transform_vector(&axis);
        Ok(Self {
            a,
            b,
            anchor_a: local(ba),
            anchor_b: local(bb),
            axis_a: dir(ba),
            axis_b: dir(bb),
            half_length,
        })
    }

    /// The two bearings: ball joints of `a` and `b` at `anchor -+ half_length * axis / |axis|`
    /// (body frames), in this order (module documentation). Non-finite for a zero axis
    /// (rejected by [`check_hinges`]).
    pub fn bearings(&self) -> [BallJoint; 2] {
        let (ea, eb) = (
            self.half_length * self.axis_a.normalize(),
            self.half_length * self.axis_b.normalize(),
        );
        [-1.0, 1.0].map(|s| BallJoint {
            a: self.a,
            b: self.b,
            anchor_a: self.anchor_a + s * ea,
            anchor_b: self.anchor_b + s * eb,
        })
    }

    /// The unit hinge axes of `a` and of `b` in the world frame: equal while the joint holds.
    /// Like every method below and [`BallJoint`]'s, it expects the `bodies` the hinge was
    /// checked against ([`check_hinges`]; an index out of range panics).
    pub fn world_axes(&self, bodies: &[Body]) -> (Vector3<f64>, Vector3<f64>) {
        (
            bodies[self.a].rot * self.axis_a.normalize(),
            bodies[self.b].rot * self.axis_b.normalize(),
        )
    }

    /// The positional drift: the larger of the two bearings' `|p_b - p_a|` (m); zero while the
    /// joint holds (both bearings together also hold the axes: their misalignment angle is at
    /// most `(e_1 + e_2) / (2 l)` to first order).
    pub fn drift(&self, bodies: &[Body]) -> f64 {
        let [j1, j2] = self.bearings();
        j1.drift(bodies).max(j2.drift(bodies))
    }

    /// The angle (rad) between the two bodies' hinge axes in the world, `atan2(|a_a x a_b|,
    /// a_a . a_b)`: zero while the joint holds.
    pub fn misalignment(&self, bodies: &[Body]) -> f64 {
        let (x, y) = self.world_axes(bodies);
        x.cross(&y).norm().atan2(x.dot(&y))
    }

    /// The relative angular velocity of `b` to `a` (world, rad/s) split along the axis of `a`:
    /// `(axial, off-axis norm)`. The second is zero while the joint holds; the first is the
    /// hinge's free rate.
    pub fn relative_rotation_rate(&self, bodies: &[Body]) -> (f64, f64) {
        let w = |i: usize| {
            if bodies[i].fixed {
                Vector3::zeros()
            } else {
                bodies[i].omega_world()
            }
        };
        let rel = w(self.b) - w(self.a);
        let (axis, _) = self.world_axes(bodies);
        let along = rel.dot(&axis);
        (along, (rel - along * axis).norm())
    }

    /// The constant terms of the two bearings' rows, `beta e_k / h` ([`BallJoint::bias`]),
    /// m/s, with their components along `a_w = (c_2 - c_1) / |c_2 - c_1|` (`c_k` the bearings'
    /// pseudo-contact points) replaced by their mean: in exact arithmetic they are equal
    /// already; the mean removes the rounding along the null direction `(a_w, -a_w)` of the
    /// hinge's rows (module documentation), so the rows stay consistent to the last bit.
    pub fn bias(&self, bodies: &[Body], h: f64) -> [[f64; 3]; 2] {
        let [j1, j2] = self.bearings();
        let (c1, c2) = (
            j1.pseudo_contact(bodies).point,
            j2.pseudo_contact(bodies).point,
        );
        let axis = (c2 - c1).normalize();
        let (b1, b2) = (
            Vector3::from(j1.bias(bodies, h)),
            Vector3::from(j2.bias(bodies, h)),
        );
        let mean = 0.5 * (b1.dot(&axis) + b2.dot(&axis));
        let fix = |b: Vector3<f64>| {
            let b = b + (mean - b.dot(&axis)) * axis;
            [b.x, b.y, b.z]
        };
        [fix(b1), fix(b2)]
    }
}

/// Check `hinges` against `bodies`: each names two distinct existing bodies, not both fixed,
/// with finite anchors, finite non-zero axes and a finite positive half length. Errors:
/// [`GranularError::BadHinge`] naming the hinge (its index) and the value that is wrong.
pub fn check_hinges(hinges: &[HingeJoint], bodies: &[Body]) -> Result<()> {
    for (k, j) in hinges.iter().enumerate() {
        let bad = |message: String| GranularError::BadHinge { hinge: k, message };
        let ball = BallJoint {
            a: j.a,
            b: j.b,
            anchor_a: j.anchor_a,
            anchor_b: j.anchor_b,
        };
        // the checks of a ball joint (bodies, anchors), renamed
        if let Err(GranularError::BadJoint { message, .. }) =
            check_joints(std::slice::from_ref(&ball), bodies)
        {
            return Err(bad(message));
        }
        for (side, axis) in [("a", j.axis_a), ("b", j.axis_b)] {
            if !(axis.iter().all(|v| v.is_finite()) && axis.norm() > 0.0) {
                return Err(bad(format!(
                    "axis_{side} = ({}, {}, {}) must be finite and non-zero",
                    axis.x, axis.y, axis.z
                )));
            }
        }
        if !(j.half_length.is_finite() && j.half_length > 0.0) {
            return Err(bad(format!(
                "half_length = {} must be finite and > 0",
                j.half_length
            )));
        }
    }
    Ok(())
}
