//! A contact of the 3-D stepper: its two bodies ([`Partner`]), its geometry and orthonormal
//! frame ([`Contact`], [`tangent_frame`]). A leaf module: the narrow phases of spheres
//! ([`super::narrow`]) and ellipsoids ([`super::ellipsoid`]) both produce contacts, and
//! neither depends on the other through it.

use nalgebra::Vector3;

/// The second body of a contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partner {
    /// Another sphere (movable or fixed), by body index.
    Body(usize),
    /// A plane, by index in [`super::World::planes`].
    Plane(usize),
}

/// The identity of a contact along a trajectory (issue 32): movable body `a`, its partner and a
/// per-pair feature number, so that an answer of step `k` maps onto the contacts of step
/// `k + 1` (`docs/formats.md`, "Trajectories"). Spheres, ellipsoids and discs touch a partner
/// in at most one point, so `feature` is 0 for every contact the steppers make today.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContactId {
    /// Movable body `A` (3-D: body index; plane: disc index).
    pub a: usize,
    /// Body `B`: another body (disc) or a plane (wall).
    pub b: PartnerId,
    /// Which contact of the pair (0 for the one-point contacts of every scene here).
    pub feature: u32,
}

/// The second body of a [`ContactId`]: a body (3-D) or disc (plane) by index, or a plane (3-D)
/// or wall (plane) by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartnerId {
    /// A body (disc), by index.
    Body(usize),
    /// A plane (wall), by index.
    Wall(usize),
}

impl From<Partner> for PartnerId {
    fn from(b: Partner) -> Self {
        match b {
            Partner::Body(j) => PartnerId::Body(j),
            Partner::Plane(p) => PartnerId::Wall(p),
        }
    }
}

impl std::fmt::Display for PartnerId {
    /// `7` for body 7, `w2` for wall 2 (the `b` column of a trajectory's contacts file).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PartnerId::Body(j) => write!(f, "{j}"),
            PartnerId::Wall(k) => write!(f, "w{k}"),
        }
    }
}

impl std::str::FromStr for PartnerId {
    type Err = String;
    /// The inverse of `Display`: `7` or `w2`; errors name the text.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (wall, digits) = match s.strip_prefix('w') {
            Some(d) => (true, d),
            None => (false, s),
        };
        let k: usize = digits
            .parse()
            .map_err(|_| format!("expected a body index or w<wall index>, found {s:?}"))?;
        Ok(if wall {
            PartnerId::Wall(k)
        } else {
            PartnerId::Body(k)
        })
    }
}

/// One contact: geometry and frame (world coordinates).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Body `A` (movable), index into the world's bodies.
    pub a: usize,
    /// Body `B`.
    pub b: Partner,
    /// Unit normal from `A` to `B`.
    pub n: Vector3<f64>,
    /// First unit tangent.
    pub u: Vector3<f64>,
    /// Second unit tangent, `w = n x u`.
    pub w: Vector3<f64>,
    /// Contact point (m), midway between the closest surface points.
    pub point: Vector3<f64>,
    /// Signed gap `Phi` (m), negative when overlapping.
    pub gap: f64,
}

/// A right-handed orthonormal frame `(n, u, w)` for a unit `n`: `u` is `n x e` normalised,
/// with `e` the coordinate axis least aligned with `n`, and `w = n x u`. Deterministic and
/// continuous except where the choice of `e` switches.
#[inline]
pub fn tangent_frame(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = n.map(f64::abs);
    let e = if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let u = n.cross(&e).normalize();
    let w = n.cross(&u);
    (u, w)
}

/// The world directions of the coordinates of a step's contacts, contact after contact
/// (`Simulation::last_contact_frames`): contact `c`'s coordinate `k` (normal first, then the
/// tangents) is the unit world vector `directions[(c * block_size + k) * dim..][..dim]`. An
/// answer `g` (contact coordinates) is the world impulse `sum_k g[k] e_k`; a world impulse `f`
/// has the coordinates `f . e_k` in the frame of another step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactFrames {
    /// Coordinates per contact: 3 (or 2 in the plane) with friction, 1 without.
    pub block_size: usize,
    /// Components of a direction: 3, or 2 in the plane (0 without contacts).
    pub dim: usize,
    /// The directions, `contacts x block_size x dim`.
    pub directions: Vec<f64>,
}
