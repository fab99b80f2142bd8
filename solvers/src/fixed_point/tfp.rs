//! `tfp`: the Tresca fixed point, an outer iteration on the threshold `s = mu r_n` around
//! Gauss-Seidel sweeps on the Tresca problem (module docs of [`crate::fixed_point`]).

use super::{inner_sweeps, mul_block, project_disc, Outer, TrescaSettings};
use crate::kernels::{coulomb_blocks, lambda_max, local_blocks, take_local_step, RowSource};
use crate::observer::IterInfo;
use crate::problem::Problem;
use crate::settings::SolverSettings;
use crate::solver::{Solver, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::RowState;

/// The Tresca fixed point ([`cpbench_problems::ProblemClass::Coulomb`] only; module docs of
/// [`crate::fixed_point`]).
#[derive(Clone, Debug)]
pub struct Tfp {
    settings: TrescaSettings,
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
    pub fn new(settings: TrescaSettings) -> Result<Self, SolverError> {
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
        let (_, bs) = coulomb_blocks(self, problem)?; // the class check and the block size
        (self.blocks, self.rho) = local_blocks(problem.instance(), bs, lambda_max);
        let nc = self.blocks.len();
        self.outer.start(problem, &state.gamma, nc, &self.settings);
        self.inner_sweeps = 0;
        self.last_sweeps = 0;
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let (mu, bs) = coulomb_blocks(self, problem)?;
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
        outer.record(&run);
        self.inner_sweeps += run.sweeps;
        self.last_sweeps = run.sweeps;
        Ok(outer.end(problem, state, run.moved, st))
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        self.outer.counters(&[("inner_sweeps", self.inner_sweeps)])
    }

    fn message(&self) -> Option<String> {
        let st = &self.settings;
        self.outer.stall_message("tfp", || {
            format!(
                "the Tresca sweeps at s = mu r_n do not move it; local_max_iter {}, local_tol {:.1e}",
                st.local_max_iter, st.local_tol
            )
        })
    }

    fn iter_info(&self) -> IterInfo {
        self.outer.iter_info(&[("inner_sweeps", self.last_sweeps)])
    }
}
