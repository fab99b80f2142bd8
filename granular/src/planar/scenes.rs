//! Planar scenes, deterministic from a seed ([`crate::rng::SplitMix64`]):
//!
//! - `disc-hopper` (size `n`): `n` polydisperse discs rained into a 2-D hopper, two inclined
//!   walls meeting at an orifice above a bin; granular flow through the orifice
//!   ([`DiscHopperParams`]);
//! - `beam-impact` (size `n`): a bonded beam of `n x 3` discs on a square lattice (normal bonds
//!   along rows, columns and both diagonals; bending springs along rows and columns) resting on
//!   two fixed supports, struck at mid-span by a heavy disc; bonds break near the impact
//!   ([`BeamImpactParams`]).
//!
//! Masses are areal: a disc of radius `R` has `m = rho pi R^2` with `rho` in kg/m^2 (a plate of
//! unit thickness in the third direction).

use super::bonds::BondSet;
use super::{Disc, PlanarParams, PlanarSimulation, Wall};
use crate::rng::SplitMix64;
use crate::{check_non_negative, check_positive, invalid, Result};
use nalgebra::Vector2;
use std::collections::BTreeMap;
use std::f64::consts::PI;

/// The planar scenes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanarSceneKind {
    /// `disc-hopper`: discs flowing through a hopper orifice.
    DiscHopper,
    /// `beam-impact`: a bonded beam struck by a disc, fracturing.
    BeamImpact,
}

impl PlanarSceneKind {
    /// Every planar scene.
    pub const ALL: [PlanarSceneKind; 2] =
        [PlanarSceneKind::DiscHopper, PlanarSceneKind::BeamImpact];

    /// The scene's name (`disc-hopper`, `beam-impact`).
    pub fn as_str(self) -> &'static str {
        match self {
            PlanarSceneKind::DiscHopper => "disc-hopper",
            PlanarSceneKind::BeamImpact => "beam-impact",
        }
    }

    /// The scene named `name`, `None` for another name (e.g. a 3-D scene).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The scene named `name`. Errors: [`crate::GranularError::InvalidParameter`] for an
    /// unknown name.
    pub fn parse(name: &str) -> Result<Self> {
        Self::from_name(name)
            .ok_or_else(|| invalid("planar scene", name, "must be disc-hopper or beam-impact"))
    }

    /// Build the scene of size `size` from `seed` with its default parameters, frictionless
    /// (`mu` ignored, LCP instances) when asked. Errors: those of
    /// [`DiscHopperParams::build`] and [`BeamImpactParams::build`].
    pub fn build(self, size: usize, seed: u64, frictionless: bool) -> Result<PlanarScene> {
        let mut s = match self {
            PlanarSceneKind::DiscHopper => DiscHopperParams {
                n: size,
                ..Default::default()
            }
            .build(seed)?,
            PlanarSceneKind::BeamImpact => BeamImpactParams {
                n: size,
                ..Default::default()
            }
            .build(seed)?,
        };
        if frictionless {
            s.params.frictionless = true;
            s.parameters.insert("frictionless".into(), "true".into());
        }
        Ok(s)
    }
}

/// A built planar scene: discs, walls, bonds, parameters and provenance.
#[derive(Clone, Debug)]
pub struct PlanarScene {
    /// The discs (movable and fixed).
    pub discs: Vec<Disc>,
    /// The walls.
    pub walls: Vec<Wall>,
    /// Bonds and bending springs.
    pub bonds: BondSet,
    /// Parameters.
    pub params: PlanarParams,
    /// Label, e.g. `disc-hopper-200`.
    pub label: String,
    /// Scene parameters as text (recorded in every instance's provenance).
    pub parameters: BTreeMap<String, String>,
    /// The seed it was built from.
    pub seed: u64,
}

impl PlanarScene {
    /// A scene of `discs`, `walls` and `bonds` with the frictional, undamped parameters of
    /// `[h, g, mu, envelope]` (gravity `(0, -g)`), `label`, the provenance `kv` and `seed`.
    fn new(
        discs: Vec<Disc>,
        walls: Vec<Wall>,
        bonds: BondSet,
        [h, g, mu, envelope]: [f64; 4],
        label: String,
        kv: &[(&str, String)],
        seed: u64,
    ) -> Self {
        Self {
            discs,
            walls,
            bonds,
            params: PlanarParams {
                h,
                gravity: Vector2::new(0.0, -g),
                mu,
                envelope,
                frictionless: false,
                damping: 0.0,
                compliance: None,
            },
            label,
            parameters: kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            seed,
        }
    }

    /// Start a simulation of this scene. Errors as [`PlanarSimulation::new`].
    pub fn into_simulation(self) -> Result<PlanarSimulation> {
        PlanarSimulation::new(
            self.discs,
            self.walls,
            self.bonds,
            self.params,
            self.label,
            self.parameters,
            Some(self.seed),
        )
    }
}

/// Check that every `positive` value is finite and `> 0` and every `non_negative` one finite
/// and `>= 0`, in order. Errors: [`crate::GranularError::InvalidParameter`] naming the first
/// that is not.
fn check_ranges(
    positive: &[(&'static str, f64)],
    non_negative: &[(&'static str, f64)],
) -> Result<()> {
    for &(name, x) in positive {
        check_positive(name, x)?;
    }
    for &(name, x) in non_negative {
        check_non_negative(name, x)?;
    }
    Ok(())
}

fn check_size(name: &'static str, n: usize, min: usize) -> Result<()> {
    if n < min || n > 10_000_000 {
        Err(invalid(
            name,
            n,
            "out of range (see the scene's documentation)",
        ))
    } else {
        Ok(())
    }
}

/// `disc-hopper`: `n` discs with radii uniform in `[r_min, r_max]` on a jittered grid in a
/// vertical shaft above a hopper whose walls descend at `wall_angle` from the horizontal to an
/// orifice of width `orifice` centred at `x = 0`, `y = 0`; a bin of width `W` below it (a
/// floor at `y = -floor_depth` and two vertical walls at `x = +-W/2`) catches the discs that
/// leave, where they come to rest. Walls are segments: the two inclined ones from the orifice
/// edges `(+-orifice/2, 0)` up to `(+-W/2, hopper_height)`, `W = orifice + 2 hopper_height /
/// tan(wall_angle)`, and two vertical ones above them, as high as the grid. The discs start
/// falling at `drop_speed`.
#[derive(Clone, Debug, PartialEq)]
pub struct DiscHopperParams {
    /// Number of discs (size), `>= 1`; default 200.
    pub n: usize,
    /// Smallest radius (m); default 0.01.
    pub r_min: f64,
    /// Largest radius (m), `>= r_min`; default 0.015.
    pub r_max: f64,
    /// Areal density (kg/m^2); default 100.
    pub density: f64,
    /// Orifice width (m); default 0.125 (five mean diameters).
    pub orifice: f64,
    /// Angle of the hopper walls from the horizontal (degrees), in `(0, 90)`; default 60.
    pub wall_angle_deg: f64,
    /// Height of the inclined walls (m); default 0.25.
    pub hopper_height: f64,
    /// Depth of the floor below the orifice (m); default 0.3.
    pub floor_depth: f64,
    /// Initial downward speed of the discs (m/s); default 0.5.
    pub drop_speed: f64,
    /// Friction coefficient; default 0.3.
    pub mu: f64,
    /// Gravity magnitude (m/s^2); default 9.81.
    pub g: f64,
    /// Time step (s); default 2e-3.
    pub h: f64,
    /// Minimum envelope (m); default 1e-4.
    pub envelope: f64,
}

impl Default for DiscHopperParams {
    fn default() -> Self {
        Self {
            n: 200,
            r_min: 0.01,
            r_max: 0.015,
            density: 100.0,
            orifice: 0.125,
            wall_angle_deg: 60.0,
            hopper_height: 0.25,
            floor_depth: 0.3,
            drop_speed: 0.5,
            mu: 0.3,
            g: 9.81,
            h: 2e-3,
            envelope: 1e-4,
        }
    }
}

impl DiscHopperParams {
    /// Half-width of the hopper at its top, `W / 2` (m).
    pub fn top_half_width(&self) -> f64 {
        0.5 * self.orifice + self.hopper_height / self.wall_angle_deg.to_radians().tan()
    }

    /// Build the scene. Errors: [`crate::GranularError::InvalidParameter`] for `n = 0`,
    /// non-positive radii, density, orifice, heights or `h`, `r_min > r_max`, an orifice
    /// narrower than `2 r_max`, a wall angle outside `(0, 90)`, negative `mu`, `g`,
    /// `drop_speed` or envelope.
    pub fn build(&self, seed: u64) -> Result<PlanarScene> {
        check_size("n", self.n, 1)?;
        check_ranges(
            &[
                ("r_min", self.r_min),
                ("r_max", self.r_max),
                ("density", self.density),
                ("orifice", self.orifice),
                ("hopper_height", self.hopper_height),
                ("floor_depth", self.floor_depth),
                ("h", self.h),
            ],
            &[
                ("mu", self.mu),
                ("g", self.g),
                ("drop_speed", self.drop_speed),
                ("envelope", self.envelope),
            ],
        )?;
        if self.r_min > self.r_max {
            return Err(invalid("r_min", self.r_min, "must be <= r_max"));
        }
        if self.orifice < 2.0 * self.r_max {
            return Err(invalid("orifice", self.orifice, "must be >= 2 r_max"));
        }
        if !(self.wall_angle_deg > 0.0 && self.wall_angle_deg < 90.0) {
            return Err(invalid(
                "wall_angle_deg",
                self.wall_angle_deg,
                "must be in (0, 90)",
            ));
        }
        let mut rng = SplitMix64::new(seed);
        let hw = self.top_half_width();
        let s = 2.2 * self.r_max;
        let cols = ((2.0 * hw / s).floor() as usize).max(1);
        let rows = self.n.div_ceil(cols);
        let x0 = -0.5 * (cols as f64 - 1.0) * s;
        let y0 = self.hopper_height + self.r_max + 0.1 * self.r_max;
        let jitter = 0.5 * (s - 2.0 * self.r_max);
        let mut discs = Vec::with_capacity(self.n);
        for k in 0..self.n {
            let (row, col) = (k / cols, k % cols);
            let r = rng.uniform(self.r_min, self.r_max);
            let x = x0 + col as f64 * s + rng.uniform(-jitter, jitter);
            let y = y0 + row as f64 * s;
            let mut d = Disc::new(Vector2::new(x, y), r, self.density * PI * r * r)?;
            d.vel = Vector2::new(0.0, -self.drop_speed);
            discs.push(d);
        }
        let top = y0 + rows as f64 * s + s;
        let (o, hh) = (0.5 * self.orifice, self.hopper_height);
        let walls = vec![
            Wall::Segment {
                a: Vector2::new(-o, 0.0),
                b: Vector2::new(-hw, hh),
            },
            Wall::Segment {
                a: Vector2::new(o, 0.0),
                b: Vector2::new(hw, hh),
            },
            Wall::Segment {
                a: Vector2::new(-hw, hh),
                b: Vector2::new(-hw, top),
            },
            Wall::Segment {
                a: Vector2::new(hw, hh),
                b: Vector2::new(hw, top),
            },
            // the bin below the orifice: the discs that flow out collect and come to rest
            Wall::Segment {
                a: Vector2::new(-hw, -self.floor_depth),
                b: Vector2::new(-hw, 0.0),
            },
            Wall::Segment {
                a: Vector2::new(hw, -self.floor_depth),
                b: Vector2::new(hw, 0.0),
            },
            Wall::floor(-self.floor_depth),
        ];
        let kv = [
            ("scene", "disc-hopper".to_string()),
            ("size", self.n.to_string()),
            ("r_min", self.r_min.to_string()),
            ("r_max", self.r_max.to_string()),
            ("density", self.density.to_string()),
            ("orifice", self.orifice.to_string()),
            ("wall_angle_deg", self.wall_angle_deg.to_string()),
            ("hopper_height", self.hopper_height.to_string()),
            ("floor_depth", self.floor_depth.to_string()),
            ("drop_speed", self.drop_speed.to_string()),
        ];
        let params = [self.h, self.g, self.mu, self.envelope];
        let label = format!("disc-hopper-{}", self.n);
        Ok(PlanarScene::new(
            discs,
            walls,
            BondSet::new(),
            params,
            label,
            &kv,
            seed,
        ))
    }
}

/// `beam-impact`: a beam of `n x rows` discs of radius `radius` on a square lattice of spacing
/// `2 radius` (touching neighbours), bottom-left disc centred at the origin, joined by normal
/// bonds along rows and columns (stiffness `k_n`) and both diagonals (`k_diag`), with bending
/// springs (`k_b`) between consecutive collinear bonds along every row and column; it rests on
/// two fixed discs under columns 1 and `n - 2`, and a disc of radius `impactor_radius` and
/// areal density `impactor_density` starts `impactor_gap` above mid-span moving down at
/// `impact_speed`. A floor at `y = -floor_depth` catches the fragments. The seed jitters the
/// breaking strains by `+-strain_jitter` (relative), so the crack pattern depends on it.
#[derive(Clone, Debug, PartialEq)]
pub struct BeamImpactParams {
    /// Discs per row (size), `>= 4`; default 40.
    pub n: usize,
    /// Rows, `>= 1`; default 3.
    pub rows: usize,
    /// Radius of the beam's discs (m); default 0.005.
    pub radius: f64,
    /// Areal density of the beam's discs (kg/m^2); default 25.
    pub density: f64,
    /// Stiffness of the row and column bonds (N/m); default 1e5.
    pub k_n: f64,
    /// Stiffness of the diagonal bonds (N/m); default 5e4.
    pub k_diag: f64,
    /// Bending stiffness (N m/rad); default 0.5.
    pub k_b: f64,
    /// Breaking strain of the bonds; default 0.02.
    pub strain_max: f64,
    /// Relative jitter of the breaking strains, in `[0, 1)`; default 0.1.
    pub strain_jitter: f64,
    /// Breaking rotation of the bending springs (rad); default 0.2.
    pub angle_max: f64,
    /// Radius of the impactor (m); default 0.01.
    pub impactor_radius: f64,
    /// Areal density of the impactor (kg/m^2); default 250.
    pub impactor_density: f64,
    /// Initial gap between the impactor and the beam (m); default 0.001.
    pub impactor_gap: f64,
    /// Impact speed (m/s); default 3.
    pub impact_speed: f64,
    /// Depth of the floor below the beam's bottom row (m); default 0.05.
    pub floor_depth: f64,
    /// Friction coefficient; default 0.3.
    pub mu: f64,
    /// Gravity magnitude (m/s^2); default 9.81.
    pub g: f64,
    /// Time step (s); default 2e-5 (`0.14 sqrt(m / k_n)`).
    pub h: f64,
    /// Minimum envelope (m); default 1e-5.
    pub envelope: f64,
}

impl Default for BeamImpactParams {
    fn default() -> Self {
        Self {
            n: 40,
            rows: 3,
            radius: 0.005,
            density: 25.0,
            k_n: 1e5,
            k_diag: 5e4,
            k_b: 0.5,
            strain_max: 0.02,
            strain_jitter: 0.1,
            angle_max: 0.2,
            impactor_radius: 0.01,
            impactor_density: 250.0,
            impactor_gap: 0.001,
            impact_speed: 3.0,
            floor_depth: 0.05,
            mu: 0.3,
            g: 9.81,
            h: 2e-5,
            envelope: 1e-5,
        }
    }
}

impl BeamImpactParams {
    /// Index of the beam's disc in column `col`, row `row` (row 0 at the bottom).
    pub fn index(&self, col: usize, row: usize) -> usize {
        row * self.n + col
    }

    /// Build the scene: discs `0 .. n rows` are the beam (row by row, [`Self::index`]), then
    /// the two supports, then the impactor (the last disc). Errors:
    /// [`crate::GranularError::InvalidParameter`] for `n < 4`, `rows = 0`, non-positive radii,
    /// densities, stiffnesses `k_n`, breaking limits or `h`, a jitter outside `[0, 1)`, negative
    /// `k_diag`, `k_b`, `mu`, `g`, speed, gap or envelope, or `h > 0.2 sqrt(m / k)` for the
    /// stiffest bond (the explicit springs' stability margin).
    pub fn build(&self, seed: u64) -> Result<PlanarScene> {
        check_size("n", self.n, 4)?;
        check_size("rows", self.rows, 1)?;
        check_ranges(
            &[
                ("radius", self.radius),
                ("density", self.density),
                ("k_n", self.k_n),
                ("strain_max", self.strain_max),
                ("angle_max", self.angle_max),
                ("impactor_radius", self.impactor_radius),
                ("impactor_density", self.impactor_density),
                ("floor_depth", self.floor_depth),
                ("h", self.h),
            ],
            &[
                ("k_diag", self.k_diag),
                ("k_b", self.k_b),
                ("impactor_gap", self.impactor_gap),
                ("impact_speed", self.impact_speed),
                ("mu", self.mu),
                ("g", self.g),
                ("envelope", self.envelope),
            ],
        )?;
        if !(0.0..1.0).contains(&self.strain_jitter) {
            return Err(invalid(
                "strain_jitter",
                self.strain_jitter,
                "must be in [0, 1)",
            ));
        }
        let mut rng = SplitMix64::new(seed);
        let (n, rows, r) = (self.n, self.rows, self.radius);
        let a = 2.0 * r;
        let m = self.density * PI * r * r;
        // explicit springs: h well inside the stability limit of the stiffest bond
        let h_max = 0.2 * (m / self.k_n.max(self.k_diag)).sqrt();
        if self.h > h_max {
            return Err(invalid(
                "h",
                self.h,
                "must be <= 0.2 sqrt(m / k) of the stiffest bond (explicit springs)",
            ));
        }
        let mut discs = Vec::with_capacity(n * rows + 3);
        for row in 0..rows {
            for col in 0..n {
                discs.push(Disc::new(
                    Vector2::new(col as f64 * a, row as f64 * a),
                    r,
                    m,
                )?);
            }
        }
        for col in [1, n - 2] {
            discs.push(Disc::new(Vector2::new(col as f64 * a, -a), r, m)?.fixed());
        }
        let ri = self.impactor_radius;
        let xm = 0.5 * (n as f64 - 1.0) * a;
        let ytop = (rows as f64 - 1.0) * a;
        let mut imp = Disc::new(
            Vector2::new(xm, ytop + r + ri + self.impactor_gap),
            ri,
            self.impactor_density * PI * ri * ri,
        )?;
        imp.vel = Vector2::new(0.0, -self.impact_speed);
        discs.push(imp);
        let mut bonds = BondSet::new();
        let idx = |c: usize, rw: usize| rw * n + c;
        let strain = |rng: &mut SplitMix64| {
            self.strain_max * (1.0 + rng.uniform(-self.strain_jitter, self.strain_jitter))
        };
        // rows (and the bond index of each for the bending springs)
        let mut row_bond = vec![usize::MAX; n * rows];
        let mut col_bond = vec![usize::MAX; n * rows];
        for rw in 0..rows {
            for c in 0..n - 1 {
                let s = strain(&mut rng);
                row_bond[idx(c, rw)] =
                    bonds.add_bond(&discs, idx(c, rw), idx(c + 1, rw), self.k_n, s)?;
            }
        }
        for rw in 0..rows.saturating_sub(1) {
            for c in 0..n {
                let s = strain(&mut rng);
                col_bond[idx(c, rw)] =
                    bonds.add_bond(&discs, idx(c, rw), idx(c, rw + 1), self.k_n, s)?;
            }
            if self.k_diag > 0.0 {
                for c in 0..n - 1 {
                    let s = strain(&mut rng);
                    bonds.add_bond(&discs, idx(c, rw), idx(c + 1, rw + 1), self.k_diag, s)?;
                    let s = strain(&mut rng);
                    bonds.add_bond(&discs, idx(c + 1, rw), idx(c, rw + 1), self.k_diag, s)?;
                }
            }
        }
        if self.k_b > 0.0 {
            for rw in 0..rows {
                for c in 1..n - 1 {
                    bonds.add_bending(
                        &discs,
                        row_bond[idx(c - 1, rw)],
                        row_bond[idx(c, rw)],
                        self.k_b,
                        self.angle_max,
                    )?;
                }
            }
            for rw in 1..rows.saturating_sub(1) {
                for c in 0..n {
                    bonds.add_bending(
                        &discs,
                        col_bond[idx(c, rw - 1)],
                        col_bond[idx(c, rw)],
                        self.k_b,
                        self.angle_max,
                    )?;
                }
            }
        }
        let walls = vec![Wall::floor(-self.floor_depth)];
        let kv = [
            ("scene", "beam-impact".to_string()),
            ("size", n.to_string()),
            ("rows", rows.to_string()),
            ("radius", r.to_string()),
            ("density", self.density.to_string()),
            ("k_n", self.k_n.to_string()),
            ("k_diag", self.k_diag.to_string()),
            ("k_b", self.k_b.to_string()),
            ("strain_max", self.strain_max.to_string()),
            ("strain_jitter", self.strain_jitter.to_string()),
            ("angle_max", self.angle_max.to_string()),
            ("impactor_radius", ri.to_string()),
            ("impactor_density", self.impactor_density.to_string()),
            ("impact_speed", self.impact_speed.to_string()),
            (
                "bond_model",
                "FyDiK2D: normal springs k_n (L - L0), rotational springs k_b (phi - phi0) \
                 between consecutive collinear bonds; explicit forces at q(t)"
                    .to_string(),
            ),
        ];
        let params = [self.h, self.g, self.mu, self.envelope];
        let label = format!("beam-impact-{n}");
        Ok(PlanarScene::new(
            discs, walls, bonds, params, label, &kv, seed,
        ))
    }
}

/// A hexagonal stack of `base` touching discs of radius 0.5 and mass 1 on a floor at `y = 0`
/// (`base - k` discs in row `k`, centres `(i + k/2, 0.5 + k sqrt(3)/2)`): every disc touches
/// its neighbours, so the first step's CCP has `3 base (base - 1) / 2 + base` contacts,
/// hyperstatic (impulses not unique). The dense planar case of the block-storage tests and
/// measurements (docs/scale.md, "2-D problems"); `params` as [`PlanarSimulation::new`], name
/// `disc-stack`. Errors: those of [`PlanarSimulation::new`] and [`Disc::new`].
pub fn disc_stack(base: usize, params: PlanarParams) -> Result<PlanarSimulation> {
    let mut discs = Vec::with_capacity(base * (base + 1) / 2);
    for k in 0..base {
        for i in 0..base - k {
            let x = i as f64 + 0.5 * k as f64;
            let y = 0.5 + k as f64 * 3f64.sqrt() / 2.0;
            discs.push(Disc::new(Vector2::new(x, y), 0.5, 1.0)?);
        }
    }
    PlanarSimulation::new(
        discs,
        vec![Wall::floor(0.0)],
        BondSet::default(),
        params,
        "disc-stack",
        BTreeMap::new(),
        None,
    )
}
