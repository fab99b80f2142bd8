//! Clarabel as an external reference solver: Goulart & Chen, "Clarabel: An interior-point
//! solver for conic programs with quadratic objectives", arXiv:2405.12762, 2024 (the `clarabel`
//! crate, pure Rust, its QDLDL factorisation).
//!
//! Clarabel solves
//!
//! ```text
//! min 1/2 x^T P x + q^T x   s.t.   A x + s = b,   s in C = C_1 x ... x C_k
//! ```
//!
//! with a homogeneous-embedding primal-dual interior-point method. Our problem
//! `min 1/2 gamma^T N gamma + r^T gamma` over `gamma in K` is passed as `x = gamma`,
//! `P = triu(N)` (Clarabel reads only the upper triangle), `q = r`, and `A, b, C` by class:
//!
//! - LCP, `K = R^n_+`: `A = -I`, `b = 0`, `C = R^n_+` (so `s = gamma >= 0`).
//! - box QP, `lo <= gamma <= hi`: a zero-cone row `gamma_i + s = lo_i`, `s = 0`, for every
//!   `lo_i = hi_i`; otherwise one non-negative row per finite bound, `-gamma_i + s = -lo_i`
//!   (`s = gamma_i - lo_i >= 0`) and `gamma_i + s = hi_i` (`s = hi_i - gamma_i >= 0`).
//!   The zero rows come first, then the non-negative rows: `C = {0}^{m_0} x R^{m_+}_+`.
//! - CCP, `K = prod_c K_mu_c` with `K_mu = {(x_n, x_t) : ||x_t|| <= mu x_n}` (normal first, then
//!   the two tangents): for `mu_c > 0` the rows `-diag(mu_c, 1, 1)` on contact `c`, `b = 0`, so
//!   `s = (mu_c x_n, x_t1, x_t2)` in the second-order cone `Q^3 = {(t, y) : ||y|| <= t}`
//!   (`K_mu = diag(1/mu, 1, 1) Q^3`). For `mu_c = 0`, `K_0 = {x_n >= 0, x_t = 0}`: a non-negative
//!   row `-x_n + s = 0` and two zero-cone rows `x_t + s = 0`. Rows are ordered zero rows, then
//!   non-negative rows, then one `Q^3` per contact with `mu > 0`, so consecutive cones of one type
//!   form one group: `C = {0}^{2 k_0} x R^{k_0}_+ x (Q^3)^{k_+}`.
//!
//! The KKT conditions of this conic QP, `P x + q + A^T z = 0`, `s in C`, `z in C^*`,
//! `s^T z = 0`, are the complementarity problem of docs/formulation.md section 2: `N gamma + r =
//! -A^T z` lies in `K^*` (for a cone, `diag(mu, 1, 1) z` with `z in Q^3` is in
//! `K_{1/mu} = K_mu^*`) and `s^T z = gamma^T (N gamma + r)`, so Clarabel's solution solves ours. `gamma` is Clarabel's `x` as returned, not projected onto `K`: the harness
//! measures the answer as given.
//!
//! The adapter is one-shot: [`Solver::init`] builds `P, q, A, b, C`; the first [`Solver::step`]
//! runs Clarabel to its own termination and returns [`StepOutcome::Finished`] with Clarabel's
//! status as the *claim*. Clarabel tests its own scaled primal/dual residuals and duality gap
//! (`tol_feas`, `tol_gap_abs`, `tol_gap_rel`), not the natural map; the executor recomputes the
//! harness residuals of the answer, so a claimed `Solved` whose natural-map residual exceeds the
//! tolerance shows as claimed success, checked failure. Clarabel has no warm start: a warm start
//! given to the executor is ignored. Clarabel never forms `N`-products through
//! [`Problem`], so the run's product count is 0; its work is in [`Solver::counters`].

use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::{SolverError, Status};
use clarabel::algebra::CscMatrix as ClCsc;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use cpbench_problems::ConicPiece;
use serde::{Deserialize, Serialize};

/// Settings of [`Clarabel`]: the fields of Clarabel's `DefaultSettings` that matter here, with
/// Clarabel 0.11's defaults, except `verbose` (off) and the linear solver (QDLDL, the only
/// one built: the crate's `faer` backend is not enabled). Missing fields take the defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClarabelSettings {
    /// Interior-point iteration limit (default 200).
    pub max_iter: u32,
    /// Time limit in seconds (default none).
    pub time_limit_s: Option<f64>,
    /// Print Clarabel's iteration log to stdout (default false).
    pub verbose: bool,
    /// Largest fraction of the step to the cone boundary (default 0.99), in (0, 1].
    pub max_step_fraction: f64,
    /// Absolute duality-gap tolerance (default 1e-8).
    pub tol_gap_abs: f64,
    /// Relative duality-gap tolerance (default 1e-8).
    pub tol_gap_rel: f64,
    /// Primal and dual feasibility tolerance, relative (default 1e-8).
    pub tol_feas: f64,
    /// Absolute infeasibility-certificate tolerance (default 1e-8).
    pub tol_infeas_abs: f64,
    /// Relative infeasibility-certificate tolerance (default 1e-8).
    pub tol_infeas_rel: f64,
    /// `kappa / tau` tolerance (default 1e-6).
    pub tol_ktratio: f64,
    /// Absolute gap tolerance for `AlmostSolved` (default 5e-5).
    pub reduced_tol_gap_abs: f64,
    /// Relative gap tolerance for `AlmostSolved` (default 5e-5).
    pub reduced_tol_gap_rel: f64,
    /// Feasibility tolerance for `AlmostSolved` (default 1e-4).
    pub reduced_tol_feas: f64,
    /// Ruiz equilibration of the data (default true).
    pub equilibrate_enable: bool,
    /// Equilibration iterations (default 10).
    pub equilibrate_max_iter: u32,
    /// Smallest equilibration scaling (default 1e-4).
    pub equilibrate_min_scaling: f64,
    /// Largest equilibration scaling (default 1e4).
    pub equilibrate_max_scaling: f64,
    /// Sparse LDL^T method: `qdldl` or `auto` (both QDLDL here; default `qdldl`).
    pub direct_solve_method: String,
    /// Static KKT regularisation (default true).
    pub static_regularization_enable: bool,
    /// Static regularisation constant (default 1e-8).
    pub static_regularization_constant: f64,
    /// Dynamic KKT regularisation (default true).
    pub dynamic_regularization_enable: bool,
    /// Dynamic regularisation threshold (default 1e-13).
    pub dynamic_regularization_eps: f64,
    /// Dynamic regularisation shift (default 2e-7).
    pub dynamic_regularization_delta: f64,
    /// Iterative refinement of the KKT solves (default true).
    pub iterative_refinement_enable: bool,
    /// Iterative refinement steps (default 10).
    pub iterative_refinement_max_iter: u32,
    /// Presolve: drop rows with infinite right-hand side (default true).
    pub presolve_enable: bool,
}

impl Default for ClarabelSettings {
    fn default() -> Self {
        let d = DefaultSettings::<f64>::default();
        Self {
            max_iter: d.max_iter,
            time_limit_s: None,
            verbose: false,
            max_step_fraction: d.max_step_fraction,
            tol_gap_abs: d.tol_gap_abs,
            tol_gap_rel: d.tol_gap_rel,
            tol_feas: d.tol_feas,
            tol_infeas_abs: d.tol_infeas_abs,
            tol_infeas_rel: d.tol_infeas_rel,
            tol_ktratio: d.tol_ktratio,
            reduced_tol_gap_abs: d.reduced_tol_gap_abs,
            reduced_tol_gap_rel: d.reduced_tol_gap_rel,
            reduced_tol_feas: d.reduced_tol_feas,
            equilibrate_enable: d.equilibrate_enable,
            equilibrate_max_iter: d.equilibrate_max_iter,
            equilibrate_min_scaling: d.equilibrate_min_scaling,
            equilibrate_max_scaling: d.equilibrate_max_scaling,
            direct_solve_method: "qdldl".into(),
            static_regularization_enable: d.static_regularization_enable,
            static_regularization_constant: d.static_regularization_constant,
            dynamic_regularization_enable: d.dynamic_regularization_enable,
            dynamic_regularization_eps: d.dynamic_regularization_eps,
            dynamic_regularization_delta: d.dynamic_regularization_delta,
            iterative_refinement_enable: d.iterative_refinement_enable,
            iterative_refinement_max_iter: d.iterative_refinement_max_iter,
            presolve_enable: d.presolve_enable,
        }
    }
}

impl SolverSettings for ClarabelSettings {
    const SOLVER: &'static str = "clarabel";

    fn check(&self, v: &mut Validator) {
        v.at_least("max_iter", self.max_iter.into(), 1)
            .positive_opt("time_limit_s", self.time_limit_s)
            .in_open_closed("max_step_fraction", self.max_step_fraction, 0.0, 1.0);
        for (field, x) in [
            ("tol_gap_abs", self.tol_gap_abs),
            ("tol_gap_rel", self.tol_gap_rel),
            ("tol_feas", self.tol_feas),
            ("tol_infeas_abs", self.tol_infeas_abs),
            ("tol_infeas_rel", self.tol_infeas_rel),
            ("tol_ktratio", self.tol_ktratio),
            ("reduced_tol_gap_abs", self.reduced_tol_gap_abs),
            ("reduced_tol_gap_rel", self.reduced_tol_gap_rel),
            ("reduced_tol_feas", self.reduced_tol_feas),
            ("equilibrate_min_scaling", self.equilibrate_min_scaling),
            ("equilibrate_max_scaling", self.equilibrate_max_scaling),
            (
                "static_regularization_constant",
                self.static_regularization_constant,
            ),
            (
                "dynamic_regularization_eps",
                self.dynamic_regularization_eps,
            ),
            (
                "dynamic_regularization_delta",
                self.dynamic_regularization_delta,
            ),
        ] {
            v.positive(field, x);
        }
        let (lo, hi) = (self.equilibrate_min_scaling, self.equilibrate_max_scaling);
        v.require("equilibrate_min_scaling", lo <= hi, lo, || {
            "<= equilibrate_max_scaling".into()
        })
        .one_of(
            "direct_solve_method",
            &self.direct_solve_method,
            &["qdldl", "auto"],
        );
    }
}

impl ClarabelSettings {
    /// Check ranges ([`SolverSettings::validate`]) and build Clarabel's settings. Errors:
    /// [`SolverError::OutOfRange`] for a zero `max_iter`, a non-positive or non-finite
    /// tolerance, time limit, scaling or regularisation, `max_step_fraction` outside (0, 1],
    /// `equilibrate_min_scaling > equilibrate_max_scaling`, or a `direct_solve_method` other
    /// than `qdldl` / `auto`.
    pub fn to_clarabel(&self) -> Result<DefaultSettings<f64>, SolverError> {
        self.validate()?;
        Ok(DefaultSettings {
            max_iter: self.max_iter,
            time_limit: self.time_limit_s.unwrap_or(f64::INFINITY),
            verbose: self.verbose,
            max_step_fraction: self.max_step_fraction,
            tol_gap_abs: self.tol_gap_abs,
            tol_gap_rel: self.tol_gap_rel,
            tol_feas: self.tol_feas,
            tol_infeas_abs: self.tol_infeas_abs,
            tol_infeas_rel: self.tol_infeas_rel,
            tol_ktratio: self.tol_ktratio,
            reduced_tol_gap_abs: self.reduced_tol_gap_abs,
            reduced_tol_gap_rel: self.reduced_tol_gap_rel,
            reduced_tol_feas: self.reduced_tol_feas,
            equilibrate_enable: self.equilibrate_enable,
            equilibrate_max_iter: self.equilibrate_max_iter,
            equilibrate_min_scaling: self.equilibrate_min_scaling,
            equilibrate_max_scaling: self.equilibrate_max_scaling,
            direct_solve_method: self.direct_solve_method.clone(),
            static_regularization_enable: self.static_regularization_enable,
            static_regularization_constant: self.static_regularization_constant,
            dynamic_regularization_enable: self.dynamic_regularization_enable,
            dynamic_regularization_eps: self.dynamic_regularization_eps,
            dynamic_regularization_delta: self.dynamic_regularization_delta,
            iterative_refinement_enable: self.iterative_refinement_enable,
            iterative_refinement_max_iter: self.iterative_refinement_max_iter,
            presolve_enable: self.presolve_enable,
            ..DefaultSettings::default()
        })
    }
}

/// The conic QP `min 1/2 x^T P x + q^T x, A x + s = b, s in C` handed to Clarabel
/// (module docs). `P` is `n x n` upper triangular, `A` is `m x n`, `b` has length `m`, and the
/// cone dimensions add up to `m`.
#[derive(Clone, Debug)]
pub struct ConicForm {
    /// `triu(N)`, CSC with sorted row indices.
    pub p: ClCsc<f64>,
    /// `q = r`.
    pub q: Vec<f64>,
    /// Constraint matrix, CSC with sorted row indices.
    pub a: ClCsc<f64>,
    /// Right-hand side.
    pub b: Vec<f64>,
    /// Cones, consecutive cones of one type grouped.
    pub cones: Vec<SupportedConeT<f64>>,
}

impl ConicForm {
    /// Build the conic form of `problem` (module docs). Allocates `O(nnz(N) + n)`.
    pub fn new(problem: &Problem) -> Self {
        let inst = problem.instance();
        let n = inst.n();
        let nm = inst.n_mat();
        // P = triu(N), rows sorted within each column.
        let (cp, ri, va) = (nm.col_ptr(), nm.row_idx(), nm.values());
        let mut colptr = Vec::with_capacity(n + 1);
        let mut rowval = Vec::with_capacity(nm.nnz() / 2 + n);
        let mut nzval = Vec::with_capacity(nm.nnz() / 2 + n);
        let mut col: Vec<(usize, f64)> = Vec::new();
        colptr.push(0);
        for j in 0..n {
            col.clear();
            col.extend(
                ri[cp[j]..cp[j + 1]]
                    .iter()
                    .zip(&va[cp[j]..cp[j + 1]])
                    .filter(|(&i, _)| i <= j)
                    .map(|(&i, &v)| (i, v)),
            );
            col.sort_unstable_by_key(|e| e.0);
            for &(i, v) in &col {
                rowval.push(i);
                nzval.push(v);
            }
            colptr.push(rowval.len());
        }
        let p = ClCsc::new(n, n, colptr, rowval, nzval);

        // Constraint rows as (row, col, value) with b; every column of A has at most 2 entries
        // (3 on a pyramid face). Built from the set's conic pieces
        // (`ConstraintSet::conic_pieces`): the zero-cone rows first (fixed unknowns, the
        // tangents of `mu = 0` cones), then the non-negative rows (bounds, `mu = 0` normals,
        // the faces of a friction pyramid), then one second-order cone of dimension `d` (3, or
        // 2 for a 2-D cone: `|x_t| <= mu x_n`) per contact with `mu > 0`.
        let mut rows: Vec<(usize, usize, f64)> = Vec::new();
        let mut b: Vec<f64> = Vec::new();
        let mut cones: Vec<SupportedConeT<f64>> = Vec::new();
        fn push_row(
            rows: &mut Vec<(usize, usize, f64)>,
            b: &mut Vec<f64>,
            col: usize,
            v: f64,
            rhs: f64,
        ) {
            rows.push((b.len(), col, v));
            b.push(rhs);
        }
        let pieces = inst.constraints().conic_pieces(n);
        let mut m0 = 0;
        for p in &pieces {
            match *p {
                ConicPiece::Interval { j, lo, hi } if lo == hi => {
                    push_row(&mut rows, &mut b, j, 1.0, lo);
                    m0 += 1;
                }
                ConicPiece::Cone { b: o, mu: 0.0, dim } => {
                    for t in 1..dim {
                        push_row(&mut rows, &mut b, o + t, 1.0, 0.0);
                        m0 += 1;
                    }
                }
                _ => {}
            }
        }
        let mut mp = 0;
        for p in &pieces {
            match *p {
                ConicPiece::HalfLine { j } => {
                    push_row(&mut rows, &mut b, j, -1.0, 0.0);
                    mp += 1;
                }
                ConicPiece::Interval { j, lo, hi } => {
                    if lo == hi {
                        continue;
                    }
                    if lo.is_finite() {
                        push_row(&mut rows, &mut b, j, -1.0, -lo);
                        mp += 1;
                    }
                    if hi.is_finite() {
                        push_row(&mut rows, &mut b, j, 1.0, hi);
                        mp += 1;
                    }
                }
                ConicPiece::Cone { b: o, mu, .. } => {
                    if mu == 0.0 {
                        push_row(&mut rows, &mut b, o, -1.0, 0.0);
                        mp += 1;
                    }
                }
                ConicPiece::FrictionPyramid { b: o, mu } => {
                    // Not reached through the executor: the BLCP is not a QP and clarabel
                    // refuses the class. The rows {x_n >= 0, mu x_n -+ x_t,i >= 0} of the fixed
                    // square pyramid (the QP over the box's set).
                    push_row(&mut rows, &mut b, o, -1.0, 0.0);
                    for i in 1..3 {
                        for sign in [1.0, -1.0] {
                            rows.push((b.len(), o, -mu));
                            push_row(&mut rows, &mut b, o + i, sign, 0.0);
                        }
                    }
                    mp += 5;
                }
            }
        }
        if m0 > 0 {
            cones.push(SupportedConeT::ZeroConeT(m0));
        }
        if mp > 0 {
            cones.push(SupportedConeT::NonnegativeConeT(mp));
        }
        for p in &pieces {
            if let ConicPiece::Cone { b: o, mu, dim } = *p {
                if mu > 0.0 {
                    push_row(&mut rows, &mut b, o, -mu, 0.0);
                    for t in 1..dim {
                        push_row(&mut rows, &mut b, o + t, -1.0, 0.0);
                    }
                    cones.push(SupportedConeT::SecondOrderConeT(dim));
                }
            }
        }
        let m = b.len();
        // CSC of A: sort the entries by column, then row.
        rows.sort_unstable_by_key(|&(i, j, _)| (j, i));
        let mut colptr = vec![0usize; n + 1];
        for &(_, j, _) in &rows {
            colptr[j + 1] += 1;
        }
        for j in 0..n {
            colptr[j + 1] += colptr[j];
        }
        let rowval = rows.iter().map(|e| e.0).collect();
        let nzval = rows.iter().map(|e| e.2).collect();
        let a = ClCsc::new(m, n, colptr, rowval, nzval);
        Self {
            p,
            q: inst.r().to_vec(),
            a,
            b,
            cones,
        }
    }
}

/// What Clarabel reported at the end of its run.
#[derive(Clone, Debug)]
struct Report {
    status: SolverStatus,
    iterations: u32,
    res_primal: f64,
    res_dual: f64,
    gap_abs: f64,
    gap_rel: f64,
    cost_primal: f64,
    solve_time: f64,
    kkt_nnz: usize,
    factor_nnz: usize,
}

/// Clarabel, one-shot (module docs). Supports every class.
#[derive(Clone, Debug)]
pub struct Clarabel {
    settings: ClarabelSettings,
    clarabel_settings: DefaultSettings<f64>,
    form: Option<ConicForm>,
    report: Option<Report>,
}

impl Clarabel {
    /// A Clarabel adapter; errors on invalid settings ([`ClarabelSettings::to_clarabel`]).
    pub fn new(settings: ClarabelSettings) -> Result<Self, SolverError> {
        let clarabel_settings = settings.to_clarabel()?;
        Ok(Self {
            settings,
            clarabel_settings,
            form: None,
            report: None,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &ClarabelSettings {
        &self.settings
    }

    /// Clarabel's claim mapped to a [`Status`]: `Solved` and `AlmostSolved` are `Converged`
    /// (the message says "almost solved"), iteration and time limits map to their statuses,
    /// `InsufficientProgress` to `Stalled`, and infeasibility certificates, numerical errors
    /// and anything else to `NumericalError`. Our problems are always feasible (`0 in K`);
    /// a dual infeasibility certificate means the instance is unbounded below (some `d in K`
    /// with `N d = 0`, `r^T d < 0`), and then the complementarity problem has no solution either.
    pub fn claim(status: SolverStatus) -> Status {
        match status {
            SolverStatus::Solved | SolverStatus::AlmostSolved => Status::Converged,
            SolverStatus::MaxIterations => Status::MaxIterations,
            SolverStatus::MaxTime => Status::MaxTime,
            SolverStatus::InsufficientProgress => Status::Stalled,
            _ => Status::NumericalError,
        }
    }
}

impl Solver for Clarabel {
    fn name(&self) -> &'static str {
        "clarabel"
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        self.form = Some(ConicForm::new(problem));
        self.report = None;
        Ok(())
    }

    fn step(&mut self, _problem: &Problem, state: &mut IterState) -> StepResult {
        if let Some(r) = &self.report {
            return Ok(StepOutcome::Finished(Self::claim(r.status)));
        }
        let f = self
            .form
            .as_ref()
            .ok_or_else(|| SolverError::Numerical("clarabel: step before init".into()))?;
        let mut solver = DefaultSolver::new(
            &f.p,
            &f.q,
            &f.a,
            &f.b,
            &f.cones,
            self.clarabel_settings.clone(),
        )
        .map_err(|e| SolverError::Numerical(format!("clarabel setup: {e}")))?;
        solver.solve();
        let info = &solver.info;
        let report = Report {
            status: solver.solution.status,
            iterations: info.iterations,
            res_primal: info.res_primal,
            res_dual: info.res_dual,
            gap_abs: info.gap_abs,
            gap_rel: info.gap_rel,
            cost_primal: info.cost_primal,
            solve_time: info.solve_time,
            kkt_nnz: info.linsolver.nnzA,
            factor_nnz: info.linsolver.nnzL,
        };
        state.gamma.copy_from_slice(&solver.solution.x);
        let claim = Self::claim(report.status);
        self.report = Some(report);
        Ok(StepOutcome::Finished(claim))
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        match &self.report {
            None => Vec::new(),
            Some(r) => vec![
                ("clarabel_iterations", r.iterations as f64),
                ("clarabel_res_primal", r.res_primal),
                ("clarabel_res_dual", r.res_dual),
                ("clarabel_gap_abs", r.gap_abs),
                ("clarabel_gap_rel", r.gap_rel),
                ("clarabel_cost_primal", r.cost_primal),
                ("clarabel_solve_time_s", r.solve_time),
                ("clarabel_kkt_nnz", r.kkt_nnz as f64),
                ("clarabel_factor_nnz", r.factor_nnz as f64),
            ],
        }
    }

    fn message(&self) -> Option<String> {
        let r = self.report.as_ref()?;
        let what = match r.status {
            SolverStatus::AlmostSolved => "almost solved (reduced accuracy)".to_string(),
            // Clarabel's own status names (`Solved`, `PrimalInfeasible`, ...), as its docs spell them
            s => format!("{s:?}"),
        };
        Some(format!(
            "clarabel: {what} in {} iterations, primal residual {:.1e}, dual residual {:.1e}, \
             gap abs {:.1e} rel {:.1e}, {:.3} s",
            r.iterations, r.res_primal, r.res_dual, r.gap_abs, r.gap_rel, r.solve_time
        ))
    }
}
