//! Safeguarded Anderson acceleration of a sweep map `x -> G(x)` onto a constraint set `K`,
//! shared by the Gauss-Seidel solvers (`nsgs`, `pgs`).
//!
//! Walker & Ni 2011, SIAM J. Numer. Anal. 49, "Anderson acceleration for fixed-point
//! iterations", type II in the differences formulation: with `f = G(x) - x` and the last `m`
//! differences `DF = [f_{i+1} - f_i]`, `DG = [G(x_{i+1}) - G(x_i)]` (`n x m` each), the next
//! iterate is `P_K(G(x) - DG z)`, `z = argmin ||f - DF z||`, solved by the normal equations
//! `DF^T DF z = DF^T f` with a `1e-12 tr(DF^T DF)` Tikhonov term (`m <= 20`, so the `m x m`
//! system is solved densely).
//!
//! A Gauss-Seidel map is non-smooth (projections), so the extrapolation is **safeguarded**: an
//! extrapolated point whose own fixed-point residual `||G(x) - x||` exceeds `safeguard` times
//! the residual of the step that produced it is replaced by that step's plain sweep result
//! `G(x_prev)` and the history restarts; the history also restarts when `||f||` exceeds `10^3`
//! times its best value (or is not finite).
//!
//! **Cost per sweep** (`n` unknowns, depth `m`): the new difference columns (2 passes over
//! `n`), the new column's inner products with the stored ones (up to `m` dots: the Gram
//! matrix `DF^T DF` is kept, each pair computed once when the later of its two ring slots is
//! written), `DF^T f` (`m` dots) and the combination `G(x) - DG z` (`m` axpys): about
//! `3 m n` values read, `2 m n` doubles (`16 m n` bytes) of memory. Sequential; nothing is
//! allocated after [`Anderson::new`].

use crate::kernels::{sum_in_order, vec_chunk, vec_chunks};
use cpbench_problems::ConstraintSet;
use rayon::prelude::*;

/// Largest Anderson depth `m`.
pub const MAX_ANDERSON: usize = 20;

/// Anderson acceleration memory and counters (module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Anderson {
    /// Depth `m` (0: no acceleration).
    m: usize,
    /// The safeguard factor `> 0`.
    safeguard: f64,
    /// The sweep's start `x` (set by [`Anderson::begin`]), then `f = G(x) - x`.
    x: Vec<f64>,
    f_prev: Vec<f64>,
    g_prev: Vec<f64>,
    /// `m` ring slots of `n` values each.
    df: Vec<Vec<f64>>,
    dg: Vec<Vec<f64>>,
    /// Per-chunk partial sums of a pass ([`vec_chunks`]`(n)` of them): the new slot's inner
    /// products with the written slots in `0..m`, `df_i^T f` in `MAX_ANDERSON..`.
    parts: Vec<[f64; 2 * MAX_ANDERSON]>,
    /// `gram[i m + j] = df_i^T df_j` over the ring slots written so far (`m x m`): each pair
    /// computed once, when the later of its two slots is written.
    gram: Vec<f64>,
    /// Ring slots written at least once (`0..written`).
    written: usize,
    count: usize,
    head: usize,
    have_prev: bool,
    best_f: f64,
    /// `||f||` of the previous step and whether that step was extrapolated.
    last_f: f64,
    accelerated: bool,
    /// Restarts because `||f||` grew past `10^3` times its best value.
    pub(crate) restarts: u64,
    /// Extrapolated points rejected by the safeguard.
    pub(crate) rejections: u64,
    /// Vector reads and writes of the passes so far ([`crate::kernels::vector_bytes`]).
    pub(crate) vec_passes: u64,
}

impl Anderson {
    /// A memory for `n` unknowns and depth `m` (`m <= MAX_ANDERSON`, checked by the solvers'
    /// settings); `m = 0` allocates nothing and [`Anderson::step`] must not be called.
    pub(crate) fn new(n: usize, m: usize, safeguard: f64) -> Self {
        let len = if m > 0 { n } else { 0 };
        Self {
            m,
            safeguard,
            x: vec![0.0; len],
            f_prev: vec![0.0; len],
            g_prev: vec![0.0; len],
            df: vec![vec![0.0; len]; m],
            dg: vec![vec![0.0; len]; m],
            parts: vec![[0.0; 2 * MAX_ANDERSON]; if m > 0 { vec_chunks(n) } else { 0 }],
            gram: vec![0.0; m * m],
            best_f: f64::INFINITY,
            ..Self::default()
        }
    }

    /// Whether the acceleration is on (`m > 0`).
    pub(crate) fn is_on(&self) -> bool {
        self.m > 0
    }

    /// Record the sweep's start `x` (length `n`).
    pub(crate) fn begin(&mut self, x: &[f64]) {
        self.vec_passes += 2;
        self.x.copy_from_slice(x);
    }

    /// The extrapolation: on entry `g` holds the sweep's result `G(x)` (`x` given to
    /// [`Anderson::begin`]); `g` is replaced by `P_K(G(x) - DG z)` (`set.project_blocks`: the
    /// cones, boxes or orthant of `K`, the identity on joint blocks), or by the previous plain
    /// sweep result when the safeguard rejects the last extrapolation (module docs). Three
    /// chunked passes over `n` ([`vec_chunk`]): `f` and `||f||`; the new difference columns
    /// with their inner products; the combination and projection.
    pub(crate) fn step(&mut self, set: &ConstraintSet, g: &mut [f64]) {
        let m = self.m;
        let n = g.len();
        let c = vec_chunk(n);
        // (A) f = g - x, kept in x, and ||f||^2
        let f_pass = |x: &mut [f64], g: &[f64]| {
            let mut s = 0.0;
            for (xi, gi) in x.iter_mut().zip(g) {
                *xi = gi - *xi;
                s += *xi * *xi;
            }
            s
        };
        let fnorm2 = if c >= n {
            f_pass(&mut self.x, g)
        } else {
            let parts = &mut self.parts;
            (
                parts.par_iter_mut(),
                self.x.par_chunks_mut(c),
                g.par_chunks(c),
            )
                .into_par_iter()
                .for_each(|(p, x, g)| p[0] = f_pass(x, g));
            sum_in_order(parts.iter().map(|p| p[0]))
        };
        self.vec_passes += 3;
        let fnorm = fnorm2.sqrt();
        if self.accelerated && !(fnorm <= self.safeguard * self.last_f) {
            // the extrapolated point did worse than the plain sweep promised: fall back to
            // the plain sweep result G(x_prev) and restart the history
            g.copy_from_slice(&self.g_prev);
            self.vec_passes += 2;
            self.count = 0;
            self.have_prev = false;
            self.accelerated = false;
            self.rejections += 1;
            return;
        }
        self.last_f = fnorm;
        self.accelerated = false;
        if !fnorm.is_finite() || fnorm > 1e3 * self.best_f {
            self.count = 0;
            self.have_prev = false;
            self.restarts += 1;
        }
        self.best_f = self.best_f.min(fnorm);
        if !self.have_prev {
            // no history (the first step, or a restart): nothing to extrapolate with
            self.f_prev.copy_from_slice(&self.x);
            self.g_prev.copy_from_slice(g);
            self.vec_passes += 4;
            self.have_prev = true;
            return;
        }
        // (B) the new slot s: df_s = f - f_prev, dg_s = g - g_prev, then f_prev = f,
        // g_prev = g; its inner products with every written slot (`df_lo^T df_hi`, lo <= hi:
        // the others' products are kept, their columns did not change) and `df_i^T f` for
        // the k slots of the least-squares problem
        let s = self.head;
        self.written = self.written.max(s + 1);
        self.head = (self.head + 1) % m;
        self.count = (self.count + 1).min(m);
        let (w, k) = (self.written, self.count);
        // (B): f, g, f_prev, g_prev read, df_s, dg_s, f_prev, g_prev written, w slots read
        self.vec_passes += 8 + w as u64;
        {
            let (lo, rest) = self.df.split_at_mut(s);
            let (df_s, hi) = rest.split_first_mut().expect("slot s < m");
            let dg_s = &mut self.dg[s];
            let new_slot = |o: usize,
                            p: &mut [f64; 2 * MAX_ANDERSON],
                            f: &[f64],
                            g: &[f64],
                            fp: &mut [f64],
                            gp: &mut [f64],
                            d: &mut [f64],
                            e: &mut [f64]| {
                for i in 0..f.len() {
                    d[i] = f[i] - fp[i];
                    e[i] = g[i] - gp[i];
                    fp[i] = f[i];
                    gp[i] = g[i];
                }
                let r = o..o + f.len();
                let slot = |j: usize| -> &[f64] {
                    match j.cmp(&s) {
                        std::cmp::Ordering::Less => &lo[j][r.clone()],
                        std::cmp::Ordering::Equal => &*d,
                        std::cmp::Ordering::Greater => &hi[j - s - 1][r.clone()],
                    }
                };
                for (j, pj) in p[..w].iter_mut().enumerate() {
                    *pj = d.iter().zip(slot(j)).map(|(a, b)| a * b).sum();
                }
                for i in 0..k {
                    p[MAX_ANDERSON + i] = slot(i).iter().zip(f).map(|(a, b)| a * b).sum();
                }
            };
            if c >= n {
                new_slot(
                    0,
                    &mut self.parts[0],
                    &self.x,
                    g,
                    &mut self.f_prev,
                    &mut self.g_prev,
                    df_s,
                    dg_s,
                );
            } else {
                (
                    self.parts.par_iter_mut(),
                    self.x.par_chunks(c),
                    g.par_chunks(c),
                    self.f_prev.par_chunks_mut(c),
                    self.g_prev.par_chunks_mut(c),
                    df_s.par_chunks_mut(c),
                    dg_s.par_chunks_mut(c),
                )
                    .into_par_iter()
                    .enumerate()
                    .for_each(|(i, (p, f, g, fp, gp, d, e))| {
                        new_slot(i * c, p, f, g, fp, gp, d, e)
                    });
            }
        }
        let mut b = [0.0f64; MAX_ANDERSON];
        for j in 0..w {
            let v = sum_in_order(self.parts.iter().map(|p| p[j]));
            self.gram[s * m + j] = v;
            self.gram[j * m + s] = v;
        }
        for (i, bi) in b[..k].iter_mut().enumerate() {
            *bi = sum_in_order(self.parts.iter().map(|p| p[MAX_ANDERSON + i]));
        }
        let mut a = [0.0f64; MAX_ANDERSON * MAX_ANDERSON];
        let mut tr = 0.0;
        for i in 0..k {
            for j in i..k {
                // slots 0..k were all written (k <= written), so their products are cached
                let v = self.gram[i * m + j];
                a[i * k + j] = v;
                a[j * k + i] = v;
            }
            tr += a[i * k + i];
        }
        for i in 0..k {
            a[i * k + i] += 1e-12 * tr.max(f64::MIN_POSITIVE);
        }
        if !solve_small(&mut a[..k * k], &mut b[..k], k) {
            return;
        }
        // (C) g = P_K(g - DG z), chunk by chunk: g read and written, k slots read
        self.vec_passes += 2 + k as u64;
        let bs = set.block_size();
        let dg = &self.dg;
        let combine = |o: usize, g: &mut [f64]| {
            let r = o..o + g.len();
            for (j, &zj) in b[..k].iter().enumerate() {
                for (gi, d) in g.iter_mut().zip(&dg[j][r.clone()]) {
                    *gi -= zj * d;
                }
            }
            set.project_blocks(o / bs, g);
        };
        if c >= n {
            combine(0, g);
        } else {
            g.par_chunks_mut(c)
                .enumerate()
                .for_each(|(i, g)| combine(i * c, g));
        }
        self.accelerated = true;
    }
}

/// Solve the `k x k` system `a z = b` (row-major `a`, in place) by Gaussian elimination with
/// partial pivoting; `false` when singular.
fn solve_small(a: &mut [f64], b: &mut [f64], k: usize) -> bool {
    for col in 0..k {
        let p = (col..k)
            .max_by(|&i, &j| a[i * k + col].abs().total_cmp(&a[j * k + col].abs()))
            .unwrap_or(col);
        if a[p * k + col].abs() <= f64::MIN_POSITIVE {
            return false;
        }
        if p != col {
            for j in 0..k {
                a.swap(p * k + j, col * k + j);
            }
            b.swap(p, col);
        }
        for i in col + 1..k {
            let f = a[i * k + col] / a[col * k + col];
            for j in col..k {
                a[i * k + j] -= f * a[col * k + j];
            }
            b[i] -= f * b[col];
        }
    }
    for i in (0..k).rev() {
        let mut s = b[i];
        for j in i + 1..k {
            s -= a[i * k + j] * b[j];
        }
        b[i] = s / a[i * k + i];
    }
    true
}
