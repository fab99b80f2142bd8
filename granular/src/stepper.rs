//! The time step: detect, assemble, solve, update (docs/formulation.md section 1; Anitescu &
//! Tasora 2010; Tasora & Anitescu 2011; Pospisil 2014, "Algoritmus").
//!
//! One call of [`Simulation::step`] advances the state from `t` to `t + h`:
//!
//! 1. contacts at `q(t)` with gap below the effective envelope ([`Simulation::detect`]);
//! 2. Jacobian blocks, `N = D^T M^-1 D` and `r = b + D^T M^-1 k` ([`Simulation::assemble`]);
//!    `N` on the storage of [`Simulation::set_operator`]: by default CSC when it has fewer than
//!    [`BLOCK_MIN_NNZ`] stored entries (bit-identical to earlier versions), else assembled
//!    straight into the block storage (the same entries); on request never formed
//!    (matrix-free: `D` and `M` of the movable bodies);
//! 3. an [`Instance`] (CCP with one Coulomb cone per contact, or the LCP of the normals in
//!    frictionless mode), solved by the [`ContactSolver`] from a warm start: the previous
//!    step's impulse of the same body pair (same `A`, same partner), kept as a world-frame
//!    vector and projected on the new contact frame;
//! 4. `v(t+h) = M^-1 (k + D gamma)`, then `x += h v`, quaternion update and renormalisation.
//!
//! **Restitution.** By default the scheme is perfectly inelastic (`b_c = Phi_c / h`: an
//! impacting body stops at contact). With [`SimParams::restitution`] `e > 0`, the normal row of
//! every impacting contact (closing faster than [`SimParams::restitution_threshold`], its free
//! motion closing the gap within the step) carries Newton's impact law in Moreau's
//! velocity-level form, `v_n(t+h) + e v_n(t) >= 0 _|_ gamma_n >= 0` (`r_n = e v_n(t) +
//! D_n^T v_free`, the gap term dropped on that row; Moreau 1988; Acary & Brogliato 2008, ch.
//! 10): see [`crate::assembly::Assembly::restitution`]. A sphere dropped on a floor rebounds
//! to heights in the ratio `e^2`; simultaneous impacts follow Moreau's global law (a row of
//! touching equal spheres hit at `v0` with `e = 1` sends the first back at `(2/n - 1) v0` and
//! the others on together at `2 v0 / n`, not the sequential Newton's cradle, which needs gaps
//! of at least `h v0` between the spheres; `granular/tests/it/restitution.rs`).
//!
//! **Envelope.** A contact enters the problem when its gap is below
//! `min(max(envelope, 2 h v_max), r_max)`, with `v_max = max |v| + |omega| R + h |g|` over the
//! movable spheres (a bound on the surface speeds during the step): two surfaces cannot close
//! more than `2 h v_max` in one step, so no approaching pair is missed and bodies stop at
//! contact instead of overlapping (the inactive near contacts cost unknowns, not accuracy).
//! `envelope` ([`SimParams::envelope`]) is the floor of that margin, `r_max` its ceiling (it
//! keeps the grid cells at most `3 r_max` wide).

use super::assembly::{free_velocity, movable_jacobian, Assembly};
use super::bodies::{Body, Plane};
use super::broadphase::{contact_key, BroadPhase};
use super::narrow::{Contact, Partner};
use super::{check_non_negative, check_positive, invalid, ContactSolver, GranularError, Result};
use crate::contact_step::{ContactFrame, ContactModel, StepState};
pub use crate::contact_step::{StepReport, StepTimings};
use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::instance::{Instance, Provenance, ValidationOptions};
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::operator::{BlockSymMatrix, MatrixFree, OperatorKind, BLOCK_MIN_NNZ};
use nalgebra::Vector3;
use std::collections::BTreeMap;

/// Physical and numerical parameters of a simulation (SI units).
#[derive(Clone, Debug, PartialEq)]
pub struct SimParams {
    /// Time step `h` (s), `> 0`.
    pub h: f64,
    /// Gravity (m/s^2), e.g. `(0, -9.81, 0)`.
    pub gravity: Vector3<f64>,
    /// Friction coefficient of every contact, `>= 0` (ignored when `frictionless`).
    pub mu: f64,
    /// Minimum collision envelope (m), `>= 0`: contacts with gap below it enter the problem.
    pub envelope: f64,
    /// Frictionless mode: LCP on the normal impulses only (`N` is `nc x nc`).
    pub frictionless: bool,
    /// Newton's coefficient of restitution `e` in `[0, 1]` (dimensionless), the same for
    /// every contact; default 0 (perfectly inelastic: the scheme of earlier versions, bit for
    /// bit). With `e > 0` an *impacting* contact (see
    /// [`SimParams::restitution_threshold`]) gets Moreau's impact law on the normal velocity,
    /// `v_n(t+h) + e v_n(t) >= 0` complementary to `gamma_n >= 0`, in place of the gap row
    /// `v_n(t+h) + Phi / h >= 0` ([`crate::assembly::Assembly::restitution`]; Moreau 1988;
    /// Acary & Brogliato 2008, ch. 10).
    pub restitution: f64,
    /// Closing-speed threshold of the impact law (m/s), `>= 0`; default `1e-2`. A contact
    /// impacts when its normal velocity at the start of the step is `v_n(t) <
    /// -restitution_threshold` and its free motion closes the gap within the step; slower
    /// contacts stay inelastic, so a bouncing sphere comes to rest after finitely many
    /// bounces (no Zeno sequence) and resting contacts do not bounce on solver noise. Ignored
    /// when `restitution = 0`.
    pub restitution_threshold: f64,
    /// Coefficient of rolling resistance `mu_r` (dimensionless), `>= 0`; default 0 (none:
    /// the scheme of earlier versions, bit for bit). With `mu_r > 0`, after the velocity update
    /// every contact with `gamma_n > 0` opposes the rolling part of the relative angular
    /// velocity (its component perpendicular to `n`) with a torque impulse of magnitude at most
    /// `mu_r l gamma_n` (N m s; `l` the rolling lever arm, `|r|` of a body on a wall or the
    /// reduced `l_A l_B / (l_A + l_B)` of a pair), clipped so that the rolling velocity is
    /// brought to zero and never reversed: the constant-torque rolling resistance of DEM
    /// (Iwashita & Oda 1998, J. Eng. Mech. 124(3); model A of Ai et al. 2011, Powder Technol.
    /// 206, with the clipping that stops it at rest), applied to `v(t+h)` after the position
    /// update, so it removes kinetic energy, enters the next step's free velocity (whose
    /// contact problem keeps the contacts), and leaves the contact problem of this step (the
    /// instance) unchanged.
    /// Without it a rigid ellipsoid rolls without loss and rocks on a floor for ever.
    pub rolling_friction: f64,
    /// Compliant contact ([`crate::compliance`]): every step's problem becomes `(N + R, r~)`
    /// with `R` and `r~` from SAP's or MuJoCo's stiffness and damping; `None` (default): rigid
    /// contact, bit for bit the scheme of earlier versions. Not with `restitution > 0` (both
    /// rewrite the normal rows' constant term).
    pub compliance: Option<crate::ContactCompliance>,
}

impl Default for SimParams {
    /// `h = 1e-2`, `g = 9.81` downwards in `y`, `mu = 0.25`, envelope `1e-3`, frictional,
    /// no restitution (`e = 0`, threshold `1e-2` m/s), no rolling resistance.
    fn default() -> Self {
        Self {
            h: 1e-2,
            gravity: Vector3::new(0.0, -9.81, 0.0),
            mu: 0.25,
            envelope: 1e-3,
            frictionless: false,
            restitution: 0.0,
            restitution_threshold: 1e-2,
            rolling_friction: 0.0,
            compliance: None,
        }
    }
}

impl SimParams {
    /// Check ranges. Errors: [`GranularError::InvalidParameter`] for `h <= 0`, `mu < 0`,
    /// `envelope < 0`, `restitution` outside `[0, 1]`, `restitution_threshold < 0`, or
    /// non-finite values.
    pub fn validate(&self) -> Result<()> {
        crate::contact_step::check_step(self.h, self.mu, self.envelope)?;
        check_non_negative("restitution", self.restitution)?;
        if self.restitution > 1.0 {
            return Err(invalid(
                "restitution",
                self.restitution,
                "must be in [0, 1]",
            ));
        }
        check_non_negative("restitution_threshold", self.restitution_threshold)?;
        check_non_negative("rolling_friction", self.rolling_friction)?;
        if let Some(c) = &self.compliance {
            c.validate()?;
            if self.restitution > 0.0 {
                return Err(invalid(
                    "restitution",
                    self.restitution,
                    "must be 0 with a contact compliance (both set the normal rows' constant term)",
                ));
            }
        }
        crate::contact_step::check_gravity(self.gravity.as_slice(), &self.gravity)
    }

    /// Unknowns per contact: 1 (frictionless LCP) or 3 (CCP).
    pub fn block_size(&self) -> usize {
        crate::contact_step::block_size(self.frictionless, 3)
    }
}

/// Bodies, planes and parameters.
#[derive(Clone, Debug)]
pub struct World {
    /// The spheres (movable and fixed).
    pub bodies: Vec<Body>,
    /// Fixed planes (floor, box walls, inclines).
    pub planes: Vec<Plane>,
    /// Parameters.
    pub params: SimParams,
}

/// The assembled operator of the current step, before it becomes an instance.
#[derive(Clone, Debug)]
enum Assembled {
    Csc(CscMatrix),
    Block(BlockSymMatrix),
    /// `D` (movable bodies' rows) and the diagonal of `M`.
    Factors(CscMatrix, Vec<f64>),
}

/// A running simulation: the world plus every buffer the step reuses.
#[derive(Clone, Debug)]
pub struct Simulation {
    world: World,
    label: String,
    parameters: BTreeMap<String, String>,
    seed: Option<u64>,
    envelope: f64,
    broad: BroadPhase,
    contacts: Vec<Contact>,
    asm: Assembly,
    vfree: Vec<(Vector3<f64>, Vector3<f64>)>,
    n_mat: Option<Assembled>,
    /// Storage of a previous step's block matrix, reused.
    spare_block: Option<BlockSymMatrix>,
    /// Requested storage of `N` (`None`: automatic).
    operator: Option<OperatorKind>,
    r: Vec<f64>,
    /// Step counter, instance, impulses and warm start (the core's).
    state: StepState<Vector3<f64>>,
    /// Impacting contacts of the last assembly (Newton's impact law applied).
    impacts: usize,
    /// Ball joints ([`Simulation::with_joints`]): pseudo-contacts placed before the contacts,
    /// the free blocks of every instance ([`crate::joints`]).
    joints: Vec<crate::joints::BallJoint>,
    /// Hinge joints ([`Simulation::with_hinges`]): two free blocks each (their bearings),
    /// after the ball joints' blocks ([`crate::joints`], "Hinge joints").
    hinges: Vec<crate::joints::HingeJoint>,
}

impl Simulation {
    /// A simulation of `world`, labelled `label` (instance names are
    /// `{label}_step{NNNN}__{ccp|lcp}`), with `parameters` and `seed` recorded in every
    /// instance's provenance.
    ///
    /// Errors: [`GranularError::InvalidParameter`] for invalid [`SimParams`], a body with a
    /// non-positive or non-finite radius, mass or inertia or a non-finite state, an ellipsoid
    /// with a non-positive semi-axis or a radius below its largest semi-axis, or more than
    /// `2^31` bodies.
    pub fn new(
        world: World,
        label: impl Into<String>,
        parameters: BTreeMap<String, String>,
        seed: Option<u64>,
    ) -> Result<Self> {
        world.params.validate()?;
        check_bodies(&world.bodies)?;
        Ok(Self {
            world,
            label: label.into(),
            parameters,
            seed,
            envelope: 0.0,
            broad: BroadPhase::new(),
            contacts: Vec::new(),
            asm: Assembly::new(),
            vfree: Vec::new(),
            n_mat: None,
            spare_block: None,
            operator: None,
            r: Vec::new(),
            state: StepState::default(),
            impacts: 0,
            joints: Vec::new(),
            hinges: Vec::new(),
        })
    }

    /// The simulation with the ball joints `joints` ([`crate::joints`]): from the next step on,
    /// every instance starts with one free (bilateral) block of 3 rows per joint, in the order
    /// of `joints`, before the contacts (warm-started by joint index). Errors:
    /// [`GranularError::BadJoint`] for a joint naming a missing body, a body joined to itself,
    /// two fixed bodies or a non-finite anchor ([`crate::joints::check_joints`]), and for
    /// joints in a frictionless simulation (a joint needs 3 rows per block), with restitution
    /// or with a compliance (both rewrite every block's constant term).
    pub fn with_joints(mut self, joints: Vec<crate::joints::BallJoint>) -> Result<Self> {
        crate::joints::check_joints(&joints, &self.world.bodies)?;
        if let (Some(why), false) = (self.joint_refusal(), joints.is_empty()) {
            return Err(GranularError::BadJoint {
                joint: 0,
                message: format!("a simulation {why} takes no joints"),
            });
        }
        self.joints = joints;
        Ok(self)
    }

    /// Why this simulation's model takes no joints (`None` when it takes them).
    fn joint_refusal(&self) -> Option<&'static str> {
        let p = &self.world.params;
        if p.frictionless {
            Some("frictionless (joints need blocks of 3 rows)")
        } else if p.restitution > 0.0 {
            Some("with restitution (its impact law would rewrite joint rows)")
        } else if p.compliance.is_some() {
            Some("with a compliance (it would soften the joints)")
        } else {
            None
        }
    }

    /// The ball joints ([`Simulation::with_joints`]).
    pub fn joints(&self) -> &[crate::joints::BallJoint] {
        &self.joints
    }

    /// The simulation with the hinge joints `hinges` ([`crate::joints`], "Hinge joints"): from
    /// the next step on, every instance has two free blocks of 3 rows per hinge (its bearings,
    /// [`crate::joints::HingeJoint::bearings`]) after the ball joints' blocks and before the
    /// contacts, in the order of `hinges` (warm-started by block index). Errors:
    /// [`GranularError::BadHinge`] for a hinge naming a missing body, a body joined to itself,
    /// two fixed bodies, a non-finite anchor, a zero or non-finite axis or a half length that
    /// is not finite and positive ([`crate::joints::check_hinges`]), and for hinges in a
    /// frictionless simulation, with restitution or with a compliance (as
    /// [`Simulation::with_joints`]).
    pub fn with_hinges(mut self, hinges: Vec<crate::joints::HingeJoint>) -> Result<Self> {
        crate::joints::check_hinges(&hinges, &self.world.bodies)?;
        if let (Some(why), false) = (self.joint_refusal(), hinges.is_empty()) {
            return Err(GranularError::BadHinge {
                hinge: 0,
                message: format!("a simulation {why} takes no joints"),
            });
        }
        self.hinges = hinges;
        Ok(self)
    }

    /// The hinge joints ([`Simulation::with_hinges`]).
    pub fn hinges(&self) -> &[crate::joints::HingeJoint] {
        &self.hinges
    }

    /// The number of free (joint) blocks of every instance: one per ball joint, two per hinge
    /// (the first blocks, in this order).
    pub fn joint_blocks(&self) -> usize {
        self.joints.len() + 2 * self.hinges.len()
    }

    /// Choose the storage of `N` in the instances built from now on: `None` (the default)
    /// assembles CSC when `N` has fewer than [`BLOCK_MIN_NNZ`] stored entries and the block
    /// storage otherwise (same entries, bit for bit); `Some(OperatorKind::Csc)` always
    /// assembles CSC (the instance then applies its own automatic choice, see
    /// [`Instance::new`]); `Some(OperatorKind::Block)` always the block storage;
    /// `Some(OperatorKind::MatrixFree)` never forms `N`: the instance holds `D` (the rows of
    /// the movable bodies) and the diagonal of `M` ([`movable_jacobian`]), and `r` as usual.
    pub fn set_operator(&mut self, kind: Option<OperatorKind>) {
        self.operator = kind;
    }

    /// The storage requested with [`Simulation::set_operator`] (`None`: automatic).
    pub fn operator(&self) -> Option<OperatorKind> {
        self.operator
    }

    crate::contact_step::step_accessors!();

    /// The world (bodies, planes, parameters).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Mutable bodies (e.g. to set initial velocities). Sizes must not change between steps'
    /// warm starts; radii and masses must stay positive (checked by [`Simulation::new`] only).
    pub fn bodies_mut(&mut self) -> &mut [Body] {
        &mut self.world.bodies
    }

    /// Set the step counter (used when resuming from a [`super::Snapshot`]).
    pub fn set_steps_done(&mut self, steps: u64) {
        self.state.steps_done = steps;
    }

    /// Contacts found by the last [`Simulation::detect`].
    pub fn contacts(&self) -> &[Contact] {
        &self.contacts
    }

    /// Contacts of the last assembly whose normal row carries Newton's impact law
    /// ([`SimParams::restitution`], [`crate::assembly::Assembly::restitution`]); 0 when
    /// `restitution = 0`.
    pub fn impacts(&self) -> usize {
        self.impacts
    }

    /// The first pair the last [`Simulation::detect`] could not decide, `(A, B, message)`
    /// ([`BroadPhase::failure`]); `None` when every pair was decided.
    pub fn narrow_failure(&self) -> Option<(usize, usize, String)> {
        self.broad.failure().map(|(a, b, e)| (a, b, e.to_string()))
    }

    /// Kinetic energy of all bodies (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.world.bodies.iter().map(Body::kinetic_energy).sum()
    }

    /// Potential energy of the movable bodies in gravity, `-sum m g . x` (J, zero at the
    /// origin).
    pub fn gravity_energy(&self) -> f64 {
        let bodies = self.world.bodies.iter().map(|b| (b.mass, &b.pos, b.fixed));
        crate::contact_step::gravity_energy(&self.world.params.gravity, bodies)
    }

    /// Linear momentum of the movable bodies (kg m/s).
    pub fn momentum(&self) -> Vector3<f64> {
        self.world
            .bodies
            .iter()
            .filter(|b| !b.fixed)
            .map(|b| b.mass * b.vel)
            .sum()
    }

    /// Largest overlap `max(0, -Phi)` among the current contacts (m).
    pub fn max_penetration(&self) -> f64 {
        self.contacts.iter().fold(0.0f64, |m, c| m.max(-c.gap))
    }

    /// Step 1: find the contacts at the current positions; returns their number.
    /// O(nb) for bounded density (see [`super::broadphase`]). An ellipsoid pair whose distance
    /// computation failed is left out and reported by [`Simulation::narrow_failure`]
    /// ([`Simulation::step`] and [`Simulation::build_instance`] then fail with
    /// [`GranularError::Geometry`]).
    pub fn detect(&mut self) -> usize {
        let p = &self.world.params;
        let mut vmax = 0.0f64;
        let mut rmax = 0.0f64;
        for b in &self.world.bodies {
            rmax = rmax.max(b.radius);
            if !b.fixed {
                vmax = vmax.max(b.vel.norm() + b.omega.norm() * b.radius);
            }
        }
        // surface speeds at the end of the step are at most vmax + h |g|
        let vmax = vmax + p.h * p.gravity.norm();
        self.envelope = p.envelope.max(2.0 * p.h * vmax).min(rmax.max(p.envelope));
        self.broad.detect(
            &self.world.bodies,
            &self.world.planes,
            self.envelope,
            &mut self.contacts,
        );
        let nb = self.world.bodies.len();
        self.state.keys.clear();
        // joints first (keys 0..J, by joint index), then the contacts (keys shifted by J: the
        // keys stay sorted; without joints they are those of earlier versions)
        let nj = self.joint_blocks();
        if nj > 0 {
            let bodies = &self.world.bodies;
            // exact size hints (no flat_map): splice then allocates nothing
            let hinges = &self.hinges;
            let pseudo = self.joints.iter().map(|j| j.pseudo_contact(bodies)).chain(
                (0..2 * hinges.len())
                    .map(|k| hinges[k / 2].bearings()[k % 2].pseudo_contact(bodies)),
            );
            self.contacts.splice(0..0, pseudo);
            self.state.keys.extend(0..nj as u64);
        }
        self.state.keys.extend(
            self.contacts[nj..]
                .iter()
                .map(|c| contact_key(c, nb) + nj as u64),
        );
        self.contacts.len()
    }

    /// Step 2: free velocities, Jacobian blocks, `N` and `r` for the current contacts.
    /// Errors: [`GranularError::Problem`] when the state is not finite.
    pub fn assemble(&mut self) -> Result<()> {
        let p = &self.world.params;
        self.vfree.clear();
        for b in &self.world.bodies {
            self.vfree.push(if b.fixed {
                (Vector3::zeros(), Vector3::zeros())
            } else {
                free_velocity(b, p.h, &p.gravity)
            });
        }
        self.asm
            .jacobian(&self.world.bodies, &self.contacts, &self.vfree);
        let bs = p.block_size();
        let nb = self.world.bodies.len();
        // reuse the storage of the previous step's N and r
        let mut recycle = None;
        match self.n_mat.take() {
            Some(Assembled::Csc(m)) => recycle = Some(m),
            Some(Assembled::Block(b)) => self.spare_block = Some(b),
            _ => {}
        }
        if let Some(inst) = self.state.instance.take() {
            let r = match inst.into_block_and_r() {
                Ok((b, r)) => {
                    self.spare_block = Some(b);
                    r
                }
                Err(inst) if inst.operator_kind() == OperatorKind::Csc => {
                    let (m, r) = inst.into_matrix_and_r();
                    recycle = recycle.or(Some(m));
                    r
                }
                Err(_) => Vec::new(),
            };
            if r.capacity() > self.r.capacity() {
                self.r = r;
            }
        }
        let kind = match self.operator {
            Some(k) => k,
            None if self.asm.delassus_nnz(nb, bs) >= BLOCK_MIN_NNZ => OperatorKind::Block,
            None => OperatorKind::Csc,
        };
        self.n_mat = Some(match kind {
            OperatorKind::Csc => Assembled::Csc(self.asm.delassus(nb, bs, recycle)?),
            OperatorKind::Block => {
                Assembled::Block(self.asm.delassus_blocks(nb, bs, self.spare_block.take())?)
            }
            OperatorKind::MatrixFree => {
                let (d, m) = movable_jacobian(&self.world.bodies, &self.contacts, bs)?;
                Assembled::Factors(d, m)
            }
        });
        self.asm.rhs(&self.contacts, p.h, bs, &mut self.r);
        // the joints' stabilisation term (their pseudo-contacts have gap 0)
        let bodies = &self.world.bodies;
        let biases = self
            .joints
            .iter()
            .map(|j| j.bias(bodies, p.h))
            .chain(self.hinges.iter().flat_map(|hinge| hinge.bias(bodies, p.h)));
        for (k, bias) in biases.enumerate() {
            for (ri, bi) in self.r[3 * k..3 * k + 3].iter_mut().zip(bias) {
                *ri += bi;
            }
        }
        // Newton's impact law on the impacting normal rows (only with e > 0: the default
        // scheme stays bit-identical)
        self.impacts = if p.restitution > 0.0 {
            self.asm.restitution(
                &self.world.bodies,
                bs,
                p.restitution,
                p.restitution_threshold,
                &mut self.r,
            )
        } else {
            0
        };
        Ok(())
    }

    /// Stored entries of the assembled `N` (both triangles): that of the CSC or block
    /// storage, or for the matrix-free operator that `N` would have (never formed).
    fn assembled_nnz(&mut self) -> usize {
        let bs = self.world.params.block_size();
        let nb = self.world.bodies.len();
        match &self.n_mat {
            Some(Assembled::Csc(m)) => m.nnz(),
            Some(Assembled::Block(b)) => b.full_nnz(),
            Some(Assembled::Factors(..)) => self.asm.delassus_nnz(nb, bs),
            None => 0,
        }
    }

    /// Step 3 (first half): the validated instance of the assembled problem, named
    /// `{label}_step{step:04}__{ccp|lcp}`, with provenance (scene parameters, seed, step,
    /// time, bodies, contacts, envelope). `None` when there are no contacts.
    fn build_problem(&mut self, step: u64) -> Result<()> {
        let Some(n_mat) = self.n_mat.take() else {
            self.state.instance = None;
            return Ok(());
        };
        if self.contacts.is_empty() {
            self.state.instance = None;
            return Ok(());
        }
        let p = &self.world.params;
        let nj = self.joint_blocks();
        let (cls, constraints, derivation) = if p.frictionless {
            ("lcp", ConstraintSet::NonNegative, "frictionless-lcp")
        } else {
            // the joints' blocks first, free, mu 0 ([`crate::joints`])
            let mut mu = vec![p.mu; self.contacts.len()];
            mu[..nj].iter_mut().for_each(|m| *m = 0.0);
            (
                "ccp",
                ConstraintSet::coulomb_jointed(mu, 3, nj),
                "ccp-relaxation",
            )
        };
        let mut parameters = self.parameters.clone();
        let nb = self.world.bodies.len();
        let movable = self.world.bodies.iter().filter(|b| !b.fixed).count();
        let kv = [
            ("time_s", format!("{}", (step - 1) as f64 * p.h)),
            ("h", format!("{}", p.h)),
            ("mu", format!("{}", p.mu)),
            (
                "gravity",
                format!("{} {} {}", p.gravity.x, p.gravity.y, p.gravity.z),
            ),
            ("bodies", nb.to_string()),
            ("movable_bodies", movable.to_string()),
            ("planes", self.world.planes.len().to_string()),
            ("contacts", (self.contacts.len() - nj).to_string()),
            ("envelope", format!("{}", self.envelope)),
            ("max_penetration", format!("{}", self.max_penetration())),
            ("kinetic_energy", format!("{}", self.kinetic_energy())),
            (
                "sign_convention",
                "g = N gamma + r = b + D^T v(t+h): contact velocity of B relative to A, \
                 normal first, positive when separating; gamma_n >= 0 pushes A and B apart"
                    .to_string(),
            ),
        ];
        for (k, v) in kv {
            parameters.insert(k.to_string(), v);
        }
        if nj > 0 {
            // recorded only with joints: the other instances keep their provenance
            parameters.insert("joints".into(), nj.to_string());
            parameters.insert(
                "joint_rows".into(),
                format!(
                    "ball joints: the first {nj} blocks, relative anchor velocity in (e_x, e_y, \
                     e_z) = 0, r = beta (p_b - p_a) / h + D^T v_free, beta = {}",
                    crate::joints::JOINT_STABILISATION
                ),
            );
        }
        if !self.hinges.is_empty() {
            // recorded only with hinges: the ball-jointed instances keep their provenance
            let (nh, nball) = (self.hinges.len(), self.joints.len());
            parameters.insert("hinges".into(), nh.to_string());
            parameters.insert(
                "hinge_rows".into(),
                format!(
                    "{nh} hinges: blocks {nball}..{nj}, two per hinge, ball joints at the \
                     bearings c -+ l a; N is singular along (a_w, -a_w) on each hinge's two \
                     blocks (a_w the unit vector between the bearings); the bearings' axial \
                     bias components are replaced by their mean (equal but for rounding)"
                ),
            );
        }
        if p.restitution > 0.0 {
            // recorded only with restitution on: the default instances keep their provenance
            let kv = [
                ("restitution", format!("{}", p.restitution)),
                (
                    "restitution_threshold",
                    format!("{}", p.restitution_threshold),
                ),
                ("impacts", self.impacts.to_string()),
                (
                    "impact_law",
                    "Newton (Moreau): impacting normal rows r_n = e v_n(t) + D_n^T v_free \
                     (gap term dropped), others r_n = Phi / h + D_n^T v_free"
                        .to_string(),
                ),
            ];
            for (k, v) in kv {
                parameters.insert(k.to_string(), v);
            }
        }
        if p.rolling_friction > 0.0 {
            parameters.insert("rolling_friction".into(), format!("{}", p.rolling_friction));
            parameters.insert(
                "rolling_model".into(),
                "constant-torque rolling resistance (Iwashita & Oda 1998), clipped at rest, \
                 applied after the solve: not part of this problem"
                    .into(),
            );
        }
        if let Some(c) = &p.compliance {
            parameters.insert("compliance".into(), c.describe());
        }
        let prov = Provenance {
            source: format!("cpbench granular generator: {}", self.label),
            format: "granular".into(),
            derivation: derivation.into(),
            parameters,
            seed: self.seed,
            step: Some(step),
            symmetrized_from: None,
        };
        let r = std::mem::take(&mut self.r);
        let name = format!("{}_step{step:04}__{cls}", self.label);
        let inst = match n_mat {
            Assembled::Csc(m) => {
                Instance::new(name, m, r, constraints, prov, ValidationOptions::default())?
            }
            Assembled::Block(b) => Instance::on_operator(name, b, r, constraints, prov)?,
            Assembled::Factors(d, m) => Instance::on_operator(
                name,
                MatrixFree::with_diagonal_mass(d, &m)?,
                r,
                constraints,
                prov,
            )?,
        };
        self.state.instance = Some(match p.compliance {
            Some(c) => self.compliant(inst, c)?,
            None => inst,
        });
        Ok(())
    }

    /// The compliant problem of the rigid step problem `inst` ([`crate::compliance`]): `R` and
    /// `r~` per contact from its diagonal block, gap and (MuJoCo) start velocity.
    fn compliant(&mut self, mut inst: Instance, c: crate::ContactCompliance) -> Result<Instance> {
        let bs = self.world.params.block_size();
        let h = self.world.params.h;
        let mut v0 = Vec::new();
        if c.needs_start_velocity() {
            self.asm.start_velocities(&self.world.bodies, bs, &mut v0);
        } else {
            v0.resize(inst.n(), 0.0);
        }
        let mut r = inst.r().to_vec();
        let mut rc = vec![0.0; inst.n()];
        for (k, ct) in self.contacts.iter().enumerate() {
            let w = inst.diag_block(k);
            let s = k * bs..(k + 1) * bs;
            c.apply(h, ct.gap, &w, &v0[s.clone()], &mut r[s.clone()], &mut rc[s]);
        }
        inst.replace_r(&r)?;
        Ok(inst.with_compliance(rc)?)
    }

    /// Detect, assemble and build the instance of the *next* step without solving it or
    /// moving anything (for exporting the problem of a given state, e.g. a settled
    /// [`super::Snapshot`]). Returns it, or `None` when there are no contacts.
    pub fn build_instance(&mut self) -> Result<Option<&Instance>> {
        self.detect_checked(self.state.steps_done + 1)?;
        self.assemble()?;
        self.build_problem(self.state.steps_done + 1)?;
        Ok(self.state.instance.as_ref())
    }

    /// [`Simulation::build_instance`] with the figures of a step: contacts, unknowns, stored
    /// entries of `N`, penetration, envelope and the times of detection, assembly and
    /// instance (solve and update 0, no iterations, residual NaN, `converged` false). Neither
    /// the state nor the step counter changes; the instance is [`Simulation::last_instance`].
    /// Errors: those of [`Simulation::build_instance`].
    pub fn build_instance_report(&mut self) -> Result<StepReport> {
        let step = self.state.steps_done + 1;
        let (nc, max_pen, nnz, timings) = self.build_timed(step)?;
        Ok(StepReport {
            step,
            time: self.time(),
            contacts: nc,
            n: self.world.params.block_size() * nc,
            nnz,
            warm_matched: 0,
            max_penetration: max_pen,
            kinetic_energy: self.kinetic_energy(),
            iterations: 0,
            residual: f64::NAN,
            converged: false,
            solver_time: None,
            envelope: self.envelope,
            timings,
        })
    }

    /// [`Simulation::detect`], then [`GranularError::Geometry`] when the narrow phase could
    /// not decide a pair ([`BroadPhase::failure`]).
    fn detect_checked(&mut self, step: u64) -> Result<usize> {
        let nc = self.detect();
        match self.broad.failure() {
            None => Ok(nc),
            Some((a, b, e)) => Err(GranularError::Geometry {
                step,
                a,
                b,
                message: e.to_string(),
            }),
        }
    }

    /// One time step with `solver` in the loop (see the module documentation and
    /// [`ContactModel::advance`]).
    ///
    /// Errors: [`GranularError::Solver`] when the solver fails, [`GranularError::SolutionSize`]
    /// when it returns a vector of the wrong length, [`GranularError::NonFinite`] when the new
    /// state is not finite, [`GranularError::Problem`] if the instance cannot be built.
    pub fn step(&mut self, solver: &mut dyn ContactSolver) -> Result<StepReport> {
        self.advance(solver)
    }

    /// The contact Jacobian `D` (`6 nb x bs nc`, unscaled: translational rows dimensionless,
    /// rotational rows in m) of the current contacts,
    /// built directly from the contact frames (an independent path from the scaled blocks
    /// used by the assembly; for checks and for exporting global formulations).
    pub fn jacobian(&self) -> Result<CscMatrix> {
        let bs = self.world.params.block_size();
        let mut t = Vec::new();
        for (c, ct) in self.contacts.iter().enumerate() {
            let dirs = [ct.n, ct.u, ct.w];
            let mut push = |x: usize, sign: f64| {
                let b = &self.world.bodies[x];
                let r = ct.point - b.pos;
                for (k, d) in dirs.iter().enumerate().take(bs) {
                    let rot = if b.rotates {
                        b.rot.inverse_transform_vector(&r.cross(d))
                    } else {
                        Vector3::zeros()
                    };
                    for i in 0..3 {
                        t.push((6 * x + i, bs * c + k, sign * d[i]));
                        t.push((6 * x + 3 + i, bs * c + k, sign * rot[i]));
                    }
                }
            };
            push(ct.a, -1.0);
            if let Partner::Body(j) = ct.b {
                if !self.world.bodies[j].fixed {
                    push(j, 1.0);
                }
            }
        }
        Ok(CscMatrix::from_triplets(
            6 * self.world.bodies.len(),
            bs * self.contacts.len(),
            &t,
        )?)
    }

    /// Diagonal of `M^-1` (length `6 nb`: `1/m` three times, then `1/J1, 1/J2, 1/J3`); zero
    /// for fixed bodies, and in the rotational entries of bodies without rotation.
    pub fn mass_inverse_diagonal(&self) -> Vec<f64> {
        let mut d = Vec::with_capacity(6 * self.world.bodies.len());
        for b in &self.world.bodies {
            if b.fixed {
                d.extend_from_slice(&[0.0; 6]);
            } else {
                let im = 1.0 / b.mass;
                let ij = b.inv_inertia();
                d.extend_from_slice(&[im, im, im, ij.x, ij.y, ij.z]);
            }
        }
        d
    }

    /// Generalised velocities of all bodies (length `6 nb`).
    pub fn velocities(&self) -> Vec<f64> {
        self.world.bodies.iter().flat_map(|b| b.v()).collect()
    }
}

/// The 3-D frame `(n, u, w)`.
impl ContactFrame for Contact {
    type Vector = Vector3<f64>;

    fn impulse(&self, g: &[f64]) -> Vector3<f64> {
        let mut f = g[0] * self.n;
        if g.len() == 3 {
            f += g[1] * self.u + g[2] * self.w;
        }
        f
    }

    fn project(&self, f: &Vector3<f64>, out: &mut [f64]) {
        for (o, d) in out.iter_mut().zip([self.n, self.u, self.w]) {
            *o = f.dot(&d);
        }
    }
}

/// The 3-D stepper's phases (spheres and ellipsoids, frames `(n, u, w)`).
impl ContactModel for Simulation {
    type Contact = Contact;

    fn state(&self) -> &StepState<Vector3<f64>> {
        &self.state
    }

    fn contacts_and_state(&mut self) -> (&[Contact], &mut StepState<Vector3<f64>>) {
        (&self.contacts, &mut self.state)
    }

    fn block_size(&self) -> usize {
        self.world.params.block_size()
    }

    fn h(&self) -> f64 {
        self.world.params.h
    }

    fn detect_step(&mut self, step: u64) -> Result<usize> {
        self.detect_checked(step)
    }

    fn max_penetration(&self) -> f64 {
        Simulation::max_penetration(self)
    }

    fn assemble(&mut self) -> Result<()> {
        Simulation::assemble(self)
    }

    fn make_instance(&mut self, step: u64) -> Result<usize> {
        let nnz = self.assembled_nnz();
        self.build_problem(step)?;
        Ok(nnz)
    }

    /// `v(t+h) = M^-1 (k + D gamma)`, `x += h v`, the quaternion update, then the rolling
    /// resistance.
    fn update(&mut self, step: u64) -> Result<()> {
        let bs = self.world.params.block_size();
        self.asm
            .update_velocities(&mut self.world.bodies, &self.vfree, &self.state.gamma, bs);
        let h = self.world.params.h;
        for (i, b) in self.world.bodies.iter_mut().enumerate() {
            if b.fixed {
                continue;
            }
            b.advance_position(h);
            if !(b.pos.iter().chain(b.vel.iter()).chain(b.omega.iter())).all(|x| x.is_finite()) {
                return Err(GranularError::NonFinite { body: i, step });
            }
        }
        // rolling resistance: a torque impulse on v(t+h) after the positions moved, so the
        // next step's contact problem (its free velocity) sees it and keeps the contacts
        if self.world.params.rolling_friction > 0.0 {
            // the contacts only (after the joints' blocks)
            let nj = self.joint_blocks();
            rolling_resistance(
                &mut self.world.bodies,
                &self.contacts[nj..],
                &self.state.gamma[bs * nj..],
                bs,
                self.world.params.rolling_friction,
            );
        }
        Ok(())
    }

    fn kinetic_energy(&self) -> f64 {
        Simulation::kinetic_energy(self)
    }

    fn envelope(&self) -> f64 {
        self.envelope
    }

    /// `1 + i` for the joints' pseudo-contacts (the first [`Simulation::joint_blocks`]), 0
    /// after.
    fn joint_feature(&self, i: usize) -> u32 {
        if i < self.joint_blocks() {
            1 + i as u32
        } else {
            0
        }
    }
}

/// The rolling-resistance impulses of [`SimParams::rolling_friction`], contact after contact
/// in contact order (deterministic): for contact `c` with `gamma_n > 0`, `w` the rolling part of
/// `omega_A - omega_B` (world frame, perpendicular to `n`) and `u = w / |w|`, the torque
/// impulse `-t u` on `A` and `+t u` on a movable `B` with
/// `t = min(mu_r l gamma_n, |w| / (u^T J_A^-1 u + u^T J_B^-1 u))` (world inverse inertia):
/// the second bound brings the rolling velocity exactly to zero, so the impulse never
/// reverses it and only removes kinetic energy. O(contacts), no allocation.
fn rolling_resistance(
    bodies: &mut [Body],
    contacts: &[Contact],
    gamma: &[f64],
    bs: usize,
    mu_r: f64,
) {
    let world_inv_j = |b: &Body, u: &Vector3<f64>| -> f64 {
        if b.fixed || !b.rotates {
            return 0.0;
        }
        let ub = b.rot.inverse_transform_vector(u);
        ub.component_mul(&ub).dot(&b.inv_inertia())
    };
    for (c, ct) in contacts.iter().enumerate() {
        let gn = gamma[bs * c];
        if gn <= 0.0 {
            continue;
        }
        let a = &bodies[ct.a];
        let la = (ct.point - a.pos).norm();
        let mut w = a.omega_world();
        let (lever, jb) = match ct.b {
            Partner::Body(j) => {
                let b = &bodies[j];
                w -= b.omega_world();
                let lb = (ct.point - b.pos).norm();
                (la * lb / (la + lb), Some(j))
            }
            Partner::Plane(_) => (la, None),
        };
        let w = w - w.dot(&ct.n) * ct.n;
        let wn = w.norm();
        if wn == 0.0 || !wn.is_finite() {
            continue;
        }
        let u = w / wn;
        let k = world_inv_j(&bodies[ct.a], &u) + jb.map_or(0.0, |j| world_inv_j(&bodies[j], &u));
        if k <= 0.0 {
            continue;
        }
        let t = (mu_r * lever * gn).min(wn / k);
        let mut kick = |x: usize, sign: f64| {
            let b = &mut bodies[x];
            if b.fixed || !b.rotates {
                return;
            }
            let tb = b.rot.inverse_transform_vector(&(sign * t * u));
            let dj = tb.component_mul(&b.inv_inertia());
            b.omega += dj;
        };
        kick(ct.a, -1.0);
        if let Some(j) = jb {
            kick(j, 1.0);
        }
    }
}

/// Check the bodies of a simulation (the complementarity stepper's and the penalty model's):
/// fewer than `2^31`, positive radius, mass and principal inertia, finite state. Errors:
/// [`GranularError::InvalidParameter`] naming the first offending field.
pub(crate) fn check_bodies(bodies: &[Body]) -> Result<()> {
    if bodies.len() >= (1 << 31) {
        return Err(invalid("bodies", bodies.len(), "must be < 2^31"));
    }
    for b in bodies {
        check_positive("radius", b.radius)?;
        check_positive("mass", b.mass)?;
        for &j in b.inertia.iter() {
            check_positive("inertia", j)?;
        }
        if let crate::Shape::Ellipsoid { semi_axes } = b.shape {
            for &x in semi_axes.iter() {
                check_positive("semi_axes", x)?;
            }
            // the broad phase finds pairs by bounding spheres of this radius
            if b.radius < semi_axes.max() {
                return Err(invalid(
                    "radius",
                    b.radius,
                    "an ellipsoid's radius must be at least its largest semi-axis",
                ));
            }
        }
        if !b.q().iter().chain(&b.v()).all(|x| x.is_finite()) {
            return Err(invalid(
                "body state",
                format!("{:?}", b.q()),
                "must be finite",
            ));
        }
    }
    Ok(())
}
