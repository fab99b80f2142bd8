//! APGD: accelerated projected gradient descent with Lipschitz backtracking and adaptive
//! restart, exactly as Mazhar, Heyn, Negrut & Tasora, "Using Nesterov's method to accelerate
//! multibody dynamics with friction and contact", ACM ToG 34(3), 2015, Algorithm 2 (Chrono's
//! `APGDREF`):
//!
//! ```text
//! L = ||N (gamma_0 - 1)|| / ||gamma_0 - 1||, y = gamma_0, theta = 1
//! loop:  g = N y + r
//!        x = P_K(y - g / L)
//!        while (x - y)^T N (x - y) > L ||x - y||^2:  L <- 2L,  x = P_K(y - g / L)
//!        theta' = (-theta^2 + theta sqrt(theta^2 + 4)) / 2,  beta = theta (1 - theta) / (theta^2 + theta')
//!        y = x + beta (x - gamma_k)
//!        if g^T (x - gamma_k) > 0:  y = x, theta' = 1          (adaptive restart)
//!        gamma_{k+1} = x,  theta = theta',  L <- 0.9 L
//! ```
//!
//! The sufficient-decrease test is written as `(x - y)^T N (x - y) > L ||x - y||^2`, which is
//! algebraically the paper's `f(x) > f(y) + g^T (x - y) + L/2 ||x - y||^2` but free of the
//! cancellation of large `f` values that makes the literal test fail near 1e-8.
//! `N y` is never formed by a product: `N y_{k+1} = (1 + beta) N x - beta N gamma_k` from two
//! fresh products, so an iteration costs one product per trial point. The best iterate is kept
//! by the executor.
//!
//! Besides the product, an iteration makes three fused passes over the vectors (chunked by
//! [`crate::kernels::vec_chunk`]): (1) the trial point `x = P_K(y - (N y + r) / L)`, projected chunk by
//! chunk; (2) the three sums `(x - y)^T N (x - y)`, `||x - y||^2` and the restart test's
//! `(N y + r)^T (x - gamma_k)`; (3) the extrapolation of `y` and `N y` together with the
//! executor's gradient `N x + r`. Nothing is allocated per iteration.
//!
//! Determinism: below [`crate::kernels::PAR_MIN_LEN`] unknowns each pass is one sequential loop, so
//! results are bit for bit those of the plain loops; above it the chunks run in parallel on the
//! current rayon pool and each sum is taken chunk by chunk, then over the chunks in order
//! ([`crate::kernels::sum_in_order`]), so the iterates, the residuals and the iteration count are
//! bit-identical for any number of threads given `n` (and the product's own determinism).

use crate::kernels::{sum_in_order, vec_chunk, vec_chunks};
use crate::problem::Problem;
use crate::settings::{SolverSettings, Validator};
use crate::solver::{Solver, StepOutcome, StepResult};
use crate::state::IterState;
use crate::status::SolverError;
use cpbench_problems::linalg::norm2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Settings of [`Apgd`]. Defaults follow Mazhar et al. 2015: backtracking factor 2, shrink 0.9,
/// adaptive restart on.
///
/// No setting chooses the threads: above [`crate::kernels::PAR_MIN_LEN`] unknowns the vector
/// passes run in parallel chunks on the current rayon pool, and for any settings the iterates,
/// residuals and counters are bit-identical for every number of threads given `n` (below it,
/// one sequential pass: those of the plain loops).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApgdSettings {
    /// Lipschitz growth factor on a failed sufficient-decrease test (> 1).
    pub backtrack: f64,
    /// Lipschitz shrink factor after each iteration (in (0, 1]).
    pub shrink: f64,
    /// Gradient-based adaptive restart (O'Donoghue & Candes 2015).
    pub restart: bool,
    /// Initial Lipschitz estimate; `None` = `||N (gamma_0 - 1)|| / ||gamma_0 - 1||`.
    pub l0: Option<f64>,
}

impl Default for ApgdSettings {
    fn default() -> Self {
        Self {
            backtrack: 2.0,
            shrink: 0.9,
            restart: true,
            l0: None,
        }
    }
}

impl SolverSettings for ApgdSettings {
    const SOLVER: &'static str = "apgd";

    fn check(&self, v: &mut Validator) {
        v.greater("backtrack", self.backtrack, 1.0)
            .in_open_closed("shrink", self.shrink, 0.0, 1.0)
            .positive_opt("l0", self.l0);
    }
}

/// APGD. Supports every class.
#[derive(Clone, Debug)]
pub struct Apgd {
    settings: ApgdSettings,
    l: f64,
    theta: f64,
    y: Vec<f64>,
    ny: Vec<f64>,
    x: Vec<f64>,
    nx: Vec<f64>,
    ngk: Vec<f64>,
    /// Per-chunk partial sums of pass (2): `[d^T N d, d^T d, (N y + r)^T (x - gamma_k)]`.
    sums: Vec<[f64; 3]>,
    backtracks: u64,
    restarts: u64,
    /// Vector reads and writes of the passes so far ([`crate::kernels::vector_bytes`]).
    vec_passes: u64,
}

impl Apgd {
    /// An APGD solver; errors on invalid settings.
    pub fn new(settings: ApgdSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            settings,
            l: 1.0,
            theta: 1.0,
            y: Vec::new(),
            ny: Vec::new(),
            x: Vec::new(),
            nx: Vec::new(),
            ngk: Vec::new(),
            sums: Vec::new(),
            backtracks: 0,
            restarts: 0,
            vec_passes: 0,
        })
    }
}

impl Solver for Apgd {
    fn name(&self) -> &'static str {
        "apgd"
    }

    /// Joint (bilateral) blocks: the projection onto K is the identity on joint blocks (a projected gradient method).
    fn takes_joints(&self) -> bool {
        true
    }

    fn init(&mut self, problem: &Problem, state: &mut IterState) -> Result<(), SolverError> {
        let n = problem.n();
        self.y = state.gamma.clone();
        self.ny = vec![0.0; n];
        self.x = vec![0.0; n];
        self.nx = vec![0.0; n];
        self.sums = vec![[0.0; 3]; vec_chunks(n)];
        self.theta = 1.0;
        self.backtracks = 0;
        self.restarts = 0;
        self.vec_passes = 0;
        self.l = match self.settings.l0 {
            Some(l) => l,
            None => {
                // L0 = ||N (gamma0 - 1)|| / ||gamma0 - 1|| (Mazhar 2015, line 2)
                for (xi, gi) in self.x.iter_mut().zip(&state.gamma) {
                    *xi = gi - 1.0;
                }
                problem.matvec(&self.x, &mut self.nx);
                let den = norm2(&self.x);
                let l = if den > 0.0 {
                    norm2(&self.nx) / den
                } else {
                    0.0
                };
                if l > 0.0 && l.is_finite() {
                    l
                } else {
                    problem.lambda_max(20).max(f64::MIN_POSITIVE)
                }
            }
        };
        problem.matvec(&self.y, &mut self.ny);
        self.ngk = self.ny.clone();
        Ok(())
    }

    fn step(&mut self, problem: &Problem, state: &mut IterState) -> StepResult {
        let k = problem.constraints();
        let r = problem.instance().r();
        let n = self.x.len();
        let c = vec_chunk(n);
        let bs = k.block_size();
        debug_assert_eq!(self.sums.len(), n.div_ceil(c).max(1));
        let gdx = loop {
            // passes (1) and (2): y, N y, r read, x written; x, y, N x, N y, r, gamma_k read
            self.vec_passes += 10;
            // (1) x = P_K(y - (N y + r) / L), chunk by chunk
            let t = 1.0 / self.l;
            let trial = |o: usize, x: &mut [f64], y: &[f64], ny: &[f64], r: &[f64]| {
                for (((xi, yi), nyi), ri) in x.iter_mut().zip(y).zip(ny).zip(r) {
                    *xi = yi - t * (nyi + ri);
                }
                k.project_blocks(o / bs, x);
            };
            if c >= n {
                trial(0, &mut self.x, &self.y, &self.ny, r);
            } else {
                (
                    self.x.par_chunks_mut(c),
                    self.y.par_chunks(c),
                    self.ny.par_chunks(c),
                    r.par_chunks(c),
                )
                    .into_par_iter()
                    .enumerate()
                    .for_each(|(i, (x, y, ny, r))| trial(i * c, x, y, ny, r));
            }
            problem.matvec(&self.x, &mut self.nx);
            // (2) with d = x - y and N d = N x - N y: d^T N d, d^T d and the restart test's
            // g^T (x - gamma_k), g = N y + r
            let sums = |x: &[f64], y: &[f64], nx: &[f64], ny: &[f64], r: &[f64], gk: &[f64]| {
                let m = x.len();
                let (y, nx, ny, r, gk) = (&y[..m], &nx[..m], &ny[..m], &r[..m], &gk[..m]);
                let (mut dnd, mut dd, mut gdx) = (0.0, 0.0, -0.0);
                for i in 0..m {
                    let d = x[i] - y[i];
                    dnd += d * (nx[i] - ny[i]);
                    dd += d * d;
                    gdx += (ny[i] + r[i]) * (x[i] - gk[i]);
                }
                [dnd, dd, gdx]
            };
            if c >= n {
                self.sums[0] = sums(&self.x, &self.y, &self.nx, &self.ny, r, &state.gamma);
            } else {
                (
                    self.sums.par_iter_mut(),
                    self.x.par_chunks(c),
                    self.y.par_chunks(c),
                    self.nx.par_chunks(c),
                    self.ny.par_chunks(c),
                    r.par_chunks(c),
                    state.gamma.par_chunks(c),
                )
                    .into_par_iter()
                    .for_each(|(s, x, y, nx, ny, r, gk)| *s = sums(x, y, nx, ny, r, gk));
            }
            let dnd = sum_in_order(self.sums.iter().map(|s| s[0]));
            let dd = sum_in_order(self.sums.iter().map(|s| s[1]));
            if !(dnd.is_finite() && dd.is_finite()) {
                return Err(SolverError::Numerical("non-finite step in APGD".into()));
            }
            if dnd <= self.l * dd {
                break sum_in_order(self.sums.iter().map(|s| s[2]));
            }
            self.l *= self.settings.backtrack;
            self.backtracks += 1;
        };
        let th = self.theta;
        let th_new = (-th * th + th * (th * th + 4.0).sqrt()) / 2.0;
        let beta = th * (1.0 - th) / (th * th + th_new);
        // adaptive restart on g^T (x - gamma_k) > 0 (gamma_k = state.gamma)
        let restart = self.settings.restart && gdx > 0.0;
        if restart {
            self.theta = 1.0;
            self.restarts += 1;
        } else {
            self.theta = th_new;
        }
        // pass (3): x, N x, gamma_k, N gamma_k, r read, y, N y, grad written (x, N x copied
        // and N x, r read on a restart)
        self.vec_passes += if restart { 7 } else { 8 };
        // (3) y = x + beta (x - gamma_k), N y = N x + beta (N x - N gamma_k) (y = x, N y = N x
        // on a restart), and the executor's gradient N x + r
        let extrapolate = |y: &mut [f64],
                           ny: &mut [f64],
                           grad: &mut [f64],
                           x: &[f64],
                           nx: &[f64],
                           gk: &[f64],
                           ngk: &[f64],
                           r: &[f64]| {
            if restart {
                y.copy_from_slice(x);
                ny.copy_from_slice(nx);
            } else {
                let m = x.len();
                let (y, ny, nx, gk, ngk) =
                    (&mut y[..m], &mut ny[..m], &nx[..m], &gk[..m], &ngk[..m]);
                for i in 0..m {
                    y[i] = x[i] + beta * (x[i] - gk[i]);
                    ny[i] = nx[i] + beta * (nx[i] - ngk[i]);
                }
            }
            for ((gr, ng), ri) in grad.iter_mut().zip(nx).zip(r) {
                *gr = ng + ri;
            }
        };
        if c >= n {
            extrapolate(
                &mut self.y,
                &mut self.ny,
                &mut state.grad,
                &self.x,
                &self.nx,
                &state.gamma,
                &self.ngk,
                r,
            );
        } else {
            (
                self.y.par_chunks_mut(c),
                self.ny.par_chunks_mut(c),
                state.grad.par_chunks_mut(c),
                self.x.par_chunks(c),
                self.nx.par_chunks(c),
                state.gamma.par_chunks(c),
                self.ngk.par_chunks(c),
                r.par_chunks(c),
            )
                .into_par_iter()
                .for_each(|(y, ny, grad, x, nx, gk, ngk, r)| {
                    extrapolate(y, ny, grad, x, nx, gk, ngk, r)
                });
        }
        std::mem::swap(&mut state.gamma, &mut self.x);
        std::mem::swap(&mut self.ngk, &mut self.nx);
        self.l *= self.settings.shrink;
        state.grad_fresh = true;
        Ok(StepOutcome::Continue)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("backtracks", self.backtracks as f64),
            ("restarts", self.restarts as f64),
            ("lipschitz", self.l),
            (
                "vector_bytes",
                crate::kernels::vector_bytes(self.x.len(), self.vec_passes),
            ),
        ]
    }
}
