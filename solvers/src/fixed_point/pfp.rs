//! `pfp`: Panagiotopoulos' fixed point, alternating Gauss-Seidel solves of the normal LCP
//! (tangential reactions frozen) and of the tangential Tresca problem with `s = mu r_n` (normal
//! reactions frozen) (module docs of [`crate::fixed_point`]).

use super::{inner_sweeps, mul_block, project_disc, Outer, TrescaSettings};
use crate::kernels::{coulomb_blocks, lambda_max, RowSource};
use crate::observer::IterInfo;
use crate::problem::Problem;
use crate::settings::SolverSettings;
use crate::solver::{Solver, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::RowState;

/// One contact's data: `W_nn,cc`, the tangential block `W_TT,cc` (row-major, 2x2 or 1x1 in the
/// first entries) and its local step `1 / lambda_max(sym W_TT,cc)` (0: skipped).
#[derive(Clone, Copy, Debug)]
struct Contact {
    wnn: f64,
    wtt: [f64; 4],
    rho_t: f64,
}

/// Panagiotopoulos' fixed point ([`cpbench_problems::ProblemClass::Coulomb`] only; module docs of
/// [`crate::fixed_point`]).
#[derive(Clone, Debug)]
pub struct Pfp {
    settings: TrescaSettings,
    contacts: Vec<Contact>,
    outer: Outer,
    normal_sweeps: u64,
    tangent_sweeps: u64,
    last: (u64, u64),
}

impl Pfp {
    /// A `pfp` solver; errors on invalid settings.
    pub fn new(settings: TrescaSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            contacts: Vec::new(),
            outer: Outer::new(),
            normal_sweeps: 0,
            tangent_sweeps: 0,
            last: (0, 0),
        })
    }
}

/// One normal Gauss-Seidel sweep, `r_n,c <- max(0, r_n,c - u_n,c / W_nn,cc)` with the exact
/// current `u_n,c`; returns the sum of the squared changes.
fn normal_sweep<const D: usize>(
    rows: &RowSource<'_>,
    contacts: &[Contact],
    st: &mut RowState,
    r: &mut [f64],
) -> f64 {
    let mut d2 = 0.0;
    for (c, k) in contacts.iter().enumerate() {
        if !(k.wnn > 0.0) {
            continue;
        }
        let mut u = [0.0; D];
        rows.gather(st, r, c, &mut u);
        let o = D * c;
        let new = (r[o] - u[0] / k.wnn).max(0.0);
        let mut delta = [0.0; D];
        delta[0] = new - r[o];
        r[o] = new;
        d2 += delta[0] * delta[0];
        rows.changed(c, &delta, st);
    }
    d2
}

/// One tangential Gauss-Seidel sweep on the Tresca problem in `r_T` (thresholds `s`), each
/// contact by the local iteration `r_T <- P_D(s)(r_T - rho_T (W_TT r_T + lin_T))` (`T = D - 1`
/// tangents; exact after one iteration for `T = 1`); returns the sum of the squared changes
/// and the local iterations.
#[allow(clippy::too_many_arguments)]
fn tangent_sweep<const D: usize, const T: usize>(
    rows: &RowSource<'_>,
    contacts: &[Contact],
    s: &[f64],
    max_iter: u32,
    tol: f64,
    st: &mut RowState,
    r: &mut [f64],
) -> (f64, u64) {
    let (mut d2, mut local) = (0.0, 0u64);
    for (c, k) in contacts.iter().enumerate() {
        if k.rho_t == 0.0 {
            continue;
        }
        let mut u = [0.0; D];
        rows.gather(st, r, c, &mut u);
        let o = D * c;
        let rt = &mut r[o + 1..o + D];
        let mut old = [0.0; T];
        old.copy_from_slice(rt);
        let br = mul_block::<T>(&k.wtt, rt);
        let mut lin = [0.0; T];
        for i in 0..T {
            lin[i] = u[i + 1] - br[i];
        }
        for it in 1..=max_iter {
            let bg = mul_block::<T>(&k.wtt, rt);
            let mut v = [0.0; T];
            for i in 0..T {
                v[i] = rt[i] - k.rho_t * (bg[i] + lin[i]);
            }
            project_disc(&mut v, s[c]);
            let (mut dd, mut nn) = (0.0, 0.0);
            for i in 0..T {
                dd += (v[i] - rt[i]).powi(2);
                nn += v[i] * v[i];
            }
            rt.copy_from_slice(&v);
            local += 1;
            // one dimension: the clamped Newton step is the exact solution
            if T == 1 || it == max_iter || dd <= tol * tol * nn.max(1e-300) {
                break;
            }
        }
        let mut delta = [0.0; D];
        for i in 0..T {
            delta[i + 1] = rt[i] - old[i];
            d2 += delta[i + 1] * delta[i + 1];
        }
        rows.changed(c, &delta, st);
    }
    (d2, local)
}

impl Solver for Pfp {
    crate::solver::coulomb_solver!("pfp");

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        let (_, bs) = coulomb_blocks(self, problem)?; // the class check and the block size
        let nc = problem.n() / bs.max(1);
        self.contacts = (0..nc)
            .map(|c| {
                let b = inst.diag_block(c);
                let (wtt, l) = if bs == 2 {
                    ([b[3], 0.0, 0.0, 0.0], b[3])
                } else {
                    let t = [b[4], b[5], b[7], b[8]];
                    let sym = [t[0], t[1], t[2], t[3], 0.0, 0.0, 0.0, 0.0, 0.0];
                    (t, lambda_max(&sym, 2))
                };
                let rho_t = if l > 0.0 && l.is_finite() {
                    1.0 / l
                } else {
                    0.0
                };
                Contact {
                    wnn: b[0],
                    wtt,
                    rho_t,
                }
            })
            .collect();
        self.outer.start(problem, &state.gamma, nc, &self.settings);
        self.normal_sweeps = 0;
        self.tangent_sweeps = 0;
        self.last = (0, 0);
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let (mu, bs) = coulomb_blocks(self, problem)?;
        let st = &self.settings;
        let max = u64::from(st.inner_max_iter);
        let r = &mut state.gamma;
        let outer = &mut self.outer;
        inst.refresh_row_state(r, &mut outer.rows);
        let rows = RowSource::new(inst);
        // the normal LCP with r_T frozen
        let normal = inner_sweeps(problem, r, outer.inner_tol, max, |r| {
            let d2 = if bs == 2 {
                normal_sweep::<2>(&rows, &self.contacts, &mut outer.rows, r)
            } else {
                normal_sweep::<3>(&rows, &self.contacts, &mut outer.rows, r)
            };
            (d2, 0)
        });
        // the tangential Tresca problem with s = mu r_n and r_n frozen
        outer.thresholds(mu, r, bs);
        let (lmax, ltol) = (st.local_max_iter, st.local_tol);
        let tangent = inner_sweeps(problem, r, outer.inner_tol, max, |r| {
            let (rows, contacts, s) = (&rows, &self.contacts, &outer.s);
            if bs == 2 {
                tangent_sweep::<2, 1>(rows, contacts, s, lmax, ltol, &mut outer.rows, r)
            } else {
                tangent_sweep::<3, 2>(rows, contacts, s, lmax, ltol, &mut outer.rows, r)
            }
        });
        outer.record(&normal);
        outer.record(&tangent);
        self.normal_sweeps += normal.sweeps;
        self.tangent_sweeps += tangent.sweeps;
        self.last = (normal.sweeps, tangent.sweeps);
        let moved = normal.moved || tangent.moved;
        Ok(outer.end(problem, state, moved, st))
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let sweeps = [
            ("normal_sweeps", self.normal_sweeps),
            ("tangent_sweeps", self.tangent_sweeps),
        ];
        self.outer.counters(&sweeps)
    }

    fn message(&self) -> Option<String> {
        self.outer.stall_message("pfp", || {
            "neither the normal nor the tangential sweeps move it".into()
        })
    }

    fn iter_info(&self) -> IterInfo {
        let last = [
            ("normal_sweeps", self.last.0),
            ("tangent_sweeps", self.last.1),
        ];
        self.outer.iter_info(&last)
    }
}
