//! Enumeration of the complementary bases of an LCP `w = M z + q >= 0`, `z >= 0`, `z^T w = 0`
//! (cpbench: `M = N`, `q = r`, `z = gamma`): the exhaustive reference method (Murty 1988,
//! sec. 1.3 "complementary cones"; Siconos' `SICONOS_LCP_ENUM`).
//!
//! Every index set `alpha` of `{1..n}` (`2^n` of them, in the order of the bit masks
//! `0, 1, ..., 2^n - 1`, bit `i` set when `z_i` is basic) gives the complementary basis with
//! `z_alpha` and `w_(not alpha)` basic: solve `M_(alpha alpha) z_alpha = -q_alpha` by dense LU
//! with partial pivoting, `z_(not alpha) = 0`, `w = M z + q` (so `w_alpha = 0`). The basis is a
//! solution when `z_alpha >= -feas_tol s` and `w_(not alpha) >= -feas_tol s`,
//! `s = max(1, ||q||_inf)`. A principal submatrix whose LU meets a pivot below
//! `singular_tol max(1, max |M_(alpha alpha)|)` is skipped (its complementary cone is
//! degenerate; solutions lying only on such cones are not found).
//!
//! The whole enumeration is one `step`: the first solution found is `gamma`; every distinct
//! solution (two count as one when they agree to `1e-9 (1 + ||z||_inf)`) is listed in the
//! message when there is more than one, e.g. `3 solutions: [0, 1], [1, 0], [0.5, 0.5]`.
//! Without any solution the run ends as `stalled` with the message `no solution among the 2^n
//! complementary bases`. Instances with `n > 20` are refused (`2^20` bases, about a second).

use crate::kernels::check_class;
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::{SolverError, Status};
use cpbench_problems::Instance;
use serde::{Deserialize, Serialize};

/// Largest `n` that [`Enumerative`] takes (`2^n` complementary bases).
pub const ENUM_MAX_N: usize = 20;

/// Settings of [`Enumerative`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnumSettings {
    /// Feasibility tolerance: `z_alpha >= -feas_tol s` and `w >= -feas_tol s`,
    /// `s = max(1, ||q||_inf)`.
    pub feas_tol: f64,
    /// Relative pivot size under which a principal submatrix counts as singular and is skipped.
    pub singular_tol: f64,
    /// Stop at the first solution instead of listing all of them.
    pub first_only: bool,
}

impl Default for EnumSettings {
    fn default() -> Self {
        Self {
            feas_tol: 1e-10,
            singular_tol: 1e-13,
            first_only: false,
        }
    }
}

impl SolverSettings for EnumSettings {
    const SOLVER: &'static str = "enum";

    fn check(&self, v: &mut Validator) {
        v.non_negative("feas_tol", self.feas_tol).in_open(
            "singular_tol",
            self.singular_tol,
            0.0,
            1.0,
        );
    }
}

/// The enumerative LCP solver (see the module documentation).
pub struct Enumerative {
    s: EnumSettings,
    /// `M` dense, column-major.
    m: Vec<f64>,
    /// LU work matrix (column-major, leading dimension `n`) and right-hand side.
    lu: Vec<f64>,
    rhs: Vec<f64>,
    idx: Vec<usize>,
    z: Vec<f64>,
    w: Vec<f64>,
    solutions: Vec<Vec<f64>>,
    bases: u64,
    singular: u64,
    done: bool,
}

impl Enumerative {
    /// Validate the settings and build the solver. Errors: [`SolverError::OutOfRange`].
    pub fn new(s: EnumSettings) -> Result<Self, SolverError> {
        s.validate()?;
        Ok(Self {
            s,
            m: Vec::new(),
            lu: Vec::new(),
            rhs: Vec::new(),
            idx: Vec::new(),
            z: Vec::new(),
            w: Vec::new(),
            solutions: Vec::new(),
            bases: 0,
            singular: 0,
            done: false,
        })
    }

    /// The distinct solutions found by the last solve, in the order found.
    pub fn solutions(&self) -> &[Vec<f64>] {
        &self.solutions
    }

    /// Solve the complementary basis `mask`: `z` (and `w`) on success, `false` when the
    /// principal submatrix is singular.
    fn solve_basis(&mut self, n: usize, q: &[f64], mask: u32) -> bool {
        self.idx.clear();
        for i in 0..n {
            if mask & (1 << i) != 0 {
                self.idx.push(i);
            }
        }
        let k = self.idx.len();
        let mut scale = 1.0f64;
        for (a, &j) in self.idx.iter().enumerate() {
            for (b, &i) in self.idx.iter().enumerate() {
                let v = self.m[i + j * n];
                self.lu[b + a * k] = v;
                scale = scale.max(v.abs());
            }
            self.rhs[a] = -q[j];
        }
        // LU with partial pivoting, applied to rhs as it goes
        for c in 0..k {
            let (mut p, mut best) = (c, 0.0f64);
            for i in c..k {
                let a = self.lu[i + c * k].abs();
                if a > best {
                    (p, best) = (i, a);
                }
            }
            if !(best > self.s.singular_tol * scale) {
                return false;
            }
            if p != c {
                for j in 0..k {
                    self.lu.swap(p + j * k, c + j * k);
                }
                self.rhs.swap(p, c);
            }
            let piv = self.lu[c + c * k];
            for i in c + 1..k {
                let f = self.lu[i + c * k] / piv;
                if f != 0.0 {
                    for j in c + 1..k {
                        self.lu[i + j * k] -= f * self.lu[c + j * k];
                    }
                    self.rhs[i] -= f * self.rhs[c];
                }
            }
        }
        for c in (0..k).rev() {
            let mut s = self.rhs[c];
            for j in c + 1..k {
                s -= self.lu[c + j * k] * self.rhs[j];
            }
            self.rhs[c] = s / self.lu[c + c * k];
        }
        self.z.fill(0.0);
        for (a, &j) in self.idx.iter().enumerate() {
            self.z[j] = self.rhs[a];
        }
        // w = M z + q
        self.w.copy_from_slice(q);
        for &j in &self.idx {
            let zj = self.z[j];
            for i in 0..n {
                self.w[i] += self.m[i + j * n] * zj;
            }
        }
        true
    }
}

impl Solver for Enumerative {
    fn name(&self) -> &'static str {
        "enum"
    }

    /// Any square `M` (and so, by the trait's default, the LCP class alone).
    fn solves_general_lcp(&self) -> bool {
        true
    }

    fn refusal(&self, instance: &Instance) -> Option<String> {
        let n = instance.n();
        (n > ENUM_MAX_N).then(|| {
            format!(
                "enum enumerates the 2^n complementary bases and takes n <= {ENUM_MAX_N}; \
                 this LCP has n = {n}"
            )
        })
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        check_class(self, inst.class())?;
        if let Some(reason) = self.refusal(inst) {
            return Err(SolverError::Refused(reason));
        }
        let n = inst.n();
        let mat = inst.n_mat();
        self.m = vec![0.0; n * n];
        for j in 0..n {
            let (ri, va) = mat.col(j);
            for (&i, &v) in ri.iter().zip(va) {
                self.m[i + j * n] = v;
            }
        }
        self.lu = vec![0.0; n * n];
        self.rhs = vec![0.0; n];
        self.idx = Vec::with_capacity(n);
        self.z = vec![0.0; n];
        self.w = vec![0.0; n];
        self.solutions.clear();
        self.bases = 0;
        self.singular = 0;
        self.done = false;
        state.gamma.fill(0.0);
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let inst = problem.instance();
        let n = inst.n();
        let q = inst.r();
        let s = q.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let tol = self.s.feas_tol * s;
        for mask in 0..(1u32 << n) {
            self.bases += 1;
            if !self.solve_basis(n, q, mask) {
                self.singular += 1;
                continue;
            }
            let feasible = (0..n).all(|i| {
                let v = if mask & (1 << i) != 0 {
                    self.z[i]
                } else {
                    self.w[i]
                };
                v >= -tol && v.is_finite()
            });
            if !feasible {
                continue;
            }
            let znorm = self.z.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let same = self.solutions.iter().any(|o| {
                o.iter()
                    .zip(&self.z)
                    .all(|(a, b)| (a - b).abs() <= 1e-9 * (1.0 + znorm))
            });
            if !same {
                let z: Vec<f64> = self.z.iter().map(|v| v.max(0.0)).collect();
                self.solutions.push(z);
            }
            if self.s.first_only {
                break;
            }
        }
        self.done = true;
        match self.solutions.first() {
            Some(z) => {
                state.gamma.copy_from_slice(z);
                Ok(StepOutcome::Finished(Status::Converged))
            }
            None => Ok(StepOutcome::Finished(Status::Stalled)),
        }
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("bases", self.bases as f64),
            ("singular_bases", self.singular as f64),
            ("solutions", self.solutions.len() as f64),
        ]
    }

    fn message(&self) -> Option<String> {
        if !self.done {
            return None;
        }
        let fmt = |z: &Vec<f64>| {
            let parts: Vec<String> = z.iter().map(|v| format!("{v}")).collect();
            format!("[{}]", parts.join(", "))
        };
        match self.solutions.len() {
            0 => Some(format!(
                "no solution among the 2^n = {} complementary bases ({} singular skipped)",
                self.bases, self.singular
            )),
            1 => Some(format!(
                "1 solution among {} complementary bases ({} singular skipped)",
                self.bases, self.singular
            )),
            k => {
                let list: Vec<String> = self.solutions.iter().map(fmt).collect();
                Some(format!("{k} solutions: {}", list.join(", ")))
            }
        }
    }
}
