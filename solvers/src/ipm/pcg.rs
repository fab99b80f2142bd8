//! The iterative linear solver of the interior point (`linear_solver = "pcg"`): the reduced
//! Newton system `K dx = rhs`, `K = N + G^T W^-2 G` (identity rows on fixed variables), by
//! preconditioned conjugate gradients. `K` is never assembled: `N v` is a counted product
//! ([`Problem::matvec`], so any storage of `N` works, also matrix-free) and `G^T W^-2 G` is
//! applied from its diagonal (bound rows) and 3x3 blocks (cones).
//!
//! Preconditioner: block Jacobi, the inverse of `K`'s diagonal blocks, 3x3 per contact on a
//! Coulomb instance (`N_cc + S W_c^-2 S`) and 1x1 otherwise (`N_jj + sum 1/w_k^2`), formed
//! once per interior-point iteration (Melanz et al. 2017, CMAME 320, use the same
//! contact-block structure). Memory `O(n)`.

use super::cone::SocScaling;
use super::constraints::ConicForm;
use crate::kernels::inv3_spd;
use crate::problem::Problem;
use cpbench_problems::linalg::dot;
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

/// Block-Jacobi preconditioned CG on `K = N + G^T W^-2 G`, with its scratch.
pub(super) struct Pcg {
    nblocks: DiagBlocks,
    fixed: Vec<bool>,
    /// `sum 1/w_k^2` over the bound rows of each variable.
    hdiag: Vec<f64>,
    /// `S W^-2 S` of each cone of the conic form.
    hblk: Vec<[[f64; 3]; 3]>,
    /// Inverse diagonal blocks of `K` (row-major 3x3 per contact, or 1x1 in `pinv1`).
    pinv3: Vec<[f64; 9]>,
    pinv1: Vec<f64>,
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
    /// Scratch for `n` variables, from the diagonal blocks of `N` and the fixed variables.
    pub(super) fn new(nblocks: DiagBlocks, fixed: Vec<bool>, form: &ConicForm) -> Self {
        let n = fixed.len();
        let (nb3, nb1) = match &nblocks {
            DiagBlocks::Block3(b) => (b.len(), 0),
            DiagBlocks::Scalar(_) => (0, n),
        };
        Self {
            nblocks,
            fixed,
            hdiag: vec![0.0; n],
            hblk: vec![[[0.0; 3]; 3]; form.cones.len()],
            pinv3: vec![[0.0; 9]; nb3],
            pinv1: vec![0.0; nb1],
            r: vec![0.0; n],
            z: vec![0.0; n],
            p: vec![0.0; n],
            q: vec![0.0; n],
            iter_time: Duration::ZERO,
            shift: 0.0,
        }
    }

    /// Bytes held (all `O(n)`).
    pub(super) fn bytes(&self) -> u64 {
        let n = self.fixed.len() as u64;
        let nb = match &self.nblocks {
            DiagBlocks::Block3(b) => b.len() as u64 * 72,
            DiagBlocks::Scalar(d) => d.len() as u64 * 8,
        };
        2 * nb + n * (5 * 8 + 1 + 8) + self.hblk.len() as u64 * 72
    }

    /// Form `G^T W^-2 G` and the block-Jacobi preconditioner for the scalings of this
    /// iteration (`wdiag` per bound row, `wsoc` per cone).
    /// `shift` (absolute) is added to the diagonal of `K` (a proximal regularisation).
    pub(super) fn update(
        &mut self,
        form: &ConicForm,
        wdiag: &[f64],
        wsoc: &[SocScaling],
        shift: f64,
    ) {
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
                    self.pinv3[c] = m;
                }
                for (k, cb) in form.cones.iter().enumerate() {
                    let c = cb.b / 3;
                    for a in 0..3 {
                        for e in 0..3 {
                            self.pinv3[c][3 * a + e] += self.hblk[k][a][e];
                        }
                    }
                }
                for c in 0..b.len() {
                    let mut m = self.pinv3[c];
                    for a in 0..3 {
                        if self.fixed[3 * c + a] {
                            for e in 0..3 {
                                m[3 * a + e] = 0.0;
                                m[3 * e + a] = 0.0;
                            }
                            m[4 * a] = 1.0;
                        }
                    }
                    self.pinv3[c] = inv3_spd(&m);
                }
            }
        }
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
    fn precondition(&mut self) {
        if !self.pinv1.is_empty() {
            for j in 0..self.r.len() {
                self.z[j] = self.pinv1[j] * self.r[j];
            }
        } else {
            for (c, m) in self.pinv3.iter().enumerate() {
                let o = 3 * c;
                let x = [self.r[o], self.r[o + 1], self.r[o + 2]];
                for a in 0..3 {
                    self.z[o + a] = m[3 * a] * x[0] + m[3 * a + 1] * x[1] + m[3 * a + 2] * x[2];
                }
            }
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
        self.precondition();
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
            self.precondition();
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
