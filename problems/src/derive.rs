//! Robotics formulations of friction derived from a frictional instance (docs/formulation.md,
//! "Robotics formulations"): the polyhedral-cone LCP of Stewart & Trinkle (1996, Int. J. Numer.
//! Meth. Engng 39, 2673-2691, eqs. (20)-(24)) and Anitescu & Potra (1997, Nonlinear Dynamics 14,
//! 231-247, eq. (9)), built by [`FrictionPyramid::lcp`] / [`Instance::pyramid_lcp`], with the
//! map of its solution back to contact impulses ([`FrictionPyramid::impulse`]). The boxed LCP of
//! ODE-style engines is [`Instance::blcp`] (same unknowns as the cone problems).
//!
//! **The pyramid LCP.** Contact `c` with friction coefficient `mu_c` gets `k` unit directions
//! `d_j = (cos(2 pi j / k), sin(2 pi j / k))`, `j = 0..k-1`, in its tangent plane (the
//! coordinates of fclib's two tangential components), and the unknowns
//! `x_c = (c_n, beta_1, ..., beta_k, lambda)` (in that order, contact after contact: block size
//! `k + 2`). `G_c` (`3 x (k+1)`) maps `(c_n, beta)` to the contact impulse
//! `gamma_c = (c_n, sum_j beta_j d_j)`, `G = diag(G_c)`; with `u = W G x + q`:
//!
//! ```text
//! 0 <= c_n     ⊥  u_n                          >= 0
//! 0 <= beta_j  ⊥  lambda + d_j . u_t           >= 0     (j = 1..k)
//! 0 <= lambda  ⊥  mu c_n - sum_j beta_j        >= 0
//! ```
//!
//! that is `w = M z + q_lcp`, `z = (x_c)_c`, with (rows and columns ordered as `z`)
//! `M = [[G^T W G, E], [mu-row - E^T, 0]]`, `q_lcp = [G^T q; 0]`, `E` the `0/1` matrix with
//! `E_{beta_j(c), lambda(c)} = 1`, and the "mu-row" `mu_c` at `(lambda(c), c_n(c))`. `M` is
//! non-symmetric (size `nc (k + 2)`), its symmetric part indefinite in general: a general LCP
//! for Lemke, Newton-FB, PSOR or ENUM, refused by the QP solvers. The friction polygon is the
//! regular `k`-gon inscribed in the circle of radius `mu c_n` (vertices `mu c_n d_j`); the
//! friction force it gives in the direction of sliding is short by at most
//! `1 - cos(pi / k) <= pi^2 / (2 k^2)`, its direction off by at most `pi / k`.

use crate::constraints::ConstraintSet;
use crate::error::{ProblemError, Result};
use crate::instance::{Instance, ValidationOptions};
use crate::linalg::CscMatrix;

/// The number of facet directions of `--class lcp-pyramid` when none is given. 4 is the
/// pyramid of the robotics engines that use one (MuJoCo's pyramidal cones, ODE's box friction
/// rotated by 45 degrees), the smallest pyramid symmetric under both tangential reflections,
/// and gives the smallest LCP (6 unknowns per contact against 3): the one to compare with the
/// cone problems at engine fidelity. It under-estimates the friction force by up to
/// `1 - cos(pi/4) = 29%` between the directions `d_j`; `lcp-pyramid:8` (7.6%) or `:16` (1.9%)
/// when the comparison should measure the pyramid's convergence to the cone instead.
pub const DEFAULT_PYRAMID_K: usize = 4;

/// Fewest facet directions of a 3-D friction pyramid: with fewer than 3 the polygon has no
/// interior in the tangent plane. (In 2-D, one tangent, `k = 2` is exact.)
pub const MIN_PYRAMID_K: usize = 3;

/// Most facet directions accepted (the LCP has `nc (k + 2)` unknowns and `G^T W G` about
/// `(k / 3)^2` times the entries of `W`).
pub const MAX_PYRAMID_K: usize = 1024;

/// A friction pyramid with `k` facet directions: builds the Stewart-Trinkle / Anitescu-Potra LCP
/// of a frictional instance and maps its solutions back to contact impulses (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct FrictionPyramid {
    k: usize,
    /// `d_j` for `j = 0..k`; components below `4 eps` snapped to 0 (exact axes for `k = 4`).
    dirs: Vec<[f64; 2]>,
}

impl FrictionPyramid {
    /// The pyramid with `k` unit directions `d_j = (cos(2 pi j / k), sin(2 pi j / k))`.
    /// Errors: [`ProblemError::InvalidParameter`] unless `MIN_PYRAMID_K <= k <= MAX_PYRAMID_K`.
    pub fn new(k: usize) -> Result<Self> {
        if !(MIN_PYRAMID_K..=MAX_PYRAMID_K).contains(&k) {
            return Err(ProblemError::InvalidParameter {
                generator: "lcp-pyramid".into(),
                name: "k".into(),
                value: k.to_string(),
                reason: format!(
                    "the number of facet directions of a 3-D friction pyramid must lie in \
                     {MIN_PYRAMID_K}..={MAX_PYRAMID_K}"
                ),
            });
        }
        let snap = |v: f64| if v.abs() < 4.0 * f64::EPSILON { 0.0 } else { v };
        let dirs = (0..k)
            .map(|j| {
                let (s, c) = (2.0 * std::f64::consts::PI * j as f64 / k as f64).sin_cos();
                [snap(c), snap(s)]
            })
            .collect();
        Ok(Self { k, dirs })
    }

    /// The number of facet directions `k`.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The unit directions `d_j` (length `k`), tangent-plane coordinates.
    pub fn directions(&self) -> &[[f64; 2]] {
        &self.dirs
    }

    /// Unknowns per contact in the LCP: `k + 2` (`c_n`, `beta_1..beta_k`, `lambda`).
    pub fn block_size(&self) -> usize {
        self.k + 2
    }

    /// The pyramid LCP of a frictional instance `inst` (CCP, Coulomb or BLCP: its `W`, `q`,
    /// `mu`, `W` as stored): `M`, `q_lcp` of the module docs, a general LCP
    /// ([`Instance::new`] keeps the non-symmetric `M`). Name: the source's stem (suffix
    /// `__ccp`, `__coulomb` or `__blcp` removed) plus `__lcp-pyramid-{k}`; provenance:
    /// derivation `lcp-pyramid:{k}`, parameters `pyramid_k`, `contacts`, `source_class`,
    /// `asymmetry` of `M`, and `w_symmetrized_from` when the source's `W` was symmetrised
    /// (`symmetrized_from` itself is cleared: `M` was not). Forms `W` in CSC form if stored otherwise; `G^T W G` is built from
    /// `W`'s entries (each `3 x 3` entry of a block feeds at most `k^2` entries).
    /// Errors: [`ProblemError::WrongClass`] for an instance without friction,
    /// [`ProblemError::JointsUnsupported`] for one with joint blocks.
    pub fn lcp(&self, inst: &Instance) -> Result<Instance> {
        inst.constraints().refuse_joints(
            "the pyramid LCP (--class lcp-pyramid)",
            "its unknowns are non-negative by construction",
        )?;
        // any set with friction and 3 unknowns per contact: 3-D cones (CCP, Coulomb) or
        // friction boxes (BLCP)
        let k = inst.constraints();
        let mu = match k.friction() {
            Some(mu) if k.block_size() == 3 => mu,
            _ => {
                return Err(ProblemError::WrongClass {
                    expected: "ccp, coulomb or blcp on 3-D cones (2-D instances: use --class \
                               coulomb, whose planar law the k = 2 pyramid would only restate)"
                        .into(),
                    found: inst.class().to_string(),
                })
            }
        };
        let (k, bs) = (self.k, self.block_size());
        let nc = mu.len();
        let m = nc * bs;
        // G as rows: row s of contact c's G_c -> (column offset in x_c, value) pairs
        let g_row = |s: usize| -> Vec<(usize, f64)> {
            match s {
                0 => vec![(0, 1.0)],
                _ => self
                    .dirs
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d[s - 1] != 0.0)
                    .map(|(j, d)| (1 + j, d[s - 1]))
                    .collect(),
            }
        };
        let rows: [Vec<(usize, f64)>; 3] = [g_row(0), g_row(1), g_row(2)];
        let w = inst.csc();
        // the size of M = G^T W G before it is built: each stored W_ij gives |G row i| x
        // |G row j| entries (k^2 / 4 on average for a tangent pair); 56 bytes per triplet at
        // the peak (the triplets, their sorted copy, the assembled matrix: measured 770 MB
        // resident for 12.7 million triplets, Spheres-i099-356-679 at k = 64, predicted 713)
        let len = [
            rows[0].len() as u64,
            rows[1].len() as u64,
            rows[2].len() as u64,
        ];
        let triplets: u64 = (0..w.ncols())
            .map(|j| {
                let lj = len[j % 3];
                w.col(j).0.iter().map(|&i| len[i % 3] * lj).sum::<u64>()
            })
            .sum::<u64>()
            + 3 * nc as u64 * k as u64;
        crate::memory::check(
            &format!(
                "the lcp-pyramid:{k} LCP of {} ({nc} contacts, {} stored entries of W; M has \
                 about {triplets} entries)",
                inst.name(),
                w.nnz()
            ),
            triplets.saturating_mul(56),
            "use a smaller k (--class lcp-pyramid:K; the pyramid's entries grow as k^2)",
        )?;
        let mut t: Vec<(usize, usize, f64)> =
            Vec::with_capacity(w.nnz() * (k * k / 4).max(1) + 3 * nc * k);
        // (G^T W G)_{pq} = sum_{i,j} G_ip W_ij G_jq, W_ij from column j of W
        for j in 0..w.ncols() {
            let (cb, sb) = (j / 3, j % 3);
            let (ri, va) = w.col(j);
            for (&i, &v) in ri.iter().zip(va) {
                let (ca, sa) = (i / 3, i % 3);
                for &(p, gp) in &rows[sa] {
                    for &(q, gq) in &rows[sb] {
                        t.push((ca * bs + p, cb * bs + q, gp * v * gq));
                    }
                }
            }
        }
        for (c, &muc) in mu.iter().enumerate() {
            let (o, l) = (c * bs, c * bs + k + 1);
            for j in 0..k {
                t.push((o + 1 + j, l, 1.0)); // E: lambda in the beta_j rows
                t.push((l, o + 1 + j, -1.0)); // -E^T: -sum beta_j in the lambda row
            }
            if muc != 0.0 {
                t.push((l, o, muc));
            }
        }
        let m_mat = CscMatrix::from_triplets(m, m, &t)?;
        drop(t);
        let q = inst.r();
        let mut q_lcp = vec![0.0; m];
        for c in 0..nc {
            let o = c * bs;
            q_lcp[o] = q[3 * c];
            for (j, d) in self.dirs.iter().enumerate() {
                q_lcp[o + 1 + j] = d[0] * q[3 * c + 1] + d[1] * q[3 * c + 2];
            }
        }
        let name = inst.name();
        let base = ["__ccp", "__coulomb", "__blcp"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        let mut prov = inst.provenance().clone();
        prov.derivation = format!("lcp-pyramid:{k}");
        prov.parameters.remove("asymmetry");
        // M was not symmetrised (its asymmetry is recorded anew); W's rounding is W's
        if let Some(a) = prov.symmetrized_from.take() {
            prov.parameters
                .insert("w_symmetrized_from".into(), format!("{a:.3e}"));
        }
        prov.parameters.insert("pyramid_k".into(), k.to_string());
        prov.parameters.insert("contacts".into(), nc.to_string());
        prov.parameters
            .insert("source_class".into(), inst.class().to_string());
        Instance::new(
            format!("{base}__lcp-pyramid-{k}"),
            m_mat,
            q_lcp,
            ConstraintSet::NonNegative,
            prov,
            ValidationOptions::default(),
        )
    }

    /// The contact impulses `gamma` (length `3 nc`, normal first) of a pyramid-LCP vector `z`
    /// (length `nc (k + 2)`): `gamma_c = G_c (c_n, beta) = (c_n, sum_j beta_j d_j)`; `lambda`
    /// (the sliding speed bound) is dropped. With `u = W gamma + q` the residuals of the source
    /// problem (CCP, Coulomb, BLCP) are evaluated at `gamma`.
    /// Errors: [`ProblemError::SizeMismatch`] when `z.len()` is not a multiple of `k + 2`.
    pub fn impulse(&self, z: &[f64]) -> Result<Vec<f64>> {
        let bs = self.block_size();
        if z.len() % bs != 0 {
            return Err(ProblemError::SizeMismatch {
                what: format!("pyramid LCP vector (k = {}, k + 2 per contact)", self.k),
                expected: z.len() / bs * bs,
                found: z.len(),
            });
        }
        let mut gamma = vec![0.0; z.len() / bs * 3];
        for (zc, gc) in z.chunks_exact(bs).zip(gamma.chunks_exact_mut(3)) {
            gc[0] = zc[0];
            for (b, d) in zc[1..=self.k].iter().zip(&self.dirs) {
                gc[1] += b * d[0];
                gc[2] += b * d[1];
            }
        }
        Ok(gamma)
    }
}

impl Instance {
    /// The Stewart-Trinkle / Anitescu-Potra pyramid LCP with `k` facet directions of this
    /// frictional instance ([`FrictionPyramid::lcp`], module [`crate::derive`]).
    /// Errors: [`ProblemError::InvalidParameter`] for `k` out of range,
    /// [`ProblemError::WrongClass`] for an instance without friction.
    pub fn pyramid_lcp(&self, k: usize) -> Result<Instance> {
        FrictionPyramid::new(k)?.lcp(self)
    }
}
