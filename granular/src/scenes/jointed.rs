//! Three scenes with joints ([`crate::joints`], issue 33 item 4): `chain`, a chain of spheres on
//! ball joints pinned at one end, released horizontally so that it swings down and falls onto
//! the floor, `hinge-chain`, the same chain on hinges whose parallel axes are tilted from `z`
//! towards `y` (a planar linkage swinging in a tilted plane: the hinges carry the out-of-plane
//! part of gravity as torques), and `bridge`, a sagging row of spheres on ball joints pinned
//! at both ends with heavy spheres dropped on it.
//! Links are spheres of radius `R` whose joints sit `spacing / 2` from their centres along the
//! chain (`spacing > 2 R`: neighbours do not touch at rest); a pin is a small fixed sphere at the
//! pinned anchor (radius `R / 10`, clear of its link). The seed is unused (no randomness).

use super::{built, check_size, scene_params, Scene};
use crate::joints::{BallJoint, HingeJoint};
use crate::{check_positive, invalid, Body, Plane, Result, SimParams};
use nalgebra::{UnitQuaternion, Vector3};

/// A hanging chain of `links` spheres, linked by ball joints and pinned to the world at the
/// outer anchor of the first link, released at rest along `+x` at height `height` above a
/// floor (`y = 0`); gravity along `-y`. The chain (`links spacing` long) is longer than the
/// height, so it swings down about the pin and its free end lands on the floor.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainParams {
    /// Links (size), `>= 1`; default 20.
    pub links: usize,
    /// Radius of a link (m); default 0.05.
    pub radius: f64,
    /// Distance of neighbouring link centres (m), `> 2 radius`; default `2.5 radius`.
    pub spacing: f64,
    /// Mass of a link (kg); default 1.
    pub mass: f64,
    /// Friction coefficient of the contacts; default 0.3.
    pub mu: f64,
    /// Time step (s); default 5e-3.
    pub h: f64,
    /// Height of the pin above the floor as a fraction of the chain's length; default 0.6.
    pub height: f64,
}

/// The default links of both scenes: 20 links of radius 0.05 m, 0.125 m apart, 1 kg.
const DEFAULT_LINKS: Links = (20, 0.05, 0.125, 1.0);

impl Default for ChainParams {
    fn default() -> Self {
        let (links, radius, spacing, mass) = DEFAULT_LINKS;
        Self {
            links,
            radius,
            spacing,
            mass,
            mu: 0.3,
            h: 5e-3,
            height: 0.6,
        }
    }
}

/// The link data both scenes share: `(links, radius, spacing, mass)`.
type Links = (usize, f64, f64, f64);

/// The checks of a jointed scene ([`check_links`]), its parameters (time step `h`, gravity
/// 9.81 along `-y`, friction `mu`, envelope 1e-3) and the recorded parameters both scenes
/// share (`size`, `radius`, `spacing`, `mass`, `mu`, `h`).
/// A scene's parameters as `(key, value)` lines (its provenance).
type KeyValues = Vec<(&'static str, String)>;

fn start(
    (links, radius, spacing, mass): Links,
    mu: f64,
    h: f64,
    frictionless: bool,
) -> Result<(SimParams, KeyValues)> {
    check_links(links, radius, spacing, mass, frictionless)?;
    let params = scene_params(h, 9.81, mu, 1e-3, frictionless)?;
    let kv = vec![
        ("size", links.to_string()),
        ("radius", radius.to_string()),
        ("spacing", spacing.to_string()),
        ("mass", mass.to_string()),
        ("mu", mu.to_string()),
        ("h", h.to_string()),
    ];
    Ok((params, kv))
}

/// The checks of a jointed scene: `links` in `1..=2^20`, positive `radius`, `mass`, `h`,
/// `spacing > 2 radius`, and frictional (a ball joint needs blocks of 3 rows). Errors:
/// [`crate::GranularError::InvalidParameter`] naming the first.
fn check_links(
    links: usize,
    radius: f64,
    spacing: f64,
    mass: f64,
    frictionless: bool,
) -> Result<()> {
    check_size("size (links)", links, 1 << 20)?;
    check_positive("radius", radius)?;
    check_positive("mass", mass)?;
    check_positive("spacing", spacing)?;
    if spacing <= 2.0 * radius {
        return Err(invalid(
            "spacing",
            spacing,
            "must exceed 2 radius (neighbouring links must not overlap)",
        ));
    }
    if frictionless {
        return Err(invalid(
            "frictionless",
            true,
            "the jointed scenes need 3 rows per block (ball joints): not frictionless",
        ));
    }
    Ok(())
}

/// The links of a chain whose joint anchors are the world points `anchors` (`links + 1`, the
/// chain's ends included): link `i` centred midway between anchors `i` and `i + 1`, rotated so
/// that its body `x` axis points from the one to the other (anchors at `(-+ |d| / 2, 0, 0)` in
/// its frame, `d` the chord), and the joints between consecutive links (anchor `i + 1`).
fn links_on(
    anchors: &[Vector3<f64>],
    radius: f64,
    mass: f64,
) -> Result<(Vec<Body>, Vec<BallJoint>)> {
    let mut bodies = Vec::with_capacity(anchors.len() - 1);
    for w in anchors.windows(2) {
        let d = w[1] - w[0];
        let mut b = Body::sphere(0.5 * (w[0] + w[1]), radius, mass)?;
        b.rot = UnitQuaternion::rotation_between(&Vector3::x(), &d)
            .unwrap_or_else(UnitQuaternion::identity);
        bodies.push(b);
    }
    let joints = (1..bodies.len())
        .map(|i| BallJoint::at_point(&bodies, i - 1, i, anchors[i]))
        .collect();
    Ok((bodies, joints))
}

/// A pin: a fixed sphere of radius `radius / 10` at the world point `p`, appended to `bodies`,
/// and the joint holding `link`'s anchor at `p` on it.
fn pin(bodies: &mut Vec<Body>, link: usize, p: Vector3<f64>, radius: f64) -> Result<BallJoint> {
    bodies.push(Body::fixed_sphere(p, 0.1 * radius)?);
    Ok(BallJoint::at_point(bodies, link, bodies.len() - 1, p))
}

impl ChainParams {
    /// The checked parameters, their key values and the `links + 1` joint points, `spacing`
    /// apart along x at the height `height links spacing` (shared by `chain` and
    /// `hinge-chain`). Errors as [`ChainParams::build`].
    fn layout(&self, frictionless: bool) -> Result<(SimParams, KeyValues, Vec<Vector3<f64>>)> {
        let links = (self.links, self.radius, self.spacing, self.mass);
        let (params, kv) = start(links, self.mu, self.h, frictionless)?;
        check_positive("height", self.height)?;
        let y = self.height * self.links as f64 * self.spacing;
        let anchors = (0..=self.links)
            .map(|k| Vector3::new(k as f64 * self.spacing, y, 0.0))
            .collect();
        Ok((params, kv, anchors))
    }

    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] for `links = 0`, a
    /// non-positive radius, mass or `h`, `spacing <= 2 radius`, a non-positive `height`,
    /// `mu < 0`, or frictionless mode.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        let (params, mut kv, anchors) = self.layout(frictionless)?;
        let (mut bodies, mut joints) = links_on(&anchors, self.radius, self.mass)?;
        joints.insert(0, pin(&mut bodies, 0, anchors[0], self.radius)?);
        kv.push(("pin_height", anchors[0].y.to_string()));
        kv.push(("joints", joints.len().to_string()));
        let floor = Plane::new(Vector3::y(), Vector3::zeros())?;
        let mut scene = built("chain", self.links, seed, &kv, bodies, vec![floor], params);
        scene.joints = joints;
        Ok(scene)
    }
}

/// A bridge of `links` spheres linked by ball joints and pinned to the world at both ends, its
/// anchors on a circular arc (sag angle `sag`: the arc spans `2 sag` radians, the links equal
/// chords), with `max(1, links / 5)` heavy spheres (`load` times a link's mass, radius `1.5 R`)
/// released at rest `3 R` above evenly spaced links; no floor, gravity along `-y`.
#[derive(Clone, Debug, PartialEq)]
pub struct BridgeParams {
    /// Links (size), `>= 1`; default 20.
    pub links: usize,
    /// Radius of a link (m); default 0.05.
    pub radius: f64,
    /// Distance of neighbouring link centres (m), `> 2 radius`; default `2.5 radius`.
    pub spacing: f64,
    /// Mass of a link (kg); default 1.
    pub mass: f64,
    /// Mass of a load sphere over that of a link; default 10.
    pub load: f64,
    /// Half the angle the arc of anchors spans (rad), in `(0, pi / 2]`; default 0.3.
    pub sag: f64,
    /// Friction coefficient of the contacts; default 0.3.
    pub mu: f64,
    /// Time step (s); default 5e-3.
    pub h: f64,
}

impl Default for BridgeParams {
    fn default() -> Self {
        let (links, radius, spacing, mass) = DEFAULT_LINKS;
        Self {
            links,
            radius,
            spacing,
            mass,
            load: 10.0,
            sag: 0.3,
            mu: 0.3,
            h: 5e-3,
        }
    }
}

impl BridgeParams {
    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] for `links = 0`, a
    /// non-positive radius, mass, load or `h`, `spacing <= 2 radius`, `sag` outside
    /// `(0, pi / 2]`, `mu < 0`, or frictionless mode.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        let links = (self.links, self.radius, self.spacing, self.mass);
        let (params, mut kv) = start(links, self.mu, self.h, frictionless)?;
        check_positive("load", self.load)?;
        check_positive("sag", self.sag)?;
        if self.sag > std::f64::consts::FRAC_PI_2 {
            return Err(invalid("sag", self.sag, "must be in (0, pi / 2]"));
        }
        let n = self.links;
        // anchors k = 0..=n on a circle of radius rho about (0, rho, 0), at angles
        // -sag + 2 sag k / n from the bottom: equal chords 2 rho sin(sag / n) = spacing
        let rho = self.spacing / (2.0 * (self.sag / n as f64).sin());
        let anchors: Vec<_> = (0..=n)
            .map(|k| {
                let phi = -self.sag + 2.0 * self.sag * k as f64 / n as f64;
                Vector3::new(rho * phi.sin(), rho * (1.0 - phi.cos()), 0.0)
            })
            .collect();
        let (mut bodies, mut joints) = links_on(&anchors, self.radius, self.mass)?;
        joints.insert(0, pin(&mut bodies, 0, anchors[0], self.radius)?);
        joints.push(pin(&mut bodies, n - 1, anchors[n], self.radius)?);
        let loads = (n / 5).max(1);
        for i in 0..loads {
            let link = (2 * i + 1) * n / (2 * loads);
            let above = bodies[link].pos + Vector3::new(0.0, 3.0 * self.radius, 0.0);
            bodies.push(Body::sphere(
                above,
                1.5 * self.radius,
                self.load * self.mass,
            )?);
        }
        kv.extend([
            ("load", self.load.to_string()),
            ("loads", loads.to_string()),
            ("sag", self.sag.to_string()),
            ("joints", joints.len().to_string()),
        ]);
        let mut scene = built("bridge", n, seed, &kv, bodies, vec![], params);
        scene.joints = joints;
        Ok(scene)
    }
}

/// The `chain` of [`ChainParams`] on hinge joints instead of ball joints (`hinge-chain`): every
/// joint, the pin included, is a hinge ([`HingeJoint`]) at the same point with the axis
/// `(0, sin tilt, cos tilt)` (perpendicular to the chain, tilted by `tilt` from `z` towards
/// `y`) and bearings `radius` from the joint along it. The chain swings in the plane through the
/// pin perpendicular to the axis; gravity's component along the axis, `g sin tilt`, is held by
/// the hinges (as a force, and as the torques of the bearings' transverse loads). Joint blocks:
/// two per hinge (`2 links`), no ball joints.
#[derive(Clone, Debug, PartialEq)]
pub struct HingeChainParams {
    /// The chain: links, radius, spacing, mass, mu, h, height ([`ChainParams`], its defaults).
    pub chain: ChainParams,
    /// The tilt of the hinge axes from `z` towards `y` (rad), in `[0, pi / 2)` (at `pi / 2` the
    /// axis is vertical and the chain would not swing down); default 0.5.
    pub tilt: f64,
}

impl Default for HingeChainParams {
    fn default() -> Self {
        Self {
            chain: ChainParams::default(),
            tilt: 0.5,
        }
    }
}

impl HingeChainParams {
    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] as
    /// [`ChainParams::build`], and for `tilt` outside `[0, pi / 2)`.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        let c = &self.chain;
        if !(self.tilt.is_finite() && (0.0..std::f64::consts::FRAC_PI_2).contains(&self.tilt)) {
            return Err(invalid("tilt", self.tilt, "must be in [0, pi / 2)"));
        }
        let (params, mut kv, anchors) = c.layout(frictionless)?;
        let (mut bodies, _) = links_on(&anchors, c.radius, c.mass)?;
        let axis = Vector3::new(0.0, self.tilt.sin(), self.tilt.cos());
        bodies.push(Body::fixed_sphere(anchors[0], 0.1 * c.radius)?);
        let pin = bodies.len() - 1;
        let mut hinges = vec![HingeJoint::at_point(
            &bodies, 0, pin, anchors[0], axis, c.radius,
        )?];
        for (i, p) in anchors.iter().enumerate().take(c.links).skip(1) {
            hinges.push(HingeJoint::at_point(&bodies, i - 1, i, *p, axis, c.radius)?);
        }
        kv.extend([
            ("pin_height", anchors[0].y.to_string()),
            ("tilt", self.tilt.to_string()),
            ("hinges", hinges.len().to_string()),
        ]);
        let floor = Plane::new(Vector3::y(), Vector3::zeros())?;
        let mut scene = built(
            "hinge-chain",
            c.links,
            seed,
            &kv,
            bodies,
            vec![floor],
            params,
        );
        scene.hinges = hinges;
        Ok(scene)
    }
}
