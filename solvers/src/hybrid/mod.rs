//! `nsgs-nsn`: non-smooth Gauss-Seidel until it stalls, then semismooth Newton on the
//! Alart-Curnier function (or the proximal point algorithm around it) from its iterate, back to NSGS when Newton makes no progress (the
//! hybrid strategy of Acary, Bremond & Huber 2018, "On solving contact problems with Coulomb
//! friction: formulations and numerical comparisons", sec. 5, and of Siconos'
//! `SICONOS_FRICTION_3D_NSN_HYBRID_STRATEGY`: a robust first-order method brings the iterate
//! into the region where Newton converges fast).
//!
//! The phases, on the true Coulomb problem ([`crate::nsgs`] and [`crate::nsn`] do the work):
//!
//! 1. **NSGS sweeps.** The measure of progress is the executor's stopping residual
//!    ([`Problem::residual`]) of each sweep's start point (outside the executor, the relative
//!    change `delta_k = ||r_k - r_{k-1}|| / ||r_k||`); NSGS counts as slow once at least
//!    `min_sweeps` sweeps of the phase are done and the measure did not halve over the last
//!    `window` sweeps (linear convergence slower than `2^(-1/window)` per sweep), unless at
//!    that rate it would reach the tolerance within `finish_sweeps` more sweeps; or when NSGS
//!    itself reports no progress. Then Newton starts from the current iterate. (Until this
//!    version the measure was the relative change, which fires at the spikes of NSGS's
//!    Anderson acceleration as readily as at a stall; the residual, as `nsgs-admm` uses it,
//!    took 159 instead of 613 iterations on Capsules-i100-1090 at 1e-8, and the same or a few
//!    fewer on the other public files.)
//! 2. **Newton steps** (`nsn-ac`, or with `newton = ppa` the proximal point algorithm
//!    [`crate::ppa`], one Newton step of it per iteration). Each step's merit at its start
//!    (`1/2 ||F||^2` for `nsn-ac`; for `ppa`, whose own merit is its subproblem's, `1/2 r^2`
//!    with `r` the executor's residual) is compared with the best of the phase; after
//!    `newton_patience` steps without halving it, or when Newton stalls, NSGS takes over again
//!    (from the point where Newton started when the phase never halved `||F||` from there)
//!    for at least `fallback_sweeps` sweeps, twice as many after each Newton phase in a row
//!    that never halved the merit (at most `2^10` times), so that Newton attempts far from
//!    its region of fast convergence cost a bounded share of the work (the executor keeps
//!    the best iterate by the stopping residual whatever the phase).
//!
//! **Why PPA.** On the hyperstatic public files (BoxesStack1, OneObject, Capsules,
//! local_problem_test: non-isolated solutions, singular generalised Jacobians) the plain
//! semismooth Newton does not converge locally from NSGS iterates: at 1e-8 `nsgs-nsn` falls
//! back 7 to 9 times on five of them and NSGS does most of the work (1666 to 5990
//! iterations, 47 to 81 of them Newton steps). The proximal term
//! `alpha (r - r_k)` makes each subproblem's Jacobian regular; with `alpha_k = sigma
//! e_k^(1/2)` (the preset `nsgs-nsn:ppa`, [`HybridSettings::ppa`]; Siconos' `nu = 1` lets
//! `alpha` vanish with the error, and Newton then stalls as without PPA) the hybrid reached
//! the fc3d error 1e-8 on all 18 public Coulomb files (13 3-D, 5 2-D) in at most 77 Newton
//! steps after at most 78 sweeps (Capsules-i125-1213: 71 sweeps, 72 Newton steps, where
//! `nsgs-nsn` took 5370 sweeps and 17 Newton steps). Starting Newton from the best iterate of
//! the NSGS phase instead of the current one was tried and made Capsules-i125 need 75829
//! iterations: not kept.
//!
//! Counters: `sweeps`, `newton_steps`, `switches` (NSGS -> Newton), `fallbacks` (Newton ->
//! NSGS), then the Newton phase's own ([`crate::nsn`]'s or [`crate::ppa`]'s). An iteration is
//! one sweep or one Newton step.

pub mod admm;

use crate::nsgs::{Nsgs, NsgsSettings};
use crate::nsn::{Nsn, NsnSettings};
use crate::ppa::{Ppa, PpaSettings};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;

use serde::{Deserialize, Serialize};

/// Settings of [`Hybrid`]. Defaults: 10 sweeps before the first switch, a window of 10 sweeps,
/// 50 sweeps to finish, a patience of 8 Newton steps, 20 sweeps after a fallback; NSGS's
/// defaults and `nsn-ac` with [`NsnSettings::ARMIJO`] for the Newton phase (Armijo, 20
/// halvings; not the `nsn-*` default). The preset `nsgs-nsn:ppa` is [`HybridSettings::ppa`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HybridSettings {
    /// NSGS sweeps before Newton is first tried (`>= 1`).
    pub min_sweeps: u32,
    /// Sweeps over which the executor's residual (outside the executor: the relative change of
    /// the reactions) must halve for NSGS to count as progressing (`>= 1`).
    pub window: u32,
    /// Newton steps allowed without halving the merit before NSGS takes over again (`>= 1`).
    pub newton_patience: u32,
    /// NSGS sweeps after a fallback before Newton is tried again (`>= 1`).
    pub fallback_sweeps: u32,
    /// A slow NSGS goes on when, at the rate of the last window, the executor's residual would
    /// fall to its tolerance within this many more sweeps (`0`: never; as `nsgs-admm`).
    pub finish_sweeps: u32,
    /// Settings of the NSGS phase (those of `nsgs`).
    pub nsgs: NsgsSettings,
    /// Settings of the Newton phase (those of `nsn-ac`); missing fields take
    /// [`NsnSettings::ARMIJO`]'s values: Armijo, 20 halvings).
    #[serde(deserialize_with = "NsnSettings::deserialize_over_armijo")]
    pub nsn: NsnSettings,
    /// The method of the Newton phase: `nsn-ac` (settings `nsn`) or `ppa` (settings `ppa`).
    pub newton: NewtonPhase,
    /// Settings of the Newton phase when `newton` is `ppa` (those of `ppa`; its inner Newton
    /// method has its own `nsn` settings, the field `nsn` above is then unused).
    pub ppa: PpaSettings,
}

/// The method of [`Hybrid`]'s Newton phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NewtonPhase {
    /// Semismooth Newton on the Alart-Curnier function ([`crate::nsn`], settings `nsn`).
    NsnAc,
    /// The proximal point algorithm around it ([`crate::ppa`], settings `ppa`).
    Ppa,
}

impl Default for HybridSettings {
    fn default() -> Self {
        Self {
            min_sweeps: 10,
            window: 10,
            newton_patience: 8,
            fallback_sweeps: 20,
            finish_sweeps: 50,
            nsgs: NsgsSettings::default(),
            nsn: NsnSettings::ARMIJO,
            newton: NewtonPhase::NsnAc,
            ppa: PpaSettings::default(),
        }
    }
}

impl HybridSettings {
    /// The preset `nsgs-nsn:ppa`: the Newton phase is the proximal point algorithm
    /// ([`NewtonPhase::Ppa`]) with `alpha_k = sigma e_k^(1/2)` (`nu = 1/2`: a proximal term
    /// that fades more slowly than the error, where the plain Newton method does not converge:
    /// module documentation) and a patience of 30 Newton steps (a subproblem may take several
    /// steps before the residual of the problem halves); the rest as [`HybridSettings::default`].
    pub fn ppa() -> Self {
        Self {
            newton: NewtonPhase::Ppa,
            newton_patience: 30,
            ppa: PpaSettings {
                nu: 0.5,
                ..PpaSettings::default()
            },
            ..Self::default()
        }
    }
}

impl SolverSettings for HybridSettings {
    const SOLVER: &'static str = "nsgs-nsn";

    fn check(&self, v: &mut Validator) {
        v.at_least("min_sweeps", self.min_sweeps.into(), 1)
            .at_least("window", self.window.into(), 1)
            .at_least("newton_patience", self.newton_patience.into(), 1)
            .at_least("fallback_sweeps", self.fallback_sweeps.into(), 1);
    }
}

/// The switch test of an NSGS phase: the relative change `delta_k = ||r_k - r_{k-1}|| / ||r_k||`
/// of each sweep in a ring of the last `window + 1`; NSGS is slow when `delta_k >
/// delta_{k - window} / 2`. Shared by `nsgs-nsn` and `nsgs-admm` ([`admm`]).
pub(crate) struct SwitchTest {
    /// The reactions before the sweep (length `n`).
    prev: Vec<f64>,
    /// The last `window + 1` relative changes, indexed by the phase's sweep count.
    changes: Vec<f64>,
    /// Sweeps of the current phase.
    count: u32,
}

impl SwitchTest {
    /// A test over `window` sweeps (allocate with [`SwitchTest::reset`]).
    pub(crate) fn new(window: u32) -> Self {
        Self {
            prev: Vec::new(),
            changes: vec![0.0; window as usize + 1],
            count: 0,
        }
    }

    /// Size for `n` unknowns, clear the ring and start a phase (allocates).
    pub(crate) fn reset(&mut self, n: usize) {
        self.prev = vec![0.0; n];
        self.changes.fill(0.0);
        self.count = 0;
    }

    /// Start a new NSGS phase (the ring keeps the changes of the phase before).
    pub(crate) fn restart(&mut self) {
        self.count = 0;
    }

    /// Record the reactions before a sweep.
    pub(crate) fn before(&mut self, gamma: &[f64]) {
        self.prev.copy_from_slice(gamma);
    }

    /// Record the sweep that led to `gamma`; whether NSGS is slow (a full window seen and the
    /// change not halved over it).
    pub(crate) fn after(&mut self, gamma: &[f64]) -> bool {
        let (mut d2, mut n2) = (0.0, 0.0);
        for (x, p) in gamma.iter().zip(&self.prev) {
            d2 += (x - p) * (x - p);
            n2 += x * x;
        }
        self.record((d2 / n2.max(f64::MIN_POSITIVE)).sqrt())
    }

    /// Record the measure of progress `value` of a sweep (a relative change, or the
    /// executor's stopping residual: [`Problem::residual`]); whether NSGS is slow (a full
    /// window seen and `value` not halved over it).
    pub(crate) fn record(&mut self, value: f64) -> bool {
        let w = self.changes.len();
        let k = self.count as usize;
        self.changes[k % w] = value;
        self.count += 1;
        k + 1 >= w && value > 0.5 * self.changes[(k + 1) % w]
    }

    /// One NSGS sweep and its judgement: whether NSGS is slow, and the sweep's outcome. The
    /// measure is the executor's stopping residual ([`Problem::residual`]) of the iterate the
    /// sweep starts from (one sweep behind), or outside the executor the relative change of
    /// the reactions ([`SwitchTest::after`]); a slow NSGS is not judged slow when, at the rate
    /// of the last window, the residual would reach the executor's tolerance within `finish`
    /// more sweeps ([`SwitchTest::finishes_within`]). The phase's sweep count is
    /// [`SwitchTest::count`].
    pub(crate) fn sweep(
        &mut self,
        nsgs: &mut Nsgs,
        problem: &Problem,
        state: &mut IterState,
        finish: u32,
    ) -> Result<(bool, StepOutcome), SolverError> {
        let residual = problem.residual();
        let slow = residual.is_finite() && self.record(residual);
        self.before(&state.gamma);
        let out = nsgs.step(problem, state)?;
        let slow = if residual.is_finite() {
            slow
        } else {
            self.after(&state.gamma)
        };
        Ok((slow && !self.finishes_within(problem.tol(), finish), out))
    }

    /// Sweeps of the current phase.
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// Whether, at the rate of the last window (`rho = (v_k / v_{k - window})^(1 / window)`
    /// of the recorded values), the value would fall to `tol` within `horizon` more sweeps:
    /// NSGS is slow but about to finish (a warm start near the answer). False before a full
    /// window, without a decrease (`rho >= 1`) or without a tolerance.
    pub(crate) fn finishes_within(&self, tol: Option<f64>, horizon: u32) -> bool {
        let w = self.changes.len();
        let k = self.count as usize;
        let Some(tol) = tol.filter(|t| *t > 0.0) else {
            return false;
        };
        if k < w {
            return false;
        }
        let (now, then) = (self.changes[(k - 1) % w], self.changes[k % w]);
        if now <= tol {
            return true;
        }
        if !(now < then) || !(then > 0.0) {
            return false;
        }
        // sweeps to go: ln(tol / now) / ln(rho), ln(rho) = ln(now / then) / (w - 1)
        let ln_rho = (now / then).ln() / (w - 1) as f64;
        (tol / now).ln() / ln_rho <= f64::from(horizon)
    }
}

/// Which method the next iteration runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Sweep,
    Newton,
}

/// The counters of a [`Hybrid`] run (module docs).
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// NSGS sweeps.
    sweeps: u64,
    /// Newton steps.
    newton_steps: u64,
    /// Switches from NSGS to Newton.
    switches: u64,
    /// Fallbacks from Newton to NSGS.
    fallbacks: u64,
}

/// NSGS, then semismooth Newton, and back (module documentation).
pub struct Hybrid {
    settings: HybridSettings,
    nsgs: Nsgs,
    nsn: Nsn,
    ppa: Ppa,
    phase: Phase,
    /// Newton steps of the current Newton phase.
    in_phase: u32,
    /// Sweeps the current NSGS phase needs before a switch.
    needed: u32,
    /// The switch test of the NSGS phases.
    test: SwitchTest,
    /// The reactions where the Newton phase started (length `n`) and their merit.
    saved: Vec<f64>,
    switch_merit: f64,
    /// The best merit of the Newton phase and the steps since it last halved.
    best_merit: f64,
    since_best: u32,
    /// Newton phases in a row that ended without halving the merit once.
    failed_in_row: u32,
    /// The counters (reset at `init`).
    counts: Counts,
}

impl Hybrid {
    /// The hybrid solver. Errors: invalid settings (its own, NSGS's or Newton's).
    pub fn new(settings: HybridSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            nsgs: Nsgs::new(settings.nsgs.clone())?,
            nsn: Nsn::alart_curnier(settings.nsn.clone())?,
            ppa: Ppa::new(settings.ppa.clone())?,
            phase: Phase::Sweep,
            in_phase: 0,
            needed: settings.min_sweeps,
            test: SwitchTest::new(settings.window),
            saved: Vec::new(),
            switch_merit: f64::INFINITY,
            best_merit: f64::INFINITY,
            since_best: 0,
            failed_in_row: 0,
            counts: Counts::default(),
            settings,
        })
    }

    /// One NSGS sweep, then the switch test.
    fn sweep(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let (slow, out) =
            self.test
                .sweep(&mut self.nsgs, problem, state, self.settings.finish_sweeps)?;
        self.counts.sweeps += 1;
        let stalled = matches!(out, StepOutcome::Stalled);
        if self.test.count() >= self.needed && (slow || stalled) {
            self.ppa.restart();
            self.saved.copy_from_slice(&state.gamma);
            self.phase = Phase::Newton;
            self.in_phase = 0;
            self.best_merit = f64::INFINITY;
            self.since_best = 0;
            self.counts.switches += 1;
        }
        Ok(StepOutcome::Continue)
    }

    /// One Newton step, then the fallback test.
    fn newton(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let (out, merit) = match self.settings.newton {
            NewtonPhase::NsnAc => {
                let out = self.nsn.step(problem, state)?;
                (out, self.nsn.merit())
            }
            NewtonPhase::Ppa => {
                // PPA's own merit is its subproblem's: the progress on the problem is the
                // executor's residual of the iterate the step starts from, as 1/2 r^2
                let r = problem.residual();
                let out = self.ppa.step(problem, state)?;
                let merit = if r.is_finite() {
                    0.5 * r * r
                } else {
                    self.ppa.merit()
                };
                (out, merit)
            }
        };
        self.counts.newton_steps += 1;
        self.in_phase += 1;
        if self.in_phase == 1 {
            self.switch_merit = merit;
        }
        if merit <= 0.25 * self.best_merit {
            // the merit is 1/2 ||F||^2: a quarter of it is ||F|| halved
            if self.best_merit.is_finite() {
                self.failed_in_row = 0;
            }
            self.best_merit = merit;
            self.since_best = 0;
        } else {
            self.best_merit = self.best_merit.min(merit);
            self.since_best += 1;
        }
        if matches!(out, StepOutcome::Stalled) || self.since_best >= self.settings.newton_patience {
            // a Newton phase that failed again costs twice the sweeps before the next one
            // (at most 2^10 times `fallback_sweeps`): hopeless Newton attempts take a bounded
            // share of the work
            if !(self.best_merit <= 0.25 * self.switch_merit) {
                // Newton never halved ||F|| from the point it started from: NSGS resumes there
                state.gamma.copy_from_slice(&self.saved);
            }
            self.phase = Phase::Sweep;
            self.test.restart();
            self.needed = self
                .settings
                .fallback_sweeps
                .saturating_mul(1 << self.failed_in_row.min(10));
            self.failed_in_row += 1;
            self.counts.fallbacks += 1;
        }
        Ok(StepOutcome::Continue)
    }
}

impl Solver for Hybrid {
    crate::solver::coulomb_solver!("nsgs-nsn");

    /// As its Newton phase (3-D contacts only).
    fn handles_cone_dim(&self, dim: usize) -> bool {
        self.nsn.handles_cone_dim(dim)
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        self.nsgs.init(problem, state)?;
        match self.settings.newton {
            NewtonPhase::NsnAc => self.nsn.init(problem, state)?,
            NewtonPhase::Ppa => self.ppa.init(problem, state)?,
        }
        self.test.reset(problem.n());
        self.saved = vec![0.0; problem.n()];
        self.phase = Phase::Sweep;
        self.in_phase = 0;
        self.needed = self.settings.min_sweeps;
        self.failed_in_row = 0;
        self.counts = Counts::default();
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        match self.phase {
            Phase::Sweep => self.sweep(problem, state),
            Phase::Newton => self.newton(problem, state),
        }
    }

    /// The phases' counts, then the Newton phase's own counters (`nsn-ac`'s, or `ppa`'s:
    /// centres, failed subproblems, the last `alpha` and its Newton counters).
    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut c = vec![
            ("sweeps", self.counts.sweeps as f64),
            ("newton_steps", self.counts.newton_steps as f64),
            ("switches", self.counts.switches as f64),
            ("fallbacks", self.counts.fallbacks as f64),
        ];
        c.extend(match self.settings.newton {
            NewtonPhase::NsnAc => self.nsn.counters(),
            NewtonPhase::Ppa => self.ppa.counters(),
        });
        c
    }
}
