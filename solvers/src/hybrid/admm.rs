//! `nsgs-admm`: non-smooth Gauss-Seidel while it converges fast, then ADMM from its iterate for
//! good (the hybrid idea of Acary, Bremond & Huber 2018, sec. 5, with [`crate::admm`] in the
//! place of Newton: a cheap first-order method does the easy problems and the start, a method
//! that keeps converging on the hard ones finishes).
//!
//! 1. **NSGS sweeps** ([`crate::nsgs`]): after at least `min_sweeps` sweeps, NSGS hands over
//!    when the executor's stopping residual ([`Problem::residual`]) did not halve over the
//!    last `window` sweeps, or when NSGS reports no progress; but a slow NSGS goes on when, at
//!    the rate of the last window, the residual would fall to the executor's tolerance
//!    ([`Problem::tol`]) within `finish_sweeps` more sweeps. (Outside the executor, without a
//!    residual, the measure is `nsgs-nsn`'s relative change `||r_k - r_{k-1}|| / ||r_k||`,
//!    [`super`].) The relative change misjudged warm starts: from the previous time step's
//!    answer it can stay near 10% per sweep while the residual falls steadily, and the switch
//!    then cost a factorisation and 80 to 125 ADMM iterations where NSGS needed 25 to 33 more.
//! 2. **ADMM** ([`crate::admm`], its default settings unless given) from the NSGS iterate: its
//!    multiplier starts at the modified velocity there ([`crate::admm::Admm::begin`]), so a
//!    converged NSGS iterate stays put. `init` makes ADMM's allocations and symbolic LU
//!    ([`crate::admm::Admm::prepare`]); the starting `rho`, its power iteration and the
//!    numeric factorisation wait for the switch, so that a problem NSGS finishes alone pays
//!    little for ADMM.
//!
//! Counters: `sweeps`, `admm_iterations`, `switches` (0 or 1), and ADMM's own. An iteration is
//! one sweep or one ADMM iteration.

use super::SwitchTest;
use crate::admm::{Admm, AdmmSettings};
use crate::nsgs::{Nsgs, NsgsSettings};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;

use serde::{Deserialize, Serialize};

/// Settings of [`NsgsAdmm`]. Defaults: 10 sweeps before the switch test, a window of 10
/// sweeps, 50 sweeps to finish; NSGS's and ADMM's defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NsgsAdmmSettings {
    /// NSGS sweeps before the switch test applies (`>= 1`).
    pub min_sweeps: u32,
    /// Sweeps over which the executor's residual (outside the executor: the relative change
    /// of the reactions) must halve for NSGS to go on (`>= 1`).
    pub window: u32,
    /// A slow NSGS goes on when, at the rate of the last window, the executor's residual would
    /// fall to its tolerance within this many more sweeps (`0`: never).
    pub finish_sweeps: u32,
    /// Settings of the NSGS phase (those of `nsgs`).
    pub nsgs: NsgsSettings,
    /// Settings of the ADMM phase (those of `admm`).
    pub admm: AdmmSettings,
}

impl Default for NsgsAdmmSettings {
    fn default() -> Self {
        Self {
            min_sweeps: 10,
            window: 10,
            finish_sweeps: 50,
            nsgs: NsgsSettings::default(),
            admm: AdmmSettings::default(),
        }
    }
}

impl SolverSettings for NsgsAdmmSettings {
    const SOLVER: &'static str = "nsgs-admm";

    fn check(&self, v: &mut Validator) {
        v.at_least("min_sweeps", self.min_sweeps.into(), 1)
            .at_least("window", self.window.into(), 1);
    }
}

/// NSGS, then ADMM (module documentation).
pub struct NsgsAdmm {
    settings: NsgsAdmmSettings,
    nsgs: Nsgs,
    admm: Admm,
    in_admm: bool,
    test: SwitchTest,
    sweeps: u64,
    admm_iterations: u64,
}

impl NsgsAdmm {
    /// The hybrid solver. Errors: invalid settings (its own, NSGS's or ADMM's).
    pub fn new(settings: NsgsAdmmSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            nsgs: Nsgs::new(settings.nsgs.clone())?,
            admm: Admm::new(settings.admm.clone())?,
            in_admm: false,
            test: SwitchTest::new(settings.window),
            sweeps: 0,
            admm_iterations: 0,
            settings,
        })
    }
}

impl Solver for NsgsAdmm {
    crate::solver::coulomb_solver!("nsgs-admm");

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        self.nsgs.init(problem, state)?;
        self.admm.prepare(problem)?;
        self.test.reset(problem.n());
        self.in_admm = false;
        self.sweeps = 0;
        self.admm_iterations = 0;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        if self.in_admm {
            self.admm_iterations += 1;
            return self.admm.step(problem, state);
        }
        let (slow, out) =
            self.test
                .sweep(&mut self.nsgs, problem, state, self.settings.finish_sweeps)?;
        self.sweeps += 1;
        let stalled = matches!(out, StepOutcome::Stalled);
        if self.test.count() >= self.settings.min_sweeps && (slow || stalled) {
            self.in_admm = true;
            self.admm.begin(problem, state)?;
        }
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut c = vec![
            ("sweeps", self.sweeps as f64),
            ("admm_iterations", self.admm_iterations as f64),
            ("switches", f64::from(u8::from(self.in_admm))),
        ];
        c.extend(self.admm.counters());
        c
    }
}
