//! [`SetFamily`]: what a problem class's constraint set answers, so that the residual module,
//! the writers, the derivations and the solvers ask the set instead of matching on
//! [`super::ConstraintSet`]'s variants.
//!
//! Each set family implements the trait on a borrowed view of its data (a `Copy` struct of
//! slices: [`super::nonneg::NonNegativeSet`], [`super::boxes::BoxSet`],
//! [`super::cones::ConeSet`], [`super::friction_box::FrictionBoxSet`]); the one table that
//! maps a [`super::ConstraintSet`] variant to its view is the `with_family!` macro of
//! `constraints/mod.rs`. Dispatch is by `match`, once per call: every method below is
//! monomorphic in its family and inlined, so a per-block call (PGS, NSGS, APGD's projections)
//! costs what the former `match` on the variant cost, and the whole-vector methods
//! ([`SetFamily::project`], [`SetFamily::split_gradient`], ...) keep one tight loop per family.

use super::ProblemClass;
use crate::error::Result;

/// The residual module's per-block accumulators (docs/formulation.md section 4, the
/// documentation of `residual.rs`), filled by [`SetFamily::residual_terms`] block by block.
/// Every field starts at 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ResidualTerms {
    /// Sum of squares of the dual infeasibility `g - P_{K*}(g)` (or its per-class analogue).
    pub dual_feas2: f64,
    /// Sum of the per-block complementarity products (signed where the class's product is,
    /// e.g. `x g` of the LCP, `x . g` of a cone block).
    pub comp_sum: f64,
    /// Largest `|complementarity product|` of a block.
    pub comp_max: f64,
    /// Res3 (Heyn et al. 2013): the largest violation of primal feasibility, dual feasibility
    /// or complementarity of any component.
    pub res3: f64,
    /// Sum of squares of Siconos' fc3d / fc2d error `x - P_K(x - (g + mu ||g_T|| e_n))`
    /// (cones only; 0 for the other sets).
    pub fc3d2: f64,
}

/// One piece of a constraint set written as a product of simple convex sets: the vocabulary
/// in which the conic solvers (the IPM's conic form and start point, Clarabel's cones) build
/// their constraints, so that they ask [`SetFamily::conic_pieces`] instead of matching on the
/// set. Indices are into the unknown `gamma` (length `n`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConicPiece {
    /// `gamma_j >= 0` (the LCP's orthant, row by row).
    HalfLine {
        /// The unknown.
        j: usize,
    },
    /// `lo <= gamma_j <= hi` (`lo = -inf`, `hi = +inf`, `lo = hi` allowed).
    Interval {
        /// The unknown.
        j: usize,
        /// Lower bound (`-inf` allowed).
        lo: f64,
        /// Upper bound (`+inf` allowed).
        hi: f64,
    },
    /// The Coulomb cone `K_mu` on `gamma[b..b + dim]` (normal first); `mu = 0` is the
    /// half-line `{x_t = 0, x_n >= 0}`.
    Cone {
        /// First unknown of the contact (`dim c`).
        b: usize,
        /// Friction coefficient, `mu >= 0`.
        mu: f64,
        /// Unknowns per contact, 2 or 3.
        dim: usize,
    },
    /// The fixed square pyramid `{x_n >= 0, |x_t,i| <= mu x_n}` on `gamma[b..b + 3]`: the set of
    /// a friction box (the boxed LCP itself, whose bounds move, is not a QP).
    FrictionPyramid {
        /// First unknown of the contact (`3 c`).
        b: usize,
        /// Friction coefficient, `mu >= 0`.
        mu: f64,
    },
}

/// What a problem class's constraint set `K` answers (docs/formulation.md sections 2 to 4).
/// Implemented by each family's view (a `Copy` struct of borrowed slices, lifetime `'a`).
/// Shapes: `n` is the number of unknowns; a *block* is [`SetFamily::block_size`] consecutive
/// components (one for the LCP and boxes, one contact for cones and friction boxes); a
/// per-block method takes block `b`'s slices, the whole-vector methods slices of length `n`.
/// Active-set geometry (MPRGP / MPGP): Dostal & Schoberl 2005 (Comput. Optim. Appl. 30),
/// eq. (2.2) for bounds; Dostal & Kozubek 2012 (Math. Program. 135), section 2, for separable
/// convex sets. No method but [`SetFamily::data`], [`SetFamily::summary`] and
/// [`SetFamily::validate`]'s errors allocates.
pub trait SetFamily<'a>: Copy {
    /// The QP class this set defines ([`super::ConstraintSet::qp_class`]).
    fn qp_class(self) -> ProblemClass;

    /// Check the set's data against the problem size `n` (lengths, finiteness, signs).
    fn validate(self, n: usize) -> Result<()>;

    /// Unknowns per block.
    fn block_size(self) -> usize;

    /// The cone dimension (unknowns per contact) of Coulomb cones; `None` for other sets.
    #[inline]
    fn cone_dim(self) -> Option<usize> {
        None
    }

    /// Project `x` (length `n`) onto the set, in place.
    fn project(self, x: &mut [f64]);

    /// Project block `b`'s slice `x` in place.
    fn project_block(self, b: usize, x: &mut [f64]);

    /// Project the whole blocks `first..first + x.len() / block_size` whose unknowns are `x`,
    /// in place: [`SetFamily::project`] restricted to them (the same arithmetic block by block),
    /// for a chunk of a vector. `x.len()` is a multiple of the block size.
    #[inline]
    fn project_blocks(self, first: usize, x: &mut [f64]) {
        let bs = self.block_size();
        for (i, xb) in x.chunks_exact_mut(bs).enumerate() {
            self.project_block(first + i, xb);
        }
    }

    /// The projection of the natural map and of Res4 for block `b` of `y`, at the iterate `x`
    /// (both the block's slices): [`SetFamily::project_block`] for a fixed set; a set whose
    /// bounds move with `x` holds them at `x` (friction boxes).
    #[inline]
    fn project_at(self, b: usize, x: &[f64], y: &mut [f64]) {
        let _ = x;
        self.project_block(b, y)
    }

    /// Projected gradient `g^P = -P_{T_K(x)}(-g)` of block `b` into `out` (all the block's
    /// slices, `x` feasible).
    fn projected_gradient_block(self, b: usize, x: &[f64], g: &[f64], out: &mut [f64]);

    /// Add block `b`'s dual feasibility, complementarity, Res3 and fc3d terms at `(x, g)` (the
    /// block's slices) to `acc`.
    fn residual_terms(self, b: usize, x: &[f64], g: &[f64], acc: &mut ResidualTerms);

    /// The friction coefficient of each contact (length `n / block_size`); `None` for sets
    /// without friction.
    #[inline]
    fn friction(self) -> Option<&'a [f64]> {
        None
    }

    /// The set's data vectors by the names the writers store them under (`instance.json`'s
    /// fields, the external protocol's `<name>.mtx` files): `[]` for `gamma >= 0`,
    /// `[("lo", lo), ("hi", hi)]` for boxes, `[("mu", mu)]` for cones and friction boxes.
    /// Default: `[("mu", mu)]` for a set with friction ([`SetFamily::friction`]), else `[]`.
    #[inline]
    fn data(self) -> Vec<(&'static str, &'a [f64])> {
        self.friction().map(|mu| ("mu", mu)).into_iter().collect()
    }

    /// The data vectors in the order the content hash reads them (the first two of
    /// [`SetFamily::data`], empty slices where there are fewer).
    #[inline]
    fn parameters(self) -> (&'a [f64], &'a [f64]) {
        let d = self.data();
        let at = |i: usize| d.get(i).map_or(&[][..], |v| v.1);
        (at(0), at(1))
    }

    /// Lines describing the set's data for `cpbench info`, as `(label, value)`. Default: the
    /// range of the friction coefficients (`mu range`) for a set with friction, else none.
    #[inline]
    fn summary(self) -> Vec<(&'static str, String)> {
        self.friction().map(mu_range_line).into_iter().collect()
    }

    /// Append the set over `n` unknowns to `out` as a product of [`ConicPiece`]s, in the order
    /// of the unknowns.
    fn conic_pieces(self, n: usize, out: &mut Vec<ConicPiece>);

    /// Whether block `b` (slice `x`, feasible) is free (in the interior of its set).
    fn block_is_free(self, b: usize, x: &[f64]) -> bool;

    /// Restrict the free gradient `phi` of free block `b` (slice, `g` copied in) to the
    /// directions that are free there (a `mu = 0` cone: the normal only). Default: all are.
    #[inline]
    fn restrict_free(self, b: usize, phi: &mut [f64]) {
        let _ = (b, phi);
    }

    /// Free gradient `phi` and chopped gradient `beta` of the whole vector: `phi = g`,
    /// `beta = 0` on free blocks, `phi = 0`, `beta = g^P` on active ones (`phi + beta = g^P`).
    /// Shapes: length `n`. The default walks the blocks; scalar sets keep one tight loop.
    #[inline]
    fn split_gradient(self, x: &[f64], g: &[f64], phi: &mut [f64], beta: &mut [f64]) {
        let bs = self.block_size();
        for b in 0..x.len() / bs {
            let s = b * bs..(b + 1) * bs;
            let (xb, gb) = (&x[s.clone()], &g[s.clone()]);
            if self.block_is_free(b, xb) {
                phi[s.clone()].copy_from_slice(gb);
                self.restrict_free(b, &mut phi[s.clone()]);
                beta[s].iter_mut().for_each(|v| *v = 0.0);
            } else {
                phi[s.clone()].iter_mut().for_each(|v| *v = 0.0);
                self.projected_gradient_block(b, xb, gb, &mut beta[s]);
            }
        }
    }

    /// Reduced free gradient `phi~_alpha = (x - P_K(x - alpha phi)) / alpha` into `out`
    /// (Dostal & Kozubek 2012, eq. (2.6)), `alpha > 0`. Shapes: length `n`.
    #[inline]
    fn reduced_free_gradient(self, x: &[f64], phi: &[f64], alpha: f64, out: &mut [f64]) {
        for ((o, xi), pi) in out.iter_mut().zip(x).zip(phi) {
            *o = xi - alpha * pi;
        }
        self.project(out);
        for (o, xi) in out.iter_mut().zip(x) {
            *o = (xi - *o) / alpha;
        }
    }

    /// `phi~_alpha^T phi`; `w` is scratch of length `n` (the default forms `phi~` in it).
    #[inline]
    fn reduced_free_dot(self, x: &[f64], phi: &[f64], alpha: f64, w: &mut [f64]) -> f64 {
        self.reduced_free_gradient(x, phi, alpha, w);
        w.iter().zip(phi).map(|(a, b)| a * b).sum()
    }

    /// Largest `t >= 0` with `x - t d` in `K` for a feasible `x`, and the block that blocks it
    /// (`(inf, None)` when none does). Shapes: length `n`.
    fn max_feasible_step(self, x: &[f64], d: &[f64]) -> (f64, Option<usize>);

    /// Put block `b` (slices `x`, `d`), which blocked the step `x - t d`, exactly on the
    /// boundary it reached.
    fn land_on_boundary(self, b: usize, x: &mut [f64], d: &[f64]);
}

/// The running minimum of [`SetFamily::max_feasible_step`]: `(t, block)`, replaced when a
/// smaller `t` comes.
#[inline]
pub(super) fn take_min(best: &mut (f64, Option<usize>), t: f64, b: usize) {
    if t < best.0 {
        *best = (t, Some(b));
    }
}

/// The `cpbench info` line `("mu range", "[min mu, max mu]")` (`[inf, -inf]` for no contact).
pub(super) fn mu_range_line(mu: &[f64]) -> (&'static str, String) {
    let (lo, hi) = mu
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &m| {
            (a.min(m), b.max(m))
        });
    ("mu range", format!("[{lo}, {hi}]"))
}
