//! The active-set geometry of MPRGP and MPGP: which blocks are free, the free / chopped split of
//! the gradient, the reduced free gradient, the largest feasible step and the landing on the
//! boundary. The set answers these itself ([`cpbench_problems::SetFamily`], forwarded by
//! [`ConstraintSet::split_gradient`], [`ConstraintSet::reduced_free_gradient`],
//! [`ConstraintSet::reduced_free_dot`], [`ConstraintSet::max_feasible_step`],
//! [`ConstraintSet::land_on_boundary`], [`ConstraintSet::block_is_free`]), in each family's
//! module of `cpbench_problems::constraints`, so the iteration in [`super::core`] reads
//! `k.split_gradient(..)` and a new class brings its geometry with it; the scalar sets keep one
//! tight loop each (the hot path of MPRGP's CG steps). Their tests are in
//! `solvers/tests/it/mprgp.rs` (module `geometry`).
//!
//! Definitions: Dostal & Schoberl 2005 (Comput. Optim. Appl. 30), eq. (2.2) for bounds; Dostal
//! & Kozubek 2012 (Math. Program. 135), section 2, for separable convex sets. A block is *free*
//! in the interior of its set and *active* on its boundary; with `g = N x + r`: the projected
//! gradient `g^P = -P_{T_K(x)}(-g)`, the free gradient `phi` (`g` on free blocks, `0` on active
//! ones), the chopped gradient `beta = g^P - phi`, the reduced free gradient
//! `phi~_alpha = (x - P_K(x - alpha phi)) / alpha`. Special blocks: a box component with
//! `lo = hi` is fixed (`g^P = 0`); a cone with `mu = 0` is the half-line `{x_t = 0, x_n >= 0}`,
//! whose free gradient is `(g_n, 0, 0)` when `x_n > 0`.

#[cfg(doc)]
use cpbench_problems::ConstraintSet;
