//! `tfp`: the Tresca fixed point, an outer iteration on the threshold `s = mu r_n` around
//! Gauss-Seidel sweeps on the Tresca problem (module docs of [`crate::fixed_point`]).

use super::{inner_sweeps, mul_block, project_disc, Outer};
use crate::kernels::{coulomb_mu, lambda_max, local_blocks, take_local_step, RowSource};
use crate::observer::IterInfo;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::RowState;
use serde::{Deserialize, Serialize};

/// Settings of [`Tfp`]. Defaults are Siconos' `fc3d_tfp_set_default` (module docs): 1000 inner
/// sweeps, inner tolerance `max(e / 10, 1e-12)`, 50 local iterations to `1e-14`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TfpSettings {
    /// Largest number of inner Gauss-Seidel sweeps per outer iteration (`>= 1`; Siconos 1000,
    /// the internal NSGS's `iparam[SICONOS_IPARAM_MAX_ITER]`).
    pub inner_max_iter: u32,
    /// Ratio of the adaptive inner tolerance `max(e / inner_tol_ratio, inner_tol_min)`, `e`
    /// the fc3d error of the last iterate (`> 0`; Siconos 10,
    /// `SICONOS_FRICTION_3D_DPARAM_INTERNAL_ERROR_RATIO`).
    pub inner_tol_ratio: f64,
    /// Floor of the inner tolerance, a relative change of `r` per sweep (`>= 0`; Siconos uses
    /// its outer tolerance over the number of contacts).
    pub inner_tol_min: f64,
    /// Largest number of local iterations per contact and sweep (`>= 1`; Siconos 50, the
    /// "projection on cylinder with local iteration" solver).
    pub local_max_iter: u32,
    /// Local stopping test: the change of `r_c` is `<= local_tol * ||r_c||` (`>= 0`; Siconos
    /// `1e-14`).
    pub local_tol: f64,
}

impl Default for TfpSettings {
    fn default() -> Self {
        Self {
            inner_max_iter: 1000,
            inner_tol_ratio: 10.0,
            inner_tol_min: 1e-12,
            local_max_iter: 50,
            local_tol: 1e-14,
        }
    }
}

impl SolverSettings for TfpSettings {
    const SOLVER: &'static str = "tfp";

    fn check(&self, v: &mut Validator) {
        v.at_least("inner_max_iter", self.inner_max_iter.into(), 1)
            .positive("inner_tol_ratio", self.inner_tol_ratio)
            .non_negative("inner_tol_min", self.inner_tol_min)
            .at_least("local_max_iter", self.local_max_iter.into(), 1)
            .non_negative("local_tol", self.local_tol);
    }
}

/// The Tresca fixed point ([`cpbench_problems::ProblemClass::Coulomb`] only; module docs of
/// [`crate::fixed_point`]).
#[derive(Clone, Debug)]
pub struct Tfp {
    settings: TfpSettings,
    /// Diagonal blocks `W_cc` (row-major, `bs x bs` in the first `bs^2` entries).
    blocks: Vec<[f64; 9]>,
    /// Local steps `rho_c = 1 / lambda_max(sym W_cc)` (0: the block vanishes, skipped).
    rho: Vec<f64>,
    outer: Outer,
    inner_sweeps: u64,
    last_sweeps: u64,
}

impl Tfp {
    /// A `tfp` solver; errors on invalid settings.
    pub fn new(settings: TfpSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            blocks: Vec::new(),
            rho: Vec::new(),
            outer: Outer::new(),
            inner_sweeps: 0,
            last_sweeps: 0,
        })
    }
}

/// One contact's Tresca problem `u = B r_c + lin`, `r_c in C(s) = R+ x D(s)` (normal part
/// nonnegative, tangential part in the disc of radius `s`, [`super::project_disc`]), by the
/// local projection iteration `r_c <- P_C(s)(r_c - rho (B r_c + lin))` from `g = r_c` (in
/// place) until the relative change is at most `tol` or `max_iter` iterations; returns the
/// iterations used. `D` is the block size: 3, or 2 with the row-major 2x2 block `B` in the
/// first 4 entries of `b` and `g` of length 2. `tfp` takes `rho = 1 / lambda_max` of the
/// block's symmetric part (a projected gradient step on the Tresca QP; Acary, Bremond & Huber
/// 2018, module docs).
#[inline]
pub fn local_cylinder<const D: usize>(
    b: &[f64; 9],
    lin: &[f64; 3],
    s: f64,
    rho: f64,
    max_iter: u32,
    tol: f64,
    g: &mut [f64],
) -> u32 {
    for it in 1..=max_iter {
        let bg = mul_block::<D>(b, g);
        let mut v = [0.0; D];
        for i in 0..D {
            v[i] = g[i] - rho * (bg[i] + lin[i]);
        }
        v[0] = v[0].max(0.0);
        project_disc(&mut v[1..], s);
        if take_local_step(g, &v, tol) {
            return it;
        }
    }
    max_iter
}

/// The per-contact data of a sweep.
struct Sweep<'a> {
    rows: &'a RowSource<'a>,
    blocks: &'a [[f64; 9]],
    rho: &'a [f64],
    s: &'a [f64],
    local_max_iter: u32,
    local_tol: f64,
}

impl Sweep<'_> {
    /// One Gauss-Seidel sweep over the contacts on the Tresca problem with thresholds `s`;
    /// returns the sum of the squared changes and the local iterations.
    fn run<const D: usize>(&self, st: &mut RowState, r: &mut [f64]) -> (f64, u64) {
        let (mut d2, mut local) = (0.0, 0u64);
        for (c, (b, &rho)) in self.blocks.iter().zip(self.rho).enumerate() {
            if rho == 0.0 {
                continue;
            }
            let o = D * c;
            let mut u = [0.0; D];
            self.rows.gather(st, r, c, &mut u);
            let rc = &mut r[o..o + D];
            let mut old = [0.0; D];
            old.copy_from_slice(rc);
            let br = mul_block::<D>(b, rc);
            let mut lin = [0.0; 3];
            for i in 0..D {
                lin[i] = u[i] - br[i];
            }
            let it = local_cylinder::<D>(
                b,
                &lin,
                self.s[c],
                rho,
                self.local_max_iter,
                self.local_tol,
                rc,
            );
            local += u64::from(it);
            let mut delta = [0.0; D];
            for i in 0..D {
                delta[i] = rc[i] - old[i];
                d2 += delta[i] * delta[i];
            }
            self.rows.changed(c, &delta, st);
        }
        (d2, local)
    }
}

impl Solver for Tfp {
    crate::solver::coulomb_solver!("tfp");

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        coulomb_mu(self, inst)?; // the class check
        (self.blocks, self.rho) =
            local_blocks(inst, problem.constraints().block_size(), lambda_max);
        let st = &self.settings;
        let tol_rule = (st.inner_tol_ratio, st.inner_tol_min);
        self.outer
            .start(problem, &state.gamma, self.blocks.len(), tol_rule);
        self.inner_sweeps = 0;
        self.last_sweeps = 0;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let mu = coulomb_mu(self, inst)?;
        let bs = problem.constraints().block_size();
        let st = &self.settings;
        let r = &mut state.gamma;
        let outer = &mut self.outer;
        outer.thresholds(mu, r, bs);
        inst.refresh_row_state(r, &mut outer.rows);
        let rows = RowSource::new(inst);
        let sweep = Sweep {
            rows: &rows,
            blocks: &self.blocks,
            rho: &self.rho,
            s: &outer.s,
            local_max_iter: st.local_max_iter,
            local_tol: st.local_tol,
        };
        let run = inner_sweeps(
            problem,
            r,
            outer.inner_tol,
            u64::from(st.inner_max_iter),
            |r| {
                if bs == 2 {
                    sweep.run::<2>(&mut outer.rows, r)
                } else {
                    sweep.run::<3>(&mut outer.rows, r)
                }
            },
        );
        outer.local_iters += run.local;
        outer.cap_hits += u64::from(run.capped);
        self.inner_sweeps += run.sweeps;
        self.last_sweeps = run.sweeps;
        let tol_rule = (st.inner_tol_ratio, st.inner_tol_min);
        Ok(outer.end(problem, state, run.moved, tol_rule))
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("inner_sweeps", self.inner_sweeps as f64),
            ("local_iterations", self.outer.local_iters as f64),
            ("inner_cap_hits", self.outer.cap_hits as f64),
            ("inner_tol", self.outer.inner_tol),
        ]
    }

    fn message(&self) -> Option<String> {
        self.outer.stalled.then(|| {
            format!(
                "tfp: an outer iteration left r unchanged at fc3d error {:.3e} (the Tresca \
                 sweeps at s = mu r_n do not move it; local_max_iter {}, local_tol {:.1e})",
                self.outer.error, self.settings.local_max_iter, self.settings.local_tol
            )
        })
    }

    fn iter_info(&self) -> IterInfo {
        let mut info = IterInfo::new();
        info.push("inner_sweeps", self.last_sweeps as f64);
        info.push("inner_tol", self.outer.inner_tol);
        info
    }
}
