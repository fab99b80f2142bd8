//! Ellipsoids (3-D): shape, mass properties and the narrow phase (ellipsoid-plane and
//! ellipsoid-ellipsoid), used by the stepper through [`super::narrow::body_body`] and
//! [`super::narrow::body_plane`].
//!
//! An ellipsoid with semi-axes `(a, b, c)` (m) along its body axes, centre `x` and orientation
//! `R` (unit quaternion, body frame = principal axes, `x_world = R x_body + x`) is
//! `E = { y : (y - x)^T Q^-1 (y - x) <= 1 }` with the world shape matrix
//! `Q = R diag(a^2, b^2, c^2) R^T`. Its support function and support point in a direction `n`
//! are closed form:
//!
//! ```text
//! h(n) = n . x + sqrt(n^T Q n),      s(n) = x + Q n / sqrt(n^T Q n).
//! ```
//!
//! **Ellipsoid-plane.** The deepest point in the plane's normal `p` is `s(-p)`, so the signed
//! gap is `p . x - sqrt(p^T Q p) - d` (exact).
//!
//! **Ellipsoid-ellipsoid.** For convex bodies `A` and `B` with `d = x_B - x_A`, the gap along a
//! unit direction `n` (from `A` to `B`) between the supporting planes is
//! `f(n) = -h_A(n) - h_B(-n) = n . d - sqrt(n^T Q_A n) - sqrt(n^T Q_B n)`, and the signed
//! distance is `Phi = max_{|n| = 1} f(n)`: the Euclidean distance when the bodies are disjoint
//! (the dual of the minimum-norm-point problem on the Minkowski difference `B - A`, Boyd &
//! Vandenberghe 2004, Convex Optimization, section 8.2.1; Gilbert, Johnson & Keerthi 1988,
//! IEEE J. Robot. Autom. 4(2), whose distance GJK computes on the same support function) and
//! minus the penetration depth (minimum translational distance, Cameron & Culley 1986, ICRA,
//! "Determining the minimum translational distance between two convex polyhedra") when they
//! overlap. The stationarity condition of `f` on the sphere is the common-normal condition
//! (Lin & Han 2002, SIAM J. Optim. 13(1), "On the distance between two ellipsoids"): the
//! witness points `s_A = s_A(n)` and `s_B = s_B(-n)` satisfy `s_B - s_A = Phi n`, `n` is the
//! outward normal of `A` at `s_A` and `-n` that of `B` at `s_B`.
//!
//! `f` is concave and positively homogeneous of degree 1, so `n . grad f = f` and the
//! Riemannian Hessian on the unit sphere is `P H P - f P` (`P = I - n n^T`, `H` the Euclidean
//! Hessian; Absil, Mahony & Sepulchre 2008, Optimization Algorithms on Matrix Manifolds,
//! chapter 5, the Riemannian Hessian of a function on the sphere). The maximisation is a
//! Riemannian Newton method with a safeguard: the Newton step in the tangent plane when the 2x2
//! Riemannian Hessian is negative definite, otherwise a scaled gradient step, each followed by
//! an Armijo backtracking line search and the retraction `n <- (n + xi) / |n + xi|` (Absil et
//! al. 2008, chapters 4 and 6).
//!
//! *Certificate.* A local maximiser on the sphere with `f > 0` is the global one (if `f(n) > 0`
//! at a local maximum on the sphere, it is a local maximum of the concave `f` on the unit ball,
//! hence global, and unique because `f(t m) = t f(m) < f(m)` for `t < 1`); so a run that ends
//! with `f > 0` is exact. When the run from the centre direction ends with `f <= 0` (overlap),
//! the penetration depth is non-convex in `n` and the method restarts from the six principal
//! axes of both bodies (signed towards `d`) and keeps the best local maximum (the usual
//! multi-start treatment of penetration depth); for small overlaps, the contacts of a
//! time stepper, the first run already ends at the answer.
//!
//! Nothing here allocates; all arithmetic is on stack 3-vectors and 3x3 matrices.

use super::contact::{tangent_frame, Contact, Partner};
use super::{check_positive, invalid, Plane, Result};
use nalgebra::{Matrix2, Matrix3, UnitQuaternion, Vector2, Vector3};

/// An ellipsoid's shape and mass properties (body frame = principal axes).
#[derive(Clone, Debug, PartialEq)]
pub struct Ellipsoid {
    /// Semi-axes `(a, b, c)` (m), each `> 0`, along the body `x`, `y`, `z` axes.
    pub semi_axes: Vector3<f64>,
    /// Mass (kg), `> 0`.
    pub mass: f64,
    /// Principal moments of inertia (kg m^2), body frame:
    /// `(m/5 (b^2 + c^2), m/5 (a^2 + c^2), m/5 (a^2 + b^2))` for a solid homogeneous ellipsoid.
    pub inertia: Vector3<f64>,
}

impl Ellipsoid {
    /// A solid homogeneous ellipsoid of semi-axes `semi_axes` (m) and mass `mass` (kg).
    /// Errors: [`super::GranularError::InvalidParameter`] for a semi-axis or mass that is not
    /// finite and positive.
    pub fn new(semi_axes: Vector3<f64>, mass: f64) -> Result<Self> {
        check_positive("semi_axes.a", semi_axes.x)?;
        check_positive("semi_axes.b", semi_axes.y)?;
        check_positive("semi_axes.c", semi_axes.z)?;
        check_positive("mass", mass)?;
        let s = semi_axes.component_mul(&semi_axes);
        let k = mass / 5.0;
        let inertia = Vector3::new(k * (s.y + s.z), k * (s.x + s.z), k * (s.x + s.y));
        if !inertia.iter().all(|j| j.is_finite()) {
            return Err(invalid(
                "semi_axes",
                format!("{semi_axes:?}"),
                "inertia overflows",
            ));
        }
        Ok(Self {
            semi_axes,
            mass,
            inertia,
        })
    }

    /// A solid homogeneous ellipsoid of density `density` (kg/m^3): mass
    /// `4/3 pi a b c density`. Errors as [`Ellipsoid::new`], and for a non-positive density.
    pub fn with_density(semi_axes: Vector3<f64>, density: f64) -> Result<Self> {
        check_positive("density", density)?;
        check_positive("semi_axes.a", semi_axes.x)?;
        check_positive("semi_axes.b", semi_axes.y)?;
        check_positive("semi_axes.c", semi_axes.z)?;
        Self::new(semi_axes, density * Self::volume_of(&semi_axes))
    }

    fn volume_of(ax: &Vector3<f64>) -> f64 {
        4.0 / 3.0 * std::f64::consts::PI * ax.x * ax.y * ax.z
    }

    /// Volume `4/3 pi a b c` (m^3).
    pub fn volume(&self) -> f64 {
        Self::volume_of(&self.semi_axes)
    }

    /// Radius of the smallest sphere about the centre that contains the ellipsoid (m): the
    /// largest semi-axis. Used by the broad phase.
    pub fn bounding_radius(&self) -> f64 {
        self.semi_axes.max()
    }

    /// World shape matrix `Q = R diag(a^2, b^2, c^2) R^T` (m^2) for orientation `rot`.
    pub fn shape_matrix(&self, rot: &UnitQuaternion<f64>) -> Matrix3<f64> {
        let r = rot.to_rotation_matrix().into_inner();
        let s = self.semi_axes.component_mul(&self.semi_axes);
        r * Matrix3::from_diagonal(&s) * r.transpose()
    }

    /// Implicit function `F(y) = (y - x)^T Q^-1 (y - x) - 1` (dimensionless) at the world point
    /// `y`: negative inside, zero on the surface; its gradient
    /// `2 Q^-1 (y - x)` is the outward normal direction (see [`Ellipsoid::surface_normal`]).
    pub fn implicit(&self, pose: &Pose, y: &Vector3<f64>) -> f64 {
        let b = pose
            .orientation
            .inverse_transform_vector(&(y - pose.position));
        b.component_div(&self.semi_axes).norm_squared() - 1.0
    }

    /// Unit outward normal of the level surface of [`Ellipsoid::implicit`] through the world
    /// point `y` (the normalised gradient `Q^-1 (y - x)`); `y` must differ from the centre.
    pub fn surface_normal(&self, pose: &Pose, y: &Vector3<f64>) -> Vector3<f64> {
        let b = pose
            .orientation
            .inverse_transform_vector(&(y - pose.position));
        let s = self.semi_axes.component_mul(&self.semi_axes);
        pose.orientation
            .transform_vector(&b.component_div(&s))
            .normalize()
    }

    /// Support point `s(n) = x + Q n / sqrt(n^T Q n)` (world, m): the point of the surface
    /// with outward normal `n` (any non-zero `n`; the point is scale-invariant in `n`).
    pub fn support(&self, pose: &Pose, n: &Vector3<f64>) -> Vector3<f64> {
        let q = self.shape_matrix(&pose.orientation);
        let qn = q * n;
        pose.position + qn / n.dot(&qn).sqrt()
    }
}

/// Position and orientation of a body: `x_world = orientation * x_body + position`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Centre (m), world frame.
    pub position: Vector3<f64>,
    /// Orientation (unit quaternion; body frame = principal axes).
    pub orientation: UnitQuaternion<f64>,
}

impl Pose {
    /// A pose from a centre and an orientation.
    pub fn new(position: Vector3<f64>, orientation: UnitQuaternion<f64>) -> Self {
        Self {
            position,
            orientation,
        }
    }

    fn is_finite(&self) -> bool {
        self.position.iter().all(|x| x.is_finite())
            && self.orientation.coords.iter().all(|x| x.is_finite())
    }
}

/// Contact geometry of an ellipsoid pair or an ellipsoid and a plane (world frame unless
/// stated): what the assembly needs for the `D` blocks (lever arms in the world and in the
/// body frames, as for spheres in [`super::narrow`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EllipsoidContact {
    /// Unit normal from `A` to `B` (outward normal of `A` at [`Self::point_a`]).
    pub n: Vector3<f64>,
    /// First unit tangent ([`tangent_frame`]).
    pub u: Vector3<f64>,
    /// Second unit tangent, `w = n x u`.
    pub w: Vector3<f64>,
    /// Signed gap `Phi` (m): the distance when separated, minus the penetration depth
    /// (minimum translational distance) when overlapping.
    pub gap: f64,
    /// Witness point on the surface of `A` (m).
    pub point_a: Vector3<f64>,
    /// Witness point on the surface of `B` (m); `point_b - point_a = gap n`.
    pub point_b: Vector3<f64>,
    /// Contact point (m), the midpoint of the witness points (the convention of
    /// [`super::narrow::Contact::point`]).
    pub point: Vector3<f64>,
    /// Lever arm of `A`, `point_a - x_A` (m), world frame.
    pub r_a: Vector3<f64>,
    /// Lever arm of `A` in `A`'s body frame, `R_A^T r_a` (m), for the `D` block rows
    /// `-R_A^T [r x n, r x u, r x w]`.
    pub r_a_body: Vector3<f64>,
    /// Lever arm of `B`, `point_b - x_B` (m), world frame; zero for a plane.
    pub r_b: Vector3<f64>,
    /// Lever arm of `B` in `B`'s body frame (m); zero for a plane.
    pub r_b_body: Vector3<f64>,
    /// Newton iterations used (summed over restarts); 0 for the closed-form plane contact.
    pub iterations: usize,
}

impl EllipsoidContact {
    /// The stepper's [`Contact`] for body `a` and partner `b` (normal, frame, gap and the
    /// midpoint [`Self::point`]). The lever arms `point - x` of that struct differ from
    /// [`Self::r_a`] / [`Self::r_b`] by `+- gap/2 n`, which changes only the tangential torque
    /// rows and only by `O(gap)`.
    pub fn to_contact(&self, a: usize, b: Partner) -> Contact {
        Contact {
            a,
            b,
            n: self.n,
            u: self.u,
            w: self.w,
            point: self.point,
            gap: self.gap,
        }
    }
}

/// Errors of the ellipsoid narrow phase.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EllipsoidError {
    /// A non-finite pose or an out-of-range solver parameter.
    #[error("invalid input {name}: {reason}")]
    InvalidInput {
        /// The offending input.
        name: &'static str,
        /// What is required.
        reason: &'static str,
    },
    /// The Newton iteration did not reach the tolerance within the iteration cap.
    #[error("ellipsoid distance did not converge in {iterations} iterations (tangential gradient {gradient:e} m)")]
    NotConverged {
        /// Iterations used.
        iterations: usize,
        /// Final norm of the tangential gradient of `f` (m).
        gradient: f64,
    },
}

/// Parameters of [`ellipsoid_ellipsoid`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceParams {
    /// Stop when the tangential gradient of `f` is at most `tol * (|d| + R_A + R_B)` (relative,
    /// dimensionless; `R` the bounding radii). The error of the gap is then about
    /// `tol^2` relative. Finite and `> 0`; default `1e-10`.
    pub tol: f64,
    /// Iteration cap per start; `>= 1`; default 50 (a few iterations are typical).
    pub max_iter: usize,
    /// Restart from the six principal axes when the first run ends in overlap (`f <= 0`), the
    /// only case without a global certificate (module documentation). Default `true`; `false`
    /// trusts the local optimum reached from the centre direction (about 7 times cheaper on
    /// overlapping pairs, and the same answer for the small overlaps of a time stepper in the
    /// tests).
    pub restarts: bool,
}

impl Default for DistanceParams {
    fn default() -> Self {
        Self {
            tol: 1e-10,
            max_iter: 50,
            restarts: true,
        }
    }
}

/// Ellipsoid `shape` at `pose` against `plane`: `Some(contact)` when the gap is below
/// `envelope` (m). Exact: the deepest point is the support point
/// `s = x - Q p / sqrt(p^T Q p)` in the direction `-p` (`p` the plane's free-side normal), the
/// gap `p . s - d`, the normal `n = -p` (from the ellipsoid into the plane), `point_b` the
/// projection of `s` on the plane, and `r_b = r_b_body = 0`. A non-finite pose gives `None`.
pub fn ellipsoid_plane(
    pose: &Pose,
    shape: &Ellipsoid,
    plane: &Plane,
    envelope: f64,
) -> Option<EllipsoidContact> {
    let p = plane.normal.into_inner();
    let q = shape.shape_matrix(&pose.orientation);
    let qp = q * p;
    let sp = p.dot(&qp).sqrt();
    let gap = plane.distance(&pose.position) - sp;
    if gap.is_nan() || gap >= envelope {
        return None;
    }
    let n = -p;
    let point_a = pose.position - qp / sp;
    let point_b = point_a + gap * n;
    let (u, w) = tangent_frame(&n);
    let r_a = point_a - pose.position;
    Some(EllipsoidContact {
        n,
        u,
        w,
        gap,
        point_a,
        point_b,
        point: point_a + 0.5 * gap * n,
        r_a,
        r_a_body: pose.orientation.inverse_transform_vector(&r_a),
        r_b: Vector3::zeros(),
        r_b_body: Vector3::zeros(),
        iterations: 0,
    })
}

/// Value, Euclidean gradient and the two scaled support offsets of
/// `f(n) = n . d - sqrt(n^T Qa n) - sqrt(n^T Qb n)`.
struct Eval {
    f: f64,
    g: Vector3<f64>,
    pa: Vector3<f64>,
    pb: Vector3<f64>,
    sa: f64,
    sb: f64,
}

#[inline]
fn eval(n: &Vector3<f64>, d: &Vector3<f64>, qa: &Matrix3<f64>, qb: &Matrix3<f64>) -> Eval {
    let qan = qa * n;
    let qbn = qb * n;
    let sa = n.dot(&qan).sqrt();
    let sb = n.dot(&qbn).sqrt();
    let pa = qan / sa;
    let pb = qbn / sb;
    Eval {
        f: n.dot(d) - sa - sb,
        g: d - pa - pb,
        pa,
        pb,
        sa,
        sb,
    }
}

/// Safeguarded Riemannian Newton maximisation of `f` on the unit sphere from `n0`; returns the
/// maximiser, `f` there and the iterations.
fn maximise(
    mut n: Vector3<f64>,
    d: &Vector3<f64>,
    qa: &Matrix3<f64>,
    qb: &Matrix3<f64>,
    scale: f64,
    prm: &DistanceParams,
) -> std::result::Result<(Vector3<f64>, f64, usize), EllipsoidError> {
    let gtol = prm.tol * scale;
    let mut e = eval(&n, d, qa, qb);
    let mut gnorm = f64::INFINITY;
    for it in 0..prm.max_iter {
        let (t1, t2) = tangent_frame(&n);
        let gt = Vector2::new(t1.dot(&e.g), t2.dot(&e.g));
        gnorm = gt.norm();
        if gnorm <= gtol {
            return Ok((n, e.f, it));
        }
        // Euclidean Hessian H = -(Qa/sa - pa pa^T/sa) - (Qb/sb - pb pb^T/sb), projected.
        let hq = |t: &Vector3<f64>, s: &Vector3<f64>| -> f64 {
            -(t.dot(&(qa * s)) - t.dot(&e.pa) * s.dot(&e.pa)) / e.sa
                - (t.dot(&(qb * s)) - t.dot(&e.pb) * s.dot(&e.pb)) / e.sb
        };
        let h12 = hq(&t1, &t2);
        let hr = Matrix2::new(hq(&t1, &t1) - e.f, h12, h12, hq(&t2, &t2) - e.f);
        let det = hr.determinant();
        let newton = det > 0.0 && hr.trace() < 0.0;
        let mut xi = if newton {
            // xi = -Hr^-1 gt (2x2 closed form)
            -Vector2::new(
                hr.m22 * gt.x - hr.m12 * gt.y,
                -hr.m21 * gt.x + hr.m11 * gt.y,
            ) / det
        } else {
            let l = hr.norm().max(e.f.abs()).max(1e-12 * scale);
            gt / l
        };
        let xn = xi.norm();
        if xn > 1.0 {
            xi /= xn;
        }
        let slope = gt.dot(&xi);
        let mut alpha = 1.0;
        let mut accepted = false;
        for _ in 0..40 {
            let cand = (n + alpha * (xi.x * t1 + xi.y * t2)).normalize();
            let ec = eval(&cand, d, qa, qb);
            // Armijo, with a slack of a few rounding errors of f so that Newton can finish
            // reducing the gradient where f no longer changes in floating point.
            if ec.f >= e.f + 1e-4 * alpha * slope - 4.0 * f64::EPSILON * scale {
                n = cand;
                e = ec;
                accepted = true;
                break;
            }
            alpha *= 0.5;
        }
        if !accepted {
            // No ascent left at floating-point resolution: accept a near-stationary point.
            if gnorm <= 1e-6 * scale {
                return Ok((n, e.f, it + 1));
            }
            return Err(EllipsoidError::NotConverged {
                iterations: it + 1,
                gradient: gnorm,
            });
        }
    }
    let (t1, t2) = tangent_frame(&n);
    let g = Vector2::new(t1.dot(&e.g), t2.dot(&e.g)).norm();
    if g <= gtol {
        return Ok((n, e.f, prm.max_iter));
    }
    Err(EllipsoidError::NotConverged {
        iterations: prm.max_iter,
        gradient: g.min(gnorm),
    })
}

/// Ellipsoid `A` (`shape_a` at `pose_a`) against ellipsoid `B`: the signed distance, the unit
/// normal from `A` to `B` and the witness points, when the gap is below `envelope` (m).
///
/// Returns `Ok(None)` when the bounding spheres are farther apart than `envelope` or the gap
/// is at least `envelope`, and `Ok(Some(contact))` otherwise. Method: the safeguarded
/// Riemannian Newton maximisation of `f(n) = n . d - sqrt(n^T Q_A n) - sqrt(n^T Q_B n)` of the
/// module documentation (support-function duality, Lin & Han 2002's common-normal condition),
/// started from the centre direction, with restarts from the principal axes when it ends in
/// overlap ([`DistanceParams::restarts`]) or fails. Swapping `A` and `B` flips the normal and swaps the witness points.
///
/// Errors: [`EllipsoidError::InvalidInput`] for a non-finite pose, `tol` not finite and `> 0`,
/// or `max_iter = 0`; [`EllipsoidError::NotConverged`] when no start reaches the tolerance.
/// Coincident centres start from `+y`.
pub fn ellipsoid_ellipsoid(
    pose_a: &Pose,
    shape_a: &Ellipsoid,
    pose_b: &Pose,
    shape_b: &Ellipsoid,
    envelope: f64,
    params: &DistanceParams,
) -> std::result::Result<Option<EllipsoidContact>, EllipsoidError> {
    if !(pose_a.is_finite() && pose_b.is_finite()) {
        return Err(EllipsoidError::InvalidInput {
            name: "pose",
            reason: "position and orientation must be finite",
        });
    }
    if !(params.tol.is_finite() && params.tol > 0.0) {
        return Err(EllipsoidError::InvalidInput {
            name: "tol",
            reason: "must be finite and > 0",
        });
    }
    if params.max_iter == 0 {
        return Err(EllipsoidError::InvalidInput {
            name: "max_iter",
            reason: "must be >= 1",
        });
    }
    if envelope.is_nan() {
        return Err(EllipsoidError::InvalidInput {
            name: "envelope",
            reason: "must not be NaN",
        });
    }
    let d = pose_b.position - pose_a.position;
    let (ra, rb) = (shape_a.bounding_radius(), shape_b.bounding_radius());
    let dn = d.norm();
    if dn - ra - rb >= envelope {
        return Ok(None);
    }
    let qa = shape_a.shape_matrix(&pose_a.orientation);
    let qb = shape_b.shape_matrix(&pose_b.orientation);
    let scale = dn + ra + rb;
    let n0 = if dn > 0.0 { d / dn } else { Vector3::y() };
    let mut total = 0;
    let mut best: Option<(Vector3<f64>, f64)> = None;
    let mut last_err = None;
    match maximise(n0, &d, &qa, &qb, scale, params) {
        Ok((n, f, it)) => {
            total += it;
            best = Some((n, f));
        }
        Err(e) => last_err = Some(e),
    }
    if best.is_none() || (params.restarts && best.is_some_and(|(_, f)| f <= 0.0)) {
        let (ma, mb) = (
            pose_a.orientation.to_rotation_matrix().into_inner(),
            pose_b.orientation.to_rotation_matrix().into_inner(),
        );
        for k in 0..6 {
            let axis: Vector3<f64> = if k < 3 {
                ma.column(k).into()
            } else {
                mb.column(k - 3).into()
            };
            let start = if axis.dot(&d) < 0.0 { -axis } else { axis };
            match maximise(start, &d, &qa, &qb, scale, params) {
                Ok((n, f, it)) => {
                    total += it;
                    if best.is_none_or(|(_, fb)| f > fb) {
                        best = Some((n, f));
                    }
                }
                Err(e) => last_err = Some(e),
            }
        }
    }
    let Some((n, gap)) = best else {
        return Err(last_err.unwrap_or(EllipsoidError::NotConverged {
            iterations: 0,
            gradient: f64::NAN,
        }));
    };
    if gap >= envelope {
        return Ok(None);
    }
    let e = eval(&n, &d, &qa, &qb);
    let point_a = pose_a.position + e.pa;
    let point_b = pose_b.position - e.pb;
    let (u, w) = tangent_frame(&n);
    let r_a = point_a - pose_a.position;
    let r_b = point_b - pose_b.position;
    Ok(Some(EllipsoidContact {
        n,
        u,
        w,
        gap,
        point_a,
        point_b,
        point: 0.5 * (point_a + point_b),
        r_a,
        r_a_body: pose_a.orientation.inverse_transform_vector(&r_a),
        r_b,
        r_b_body: pose_b.orientation.inverse_transform_vector(&r_b),
        iterations: total,
    }))
}
