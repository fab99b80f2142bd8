//! Settings of the interior point ([`IpmSettings`]).

use crate::settings::{SolverSettings, Validator};
use serde::{Deserialize, Serialize};

/// How the reduced Newton systems `(N + G^T W^-2 G) dx = rhs` are solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LinearSolver {
    /// Sparse Cholesky of the assembled matrix (faer, AMD ordering; one numeric factorisation
    /// per iteration). Memory: the factor.
    #[default]
    Cholesky,
    /// Preconditioned conjugate gradients with counted `N`-products only (any storage of `N`,
    /// also matrix-free), preconditioner [`PcgPreconditioner`]. Memory `O(n)` with block
    /// Jacobi, about two more copies of `N`'s stored blocks with block IC(0).
    Pcg,
}

/// Preconditioner of `linear_solver = "pcg"` on `K = N + G^T W^-2 G` (3x3 blocks per
/// contact on a Coulomb-cone instance). `block-sgs` and `block-ic0` need `N` on 3x3 blocks:
/// the block storage is used as it is, a CSC `N` is converted once at `init` (one more copy
/// of `N`, `76` bytes per stored upper block); on the matrix-free storage, a non-symmetric
/// `N` or an instance without Coulomb cones they fall back to `block-jacobi` (the `message`
/// column says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PcgPreconditioner {
    /// Inverse diagonal blocks of `K` (`N_cc + S W_c^-2 S` per contact, 1x1 without cones);
    /// memory `O(n)`, one block product per CG iteration (Melanz et al. 2017, CMAME 320).
    BlockJacobi,
    /// Symmetric block Gauss-Seidel `M = (D + U^T) D^-1 (D + U)`, `D` the diagonal blocks
    /// of `K`, `U` its strictly upper blocks (those of `N`, read in place: no extra storage
    /// beyond the `O(n)` block inverses); a forward and a backward sweep per CG iteration
    /// (Saad 2003, Iterative Methods for Sparse Linear Systems, 2nd ed., sec. 10.2).
    BlockSgs,
    /// Block incomplete Cholesky IC(0) `M = (D~ + U~^T) D~^-1 (D~ + U~)` on the 3x3-block
    /// pattern of `N` (no fill), refactorised per interior-point iteration; on a breakdown
    /// (a pivot block not positive definite) restarted with the diagonal blocks' diagonals
    /// scaled by `1 + alpha`, `alpha = 1e-3, 1e-2, 1e-1, 1` (Manteuffel 1980), then block
    /// Jacobi for that iteration (memory too: under a memory limit that its storage would
    /// pass, block Jacobi is used). The factorisation runs in double precision, the sweeps
    /// read single-precision copies (one in each sweep's order). Memory: `16` bytes per
    /// stored entry of `N`'s upper blocks (Saad 2003, sec. 10.3). The default: on the
    /// 121,680-contact pyramid-40 CCP 2,031 CG iterations and 31.6 s where block Jacobi
    /// needs 13,166 and 123.8 s (medians of 3, docs/solvers.md).
    #[default]
    BlockIc0,
}

impl PcgPreconditioner {
    /// The setting's value as written in the settings (`block-jacobi`, `block-sgs`,
    /// `block-ic0`).
    pub fn name(self) -> &'static str {
        match self {
            PcgPreconditioner::BlockJacobi => "block-jacobi",
            PcgPreconditioner::BlockSgs => "block-sgs",
            PcgPreconditioner::BlockIc0 => "block-ic0",
        }
    }
}

/// Settings of [`Ipm`](super::Ipm).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IpmSettings {
    /// Own iteration cap (the executor's cap also applies).
    pub max_iter: u64,
    /// Fraction of the step to the boundary taken (in (0, 1)).
    pub step_fraction: f64,
    /// Mehrotra's corrector step (off = plain predictor with `sigma` from the affine step).
    pub corrector: bool,
    /// Static regularisation of the first factorisation attempt, relative to the largest
    /// diagonal of `N` (0 = none; retries grow it).
    pub reg_static: f64,
    /// Dynamic regularisation threshold: pivots below `reg_dynamic_eps * max diag N` are
    /// replaced by `reg_dynamic_delta * max diag N`.
    pub reg_dynamic_eps: f64,
    /// Dynamic regularisation shift: a pivot below the threshold (`reg_dynamic_eps`) is
    /// replaced by `reg_dynamic_delta * max diag N`.
    pub reg_dynamic_delta: f64,
    /// Iterative refinement steps per solve at most (each costs one product with the
    /// assembled `K` and one solve).
    pub refine: u32,
    /// Refine only while `||rhs - K dx||_inf > refine_tol ||rhs||_inf`.
    pub refine_tol: f64,
    /// End the solve when `mu < mu_min * mu_0`.
    pub mu_min: f64,
    /// Solver of the reduced Newton systems: `cholesky` (sparse factorisation) or `pcg`
    /// (preconditioned conjugate gradients on counted `N`-products, preconditioner
    /// `pcg_preconditioner`).
    pub linear_solver: LinearSolver,
    /// Preconditioner of `pcg`, by default `block-ic0` (block incomplete Cholesky on the
    /// 3x3-block pattern of `N`, about two more copies of `N`'s blocks), else `block-jacobi`
    /// (inverse 3x3 diagonal blocks of the reduced system, memory `O(n)`) or `block-sgs`
    /// (symmetric block Gauss-Seidel, no extra storage).
    /// The last two need `N` on 3x3 blocks (block storage, or CSC converted at `init`) and
    /// fall back to `block-jacobi` otherwise (matrix-free storage, non-symmetric `N`, no
    /// Coulomb cones; said in `message`).
    pub pcg_preconditioner: PcgPreconditioner,
    /// Relative CG tolerance of `pcg` (default `1e-8`, `0.01 tol` at the default `tol =
    /// 1e-6`, Melanz et al. 2017). CG stops once `||rhs - K dx||_2` is below both
    /// `cg_rtol ||rhs||_2` and `0.01 ||r_d||_2` (the dual residual; rounding floor
    /// `1e-14 ||rhs||_2`).
    pub cg_rtol: f64,
    /// Most CG iterations of `pcg` per Newton system (the direction reached is then used).
    pub cg_max_iter: u64,
    /// Warm start of `pcg` from the last direction (the predictor's for the corrector, the
    /// last corrector's for the next predictor), kept when its residual is below that of zero.
    pub cg_warm_start: bool,
    /// Proximal regularisation of `pcg`, relative to `mean(diag N)`. `delta = cg_reg *
    /// mean(diag N)` is added to the diagonal of the reduced system (bounds its condition
    /// number where `N` is singular; 0 = none).
    pub cg_reg: f64,
    /// Flop rate (flop/s) assumed for the first numeric factorisation under a time limit. Used
    /// by `cholesky` before a factorisation was timed (later ones use the measured rate): a
    /// factorisation predicted (`flops / rate`, flops from the symbolic analysis) to end after
    /// the time limit is not started and the solve stops with `max_time` (default `1e9`,
    /// conservative; raise it on a fast machine to let a first large factorisation start).
    pub assumed_flop_rate: f64,
}

impl Default for IpmSettings {
    fn default() -> Self {
        Self {
            max_iter: 200,
            step_fraction: 0.99,
            corrector: true,
            reg_static: 0.0,
            reg_dynamic_eps: 1e-13,
            reg_dynamic_delta: 1e-7,
            refine: 2,
            refine_tol: 1e-12,
            mu_min: 1e-20,
            linear_solver: LinearSolver::Cholesky,
            pcg_preconditioner: PcgPreconditioner::BlockIc0,
            cg_rtol: 1e-8,
            cg_max_iter: 1000,
            cg_warm_start: true,
            cg_reg: 0.0,
            assumed_flop_rate: super::DEFAULT_FLOP_RATE,
        }
    }
}

impl SolverSettings for IpmSettings {
    const SOLVER: &'static str = "ipm";

    fn check(&self, v: &mut Validator) {
        v.in_open("step_fraction", self.step_fraction, 0.0, 1.0)
            .non_negative("reg_static", self.reg_static)
            .non_negative("reg_dynamic_eps", self.reg_dynamic_eps)
            .non_negative("reg_dynamic_delta", self.reg_dynamic_delta)
            .non_negative("mu_min", self.mu_min)
            .non_negative("refine_tol", self.refine_tol)
            .in_open("cg_rtol", self.cg_rtol, 0.0, 1.0)
            .at_least("cg_max_iter", self.cg_max_iter, 1)
            .non_negative("cg_reg", self.cg_reg)
            .positive("assumed_flop_rate", self.assumed_flop_rate);
    }
}
