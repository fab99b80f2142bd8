//! Penalty (soft-contact) stepper, for comparison with the complementarity stepper
//! ([`super::Simulation`]) on the same scenes: spring-dashpot contact forces, explicit velocity
//! Verlet, no complementarity problem.
//!
//! **Contact force.** A contact of the narrow phase ([`super::narrow`]) with overlap
//! `delta = -Phi > 0` (m) and approach speed `delta_dot = -n . v_rel` (m/s, `v_rel` the
//! velocity of `B`'s surface relative to `A`'s at the contact point) pushes `A` along `-n` and
//! `B` along `+n` with the normal force (N)
//!
//! ```text
//! linear (Cundall & Strack 1979, Geotechnique 29):  F_n = k delta + c delta_dot,
//!     c = 2 zeta sqrt(k m_eff)
//! Hertz (Hertz 1882; Tsuji, Tanaka & Ishida 1992, Powder Technol. 71):
//!     F_n = k delta^{3/2} + c delta^{1/4} delta_dot,   c = sqrt(5) zeta sqrt(k m_eff)
//! ```
//!
//! with `k` the normal stiffness ([`PenaltyParams::stiffness`], N/m or N/m^{3/2}),
//! `m_eff = m_A m_B / (m_A + m_B)` (`m_A` against a plane or a fixed sphere) and `zeta` the
//! damping ratio, given directly or from a normal coefficient of restitution `e` by
//! `zeta = -ln e / sqrt(pi^2 + ln^2 e)` ([`Damping`]). For the linear law this is exact: the
//! damped oscillator of frequency `w0 = sqrt(k / m_eff)` leaves the contact (`delta = 0`)
//! after `t_c = pi / (w0 sqrt(1 - zeta^2))` with `e = exp(-pi zeta / sqrt(1 - zeta^2))`
//! (damped harmonic oscillator; Schafer, Dippel & Wolf 1996, J. Phys. I France 6). For the
//! Hertz law the coefficient `sqrt(5) zeta` is the one used by DEM codes (LIGGGHTS' `hertz`
//! model: `c = 2 sqrt(5/6) beta sqrt(S_n m_eff)` with `S_n = dF/d delta = 3/2 k delta^{1/2}`
//! and `beta = -zeta`): it makes `e` independent of the impact speed (Tsuji et al. 1992) and
//! close to the given `e` (a fit, not an exact relation: measured within 0.4% for
//! `e = 0.1, 0.5, 0.9`, `tests/it/penalty.rs`). As in both sources, `F_n` is not clamped at zero: the dashpot pulls
//! slightly at the end of a contact (the linear law's `e` is exact only so); the friction
//! bound below uses `max(F_n, 0)`.
//!
//! **Friction.** Regularised (viscous) Coulomb friction: with `v_t` the tangential part of
//! `v_rel`, `A` receives `F_t = min(c_t |v_t|, mu max(F_n, 0)) v_t / |v_t|` and `B` the
//! opposite, `c_t = gamma_t m_eff` ([`PenaltyParams::tangential_rate`] `gamma_t`, 1/s;
//! Poschel & Schwager 2005, "Computational Granular Dynamics": the viscous tangential force
//! with a Coulomb cap). It has no tangential spring, so a heap at rest creeps at
//! a slip speed `mu F_n / c_t` where the cap is reached; torques `r x F` (lever arm from the
//! centre to the contact point) turn the spheres.
//!
//! **Time integration.** Velocity Verlet (Verlet 1967; Swope et al. 1982, J. Chem. Phys. 76):
//! `v(t+h/2) = v(t) + h/2 a(t)`, `x(t+h) = x(t) + h v(t+h/2)` (quaternion as
//! [`Body::advance_position`]), forces at `x(t+h)` with the half-step velocities in the
//! dashpots, `v(t+h) = v(t+h/2) + h/2 a(t+h)`; the same for the body-frame angular velocity
//! with `J^-1 A^T tau` (no gyroscopic term: the spheres' inertia is isotropic). Without
//! damping and friction the energy error is bounded, `O((w0 h)^2)`. The step must resolve the
//! contact: [`PenaltySim::new`] requires `h <= t_c / MIN_STEPS_PER_CONTACT` with
//! `t_c = pi sqrt(m_min / k_lin)` the undamped contact time of the lightest pair (`m_min` half
//! the smallest movable mass) and, for the Hertz law, the stiffness linearised at an overlap
//! of [`HERTZ_REFERENCE_OVERLAP`] of the smallest radius, `k_lin = 3/2 k delta_ref^{1/2}`
//! ([`PenaltyParams::max_step`] gives the bound).
//!
//! **Cost.** Every step detects the overlapping pairs with the crate's cell list
//! ([`BroadPhase`], O(n)) and narrow phase, then accumulates forces in one pass over the
//! contacts: O(n) per step. All buffers (contacts, forces, torques, the broad phase's) are kept
//! across steps; the only allocation after the first step is the broad phase's one short
//! vector of per-chunk slices ([`BroadPhase::detect`]).
//!
//! **Observables** shared with the complementarity stepper: [`pile_height`] (the highest sphere
//! top, `max_i y_i + R_i` over the movable spheres), kinetic energy, [`settling_time`] (the
//! first output time from which the kinetic energy stays below [`settle_threshold`]), and the
//! largest overlap.

use super::bodies::{Body, Plane};
use super::broadphase::BroadPhase;
use super::narrow::{Contact, Partner};
use super::scenes::Scene;
use super::{check_non_negative, check_positive, invalid, GranularError, Result};
use nalgebra::Vector3;

/// A penalty step must be at most this fraction of the contact time: `h <= t_c / 10`.
pub const MIN_STEPS_PER_CONTACT: f64 = 10.0;

/// Overlap, as a fraction of the smallest radius, at which the Hertz stiffness is linearised
/// for the time-step check (`k_lin = 3/2 k (0.05 R_min)^{1/2}`).
pub const HERTZ_REFERENCE_OVERLAP: f64 = 0.05;

/// Columns of the penalty stepper's `trajectory.csv` (one row per output step; see
/// [`PenaltyReport`]).
pub const PENALTY_TRAJECTORY_HEADER: &str =
    "step,time,kinetic_energy,contacts,max_penetration,pile_height,substeps";

/// Normal force law.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactLaw {
    /// Linear spring-dashpot `k delta + c delta_dot` (Cundall & Strack 1979); `k` in N/m.
    Linear,
    /// Hertz spring with Tsuji's dashpot `k delta^{3/2} + c delta^{1/4} delta_dot`
    /// (Hertz 1882; Tsuji et al. 1992); `k` in N/m^{3/2}.
    Hertz,
}

impl ContactLaw {
    /// Parse `linear` or `hertz`. Errors: [`GranularError::InvalidParameter`].
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "linear" => Ok(Self::Linear),
            "hertz" => Ok(Self::Hertz),
            _ => Err(invalid("law", s, "must be linear or hertz")),
        }
    }

    /// The law's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Hertz => "hertz",
        }
    }
}

/// Normal damping of the dashpot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Damping {
    /// Normal coefficient of restitution `e` in `(0, 1]`, mapped to the damping ratio
    /// `zeta = -ln e / sqrt(pi^2 + ln^2 e)` (exact for the linear law).
    Restitution(f64),
    /// Damping ratio `zeta` in `[0, 1)` (0: elastic).
    Ratio(f64),
}

impl Damping {
    /// The damping ratio `zeta` (dimensionless). Errors: `e` outside `(0, 1]` or `zeta`
    /// outside `[0, 1)`.
    pub fn ratio(self) -> Result<f64> {
        match self {
            Self::Restitution(e) => {
                if !(e.is_finite() && e > 0.0 && e <= 1.0) {
                    return Err(invalid("restitution", e, "must be in (0, 1]"));
                }
                let l = e.ln();
                Ok(-l / (std::f64::consts::PI.powi(2) + l * l).sqrt())
            }
            Self::Ratio(z) => {
                if !(z.is_finite() && (0.0..1.0).contains(&z)) {
                    return Err(invalid("damping ratio", z, "must be in [0, 1)"));
                }
                Ok(z)
            }
        }
    }
}

/// Analytic coefficient of restitution of the linear spring-dashpot with damping ratio `zeta`
/// in `[0, 1)`: `e = exp(-pi zeta / sqrt(1 - zeta^2))` (Schafer et al. 1996).
pub fn linear_restitution(zeta: f64) -> f64 {
    (-std::f64::consts::PI * zeta / (1.0 - zeta * zeta).sqrt()).exp()
}

/// Analytic contact duration (s) of the linear spring-dashpot: `pi / (w0 sqrt(1 - zeta^2))`,
/// `w0 = sqrt(k / m_eff)` (`k` N/m, `m_eff` kg; Schafer et al. 1996).
pub fn linear_contact_time(k: f64, m_eff: f64, zeta: f64) -> f64 {
    std::f64::consts::PI / ((k / m_eff).sqrt() * (1.0 - zeta * zeta).sqrt())
}

/// Parameters of the penalty stepper (SI units).
#[derive(Clone, Debug, PartialEq)]
pub struct PenaltyParams {
    /// Normal force law.
    pub law: ContactLaw,
    /// Normal stiffness `k`, `> 0`: N/m ([`ContactLaw::Linear`]) or N/m^{3/2}
    /// ([`ContactLaw::Hertz`]).
    pub stiffness: f64,
    /// Normal damping (restitution or damping ratio).
    pub damping: Damping,
    /// Coulomb friction coefficient `mu >= 0`.
    pub mu: f64,
    /// Tangential damping rate `gamma_t` (1/s, `>= 0`): the viscous tangential coefficient is
    /// `c_t = gamma_t m_eff`; stability needs `gamma_t h <= 0.5` (checked: a rolling sphere's
    /// tangential effective mass is `2/7 m_eff`, so `c_t h / m_t <= 1.75 < 2`).
    pub tangential_rate: f64,
    /// Time step `h` (s), `> 0`, at most [`PenaltyParams::max_step`].
    pub h: f64,
    /// Gravity (m/s^2).
    pub gravity: Vector3<f64>,
}

impl PenaltyParams {
    /// Undamped contact time `t_c = pi sqrt(m_min / k_lin)` (s) of the lightest pair among
    /// `bodies` (see the module documentation); `None` without movable bodies.
    pub fn contact_time(&self, bodies: &[Body]) -> Option<f64> {
        let movable = bodies.iter().filter(|b| !b.fixed);
        let m_min = movable
            .clone()
            .map(|b| b.mass)
            .fold(f64::INFINITY, f64::min);
        let r_min = movable.map(|b| b.radius).fold(f64::INFINITY, f64::min);
        if !m_min.is_finite() {
            return None;
        }
        let k_lin = match self.law {
            ContactLaw::Linear => self.stiffness,
            ContactLaw::Hertz => 1.5 * self.stiffness * (HERTZ_REFERENCE_OVERLAP * r_min).sqrt(),
        };
        Some(std::f64::consts::PI * (0.5 * m_min / k_lin).sqrt())
    }

    /// The largest admissible step `t_c / MIN_STEPS_PER_CONTACT` (s) for `bodies`
    /// ([`PenaltyParams::contact_time`]); infinite without movable bodies.
    pub fn max_step(&self, bodies: &[Body]) -> f64 {
        self.contact_time(bodies)
            .map_or(f64::INFINITY, |t| t / MIN_STEPS_PER_CONTACT)
    }

    /// Check ranges and the step against `bodies`. Errors: [`GranularError::InvalidParameter`]
    /// for a non-positive stiffness or `h`, `mu < 0`, `gamma_t < 0` or `gamma_t h > 0.5`, a
    /// bad damping, non-finite gravity, or `h > max_step` (the step does not resolve the
    /// contact).
    pub fn validate(&self, bodies: &[Body]) -> Result<()> {
        check_positive("stiffness", self.stiffness)?;
        check_positive("h", self.h)?;
        check_non_negative("mu", self.mu)?;
        check_non_negative("tangential_rate", self.tangential_rate)?;
        self.damping.ratio()?;
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return Err(invalid(
                "gravity",
                format!("{:?}", self.gravity),
                "must be finite",
            ));
        }
        if self.tangential_rate * self.h > 0.5 {
            return Err(invalid(
                "tangential_rate",
                format!("{} (h = {})", self.tangential_rate, self.h),
                "tangential_rate * h must be <= 0.5 (explicit stability)",
            ));
        }
        let hmax = self.max_step(bodies);
        if self.h > hmax {
            return Err(invalid(
                "h",
                format!(
                    "{} (contact time {:e} s, needs h <= {hmax:e})",
                    self.h,
                    hmax * 10.0
                ),
                "must resolve the contact: h <= t_c / 10",
            ));
        }
        Ok(())
    }
}

/// Figures of one call of [`PenaltySim::advance`] (one output step of one or more steps).
#[derive(Clone, Debug, PartialEq)]
pub struct PenaltyReport {
    /// Output step number (1-based).
    pub step: u64,
    /// Time after it (s).
    pub time: f64,
    /// Kinetic energy at its end (J).
    pub kinetic_energy: f64,
    /// Overlapping pairs at its end.
    pub contacts: usize,
    /// Largest overlap `max(0, -Phi)` over its steps (m).
    pub max_penetration: f64,
    /// [`pile_height`] at its end (m).
    pub pile_height: f64,
    /// Verlet steps it took.
    pub substeps: u64,
}

impl PenaltyReport {
    /// One line of `trajectory.csv` ([`PENALTY_TRAJECTORY_HEADER`]), without the newline.
    pub fn csv_row(&self) -> String {
        format!(
            "{},{},{:e},{},{:e},{:e},{}",
            self.step,
            self.time,
            self.kinetic_energy,
            self.contacts,
            self.max_penetration,
            self.pile_height,
            self.substeps
        )
    }
}

/// A running penalty simulation: bodies, planes, parameters and the reused buffers.
#[derive(Clone, Debug)]
pub struct PenaltySim {
    bodies: Vec<Body>,
    planes: Vec<Plane>,
    params: PenaltyParams,
    zeta: f64,
    steps_done: u64,
    outputs_done: u64,
    time: f64,
    broad: BroadPhase,
    contacts: Vec<Contact>,
    force: Vec<Vector3<f64>>,
    torque: Vec<Vector3<f64>>,
    forces_current: bool,
    max_penetration: f64,
}

impl PenaltySim {
    /// A simulation of `bodies` and `planes` with `params`. Errors:
    /// [`GranularError::InvalidParameter`] for invalid parameters ([`PenaltyParams::validate`],
    /// including a step that does not resolve the contact), a body with a non-positive radius,
    /// mass or inertia or a non-finite state, more than `2^31` bodies, or a body that is not a
    /// sphere (`shape`: the spring-dashpot laws here are sphere contacts).
    pub fn new(bodies: Vec<Body>, planes: Vec<Plane>, params: PenaltyParams) -> Result<Self> {
        crate::stepper::check_bodies(&bodies)?;
        if let Some(b) = bodies.iter().find(|b| !b.is_sphere()) {
            return Err(crate::invalid(
                "shape",
                format!("{:?}", b.shape),
                "the penalty stepper has sphere contacts only (ellipsoid scenes run with --model ncd)",
            ));
        }
        params.validate(&bodies)?;
        let nb = bodies.len();
        Ok(Self {
            zeta: params.damping.ratio()?,
            bodies,
            planes,
            params,
            steps_done: 0,
            outputs_done: 0,
            time: 0.0,
            broad: BroadPhase::new(),
            contacts: Vec::new(),
            force: vec![Vector3::zeros(); nb],
            torque: vec![Vector3::zeros(); nb],
            forces_current: false,
            max_penetration: 0.0,
        })
    }

    /// The bodies and planes of `scene` with `params` (the scene's own time step, friction and
    /// gravity are not used: `params` holds them). Errors as [`PenaltySim::new`].
    pub fn from_scene(scene: Scene, params: PenaltyParams) -> Result<Self> {
        Self::new(scene.world.bodies, scene.world.planes, params)
    }

    /// The bodies.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }

    /// Mutable bodies (e.g. to set initial velocities); the forces are recomputed at the next
    /// step. Radii and masses must stay positive.
    pub fn bodies_mut(&mut self) -> &mut [Body] {
        self.forces_current = false;
        &mut self.bodies
    }

    /// The planes.
    pub fn planes(&self) -> &[Plane] {
        &self.planes
    }

    /// The parameters.
    pub fn params(&self) -> &PenaltyParams {
        &self.params
    }

    /// Verlet steps done.
    pub fn steps_done(&self) -> u64 {
        self.steps_done
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Overlapping pairs at the last force evaluation.
    pub fn contacts(&self) -> &[Contact] {
        &self.contacts
    }

    /// Largest overlap `max(0, -Phi)` (m) at the last force evaluation.
    pub fn max_penetration(&self) -> f64 {
        self.max_penetration
    }

    /// Kinetic energy of all bodies (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies.iter().map(Body::kinetic_energy).sum()
    }

    /// Elastic energy stored in the current contacts (J): `1/2 k delta^2` (linear) or
    /// `2/5 k delta^{5/2}` (Hertz); with [`PenaltySim::kinetic_energy`] and the potential
    /// energy of gravity it is conserved without damping and friction.
    pub fn elastic_energy(&self) -> f64 {
        let k = self.params.stiffness;
        self.contacts
            .iter()
            .map(|c| {
                let d = (-c.gap).max(0.0);
                match self.params.law {
                    ContactLaw::Linear => 0.5 * k * d * d,
                    ContactLaw::Hertz => 0.4 * k * d * d * d.sqrt(),
                }
            })
            .sum()
    }

    /// Potential energy of gravity `-sum m g . x` over the movable bodies (J).
    pub fn potential_energy(&self) -> f64 {
        let bodies = self.bodies.iter().map(|b| (b.mass, &b.pos, b.fixed));
        crate::contact_step::gravity_energy(&self.params.gravity, bodies)
    }

    /// Detect the overlapping pairs and accumulate gravity, contact forces and torques.
    fn compute_forces(&mut self) {
        let p = &self.params;
        self.broad
            .detect(&self.bodies, &self.planes, 0.0, &mut self.contacts);
        for ((f, t), b) in self
            .force
            .iter_mut()
            .zip(&mut self.torque)
            .zip(&self.bodies)
        {
            *f = b.mass * p.gravity;
            *t = Vector3::zeros();
        }
        let k = p.stiffness;
        let mut max_pen = 0.0f64;
        for c in &self.contacts {
            let delta = -c.gap;
            if delta <= 0.0 {
                continue;
            }
            max_pen = max_pen.max(delta);
            let a = &self.bodies[c.a];
            let ra = c.point - a.pos;
            let va = a.vel + a.omega_world().cross(&ra);
            let (vb, mb, rb) = match c.b {
                Partner::Body(j) if !self.bodies[j].fixed => {
                    let b = &self.bodies[j];
                    let rb = c.point - b.pos;
                    (b.vel + b.omega_world().cross(&rb), Some(b.mass), rb)
                }
                _ => (Vector3::zeros(), None, Vector3::zeros()),
            };
            let m_eff = match mb {
                Some(mb) => a.mass * mb / (a.mass + mb),
                None => a.mass,
            };
            let vrel = vb - va;
            let vn = c.n.dot(&vrel);
            let delta_dot = -vn;
            let fn_ = match p.law {
                ContactLaw::Linear => k * delta + 2.0 * self.zeta * (k * m_eff).sqrt() * delta_dot,
                ContactLaw::Hertz => {
                    let s = delta.sqrt();
                    k * delta * s
                        + 5f64.sqrt() * self.zeta * (k * m_eff).sqrt() * s.sqrt() * delta_dot
                }
            };
            let vt = vrel - vn * c.n;
            let st = vt.norm();
            // force on A: -F_n n plus friction along the slip of B relative to A
            let mut fa = -fn_ * c.n;
            if st > 0.0 && p.mu > 0.0 {
                let ft = (p.tangential_rate * m_eff * st).min(p.mu * fn_.max(0.0));
                fa += (ft / st) * vt;
            }
            self.force[c.a] += fa;
            self.torque[c.a] += ra.cross(&fa);
            if let (Partner::Body(j), Some(_)) = (c.b, mb) {
                self.force[j] -= fa;
                self.torque[j] -= rb.cross(&fa);
            }
        }
        self.max_penetration = max_pen;
        self.forces_current = true;
    }

    /// Half a kick: `v += h/2 F / m`, `omega += h/2 J^-1 A^T tau` (movable bodies).
    fn kick(&mut self, half_h: f64) {
        for ((b, f), t) in self.bodies.iter_mut().zip(&self.force).zip(&self.torque) {
            if b.fixed {
                continue;
            }
            b.vel += (half_h / b.mass) * f;
            let tb = b.rot.inverse_transform_vector(t);
            b.omega += half_h * b.inv_inertia().component_mul(&tb);
        }
    }

    /// One velocity Verlet step of `h` (see the module documentation); returns the largest
    /// overlap at its end (m). Errors: [`GranularError::NonFinite`] when the state stops being
    /// finite (e.g. a step too large for the overlaps reached).
    pub fn step(&mut self) -> Result<f64> {
        if !self.forces_current {
            self.compute_forces();
        }
        let h = self.params.h;
        self.kick(0.5 * h);
        for b in self.bodies.iter_mut().filter(|b| !b.fixed) {
            b.advance_position(h);
        }
        self.compute_forces();
        self.kick(0.5 * h);
        self.steps_done += 1;
        self.time = self.steps_done as f64 * h;
        for (i, b) in self.bodies.iter().enumerate() {
            if !(b.pos.iter().chain(b.vel.iter()).chain(b.omega.iter())).all(|x| x.is_finite()) {
                return Err(GranularError::NonFinite {
                    body: i,
                    step: self.steps_done,
                });
            }
        }
        Ok(self.max_penetration)
    }

    /// `substeps` Verlet steps as one output step; returns its figures. Errors as
    /// [`PenaltySim::step`].
    pub fn advance(&mut self, substeps: u64) -> Result<PenaltyReport> {
        let mut max_pen = 0.0f64;
        for _ in 0..substeps {
            max_pen = max_pen.max(self.step()?);
        }
        self.outputs_done += 1;
        Ok(PenaltyReport {
            step: self.outputs_done,
            time: self.time,
            kinetic_energy: self.kinetic_energy(),
            contacts: self.contacts.len(),
            max_penetration: max_pen,
            pile_height: pile_height(&self.bodies),
            substeps,
        })
    }
}

/// Pile height (m): the highest body top `max_i (y_i + R_i)` over the movable bodies (for an
/// ellipsoid its support in `+y`, `y_i + sqrt(Q_yy)`)
/// (`y` up); 0 without movable bodies.
pub fn pile_height(bodies: &[Body]) -> f64 {
    bodies
        .iter()
        .filter(|b| !b.fixed)
        .map(|b| {
            if b.is_sphere() {
                b.pos.y + b.radius
            } else {
                // the top of an ellipsoid: its support in +y, y + sqrt(Q_yy)
                b.pos.y + b.as_ellipsoid().shape_matrix(&b.rot)[(1, 1)].sqrt()
            }
        })
        .fold(0.0f64, f64::max)
}

/// Kinetic-energy threshold (J) of "settled": `1e-3 sum_i m_i |g| R_i` over the movable
/// spheres, the kinetic energy of every sphere moving at `sqrt(2e-3 |g| R)` (for `fill`,
/// `R = 0.4`: 0.089 m/s).
pub fn settle_threshold(bodies: &[Body], gravity: &Vector3<f64>) -> f64 {
    1e-3 * gravity.norm()
        * bodies
            .iter()
            .filter(|b| !b.fixed)
            .map(|b| b.mass * b.radius)
            .sum::<f64>()
}

/// Settling time (s): the first of `times` from which `kinetic_energy` stays below
/// `threshold` to the end of the record; `None` when the last value is not below it.
/// `times` and `kinetic_energy` have the same length (the shorter one rules).
pub fn settling_time(times: &[f64], kinetic_energy: &[f64], threshold: f64) -> Option<f64> {
    let n = times.len().min(kinetic_energy.len());
    let mut first = None;
    for i in (0..n).rev() {
        if kinetic_energy[i] < threshold {
            first = Some(times[i]);
        } else {
            break;
        }
    }
    first
}
