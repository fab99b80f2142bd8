//! Scenes: seeded, deterministic initial states of the stepper. `y` is up; SI units.
//!
//! | scene | what | size means | source |
//! |---|---|---|---|
//! | `fill` | `n x 10 x n` spheres on a jittered lattice falling into a closed box | `n` | Melanz et al. 2017 (CMAME 320), TEST_FILL |
//! | `pile` | polydisperse spheres poured as a column onto a walled floor, forming a heap | spheres | Pospisil 2014 |
//! | `pyramid` | cannonball pyramid, layers `L^2 .. 1^2`, bottom layer fixed | layers `L` | classic stacking test (Tasora & Anitescu 2011) |
//! | `tube` | spheres sliding down an inclined tube and pouring onto a walled floor | spheres | Vyatkin & Dolgovesov 2024 |
//! | `bounce` | spheres dropped onto a floor from increasing heights, restitution `e = 0.8` | spheres | Newton's impact law (Moreau 1988) |
//! | `cradle` | Newton's cradle: a row of equal spheres, the first moving into the others, `e = 1`, no gravity | spheres | Newton's impact law (Moreau 1988) |
//! | `ellipsoid-fill` | `n x 10 x n` spheroids (aspect ratio [`SceneSpec::aspect`], default 2), random orientations, falling into a closed box | `n` (10: 1000 ellipsoids) | Vyatkin & Dolgovesov (functionally defined objects), on TEST_FILL's lattice |
//! | `ellipsoid-pile` | polydisperse spheroids poured onto a smooth walled floor, forming a heap | ellipsoids | as `pile`, with ellipsoids |
//! | `stack` | a vertical column of equal spheres at rest on a floor | spheres | the resting case (Siconos issue 214's cube at rest, with spheres) |
//! | `slide` | balls set down on a floor with speed `v0` and no spin, sliding until they roll | balls | the sliding ball (`t* = 2 v0 / (7 mu g)`, then `5/7 v0`) |
//! | `mass-ratio` | a 1 kg sphere between two heavy ones in a column on a floor | the mass ratio | badly conditioned contact (issue 33; ContactBench's mass-ratio tests, Le Lidec et al. 2024) |
//! | `chain` | a chain of spheres linked by ball joints, pinned at one end, released horizontally: it swings down onto the floor | links | bilateral rows (issue 33; [`crate::joints`]) |
//! | `hinge-chain` | the `chain` on hinges (axes tilted 0.5 rad from `z` towards `y`), swinging in the tilted plane onto the floor | links | hinge joints: two bilateral blocks each (issue 33; [`crate::joints`]) |
//! | `bridge` | a sagging row of spheres linked by ball joints, pinned at both ends, heavy spheres dropped on it | links | bilateral rows under load (issue 33) |
//!
//! Randomness comes only from [`SplitMix64`] seeded with the scene seed, so a scene and every
//! instance generated from it are the same on every platform.

use super::bodies::{Body, Plane};
use super::rng::SplitMix64;
use super::stepper::{SimParams, Simulation, World};
use super::{check_non_negative, check_positive, invalid, GranularError, Result};
use nalgebra::Vector3;
use std::collections::BTreeMap;

mod ellipsoids;
mod jointed;
mod simple;
pub use ellipsoids::{random_rotation, spheroid_axes, DEFAULT_ASPECT, DEFAULT_ROLLING_FRICTION};
pub use jointed::{BridgeParams, ChainParams, HingeChainParams};
pub use simple::{MassRatioParams, SlideParams, StackParams};

/// The built-in scenes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneKind {
    /// Melanz et al. 2017 TEST_FILL ([`FillParams`]).
    Fill,
    /// A heap poured onto a floor ([`PileParams`]).
    Pile,
    /// A cannonball pyramid ([`PyramidParams`]).
    Pyramid,
    /// Spheres through an inclined tube ([`TubeParams`]).
    Tube,
    /// Spheres bouncing on a floor ([`BounceParams`]).
    Bounce,
    /// Newton's cradle ([`CradleParams`]).
    Cradle,
    /// Ellipsoids falling into a box ([`FillParams::ellipsoids`]).
    EllipsoidFill,
    /// A heap of ellipsoids ([`PileParams::ellipsoids`]).
    EllipsoidPile,
    /// A column of spheres at rest on a floor ([`StackParams`]).
    Stack,
    /// Balls sliding on a floor until they roll ([`SlideParams`]).
    Slide,
    /// A light sphere crushed between heavy ones ([`MassRatioParams`]).
    MassRatio,
    /// A chain of spheres on ball joints swinging onto a floor ([`ChainParams`]).
    Chain,
    /// A jointed bridge under load ([`BridgeParams`]).
    Bridge,
    /// A chain of spheres on hinges swinging in a tilted plane ([`HingeChainParams`]).
    HingeChain,
}

impl SceneKind {
    /// Every 3-D scene, in the order `--scene` lists them ([`crate::scene_names`]).
    pub const ALL: [SceneKind; 14] = [
        Self::Fill,
        Self::Pile,
        Self::Pyramid,
        Self::Tube,
        Self::Bounce,
        Self::Cradle,
        Self::EllipsoidFill,
        Self::EllipsoidPile,
        Self::Stack,
        Self::Slide,
        Self::MassRatio,
        Self::Chain,
        Self::Bridge,
        Self::HingeChain,
    ];

    /// The scene named `s` (one of [`Self::ALL`]'s names). Errors:
    /// [`GranularError::UnknownScene`] (its message lists every scene).
    pub fn parse(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| GranularError::UnknownScene(s.to_string()))
    }

    /// The scene's name: the one place it is written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fill => "fill",
            Self::Pile => "pile",
            Self::Pyramid => "pyramid",
            Self::Tube => "tube",
            Self::Bounce => "bounce",
            Self::Cradle => "cradle",
            Self::EllipsoidFill => "ellipsoid-fill",
            Self::EllipsoidPile => "ellipsoid-pile",
            Self::Stack => "stack",
            Self::Slide => "slide",
            Self::MassRatio => "mass-ratio",
            Self::Chain => "chain",
            Self::Bridge => "bridge",
            Self::HingeChain => "hinge-chain",
        }
    }
}

/// A scene by kind, size and seed with default parameters (what the CLI builds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneSpec {
    /// Which scene.
    pub kind: SceneKind,
    /// Its size (see the table in the module documentation), `>= 1`.
    pub size: usize,
    /// Random seed.
    pub seed: u64,
    /// Frictionless mode (LCP on normals).
    pub frictionless: bool,
    /// Aspect ratio `a / b` of the spheroids of the ellipsoid scenes ([`spheroid_axes`],
    /// `[0.1, 10]`); `None`: [`DEFAULT_ASPECT`]. Must be `None` for the sphere scenes.
    pub aspect: Option<f64>,
}

impl SceneSpec {
    /// A scene of `kind` and `size` with seed `seed`, frictional, default aspect ratio.
    pub fn new(kind: SceneKind, size: usize, seed: u64) -> Self {
        Self {
            kind,
            size,
            seed,
            frictionless: false,
            aspect: None,
        }
    }

    /// Build the scene with the default parameters of its kind and `size`.
    /// Errors: [`GranularError::InvalidParameter`] for `size = 0` (or too large to index), an
    /// aspect ratio outside `[0.1, 10]`, or an aspect ratio given for a sphere scene.
    pub fn build(&self) -> Result<Scene> {
        let ellipsoids = matches!(
            self.kind,
            SceneKind::EllipsoidFill | SceneKind::EllipsoidPile
        );
        if let (Some(a), false) = (self.aspect, ellipsoids) {
            return Err(invalid(
                "aspect",
                a,
                "applies to the ellipsoid scenes only (ellipsoid-fill, ellipsoid-pile)",
            ));
        }
        let aspect = self.aspect.unwrap_or(DEFAULT_ASPECT);
        // the scene's parameters with its size field set to `size`, the rest their defaults
        macro_rules! sized {
            ($params:ident . $field:ident) => {
                $params {
                    $field: self.size,
                    ..Default::default()
                }
            };
            ($params:ident . $field:ident, $defaults:expr) => {
                $params {
                    $field: self.size,
                    ..$defaults
                }
            };
        }
        let (seed, frictionless) = (self.seed, self.frictionless);
        match self.kind {
            SceneKind::Fill => sized!(FillParams.n).build(seed, frictionless),
            SceneKind::Pile => sized!(PileParams.count).build(seed, frictionless),
            SceneKind::Pyramid => sized!(PyramidParams.layers).build(seed, frictionless),
            SceneKind::Tube => sized!(TubeParams.count).build(seed, frictionless),
            SceneKind::Bounce => sized!(BounceParams.count).build(seed, frictionless),
            SceneKind::Cradle => sized!(CradleParams.count).build(seed, frictionless),
            SceneKind::Stack => sized!(StackParams.count).build(seed, frictionless),
            SceneKind::Slide => sized!(SlideParams.count).build(seed, frictionless),
            SceneKind::MassRatio => sized!(MassRatioParams.ratio).build(seed, frictionless),
            SceneKind::Chain => sized!(ChainParams.links).build(seed, frictionless),
            SceneKind::Bridge => sized!(BridgeParams.links).build(seed, frictionless),
            SceneKind::HingeChain => HingeChainParams {
                chain: sized!(ChainParams.links),
                ..Default::default()
            }
            .build(seed, frictionless),
            SceneKind::EllipsoidFill => {
                sized!(FillParams.n, FillParams::ellipsoids(aspect)).build(seed, frictionless)
            }
            SceneKind::EllipsoidPile => {
                sized!(PileParams.count, PileParams::ellipsoids(aspect)).build(seed, frictionless)
            }
        }
    }
}

/// A built scene: the world, a label for instance names, and the parameters to record.
#[derive(Clone, Debug)]
pub struct Scene {
    /// Bodies, planes, parameters.
    pub world: World,
    /// Label, e.g. `fill-10`.
    pub label: String,
    /// Scene parameters as text (recorded in every instance's provenance).
    pub parameters: BTreeMap<String, String>,
    /// The seed it was built from.
    pub seed: u64,
    /// Ball joints between its bodies ([`crate::joints`]; empty but for `chain` and `bridge`).
    pub joints: Vec<crate::joints::BallJoint>,
    /// Hinge joints between its bodies ([`crate::joints`], "Hinge joints"; empty but for
    /// `hinge-chain`).
    pub hinges: Vec<crate::joints::HingeJoint>,
}

impl Scene {
    /// Start a simulation of this scene, with its joints. Errors as [`Simulation::new`],
    /// [`Simulation::with_joints`] and [`Simulation::with_hinges`].
    pub fn into_simulation(self) -> Result<Simulation> {
        Simulation::new(self.world, self.label, self.parameters, Some(self.seed))?
            .with_joints(self.joints)?
            .with_hinges(self.hinges)
    }
}

fn check_size(name: &'static str, n: usize, max: usize) -> Result<()> {
    if n == 0 || n > max {
        Err(invalid(
            name,
            n,
            "must be >= 1 and small enough to index (see docs)",
        ))
    } else {
        Ok(())
    }
}

/// The scene `kind` of size `size` built from `seed`, labelled `{kind}-{size}`, on `bodies`,
/// `planes` and `params`; its recorded parameters are `scene` (`kind`), the pairs `kv`, and the
/// parameters' `frictionless` and `envelope_min`.
fn built(
    kind: &str,
    size: usize,
    seed: u64,
    kv: &[(&str, String)],
    bodies: Vec<Body>,
    planes: Vec<Plane>,
    params: SimParams,
) -> Scene {
    let mut m = BTreeMap::new();
    m.insert("scene".to_string(), kind.to_string());
    for (k, v) in kv {
        m.insert((*k).to_string(), v.clone());
    }
    m.insert("frictionless".into(), params.frictionless.to_string());
    m.insert("envelope_min".into(), params.envelope.to_string());
    Scene {
        world: World {
            bodies,
            planes,
            params,
        },
        label: format!("{kind}-{size}"),
        parameters: m,
        seed,
        joints: Vec::new(),
        hinges: Vec::new(),
    }
}

/// Box of six planes `[x0, x1] x [y0, y1] x [z0, z1]` with normals pointing inwards.
fn closed_box(lo: Vector3<f64>, hi: Vector3<f64>) -> Result<Vec<Plane>> {
    Ok(vec![
        Plane::new(Vector3::y(), lo)?,
        Plane::new(-Vector3::y(), hi)?,
        Plane::new(Vector3::x(), lo)?,
        Plane::new(-Vector3::x(), hi)?,
        Plane::new(Vector3::z(), lo)?,
        Plane::new(-Vector3::z(), hi)?,
    ])
}

/// The parameters of a scene: time step `h` (s), gravity `(0, -g, 0)` (m/s^2), friction
/// `mu`, minimum envelope (m), frictional or not, the rest at their defaults (no restitution,
/// no rolling resistance), checked. Errors: [`SimParams::validate`].
fn scene_params(h: f64, g: f64, mu: f64, envelope: f64, frictionless: bool) -> Result<SimParams> {
    let params = SimParams {
        h,
        // 0 - g, not -g: no gravity is +0 (the cradle's `(0, 0, 0)`, recorded as such)
        gravity: Vector3::new(0.0, 0.0 - g, 0.0),
        mu,
        envelope,
        frictionless,
        ..Default::default()
    };
    params.validate()?;
    Ok(params)
}

/// The checks of a polydisperse scene (`pile`, `ellipsoid-pile`): `count` in `1..=2^26`,
/// `0 < r_min <= r_max` (m), `density > 0` (kg/m^3).
fn check_polydisperse(count: usize, r_min: f64, r_max: f64, density: f64) -> Result<()> {
    check_size("size", count, 1 << 26)?;
    check_positive("r_min", r_min)?;
    check_positive("r_max", r_max)?;
    if r_max < r_min {
        return Err(invalid("r_max", r_max, "must be >= r_min"));
    }
    check_positive("density", density)
}

/// Check the TEST_FILL lattice shared by `fill` and `ellipsoid-fill`: `n` and `layers` in
/// `1..=4096`, at most `2^26` bodies, positive `bound` (the bodies' bounding radius) and
/// `spacing`, non-negative `jitter` with `bound + jitter <= spacing / 2` (no overlap).
fn check_lattice(n: usize, layers: usize, bound: f64, spacing: f64, jitter: f64) -> Result<()> {
    check_size("size", n, 4096)?;
    check_size("layers", layers, 4096)?;
    if n * n * layers > 1 << 26 {
        return Err(invalid(
            "size",
            n,
            "n x layers x n must be at most 2^26 bodies",
        ));
    }
    check_positive("radius", bound)?;
    check_positive("spacing", spacing)?;
    check_non_negative("jitter", jitter)?;
    if bound + jitter > 0.5 * spacing + 1e-12 {
        return Err(invalid(
            "jitter",
            jitter,
            "radius + jitter must not exceed spacing / 2",
        ));
    }
    Ok(())
}

/// The centres of the TEST_FILL lattice in scene order (layer `j`, then `i` along `x`, then
/// `k` along `z`): `((i + 1/2) s + jx, (j + 1/2) s, (k + 1/2) s + jz)` with the jitters drawn
/// from `rng` (`x` first) just before `site` is called with the centre and `rng` (which
/// may draw more, e.g. an orientation).
fn lattice_sites(
    n: usize,
    layers: usize,
    s: f64,
    jitter: f64,
    rng: &mut SplitMix64,
    mut site: impl FnMut(Vector3<f64>, &mut SplitMix64) -> Result<()>,
) -> Result<()> {
    for j in 0..layers {
        for i in 0..n {
            for k in 0..n {
                let x = (i as f64 + 0.5) * s + rng.uniform(-jitter, jitter);
                let z = (k as f64 + 0.5) * s + rng.uniform(-jitter, jitter);
                site(Vector3::new(x, (j as f64 + 0.5) * s, z), rng)?;
            }
        }
    }
    Ok(())
}

/// The closed box `[0, n s] x [0, (layers + 1) s] x [0, n s]` of the TEST_FILL lattice.
fn lattice_box(n: usize, layers: usize, s: f64) -> Result<Vec<Plane>> {
    let w = n as f64 * s;
    closed_box(
        Vector3::zeros(),
        Vector3::new(w, (layers + 1) as f64 * s, w),
    )
}

/// The poured column of `pile` and `ellipsoid-pile`: `count` bodies of bounding radius at most
/// `r_max` on a jittered lattice of spacing `2.2 r_max` in a column of `k x k` cross-section,
/// `k = ceil(cbrt(count) / 1.5)`, centred on the `y` axis.
struct Column {
    k: usize,
    s: f64,
    jitter: f64,
    width: f64,
}

impl Column {
    fn new(count: usize, r_max: f64) -> Self {
        let k = ((count as f64).cbrt() / 1.5).ceil().max(1.0) as usize;
        let s = 2.0 * r_max * 1.1;
        Self {
            k,
            s,
            jitter: 0.04 * r_max,
            width: k as f64 * s,
        }
    }

    /// The centre of body `idx`, its lowest layer at height `y0` (jitters drawn from `rng`,
    /// `x` first).
    fn site(&self, idx: usize, y0: f64, rng: &mut SplitMix64) -> Vector3<f64> {
        let k = self.k;
        let (layer, rest) = (idx / (k * k), idx % (k * k));
        let (i, j) = (rest / k, rest % k);
        Vector3::new(
            (i as f64 + 0.5) * self.s - 0.5 * self.width + rng.uniform(-self.jitter, self.jitter),
            y0 + layer as f64 * self.s,
            (j as f64 + 0.5) * self.s - 0.5 * self.width + rng.uniform(-self.jitter, self.jitter),
        )
    }

    /// Height of the closed box's lid for `count` bodies above `y0` (m).
    fn top(&self, count: usize, y0: f64, r_max: f64) -> f64 {
        y0 + r_max * 4.0 + (count / (self.k * self.k) + 1) as f64 * self.s + 1.0
    }
}

/// The grains of the `fill` and `pile` families: spheres, or spheroids `(a, b, b)` of aspect
/// ratio `a / b` with their largest semi-axis the bounding radius ([`spheroid_axes`]) and a
/// uniformly random orientation ([`random_rotation`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Grains {
    /// Spheres (`fill`, `pile`).
    Spheres,
    /// Spheroids (`ellipsoid-fill`, `ellipsoid-pile`).
    Spheroids {
        /// Aspect ratio `a / b`, in `[0.1, 10]`; default [`DEFAULT_ASPECT`].
        aspect: f64,
        /// Rolling resistance `mu_r` ([`SimParams::rolling_friction`]); default
        /// [`DEFAULT_ROLLING_FRICTION`] (without it rigid ellipsoids rock and roll for ever).
        rolling_friction: f64,
    },
}

/// The mass of a grain: given, or from a density (kg/m^3) and the grain's volume.
#[derive(Clone, Copy, Debug)]
enum Mass {
    Given(f64),
    Density(f64),
}

impl Grains {
    /// Spheroids of aspect ratio `aspect` with rolling resistance
    /// [`DEFAULT_ROLLING_FRICTION`].
    pub fn spheroids(aspect: f64) -> Self {
        Grains::Spheroids {
            aspect,
            rolling_friction: DEFAULT_ROLLING_FRICTION,
        }
    }

    /// The scene parameters for these grains ([`scene_params`] with `(h, g, mu, envelope)`,
    /// and the spheroids' rolling resistance), after checking the aspect ratio against
    /// `bound`, the largest bounding radius. Errors: an aspect ratio outside `[0.1, 10]`,
    /// those of [`SimParams::validate`].
    fn params(self, bound: f64, hgme: [f64; 4], frictionless: bool) -> Result<SimParams> {
        let [h, g, mu, envelope] = hgme;
        match self {
            Grains::Spheres => scene_params(h, g, mu, envelope, frictionless),
            Grains::Spheroids {
                aspect,
                rolling_friction,
            } => {
                spheroid_axes(bound, aspect)?;
                let mut p = scene_params(h, g, mu, envelope, frictionless)?;
                p.rolling_friction = rolling_friction;
                p.validate()?;
                Ok(p)
            }
        }
    }

    /// A grain at `centre` of bounding radius `r`: a sphere, or a spheroid whose orientation
    /// is drawn from `rng`.
    fn body(self, centre: Vector3<f64>, r: f64, mass: Mass, rng: &mut SplitMix64) -> Result<Body> {
        const PI: f64 = std::f64::consts::PI;
        match self {
            Grains::Spheres => {
                let m = match mass {
                    Mass::Given(m) => m,
                    Mass::Density(rho) => rho * 4.0 / 3.0 * PI * r * r * r,
                };
                Body::sphere(centre, r, m)
            }
            Grains::Spheroids { aspect, .. } => {
                let axes = spheroid_axes(r, aspect)?;
                let m = match mass {
                    Mass::Given(m) => m,
                    Mass::Density(rho) => rho * (4.0 / 3.0 * PI * axes.x * axes.y * axes.z),
                };
                let rot = random_rotation(rng);
                Body::ellipsoid(centre, rot, axes, m)
            }
        }
    }

    /// The scene's name for a family (`fill` or `pile`): the family's, or with `ellipsoid-`
    /// before it.
    fn scene(self, family: &'static str) -> &'static str {
        match (self, family) {
            (Grains::Spheres, _) => family,
            (Grains::Spheroids { .. }, "fill") => "ellipsoid-fill",
            (Grains::Spheroids { .. }, _) => "ellipsoid-pile",
        }
    }
}

/// Melanz et al. 2017 (CMAME 320) TEST_FILL (`fill`): `n x layers x n` grains of (bounding)
/// radius `radius` on a lattice of spacing `spacing`, jittered by `+-jitter` in `x` and `z`,
/// falling into the closed box `[0, n s] x [0, (layers + 1) s] x [0, n s]`. With
/// [`Grains::Spheroids`] it is `ellipsoid-fill` (the seed experiment's 1000 ellipsoids for
/// size 10, Vyatkin & Dolgovesov, functionally defined objects; [`FillParams::ellipsoids`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FillParams {
    /// Grains per side in `x` and `z` (size), `>= 1`; default 10.
    pub n: usize,
    /// Layers in `y`; default 10.
    pub layers: usize,
    /// Radius, the bounding radius of a spheroid (its largest semi-axis) (m); default 0.4.
    pub radius: f64,
    /// Lattice spacing (m); default 1.
    pub spacing: f64,
    /// Uniform jitter amplitude in `x` and `z` (m); default 0.1.
    pub jitter: f64,
    /// Mass of each grain (kg); default 1.
    pub mass: f64,
    /// Friction coefficient; default 0.25.
    pub mu: f64,
    /// Gravity magnitude (m/s^2); default 9.81.
    pub g: f64,
    /// Time step (s); default 1e-2.
    pub h: f64,
    /// Minimum envelope (m); default 0.01 (2.5% of the radius).
    pub envelope: f64,
    /// Whether the spheres rotate (6 DOF, default `true`); `false` gives DVIDE's 3-DOF
    /// spheres (translation only, [`Body::without_rotation`]), as TEST_FILL in Melanz et al.
    /// 2017 (recorded as the scene parameter `dof = 3`). Spheroids always rotate.
    pub rotation: bool,
    /// The grains; default spheres.
    pub grains: Grains,
}

impl Default for FillParams {
    fn default() -> Self {
        Self {
            n: 10,
            layers: 10,
            radius: 0.4,
            spacing: 1.0,
            jitter: 0.1,
            mass: 1.0,
            mu: 0.25,
            g: 9.81,
            h: 1e-2,
            envelope: 0.01,
            rotation: true,
            grains: Grains::Spheres,
        }
    }
}

impl FillParams {
    /// `ellipsoid-fill`'s defaults: spheroids of aspect ratio `aspect` with rolling resistance
    /// [`DEFAULT_ROLLING_FRICTION`], the rest as [`FillParams::default`].
    pub fn ellipsoids(aspect: f64) -> Self {
        Self {
            grains: Grains::spheroids(aspect),
            ..Default::default()
        }
    }

    /// Build the scene. Errors: [`GranularError::InvalidParameter`] for `n = 0`,
    /// `layers = 0`, more than `2^26` bodies, a non-positive radius, spacing, mass or `h`,
    /// `mu < 0`, an aspect ratio outside `[0.1, 10]`, or a jitter that could make neighbours
    /// or walls overlap (`radius + jitter > spacing / 2`).
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_lattice(self.n, self.layers, self.radius, self.spacing, self.jitter)?;
        check_positive("mass", self.mass)?;
        check_non_negative("g", self.g)?;
        let hgme = [self.h, self.g, self.mu, self.envelope];
        let params = self.grains.params(self.radius, hgme, frictionless)?;
        let spheres = self.grains == Grains::Spheres;
        let mut rng = SplitMix64::new(seed);
        let s = self.spacing;
        let mut bodies = Vec::with_capacity(self.n * self.n * self.layers);
        lattice_sites(self.n, self.layers, s, self.jitter, &mut rng, |c, rng| {
            let b = self
                .grains
                .body(c, self.radius, Mass::Given(self.mass), rng)?;
            bodies.push(if self.rotation || !spheres {
                b
            } else {
                b.without_rotation()
            });
            Ok(())
        })?;
        let planes = lattice_box(self.n, self.layers, s)?;
        let mut kv = vec![
            ("size", self.n.to_string()),
            ("layers", self.layers.to_string()),
            ("spacing", self.spacing.to_string()),
            ("jitter", self.jitter.to_string()),
            ("mass", self.mass.to_string()),
        ];
        match self.grains {
            Grains::Spheres => kv.extend([
                ("radius", self.radius.to_string()),
                ("source", "Melanz et al. 2017 TEST_FILL".to_string()),
            ]),
            Grains::Spheroids { aspect, .. } => {
                let axes = spheroid_axes(self.radius, aspect)?;
                kv.extend([
                    ("aspect", aspect.to_string()),
                    ("semi_axes", format!("{} {} {}", axes.x, axes.y, axes.z)),
                    (
                        "source",
                        "Vyatkin & Dolgovesov: 1000 ellipsoids in a box (TEST_FILL lattice)"
                            .to_string(),
                    ),
                ])
            }
        }
        let scene = self.grains.scene("fill");
        let three_dof = spheres && !self.rotation;
        if three_dof {
            kv.push(("dof", "3".to_string()));
        }
        let mut out = built(scene, self.n, seed, &kv, bodies, planes, params);
        if three_dof {
            out.label = format!("fill3dof-{}", self.n);
        }
        Ok(out)
    }
}

/// A heap (`pile`): `count` grains with (bounding) radii uniform in `[r_min, r_max]` (density
/// `density`) start on a jittered lattice in a column of `k x k` cross-section
/// (`k = ceil(cbrt(count) / 1.5)`) above a floor and fall; the floor is walled at `+-width / 2`
/// in `x` and `z`. Spheres have no rolling resistance, so on a smooth floor they roll away and
/// no heap forms: by default the floor is rough, a layer of touching fixed spheres of radius
/// `r_min` (square lattice, holes smaller than any grain), on which the poured spheres come to
/// rest as a heap. With [`Grains::Spheroids`] on a smooth floor it is `ellipsoid-pile`
/// (ellipsoids, unlike spheres, do not roll away; [`PileParams::ellipsoids`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PileParams {
    /// Number of grains (size), `>= 1`; default 1000.
    pub count: usize,
    /// Smallest (bounding) radius (m); default 0.05.
    pub r_min: f64,
    /// Largest (bounding) radius (m); default 0.1.
    pub r_max: f64,
    /// Density (kg/m^3); default 2500 (glass).
    pub density: f64,
    /// Friction coefficient; default 0.5.
    pub mu: f64,
    /// Time step (s); default 5e-3.
    pub h: f64,
    /// Minimum envelope (m); default 2e-3.
    pub envelope: f64,
    /// Width of the walled floor (m); default: 4 times the column width.
    pub width: Option<f64>,
    /// Rough floor of fixed spheres (default true); `false`: a smooth plane.
    pub rough_floor: bool,
    /// The grains; default spheres.
    pub grains: Grains,
}

impl Default for PileParams {
    fn default() -> Self {
        Self {
            count: 1000,
            r_min: 0.05,
            r_max: 0.1,
            density: 2500.0,
            mu: 0.5,
            h: 5e-3,
            envelope: 2e-3,
            width: None,
            rough_floor: true,
            grains: Grains::Spheres,
        }
    }
}

impl PileParams {
    /// `ellipsoid-pile`'s defaults: 500 spheroids of aspect ratio `aspect` with rolling
    /// resistance [`DEFAULT_ROLLING_FRICTION`] on a smooth floor, the rest as
    /// [`PileParams::default`].
    pub fn ellipsoids(aspect: f64) -> Self {
        Self {
            count: 500,
            rough_floor: false,
            grains: Grains::spheroids(aspect),
            ..Default::default()
        }
    }

    /// Build the scene. Errors: [`GranularError::InvalidParameter`] for `count = 0`,
    /// `r_min <= 0`, `r_max < r_min`, a non-positive density, width or `h`, `mu < 0`, a width
    /// below the column's, an aspect ratio outside `[0.1, 10]`.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_polydisperse(self.count, self.r_min, self.r_max, self.density)?;
        let hgme = [self.h, 9.81, self.mu, self.envelope];
        let params = self.grains.params(self.r_max, hgme, frictionless)?;
        let mut rng = SplitMix64::new(seed);
        let column = Column::new(self.count, self.r_max);
        let width = self.width.unwrap_or(4.0 * column.width);
        check_positive("width", width)?;
        if width < column.width {
            return Err(invalid("width", width, "must be at least the column width"));
        }
        let mut bodies = Vec::with_capacity(self.count);
        let y0 = if self.rough_floor {
            2.0 * self.r_min
        } else {
            0.0
        };
        for idx in 0..self.count {
            let r = rng.uniform(self.r_min, self.r_max);
            let p = column.site(idx, y0 + self.r_max * 1.05, &mut rng);
            let mass = Mass::Density(self.density);
            bodies.push(self.grains.body(p, r, mass, &mut rng)?);
        }
        if self.rough_floor {
            let d = 2.0 * self.r_min;
            let m = (width / d).floor() as usize;
            if m > 4096 {
                return Err(invalid(
                    "width",
                    width,
                    "rough floor too large (> 4096^2 spheres)",
                ));
            }
            let off = -0.5 * (m as f64 - 1.0) * d;
            for i in 0..m {
                for j in 0..m {
                    let p = Vector3::new(off + i as f64 * d, self.r_min, off + j as f64 * d);
                    bodies.push(Body::fixed_sphere(p, self.r_min)?);
                }
            }
        }
        let top = column.top(self.count, y0, self.r_max);
        let planes = closed_box(
            Vector3::new(-0.5 * width, 0.0, -0.5 * width),
            Vector3::new(0.5 * width, top, 0.5 * width),
        )?;
        let mut kv = vec![
            ("size", self.count.to_string()),
            ("r_min", self.r_min.to_string()),
            ("r_max", self.r_max.to_string()),
            ("density", self.density.to_string()),
            ("column", format!("{0}x{0}", column.k)),
            ("width", width.to_string()),
        ];
        match self.grains {
            Grains::Spheres => kv.push(("rough_floor", self.rough_floor.to_string())),
            Grains::Spheroids { aspect, .. } => kv.push(("aspect", aspect.to_string())),
        }
        let scene = self.grains.scene("pile");
        Ok(built(scene, self.count, seed, &kv, bodies, planes, params))
    }
}

/// A cannonball pyramid: layer `k = 0 .. L-1` holds `(L - k)^2` touching spheres of radius
/// `radius` at `x = r (2 i + k)`, `z = r (2 j + k)`, `y = r + k sqrt(2) r`; the bottom layer is
/// fixed. `sum m^2` spheres (3311 for `L = 21`). The seed is unused (no randomness).
#[derive(Clone, Debug, PartialEq)]
pub struct PyramidParams {
    /// Layers `L` (size), `>= 1`; default 21.
    pub layers: usize,
    /// Radius (m); default 0.1.
    pub radius: f64,
    /// Mass of each sphere (kg); default 1.
    pub mass: f64,
    /// Friction coefficient; default 0.5.
    pub mu: f64,
    /// Time step (s); default 5e-3.
    pub h: f64,
    /// Minimum envelope (m); default 1e-3.
    pub envelope: f64,
}

impl Default for PyramidParams {
    fn default() -> Self {
        Self {
            layers: 21,
            radius: 0.1,
            mass: 1.0,
            mu: 0.5,
            h: 5e-3,
            envelope: 1e-3,
        }
    }
}

impl PyramidParams {
    /// Build the scene. Errors: [`GranularError::InvalidParameter`] for `layers = 0`, a
    /// non-positive radius, mass or `h`, `mu < 0`.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_size("size", self.layers, 1024)?;
        check_positive("radius", self.radius)?;
        check_positive("mass", self.mass)?;
        let params = scene_params(self.h, 9.81, self.mu, self.envelope, frictionless)?;
        let r = self.radius;
        let l = self.layers;
        let mut bodies = Vec::new();
        for k in 0..l {
            let m = l - k;
            for i in 0..m {
                for j in 0..m {
                    let p = Vector3::new(
                        r * (2 * i + k) as f64,
                        r + k as f64 * std::f64::consts::SQRT_2 * r,
                        r * (2 * j + k) as f64,
                    );
                    bodies.push(if k == 0 {
                        Body::fixed_sphere(p, r)?
                    } else {
                        Body::sphere(p, r, self.mass)?
                    });
                }
            }
        }
        let kv = [
            ("size", l.to_string()),
            ("radius", r.to_string()),
            ("mass", self.mass.to_string()),
            ("fixed", "bottom layer".to_string()),
        ];
        Ok(built("pyramid", l, seed, &kv, bodies, Vec::new(), params))
    }
}

/// Seed `004_*.txt`'s experiment with spheres: `count` spheres of radius `radius` start on a
/// jittered lattice (9 per cross-section) inside the closed upper end of a tube inclined by
/// `angle_deg` below the horizontal, slide and roll down it, and pour onto a floor walled in
/// `x` and `z` (the walls stay clear of the tube).
///
/// **Tube geometry.** The tube wall is a lattice of fixed spheres of radius `radius` on the
/// cylinder of radius `tube_radius + radius` (rings every `1.6 radius` along the axis, `1.6
/// radius` apart around it), and its upper end is closed by a disc of fixed spheres. Holes in
/// that lattice are smaller than a moving sphere, so nothing escapes; the inner surface is
/// bumpy at the scale of `0.3 radius`, like a real tube of beads. Fixed spheres (not planes)
/// keep the tube finite and exercise sphere-fixed sphere contacts; they add no unknowns.
/// The tube length grows with `count` so the spheres fill at most its upper 2/3; its lower end
/// is 0.5 m above the floor.
#[derive(Clone, Debug, PartialEq)]
pub struct TubeParams {
    /// Number of spheres (size), `>= 1`; default 200.
    pub count: usize,
    /// Radius of the moving and of the wall spheres (m); default 0.05.
    pub radius: f64,
    /// Inner radius of the tube (m); default 0.25.
    pub tube_radius: f64,
    /// Inclination below the horizontal (degrees, in `(0, 90)`); default 30.
    pub angle_deg: f64,
    /// Density (kg/m^3); default 2500.
    pub density: f64,
    /// Friction coefficient; default 0.3.
    pub mu: f64,
    /// Time step (s); default 5e-3.
    pub h: f64,
    /// Minimum envelope (m); default 1e-3.
    pub envelope: f64,
}

impl Default for TubeParams {
    fn default() -> Self {
        Self {
            count: 200,
            radius: 0.05,
            tube_radius: 0.25,
            angle_deg: 30.0,
            density: 2500.0,
            mu: 0.3,
            h: 5e-3,
            envelope: 1e-3,
        }
    }
}

impl TubeParams {
    /// Build the scene. Errors: [`GranularError::InvalidParameter`] for `count = 0`, a
    /// non-positive radius, density or `h`, `mu < 0`, an angle outside `(0, 90)`, or a tube
    /// too narrow for the 3 x 3 lattice (`tube_radius < 4.2 radius`).
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_size("size", self.count, 1 << 24)?;
        check_positive("radius", self.radius)?;
        check_positive("density", self.density)?;
        if !(self.angle_deg > 0.0 && self.angle_deg < 90.0) {
            return Err(invalid("angle_deg", self.angle_deg, "must be in (0, 90)"));
        }
        if self.tube_radius.is_nan() || self.tube_radius < 4.2 * self.radius {
            return Err(invalid(
                "tube_radius",
                self.tube_radius,
                "must be >= 4.2 radius",
            ));
        }
        let params = scene_params(self.h, 9.81, self.mu, self.envelope, frictionless)?;
        let mut rng = SplitMix64::new(seed);
        let r = self.radius;
        let rt = self.tube_radius;
        let th = self.angle_deg.to_radians();
        let axis = Vector3::new(th.cos(), -th.sin(), 0.0);
        // e1, e2: unit vectors perpendicular to the axis
        let e1 = Vector3::new(th.sin(), th.cos(), 0.0);
        let e2 = Vector3::z();
        let slice = 2.2 * r;
        let slices = self.count.div_ceil(9);
        let fill_len = 2.0 * r + slices as f64 * slice;
        let len = (1.5 * fill_len).max(2.0);
        let top = Vector3::new(0.0, 0.5 + len * th.sin(), 0.0);
        let m = self.density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let mut bodies = Vec::new();
        // moving spheres: 3 x 3 per slice, from the cap downwards
        let jitter = 0.04 * r;
        for idx in 0..self.count {
            let (sl, rest) = (idx / 9, idx % 9);
            let (a, b) = ((rest / 3) as f64 - 1.0, (rest % 3) as f64 - 1.0);
            let s = 2.0 * r + (sl as f64 + 0.5) * slice;
            let p = top
                + s * axis
                + (a * slice + rng.uniform(-jitter, jitter)) * e1
                + (b * slice + rng.uniform(-jitter, jitter)) * e2;
            bodies.push(Body::sphere(p, r, m)?);
        }
        // wall: rings of fixed spheres
        let rw = rt + r;
        let ds = 1.6 * r;
        let per_ring = ((2.0 * std::f64::consts::PI * rw) / ds).ceil() as usize;
        let rings = (len / ds).ceil() as usize + 1;
        for ring in 0..rings {
            let s = ring as f64 * ds;
            let phase = if ring % 2 == 0 { 0.0 } else { 0.5 };
            for q in 0..per_ring {
                let phi = 2.0 * std::f64::consts::PI * (q as f64 + phase) / per_ring as f64;
                let p = top + s * axis + rw * (phi.cos() * e1 + phi.sin() * e2);
                bodies.push(Body::fixed_sphere(p, r)?);
            }
        }
        // cap: a disc of fixed spheres one radius behind the upper end
        let cap_c = top - r * axis;
        let nq = (rw / ds).ceil() as i64;
        for a in -nq..=nq {
            for b in -nq..=nq {
                let (x, y) = (a as f64 * ds, b as f64 * ds);
                if x * x + y * y <= rw * rw {
                    bodies.push(Body::fixed_sphere(cap_c + x * e1 + y * e2, r)?);
                }
            }
        }
        let low = top + len * axis;
        let planes = vec![
            Plane::new(Vector3::y(), Vector3::zeros())?,
            Plane::new(-Vector3::x(), Vector3::new(low.x + 2.5, 0.0, 0.0))?,
            Plane::new(Vector3::x(), Vector3::new(-rw - 0.5, 0.0, 0.0))?,
            Plane::new(Vector3::z(), Vector3::new(0.0, 0.0, -rw - 1.5))?,
            Plane::new(-Vector3::z(), Vector3::new(0.0, 0.0, rw + 1.5))?,
        ];
        let kv = [
            ("size", self.count.to_string()),
            ("radius", r.to_string()),
            ("tube_radius", rt.to_string()),
            ("tube_length", len.to_string()),
            ("angle_deg", self.angle_deg.to_string()),
            ("density", self.density.to_string()),
            (
                "tube_geometry",
                "fixed spheres on the cylinder, closed upper end".to_string(),
            ),
            ("source", "Vyatkin & Dolgovesov 2024, spheres".to_string()),
        ];
        Ok(built("tube", self.count, seed, &kv, bodies, planes, params))
    }
}

/// Spheres bouncing on the floor `y = 0` (Newton's impact law, [`SimParams::restitution`]):
/// sphere `i = 0 .. count-1` of radius `radius` at `x = i spacing` is dropped from rest with its
/// lowest point `height (i + 1) / count` above the floor, so it rebounds to `e^2` of that
/// height, then `e^4`, ... (`granular/tests/it/restitution.rs`). The spheres do not touch each
/// other. The seed is unused (no randomness).
#[derive(Clone, Debug, PartialEq)]
pub struct BounceParams {
    /// Spheres (size), `>= 1`; default 1.
    pub count: usize,
    /// Radius (m); default 0.1.
    pub radius: f64,
    /// Mass of each sphere (kg); default 1.
    pub mass: f64,
    /// Drop height of the last sphere's lowest point (m); default 1.
    pub height: f64,
    /// Distance between neighbouring centres in `x` (m), `> 2 radius`; default 0.5.
    pub spacing: f64,
    /// Coefficient of restitution `e` in `[0, 1]`; default 0.8.
    pub restitution: f64,
    /// Friction coefficient; default 0.5 (a vertical drop has no tangential impulse).
    pub mu: f64,
    /// Time step (s); default 1e-3.
    pub h: f64,
    /// Minimum envelope (m); default 1e-3.
    pub envelope: f64,
}

impl Default for BounceParams {
    fn default() -> Self {
        Self {
            count: 1,
            radius: 0.1,
            mass: 1.0,
            height: 1.0,
            spacing: 0.5,
            restitution: 0.8,
            mu: 0.5,
            h: 1e-3,
            envelope: 1e-3,
        }
    }
}

impl BounceParams {
    /// Build the scene. Errors: [`GranularError::InvalidParameter`] for `count = 0`, a
    /// non-positive radius, mass, height or `h`, `spacing <= 2 radius`, `mu < 0`, a
    /// restitution outside `[0, 1]`.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        check_size("size", self.count, 1 << 20)?;
        check_positive("radius", self.radius)?;
        check_positive("mass", self.mass)?;
        check_positive("height", self.height)?;
        if !self.spacing.is_finite() || self.spacing <= 2.0 * self.radius {
            return Err(invalid(
                "spacing",
                self.spacing,
                "must be finite and > 2 radius",
            ));
        }
        let mut params = scene_params(self.h, 9.81, self.mu, self.envelope, frictionless)?;
        params.restitution = self.restitution;
        params.validate()?;
        let (r, n) = (self.radius, self.count);
        let bodies = (0..n)
            .map(|i| {
                let y = r + self.height * (i + 1) as f64 / n as f64;
                Body::sphere(Vector3::new(i as f64 * self.spacing, y, 0.0), r, self.mass)
            })
            .collect::<Result<Vec<_>>>()?;
        let kv = [
            ("size", n.to_string()),
            ("radius", r.to_string()),
            ("mass", self.mass.to_string()),
            ("height", self.height.to_string()),
        ];
        let planes = vec![Plane::new(Vector3::y(), Vector3::zeros())?];
        Ok(built("bounce", n, seed, &kv, bodies, planes, params))
    }
}

/// Newton's cradle: `count` equal spheres of radius `radius` in a row along `x`, `gap` apart
/// (surface to surface), no gravity, no planes; the first moves at `v0` into the others.
/// With `e = 1` and `gap >= h v0` the impacts are binary and sequential: the last sphere
/// leaves at `v0`, the others stay at rest (`granular/tests/it/restitution.rs`); with `gap = 0`
/// Moreau's law resolves the simultaneous impact of the touching row instead. The seed is
/// unused (no randomness).
#[derive(Clone, Debug, PartialEq)]
pub struct CradleParams {
    /// Spheres (size), `>= 2`; default 5.
    pub count: usize,
    /// Radius (m); default 0.1.
    pub radius: f64,
    /// Mass of each sphere (kg); default 1.
    pub mass: f64,
    /// Gap between neighbouring surfaces (m), `>= 0`; default 5e-3.
    pub gap: f64,
    /// Speed of the first sphere (m/s), `> 0`; default 1.
    pub v0: f64,
    /// Coefficient of restitution `e` in `[0, 1]`; default 1.
    pub restitution: f64,
    /// Friction coefficient; default 0 (the spheres meet head-on).
    pub mu: f64,
    /// Time step (s); default 1e-3.
    pub h: f64,
    /// Minimum envelope (m); default 1e-3.
    pub envelope: f64,
}

impl Default for CradleParams {
    fn default() -> Self {
        Self {
            count: 5,
            radius: 0.1,
            mass: 1.0,
            gap: 5e-3,
            v0: 1.0,
            restitution: 1.0,
            mu: 0.0,
            h: 1e-3,
            envelope: 1e-3,
        }
    }
}

impl CradleParams {
    /// Build the scene. Errors: [`GranularError::InvalidParameter`] for `count < 2`, a
    /// non-positive radius, mass, `v0` or `h`, `gap < 0`, `mu < 0`, a restitution outside
    /// `[0, 1]`.
    pub fn build(&self, seed: u64, frictionless: bool) -> Result<Scene> {
        if self.count < 2 {
            return Err(invalid(
                "size",
                self.count,
                "must be >= 2 (spheres in the row)",
            ));
        }
        check_size("size", self.count, 1 << 20)?;
        check_positive("radius", self.radius)?;
        check_positive("mass", self.mass)?;
        check_positive("v0", self.v0)?;
        check_non_negative("gap", self.gap)?;
        let mut params = scene_params(self.h, 0.0, self.mu, self.envelope, frictionless)?;
        params.restitution = self.restitution;
        params.validate()?;
        let (r, n) = (self.radius, self.count);
        let mut bodies = (0..n)
            .map(|i| {
                let x = i as f64 * (2.0 * r + self.gap);
                Body::sphere(Vector3::new(x, 0.0, 0.0), r, self.mass)
            })
            .collect::<Result<Vec<_>>>()?;
        bodies[0].vel = Vector3::new(self.v0, 0.0, 0.0);
        let kv = [
            ("size", n.to_string()),
            ("radius", r.to_string()),
            ("mass", self.mass.to_string()),
            ("gap", self.gap.to_string()),
            ("v0", self.v0.to_string()),
        ];
        Ok(built("cradle", n, seed, &kv, bodies, Vec::new(), params))
    }
}
