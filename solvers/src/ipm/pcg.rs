//! The iterative linear solver of the interior point (`linear_solver = "pcg"`): the reduced
//! Newton system `K dx = rhs`, `K = N + G^T W^-2 G` (identity rows on fixed variables), by
//! preconditioned conjugate gradients. `K` is never assembled: `N v` is a counted product
//! ([`Problem::matvec`], so any storage of `N` works, also matrix-free) and `G^T W^-2 G` is
//! applied from its diagonal (bound rows) and 3x3 blocks (cones).
//!
//! Preconditioners ([`PcgPreconditioner`]), formed once per interior-point iteration:
//! - block Jacobi, the inverse of `K`'s diagonal blocks, 3x3 per contact on a Coulomb
//!   instance (`N_cc + S W_c^-2 S`) and 1x1 otherwise (`N_jj + sum 1/w_k^2`) (Melanz et al.
//!   2017, CMAME 320, use the same contact-block structure). Memory `O(n)`;
//! - symmetric block Gauss-Seidel `M = (D + U^T) D^-1 (D + U)` with `D` the diagonal blocks
//!   of `K` and `U` its strictly upper 3x3 blocks, which are `N`'s (`G^T W^-2 G` is block
//!   diagonal): read in place from the block storage of `N` (Saad 2003, Iterative Methods
//!   for Sparse Linear Systems, 2nd ed., sec. 10.2, SSOR with `omega = 1`);
//! - block incomplete Cholesky IC(0) on the 3x3-block pattern of `N`: the same form with
//!   pivots `D~` and blocks `U~` of the right-looking block elimination of `K` restricted to
//!   that pattern (Saad 2003, sec. 10.3, in its block form; no fill). A pivot block that is
//!   not positive definite (relative pivot of its 3x3 Cholesky below [`IC_PIVOT_TOL`])
//!   restarts the factorisation with the diagonals of `K`'s diagonal blocks scaled by
//!   `1 + alpha` ([`IC_SHIFTS`], Manteuffel 1980, Math. Comp. 34), then falls back to block
//!   Jacobi for the iteration.
//!
//! Both block preconditioners apply `M^-1` by one forward sweep (scatter along the stored
//! upper rows) and one backward sweep (gather) in place in `z`: no allocation per CG
//! iteration, each stored block read twice (as much as one `N`-product, serial).

use super::cone::SocScaling;
use super::constraints::ConicForm;
use super::settings::PcgPreconditioner;
use crate::kernels::inv3_spd;
use crate::problem::Problem;
use cpbench_problems::linalg::dot;
use cpbench_problems::operator::BlockSymMatrix;
use std::time::{Duration, Instant};

/// Diagonal blocks of `N`: 3x3 per contact (row-major) on a Coulomb-cone instance, the
/// diagonal otherwise.
pub(super) enum DiagBlocks {
    /// `N_jj`, length `n`.
    Scalar(Vec<f64>),
    /// `N_cc` of contact `c` (variables `3c..3c+3`), row-major.
    Block3(Vec<[f64; 9]>),
}

impl DiagBlocks {
    /// The diagonal of `N` (length `n`).
    pub(super) fn diagonal(&self) -> Vec<f64> {
        match self {
            DiagBlocks::Scalar(d) => d.clone(),
            DiagBlocks::Block3(b) => b.iter().flat_map(|m| [m[0], m[4], m[8]]).collect(),
        }
    }
}

/// The diagonal blocks of `N` of `problem` (3x3 per contact on a Coulomb-cone instance, the
/// diagonal otherwise). The one place where the iterative interior point reads `N` other
/// than through products, via [`cpbench_problems::Instance::diag_block`] (every storage).
pub(super) fn diag_blocks(problem: &Problem) -> DiagBlocks {
    let inst = problem.instance();
    let k = inst.constraints();
    match (k.cone_dim(), k.friction()) {
        // Coulomb cones: one 3x3 block per contact
        (Some(_), Some(mu)) => {
            DiagBlocks::Block3((0..mu.len()).map(|c| inst.diag_block(c)).collect())
        }
        _ => DiagBlocks::Scalar((0..inst.n()).map(|i| inst.diag_block(i)[0]).collect()),
    }
}

/// What one [`Pcg::solve`] did.
#[derive(Clone, Copy, Debug)]
pub(super) struct CgOutcome {
    /// CG iterations (each one counted `N`-product; a warm start costs one more).
    pub(super) iterations: u64,
    /// `||rhs - K dx||_2 / ||rhs||_2` at the end.
    pub(super) rel_res: f64,
    /// Stopped because the next iteration would pass the deadline.
    pub(super) out_of_time: bool,
}

/// Relative pivot below which a 3x3 pivot block of the block IC(0) counts as a breakdown:
/// each pivot of its Cholesky factorisation must exceed `IC_PIVOT_TOL` times the matching
/// diagonal entry of `K` (some 4500 ulp: below it the pivot is lost to cancellation).
pub(super) const IC_PIVOT_TOL: f64 = 1e-12;

/// Manteuffel shifts `alpha` tried in turn after a breakdown of the block IC(0): the
/// diagonals of `K`'s diagonal blocks are scaled by `1 + alpha` (Manteuffel 1980, Math. Comp.
/// 34, 473-497). After the last one fails the iteration is preconditioned by block Jacobi.
pub(super) const IC_SHIFTS: [f64; 4] = [1e-3, 1e-2, 1e-1, 1.0];

/// The preconditioner actually applied (after the fallback rule of [`Pcg::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Jacobi,
    Sgs,
    Ic0,
}

/// Where the 3x3 blocks of `N` come from for `block-sgs` and `block-ic0`.
enum BlockSource {
    /// The instance's own block storage (read through the problem at each use).
    Instance,
    /// A copy converted from the instance's CSC `N` at `init`.
    Owned(Box<BlockSymMatrix>),
}

/// Block-preconditioned CG on `K = N + G^T W^-2 G`, with its scratch.
pub(super) struct Pcg {
    nblocks: DiagBlocks,
    fixed: Vec<bool>,
    /// `sum 1/w_k^2` over the bound rows of each variable.
    hdiag: Vec<f64>,
    /// `S W^-2 S` of each cone of the conic form.
    hblk: Vec<[[f64; 3]; 3]>,
    /// Inverse diagonal blocks of `K` (block Jacobi and SGS) or inverse IC(0) pivots
    /// (row-major 3x3 per contact, or 1x1 in `pinv1`).
    pinv3: Vec<[f64; 9]>,
    pinv1: Vec<f64>,
    /// Diagonal blocks of `K` (3x3, fixed rows and columns replaced by the identity's).
    kdiag: Vec<[f64; 9]>,
    /// The preconditioner applied, and the block source of SGS / IC(0).
    kind: Kind,
    source: Option<BlockSource>,
    /// `1` on free variables, `0` on fixed ones (empty when none is fixed).
    free: Vec<f64>,
    /// IC(0): the factor's upper blocks, laid out as the stored blocks of `N` (9 per block;
    /// the diagonal blocks' slots unused), and the marker of the elimination (one per block
    /// row, `usize::MAX` when clear).
    fvals: Vec<f64>,
    marker: Vec<usize>,
    /// IC(0): the factor's upper blocks in single precision, as applied by the sweeps (half
    /// the memory traffic of `fvals`; the factorisation itself runs in double precision):
    /// `fvals32` in the layout of `fvals` for the forward sweep, `rvals32` with the
    /// off-diagonal blocks in reverse order (pattern `rptr`, `rcols`: block row `nb - 1 - k`
    /// is reversed row `k`) for the backward sweep, so that both sweeps read their values
    /// as one ascending stream.
    fvals32: Vec<f32>,
    rvals32: Vec<f32>,
    rptr: Vec<usize>,
    rcols: Vec<u32>,
    /// This iteration fell back to block Jacobi (IC(0) broke down at every shift).
    ic_failed: bool,
    /// Largest Manteuffel shift used, Newton iterations preconditioned by block Jacobi after
    /// a breakdown, and the time spent forming the preconditioner.
    pub(super) ic_shift_max: f64,
    pub(super) ic_fallbacks: u64,
    pub(super) setup_time: Duration,
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
    /// Time of the last CG iteration (deadline prediction).
    iter_time: Duration,
    /// Proximal shift `delta` added to `K`'s diagonal (absolute).
    shift: f64,
}

impl Pcg {
    /// Scratch for `n` variables, from the diagonal blocks of `N`, the fixed variables and the
    /// preconditioner asked for. `block-sgs` and `block-ic0` need a Coulomb-cone instance
    /// (3x3 diagonal blocks) with a symmetric `N` on the block storage (block size 3) or CSC
    /// (converted here); otherwise block Jacobi is used and the second value says why.
    pub(super) fn new(
        nblocks: DiagBlocks,
        fixed: Vec<bool>,
        form: &ConicForm,
        want: PcgPreconditioner,
        problem: &Problem,
    ) -> (Self, Option<String>) {
        let n = fixed.len();
        let (nb3, nb1) = match &nblocks {
            DiagBlocks::Block3(b) => (b.len(), 0),
            DiagBlocks::Scalar(_) => (0, n),
        };
        let want_kind = match want {
            PcgPreconditioner::BlockJacobi => Kind::Jacobi,
            PcgPreconditioner::BlockSgs => Kind::Sgs,
            PcgPreconditioner::BlockIc0 => Kind::Ic0,
        };
        let mut note = None;
        let mut kind = want_kind;
        let mut source = None;
        if want_kind != Kind::Jacobi {
            match block_source(problem, nb3) {
                Ok(src) => source = Some(src),
                Err(why) => {
                    kind = Kind::Jacobi;
                    note = Some(format!(
                        "pcg_preconditioner = {}: {why}; block-jacobi used",
                        want.name()
                    ));
                }
            }
        }
        let free = if kind != Kind::Jacobi && fixed.iter().any(|&f| f) {
            fixed.iter().map(|&f| if f { 0.0 } else { 1.0 }).collect()
        } else {
            Vec::new()
        };
        let (mut fvals, mut marker, mut fvals32) = (Vec::new(), Vec::new(), Vec::new());
        let (mut rvals32, mut rptr, mut rcols) = (Vec::new(), Vec::new(), Vec::new());
        if kind == Kind::Ic0 {
            if let Some(bm) = blocks_of(&source, problem) {
                let len = bm.values().len();
                fvals = vec![0.0; len];
                marker = vec![usize::MAX; nb3];
                fvals32 = vec![0.0f32; len];
                (rptr, rcols) = reversed_pattern(bm);
                rvals32 = vec![0.0f32; 9 * rcols.len()];
            }
        }
        let pcg = Self {
            nblocks,
            fixed,
            hdiag: vec![0.0; n],
            hblk: vec![[[0.0; 3]; 3]; form.cones.len()],
            pinv3: vec![[0.0; 9]; nb3],
            pinv1: vec![0.0; nb1],
            kdiag: vec![[0.0; 9]; nb3],
            kind,
            source,
            free,
            fvals,
            marker,
            fvals32,
            rvals32,
            rptr,
            rcols,
            ic_failed: false,
            ic_shift_max: 0.0,
            ic_fallbacks: 0,
            setup_time: Duration::ZERO,
            r: vec![0.0; n],
            z: vec![0.0; n],
            p: vec![0.0; n],
            q: vec![0.0; n],
            iter_time: Duration::ZERO,
            shift: 0.0,
        };
        (pcg, note)
    }

    /// Bytes [`Pcg::new`] would hold for `problem` with preconditioner `want` (the value of
    /// [`Pcg::bytes`] after it), predicted before allocating anything beyond `O(n / 3)`
    /// scratch: `O(n)` vectors; with `block-sgs` / `block-ic0` on a CSC instance the block
    /// copy of `N` (76 bytes per stored upper 3x3 block, counted from the CSC pattern); with
    /// `block-ic0` 148 bytes per stored upper block (the double-precision factor, its two
    /// single-precision copies and their reversed block columns) and `16 n / 3 + 8` bytes
    /// more.
    /// A preconditioner that would fall back to block Jacobi is predicted as block Jacobi.
    pub(super) fn predict_bytes(
        problem: &Problem,
        nblocks: &DiagBlocks,
        n: usize,
        ncones: usize,
        want: PcgPreconditioner,
    ) -> u64 {
        let (nb3, diag) = match nblocks {
            DiagBlocks::Block3(b) => (b.len(), b.len() as u64 * 72),
            DiagBlocks::Scalar(d) => (0, d.len() as u64 * 8),
        };
        let base = 3 * diag + n as u64 * (5 * 8 + 1 + 8) + ncones as u64 * 72;
        if want == PcgPreconditioner::BlockJacobi || block_source_ok(problem, nb3).is_err() {
            return base;
        }
        let inst = problem.instance();
        let fixed_mask = 8 * n as u64; // at most (only when a variable is fixed)
        let (blocks, owned) = match inst.block_matrix() {
            Some(b) => (b.cols().len() as u64, 0),
            None => {
                let nblk = count_upper_blocks(inst.n_mat(), nb3);
                (nblk, 76 * nblk + 8 * (nb3 as u64 + 1))
            }
        };
        let ic = if want == PcgPreconditioner::BlockIc0 {
            148 * blocks + 16 * nb3 as u64 + 8
        } else {
            0
        };
        base + fixed_mask + owned + ic
    }

    /// Whether a block preconditioner (SGS or IC(0)) is in use, not block Jacobi.
    pub(super) fn is_block(&self) -> bool {
        self.kind != Kind::Jacobi
    }

    /// Bytes held: `O(n)`, plus for IC(0) one copy of `N`'s stored blocks and for a CSC
    /// instance with SGS or IC(0) the converted block copy of `N`.
    pub(super) fn bytes(&self) -> u64 {
        let n = self.fixed.len() as u64;
        let nb = match &self.nblocks {
            DiagBlocks::Block3(b) => b.len() as u64 * 72,
            DiagBlocks::Scalar(d) => d.len() as u64 * 8,
        };
        let owned = match &self.source {
            Some(BlockSource::Owned(b)) => b.bytes(),
            _ => 0,
        };
        3 * nb
            + n * (5 * 8 + 1 + 8)
            + self.hblk.len() as u64 * 72
            + 8 * (self.free.len() + self.fvals.len() + self.marker.len()) as u64
            + 4 * (self.fvals32.len() + self.rvals32.len() + self.rcols.len()) as u64
            + 8 * self.rptr.len() as u64
            + owned
    }

    /// Form `G^T W^-2 G` and the preconditioner for the scalings of this iteration (`wdiag`
    /// per bound row, `wsoc` per cone). `shift` (absolute) is added to the diagonal of `K`
    /// (a proximal regularisation).
    pub(super) fn update(
        &mut self,
        problem: &Problem,
        form: &ConicForm,
        wdiag: &[f64],
        wsoc: &[SocScaling],
        shift: f64,
    ) {
        let t0 = Instant::now();
        self.shift = shift;
        self.hdiag.fill(shift);
        for (k, row) in form.rows.iter().enumerate() {
            self.hdiag[row.j] += 1.0 / (wdiag[k] * wdiag[k]);
        }
        for (c, cb) in form.cones.iter().enumerate() {
            let mut m3 = wsoc[c].inv_squared();
            for a in 0..3 {
                m3[a][0] *= cb.mu;
                m3[0][a] *= cb.mu;
            }
            self.hblk[c] = m3;
        }
        match &self.nblocks {
            DiagBlocks::Scalar(d) => {
                for j in 0..d.len() {
                    let v = d[j] + self.hdiag[j];
                    self.pinv1[j] = if self.fixed[j] || v <= 0.0 || !v.is_finite() {
                        1.0
                    } else {
                        1.0 / v
                    };
                }
            }
            DiagBlocks::Block3(b) => {
                for (c, nb) in b.iter().enumerate() {
                    let mut m = *nb;
                    for a in 0..3 {
                        m[4 * a] += self.hdiag[3 * c + a];
                    }
                    self.kdiag[c] = m;
                }
                for (k, cb) in form.cones.iter().enumerate() {
                    let c = cb.b / 3;
                    for a in 0..3 {
                        for e in 0..3 {
                            self.kdiag[c][3 * a + e] += self.hblk[k][a][e];
                        }
                    }
                }
                for c in 0..b.len() {
                    let m = &mut self.kdiag[c];
                    for a in 0..3 {
                        if self.fixed[3 * c + a] {
                            for e in 0..3 {
                                m[3 * a + e] = 0.0;
                                m[3 * e + a] = 0.0;
                            }
                            m[4 * a] = 1.0;
                        }
                    }
                }
            }
        }
        if !self.kdiag.is_empty() {
            self.ic_failed = false;
            if self.kind == Kind::Ic0 {
                self.factor_ic0(problem);
            }
            if self.kind != Kind::Ic0 || self.ic_failed {
                for (p, k) in self.pinv3.iter_mut().zip(&self.kdiag) {
                    *p = inv3_spd(k);
                }
            }
        }
        self.setup_time += t0.elapsed();
    }

    /// The block IC(0) of `K` into `fvals` and `pinv3`, with Manteuffel shifts on breakdown
    /// (sets `ic_failed` when every shift broke down).
    fn factor_ic0(&mut self, problem: &Problem) {
        let Some(bm) = blocks_of(&self.source, problem) else {
            self.ic_failed = true;
            return;
        };
        for (t, alpha) in std::iter::once(0.0).chain(IC_SHIFTS).enumerate() {
            let ok = ic0_factor(
                bm,
                &self.kdiag,
                &self.free,
                alpha,
                &mut self.fvals,
                &mut self.pinv3,
                &mut self.marker,
            );
            if ok {
                for (d, v) in self.fvals32.iter_mut().zip(&self.fvals) {
                    *d = *v as f32;
                }
                reverse_values(bm, &self.fvals32, &mut self.rvals32);
                if t > 0 {
                    self.ic_shift_max = self.ic_shift_max.max(alpha);
                }
                return;
            }
        }
        self.ic_failed = true;
        self.ic_fallbacks += 1;
    }

    /// `y = K v` (one counted `N`-product; fixed rows are the identity).
    fn apply_k(&self, problem: &Problem, form: &ConicForm, v: &[f64], y: &mut [f64]) {
        problem.matvec(v, y);
        for j in 0..y.len() {
            y[j] = if self.fixed[j] {
                v[j]
            } else {
                y[j] + self.hdiag[j] * v[j]
            };
        }
        for (k, cb) in form.cones.iter().enumerate() {
            let h = &self.hblk[k];
            let b = cb.b;
            let x = [v[b], v[b + 1], v[b + 2]];
            for a in 0..3 {
                y[b + a] += h[a][0] * x[0] + h[a][1] * x[1] + h[a][2] * x[2];
            }
        }
    }

    /// `z = P^-1 r`.
    fn precondition(&mut self, problem: &Problem) {
        if !self.pinv1.is_empty() {
            for j in 0..self.r.len() {
                self.z[j] = self.pinv1[j] * self.r[j];
            }
            return;
        }
        let bm = match self.kind {
            Kind::Jacobi => None,
            Kind::Ic0 if self.ic_failed => None,
            _ => blocks_of(&self.source, problem),
        };
        let Some(bm) = bm else {
            for (c, m) in self.pinv3.iter().enumerate() {
                let o = 3 * c;
                let x = [self.r[o], self.r[o + 1], self.r[o + 2]];
                for a in 0..3 {
                    self.z[o + a] = m[3 * a] * x[0] + m[3 * a + 1] * x[1] + m[3 * a + 2] * x[2];
                }
            }
            return;
        };
        let (rp, cols) = (bm.row_ptr(), bm.cols());
        if self.kind == Kind::Ic0 {
            // IC(0)'s blocks were masked when factorised
            let back = Backward {
                rptr: &self.rptr,
                rcols: &self.rcols,
                rvals: &self.rvals32,
            };
            block_sweeps(
                rp,
                cols,
                &self.fvals32,
                Some(back),
                &self.pinv3,
                None,
                &self.r,
                &mut self.z,
            );
        } else {
            // SGS reads N's blocks in place and masks on the fly
            let mask = (!self.free.is_empty()).then_some(&self.free[..]);
            let none: Option<Backward<'_, f64>> = None;
            block_sweeps(
                rp,
                cols,
                bm.values(),
                none,
                &self.pinv3,
                mask,
                &self.r,
                &mut self.z,
            );
        }
    }

    /// Solve `K x = b` to `||b - K x||_2 <= max(min(rtol ||b||_2, atol), 1e-14 ||b||_2)` in
    /// at most `max_iter` iterations, from `x` when `warm` (kept only if its residual is below
    /// `||b||`), else from zero. Stops early (`out_of_time`) when the next iteration would end
    /// after `deadline`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn solve(
        &mut self,
        problem: &Problem,
        form: &ConicForm,
        b: &[f64],
        x: &mut [f64],
        rtol: f64,
        atol: f64,
        max_iter: u64,
        warm: bool,
        deadline: Option<Instant>,
    ) -> CgOutcome {
        let n = b.len();
        let bnorm = dot(b, b).sqrt();
        let mut out = CgOutcome {
            iterations: 0,
            rel_res: 0.0,
            out_of_time: false,
        };
        if bnorm == 0.0 {
            x.fill(0.0);
            return out;
        }
        let mut r = std::mem::take(&mut self.r);
        let mut q = std::mem::take(&mut self.q);
        let mut p = std::mem::take(&mut self.p);
        let mut rr = f64::INFINITY;
        if warm && x.iter().any(|&v| v != 0.0) {
            self.apply_k(problem, form, x, &mut q);
            for i in 0..n {
                r[i] = b[i] - q[i];
            }
            rr = dot(&r, &r);
        }
        if !(rr < bnorm * bnorm) {
            x.fill(0.0);
            r.copy_from_slice(b);
            rr = bnorm * bnorm;
        }
        self.r = r;
        self.precondition(problem);
        p.copy_from_slice(&self.z);
        let mut rz = dot(&self.r, &self.z);
        let target = (rtol * bnorm).min(atol).max(1e-14 * bnorm);
        while rr.sqrt() > target && out.iterations < max_iter {
            if let Some(d) = deadline {
                if Instant::now() + self.iter_time >= d {
                    out.out_of_time = true;
                    break;
                }
            }
            let t0 = Instant::now();
            self.apply_k(problem, form, &p, &mut q);
            out.iterations += 1;
            let pq = dot(&p, &q);
            if !(pq > 0.0) {
                // K is not positive definite along p (rounding at the end): keep x
                break;
            }
            let alpha = rz / pq;
            for i in 0..n {
                x[i] += alpha * p[i];
                self.r[i] -= alpha * q[i];
            }
            rr = dot(&self.r, &self.r);
            self.precondition(problem);
            let rz_new = dot(&self.r, &self.z);
            let beta = rz_new / rz;
            rz = rz_new;
            for i in 0..n {
                p[i] = self.z[i] + beta * p[i];
            }
            self.iter_time = t0.elapsed();
        }
        self.q = q;
        self.p = p;
        out.rel_res = rr.sqrt() / bnorm;
        out
    }
}

/// The block source for SGS / IC(0) of `problem` with `nb3` contacts, or why there is none.
fn block_source(problem: &Problem, nb3: usize) -> Result<BlockSource, String> {
    block_source_ok(problem, nb3)?;
    let inst = problem.instance();
    if inst.block_matrix().is_some() {
        return Ok(BlockSource::Instance);
    }
    BlockSymMatrix::from_csc(inst.n_mat(), 3)
        .map(|b| BlockSource::Owned(Box::new(b)))
        .map_err(|e| format!("N not convertible to 3x3 blocks ({e})"))
}

/// Stored upper 3x3 blocks of the block copy of the symmetric CSC matrix `m` (`nb` block
/// rows), as [`BlockSymMatrix::from_csc`] would store them (a block is stored when any of its
/// entries in the lower triangle is, read by block columns). `O(nnz)` time, `O(nb)` scratch.
fn count_upper_blocks(m: &cpbench_problems::CscMatrix, nb: usize) -> u64 {
    let mut stamp = vec![usize::MAX; nb];
    let mut count = 0u64;
    for jb in 0..nb {
        for c in 3 * jb..3 * jb + 3 {
            for &k in m.col(c).0 {
                // as `from_csc`: the block rows `I >= J` met in block column `J` (lower
                // triangle), stored as block `(J, I)`
                let ib = k / 3;
                if ib >= jb && stamp[ib] != jb {
                    stamp[ib] = jb;
                    count += 1;
                }
            }
        }
    }
    count
}

/// Whether `problem` (with `nb3` contacts) allows the block preconditioners, or why not.
fn block_source_ok(problem: &Problem, nb3: usize) -> Result<(), String> {
    let inst = problem.instance();
    if nb3 == 0 || 3 * nb3 != inst.n() {
        return Err("needs 3x3 contact blocks (a Coulomb-cone instance)".into());
    }
    if !inst.is_symmetric() {
        return Err("N is not symmetric".into());
    }
    if let Some(b) = inst.block_matrix() {
        return if b.block_size() == 3 && b.n_block_rows() == nb3 {
            Ok(())
        } else {
            Err(format!("block storage of block size {}", b.block_size()))
        };
    }
    if inst.matrix_free().is_some() {
        return Err("matrix-free storage (N is not formed)".into());
    }
    Ok(())
}

/// The 3x3 block matrix of `N` named by `source`.
fn blocks_of<'a>(
    source: &'a Option<BlockSource>,
    problem: &'a Problem,
) -> Option<&'a BlockSymMatrix> {
    match source {
        Some(BlockSource::Owned(b)) => Some(b),
        Some(BlockSource::Instance) => problem.instance().block_matrix(),
        None => None,
    }
}

/// Inverse of the symmetric 3x3 block `m` (row-major) when its Cholesky pivots all exceed
/// `IC_PIVOT_TOL` times the matching diagonal entry of `d` (positive), else `None`.
fn chol3_inverse(m: &[f64; 9], d: &[f64; 9]) -> Option<[f64; 9]> {
    let p0 = m[0];
    if !(p0 > IC_PIVOT_TOL * d[0]) {
        return None;
    }
    let l10 = m[3] / p0;
    let l20 = m[6] / p0;
    let p1 = m[4] - l10 * m[1];
    if !(p1 > IC_PIVOT_TOL * d[4]) {
        return None;
    }
    let l21 = (m[7] - l20 * m[1]) / p1;
    let p2 = m[8] - l20 * m[2] - l21 * l21 * p1;
    if !(p2 > IC_PIVOT_TOL * d[8]) || !p2.is_finite() {
        return None;
    }
    // m = L diag(p) L^T, L unit lower: m^-1 = L^-T diag(1/p) L^-1
    let i10 = -l10;
    let i21 = -l21;
    let i20 = l10 * l21 - l20;
    // rows of L^-1: [1 0 0; i10 1 0; i20 i21 1]
    let linv = [[1.0, 0.0, 0.0], [i10, 1.0, 0.0], [i20, i21, 1.0]];
    let ip = [1.0 / p0, 1.0 / p1, 1.0 / p2];
    let mut out = [0.0; 9];
    for a in 0..3 {
        for b in a..3 {
            let v: f64 = (0..3).map(|k| linv[k][a] * ip[k] * linv[k][b]).sum();
            out[3 * a + b] = v;
            out[3 * b + a] = v;
        }
    }
    Some(out)
}

/// `c = a^T b` for row-major 3x3 blocks.
#[inline]
fn at_b(a: &[f64], b: &[f64]) -> [f64; 9] {
    let mut c = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            c[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
        }
    }
    c
}

/// Block IC(0) of `K` on the stored pattern of `bm` (3x3 blocks, upper triangle): right-looking
/// elimination `K_ij -= K_ki^T K_kk^-1 K_kj` over the pairs `(i, j)` of row `k` kept only where
/// `(i, j)` is stored (Saad 2003, sec. 10.3, block form). `kdiag`: the diagonal blocks of `K`
/// (their diagonals scaled by `1 + alpha`); `free`: 1/0 per variable (empty: none fixed), the
/// off-diagonal entries of fixed rows and columns dropped. Writes the upper blocks into `fvals`
/// (the layout of `bm`'s values) and the inverse pivots into `dinv`; `marker` (one per block
/// row) must be clear (`usize::MAX`) and is left clear. `false` on a breakdown (a pivot block
/// not positive definite, [`chol3_inverse`]).
fn ic0_factor(
    bm: &BlockSymMatrix,
    kdiag: &[[f64; 9]],
    free: &[f64],
    alpha: f64,
    fvals: &mut [f64],
    dinv: &mut [[f64; 9]],
    marker: &mut [usize],
) -> bool {
    let (rp, cols, vals) = (bm.row_ptr(), bm.cols(), bm.values());
    let nb = kdiag.len();
    fvals.copy_from_slice(vals);
    if !free.is_empty() {
        for i in 0..nb {
            for p in rp[i]..rp[i + 1] {
                let j = cols[p] as usize;
                for a in 0..3 {
                    for b in 0..3 {
                        fvals[9 * p + 3 * a + b] *= free[3 * i + a] * free[3 * j + b];
                    }
                }
            }
        }
    }
    // the pivots start as K's diagonal blocks (kept in dinv until inverted)
    for (d, k) in dinv.iter_mut().zip(kdiag) {
        *d = *k;
        for a in 0..3 {
            d[4 * a] *= 1.0 + alpha;
        }
    }
    for k in 0..nb {
        let Some(inv) = chol3_inverse(&dinv[k], &kdiag[k]) else {
            return false;
        };
        dinv[k] = inv;
        let s = rp[k] + usize::from(rp[k] < rp[k + 1] && cols[rp[k]] as usize == k);
        let e = rp[k + 1];
        for p1 in s..e {
            let j1 = cols[p1] as usize;
            // Y = D_k^-1 U_{k j1}
            let b1: [f64; 9] = fvals[9 * p1..9 * p1 + 9].try_into().expect("9");
            let mut y = [0.0; 9];
            for a in 0..3 {
                for b in 0..3 {
                    y[3 * a + b] = inv[3 * a] * b1[b]
                        + inv[3 * a + 1] * b1[3 + b]
                        + inv[3 * a + 2] * b1[6 + b];
                }
            }
            // the pivot of row j1: D_j1 -= U_{k j1}^T D_k^-1 U_{k j1}
            let u = at_b(&b1, &y);
            for t in 0..9 {
                dinv[j1][t] -= u[t];
            }
            if p1 + 1 == e {
                continue;
            }
            let (s1, e1) = (rp[j1], rp[j1 + 1]);
            for q in s1..e1 {
                marker[cols[q] as usize] = q;
            }
            for p2 in p1 + 1..e {
                let j2 = cols[p2] as usize;
                let q = marker[j2];
                if q == usize::MAX {
                    continue;
                }
                // U_{j1 j2} -= Y^T U_{k j2}
                let u = at_b(&y, &fvals[9 * p2..9 * p2 + 9]);
                for t in 0..9 {
                    fvals[9 * q + t] -= u[t];
                }
            }
            for q in s1..e1 {
                marker[cols[q] as usize] = usize::MAX;
            }
        }
    }
    true
}

/// `z = M^-1 r` for `M = (D + U^T) D^-1 (D + U)`: `U` the strictly upper 3x3 blocks stored in
/// `vals` (row-major, 9 per block, `f64` or `f32`) on the pattern `(row_ptr, cols)` (diagonal
/// blocks skipped), `dinv` the inverse diagonal blocks; `mask` (1/0 per variable) drops the
/// entries of `U` in fixed rows and columns. Forward sweep `(D + U^T) w = r` by scatters, then
/// backward `(D + U) z = D w` by gathers, both in place in `z`; allocation free.
#[allow(clippy::too_many_arguments)]
fn block_sweeps<T: Copy + Into<f64>>(
    row_ptr: &[usize],
    cols: &[u32],
    vals: &[T],
    back: Option<Backward<'_, T>>,
    dinv: &[[f64; 9]],
    mask: Option<&[f64]>,
    r: &[f64],
    z: &mut [f64],
) {
    match mask {
        Some(m) => sweeps::<T, true>(row_ptr, cols, vals, back, dinv, m, r, z),
        None => sweeps::<T, false>(row_ptr, cols, vals, back, dinv, &[], r, z),
    }
}

/// The off-diagonal blocks of `U` in reverse order for the backward sweep (see
/// [`reversed_pattern`]): reversed row `k` is block row `nb - 1 - k`.
struct Backward<'a, T> {
    rptr: &'a [usize],
    rcols: &'a [u32],
    rvals: &'a [T],
}

/// The pattern of the off-diagonal stored blocks of `bm` in reverse storage order:
/// `(rptr, rcols)` with reversed row `k` (block row `nb - 1 - k`) at `rptr[k]..rptr[k + 1]`.
fn reversed_pattern(bm: &BlockSymMatrix) -> (Vec<usize>, Vec<u32>) {
    let (rp, cols) = (bm.row_ptr(), bm.cols());
    let nb = rp.len() - 1;
    let mut rptr = Vec::with_capacity(nb + 1);
    let mut rcols = Vec::new();
    rptr.push(0);
    for i in (0..nb).rev() {
        for p in (rp[i]..rp[i + 1]).rev() {
            if cols[p] as usize != i {
                rcols.push(cols[p]);
            }
        }
        rptr.push(rcols.len());
    }
    (rptr, rcols)
}

/// Copy the off-diagonal blocks of `vals` (the layout of `bm`'s values) into `rvals` in the
/// order of [`reversed_pattern`].
fn reverse_values(bm: &BlockSymMatrix, vals: &[f32], rvals: &mut [f32]) {
    let (rp, cols) = (bm.row_ptr(), bm.cols());
    let nb = rp.len() - 1;
    let mut q = 0;
    for i in (0..nb).rev() {
        for p in (rp[i]..rp[i + 1]).rev() {
            if cols[p] as usize != i {
                rvals[9 * q..9 * q + 9].copy_from_slice(&vals[9 * p..9 * p + 9]);
                q += 1;
            }
        }
    }
}

/// `m v` for a row-major 3x3 block.
#[inline(always)]
fn mul3(m: &[f64; 9], v: [f64; 3]) -> [f64; 3] {
    [
        m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
        m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
        m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
    ]
}

/// [`block_sweeps`] with the mask applied (`MASK`) or not.
#[allow(clippy::too_many_arguments)]
fn sweeps<T: Copy + Into<f64>, const MASK: bool>(
    row_ptr: &[usize],
    cols: &[u32],
    vals: &[T],
    back: Option<Backward<'_, T>>,
    dinv: &[[f64; 9]],
    free: &[f64],
    r: &[f64],
    z: &mut [f64],
) {
    let nb = dinv.len();
    z.copy_from_slice(r);
    // the off-diagonal stored blocks of row i: (block columns, values)
    let row = |i: usize| {
        let (mut s, e) = (row_ptr[i], row_ptr[i + 1]);
        if s < e && cols[s] as usize == i {
            s += 1;
        }
        (&cols[s..e], &vals[9 * s..9 * e])
    };
    for i in 0..nb {
        let o = 3 * i;
        let mut w = mul3(&dinv[i], [z[o], z[o + 1], z[o + 2]]);
        z[o..o + 3].copy_from_slice(&w);
        if MASK {
            for a in 0..3 {
                w[a] *= free[o + a];
            }
        }
        let (cs, vs) = row(i);
        for (&j, b) in cs.iter().zip(vs.chunks_exact(9)) {
            let j = 3 * j as usize;
            let b: &[T; 9] = b.try_into().expect("9 entries");
            let b = b.map(Into::into);
            let zj = &mut z[j..j + 3];
            for c in 0..3 {
                let v = b[c] * w[0] + b[3 + c] * w[1] + b[6 + c] * w[2];
                if MASK {
                    zj[c] -= free[j + c] * v;
                } else {
                    zj[c] -= v;
                }
            }
        }
    }
    for i in (0..nb).rev() {
        let o = 3 * i;
        let mut acc = [0.0; 3];
        let (cs, vs) = match &back {
            Some(bk) => {
                let k = nb - 1 - i;
                let (s, e) = (bk.rptr[k], bk.rptr[k + 1]);
                (&bk.rcols[s..e], &bk.rvals[9 * s..9 * e])
            }
            None => row(i),
        };
        for (&j, b) in cs.iter().zip(vs.chunks_exact(9)) {
            let j = 3 * j as usize;
            let b: &[T; 9] = b.try_into().expect("9 entries");
            let b = b.map(Into::into);
            let zj = &z[j..j + 3];
            let x = if MASK {
                [free[j] * zj[0], free[j + 1] * zj[1], free[j + 2] * zj[2]]
            } else {
                [zj[0], zj[1], zj[2]]
            };
            for a in 0..3 {
                acc[a] += b[3 * a] * x[0] + b[3 * a + 1] * x[1] + b[3 * a + 2] * x[2];
            }
        }
        if MASK {
            for a in 0..3 {
                acc[a] *= free[o + a];
            }
        }
        let d = mul3(&dinv[i], acc);
        for a in 0..3 {
            z[o + a] -= d[a];
        }
    }
}
