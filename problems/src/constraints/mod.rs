//! Constraint sets `K` and their Euclidean projections.
//!
//! Conventions (docs/formulation.md sections 2 and 3): Coulomb cones are stored contact by contact,
//! normal component first, then the two tangential components (fclib order), or the one tangent
//! of a 2-D problem (cone dimension `d = 2`, Siconos' fc2d: [`ConstraintSet::cone_dim`]).
//! `K_mu = {(x_n, x_t) : ||x_t|| <= mu x_n}`; its dual is `K_mu^* = K_{1/mu}`.
//!
//! Layout: this module holds the [`ConstraintSet`] type, the class table [`CLASSES`] and the
//! family table `with_family!`; [`family`] holds the [`SetFamily`] trait, which every set
//! family implements in its own module: [`nonneg`] (`gamma >= 0`), [`boxes`]
//! (`lo <= gamma <= hi`), [`cones`] (Coulomb cones and their projections), [`friction_box`]
//! (the friction boxes of the boxed LCP, bounds moving with the normal). The trait carries
//! what code elsewhere used to match on: validation, block size, projections (whole vector,
//! one block, the natural map's), projected gradient, the residual module's per-block terms,
//! friction coefficients, the data vectors the writers store and the content hash reads, the
//! `cpbench info` summary, the set as a product of conic pieces ([`ConicPiece`], for the IPM
//! and Clarabel) and MPRGP / MPGP's active-set geometry. The methods of [`ConstraintSet`]
//! dispatch to it through `with_family!` (a `match`, no dynamic dispatch).
//!
//! **Adding a class** (the checklist of docs/architecture.md): a module
//! `constraints/<family>.rs` with a view struct implementing [`SetFamily`] (and unit tests);
//! here `pub mod`, the [`ConstraintSet`] variant (its serde tag is the family name in
//! `snake_case`), its line in `with_family!`, and, for a new class name, the
//! [`ProblemClass`] variant and its line in [`CLASSES`]; the bundle reader's arm in
//! `io/bundle.rs` (class name to set). Solvers take a QP class through [`ProblemClass::QP`]
//! (their registry lines) and build conic forms from [`ConicPiece`]s; the writers store
//! [`ConstraintSet::data`].
//!
//! The class of an *instance* is [`crate::Instance::class`]: the set alone does not know whether
//! cones carry the CCP or the Coulomb problem, so the set only answers [`ConstraintSet::qp_class`],
//! the QP class it defines.

pub mod boxes;
pub mod cones;
pub mod family;
pub mod friction_box;
pub mod nonneg;

pub use family::{ConicPiece, ResidualTerms, SetFamily};

pub use cones::{
    cone_projected_gradient, project_coulomb_cone, project_coulomb_cone2,
    project_dual_coulomb_cone, CONE_SURFACE_TOL,
};

use crate::error::Result;
use serde::{Deserialize, Serialize};

/// The feasible set of an instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConstraintSet {
    /// `gamma >= 0` (linear complementarity problem).
    NonNegative,
    /// `lo <= gamma <= hi` componentwise; entries may be `-inf` / `+inf` (box-constrained QP).
    Box {
        /// Lower bounds (length `n`).
        lo: Vec<f64>,
        /// Upper bounds (length `n`).
        hi: Vec<f64>,
    },
    /// Product of Coulomb friction cones, one per contact, `dim` unknowns per contact (normal
    /// first): `dim = 3` (two tangents, fclib) or `dim = 2` (one tangent, planar problems,
    /// Siconos' fc2d, `|x_t| <= mu x_n`).
    CoulombCones {
        /// Friction coefficient of each contact (length `n / dim`), `mu >= 0`.
        mu: Vec<f64>,
        /// Unknowns per contact, the cone dimension: 3 or 2. JSON without it reads as 3, and a
        /// 3-D set is written without it (the JSON of 3-D instances is unchanged).
        #[serde(default = "cone_dim_3", skip_serializing_if = "is_cone_dim_3")]
        dim: usize,
        /// Bilateral (joint) blocks: the first `joints` blocks of `dim` unknowns are free
        /// (no constraint: at a solution their velocity `u = N gamma + r` is zero, an equality
        /// row), the others are the cones; `mu` of a joint block is stored as 0
        /// (docs/formulation.md, "Bilateral rows"). JSON without it reads as 0, and a set
        /// without joints is written without it (existing files and hashes are unchanged).
        #[serde(default, skip_serializing_if = "is_zero")]
        joints: usize,
    },
    /// Friction boxes with moving bounds, one per contact, 3 unknowns per contact (normal
    /// first): `gamma_n >= 0`, `|gamma_t,i| <= mu gamma_n` (the boxed LCP of ODE-style engines,
    /// [`ProblemClass::Blcp`]; see [`friction_box`]).
    FrictionBox {
        /// Friction coefficient of each contact (length `n / 3`), `mu >= 0`.
        mu: Vec<f64>,
    },
}

fn cone_dim_3() -> usize {
    3
}

fn is_cone_dim_3(d: &usize) -> bool {
    *d == 3
}

fn is_zero(j: &usize) -> bool {
    *j == 0
}

/// The problem class implied by a constraint set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemClass {
    /// Linear complementarity problem (`gamma >= 0`).
    Lcp,
    /// Box-constrained convex QP.
    BoxQp,
    /// Cone complementarity problem with Coulomb cones (Anitescu's convex relaxation).
    Ccp,
    /// The true (non-associated) Coulomb friction problem of fclib and Siconos on the same
    /// cones: find `r in K_mu` with `u + mu ||u_T|| e_n in K^*` orthogonal to `r`, `u = W r + q`
    /// (docs/formulation.md section 2). Not a QP: the QP solvers do not support it.
    Coulomb,
    /// The boxed LCP of ODE-style engines on friction boxes ([`ConstraintSet::FrictionBox`]):
    /// `0 <= gamma_n ⊥ u_n >= 0` and, per tangent, `gamma_t,i` in `[-mu gamma_n, mu gamma_n]`
    /// with `u_t,i = 0` strictly inside, `u_t,i >= 0` at the lower and `<= 0` at the upper
    /// bound, `u = W gamma + q` (docs/formulation.md, "Robotics formulations"). The bounds move
    /// with `gamma_n`: not a QP, the QP solvers do not support it.
    Blcp,
}

/// One line of [`CLASSES`]: a problem class, its name and whether it is a convex QP.
#[derive(Clone, Copy, Debug)]
pub struct ClassEntry {
    /// The class.
    pub class: ProblemClass,
    /// Short lower-case name used in CSV files, `instance.json` and on the command line.
    pub name: &'static str,
    /// Whether the class is a convex QP `min 1/2 gamma^T N gamma + r^T gamma, gamma in K`:
    /// the classes the QP solvers handle.
    pub is_qp: bool,
}

impl ClassEntry {
    /// A table line: `class`, its `name`, whether it `is_qp`.
    pub const fn new(class: ProblemClass, name: &'static str, is_qp: bool) -> Self {
        ClassEntry { class, name, is_qp }
    }
}

/// The class table, one line per [`ProblemClass`] in the order of the enum: names, the name
/// list of [`ProblemClass::ALL`] and parsing ([`ProblemClass::from_name`]) follow from it.
pub const CLASSES: &[ClassEntry] = &[
    ClassEntry::new(ProblemClass::Lcp, "lcp", true),
    ClassEntry::new(ProblemClass::BoxQp, "box", true),
    ClassEntry::new(ProblemClass::Ccp, "ccp", true),
    ClassEntry::new(ProblemClass::Coulomb, "coulomb", false),
    ClassEntry::new(ProblemClass::Blcp, "blcp", false),
];

/// The number of QP classes in [`CLASSES`].
const fn count_qp() -> usize {
    let (mut i, mut k) = (0, 0);
    while i < CLASSES.len() {
        if CLASSES[i].is_qp {
            k += 1;
        }
        i += 1;
    }
    k
}

impl ProblemClass {
    /// Every class, in the order of the enum (of [`CLASSES`]).
    pub const ALL: [ProblemClass; CLASSES.len()] = {
        let mut all = [ProblemClass::Lcp; CLASSES.len()];
        let mut i = 0;
        while i < CLASSES.len() {
            all[i] = CLASSES[i].class;
            i += 1;
        }
        all
    };

    /// The convex QP classes ([`ProblemClass::is_qp`]), in the order of [`CLASSES`]: the
    /// classes of the QP solvers' registry lines.
    pub const QP: [ProblemClass; count_qp()] = {
        let mut qp = [ProblemClass::Lcp; count_qp()];
        let (mut i, mut k) = (0, 0);
        while i < CLASSES.len() {
            if CLASSES[i].is_qp {
                qp[k] = CLASSES[i].class;
                k += 1;
            }
            i += 1;
        }
        qp
    };

    /// This class's line of [`CLASSES`].
    #[inline]
    fn entry(self) -> &'static ClassEntry {
        &CLASSES[self as usize]
    }

    /// Short lower-case name used in CSV files and on the command line (`lcp`, `box`, `ccp`,
    /// `coulomb`, `blcp`).
    pub fn as_str(self) -> &'static str {
        self.entry().name
    }

    /// The class named `name` ([`ProblemClass::as_str`]), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        CLASSES.iter().find(|e| e.name == name).map(|e| e.class)
    }

    /// Whether the class is a convex QP `min 1/2 gamma^T N gamma + r^T gamma, gamma in K` (LCP,
    /// box QP, CCP): the classes the QP solvers handle. False for [`ProblemClass::Coulomb`] and
    /// [`ProblemClass::Blcp`].
    pub fn is_qp(self) -> bool {
        self.entry().is_qp
    }
}

impl std::fmt::Display for ProblemClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The table of set families: each [`ConstraintSet`] variant and its [`SetFamily`] view, one
/// line per family. Every method of [`ConstraintSet`] below dispatches through it (a `match`
/// whose arms are monomorphic: no dynamic dispatch).
macro_rules! with_family {
    ($set:expr, $f:ident => $body:expr) => {
        match $set {
            ConstraintSet::NonNegative => {
                let $f = nonneg::NonNegativeSet;
                $body
            }
            ConstraintSet::Box { lo, hi } => {
                let $f = boxes::BoxSet { lo, hi };
                $body
            }
            ConstraintSet::CoulombCones { mu, dim, joints } => {
                let $f = cones::ConeSet {
                    mu,
                    dim: *dim,
                    joints: *joints,
                };
                $body
            }
            ConstraintSet::FrictionBox { mu } => {
                let $f = friction_box::FrictionBoxSet { mu };
                $body
            }
        }
    };
}

impl ConstraintSet {
    /// 3-D Coulomb cones with friction coefficients `mu` (one per contact).
    pub fn coulomb(mu: Vec<f64>) -> Self {
        ConstraintSet::coulomb_dim(mu, 3)
    }

    /// Coulomb cones of dimension `dim` (2 or 3; checked by [`ConstraintSet::validate`]) with
    /// friction coefficients `mu` (one per contact).
    pub fn coulomb_dim(mu: Vec<f64>, dim: usize) -> Self {
        ConstraintSet::CoulombCones { mu, dim, joints: 0 }
    }

    /// Coulomb cones of dimension `dim` whose first `joints` blocks are bilateral (free,
    /// equality rows at a solution; docs/formulation.md, "Bilateral rows"): `mu` has one entry
    /// per block (`n / dim`), 0 on the joint blocks. Checked by [`ConstraintSet::validate`]
    /// ([`crate::ProblemError::JointCount`], [`crate::ProblemError::JointFriction`]).
    pub fn coulomb_jointed(mu: Vec<f64>, dim: usize, joints: usize) -> Self {
        ConstraintSet::CoulombCones { mu, dim, joints }
    }

    /// The number of bilateral (free) blocks at the start of the vector: the `joints` of
    /// Coulomb cones, 0 for every other set.
    #[inline]
    pub fn joints(&self) -> usize {
        match self {
            ConstraintSet::CoulombCones { joints, .. } => *joints,
            _ => 0,
        }
    }

    /// `Ok` for a set without joints; [`crate::ProblemError::JointsUnsupported`] naming `what`
    /// (a format, a derivation) and `reason` otherwise: what cannot express or take equality
    /// rows calls this instead of dropping them.
    pub fn refuse_joints(&self, what: &str, reason: &str) -> Result<()> {
        if self.joints() == 0 {
            return Ok(());
        }
        Err(crate::ProblemError::JointsUnsupported {
            what: what.into(),
            reason: format!("{reason} ({} joint blocks)", self.joints()),
        })
    }

    /// The cone dimension (unknowns per contact, 2 or 3) of Coulomb cones; `None` for the
    /// other sets.
    #[inline]
    pub fn cone_dim(&self) -> Option<usize> {
        with_family!(self, f => f.cone_dim())
    }

    /// The QP class this set defines: [`ProblemClass::Lcp`], [`ProblemClass::BoxQp`], or
    /// [`ProblemClass::Ccp`] for cones. This is not the class of an instance: an instance on
    /// cones may instead be the Coulomb problem ([`crate::Instance::class`] is the one answer).
    /// Friction boxes define [`ProblemClass::Blcp`], the one class here that is not a QP.
    pub fn qp_class(&self) -> ProblemClass {
        with_family!(self, f => f.qp_class())
    }

    /// Check the set against the problem size `n`: box lengths and `lo <= hi` (no NaN),
    /// the cone dimension 2 or 3, `n` a multiple of it and `mu` finite, non-negative, of length
    /// `n / dim` for cones. Errors: see [`boxes`] and [`cones`] (`validate`).
    pub fn validate(&self, n: usize) -> Result<()> {
        with_family!(self, f => f.validate(n))
    }

    /// Size of a block: the cone dimension (3 or 2) for cones, 3 for friction boxes, 1
    /// otherwise.
    #[inline]
    pub fn block_size(&self) -> usize {
        with_family!(self, f => f.block_size())
    }

    /// Project `x` onto the set, in place. `x` has length `n`.
    #[inline]
    pub fn project(&self, x: &mut [f64]) {
        with_family!(self, f => f.project(x))
    }

    /// Project block `b` (a component for LCP/box, a contact's `d` components for cones) in place.
    /// `x` is that block's slice (length [`ConstraintSet::block_size`]). Friction boxes:
    /// ODE's clamp ([`friction_box::clamp_friction_box`]), the normal first, then the tangents
    /// within the bounds of the new normal.
    #[inline]
    pub fn project_block(&self, b: usize, x: &mut [f64]) {
        with_family!(self, f => f.project_block(b, x))
    }

    /// Project the whole blocks `first..first + x.len() / block_size` in place, `x` their
    /// unknowns (`x.len()` a multiple of [`ConstraintSet::block_size`]): the arithmetic of
    /// [`ConstraintSet::project`] on that part of the vector, with one dispatch on the set for
    /// the lot (a chunk of a parallel vector pass projects its blocks this way).
    #[inline]
    pub fn project_blocks(&self, first: usize, x: &mut [f64]) {
        with_family!(self, f => f.project_blocks(first, x))
    }

    /// The projection of the natural map and of Res4 for block `b` of `y` at the iterate `x`
    /// (the block's slices): `P_K` for the fixed sets; for friction boxes the bounds frozen at
    /// the current normal `x_n` ([`friction_box::clamp_at`]), the natural map of the boxed LCP.
    #[inline]
    pub fn project_at(&self, b: usize, x: &[f64], y: &mut [f64]) {
        with_family!(self, f => f.project_at(b, x, y))
    }

    /// Projected gradient `g^P = -P_{T_K(x)}(-g)` of block `b` into `out` (all slices of the
    /// block's length, `x` feasible; `T_K(x)` the tangent cone at `x`): box `g` where free,
    /// `min(g, 0)` at a lower, `max(g, 0)` at an upper bound, `0` for a fixed component; cone:
    /// see [`cone_projected_gradient`]; friction box: the bounds held at `x_n`
    /// ([`friction_box`]). Shared by the residual module and MPRGP / MPGP
    /// (Dostal & Schoberl 2005, eq. (2.2); Dostal & Kozubek 2012, section 2).
    #[inline]
    pub fn projected_gradient_block(&self, b: usize, x: &[f64], g: &[f64], out: &mut [f64]) {
        with_family!(self, f => f.projected_gradient_block(b, x, g, out))
    }

    /// Add block `b`'s dual feasibility, complementarity, Res3 and fc3d terms at `(x, g)` (the
    /// block's slices) to `acc` ([`SetFamily::residual_terms`]).
    #[inline]
    pub fn residual_terms(&self, b: usize, x: &[f64], g: &[f64], acc: &mut ResidualTerms) {
        with_family!(self, f => f.residual_terms(b, x, g, acc))
    }

    /// The friction coefficient of each contact (length `n / dim`) for cones and friction
    /// boxes (`dim = 3`); `None` for sets without friction.
    #[inline]
    pub fn friction(&self) -> Option<&[f64]> {
        with_family!(self, f => f.friction())
    }

    /// The set's data vectors by the names the writers store them under
    /// ([`SetFamily::data`]): `[]` for `gamma >= 0`, `[("lo", lo), ("hi", hi)]` for boxes,
    /// `[("mu", mu)]` for cones and friction boxes.
    pub fn data(&self) -> Vec<(&'static str, &[f64])> {
        with_family!(self, f => f.data())
    }

    /// The data vector named `name` in [`ConstraintSet::data`], if the set has one.
    pub fn data_named(&self, name: &str) -> Option<&[f64]> {
        self.data()
            .into_iter()
            .find_map(|(k, v)| (k == name).then_some(v))
    }

    /// The set's data vectors, in the order the content hash ([`crate::Instance::hash`]) reads
    /// them: `(lo, hi)` for boxes, `(mu, [])` for cones and friction boxes (the class, hashed
    /// first, tells them apart), `([], [])` for `gamma >= 0`. (The hash also reads the cone
    /// dimension of 2-D cones, and only of those, so that the hashes of 3-D instances stay
    /// those of earlier versions.)
    pub fn parameters(&self) -> (&[f64], &[f64]) {
        with_family!(self, f => f.parameters())
    }

    /// Lines describing the set's data for `cpbench info`, as `(label, value)`: for cones
    /// `("cones", "3-D (d = 3)")` and `("mu range", "[min, max]")`, for friction boxes the
    /// `mu` range; nothing for the other sets.
    pub fn summary(&self) -> Vec<(&'static str, String)> {
        with_family!(self, f => f.summary())
    }

    /// The set over `n` unknowns as a product of [`ConicPiece`]s, in the order of the
    /// unknowns (what the conic solvers build their constraints from).
    pub fn conic_pieces(&self, n: usize) -> Vec<ConicPiece> {
        let mut out = Vec::new();
        with_family!(self, f => f.conic_pieces(n, &mut out));
        out
    }

    /// Whether block `b` (slice `x` of length [`ConstraintSet::block_size`], feasible) is free
    /// (interior): MPRGP / MPGP's active-set geometry ([`SetFamily::block_is_free`]; a cone
    /// block is on the surface from `||x_t|| >= mu x_n (1 - CONE_SURFACE_TOL)` on).
    #[inline]
    pub fn block_is_free(&self, b: usize, x: &[f64]) -> bool {
        with_family!(self, f => f.block_is_free(b, x))
    }

    /// Free gradient `phi` and chopped gradient `beta` of the whole vector
    /// ([`SetFamily::split_gradient`]): `phi + beta = g^P`. Shapes: all of length `n`. No
    /// allocation.
    #[inline]
    pub fn split_gradient(&self, x: &[f64], g: &[f64], phi: &mut [f64], beta: &mut [f64]) {
        with_family!(self, f => f.split_gradient(x, g, phi, beta))
    }

    /// Reduced free gradient `phi~_alpha = (x - P_K(x - alpha phi)) / alpha` into `out`
    /// (Dostal & Kozubek 2012, eq. (2.6)). `alpha > 0`. Shapes: length `n`. No allocation.
    #[inline]
    pub fn reduced_free_gradient(&self, x: &[f64], phi: &[f64], alpha: f64, out: &mut [f64]) {
        with_family!(self, f => f.reduced_free_gradient(x, phi, alpha, out))
    }

    /// `phi~_alpha^T phi` without forming `phi~` for the scalar sets; `w` is scratch of length
    /// `n` ([`SetFamily::reduced_free_dot`]). No allocation.
    #[inline]
    pub fn reduced_free_dot(&self, x: &[f64], phi: &[f64], alpha: f64, w: &mut [f64]) -> f64 {
        with_family!(self, f => f.reduced_free_dot(x, phi, alpha, w))
    }

    /// Largest `t >= 0` with `x - t d` in `K` for a feasible `x`, and the block that blocks it
    /// (`(inf, None)` when none does; [`SetFamily::max_feasible_step`]). Shapes: length `n`.
    #[inline]
    pub fn max_feasible_step(&self, x: &[f64], d: &[f64]) -> (f64, Option<usize>) {
        with_family!(self, f => f.max_feasible_step(x, d))
    }

    /// After the step `x - t d` blocked by block `b` ([`ConstraintSet::max_feasible_step`]),
    /// put that block exactly on the boundary it reached (`x`, `d` the block's slices).
    #[inline]
    pub fn land_on_boundary(&self, b: usize, x: &mut [f64], d: &[f64]) {
        with_family!(self, f => f.land_on_boundary(b, x, d))
    }
}
