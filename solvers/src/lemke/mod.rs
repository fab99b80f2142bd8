//! Lemke's complementary pivoting method for the general LCP `w = M z + q >= 0`, `z >= 0`,
//! `z^T w = 0` (cpbench: `M = N`, `q = r`, `z = gamma`), Scheme I of Cottle, Pang & Stone
//! (1992), sec. 4.4, with the lexicographic minimum-ratio test of sec. 4.9.
//!
//! The augmented system is `w - M z - d z0 = q` with a covering vector `d > 0` (default all
//! ones) and the artificial variable `z0`. Start: all `w` basic; `z0` enters at the value
//! `max_i (-q_i / d_i)` and the `w_r` of the lexicographically smallest row
//! `(q_i, e_i^T) / d_i` leaves, which makes every row of `[B^-1 q, B^-1]` lexicographically
//! positive (the almost-complementary basis is then feasible in the lexicographic sense). Each
//! later pivot brings in the complement of the variable that left (the complementary rule),
//! and the minimum-ratio test over the rows with a positive entry of the FTRAN column
//! `c = B^-1 a` picks the leaving row: the smallest `x_i / c_i`, ties broken by the
//! lexicographically smallest `(B^-1)_(i, .) / c_i` (so that no basis repeats: Lemke's method
//! with this rule cannot cycle, CPS Theorem 4.9.3), and `z0` leaves whenever its row is among
//! the tied ones. Ends:
//!
//! - `z0` leaves: the basis is complementary and feasible, `z` solves the LCP
//!   (`StepOutcome::Finished(Converged)`, re-checked by the executor and the harness). The
//!   answer is recomputed from a fresh factorisation of the final basis;
//! - no row blocks the entering variable: a secondary ray ([`Status::RayTermination`]). For a
//!   copositive-plus `M` (every positive semidefinite `M`) this proves the LCP infeasible
//!   (CPS Theorem 4.4.13); for other matrices Lemke's method may miss an existing solution;
//! - `max_pivots` (default `100 n + 1000`) or the executor's `max_iter` reached.
//!
//! One pivot per `step`; `state.gamma` is the current `z` (`z0` excluded), so the trace shows
//! the residual of every almost-complementary basis. Counters: `pivots` (including the first,
//! `z0`-entering one), `refactorisations`. Siconos' `lcp_lexicolemke` counts the pivots after
//! the first one (its `iparam[ITER_DONE]` is ours minus one).
//!
//! Linear algebra ([`LinearAlgebra`]): an explicit dense inverse, or a sparse LU of the basis
//! refactorised every `refactor_every` pivots with product-form (eta) updates in between
//! (module `basis`). `auto` takes the dense one when `n <= dense_max_n` or when `M` has more than
//! `n^2 / 10` entries.

pub(crate) mod basis;

use crate::kernels::check_class;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::{SolverError, Status};
use basis::{Basis, Dense, Sparse, System};
use serde::{Deserialize, Serialize};

/// Which representation of the basis inverse Lemke's method uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LinearAlgebra {
    /// Dense for `n <= dense_max_n` or a matrix with more than `n^2 / 10` entries, else sparse.
    #[default]
    Auto,
    /// Explicit inverse, `O(n^2)` per pivot (re-inverted every `max(refactor_every, n)`
    /// pivots).
    Dense,
    /// Sparse LU of the basis (faer), refactorised every `refactor_every` pivots, eta updates
    /// in between.
    Sparse,
}

/// Settings of [`Lemke`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LemkeSettings {
    /// Covering vector `d` (length `n`, every entry `> 0`); null: all ones (CPS Scheme I with
    /// `d = e`, Siconos' choice).
    pub covering: Option<Vec<f64>>,
    /// Basis representation: `auto`, `dense` or `sparse`.
    pub linear_algebra: LinearAlgebra,
    /// Largest `n` for which `auto` chooses the dense representation.
    pub dense_max_n: u64,
    /// Pivots between two refactorisations of the basis (sparse: eta-file length; dense: the
    /// re-inversion interval is `max(refactor_every, n)`).
    pub refactor_every: u64,
    /// Pivot budget; null: `100 n + 1000`. The executor's `max_iter` also caps the pivots.
    pub max_pivots: Option<u64>,
    /// A column entry `c_i` takes part in the ratio test when `c_i > pivot_tol max(1, ||c||_inf)`.
    pub pivot_tol: f64,
    /// Relative tolerance under which two ratios (or two lexicographic entries) count as tied:
    /// `|a - b| <= tie_tol (1 + max(|a|, |b|))`.
    pub tie_tol: f64,
}

impl Default for LemkeSettings {
    fn default() -> Self {
        Self {
            covering: None,
            linear_algebra: LinearAlgebra::Auto,
            dense_max_n: 400,
            refactor_every: 50,
            max_pivots: None,
            pivot_tol: 1e-12,
            tie_tol: 1e-9,
        }
    }
}

impl SolverSettings for LemkeSettings {
    const SOLVER: &'static str = "lemke";

    fn check(&self, v: &mut Validator) {
        let cov_ok = self
            .covering
            .as_ref()
            .is_none_or(|d| d.iter().all(|&x| x > 0.0 && x.is_finite()));
        v.require(
            "covering",
            cov_ok,
            "a vector with a non-positive entry",
            || "null or a vector of finite entries > 0".into(),
        )
        .at_least("refactor_every", self.refactor_every, 1)
        .at_least_opt("max_pivots", self.max_pivots, 1)
        .in_open("pivot_tol", self.pivot_tol, 0.0, 1.0)
        .in_open("tie_tol", self.tie_tol, 0.0, 1.0);
    }
}

/// Lemke's method (see the module documentation).
pub struct Lemke {
    s: LemkeSettings,
    /// `n`.
    n: usize,
    /// Covering vector.
    d: Vec<f64>,
    /// Basic variable of each row.
    basis: Vec<usize>,
    /// `x_B = B^-1 q`.
    x: Vec<f64>,
    /// FTRAN column of the entering variable.
    col: Vec<f64>,
    /// Two rows of `B^-1` for the lexicographic comparison, and a scratch vector.
    row_a: Vec<f64>,
    row_b: Vec<f64>,
    tmp: Vec<f64>,
    rep: Option<Basis>,
    /// The variable that left at the last pivot (`None` before the first pivot).
    left: Option<usize>,
    pivots: u64,
    refactorisations: u64,
    max_pivots: u64,
    end: Option<End>,
    dense: bool,
    last_z0: f64,
    last_row: usize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    Solved,
    Trivial,
    Ray { entering: usize },
    Budget,
}

impl Lemke {
    /// Validate the settings and build the solver. Errors: [`SolverError::OutOfRange`].
    pub fn new(s: LemkeSettings) -> Result<Self, SolverError> {
        s.validate()?;
        Ok(Self {
            s,
            n: 0,
            d: Vec::new(),
            basis: Vec::new(),
            x: Vec::new(),
            col: Vec::new(),
            row_a: Vec::new(),
            row_b: Vec::new(),
            tmp: Vec::new(),
            rep: None,
            left: None,
            pivots: 0,
            refactorisations: 0,
            max_pivots: 0,
            end: None,
            dense: true,
            last_z0: 0.0,
            last_row: 0,
        })
    }

    /// Pivots done so far (including the first, `z0`-entering one).
    pub fn pivots(&self) -> u64 {
        self.pivots
    }

    /// Whether the dense representation was chosen for the last solve.
    pub fn is_dense(&self) -> bool {
        self.dense
    }

    fn name_of(&self, v: usize) -> String {
        let n = self.n;
        if v < n {
            format!("w{}", v + 1)
        } else if v < 2 * n {
            format!("z{}", v - n + 1)
        } else {
            "z0".into()
        }
    }

    /// `x_B = B^-1 q` from the current representation.
    fn recompute_x(&mut self, q: &[f64]) {
        self.x.copy_from_slice(q);
        if let Some(rep) = self.rep.as_mut() {
            rep.solve(&mut self.x, &mut self.tmp);
        }
    }

    fn refactor(&mut self, sys: &System, q: &[f64]) -> Result<(), SolverError> {
        let rep = self.rep.as_mut().expect("init builds the representation");
        rep.refactor(sys, &self.basis)?;
        self.refactorisations += 1;
        self.recompute_x(q);
        Ok(())
    }

    /// Write the current `z` into `gamma` (`z0` and `w` left out); negative rounding clipped.
    fn write_z(&self, gamma: &mut [f64]) {
        let n = self.n;
        gamma.fill(0.0);
        for (k, &v) in self.basis.iter().enumerate() {
            if (n..2 * n).contains(&v) {
                gamma[v - n] = self.x[k].max(0.0);
            }
        }
    }

    /// Whether `a` and `b` are tied under `tie_tol`.
    fn tied(&self, a: f64, b: f64) -> bool {
        (a - b).abs() <= self.s.tie_tol * (1.0 + a.abs().max(b.abs()))
    }

    /// The leaving row of the ratio test for the FTRAN column `self.col`, or `None` (a ray).
    fn ratio_test(&mut self) -> Option<usize> {
        let n = self.n;
        let cmax = self.col.iter().fold(0.0f64, |m, c| m.max(c.abs()));
        let thr = self.s.pivot_tol * cmax.max(1.0);
        let mut theta = f64::INFINITY;
        for i in 0..n {
            if self.col[i] > thr {
                theta = theta.min(self.x[i].max(0.0) / self.col[i]);
            }
        }
        if !theta.is_finite() {
            return None;
        }
        // the tied rows; z0 leaves whenever it is among them
        let mut best: Option<usize> = None;
        let mut ties = 0usize;
        for i in 0..n {
            let c = self.col[i];
            if c > thr && self.tied(self.x[i].max(0.0) / c, theta) {
                if self.basis[i] == 2 * n {
                    return Some(i);
                }
                ties += 1;
                if best.is_none() {
                    best = Some(i);
                }
            }
        }
        let mut best = best?;
        if ties == 1 {
            return Some(best);
        }
        // lexicographic minimum of (B^-1)_(i, .) / c_i over the tied rows, pairwise
        let rep = self.rep.as_mut().expect("init builds the representation");
        rep.row(best, &mut self.row_a);
        for i in best + 1..n {
            let c = self.col[i];
            if !(c > thr && {
                let r = self.x[i].max(0.0) / c;
                (r - theta).abs() <= self.s.tie_tol * (1.0 + r.abs().max(theta.abs()))
            }) {
                continue;
            }
            rep.row(i, &mut self.row_b);
            let (cb, ci) = (self.col[best], c);
            let mut smaller = false;
            for j in 0..n {
                let (a, b) = (self.row_a[j] / cb, self.row_b[j] / ci);
                if (a - b).abs() <= self.s.tie_tol * (1.0 + a.abs().max(b.abs())) {
                    continue;
                }
                smaller = b < a;
                break;
            }
            if smaller {
                best = i;
                std::mem::swap(&mut self.row_a, &mut self.row_b);
            }
        }
        Some(best)
    }

    /// Exchange at row `r` for `entering` (its FTRAN column in `self.col`); returns the
    /// variable that left.
    fn exchange(&mut self, r: usize, entering: usize) -> usize {
        let p = self.col[r];
        let t = self.x[r] / p;
        for (xi, &ci) in self.x.iter_mut().zip(&self.col) {
            *xi -= ci * t;
        }
        self.x[r] = t;
        let rep = self.rep.as_mut().expect("init builds the representation");
        rep.pivot(r, &self.col);
        let leaving = self.basis[r];
        self.basis[r] = entering;
        self.pivots += 1;
        self.last_row = r;
        leaving
    }

    /// One pivot (the body of [`Solver::step`]), with the covering vector `d` lent.
    fn pivot_step(&mut self, problem: &Problem, state: &mut IterState, d: &[f64]) -> StepResult {
        let inst = problem.instance();
        let n = self.n;
        let q = inst.r();
        let sys = System { m: inst.n_mat(), d };
        let entering = match self.left {
            None => {
                // z0 enters; the lexicographically smallest (q_i, e_i) / d_i leaves: the
                // smallest q_i / d_i, the largest index among ties
                let best = (0..n).map(|i| q[i] / d[i]).fold(f64::INFINITY, f64::min);
                if !(best < 0.0) {
                    // q >= 0: z = 0 solves the LCP
                    state.gamma.fill(0.0);
                    self.end = Some(End::Trivial);
                    return Ok(StepOutcome::Finished(Status::Converged));
                }
                let rr = (0..n)
                    .rev()
                    .find(|&i| self.tied(q[i] / d[i], best))
                    .unwrap_or(0);
                self.last_row = rr;
                2 * n
            }
            Some(l) => {
                if l < n {
                    l + n
                } else {
                    l - n
                }
            }
        };
        let rep = self.rep.as_mut().expect("init builds the representation");
        rep.ftran(&sys, entering, &mut self.col);
        let r = if self.left.is_none() {
            self.last_row
        } else {
            match self.ratio_test() {
                Some(r) => r,
                None => {
                    self.end = Some(End::Ray { entering });
                    self.write_z(&mut state.gamma);
                    return Ok(StepOutcome::Finished(Status::RayTermination));
                }
            }
        };
        let leaving = self.exchange(r, entering);
        self.left = Some(leaving);
        if leaving == 2 * n {
            // solution: recompute x_B from a fresh factorisation of the final basis
            self.refactor(&sys, q)?;
            self.write_z(&mut state.gamma);
            self.end = Some(End::Solved);
            return Ok(StepOutcome::Finished(Status::Converged));
        }
        if self.rep.as_ref().is_some_and(|b| b.due()) {
            self.refactor(&sys, q)?;
        }
        self.last_z0 = self.z0();
        self.write_z(&mut state.gamma);
        if self.pivots >= self.max_pivots {
            self.end = Some(End::Budget);
            return Ok(StepOutcome::Finished(Status::MaxIterations));
        }
        Ok(StepOutcome::Continue)
    }

    fn z0(&self) -> f64 {
        let n = self.n;
        self.basis
            .iter()
            .position(|&v| v == 2 * n)
            .map_or(0.0, |k| self.x[k])
    }
}

impl Solver for Lemke {
    fn name(&self) -> &'static str {
        "lemke"
    }

    /// Any square `M` (and so, by the trait's default, the LCP class alone).
    fn solves_general_lcp(&self) -> bool {
        true
    }

    fn refusal(&self, instance: &cpbench_problems::Instance) -> Option<String> {
        match &self.s.covering {
            Some(d) if d.len() != instance.n() => Some(format!(
                "lemke: covering vector has length {}, the instance n = {}",
                d.len(),
                instance.n()
            )),
            _ => None,
        }
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        check_class(self, problem.instance().class())?;
        let inst = problem.instance();
        let n = inst.n();
        self.n = n;
        self.d = match &self.s.covering {
            Some(d) if d.len() == n => d.clone(),
            Some(d) => {
                return Err(SolverError::Refused(format!(
                    "lemke: covering vector has length {}, the instance n = {n}",
                    d.len()
                )))
            }
            None => vec![1.0; n],
        };
        let m = inst.n_mat();
        self.dense = match self.s.linear_algebra {
            LinearAlgebra::Dense => true,
            LinearAlgebra::Sparse => false,
            LinearAlgebra::Auto => n as u64 <= self.s.dense_max_n || m.nnz() * 10 > n * n,
        };
        let every = self.s.refactor_every as usize;
        self.rep = Some(if self.dense {
            Basis::Dense(Dense::new(n, every))
        } else {
            Basis::Sparse(Box::new(Sparse::new(n, m.nnz(), every)))
        });
        self.basis = (0..n).collect();
        self.x = inst.r().to_vec();
        self.col = vec![0.0; n];
        self.row_a = vec![0.0; n];
        self.row_b = vec![0.0; n];
        self.tmp = vec![0.0; n];
        self.left = None;
        self.pivots = 0;
        self.refactorisations = 0;
        self.max_pivots = self.s.max_pivots.unwrap_or(100 * n as u64 + 1000);
        self.end = None;
        self.last_z0 = 0.0;
        if !self.dense {
            let sys = System { m, d: &self.d };
            let rep = self.rep.as_mut().expect("just built");
            rep.refactor(&sys, &self.basis)?;
            self.refactorisations += 1;
        }
        state.gamma.fill(0.0);
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        // the covering vector is lent to the pivot (moving a Vec out and back allocates nothing)
        let d = std::mem::take(&mut self.d);
        let out = self.pivot_step(problem, state, &d);
        self.d = d;
        out
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("pivots", self.pivots as f64),
            ("refactorisations", self.refactorisations as f64),
        ]
    }

    fn message(&self) -> Option<String> {
        let la = if self.dense { "dense" } else { "sparse LU" };
        let p = self.pivots;
        Some(match self.end {
            Some(End::Solved) => format!("solution after {p} pivots ({la})"),
            Some(End::Trivial) => "q >= 0: z = 0 (no pivot)".into(),
            Some(End::Ray { entering }) => format!(
                "secondary ray after {p} pivots: no blocking variable for entering {} ({la})",
                self.name_of(entering)
            ),
            Some(End::Budget) => format!("pivot budget {} reached ({la})", self.max_pivots),
            None => format!("stopped after {p} pivots ({la})"),
        })
    }

    fn iter_info(&self) -> crate::observer::IterInfo {
        let mut i = crate::observer::IterInfo::new();
        i.push("z0", self.last_z0);
        i.push("pivot_row", self.last_row as f64);
        i
    }
}
