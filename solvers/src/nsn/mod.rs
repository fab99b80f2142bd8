//! The semismooth Newton family for the true Coulomb problem: `nsn-ac` (Alart-Curnier), `nsn-jm`
//! (Jean-Moreau), `nsn-nm` (natural map with De Saxce's velocity), `nsn-fb` (Fischer-Burmeister
//! function of the second-order cone with De Saxce's velocity). Alart & Curnier 1991, CMAME
//! 92, "A mixed formulation for frictional contact problems prone to Newton like solution
//! methods"; Christensen, Klarbring, Pang & Stromberg 1998, IJNME 42; Acary, Bremond & Huber
//! 2018, "On solving contact problems with Coulomb friction: formulations and numerical
//! comparisons", sec. 4 and 5; Fukushima, Luo & Tseng 2001, SIAM J. Optim. 12, and Chen &
//! Tseng 2005, Math. Program. 104, for the Fischer-Burmeister function of the second-order
//! cone; Siconos' `SICONOS_FRICTION_3D_NSN_AC`, `_NSN_JM`, `_NSN_NM`, `_NSN_FB`.
//!
//! Notation: fclib's `u = W r + q` is cpbench's `u = N gamma + r` (`W = N`, the reaction `r` is
//! our unknown `gamma`, fclib's `q` our linear term `r`); in this module `r` is the reaction
//! and `u` the velocity. `W` is used as stored (symmetric or not).
//!
//! The contact functions `F_c(r_c, u_c)` and their Jacobian elements `A_c = dF_c/dr_c`,
//! `B_c = dF_c/du_c` are in [`functions`]. `F(r) = 0` exactly when `r` solves the Coulomb
//! problem. One iteration:
//!
//! 1. `u = W r + q` (one counted product), `F` and the blocks `A_c`, `B_c`;
//! 2. the Newton matrix `J = A + B W`, assembled **sparse**: its pattern (the 3x3 blocks of
//!    `W`'s block rows plus the diagonal blocks, `nnz <= 3 nnz(W) + 9 nc`: linear in the
//!    contacts) and faer's symbolic LU are built once in `init`; each iteration writes the
//!    values in place and runs the numeric LU with partial pivoting (`crate::sparse_lu`);
//!    up to `dense_max_n` unknowns a dense LU is used instead;
//! 3. `J d = -F`; a line search on the merit `theta = 1/2 ||F||^2` along `d`: Goldstein-Price
//!    (`theta + (1 - sigma) t theta' <= theta(r + t d) <= theta + sigma t theta'`, bisection
//!    between the bounds, doubling `t` while no upper bound is known; the default, as
//!    Siconos' `SICONOS_FRICTION_3D_NSN_LINESEARCH_GOLDSTEINPRICE` with its 100 iterations),
//!    or Armijo backtracking `theta(r + t d) <= theta + sigma t theta'` (halving `t`; 20
//!    halvings in [`NsnSettings::ARMIJO`], the Newton phases of `ppa` and `nsgs-nsn`), with
//!    `theta' = -2 theta` for a Newton direction. On the 13 public 3-D Coulomb files (fc3d
//!    error 1e-8, at most 1e5 iterations and 60 s, no stall window) Goldstein-Price solves
//!    13 with `nsn-ac` where Armijo solved 8, 12 with `nsn-nm` (9), 12 with `nsn-fb` (10),
//!    9 with `nsn-jm` (7);
//! 4. when `J` is singular (a rank-deficient `W` makes the rows of sticking contacts
//!    dependent), `d` not finite, or its line search fails: the regularised directions
//!    `(J + lambda I) d = -F` with `lambda = ||F||` times `1e-2, 1, 1e2, 1e4` in turn (the
//!    Levenberg-Marquardt parameter of Fan & Yuan 2005, Computing 74, applied to `J` itself),
//!    each with Armijo when it descends (slope `F . J d`, one counted product); then the
//!    steepest descent direction of the merit, `d = -J^T F` (`theta' = -||J^T F||^2`), with
//!    Armijo and twice the halvings; when that fails too, the solve ends `stalled`.
//!
//! The steps `rho` per contact ([`RhoStrategy`], Siconos' `SICONOS_FRICTION_3D_NSN_RHO_STRATEGY`):
//! `spectral-norm` `rho_n = rho_t = 1 / lambda_max(sym(W_cc))` (the default, as before),
//! `split-spectral-norm` `rho_n = 1 / W_cc[n, n]`, `rho_t = 1 / lambda_max(sym(W_cc)_TT)`,
//! `constant` `rho_n = rho_t = rho`.
//!
//! A proximal mode ([`Nsn::set_proximal`], used by [`crate::ppa`]) solves instead the problem
//! with `W + alpha I` and `q - alpha centre`: `u` gains `alpha (r - centre)`, `J` gains `alpha
//! B`, and the steps `rho` come from `W_cc + alpha I`.
//!
//! 3-D contacts only; 2-D instances go through the exact 3-D embedding ([`crate::embed`]).
//! Counters: `halvings`, `gradient_steps` (iterations on the descent direction),
//! `factorisations`, `pattern_nnz` (stored entries of `J`). `step` allocates nothing on the
//! sparse path; the dense path (small `n`) allocates its `n x n` matrix.

pub mod functions;

use crate::kernels::{coulomb_mu, lambda_max3, sym_part3};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::sparse_lu::SparseLu;
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::CscMatrix;
use faer::linalg::solvers::Solve;
use faer::Mat;
pub use functions::Function;
use serde::{Deserialize, Serialize};

/// The shifts of the regularised directions `(J + lambda I) d = -F` tried in turn when the
/// Newton direction fails, as multiples of `||F||`.
const SHIFT_SCALES: [f64; 4] = [1e-2, 1.0, 1e2, 1e4];

/// The line search on the merit `1/2 ||F||^2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineSearch {
    /// The full Newton step, whatever the merit does (non-monotone).
    None,
    /// Backtracking by halving until the Armijo condition holds.
    Armijo,
    /// Goldstein-Price: both the sufficient-decrease and the not-too-short condition, by
    /// bisection (a unit step that satisfies Armijo but not the lower bound is accepted).
    GoldsteinPrice,
}

/// The steps `rho_n`, `rho_t` of each contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RhoStrategy {
    /// `rho_n = rho_t = 1 / lambda_max(sym(W_cc))`.
    SpectralNorm,
    /// `rho_n = 1 / W_cc[n, n]`, `rho_t = 1 / lambda_max` of the tangential 2x2 block of
    /// `sym(W_cc)`.
    SplitSpectralNorm,
    /// `rho_n = rho_t = rho` (the setting `rho`).
    Constant,
}

/// Settings of the `nsn-*` solvers (shared; the function is the solver's name). Defaults:
/// Siconos' line search, Goldstein-Price with `sigma = 1e-4` and at most 100 bisections
/// (`SolverOptions(SICONOS_FRICTION_3D_NSN_AC)` of Siconos 4.4: `iparam[11]` =
/// `SICONOS_FRICTION_3D_NSN_LINESEARCH_GOLDSTEINPRICE`, `iparam[12]` = 100 line-search
/// iterations), spectral-norm steps, the sparse LU above 90 unknowns (30 contacts).
/// [`NsnSettings::ARMIJO`] is the earlier default (Armijo, 20 halvings), which the Newton
/// phases of `ppa` and `nsgs-nsn` keep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NsnSettings {
    /// The line search on the merit `1/2 ||F||^2`.
    pub line_search: LineSearch,
    /// Sufficient-decrease constant `sigma`, in `(0, 1/2)`.
    pub sigma: f64,
    /// Largest number of step halvings per Newton direction (`>= 1`; the descent fallback
    /// gets twice as many).
    pub max_halvings: u32,
    /// How the steps `rho` of each contact are set.
    pub rho_strategy: RhoStrategy,
    /// The step of the `constant` strategy (`> 0`).
    pub rho: f64,
    /// Largest `n` factorised by a dense LU (`8 n^2` bytes); above, the sparse LU.
    pub dense_max_n: usize,
}

impl Default for NsnSettings {
    /// Siconos' line search: Goldstein-Price, at most 100 bisections (the struct's docs).
    fn default() -> Self {
        Self {
            line_search: LineSearch::GoldsteinPrice,
            max_halvings: 100,
            ..Self::ARMIJO
        }
    }
}

impl NsnSettings {
    /// Armijo backtracking with `sigma = 1e-4` and at most 20 halvings, spectral-norm steps,
    /// the sparse LU above 90 unknowns: the `nsn-*` default before Siconos' line search
    /// became it (issue 31), kept by the Newton phases of `ppa` and `nsgs-nsn`, whose
    /// behaviour is unchanged.
    pub const ARMIJO: Self = Self {
        line_search: LineSearch::Armijo,
        sigma: 1e-4,
        max_halvings: 20,
        rho_strategy: RhoStrategy::SpectralNorm,
        rho: 1.0,
        dense_max_n: 90,
    };

    /// Deserialise settings whose missing fields take [`NsnSettings::ARMIJO`]'s values, not
    /// the `nsn-*` defaults: the field `nsn` of `ppa`'s and `nsgs-nsn`'s settings, so that
    /// `{"nsn": {"rho_strategy": "constant"}}` keeps their Armijo line search. Errors: as the
    /// struct's own (unknown field, wrong type).
    pub fn deserialize_over_armijo<'de, D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        use serde::de::Error;
        let given = serde_json::Value::deserialize(deserializer)?;
        let serde_json::Value::Object(given) = given else {
            return Err(D::Error::custom("expected an object of nsn-* settings"));
        };
        let mut base = serde_json::to_value(Self::ARMIJO).map_err(D::Error::custom)?;
        let obj = base
            .as_object_mut()
            .expect("settings serialise to an object");
        obj.extend(given);
        serde_json::from_value(base).map_err(D::Error::custom)
    }
}

impl SolverSettings for NsnSettings {
    const SOLVER: &'static str = "nsn-*";

    fn check(&self, v: &mut Validator) {
        v.in_open("sigma", self.sigma, 0.0, 0.5)
            .at_least("max_halvings", self.max_halvings.into(), 1)
            .positive("rho", self.rho);
    }
}

/// The Newton matrix `J = A + B W` in a fixed sparse pattern, with the map from `W`'s entries
/// and the diagonal blocks to its values.
struct SparseJacobian {
    lu: SparseLu,
    /// For stored entry `p` of `W` (row `i`, column `j`) and `k = 0, 1, 2`: the position of
    /// `J[3 c(i) + k, j]`.
    w_pos: Vec<usize>,
    /// For contact `c` and `(k, l)`: the position of `J[3c + k, 3c + l]`.
    a_pos: Vec<usize>,
}

impl SparseJacobian {
    /// The pattern of `J` for `W` (`n = 3 nc`): in column `j`, the three rows of every contact
    /// with an entry of `W` in that column, and the rows of `j`'s own contact.
    fn new(w: &CscMatrix) -> Result<Self, SolverError> {
        let n = w.ncols();
        let nc = n / 3;
        let (cp, ri) = (w.col_ptr(), w.row_idx());
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx: Vec<usize> = Vec::with_capacity(3 * w.nnz() + 9 * nc);
        let mut contacts: Vec<usize> = Vec::new();
        col_ptr.push(0);
        for j in 0..n {
            contacts.clear();
            contacts.push(j / 3);
            contacts.extend(ri[cp[j]..cp[j + 1]].iter().map(|&i| i / 3));
            contacts.sort_unstable();
            contacts.dedup();
            for &c in &contacts {
                row_idx.extend(3 * c..3 * c + 3);
            }
            col_ptr.push(row_idx.len());
        }
        // positions: binary search of the contact's first row within its column
        let find = |j: usize, row: usize| -> usize {
            let s = &row_idx[col_ptr[j]..col_ptr[j + 1]];
            col_ptr[j] + s.binary_search(&row).expect("row in the pattern")
        };
        let mut w_pos = vec![0; 3 * w.nnz()];
        for j in 0..n {
            for p in cp[j]..cp[j + 1] {
                let first = find(j, 3 * (ri[p] / 3));
                for k in 0..3 {
                    w_pos[3 * p + k] = first + k;
                }
            }
        }
        let mut a_pos = vec![0; 9 * nc];
        for c in 0..nc {
            for l in 0..3 {
                let first = find(3 * c + l, 3 * c);
                for k in 0..3 {
                    a_pos[9 * c + 3 * k + l] = first + k;
                }
            }
        }
        Ok(Self {
            lu: SparseLu::new(n, col_ptr, row_idx)?,
            w_pos,
            a_pos,
        })
    }

    /// Write `J + shift I = A + shift I + B (W + alpha I)` into the values (`ab[c] = (A_c,
    /// B_c)`; `shifts = (shift, alpha)`).
    fn assemble(&mut self, w: &CscMatrix, ab: &[([f64; 9], [f64; 9])], shifts: (f64, f64)) {
        let values = self.lu.values_mut();
        values.fill(0.0);
        for (c, (a, b)) in ab.iter().enumerate() {
            let d = diagonal_block(a, b, shifts);
            for (e, &pos) in self.a_pos[9 * c..9 * c + 9].iter().enumerate() {
                values[pos] += d[e];
            }
        }
        let (ri, va) = (w.row_idx(), w.values());
        for (p, (&i, &v)) in ri.iter().zip(va).enumerate() {
            let (b, li) = (&ab[i / 3].1, i % 3);
            for k in 0..3 {
                values[self.w_pos[3 * p + k]] += b[3 * k + li] * v;
            }
        }
    }

    /// `out = J^T f` from the stored values.
    fn transpose_times(&self, f: &[f64], out: &mut [f64]) {
        let (cp, ri, va) = (self.lu.col_ptr(), self.lu.row_idx(), self.lu.values());
        for (j, o) in out.iter_mut().enumerate() {
            *o = (cp[j]..cp[j + 1]).map(|p| va[p] * f[ri[p]]).sum();
        }
    }
}

/// The linear algebra of the Newton equation.
enum Linear {
    /// Dense LU of `J` (small `n`); `J` is kept for the descent direction.
    Dense(Mat<f64>),
    /// Sparse LU in a fixed pattern.
    Sparse(Box<SparseJacobian>),
}

/// The counters of an [`Nsn`] run (module docs).
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Step halvings of the line searches.
    halvings: u64,
    /// Regularised directions `(J + s ||F|| I) d = -F` tried.
    shifted_steps: u64,
    /// Iterations on the descent direction.
    gradient_steps: u64,
    /// Factorisations of the Jacobian.
    factorisations: u64,
}

/// Semismooth Newton on a contact function ([`cpbench_problems::ProblemClass::Coulomb`]
/// only).
pub struct Nsn {
    name: &'static str,
    function: Function,
    settings: NsnSettings,
    rho: Vec<[f64; 2]>,
    u: Vec<f64>,
    f: Vec<f64>,
    d: Vec<f64>,
    trial: Vec<f64>,
    /// Per contact `(A_c, B_c)`, row-major 3x3 each.
    ab: Vec<([f64; 9], [f64; 9])>,
    linear: Option<Linear>,
    /// The merit `1/2 ||F||^2` at the start of the last step.
    merit: f64,
    /// The proximal weight `alpha` of [`Nsn::set_proximal`] (0: the plain problem) and its
    /// centre (length `n` once set).
    alpha: f64,
    centre: Vec<f64>,
    /// The counters (reset at `init`).
    counts: Counts,
}

impl Nsn {
    /// `nsn-ac`: the Alart-Curnier function. Errors: invalid settings.
    pub fn alart_curnier(settings: NsnSettings) -> Result<Self, SolverError> {
        Self::with_function(Function::AlartCurnier, settings)
    }

    /// `nsn-jm`: the Jean-Moreau function. Errors: invalid settings.
    pub fn jean_moreau(settings: NsnSettings) -> Result<Self, SolverError> {
        Self::with_function(Function::JeanMoreau, settings)
    }

    /// `nsn-nm`: the natural map with De Saxce's velocity. Errors: invalid settings.
    pub fn natural_map(settings: NsnSettings) -> Result<Self, SolverError> {
        Self::with_function(Function::NaturalMap, settings)
    }

    /// `nsn-fb`: the Fischer-Burmeister function of the second-order cone with De Saxce's
    /// velocity. Errors: invalid settings.
    pub fn fischer_burmeister(settings: NsnSettings) -> Result<Self, SolverError> {
        Self::with_function(Function::FischerBurmeister, settings)
    }

    /// The solver of `function` (named `nsn-ac`, `nsn-jm`, `nsn-nm` or `nsn-fb`). Errors:
    /// invalid settings.
    pub fn with_function(function: Function, settings: NsnSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        let name = match function {
            Function::AlartCurnier => "nsn-ac",
            Function::JeanMoreau => "nsn-jm",
            Function::NaturalMap => "nsn-nm",
            Function::FischerBurmeister => "nsn-fb",
        };
        Ok(Self {
            name,
            function,
            settings,
            rho: Vec::new(),
            u: Vec::new(),
            f: Vec::new(),
            d: Vec::new(),
            trial: Vec::new(),
            ab: Vec::new(),
            linear: None,
            merit: f64::INFINITY,
            alpha: 0.0,
            centre: Vec::new(),
            counts: Counts::default(),
        })
    }

    /// Make the problem proximal (the proximal point algorithm, Rockafellar 1976; Acary,
    /// Bremond & Huber 2018, sec. 5): from now on `u = (W + alpha I) r + q - alpha centre`, so
    /// that a root of `F` solves the Coulomb problem with `W + alpha I` and `q - alpha centre`
    /// (at a fixed point `r = centre` that is the original problem); the steps `rho` are set
    /// anew from the blocks `W_cc + alpha I`. `alpha = 0` restores the plain problem. Call
    /// after `init`; `centre` has length `n`. Allocates only on the first call.
    pub fn set_proximal(&mut self, problem: &Problem, alpha: f64, centre: &[f64]) {
        self.alpha = alpha;
        self.centre.clear();
        self.centre.extend_from_slice(centre);
        self.set_rho(problem);
    }

    /// The steps `rho` of every contact from `W_cc + alpha I`.
    fn set_rho(&mut self, problem: &Problem) {
        let inst = problem.instance();
        let s = &self.settings;
        for (c, rho) in self.rho.iter_mut().enumerate() {
            let mut wcc = inst.diag_block(c);
            for k in [0, 4, 8] {
                wcc[k] += self.alpha;
            }
            *rho = contact_rho(s.rho_strategy, s.rho, &wcc);
        }
    }

    /// One Newton step from `state.gamma` (module documentation), unless the merit there is
    /// already at most `target`: then `None` and nothing moves (one product spent on the
    /// merit, [`Nsn::merit`] holds it). `Some(Stalled)` when no direction decreases the merit.
    /// Errors: not a Coulomb instance.
    pub fn step_unless(
        &mut self,
        problem: &Problem,
        state: &mut IterState,
        target: f64,
    ) -> Result<Option<StepOutcome>, SolverError> {
        let inst = problem.instance();
        let mu = coulomb_mu(self, inst)?;
        let theta0 = self.eval(problem, &state.gamma, mu, true);
        self.merit = theta0;
        if theta0 <= target {
            return Ok(None);
        }
        let (kind, h) = (self.settings.line_search, self.settings.max_halvings);
        if self.newton_direction(inst.n_mat(), 0.0)
            && self.line_search(problem, state, mu, theta0, -2.0 * theta0, (kind, h))
        {
            return Ok(Some(StepOutcome::Continue));
        }
        // J singular (a rank-deficient W makes the rows of sticking contacts dependent), d not
        // finite, or no decrease: the regularised direction (J + ||F|| I) d = -F (the shift of
        // Levenberg-Marquardt's lambda = ||F||, Fan & Yuan 2005), Armijo along it when it
        // descends
        let norm_f = (2.0 * theta0).sqrt();
        for scale in SHIFT_SCALES {
            self.counts.shifted_steps += 1;
            if self.newton_direction(inst.n_mat(), scale * norm_f) {
                let slope = self.slope(problem);
                if slope < 0.0
                    && self.line_search(problem, state, mu, theta0, slope, (LineSearch::Armijo, h))
                {
                    return Ok(Some(StepOutcome::Continue));
                }
            }
        }
        // J singular, d not finite, or no decrease along d: steepest descent of the merit
        self.counts.gradient_steps += 1;
        let slope = self.descent_direction();
        if slope < 0.0
            && self.line_search(
                problem,
                state,
                mu,
                theta0,
                slope,
                (LineSearch::Armijo, 2 * h),
            )
        {
            Ok(Some(StepOutcome::Continue))
        } else {
            Ok(Some(StepOutcome::Stalled))
        }
    }

    /// The merit `1/2 ||F||^2` at the start of the last step (infinite before the first).
    pub fn merit(&self) -> f64 {
        self.merit
    }

    /// `F(r)` into `self.f` (after `u = W r + q` into `self.u`, one counted product, plus
    /// `alpha (r - centre)` on a proximal problem) and the merit `1/2 ||F||^2`; with `jac`,
    /// also the blocks `(A_c, B_c)`.
    fn eval(&mut self, problem: &Problem, r: &[f64], mu: &[f64], jac: bool) -> f64 {
        problem.gradient(r, &mut self.u);
        if self.alpha > 0.0 {
            for ((u, x), c) in self.u.iter_mut().zip(r).zip(&self.centre) {
                *u += self.alpha * (x - c);
            }
        }
        let mut theta = 0.0;
        for (c, &m) in mu.iter().enumerate() {
            let o = 3 * c;
            let (rr, uu) = (&r[o..o + 3], &self.u[o..o + 3]);
            let fc = &mut self.f[o..o + 3];
            let blocks = if jac {
                let (a, b) = &mut self.ab[c];
                Some((a, b))
            } else {
                None
            };
            functions::eval(self.function, rr, uu, m, self.rho[c], fc, blocks);
            theta += fc.iter().map(|v| v * v).sum::<f64>();
        }
        0.5 * theta
    }

    /// The merit at `r + t d` (into `self.trial`), one product.
    fn merit_at(&mut self, problem: &Problem, r: &[f64], mu: &[f64], t: f64) -> f64 {
        for ((x, ri), di) in self.trial.iter_mut().zip(r).zip(&self.d) {
            *x = ri + t * di;
        }
        let trial = std::mem::take(&mut self.trial);
        let theta = self.eval(problem, &trial, mu, false);
        self.trial = trial;
        theta
    }

    /// A line search of `kind` with at most `halvings` halvings along `self.d` from
    /// `state.gamma` (merit `theta0`, slope `slope < 0`); on success `state.gamma` moves and `true` is returned.
    fn line_search(
        &mut self,
        problem: &Problem,
        state: &mut IterState,
        mu: &[f64],
        theta0: f64,
        slope: f64,
        (kind, halvings): (LineSearch, u32),
    ) -> bool {
        let sigma = self.settings.sigma;
        if kind == LineSearch::None {
            for (x, d) in state.gamma.iter_mut().zip(&self.d) {
                *x += d;
            }
            return true;
        }
        let (mut lo, mut hi, mut t) = (0.0f64, f64::INFINITY, 1.0f64);
        for _ in 0..=halvings {
            let theta = self.merit_at(problem, &state.gamma, mu, t);
            if !(theta <= theta0 + sigma * t * slope) {
                hi = t;
            } else if kind == LineSearch::GoldsteinPrice
                && theta < theta0 + (1.0 - sigma) * t * slope
                && t < 1.0
            {
                lo = t;
            } else {
                state.gamma.copy_from_slice(&self.trial);
                return true;
            }
            t = if hi.is_finite() {
                0.5 * (lo + hi)
            } else {
                2.0 * t
            };
            self.counts.halvings += 1;
        }
        false
    }

    /// The Newton direction `(J + shift I) d = -F` into `self.d` (`J` assembled from
    /// `self.ab`); `false` when the matrix is singular or `d` is not finite.
    fn newton_direction(&mut self, w: &CscMatrix, shift: f64) -> bool {
        self.counts.factorisations += 1;
        for (d, f) in self.d.iter_mut().zip(&self.f) {
            *d = -f;
        }
        match self.linear.as_mut().expect("set in init") {
            Linear::Sparse(jac) => {
                jac.assemble(w, &self.ab, (shift, self.alpha));
                if !jac.lu.solve(&mut self.d) {
                    return false;
                }
            }
            Linear::Dense(jm) => {
                dense_jacobian(jm, w, &self.ab, (shift, self.alpha));
                let rhs = faer::ColRef::from_slice(&self.d);
                let x = jm.partial_piv_lu().solve(rhs);
                for (d, v) in self.d.iter_mut().zip(x.iter()) {
                    *d = *v;
                }
            }
        }
        self.d.iter().all(|v| v.is_finite())
    }

    /// The merit's slope along `self.d`, `(J^T F) . d = F . (J d)`, with `J` from the blocks
    /// (one product with `W`: `J d = A d + B (W d + alpha d)`, counted).
    fn slope(&mut self, problem: &Problem) -> f64 {
        problem.instance().matvec(&self.d, &mut self.trial);
        problem.add_matvecs(1);
        let mut s = 0.0;
        for (c, (a, b)) in self.ab.iter().enumerate() {
            let o = 3 * c;
            let (dc, wd) = (&self.d[o..o + 3], &self.trial[o..o + 3]);
            for k in 0..3 {
                let jd: f64 = (0..3)
                    .map(|l| a[3 * k + l] * dc[l] + b[3 * k + l] * (wd[l] + self.alpha * dc[l]))
                    .sum();
                s += self.f[o + k] * jd;
            }
        }
        s
    }

    /// The steepest descent direction of the merit, `d = -J^T F`, into `self.d`; returns
    /// the slope `-||J^T F||^2`. `J` is the last matrix assembled (with its shift).
    fn descent_direction(&mut self) -> f64 {
        match self.linear.as_ref().expect("set in init") {
            Linear::Sparse(jac) => jac.transpose_times(&self.f, &mut self.d),
            Linear::Dense(jm) => {
                for (j, d) in self.d.iter_mut().enumerate() {
                    *d = (0..self.f.len()).map(|i| jm[(i, j)] * self.f[i]).sum();
                }
            }
        }
        let mut s = 0.0;
        for d in &mut self.d {
            *d = -*d;
            s += *d * *d;
        }
        -s
    }
}

/// The part of contact `c`'s diagonal block of the Newton matrix that does not come from `W`:
/// `A_c + shift I + alpha B_c` (row-major; `shifts = (shift, alpha)`).
#[inline]
fn diagonal_block(a: &[f64; 9], b: &[f64; 9], (shift, alpha): (f64, f64)) -> [f64; 9] {
    std::array::from_fn(|e| a[e] + alpha * b[e] + if e % 4 == 0 { shift } else { 0.0 })
}

/// `J + shift I = A + shift I + B (W + alpha I)` written into the dense `jm` (`n x n`;
/// `shifts = (shift, alpha)`).
fn dense_jacobian(
    jm: &mut Mat<f64>,
    w: &CscMatrix,
    ab: &[([f64; 9], [f64; 9])],
    shifts: (f64, f64),
) {
    jm.fill(0.0);
    for (c, (a, b)) in ab.iter().enumerate() {
        let d = diagonal_block(a, b, shifts);
        for k in 0..3 {
            for l in 0..3 {
                jm[(3 * c + k, 3 * c + l)] += d[3 * k + l];
            }
        }
    }
    for col in 0..w.ncols() {
        let (rows, vals) = w.col(col);
        for (&i, &v) in rows.iter().zip(vals) {
            let (b, li) = (&ab[i / 3].1, i % 3);
            for k in 0..3 {
                jm[(3 * (i / 3) + k, col)] += b[3 * k + li] * v;
            }
        }
    }
}

/// The steps of contact `c` by `strategy` from its diagonal block `W_cc` (row-major).
fn contact_rho(strategy: RhoStrategy, rho: f64, wcc: &[f64; 9]) -> [f64; 2] {
    let inv = |l: f64| {
        if l > 0.0 && l.is_finite() {
            1.0 / l
        } else {
            1.0
        }
    };
    let s = sym_part3(wcc);
    match strategy {
        RhoStrategy::Constant => [rho, rho],
        RhoStrategy::SpectralNorm => {
            let r = inv(lambda_max3(&s));
            [r, r]
        }
        RhoStrategy::SplitSpectralNorm => {
            // the larger eigenvalue of the tangential 2x2 block [s4 s5; s7 s8]
            let (a, b, d) = (s[4], s[5], s[8]);
            let l = 0.5 * (a + d) + (0.25 * (a - d) * (a - d) + b * b).sqrt();
            [inv(s[0]), inv(l)]
        }
    }
}

impl Solver for Nsn {
    crate::solver::coulomb_solver!(self.name);

    /// 3-D contacts only (the Alart-Curnier, Jean-Moreau, natural-map and Fischer-Burmeister
    /// Jacobians are written for two tangents); 2-D instances go through the embedding.
    fn handles_cone_dim(&self, dim: usize) -> bool {
        dim == 3
    }

    fn init(&mut self, problem: &Problem, _state: &mut IterState) -> Result<(), SolverError> {
        let inst = problem.instance();
        let n = problem.n();
        let nc = n / 3;
        self.alpha = 0.0;
        self.rho = vec![[1.0; 2]; nc];
        self.set_rho(problem);
        self.u = vec![0.0; n];
        self.f = vec![0.0; n];
        self.d = vec![0.0; n];
        self.trial = vec![0.0; n];
        self.ab = vec![([0.0; 9], [0.0; 9]); nc];
        self.linear = Some(if n <= self.settings.dense_max_n {
            Linear::Dense(Mat::zeros(n, n))
        } else {
            Linear::Sparse(Box::new(SparseJacobian::new(inst.n_mat())?))
        });
        self.counts = Counts::default();
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        Ok(self
            .step_unless(problem, state, 0.0)?
            .unwrap_or(StepOutcome::Stalled))
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let nnz = match &self.linear {
            Some(Linear::Sparse(j)) => j.lu.row_idx().len(),
            Some(Linear::Dense(m)) => m.nrows() * m.ncols(),
            None => 0,
        };
        vec![
            ("halvings", self.counts.halvings as f64),
            ("shifted_steps", self.counts.shifted_steps as f64),
            ("gradient_steps", self.counts.gradient_steps as f64),
            ("factorisations", self.counts.factorisations as f64),
            ("pattern_nnz", nnz as f64),
        ]
    }
}
