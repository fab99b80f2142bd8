//! The contact-step core shared by the 3-D stepper ([`crate::Simulation`]: spheres and
//! ellipsoids) and the planar one ([`crate::planar::PlanarSimulation`]: discs and bonds).
//!
//! Both advance a state by the same sequence (docs/formulation.md section 1):
//!
//! 1. detect the contacts at `q(t)` ([`ContactModel::detect_step`]);
//! 2. assemble `N` and `r` ([`ContactModel::assemble`]) and build the validated [`Instance`]
//!    ([`ContactModel::make_instance`]);
//! 3. solve it with the [`ContactSolver`] from the warm start ([`StepState::solve`]: the
//!    previous step's impulse of the same contact, by identity key, kept as a world vector and
//!    projected on the new frame; the returned length checked);
//! 4. update velocities and positions ([`ContactModel::update`]), keep the world impulses for
//!    the next warm start ([`StepState::remember`]);
//! 5. report the step ([`StepReport`], with the time of every phase).
//!
//! A model says how its contacts are found, assembled and applied (dimension 2 or 3, spheres,
//! ellipsoids or discs, bonds); [`ContactModel::advance`] owns the sequence, the warm start,
//! the solve with its size check, the timings and the report. The penalty model
//! ([`crate::penalty`]) has no contact problem (no instance, solve or warm start): it shares
//! the detection ([`crate::broadphase::BroadPhase`]) and the bodies, not this sequence.

use crate::{check_non_negative, check_positive, invalid, ContactSolver, GranularError, Result};
use cpbench_problems::instance::Instance;
use std::time::{Duration, Instant};

/// The checks of every stepper's parameters: time step `h > 0`, friction `mu >= 0`, envelope
/// `>= 0` (all finite). Errors: [`GranularError::InvalidParameter`] naming the first.
pub(crate) fn check_step(h: f64, mu: f64, envelope: f64) -> Result<()> {
    check_positive("h", h)?;
    check_non_negative("mu", mu)?;
    check_non_negative("envelope", envelope)
}

/// `Ok(())` when every component of the gravity `g` (shown as `shown` in the error) is
/// finite, else [`GranularError::InvalidParameter`].
pub(crate) fn check_gravity(g: &[f64], shown: &impl std::fmt::Debug) -> Result<()> {
    if g.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(invalid("gravity", format!("{shown:?}"), "must be finite"))
    }
}

/// Potential energy of the gravity `g`, `-sum m g . x` over the movable ones of `bodies`
/// (`(mass, position, fixed)` each; J, zero at the origin): in 3-D and in the plane.
pub(crate) fn gravity_energy<'a, const D: usize>(
    g: &nalgebra::SVector<f64, D>,
    bodies: impl Iterator<Item = (f64, &'a nalgebra::SVector<f64, D>, bool)>,
) -> f64 {
    bodies
        .filter(|&(_, _, fixed)| !fixed)
        .map(|(mass, pos, _)| -mass * g.dot(pos))
        .sum()
}

/// Unknowns per contact: 1 without friction (the normal), else the dimension `dim` (normal
/// and tangents).
pub(crate) fn block_size(frictionless: bool, dim: usize) -> usize {
    if frictionless {
        1
    } else {
        dim
    }
}

/// Wall-clock time of the phases of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepTimings {
    /// Broad and narrow phase (and, in the plane, the bond forces).
    pub detection: Duration,
    /// Jacobian blocks, `N` and `r`.
    pub assembly: Duration,
    /// Building the validated [`Instance`] (symmetry check and content hash).
    pub instance: Duration,
    /// The contact solver.
    pub solve: Duration,
    /// Velocity and position update.
    pub update: Duration,
}

impl StepTimings {
    /// The phases in order, in seconds: detection, assembly, instance, solve, update.
    pub fn seconds(&self) -> [f64; 5] {
        [
            self.detection,
            self.assembly,
            self.instance,
            self.solve,
            self.update,
        ]
        .map(|d| d.as_secs_f64())
    }

    /// Mean phase times (s) of `steps` ([`Self::seconds`] averaged; zeros when empty).
    pub fn mean<'a>(steps: impl IntoIterator<Item = &'a StepTimings>) -> [f64; 5] {
        let mut t = [0.0; 5];
        let mut n = 0usize;
        for s in steps {
            for (a, d) in t.iter_mut().zip(s.seconds()) {
                *a += d;
            }
            n += 1;
        }
        let n = n.max(1) as f64;
        t.map(|v| v / n)
    }
}

/// Figures of one step, in 3-D and in the plane.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    /// Step number (1-based): the problem was assembled at `t = (step - 1) h`.
    pub step: u64,
    /// Time after the step (s), `step h`.
    pub time: f64,
    /// Contacts in the problem.
    pub contacts: usize,
    /// Unknowns (`bs nc`: `3 nc` or `2 nc` with friction, `nc` without).
    pub n: usize,
    /// Stored entries of `N`.
    pub nnz: usize,
    /// Contacts warm-started from the previous step.
    pub warm_matched: usize,
    /// Largest overlap `max(0, -Phi)` at the start of the step (m).
    pub max_penetration: f64,
    /// Kinetic energy after the step (J).
    pub kinetic_energy: f64,
    /// Solver iterations (0 without contacts).
    pub iterations: u64,
    /// Solver's final residual (NaN without contacts).
    pub residual: f64,
    /// Whether the solver reached its tolerance (true without contacts).
    pub converged: bool,
    /// The solver's own time (s) as its caller measured it
    /// ([`crate::ContactSolution::solver_time`]): `Some(0.0)` without contacts, `None` when
    /// the solver did not say ([`StepTimings::solve`] is then the only measure).
    pub solver_time: Option<f64>,
    /// Effective envelope used (m).
    pub envelope: f64,
    /// Phase timings.
    pub timings: StepTimings,
}

/// A contact's frame: its directions in the world, normal first, and the conversion of an
/// impulse between contact coordinates and a world vector (for the warm start).
pub trait ContactFrame {
    /// The world vector (`Vector3` or `Vector2`).
    type Vector: Copy;

    /// The world impulse of the contact coordinates `g` (`bs` of them, normal first).
    fn impulse(&self, g: &[f64]) -> Self::Vector;

    /// The contact coordinates of the world impulse `f` into `out` (`bs` of them).
    fn project(&self, f: &Self::Vector, out: &mut [f64]);
}

/// What the solve of one step gave.
#[derive(Clone, Copy, Debug)]
pub struct Solved {
    /// Solver iterations (0 without contacts).
    pub iterations: u64,
    /// Final residual (NaN without contacts).
    pub residual: f64,
    /// Whether the solver converged (true without contacts).
    pub converged: bool,
    /// The solver's own time (`Some(0.0)` without contacts).
    pub solver_time: Option<f64>,
    /// Contacts warm-started (0 without contacts).
    pub warm_matched: usize,
}

/// The state every stepper keeps between steps: the step counter, the instance of the last
/// step, its impulses, and the warm start by contact identity. All buffers keep their
/// capacity across steps.
#[derive(Clone, Debug)]
pub struct StepState<V> {
    /// Steps completed.
    pub steps_done: u64,
    /// The instance of the last step (`None` without contacts).
    pub instance: Option<Instance>,
    /// The impulses of the last step, contact-interleaved.
    pub gamma: Vec<f64>,
    /// Identity keys of the current contacts, sorted (set by the detection).
    pub keys: Vec<u64>,
    warm_keys: Vec<u64>,
    warm_imp: Vec<V>,
    warm: Vec<f64>,
    warm_matched: usize,
}

impl<V> Default for StepState<V> {
    fn default() -> Self {
        Self {
            steps_done: 0,
            instance: None,
            gamma: Vec::new(),
            keys: Vec::new(),
            warm_keys: Vec::new(),
            warm_imp: Vec::new(),
            warm: Vec::new(),
            warm_matched: 0,
        }
    }
}

impl<V: Copy> StepState<V> {
    /// Warm start for `contacts` (keyed by [`Self::keys`]): the previous step's world impulse
    /// of the same key projected on the new frame; zero for new contacts. Returns whether any
    /// contact was matched.
    fn warm_start<C: ContactFrame<Vector = V>>(&mut self, contacts: &[C], bs: usize) -> bool {
        self.warm.clear();
        self.warm.resize(bs * contacts.len(), 0.0);
        self.warm_matched = 0;
        let (mut i, mut j) = (0, 0);
        while i < self.keys.len() && j < self.warm_keys.len() {
            match self.keys[i].cmp(&self.warm_keys[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    contacts[i].project(&self.warm_imp[j], &mut self.warm[bs * i..bs * i + bs]);
                    self.warm_matched += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        self.warm_matched > 0
    }

    /// Solve the instance of step `step` (`contacts` of block size `bs`) with `solver` from
    /// the warm start, keeping the impulses in [`Self::gamma`]; without contacts nothing is
    /// solved (`gamma` empty). Errors: [`GranularError::Solver`] when the solver fails,
    /// [`GranularError::SolutionSize`] when it returns a vector of the wrong length.
    pub fn solve<C: ContactFrame<Vector = V>>(
        &mut self,
        solver: &mut dyn ContactSolver,
        contacts: &[C],
        bs: usize,
        step: u64,
    ) -> Result<Solved> {
        let nc = contacts.len();
        if nc == 0 {
            self.gamma.clear();
            return Ok(Solved {
                iterations: 0,
                residual: f64::NAN,
                converged: true,
                solver_time: Some(0.0),
                warm_matched: 0,
            });
        }
        let has_warm = self.warm_start(contacts, bs);
        let warm = has_warm.then_some(&self.warm[..]);
        let inst = self.instance.as_ref().expect("instance built for nc > 0");
        let sol = solver
            .solve(inst, warm)
            .map_err(|message| GranularError::Solver { step, message })?;
        if sol.gamma.len() != bs * nc {
            return Err(GranularError::SolutionSize {
                step,
                expected: bs * nc,
                found: sol.gamma.len(),
            });
        }
        self.gamma = sol.gamma;
        Ok(Solved {
            iterations: sol.iterations,
            residual: sol.residual,
            converged: sol.converged,
            solver_time: sol.solver_time,
            warm_matched: self.warm_matched,
        })
    }

    /// Keep the world impulses of `contacts` (from [`Self::gamma`]) and their keys for the
    /// next step's warm start.
    pub fn remember<C: ContactFrame<Vector = V>>(&mut self, contacts: &[C], bs: usize) {
        self.warm_keys.clear();
        self.warm_keys.extend_from_slice(&self.keys);
        self.warm_imp.clear();
        for (c, ct) in contacts.iter().enumerate() {
            self.warm_imp
                .push(ct.impulse(&self.gamma[bs * c..bs * c + bs]));
        }
    }
}

/// The accessors of every stepper, on its fields `label` (`String`), `parameters`
/// (`BTreeMap<String, String>`), `envelope` (`f64`) and `state` (a [`StepState`]) and its
/// [`ContactModel::h`]: written once here, expanded in the `impl` of [`crate::Simulation`] and
/// of [`crate::planar::PlanarSimulation`].
macro_rules! step_accessors {
    () => {
        /// The label used in instance names (e.g. `fill-10`, `disc-hopper-200`).
        pub fn label(&self) -> &str {
            &self.label
        }

        /// Scene parameters recorded in provenance.
        pub fn parameters(&self) -> &std::collections::BTreeMap<String, String> {
            &self.parameters
        }

        /// Steps completed.
        pub fn steps_done(&self) -> u64 {
            self.state.steps_done
        }

        /// Simulated time (s): `steps_done h`.
        pub fn time(&self) -> f64 {
            self.state.steps_done as f64 * $crate::contact_step::ContactModel::h(self)
        }

        /// Effective envelope of the last detection (m).
        pub fn envelope(&self) -> f64 {
            self.envelope
        }

        /// The instance of the last step (or of the last `build_instance`); `None` when it
        /// had no contacts.
        pub fn last_instance(&self) -> Option<&cpbench_problems::instance::Instance> {
            self.state.instance.as_ref()
        }

        /// Impulses `gamma` (N s) of the last step, contact-interleaved, normal first.
        pub fn last_impulses(&self) -> &[f64] {
            &self.state.gamma
        }

        /// The frames of the last step's contacts, in the order of its instance's contacts:
        /// for each contact the world direction of each of its coordinates (normal first,
        /// then the tangents; the block size of the instance's constraint set), so that an
        /// answer maps to world impulses ([`crate::contact::ContactFrames`]). Empty without
        /// contacts.
        pub fn last_contact_frames(&self) -> $crate::contact::ContactFrames {
            use $crate::contact_step::ContactFrame as _;
            let bs = self
                .state
                .instance
                .as_ref()
                .map_or(0, |i| i.constraints().block_size());
            let mut frames = $crate::contact::ContactFrames {
                block_size: bs,
                dim: 0,
                directions: Vec::new(),
            };
            let mut unit = vec![0.0; bs];
            for c in &self.contacts {
                for k in 0..bs {
                    unit.iter_mut().for_each(|x| *x = 0.0);
                    unit[k] = 1.0;
                    let v = c.impulse(&unit);
                    frames.dim = v.len();
                    frames.directions.extend_from_slice(v.as_slice());
                }
            }
            frames
        }

        /// The identities of the last step's contacts, in the order of its instance's
        /// contacts ([`Self::last_instance`]): movable body (disc) `a`, the partner body,
        /// plane or wall, feature 0 (one-point contacts); a ball joint's pseudo-contact
        /// ([`crate::joints`]) has feature `1 + k`, `k` the joint's index
        /// ([`ContactModel::joint_feature`]), so that it never shares the identity of a
        /// contact of the same pair.
        pub fn last_contact_ids(&self) -> Vec<$crate::contact::ContactId> {
            self.contacts
                .iter()
                .enumerate()
                .map(|(i, c)| $crate::contact::ContactId {
                    a: c.a,
                    b: c.b.into(),
                    feature: $crate::contact_step::ContactModel::joint_feature(self, i),
                })
                .collect()
        }
    };
}
pub(crate) use step_accessors;

/// A contact model: what a stepper does in each phase of [`ContactModel::advance`]. Its
/// contacts are sorted by the identity keys it writes into [`StepState::keys`].
pub trait ContactModel {
    /// The contact type (with its frame).
    type Contact: ContactFrame;

    /// The state shared with the core.
    fn state(&self) -> &StepState<<Self::Contact as ContactFrame>::Vector>;

    /// The contacts of the last detection and the state, mutably (for the solve).
    fn contacts_and_state(
        &mut self,
    ) -> (
        &[Self::Contact],
        &mut StepState<<Self::Contact as ContactFrame>::Vector>,
    );

    /// Unknowns per contact (1 frictionless, 2 or 3 with friction).
    fn block_size(&self) -> usize;

    /// The time step `h` (s).
    fn h(&self) -> f64;

    /// Find the contacts at the current positions for step `step` (writing their keys);
    /// returns their number. Errors: a pair the narrow phase could not decide.
    fn detect_step(&mut self, step: u64) -> Result<usize>;

    /// Largest overlap among the current contacts (m).
    fn max_penetration(&self) -> f64;

    /// Assemble `N` and `r` of the current contacts.
    fn assemble(&mut self) -> Result<()>;

    /// Build the instance of step `step` into [`StepState::instance`] (`None` without
    /// contacts); returns the stored entries of `N`.
    fn make_instance(&mut self, step: u64) -> Result<usize>;

    /// Apply the impulses [`StepState::gamma`] of step `step`: velocities, positions and what
    /// the model does after them. Errors: [`GranularError::NonFinite`].
    fn update(&mut self, step: u64) -> Result<()>;

    /// Kinetic energy (J).
    fn kinetic_energy(&self) -> f64;

    /// Effective envelope of the last detection (m).
    fn envelope(&self) -> f64;

    /// The `feature` of the identity of contact `i` of the last detection
    /// ([`crate::contact::ContactId`]): 0 for a contact; a model with joints placed first
    /// ([`crate::joints`]) gives its joint `k` the feature `1 + k`. Default 0.
    fn joint_feature(&self, i: usize) -> u32 {
        let _ = i;
        0
    }

    /// Detection, assembly and the instance of step `step`, timed: the contacts, the largest
    /// penetration, the stored entries of `N` and the detection, assembly and instance times
    /// (solve and update zero).
    fn build_timed(&mut self, step: u64) -> Result<(usize, f64, usize, StepTimings)> {
        let t0 = Instant::now();
        let nc = self.detect_step(step)?;
        let max_pen = self.max_penetration();
        let t1 = Instant::now();
        self.assemble()?;
        let t2 = Instant::now();
        let nnz = self.make_instance(step)?;
        let t3 = Instant::now();
        let timings = StepTimings {
            detection: t1 - t0,
            assembly: t2 - t1,
            instance: t3 - t2,
            ..Default::default()
        };
        Ok((nc, max_pen, nnz, timings))
    }

    /// One time step with `solver` in the loop: detect, assemble, the instance, the solve
    /// from the warm start, the update, and the report.
    ///
    /// Errors: [`GranularError::Solver`], [`GranularError::SolutionSize`] (see
    /// [`StepState::solve`]), those of the model's phases.
    fn advance(&mut self, solver: &mut dyn ContactSolver) -> Result<StepReport> {
        let step = self.state().steps_done + 1;
        let (nc, max_pen, nnz, built) = self.build_timed(step)?;
        let t3 = Instant::now();
        let bs = self.block_size();
        let (contacts, state) = self.contacts_and_state();
        let solved = state.solve(solver, contacts, bs, step)?;
        let t4 = Instant::now();
        self.update(step)?;
        let (contacts, state) = self.contacts_and_state();
        state.remember(contacts, bs);
        state.steps_done = step;
        let t5 = Instant::now();
        Ok(StepReport {
            step,
            time: step as f64 * self.h(),
            contacts: nc,
            n: bs * nc,
            nnz,
            warm_matched: solved.warm_matched,
            max_penetration: max_pen,
            kinetic_energy: self.kinetic_energy(),
            iterations: solved.iterations,
            residual: solved.residual,
            converged: solved.converged,
            solver_time: solved.solver_time,
            envelope: self.envelope(),
            timings: StepTimings {
                solve: t4 - t3,
                update: t5 - t4,
                ..built
            },
        })
    }
}
