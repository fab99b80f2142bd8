//! # cpbench-granular
//!
//! Granular-dynamics time steppers (rigid spheres and ellipsoids in 3-D, discs with bonds in
//! 2-D) that generate LCP and CCP instances
//! ([`cpbench_problems::Instance`]).
//!
//! cpbench's own source of realistic problems: a semi-implicit (Moreau / Anitescu-Tasora) time
//! stepper for rigid spheres whose every step assembles the contact problem
//!
//! ```text
//! min 1/2 gamma^T N gamma + r^T gamma   s.t.  gamma in K,
//! N = D^T M^-1 D,   r = b + D^T M^-1 k,   k = M v(t) + h f_ext,   b_c = (Phi_c / h, 0, 0),
//! ```
//!
//! solves it with any [`ContactSolver`], and advances `v(t+h) = M^-1 (k + D gamma)`,
//! `q(t+h) = q(t) + h Q(q) v(t+h)` (docs/formulation.md section 1; Pospisil 2014;
//! Anitescu & Tasora 2010, Comput. Optim. Appl. 47; Tasora & Anitescu 2011, CMAME 200;
//! Heyn et al. 2013, IJNME 95). `K` is the product of Coulomb cones (CCP, frictional mode) or
//! the non-negative orthant on the normal impulses only (LCP, frictionless mode). With a
//! coefficient of restitution `e > 0` ([`SimParams::restitution`]) the normal rows of impacting
//! contacts carry Newton's impact law in Moreau's form, `b_c,n = e v_n(t)` in place of
//! `Phi_c / h` (see [`stepper`] and [`assembly::Assembly::restitution`]).
//!
//! Conventions (all SI: m, kg, s, N s for impulses):
//! - body `i` has `q_i = (x, y, z, e0, e1, e2, e3)` and `v_i = (vx, vy, vz, wx, wy, wz)`, the
//!   angular velocity in the **body** frame; `y` is up in every scene, gravity `(0, -g, 0)`;
//! - contact `c` joins body `A` (always a movable body, sphere or ellipsoid) and `B` (a movable
//!   or fixed body, or a plane); its normal `n` points from `A` to `B`, `(n, u, w)` is a right-handed
//!   orthonormal frame and `Phi_c` the signed gap (negative when overlapping);
//! - `D_c` (`6 nb x 3`) has rows `-[n u w]` and `-A_A^T [r_A x n, r_A x u, r_A x w]` for body
//!   `A` and the same with `+` and `r_B` for `B` (lever arms `r` from the centre to the contact
//!   point, rotated into body coordinates by `A^T`; for ellipsoids the contact point is the
//!   midpoint of the two witness points), so `g = N gamma + r = b + D^T v(t+h)` is
//!   the contact velocity of `B` relative to `A` in the contact frame: its normal component is
//!   positive when the bodies separate, and `gamma_n >= 0` pushes them apart. Unknowns are
//!   contact-interleaved, normal first (fclib order). Fixed bodies and planes add no rows.
//!
//! **The CCP relaxation and sliding.** The cone complementarity problem is Anitescu's convex
//! relaxation of Coulomb friction: at a sliding contact its solution has the normal contact
//! velocity `mu |u_t|` instead of 0 (docs/formulation.md section 2). In this stepper the effect is a
//! small lift, not a drift: a sphere sliding down a 60 degree incline (`mu = 0.3`, `h = 1e-3`)
//! hovers at a gap `mu |v_slip| h` (1.0e-4 m after 0.1 s at a slip speed of 0.33 m/s) because
//! the next step's `Phi / h` term absorbs it, and its acceleration along the slope is 7.0212
//! m/s^2 against Coulomb's 7.0242 (-0.04 %); sticking and rolling contacts are unaffected
//! (`tests/it/granular.rs`). The frictionless mode (LCP) has no such effect.
//!
//! Layout: [`bodies`] (state, mass matrix, quaternion update), [`narrow`] (contact geometry
//! and frames), [`broadphase`] (uniform-grid cell list, O(n)), [`assembly`] (sparse `N`, `r`,
//! velocity update), [`contact_step`] (the step sequence shared by the 3-D and planar
//! steppers: warm start, solve with its size check, timings, report), [`stepper`] (the 3-D
//! step: detection, assembly, update, rolling resistance, statistics),
//! [`scenes`] (fill, pile, pyramid, tube, bounce, cradle, ellipsoid-fill, ellipsoid-pile,
//! stack, slide, mass-ratio, chain, bridge, hinge-chain), [`joints`] (ball and hinge joints:
//! bilateral rows),
//! [`compliance`] (SAP's and MuJoCo's compliant contact),
//! [`penalty`] (spring-dashpot stepper with velocity Verlet,
//! for comparison), [`snapshot`] (saved states that rebuild instances), [`rng`] (SplitMix64),
//! [`ellipsoid`] (ellipsoid shape, mass properties and narrow phase, used by [`narrow`]),
//! [`planar`] (2-D discs, walls and FyDiK2D bonds producing fc2d instances: disc-hopper, beam-impact).
//!
//! This crate is the only user of `nalgebra` among the problem crates; `cpbench-problems` holds
//! the instances it produces and knows nothing of the engine.
#![deny(missing_docs)]

pub mod assembly;
pub mod bodies;
pub mod broadphase;
pub mod compliance;
pub mod contact;
pub mod contact_step;
pub mod ellipsoid;
pub mod joints;
pub mod narrow;
pub mod penalty;
pub mod planar;
pub mod rng;
pub mod scenes;
pub mod snapshot;
pub mod stepper;

/// The `nalgebra` version of the public API (`Vector3`, `UnitQuaternion`), re-exported so
/// callers need not depend on it themselves.
pub use nalgebra;

pub use bodies::{Body, Plane, Shape};
pub use compliance::ContactCompliance;
pub use contact_step::{ContactModel, StepReport, StepTimings};
pub use joints::{BallJoint, HingeJoint};
pub use penalty::{ContactLaw, Damping, PenaltyParams, PenaltySim};
pub use scenes::{Scene, SceneKind, SceneSpec};
pub use snapshot::Snapshot;
pub use stepper::{SimParams, Simulation, World};

use cpbench_problems::error::ProblemError;
use cpbench_problems::instance::Instance;

/// Errors of the granular generator. Nothing in this module panics on user input: bad sizes,
/// radii, masses or time steps give [`GranularError::InvalidParameter`].
#[derive(Debug, thiserror::Error)]
pub enum GranularError {
    /// A scene or simulation parameter is out of range (e.g. size 0, radius <= 0, h <= 0).
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name, as in the scene documentation.
        name: &'static str,
        /// The value given.
        value: String,
        /// The admissible range.
        reason: &'static str,
    },
    /// A ball joint that cannot be built ([`joints::check_joints`]): a body that does not
    /// exist, a body joined to itself, two fixed bodies, a non-finite anchor; or joints with a
    /// model that cannot take them (frictionless, restitution, compliance).
    #[error("joint {joint}: {message}")]
    BadJoint {
        /// The joint's index in the scene's list.
        joint: usize,
        /// What is wrong.
        message: String,
    },
    /// A hinge joint that cannot be built ([`joints::check_hinges`]): a body that does not
    /// exist, a body joined to itself, two fixed bodies, a non-finite anchor, a zero or
    /// non-finite axis, a half length that is not finite and positive; or hinges with a model
    /// that cannot take them (as [`GranularError::BadJoint`]).
    #[error("hinge {hinge}: {message}")]
    BadHinge {
        /// The hinge's index in the scene's list of hinges.
        hinge: usize,
        /// What is wrong, with the value.
        message: String,
    },
    /// The contact solver failed.
    #[error("contact solver failed at step {step}: {message}")]
    Solver {
        /// Step (1-based) whose problem was being solved.
        step: u64,
        /// The solver's message.
        message: String,
    },
    /// The contact solver returned a vector of the wrong length.
    #[error("contact solver returned {found} impulses at step {step}, expected {expected}")]
    SolutionSize {
        /// Step (1-based).
        step: u64,
        /// Number of unknowns of the instance.
        expected: usize,
        /// Length returned.
        found: usize,
    },
    /// The state became NaN or infinite (e.g. a solver returned garbage).
    #[error("non-finite state of body {body} after step {step}")]
    NonFinite {
        /// Body index.
        body: usize,
        /// Step (1-based).
        step: u64,
    },
    /// The narrow phase could not decide an ellipsoid pair (the distance iteration failed, see
    /// [`ellipsoid::ellipsoid_ellipsoid`]); the step is not taken.
    #[error("narrow phase failed for bodies {a} and {b} at step {step}: {message}")]
    Geometry {
        /// Step (1-based) whose contacts were being detected.
        step: u64,
        /// First body of the pair.
        a: usize,
        /// Second body of the pair.
        b: usize,
        /// The narrow phase's message.
        message: String,
    },
    /// Building the instance failed (should not happen for a valid state).
    #[error(transparent)]
    Problem(#[from] ProblemError),
    /// A snapshot could not be read or does not match its scene.
    #[error("snapshot: {0}")]
    Snapshot(String),
    /// An unknown scene name.
    #[error("unknown scene '{0}' (known: {known})", known = scene_names().join(", "))]
    UnknownScene(String),
}

/// The name of every built-in scene: the 3-D ones ([`scenes::SceneKind::ALL`]), then the
/// planar ones ([`planar::scenes::PlanarSceneKind::ALL`]). The one list behind parsing, error
/// messages and the possible values of `cpbench generate --scene`.
pub fn scene_names() -> Vec<&'static str> {
    scenes::SceneKind::ALL
        .iter()
        .map(|k| k.as_str())
        .chain(
            planar::scenes::PlanarSceneKind::ALL
                .iter()
                .map(|k| k.as_str()),
        )
        .collect()
}

/// Result alias of the granular generator.
pub type Result<T> = std::result::Result<T, GranularError>;

/// What a [`ContactSolver`] returns.
#[derive(Clone, Debug, Default)]
pub struct ContactSolution {
    /// The impulses `gamma` (length `inst.n()`, contact-interleaved, N s).
    pub gamma: Vec<f64>,
    /// Iterations the solver used.
    pub iterations: u64,
    /// The solver's final stopping residual (for the trajectory log; NaN if unknown).
    pub residual: f64,
    /// Whether the solver reached its tolerance.
    pub converged: bool,
    /// The solver's own time for this solve in seconds, when the caller measured it apart from
    /// its monitoring (cpbench's executor: solver time without the per-iteration residual
    /// checks); `None` otherwise (the stepper's [`StepTimings::solve`] is then the only
    /// measure).
    pub solver_time: Option<f64>,
}

/// The solver in the loop: anything that maps an instance (and an optional warm start of
/// length `inst.n()`, the previous step's impulses matched by body pair) to impulses.
///
/// This crate does not depend on `solvers`; the adapter for cpbench's registry lives in
/// `cpbench_harness::generate`. Errors are messages; the stepper wraps them in
/// [`GranularError::Solver`] with the step number.
pub trait ContactSolver {
    /// Solve `inst` (`min 1/2 g^T N g + r^T g` over `K`) from `warm` or from zero.
    fn solve(
        &mut self,
        inst: &Instance,
        warm: Option<&[f64]>,
    ) -> std::result::Result<ContactSolution, String>;
}

impl<F> ContactSolver for F
where
    F: FnMut(&Instance, Option<&[f64]>) -> std::result::Result<ContactSolution, String>,
{
    fn solve(
        &mut self,
        inst: &Instance,
        warm: Option<&[f64]>,
    ) -> std::result::Result<ContactSolution, String> {
        self(inst, warm)
    }
}

pub(crate) fn invalid(
    name: &'static str,
    value: impl ToString,
    reason: &'static str,
) -> GranularError {
    GranularError::InvalidParameter {
        name,
        value: value.to_string(),
        reason,
    }
}

/// `Ok(())` when `x` is finite and `> 0`, else [`GranularError::InvalidParameter`].
pub(crate) fn check_positive(name: &'static str, x: f64) -> Result<()> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(invalid(name, x, "must be finite and > 0"))
    }
}

/// `Ok(())` when `x` is finite and `>= 0`, else [`GranularError::InvalidParameter`].
pub(crate) fn check_non_negative(name: &'static str, x: f64) -> Result<()> {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        Err(invalid(name, x, "must be finite and >= 0"))
    }
}
