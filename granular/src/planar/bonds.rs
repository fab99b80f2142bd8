//! FyDiK2D-style bonds between discs: normal (translational) springs and bending (rotational)
//! springs, applied as explicit forces of the step, and their breakage.
//!
//! After P. Frantik, "Diskretni model FyDiK2D / Discrete model FyDiK2D" (Brno University of
//! Technology, Faculty of Civil Engineering; sections 2.1-2.3, eqs. (2)-(4)): mass points as
//! the only carriers of mass, joined by a *translational spring* ("a light telescopic rod with
//! an inner spring", force a function of the elongation `L - L0`, along the spring) and a
//! *rotational spring* joining two translational springs at their shared mass point (moment a
//! function of the change of the angle between them, split into two force couples acting
//! perpendicular to the two springs, `F = M / L`):
//!
//! - a [`Bond`] joins discs `i` and `j` with rest length `L0`; at length `L` it pulls `i`
//!   towards `j` with `k_n (L - L0) e`, `e = (x_j - x_i) / L`, and `j` with the opposite force;
//!   its strain is `(L - L0) / L0`;
//! - a [`BendingSpring`] joins two bonds `(i, j)` and `(j, k)` sharing the point `j`; with
//!   `u1 = x_i - x_j`, `u2 = x_k - x_j` and the angle `phi = atan2(u1 x u2, u1 . u2)` from
//!   `u1` to `u2`, its rotation is `rho = phi - phi0` (wrapped into `(-pi, pi]`; FyDiK2D keeps
//!   the accumulated angle to allow turns beyond `2 pi`, which a spring that breaks at
//!   `angle_max < pi` never reaches), its moment `M = k_b rho`, and the forces are the
//!   gradient of `1/2 k_b rho^2`: `F_k = -M perp(u2) / |u2|^2`, `F_i = M perp(u1) / |u1|^2`,
//!   `F_j = -(F_i + F_k)` with `perp(u) = (-u_y, u_x)` (FyDiK2D's `force = moment / length`
//!   perpendicular to each spring). This is the three-point bending unit of the seed paper, not
//!   a spring on the discs' own rotations: the discs' angles only take part in contacts.
//!
//! Both are conservative: [`BondSet::energy`] is the potential of [`BondSet::add_forces`].
//! A bond breaks for good when its tensile strain `(L - L0) / L0` exceeds `strain_max`
//! (tension only: a bond broken in compression would leave two overlapping discs whose contact
//! row `Phi / h` then pushes apart at `|Phi| / h`, injecting energy; compressed bonds hold and
//! beams break in their tensile fibres), a bending spring when
//! `|rho| > angle_max` or when one of its two bonds broke ([`BondSet::break_overloaded`],
//! called by the stepper after each position update). A live bond excludes its pair of discs
//! from contact detection.

use super::Disc;
use crate::{check_non_negative, check_positive, invalid, Result};
use nalgebra::Vector2;

/// A normal spring between discs `i` and `j`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bond {
    /// First disc.
    pub i: usize,
    /// Second disc.
    pub j: usize,
    /// Rest length `L0` (m), `> 0`.
    pub l0: f64,
    /// Normal stiffness `k_n` (N/m), `>= 0`.
    pub k_n: f64,
    /// Tensile strain `(L - L0) / L0` beyond which the bond breaks, `> 0` (may be infinite).
    pub strain_max: f64,
    /// Whether it broke (for good).
    pub broken: bool,
}

impl Bond {
    /// Current length `L` (m).
    pub fn length(&self, discs: &[Disc]) -> f64 {
        (discs[self.j].pos - discs[self.i].pos).norm()
    }

    /// Current strain `(L - L0) / L0` (positive in tension).
    pub fn strain(&self, discs: &[Disc]) -> f64 {
        (self.length(discs) - self.l0) / self.l0
    }
}

/// A rotational spring between bonds `bond_a = (i, j)` and `bond_b = (j, k)` at their shared
/// disc `j`.
#[derive(Clone, Debug, PartialEq)]
pub struct BendingSpring {
    /// First end disc.
    pub i: usize,
    /// Shared (central) disc.
    pub j: usize,
    /// Second end disc.
    pub k: usize,
    /// Index of the bond joining `i` and `j`.
    pub bond_a: usize,
    /// Index of the bond joining `j` and `k`.
    pub bond_b: usize,
    /// Rest angle `phi0` (rad) from `x_i - x_j` to `x_k - x_j`, in `(-pi, pi]`.
    pub phi0: f64,
    /// Bending stiffness `k_b` (N m/rad), `>= 0`.
    pub k_b: f64,
    /// Rotation `|phi - phi0|` (rad) beyond which the spring breaks, `> 0` (may be infinite).
    pub angle_max: f64,
    /// Whether it broke (for good).
    pub broken: bool,
}

fn angle(u1: &Vector2<f64>, u2: &Vector2<f64>) -> f64 {
    (u1.x * u2.y - u1.y * u2.x).atan2(u1.dot(u2))
}

fn wrap(a: f64) -> f64 {
    let two_pi = 2.0 * std::f64::consts::PI;
    let mut a = a % two_pi;
    if a > std::f64::consts::PI {
        a -= two_pi;
    } else if a <= -std::f64::consts::PI {
        a += two_pi;
    }
    a
}

impl BendingSpring {
    /// Current rotation `rho = phi - phi0` (rad), wrapped into `(-pi, pi]`.
    pub fn rotation(&self, discs: &[Disc]) -> f64 {
        let xj = discs[self.j].pos;
        wrap(angle(&(discs[self.i].pos - xj), &(discs[self.k].pos - xj)) - self.phi0)
    }
}

/// The bonds and bending springs of a simulation, with the sorted list of bonded pairs that
/// the contact detection skips.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BondSet {
    bonds: Vec<Bond>,
    bending: Vec<BendingSpring>,
    /// Sorted `(min, max)` disc pairs of the live bonds.
    pairs: Vec<(u32, u32)>,
}

impl BondSet {
    /// No bonds.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a bond between discs `i` and `j` at rest at their current distance, with stiffness
    /// `k_n` (N/m) and breaking strain `strain_max`; returns its index. Errors:
    /// [`crate::GranularError::InvalidParameter`] for an index out of range, `i == j`,
    /// coincident centres, `k_n < 0` or `strain_max <= 0` (NaN included).
    pub fn add_bond(
        &mut self,
        discs: &[Disc],
        i: usize,
        j: usize,
        k_n: f64,
        strain_max: f64,
    ) -> Result<usize> {
        if i >= discs.len() || j >= discs.len() || i == j {
            return Err(invalid(
                "bond",
                format!("({i}, {j})"),
                "needs two different disc indices in range",
            ));
        }
        let b = Bond {
            i,
            j,
            l0: (discs[j].pos - discs[i].pos).norm(),
            k_n,
            strain_max,
            broken: false,
        };
        check_bond(&b, discs.len())?;
        self.bonds.push(b);
        self.pairs.push(pair(i, j));
        self.pairs.sort_unstable();
        Ok(self.bonds.len() - 1)
    }

    /// Add a bending spring between bonds `bond_a` and `bond_b` (which must share exactly one
    /// disc), at rest in the current configuration, with stiffness `k_b` (N m/rad) and breaking
    /// rotation `angle_max` (rad); returns its index. Errors:
    /// [`crate::GranularError::InvalidParameter`] for a bond index out of range, bonds that do
    /// not share exactly one disc, `k_b < 0` or `angle_max <= 0` (NaN included).
    pub fn add_bending(
        &mut self,
        discs: &[Disc],
        bond_a: usize,
        bond_b: usize,
        k_b: f64,
        angle_max: f64,
    ) -> Result<usize> {
        let (i, j, k) = self.bending_ends(bond_a, bond_b)?;
        let xj = discs[j].pos;
        let s = BendingSpring {
            i,
            j,
            k,
            bond_a,
            bond_b,
            phi0: angle(&(discs[i].pos - xj), &(discs[k].pos - xj)),
            k_b,
            angle_max,
            broken: false,
        };
        check_bending(&s)?;
        self.bending.push(s);
        Ok(self.bending.len() - 1)
    }

    fn bending_ends(&self, bond_a: usize, bond_b: usize) -> Result<(usize, usize, usize)> {
        let (Some(a), Some(b)) = (self.bonds.get(bond_a), self.bonds.get(bond_b)) else {
            return Err(invalid(
                "bending spring",
                format!("bonds ({bond_a}, {bond_b})"),
                "bond index out of range",
            ));
        };
        let common: Vec<usize> = [a.i, a.j]
            .into_iter()
            .filter(|d| *d == b.i || *d == b.j)
            .collect();
        if common.len() != 1 {
            return Err(invalid(
                "bending spring",
                format!("bonds ({bond_a}, {bond_b})"),
                "the two bonds must share exactly one disc",
            ));
        }
        let j = common[0];
        let i = if a.i == j { a.j } else { a.i };
        let k = if b.i == j { b.j } else { b.i };
        Ok((i, j, k))
    }

    /// All bonds, live and broken, in the order added.
    pub fn bonds(&self) -> &[Bond] {
        &self.bonds
    }

    /// All bending springs, live and broken, in the order added.
    pub fn bending(&self) -> &[BendingSpring] {
        &self.bending
    }

    /// Live bonds.
    pub fn live_bonds(&self) -> usize {
        self.bonds.iter().filter(|b| !b.broken).count()
    }

    /// Broken bonds.
    pub fn broken_bonds(&self) -> usize {
        self.bonds.iter().filter(|b| b.broken).count()
    }

    /// Live bending springs.
    pub fn live_bending(&self) -> usize {
        self.bending.iter().filter(|b| !b.broken).count()
    }

    /// Whether a live bond joins discs `i` and `j` (binary search, O(log bonds)).
    pub fn bonded(&self, i: usize, j: usize) -> bool {
        !self.pairs.is_empty() && self.pairs.binary_search(&pair(i, j)).is_ok()
    }

    /// Check every bond and bending spring against `discs`. Errors:
    /// [`crate::GranularError::InvalidParameter`] for indices out of range, `i == j`, `L0 <= 0`,
    /// `k_n < 0`, `strain_max <= 0`, a bending spring whose bonds do not share its disc `j`,
    /// `k_b < 0`, `angle_max <= 0`, or non-finite values.
    pub fn validate(&self, discs: &[Disc]) -> Result<()> {
        for b in &self.bonds {
            check_bond(b, discs.len())?;
        }
        for s in &self.bending {
            let (i, j, k) = self.bending_ends(s.bond_a, s.bond_b)?;
            if (i, j, k) != (s.i, s.j, s.k) {
                return Err(invalid(
                    "bending spring",
                    format!("({}, {}, {})", s.i, s.j, s.k),
                    "ends must match its two bonds",
                ));
            }
            check_bending(s)?;
        }
        Ok(())
    }

    /// Rebuild the sorted list of live bonded pairs.
    pub(crate) fn rebuild_pairs(&mut self) {
        self.pairs.clear();
        self.pairs.extend(
            self.bonds
                .iter()
                .filter(|b| !b.broken)
                .map(|b| pair(b.i, b.j)),
        );
        self.pairs.sort_unstable();
    }

    /// Add the forces (N) of the live bonds and bending springs at the discs' current
    /// positions to `force` (length `discs.len()`). O(bonds), no allocation.
    pub fn add_forces(&self, discs: &[Disc], force: &mut [Vector2<f64>]) {
        for b in self.bonds.iter().filter(|b| !b.broken) {
            let d = discs[b.j].pos - discs[b.i].pos;
            let l = d.norm();
            if l == 0.0 {
                continue;
            }
            let f = b.k_n * (l - b.l0) / l * d;
            force[b.i] += f;
            force[b.j] -= f;
        }
        for s in self.bending.iter().filter(|s| !s.broken) {
            let xj = discs[s.j].pos;
            let u1 = discs[s.i].pos - xj;
            let u2 = discs[s.k].pos - xj;
            let (l1, l2) = (u1.norm_squared(), u2.norm_squared());
            if l1 == 0.0 || l2 == 0.0 {
                continue;
            }
            let m = s.k_b * wrap(angle(&u1, &u2) - s.phi0);
            let fi = m / l1 * Vector2::new(-u1.y, u1.x);
            let fk = -m / l2 * Vector2::new(-u2.y, u2.x);
            force[s.i] += fi;
            force[s.k] += fk;
            force[s.j] -= fi + fk;
        }
    }

    /// Elastic energy (J) of the live bonds, `sum 1/2 k_n (L - L0)^2`, and bending springs,
    /// `sum 1/2 k_b rho^2`.
    pub fn energy(&self, discs: &[Disc]) -> f64 {
        let e_n: f64 = self
            .bonds
            .iter()
            .filter(|b| !b.broken)
            .map(|b| {
                let x = b.length(discs) - b.l0;
                0.5 * b.k_n * x * x
            })
            .sum();
        let e_b: f64 = self
            .bending
            .iter()
            .filter(|s| !s.broken)
            .map(|s| {
                let r = s.rotation(discs);
                0.5 * s.k_b * r * r
            })
            .sum();
        e_n + e_b
    }

    /// Break every live bond whose tensile strain exceeds its `strain_max` and every live bending
    /// spring whose rotation exceeds its `angle_max` or one of whose bonds is broken; returns
    /// the number of bonds broken now. Broken bonds stay broken.
    pub fn break_overloaded(&mut self, discs: &[Disc]) -> usize {
        let mut broke = 0;
        for b in self.bonds.iter_mut().filter(|b| !b.broken) {
            if b.strain(discs) > b.strain_max {
                b.broken = true;
                broke += 1;
            }
        }
        for s in self.bending.iter_mut().filter(|s| !s.broken) {
            if self.bonds[s.bond_a].broken
                || self.bonds[s.bond_b].broken
                || s.rotation(discs).abs() > s.angle_max
            {
                s.broken = true;
            }
        }
        if broke > 0 {
            self.rebuild_pairs();
        }
        broke
    }
}

fn pair(i: usize, j: usize) -> (u32, u32) {
    (i.min(j) as u32, i.max(j) as u32)
}

fn check_bond(b: &Bond, nd: usize) -> Result<()> {
    if b.i >= nd || b.j >= nd || b.i == b.j {
        return Err(invalid(
            "bond",
            format!("({}, {})", b.i, b.j),
            "needs two different disc indices in range",
        ));
    }
    check_positive("bond rest length", b.l0)?;
    check_non_negative("k_n", b.k_n)?;
    if b.strain_max.is_nan() || b.strain_max <= 0.0 {
        return Err(invalid("strain_max", b.strain_max, "must be > 0"));
    }
    Ok(())
}

fn check_bending(s: &BendingSpring) -> Result<()> {
    check_non_negative("k_b", s.k_b)?;
    if !s.phi0.is_finite() {
        return Err(invalid("phi0", s.phi0, "must be finite"));
    }
    if s.angle_max.is_nan() || s.angle_max <= 0.0 {
        return Err(invalid("angle_max", s.angle_max, "must be > 0"));
    }
    Ok(())
}
