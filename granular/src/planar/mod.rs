//! Planar (2-D) discs and bonded assemblies that generate fc2d instances: 2-D cone
//! complementarity problems with Coulomb cones of dimension 2 (Siconos' fc2d,
//! `ConstraintSet::CoulombCones { mu, dim: 2 }`, `|gamma_t| <= mu gamma_n`).
//!
//! The scheme is the 3-D stepper's ([`crate::stepper`], docs/formulation.md section 1) in the
//! plane. Disc `i` has generalised position `(x, y, theta)` and velocity `(vx, vy, omega)`
//! (m, rad; m/s, rad/s), mass block `M_i = diag(m, m, J)` with `J = m R^2 / 2` for a solid disc;
//! `y` is up, gravity `(0, -g)`. Each step assembles
//!
//! ```text
//! min 1/2 gamma^T N gamma + r^T gamma   s.t.  gamma in K = prod_c { |gamma_t| <= mu gamma_n },
//! N = D^T M^-1 D,   r = b + D^T (v(t) + h M^-1 f_ext(q(t))),   b_c = (Phi_c / h, 0),
//! ```
//!
//! solves it with any [`ContactSolver`] and advances `v(t+h) = v_free + M^-1 D gamma`,
//! `x += h v`, `theta += h omega`.
//!
//! Conventions:
//! - contact `c` joins disc `A` (always movable) and `B` (a disc, fixed or movable, or a
//!   [`Wall`]); its normal `n` points from `A` to `B`, the tangent is `t = (-n_y, n_x)`, and
//!   `Phi_c` is the signed gap (negative when overlapping);
//! - `D_c` (`3 nd x 2`) has the columns `-[n; (r_A x n)_z]`, `-[t; (r_A x t)_z]` in the rows of
//!   `A` and the same with `+` and `r_B` in the rows of `B` (`r` the lever arm from the centre
//!   to the contact point, `(r x d)_z = r_x d_y - r_y d_x`), so `g = N gamma + r = b + D^T
//!   v(t+h)` is the velocity of `B` relative to `A` in the contact frame: normal first,
//!   positive when separating; `gamma_n >= 0` pushes the bodies apart. Unknowns are
//!   contact-interleaved, normal first (fclib order). Fixed discs and walls add no rows;
//! - `N` is assembled block by block from the per-disc products `G_c^T M^-1 G_d` with the
//!   symmetric product order `(G_c[p][k] G_d[q][k]) / M_k`, so it is exactly symmetric; work
//!   and storage are O(contacts) for bounded coordination (no dense matrix anywhere);
//! - the storage of `N` follows the 3-D stepper's rule ([`PlanarSimulation::set_operator`]):
//!   by default CSC (from triplets, as in earlier versions, bit for bit) when `N` has fewer
//!   than [`BLOCK_MIN_NNZ`] stored entries, else written straight into the symmetric block
//!   storage ([`BlockSymMatrix`], 2x2 blocks, or 1x1 frictionless; upper triangle by block
//!   rows), in parallel over block rows, with the same sums in the same order: the same
//!   entries bit for bit, so the same content hash and exports as the CSC path (whose large
//!   instances the instance's own automatic choice moved to that storage).
//!
//! **Bonds** ([`bonds`], after Frantik's FyDiK2D discrete model: mass points joined by
//! translational (normal) springs and rotational (bending) springs between two translational
//! springs sharing a point, broken beyond a strain threshold) act as explicit forces of the
//! step, evaluated at `q(t)`: `f_ext = m g + f_bonds(q(t)) - c m v(t)` (the last term is
//! FyDiK2D's linear mass-point damping, [`PlanarParams::damping`], 0 by default). The
//! contact problem stays a CCP; the springs are integrated by the same semi-implicit
//! (symplectic) Euler step, stable for `h` well below `sqrt(m / k)` (the scenes take `h <= 0.2
//! sqrt(m / k)`). Bonded pairs get no contact while their bond lives. After the position
//! update every live bond whose tensile strain `(L - L0) / L0` exceeds its `strain_max` breaks
//! for good, and so does every bending spring whose rotation exceeds its `angle_max` or one of
//! whose two bonds broke.
//!
//! **Envelope and broad phase** as in 3-D: a contact enters the problem when its gap is
//! below `min(max(envelope, 2 h v_max), r_max)` with `v_max` the largest surface speed of a
//! movable disc over the step (free velocities included); discs are sorted by the key of
//! their cell in a uniform grid of cells `2 r_max + envelope` wide, and each disc looks up
//! the 3 x 3 neighbouring cells (O(nd log nd) for the sort, O(nd) for the search at bounded
//! density); walls are tested against every movable disc (a scene has a handful).
//!
//! Layout: this module (discs, walls, contacts, the simulation), [`bonds`] (normal and
//! bending springs, breakage), [`scenes`] (`disc-hopper`, `beam-impact`).

pub mod bonds;
pub mod scenes;

use crate::contact_step::{ContactFrame, ContactModel, StepReport, StepState};
use crate::{check_non_negative, check_positive, invalid, ContactSolver, GranularError, Result};
use bonds::BondSet;
use cpbench_problems::constraints::ConstraintSet;
use cpbench_problems::instance::{Instance, Provenance, ValidationOptions};
use cpbench_problems::linalg::CscMatrix;
use cpbench_problems::operator::{BlockSymMatrix, OperatorKind, BLOCK_MIN_NNZ};
use nalgebra::Vector2;
use std::collections::BTreeMap;
use std::ops::Range;

pub use bonds::{BendingSpring, Bond};
pub use scenes::{disc_stack, BeamImpactParams, DiscHopperParams, PlanarScene, PlanarSceneKind};

/// `(r x d)_z = r_x d_y - r_y d_x`, the moment arm of direction `d` at lever `r`.
#[inline]
fn cross(r: &Vector2<f64>, d: &Vector2<f64>) -> f64 {
    r.x * d.y - r.y * d.x
}

/// Diagonal block `N_cc = sum over the movable sides (d, G) of G^T M_d^-1 G` of a contact
/// (`bs x bs` in the top-left corner), each entry `(p, q)` summed side by side from 0 in the
/// order `A, B`, each side's term `sum_k (G[p][k] G[q][k]) / M_k` over `k = x, y, theta`:
/// one expression for the CSC and block paths, so both are bit-identical.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // block indices p, q index several arrays
fn diag_block(discs: &[Disc], j: &ContactJac, bs: usize) -> [[f64; 2]; 2] {
    let mut blk = [[0.0; 2]; 2];
    for (d, g) in &j.sides[..j.nsides] {
        let minv = discs[*d].inverse_mass();
        for p in 0..bs {
            for q in 0..bs {
                blk[p][q] += (0..3).map(|k| (g[p][k] * g[q][k]) * minv[k]).sum::<f64>();
            }
        }
    }
    blk
}

/// Entry `(p, q)` of the coupling block `G_1^T M_d^-1 G_2` of two contacts sharing disc `d`
/// (`g1`, `g2` their columns on `d`, `minv` its inverse mass diagonal): `sum_k (g1[p][k]
/// g2[q][k]) minv[k]`; shared by the CSC and block paths.
#[inline(always)]
fn coupling(g1: &[[f64; 3]; 2], g2: &[[f64; 3]; 2], minv: &[f64; 3], p: usize, q: usize) -> f64 {
    (0..3).map(|k| (g1[p][k] * g2[q][k]) * minv[k]).sum()
}

/// The contacts `c2 >= c` that share a movable disc with contact `c` (`c` itself first), in
/// increasing order: the merge of the tails of its discs' incidence lists (`inc_ptr`, `inc`:
/// per disc its `(contact, side)` pairs sorted by contact), as the 3-D
/// `Assembly::upper_neighbours`.
#[inline]
fn upper_neighbours(
    jac: &[ContactJac],
    inc_ptr: &[usize],
    inc: &[(u32, u8)],
    c: usize,
    mut f: impl FnMut(u32),
) {
    let j = &jac[c];
    let tail = |s: usize| -> &[(u32, u8)] {
        if s >= j.nsides {
            return &[];
        }
        let d = j.sides[s].0;
        let l = &inc[inc_ptr[d]..inc_ptr[d + 1]];
        &l[l.partition_point(|e| (e.0 as usize) < c)..]
    };
    crate::assembly::merge_contacts(tail(0), tail(1), &mut f);
}

/// Values of block rows `rows` into `out` (their `bs x bs` blocks, row-major; `out` starts at
/// block `row_ptr[rows.start]`): the diagonal block by [`diag_block`], block `(c, c2)`, `c2 >
/// c`, entry `(p, q)` by [`coupling`] of `c`'s and `c2`'s columns on their shared disc, as
/// the CSC path's triplet `(bs c + p, bs c2 + q)`. Allocates nothing.
fn block_rows(
    discs: &[Disc],
    jac: &[ContactJac],
    bs: usize,
    rows: Range<usize>,
    row_ptr: &[usize],
    col: &[u32],
    out: &mut [f64],
) {
    let base = row_ptr[rows.start];
    let bb = bs * bs;
    for c in rows {
        let jc = &jac[c];
        for pos in row_ptr[c]..row_ptr[c + 1] {
            let c2 = col[pos] as usize;
            let o = &mut out[bb * (pos - base)..bb * (pos - base + 1)];
            if c2 == c {
                let blk = diag_block(discs, jc, bs);
                for p in 0..bs {
                    for q in 0..bs {
                        o[p * bs + q] = blk[p][q];
                    }
                }
                continue;
            }
            let j2 = &jac[c2];
            // two contacts share exactly one movable disc (one contact per pair of bodies)
            let shared = jc.sides[..jc.nsides].iter().find_map(|(d, g1)| {
                j2.sides[..j2.nsides]
                    .iter()
                    .find(|(d2, _)| d2 == d)
                    .map(|(_, g2)| (*d, g1, g2))
            });
            debug_assert!(shared.is_some(), "contacts {c} and {c2} share no disc");
            if let Some((d, g1, g2)) = shared {
                let minv = discs[d].inverse_mass();
                for p in 0..bs {
                    for q in 0..bs {
                        o[p * bs + q] = coupling(g1, g2, &minv, p, q);
                    }
                }
            }
        }
    }
}

/// A rigid disc in the plane: 3 DOF `(x, y, theta)`, mass block `diag(m, m, J)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Disc {
    /// Centre (m).
    pub pos: Vector2<f64>,
    /// Rotation angle (rad), counter-clockwise.
    pub angle: f64,
    /// Velocity of the centre (m/s).
    pub vel: Vector2<f64>,
    /// Angular velocity (rad/s), counter-clockwise.
    pub omega: f64,
    /// Mass (kg), `> 0`.
    pub mass: f64,
    /// Moment of inertia about the centre (kg m^2), `> 0`; `m R^2 / 2` for a solid disc.
    pub inertia: f64,
    /// Radius (m), `> 0`.
    pub radius: f64,
    /// Fixed disc: never moves, adds no unknowns (supports, obstacles).
    pub fixed: bool,
    /// Whether the disc rotates (default `true`); `false` locks the rotation (infinite
    /// inertia: contact impulses exert no torque), e.g. a sliding block.
    pub rotates: bool,
}

impl Disc {
    /// A movable solid disc at rest at `pos` (m) with radius `radius` (m) and mass `mass`
    /// (kg), inertia `m R^2 / 2`. Errors: [`GranularError::InvalidParameter`] for a radius or
    /// mass that is not finite and positive, or a non-finite position.
    pub fn new(pos: Vector2<f64>, radius: f64, mass: f64) -> Result<Self> {
        check_positive("radius", radius)?;
        check_positive("mass", mass)?;
        if !(pos.x.is_finite() && pos.y.is_finite()) {
            return Err(invalid("position", format!("{pos:?}"), "must be finite"));
        }
        Ok(Self {
            pos,
            angle: 0.0,
            vel: Vector2::zeros(),
            omega: 0.0,
            mass,
            inertia: 0.5 * mass * radius * radius,
            radius,
            fixed: false,
            rotates: true,
        })
    }

    /// The same disc, fixed.
    pub fn fixed(mut self) -> Self {
        self.fixed = true;
        self
    }

    /// Kinetic energy `1/2 m |v|^2 + 1/2 J omega^2` (J); 0 for a fixed disc.
    pub fn kinetic_energy(&self) -> f64 {
        if self.fixed {
            return 0.0;
        }
        0.5 * self.mass * self.vel.norm_squared() + 0.5 * self.inertia * self.omega * self.omega
    }

    /// Diagonal of the inverse mass block `(1/m, 1/m, 1/J)`: zero for a fixed disc, zero in the
    /// rotational entry of a disc that does not rotate.
    pub fn inverse_mass(&self) -> [f64; 3] {
        if self.fixed {
            return [0.0; 3];
        }
        let im = 1.0 / self.mass;
        [
            im,
            im,
            if self.rotates {
                1.0 / self.inertia
            } else {
                0.0
            },
        ]
    }

    fn check(&self) -> Result<()> {
        check_positive("radius", self.radius)?;
        check_positive("mass", self.mass)?;
        check_positive("inertia", self.inertia)?;
        let s = [
            self.pos.x, self.pos.y, self.angle, self.vel.x, self.vel.y, self.omega,
        ];
        if !s.iter().all(|x| x.is_finite()) {
            return Err(invalid("disc state", format!("{s:?}"), "must be finite"));
        }
        Ok(())
    }
}

/// A fixed wall. Walls never move and add no unknowns.
#[derive(Clone, Debug, PartialEq)]
pub enum Wall {
    /// The half-plane `normal . x >= offset` (`normal` a unit vector pointing into the free
    /// side, `offset` in m): a floor is `normal = (0, 1)`, `offset = y_floor`. A disc's gap is
    /// `normal . x - offset - R`.
    HalfPlane {
        /// Unit normal into the free side.
        normal: Vector2<f64>,
        /// Offset (m).
        offset: f64,
    },
    /// A thin two-sided segment from `a` to `b` (m), `a != b`: a disc's gap is the distance
    /// from its centre to the segment minus `R` (exact; the ends act as points).
    Segment {
        /// First end (m).
        a: Vector2<f64>,
        /// Second end (m).
        b: Vector2<f64>,
    },
}

impl Wall {
    /// The floor `y >= y0`.
    pub fn floor(y0: f64) -> Self {
        Wall::HalfPlane {
            normal: Vector2::new(0.0, 1.0),
            offset: y0,
        }
    }

    /// Gap and contact normal (from the disc towards the wall) of a disc of radius `radius`
    /// centred at `x`; `None` for a degenerate configuration (centre on a segment).
    fn gap(&self, x: &Vector2<f64>, radius: f64) -> Option<(f64, Vector2<f64>)> {
        match self {
            Wall::HalfPlane { normal, offset } => Some((normal.dot(x) - offset - radius, -normal)),
            Wall::Segment { a, b } => {
                let ab = b - a;
                let s = ((x - a).dot(&ab) / ab.norm_squared()).clamp(0.0, 1.0);
                let d = a + s * ab - x;
                let dist = d.norm();
                (dist > 0.0).then(|| (dist - radius, d / dist))
            }
        }
    }

    fn check(&self) -> Result<Self> {
        match self {
            Wall::HalfPlane { normal, offset } => {
                let l = normal.norm();
                if !(l.is_finite() && l > 0.0 && offset.is_finite()) {
                    return Err(invalid(
                        "wall",
                        format!("{self:?}"),
                        "half-plane needs a finite non-zero normal and a finite offset",
                    ));
                }
                Ok(Wall::HalfPlane {
                    normal: normal / l,
                    offset: *offset,
                })
            }
            Wall::Segment { a, b } => {
                let ok = [a.x, a.y, b.x, b.y].iter().all(|v| v.is_finite()) && a != b;
                if !ok {
                    return Err(invalid(
                        "wall",
                        format!("{self:?}"),
                        "segment needs finite ends a != b",
                    ));
                }
                Ok(self.clone())
            }
        }
    }
}

/// Physical and numerical parameters of a planar simulation (SI units).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarParams {
    /// Time step `h` (s), `> 0`.
    pub h: f64,
    /// Gravity (m/s^2), e.g. `(0, -9.81)`.
    pub gravity: Vector2<f64>,
    /// Friction coefficient of every contact, `>= 0` (ignored when `frictionless`).
    pub mu: f64,
    /// Minimum collision envelope (m), `>= 0`.
    pub envelope: f64,
    /// Frictionless mode: LCP on the normal impulses only (`N` is `nc x nc`).
    pub frictionless: bool,
    /// FyDiK2D's linear viscous damping of the mass points, `c` in `F_d = -c m v` (1/s),
    /// `>= 0`, applied to every movable disc as an explicit force (stable for `c h < 2`);
    /// default 0.
    pub damping: f64,
    /// Compliant contact ([`crate::compliance`], as in the 3-D stepper): every step's problem
    /// becomes `(N + R, r~)` with `R` and `r~` per contact from its diagonal block, gap and (for
    /// MuJoCo's mapping) start velocity; `None` (the default): rigid contact.
    pub compliance: Option<crate::ContactCompliance>,
}

impl Default for PlanarParams {
    /// `h = 1e-3`, `g = 9.81` downwards in `y`, `mu = 0.3`, envelope `1e-4`, frictional, no
    /// damping.
    fn default() -> Self {
        Self {
            h: 1e-3,
            gravity: Vector2::new(0.0, -9.81),
            mu: 0.3,
            envelope: 1e-4,
            frictionless: false,
            damping: 0.0,
            compliance: None,
        }
    }
}

impl PlanarParams {
    /// Check ranges. Errors: [`GranularError::InvalidParameter`] for `h <= 0`, `mu < 0`,
    /// `envelope < 0`, `damping < 0` or `damping h >= 2`, non-finite gravity, a compliance
    /// parameter out of its range.
    pub fn validate(&self) -> Result<()> {
        crate::contact_step::check_step(self.h, self.mu, self.envelope)?;
        if let Some(c) = &self.compliance {
            c.validate()?;
        }
        check_non_negative("damping", self.damping)?;
        if self.damping * self.h >= 2.0 {
            return Err(invalid(
                "damping",
                self.damping,
                "explicit damping needs damping * h < 2",
            ));
        }
        crate::contact_step::check_gravity(self.gravity.as_slice(), &self.gravity)
    }

    /// Unknowns per contact: 1 (frictionless LCP) or 2 (fc2d CCP).
    pub fn block_size(&self) -> usize {
        crate::contact_step::block_size(self.frictionless, 2)
    }
}

/// The partner `B` of a contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanarPartner {
    /// Another disc (movable or fixed), by index.
    Disc(usize),
    /// A wall, by index.
    Wall(usize),
}

impl From<PlanarPartner> for crate::contact::PartnerId {
    fn from(b: PlanarPartner) -> Self {
        match b {
            PlanarPartner::Disc(j) => crate::contact::PartnerId::Body(j),
            PlanarPartner::Wall(k) => crate::contact::PartnerId::Wall(k),
        }
    }
}

/// A contact between movable disc `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanarContact {
    /// Disc `A` (movable).
    pub a: usize,
    /// Partner `B`.
    pub b: PlanarPartner,
    /// Unit normal from `A` to `B`.
    pub n: Vector2<f64>,
    /// Contact point (m): on the normal through `A`'s centre, halfway across the gap.
    pub point: Vector2<f64>,
    /// Signed gap `Phi` (m), negative when overlapping.
    pub gap: f64,
}

impl PlanarContact {
    /// The tangent `t = (-n_y, n_x)`.
    pub fn t(&self) -> Vector2<f64> {
        Vector2::new(-self.n.y, self.n.x)
    }
}

/// Figures of one planar step: the core's ([`StepReport`], whose detection time includes the
/// bond forces) and the bonds'.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarStepReport {
    /// Step, contacts, sizes, solve figures, energy and timings.
    pub core: StepReport,
    /// Elastic energy of the live bonds after the step (J).
    pub bond_energy: f64,
    /// Live bonds after the step.
    pub bonds: usize,
    /// Bonds broken so far (all steps).
    pub broken_bonds: usize,
}

/// Per-contact Jacobian columns: for each side (A, then B when it is a movable disc) the
/// disc index and the signed columns `G[p] = (d_x, d_y, (r x d)_z)` for `p` = normal, tangent.
#[derive(Clone, Copy, Debug)]
struct ContactJac {
    sides: [(usize, [[f64; 3]; 2]); 2],
    nsides: usize,
}

/// A running planar simulation: discs, walls, bonds, parameters and every reused buffer.
#[derive(Clone, Debug)]
pub struct PlanarSimulation {
    discs: Vec<Disc>,
    walls: Vec<Wall>,
    bonds: BondSet,
    params: PlanarParams,
    label: String,
    parameters: BTreeMap<String, String>,
    seed: Option<u64>,
    envelope: f64,
    // buffers
    cells: Vec<(u64, u32)>,
    contacts: Vec<PlanarContact>,
    force: Vec<Vector2<f64>>,
    vfree: Vec<[f64; 3]>,
    jac: Vec<ContactJac>,
    inc_ptr: Vec<usize>,
    inc: Vec<(u32, u8)>,
    inc_fill: Vec<usize>,
    triplets: Vec<(usize, usize, f64)>,
    /// `N` of the last [`PlanarSimulation::assemble`] on the block storage (`None`: CSC, in
    /// `triplets`).
    n_block: Option<BlockSymMatrix>,
    /// A previous block matrix whose storage the next block assembly reuses.
    spare_block: Option<BlockSymMatrix>,
    /// The storage requested with [`PlanarSimulation::set_operator`] (`None`: automatic).
    operator: Option<OperatorKind>,
    r: Vec<f64>,
    /// Step counter, instance, impulses and warm start (the core's).
    state: StepState<Vector2<f64>>,
}

impl PlanarSimulation {
    /// A simulation of `discs`, `walls` and `bonds` under `params`, labelled `label` (instance
    /// names `{label}_step{NNNN}__{ccp|lcp}`), with `parameters` and `seed` recorded in every
    /// instance's provenance.
    ///
    /// Errors: [`GranularError::InvalidParameter`] for invalid [`PlanarParams`], a disc with a
    /// non-positive or non-finite radius, mass or inertia or a non-finite state, an invalid
    /// wall, an invalid bond ([`BondSet::validate`]), or more than `2^31` discs.
    pub fn new(
        discs: Vec<Disc>,
        walls: Vec<Wall>,
        bonds: BondSet,
        params: PlanarParams,
        label: impl Into<String>,
        parameters: BTreeMap<String, String>,
        seed: Option<u64>,
    ) -> Result<Self> {
        params.validate()?;
        if discs.len() >= (1 << 31) {
            return Err(invalid("discs", discs.len(), "must be < 2^31"));
        }
        for d in &discs {
            d.check()?;
        }
        let walls = walls.iter().map(Wall::check).collect::<Result<Vec<_>>>()?;
        let mut bonds = bonds;
        bonds.validate(&discs)?;
        bonds.rebuild_pairs();
        Ok(Self {
            discs,
            walls,
            bonds,
            params,
            label: label.into(),
            parameters,
            seed,
            envelope: 0.0,
            cells: Vec::new(),
            contacts: Vec::new(),
            force: Vec::new(),
            vfree: Vec::new(),
            jac: Vec::new(),
            inc_ptr: Vec::new(),
            inc: Vec::new(),
            inc_fill: Vec::new(),
            triplets: Vec::new(),
            n_block: None,
            spare_block: None,
            operator: None,
            r: Vec::new(),
            state: StepState::default(),
        })
    }

    crate::contact_step::step_accessors!();

    /// Choose the storage of `N` in the instances built from now on, by the 3-D stepper's rule
    /// ([`crate::Simulation::set_operator`]): `None` (the default) assembles CSC from triplets
    /// when `N` has fewer than [`BLOCK_MIN_NNZ`] stored entries (both triangles, as CSC
    /// stores them: [`PlanarSimulation::delassus_nnz`]) and writes the block storage
    /// ([`BlockSymMatrix`], `bs x bs` blocks, `bs` = 2, or 1 when frictionless) directly
    /// otherwise; `Some(OperatorKind::Csc)` always assembles CSC (the instance then applies
    /// its own automatic choice, [`Instance::new`]: from [`BLOCK_MIN_NNZ`] stored entries it
    /// converts to the block storage, as earlier versions did); `Some(OperatorKind::Block)`
    /// always the block storage. Both storages hold the same entries bit for bit (same
    /// content hash). Errors: [`GranularError::InvalidParameter`] for
    /// `Some(OperatorKind::MatrixFree)` (not built by the planar stepper; the factors are
    /// [`PlanarSimulation::jacobian`] and [`PlanarSimulation::mass_inverse_diagonal`]); the
    /// setting is then unchanged.
    pub fn set_operator(&mut self, kind: Option<OperatorKind>) -> Result<()> {
        if kind == Some(OperatorKind::MatrixFree) {
            return Err(invalid(
                "operator",
                OperatorKind::MatrixFree,
                "the planar stepper assembles N on CSC or block storage (auto, csc or block)",
            ));
        }
        self.operator = kind;
        Ok(())
    }

    /// The storage requested with [`PlanarSimulation::set_operator`] (`None`: automatic).
    pub fn operator(&self) -> Option<OperatorKind> {
        self.operator
    }

    /// Stored entries of the full `N` (both triangles, as the CSC path stores them) of the
    /// contacts of the last assembly, without forming `N`: `bs^2 (nc + sum over movable
    /// discs of k (k - 1))`, `k` the contacts of a disc (two contacts share at most one
    /// movable disc). O(discs); 0 before the first assembly.
    pub fn delassus_nnz(&self) -> usize {
        let bs = self.params.block_size();
        let pairs: usize = self
            .inc_ptr
            .windows(2)
            .map(|w| {
                let k = w[1] - w[0];
                k * k.saturating_sub(1)
            })
            .sum();
        bs * bs * (self.jac.len() + pairs)
    }

    /// The discs.
    pub fn discs(&self) -> &[Disc] {
        &self.discs
    }

    /// Mutable discs (e.g. to set initial velocities); radii and masses must stay positive.
    pub fn discs_mut(&mut self) -> &mut [Disc] {
        &mut self.discs
    }

    /// The walls.
    pub fn walls(&self) -> &[Wall] {
        &self.walls
    }

    /// The bonds (live and broken) and bending springs.
    pub fn bonds(&self) -> &BondSet {
        &self.bonds
    }

    /// The parameters.
    pub fn params(&self) -> &PlanarParams {
        &self.params
    }

    /// Contacts of the last detection.
    pub fn contacts(&self) -> &[PlanarContact] {
        &self.contacts
    }

    /// Kinetic energy of the discs (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.discs.iter().map(Disc::kinetic_energy).sum()
    }

    /// Elastic energy of the live bonds and bending springs (J).
    pub fn bond_energy(&self) -> f64 {
        self.bonds.energy(&self.discs)
    }

    /// Potential energy of the movable discs in gravity, `-sum m g . x` (J, zero at the origin).
    pub fn gravity_energy(&self) -> f64 {
        let discs = self.discs.iter().map(|d| (d.mass, &d.pos, d.fixed));
        crate::contact_step::gravity_energy(&self.params.gravity, discs)
    }

    /// Linear momentum of the movable discs (kg m/s).
    pub fn momentum(&self) -> Vector2<f64> {
        self.discs
            .iter()
            .filter(|d| !d.fixed)
            .map(|d| d.mass * d.vel)
            .sum()
    }

    /// Largest overlap `max(0, -Phi)` among the current contacts (m).
    pub fn max_penetration(&self) -> f64 {
        self.contacts.iter().fold(0.0f64, |m, c| m.max(-c.gap))
    }

    /// External forces at `q(t)` (gravity, bonds, damping) and free velocities
    /// `v + h M^-1 f_ext`.
    fn free_velocities(&mut self) {
        let p = &self.params;
        self.force.clear();
        self.force.extend(self.discs.iter().map(|d| {
            if d.fixed {
                Vector2::zeros()
            } else {
                d.mass * (p.gravity - p.damping * d.vel)
            }
        }));
        self.bonds.add_forces(&self.discs, &mut self.force);
        self.vfree.clear();
        for (d, f) in self.discs.iter().zip(&self.force) {
            self.vfree.push(if d.fixed {
                [0.0; 3]
            } else {
                let v = d.vel + p.h / d.mass * f;
                [v.x, v.y, if d.rotates { d.omega } else { 0.0 }]
            });
        }
    }

    /// Step 1: external forces, free velocities and the contacts at the current positions;
    /// returns their number. Bonded pairs and pairs of fixed discs are skipped.
    pub fn detect(&mut self) -> usize {
        self.free_velocities();
        let h = self.params.h;
        let mut vmax = 0.0f64;
        let mut rmax = 0.0f64;
        for (d, vf) in self.discs.iter().zip(&self.vfree) {
            rmax = rmax.max(d.radius);
            if !d.fixed {
                let v = d.vel.norm().max(vf[0].hypot(vf[1]));
                vmax = vmax.max(v + d.omega.abs() * d.radius);
            }
        }
        let env = self.params.envelope;
        self.envelope = env.max(2.0 * h * vmax).min(rmax.max(env));
        let env = self.envelope;
        self.contacts.clear();
        let nd = self.discs.len();
        // broad phase: sorted cell keys
        let cs = 2.0 * rmax + env;
        let cell = |x: f64| -> i64 { ((x / cs).floor() as i64).clamp(-(1 << 30), 1 << 30) };
        let key = |cx: i64, cy: i64| -> u64 {
            (((cx + (1 << 31)) as u64) << 32) | ((cy + (1 << 31)) as u64)
        };
        self.cells.clear();
        for (i, d) in self.discs.iter().enumerate() {
            self.cells
                .push((key(cell(d.pos.x), cell(d.pos.y)), i as u32));
        }
        self.cells.sort_unstable();
        for i in 0..nd {
            let di = &self.discs[i];
            let (cx, cy) = (cell(di.pos.x), cell(di.pos.y));
            for dx in -1..=1 {
                for dy in -1..=1 {
                    let k = key(cx + dx, cy + dy);
                    let lo = self.cells.partition_point(|e| e.0 < k);
                    for &(kk, j) in &self.cells[lo..] {
                        if kk != k {
                            break;
                        }
                        let j = j as usize;
                        if j <= i {
                            continue;
                        }
                        let dj = &self.discs[j];
                        if di.fixed && dj.fixed {
                            continue;
                        }
                        let d = dj.pos - di.pos;
                        let dist = d.norm();
                        let gap = dist - di.radius - dj.radius;
                        if gap >= env || dist == 0.0 || self.bonds.bonded(i, j) {
                            continue;
                        }
                        // A is movable
                        let (a, b, n, ra) = if di.fixed {
                            (j, i, -d / dist, dj.radius)
                        } else {
                            (i, j, d / dist, di.radius)
                        };
                        let pa = self.discs[a].pos;
                        self.contacts.push(PlanarContact {
                            a,
                            b: PlanarPartner::Disc(b),
                            n,
                            point: pa + (ra + 0.5 * gap) * n,
                            gap,
                        });
                    }
                }
            }
        }
        for (i, di) in self.discs.iter().enumerate() {
            if di.fixed {
                continue;
            }
            for (k, w) in self.walls.iter().enumerate() {
                if let Some((gap, n)) = w.gap(&di.pos, di.radius) {
                    if gap < env {
                        self.contacts.push(PlanarContact {
                            a: i,
                            b: PlanarPartner::Wall(k),
                            n,
                            point: di.pos + (di.radius + 0.5 * gap) * n,
                            gap,
                        });
                    }
                }
            }
        }
        let span = (nd + self.walls.len()) as u64;
        let ckey = move |c: &PlanarContact| -> u64 {
            c.a as u64 * span
                + match c.b {
                    PlanarPartner::Disc(j) => j as u64,
                    PlanarPartner::Wall(k) => (nd + k) as u64,
                }
        };
        self.contacts.sort_unstable_by_key(ckey);
        self.state.keys.clear();
        self.state.keys.extend(self.contacts.iter().map(ckey));
        self.contacts.len()
    }

    /// Step 2: Jacobian columns, `N = D^T M^-1 D` (exactly symmetric) and `r`.
    /// Errors: [`GranularError::Problem`] when a value is not finite.
    #[allow(clippy::needless_range_loop)] // block indices p, q, k index several arrays
    fn assemble(&mut self) -> Result<()> {
        let bs = self.params.block_size();
        let nd = self.discs.len();
        // Jacobian columns
        self.jac.clear();
        for c in &self.contacts {
            let t = c.t();
            let col = |pos: &Vector2<f64>, sign: f64| -> [[f64; 3]; 2] {
                let r = c.point - pos;
                [
                    [sign * c.n.x, sign * c.n.y, sign * cross(&r, &c.n)],
                    [sign * t.x, sign * t.y, sign * cross(&r, &t)],
                ]
            };
            let mut j = ContactJac {
                sides: [(c.a, col(&self.discs[c.a].pos, -1.0)), (0, [[0.0; 3]; 2])],
                nsides: 1,
            };
            if let PlanarPartner::Disc(b) = c.b {
                if !self.discs[b].fixed {
                    j.sides[1] = (b, col(&self.discs[b].pos, 1.0));
                    j.nsides = 2;
                }
            }
            self.jac.push(j);
        }
        // incidence lists (counting sort by disc)
        self.inc_ptr.clear();
        self.inc_ptr.resize(nd + 1, 0);
        for j in &self.jac {
            for s in &j.sides[..j.nsides] {
                self.inc_ptr[s.0 + 1] += 1;
            }
        }
        for i in 0..nd {
            self.inc_ptr[i + 1] += self.inc_ptr[i];
        }
        self.inc.clear();
        self.inc.resize(self.inc_ptr[nd], (0, 0));
        self.inc_fill.clear();
        self.inc_fill.extend_from_slice(&self.inc_ptr[..nd]);
        for (c, j) in self.jac.iter().enumerate() {
            for (s, side) in j.sides[..j.nsides].iter().enumerate() {
                self.inc[self.inc_fill[side.0]] = (c as u32, s as u8);
                self.inc_fill[side.0] += 1;
            }
        }
        // the storage of N (the 3-D stepper's rule, see `set_operator`)
        let kind = match self.operator {
            Some(k) => k,
            None if self.delassus_nnz() >= BLOCK_MIN_NNZ => OperatorKind::Block,
            None => OperatorKind::Csc,
        };
        // r = b + D^T v_free on the storage of the previous instance's r (and, on the block
        // path, N on that of its block matrix)
        if let Some(old) = self.state.instance.take() {
            let r = match old.into_block_and_r() {
                Ok((b, r)) => {
                    if kind == OperatorKind::Block {
                        self.spare_block = Some(b);
                    }
                    r
                }
                Err(old) if old.operator_kind() == OperatorKind::Csc => old.into_matrix_and_r().1,
                Err(_) => Vec::new(),
            };
            if r.capacity() > self.r.capacity() {
                self.r = r;
            }
        }
        if let Some(b) = self.n_block.take() {
            // assembled but never made an instance
            self.spare_block = Some(b);
        }
        if kind == OperatorKind::Block {
            // the triplets of earlier CSC steps are not needed any more
            self.triplets = Vec::new();
            let spare = self.spare_block.take();
            self.n_block = Some(self.delassus_blocks(bs, spare)?);
        } else {
            self.spare_block = None;
            self.delassus_triplets(bs);
        }
        let h = self.params.h;
        self.r.clear();
        for (c, j) in self.contacts.iter().zip(&self.jac) {
            for p in 0..bs {
                let mut v = if p == 0 { c.gap / h } else { 0.0 };
                for (d, g) in &j.sides[..j.nsides] {
                    let vf = &self.vfree[*d];
                    v += g[p][0] * vf[0] + g[p][1] * vf[1] + g[p][2] * vf[2];
                }
                self.r.push(v);
            }
        }
        Ok(())
    }

    /// `N` as triplets (the CSC path): each diagonal block once, each coupling block of two
    /// contacts sharing a disc `d` (`c1 < c2`, disc by disc) and its transpose.
    #[allow(clippy::needless_range_loop)] // block indices p, q index several arrays
    fn delassus_triplets(&mut self, bs: usize) {
        self.triplets.clear();
        for (c, j) in self.jac.iter().enumerate() {
            let blk = diag_block(&self.discs, j, bs);
            for p in 0..bs {
                for q in 0..bs {
                    self.triplets.push((bs * c + p, bs * c + q, blk[p][q]));
                }
            }
        }
        for d in 0..self.discs.len() {
            let list = &self.inc[self.inc_ptr[d]..self.inc_ptr[d + 1]];
            if list.len() < 2 {
                continue;
            }
            let minv = self.discs[d].inverse_mass();
            for (x, &(c1, s1)) in list.iter().enumerate() {
                let g1 = &self.jac[c1 as usize].sides[s1 as usize].1;
                for &(c2, s2) in &list[x + 1..] {
                    let g2 = &self.jac[c2 as usize].sides[s2 as usize].1;
                    let (c1, c2) = (c1 as usize, c2 as usize);
                    for p in 0..bs {
                        for q in 0..bs {
                            let v = coupling(g1, g2, &minv, p, q);
                            self.triplets.push((bs * c1 + p, bs * c2 + q, v));
                            self.triplets.push((bs * c2 + q, bs * c1 + p, v));
                        }
                    }
                }
            }
        }
    }

    /// `N` straight into the block storage (the block path), mirroring the 3-D
    /// [`crate::assembly::Assembly::delassus_blocks`]: block row `c` holds the blocks
    /// `N_{c,c2}`, `c2 >= c` a contact sharing a movable disc with `c` (the merge of the
    /// tails of its discs' sorted incidence lists), row-major; the diagonal block and every
    /// coupling entry are the same expressions as in [`PlanarSimulation::delassus_triplets`]
    /// ([`diag_block`], [`coupling`]), so every entry equals the CSC path's bit for bit. Row
    /// lengths are counted in parallel, a prefix sum places the rows, then every row writes
    /// its own block columns and values (parallel over rows, deterministic). `recycle` is a
    /// previous matrix whose storage is reused. Errors: [`GranularError::Problem`] with
    /// [`cpbench_problems::ProblemError::SizeMismatch`] for more than `u32::MAX` contacts,
    /// and those of [`BlockSymMatrix::from_upper_parts`] (a non-finite value).
    fn delassus_blocks(
        &self,
        bs: usize,
        recycle: Option<BlockSymMatrix>,
    ) -> Result<BlockSymMatrix> {
        use crate::assembly::{for_rows, set_len, upper_structure};
        let nc = self.jac.len();
        if nc > u32::MAX as usize {
            return Err(cpbench_problems::ProblemError::SizeMismatch {
                what: "contacts (u32 block indices)".into(),
                expected: u32::MAX as usize,
                found: nc,
            }
            .into());
        }
        let (mut row_ptr, mut col, mut vals) = match recycle {
            Some(m) => m.into_upper_parts(),
            None => (Vec::new(), Vec::new(), Vec::new()),
        };
        let (jac, inc_ptr, inc) = (&self.jac[..], &self.inc_ptr[..], &self.inc[..]);
        upper_structure(nc, &mut row_ptr, &mut col, |c, f| {
            upper_neighbours(jac, inc_ptr, inc, c, f)
        });
        let blocks = row_ptr[nc];
        set_len(&mut vals, bs * bs * blocks, 0.0);
        let discs = &self.discs[..];
        let (row_ptr_r, col_r) = (&row_ptr[..], &col[..]);
        for_rows(
            &mut vals,
            row_ptr_r,
            bs * bs,
            0..nc,
            &|rows: Range<usize>, out: &mut [f64]| {
                block_rows(discs, jac, bs, rows, row_ptr_r, col_r, out)
            },
        );
        Ok(BlockSymMatrix::from_upper_parts(
            bs, nc, row_ptr, col, vals,
        )?)
    }

    /// The validated instance of the assembled problem, named
    /// `{label}_step{step:04}__{ccp|lcp}` (`None` when there are no contacts); returns the
    /// stored entries of `N`.
    fn build_problem(&mut self, step: u64) -> Result<usize> {
        let nc = self.contacts.len();
        let n_block = self.n_block.take();
        if nc == 0 {
            self.spare_block = n_block;
            self.state.instance = None;
            return Ok(0);
        }
        let p = &self.params;
        let bs = p.block_size();
        /// The assembled `N` on either path.
        enum NMat {
            Csc(CscMatrix),
            Block(BlockSymMatrix),
        }
        let (n_mat, nnz) = match n_block {
            Some(b) => {
                let nnz = b.full_nnz();
                (NMat::Block(b), nnz)
            }
            None => {
                let m = CscMatrix::from_triplets(bs * nc, bs * nc, &self.triplets)?;
                let nnz = m.nnz();
                (NMat::Csc(m), nnz)
            }
        };
        let (cls, constraints, derivation) = if p.frictionless {
            ("lcp", ConstraintSet::NonNegative, "frictionless-lcp")
        } else {
            (
                "ccp",
                ConstraintSet::coulomb_dim(vec![p.mu; nc], 2),
                "ccp-relaxation",
            )
        };
        let mut parameters = self.parameters.clone();
        let movable = self.discs.iter().filter(|d| !d.fixed).count();
        let kv = [
            ("spacedim", "2".to_string()),
            ("time_s", format!("{}", (step - 1) as f64 * p.h)),
            ("h", format!("{}", p.h)),
            ("mu", format!("{}", p.mu)),
            ("gravity", format!("{} {}", p.gravity.x, p.gravity.y)),
            ("damping", format!("{}", p.damping)),
            (
                "compliance",
                p.compliance.map_or("none".into(), |c| c.describe()),
            ),
            ("bodies", self.discs.len().to_string()),
            ("movable_bodies", movable.to_string()),
            ("walls", self.walls.len().to_string()),
            ("contacts", nc.to_string()),
            ("bonds", self.bonds.live_bonds().to_string()),
            ("broken_bonds", self.bonds.broken_bonds().to_string()),
            ("bending_springs", self.bonds.live_bending().to_string()),
            ("envelope", format!("{}", self.envelope)),
            ("max_penetration", format!("{}", self.max_penetration())),
            ("kinetic_energy", format!("{}", self.kinetic_energy())),
            (
                "sign_convention",
                "g = N gamma + r = b + D^T v(t+h): contact velocity of B relative to A in the \
                 2-D frame (n, t = (-n_y, n_x)), normal first, positive when separating; \
                 gamma_n >= 0 pushes A and B apart; bond forces explicit in r"
                    .to_string(),
            ),
        ];
        for (k, v) in kv {
            parameters.insert(k.to_string(), v);
        }
        let prov = Provenance {
            source: format!("cpbench planar granular generator: {}", self.label),
            format: "granular-2d".into(),
            derivation: derivation.into(),
            parameters,
            seed: self.seed,
            step: Some(step),
            symmetrized_from: None,
        };
        let name = format!("{}_step{step:04}__{cls}", self.label);
        let r = std::mem::take(&mut self.r);
        let inst = match n_mat {
            NMat::Csc(m) => {
                Instance::new(name, m, r, constraints, prov, ValidationOptions::default())?
            }
            NMat::Block(b) => Instance::on_operator(name, b, r, constraints, prov)?,
        };
        self.state.instance = Some(match self.params.compliance {
            Some(c) => self.compliant(inst, c)?,
            None => inst,
        });
        Ok(nnz)
    }

    /// The compliant problem of the rigid step problem `inst` ([`crate::compliance`], the
    /// 3-D stepper's mapping on 2-D blocks): `R` and `r~` per contact from its diagonal block,
    /// its gap and (MuJoCo) its start velocity `v0_c = D_c^T v(t)`, the contact's relative
    /// velocity in its frame `(n, t)` at the start of the step.
    fn compliant(&self, mut inst: Instance, c: crate::ContactCompliance) -> Result<Instance> {
        let bs = self.params.block_size();
        let h = self.params.h;
        let mut r = inst.r().to_vec();
        let mut rc = vec![0.0; inst.n()];
        let mut v0 = [0.0; 2];
        for (k, (ct, j)) in self.contacts.iter().zip(&self.jac).enumerate() {
            if c.needs_start_velocity() {
                for (p, v) in v0.iter_mut().enumerate().take(bs) {
                    *v = j.sides[..j.nsides]
                        .iter()
                        .map(|(d, g)| {
                            let b = &self.discs[*d];
                            g[p][0] * b.vel.x + g[p][1] * b.vel.y + g[p][2] * b.omega
                        })
                        .sum();
                }
            }
            let w = inst.diag_block(k);
            let s = k * bs..(k + 1) * bs;
            c.apply(h, ct.gap, &w, &v0[..bs], &mut r[s.clone()], &mut rc[s]);
        }
        inst.replace_r(&r)?;
        Ok(inst.with_compliance(rc)?)
    }

    /// Detect, assemble and build the instance of the next step without solving it or moving
    /// anything. Returns it, or `None` when there are no contacts.
    /// Errors: [`GranularError::Problem`] for a non-finite state.
    pub fn build_instance(&mut self) -> Result<Option<&Instance>> {
        self.detect();
        self.assemble()?;
        self.build_problem(self.state.steps_done + 1)?;
        Ok(self.state.instance.as_ref())
    }

    /// One time step with `solver` in the loop (see the module documentation and
    /// [`ContactModel::advance`]): forces and detection at `q(t)`, assembly, the instance, the
    /// solve (warm-started by body pair), `v = v_free + M^-1 D gamma`, `x += h v`, `theta += h
    /// omega`, then bond breakage at `q(t+h)`.
    ///
    /// Errors: [`GranularError::Solver`], [`GranularError::SolutionSize`],
    /// [`GranularError::NonFinite`], [`GranularError::Problem`] as [`crate::Simulation::step`].
    pub fn step(&mut self, solver: &mut dyn ContactSolver) -> Result<PlanarStepReport> {
        let core = self.advance(solver)?;
        Ok(PlanarStepReport {
            core,
            bond_energy: self.bond_energy(),
            bonds: self.bonds.live_bonds(),
            broken_bonds: self.bonds.broken_bonds(),
        })
    }

    /// The contact Jacobian `D` (`3 nd x bs nc`, rows `(x, y, theta)` per disc, fixed discs'
    /// rows zero) of the current contacts, built directly from the contact frames (an
    /// independent path from the assembly, for checks).
    /// Errors: [`GranularError::Problem`] for a non-finite entry.
    pub fn jacobian(&self) -> Result<CscMatrix> {
        let bs = self.params.block_size();
        let mut t = Vec::new();
        for (c, ct) in self.contacts.iter().enumerate() {
            let dirs = [ct.n, ct.t()];
            let mut push = |x: usize, sign: f64| {
                let r = ct.point - self.discs[x].pos;
                for (k, d) in dirs.iter().enumerate().take(bs) {
                    t.push((3 * x, bs * c + k, sign * d.x));
                    t.push((3 * x + 1, bs * c + k, sign * d.y));
                    if self.discs[x].rotates {
                        t.push((3 * x + 2, bs * c + k, sign * cross(&r, d)));
                    }
                }
            };
            push(ct.a, -1.0);
            if let PlanarPartner::Disc(j) = ct.b {
                if !self.discs[j].fixed {
                    push(j, 1.0);
                }
            }
        }
        Ok(CscMatrix::from_triplets(
            3 * self.discs.len(),
            bs * self.contacts.len(),
            &t,
        )?)
    }

    /// Diagonal of `M^-1` (length `3 nd`: `1/m, 1/m, 1/J` per disc; zero for fixed discs and
    /// in the rotational entry of discs that do not rotate).
    pub fn mass_inverse_diagonal(&self) -> Vec<f64> {
        self.discs.iter().flat_map(|d| d.inverse_mass()).collect()
    }

    /// Free velocities `v(t) + h M^-1 f_ext(q(t))` of the last detection (length `nd`, each
    /// `(vx, vy, omega)`; zero for fixed discs).
    pub fn free_velocity(&self) -> &[[f64; 3]] {
        &self.vfree
    }
}

/// The planar frame `(n, t)`.
impl ContactFrame for PlanarContact {
    type Vector = Vector2<f64>;

    fn impulse(&self, g: &[f64]) -> Vector2<f64> {
        let mut f = g[0] * self.n;
        if g.len() == 2 {
            f += g[1] * self.t();
        }
        f
    }

    fn project(&self, f: &Vector2<f64>, out: &mut [f64]) {
        out[0] = f.dot(&self.n);
        if out.len() == 2 {
            out[1] = f.dot(&self.t());
        }
    }
}

/// The planar stepper's phases (discs, walls and bonds, frames `(n, t)`).
impl ContactModel for PlanarSimulation {
    type Contact = PlanarContact;

    fn state(&self) -> &StepState<Vector2<f64>> {
        &self.state
    }

    fn contacts_and_state(&mut self) -> (&[PlanarContact], &mut StepState<Vector2<f64>>) {
        (&self.contacts, &mut self.state)
    }

    fn block_size(&self) -> usize {
        self.params.block_size()
    }

    fn h(&self) -> f64 {
        self.params.h
    }

    fn detect_step(&mut self, _step: u64) -> Result<usize> {
        Ok(self.detect())
    }

    fn max_penetration(&self) -> f64 {
        PlanarSimulation::max_penetration(self)
    }

    fn assemble(&mut self) -> Result<()> {
        PlanarSimulation::assemble(self)
    }

    fn make_instance(&mut self, step: u64) -> Result<usize> {
        self.build_problem(step)
    }

    /// `v = v_free + M^-1 D gamma`, `x += h v`, `theta += h omega`, then bond breakage at
    /// `q(t+h)`.
    #[allow(clippy::needless_range_loop)] // block indices p, k index several arrays
    fn update(&mut self, step: u64) -> Result<()> {
        let bs = self.params.block_size();
        let h = self.params.h;
        for (i, d) in self.discs.iter_mut().enumerate() {
            if d.fixed {
                continue;
            }
            let mut v = self.vfree[i];
            let minv = d.inverse_mass();
            for &(c, s) in &self.inc[self.inc_ptr[i]..self.inc_ptr[i + 1]] {
                let g = &self.jac[c as usize].sides[s as usize].1;
                let c = c as usize;
                for p in 0..bs {
                    let gp = self.state.gamma[bs * c + p];
                    for k in 0..3 {
                        v[k] += minv[k] * g[p][k] * gp;
                    }
                }
            }
            d.vel = Vector2::new(v[0], v[1]);
            d.omega = if d.rotates { v[2] } else { 0.0 };
            d.pos += h * d.vel;
            d.angle += h * d.omega;
            let s = [d.pos.x, d.pos.y, d.angle, d.vel.x, d.vel.y, d.omega];
            if !s.iter().all(|x| x.is_finite()) {
                return Err(GranularError::NonFinite { body: i, step });
            }
        }
        self.bonds.break_overloaded(&self.discs);
        Ok(())
    }

    fn kinetic_energy(&self) -> f64 {
        PlanarSimulation::kinetic_energy(self)
    }

    fn envelope(&self) -> f64 {
        self.envelope
    }
}
