//! The one residual module of cpbench (docs/formulation.md section 4).
//!
//! Every quality measure of an iterate `gamma` is computed here, from the problem data and
//! `gamma` alone, with `g = N gamma + r`:
//!
//! | field | definition | source |
//! |---|---|---|
//! | `nat_map_abs_2`, `nat_map_abs_inf` | `||gamma - P_K(gamma - g)||` (2- / inf-norm) | natural map, Facchinei & Pang 2003 |
//! | `nat_map_rel_2`, `nat_map_rel_inf` | the same divided by `||r||_2` (by 1 if `r = 0`) | |
//! | `nat_map_rel_max1_2` | divided by `max(1, ||r||_2)` (the `../data/reference` variant) | |
//! | `proj_grad_2`, `proj_grad_rel` | `||g^P||`, `||g^P|| / ||r||` | Dostal & Schoberl 2005 |
//! | `res4` | `||(gamma - P_K(gamma - eps g)) / eps||_2`, `eps = 1/n^2` | Heyn 2013, Mazhar 2015 |
//! | `res3` | `max_c max(||gamma_t,c|| - mu_c gamma_n,c, ||g_t,c|| - g_n,c / mu_c, |gamma_c . g_c|, 0)` (absolute) | Heyn 2013 "residual 3", Melanz et al. 2017 |
//! | `primal_feas` | `dist(gamma, K)` | |
//! | `dual_feas` | `dist(g, K^*)` (for a box, the sign conditions no bound can absorb) | |
//! | `complementarity` | `|gamma^T g|` (box: `sum_i |c_i|`, see below) | |
//! | `complementarity_max` | `max_c |gamma_c^T g_c|` per contact / component | |
//! | `objective` | `f(gamma) = 1/2 gamma^T N gamma + r^T gamma` | |
//! | `fc3d_error` | cones: `sqrt(sum_c ||gamma_c - P_K(gamma_c - (g_c + mu_c ||g_T,c|| e_n))||^2) / max(||r||, ||gamma||, ||g||)`; LCP and box: `||gamma - P_K(gamma - g)||_2 / ||r||_2` | Siconos 4.4 `fc3d_compute_error`, `lcp_compute_error` |
//!
//! On 2-D cones (`d = 2`) every cone residual is the same formula on blocks of 2 with
//! `||g_T|| = |g_t|`, and `fc3d_error` is Siconos 4.4's `fc2d_compute_error` with the same
//! scaling `max(||q||, ||r||, ||u||)` (its Lemke solver's reported error on
//! `FC2D_SliderCrankLagrangian00000` is reproduced to the last digit from its answer).
//!
//! `fc3d_error` is Siconos' error of the true Coulomb problem (fclib naming: `r = gamma`,
//! `u = g`, `q = r`; De Saxce's modified velocity `u + mu ||u_T|| e_n`), divided by
//! `max(||q||, ||r||, ||u||)` as docs/formulation.md section 4 states and as Siconos 4.4's NSGS
//! reports it: `scripts/peer_siconos.py` recomputes this value from Siconos' answer and it equals
//! Siconos' own reported error on all 13 Siconos and fclib 3-D files (fclib `Spheres-i099-356-679`: 7.314e-9
//! both; dividing by `||q||` alone would give 1.099e-8). No division when the norm is below
//! `f64::EPSILON`. On files where `||q||` is the largest of the three (the `coulomb` rows of
//! `tests/fixtures/reference/reference.csv`, "rel. to ||q||") both normalisations coincide.
//! For LCP and box instances the column holds Siconos' LCP error
//! `||z - max(0, z - w)|| / ||q||` (`lcp_compute_error`), the natural map over `||r||`.
//! It is the default stopping residual of Coulomb instances ([`ResidualKind::class_default`]).
//!
//! **Boxed LCP** ([`crate::ProblemClass::Blcp`], friction boxes with moving bounds): `P_K` in
//! the natural map and Res4 holds the bounds at the current iterate,
//! `gamma_n - max(0, gamma_n - g_n)` and `gamma_t,i - clamp(gamma_t,i - g_t,i, -mu gamma_n, mu gamma_n)`
//! (zero exactly at BLCP solutions); `primal_feas` is `||gamma - C(gamma)||` with ODE's clamp `C`
//! (normal at 0, then tangents into the bounds of the new normal: zero iff feasible, not the
//! Euclidean distance to the square pyramid); `dual_feas` is `|min(g_n, 0)|` (the finite
//! tangential bounds absorb any `g_t`); complementarity per contact
//! `|gamma_n g_n| + sum_i max(g_t,i, 0)(gamma_t,i + mu gamma_n) + max(-g_t,i, 0)(mu gamma_n - gamma_t,i)`;
//! the projected gradient that of a box at the current bounds; `fc3d_error` the natural map
//! over `||r||` (as the LCP error). `objective` is reported but means nothing (not a QP).
//!
//! **Heyn's residual 3** (`res3`, Heyn, Anitescu, Tasora & Negrut 2013, IJNME 95; the common
//! stopping test of every solver of DVIDE, Melanz et al. 2017, at `melanz/DVIDE` 9dd4406): the
//! largest, over contacts, of the cone violation `||gamma_t|| - mu gamma_n`, the dual-cone
//! violation `||g_t|| - g_n / mu` and the complementarity `|gamma_c . g_c|`, clipped below at
//! 0. It is absolute (units of impulse, velocity and their product mixed, as in the papers),
//! so its tolerance depends on the scene's scale. A contact with `mu = 0` has the dual test
//! `-g_n` (the dual cone of a ray is the half-space `g_n >= 0`). On 2-D cones the tangent
//! norm is `|x_t|`. For the other sets, per component: `dist(gamma_i, K_i)`, the dual
//! violation of `g_i` (LCP: `-g_i`; box: the sign no bound absorbs; friction box: `-g_n`) and
//! the component's complementarity term below.
//!
//! For a box, component `i` contributes `c_i = max(g_i, 0)(gamma_i - lo_i) + max(-g_i, 0)(hi_i - gamma_i)`
//! (terms with an infinite bound are left out: they are dual infeasibility).
//!
//! The projected gradient `g^P = -P_{T_K(gamma)}(-g)` (the negative projection of the steepest
//! descent direction on the tangent cone at `gamma`): for a box, `g_i` where free, `min(g_i, 0)` at a
//! lower and `max(g_i, 0)` at an upper bound; for a Coulomb cone, `g_c` in the interior,
//! `-P_K(-g_c)` at the apex and the half-space projection on the cone surface. A point counts as
//! on the surface when `||gamma_t|| >= mu gamma_n (1 - 1e-12)`. The definition lives in
//! [`crate::ConstraintSet::projected_gradient_block`], shared with MPRGP / MPGP, so that the solvers'
//! stopping quantity and this residual are the same function.

use crate::constraints::ResidualTerms;
use crate::instance::Instance;
use crate::linalg::{dist2, norm2};
use serde::{Deserialize, Serialize};

/// All residuals of one iterate. Field names are the CSV column names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Residuals {
    /// `||gamma - P_K(gamma - g)||_2`.
    pub nat_map_abs_2: f64,
    /// `||gamma - P_K(gamma - g)||_inf`.
    pub nat_map_abs_inf: f64,
    /// `nat_map_abs_2 / ||r||_2` (or `/ 1` when `r = 0`).
    pub nat_map_rel_2: f64,
    /// `nat_map_abs_inf / ||r||_2` (or `/ 1` when `r = 0`).
    pub nat_map_rel_inf: f64,
    /// `nat_map_abs_2 / max(1, ||r||_2)` (the variant of `../data/reference`).
    pub nat_map_rel_max1_2: f64,
    /// `||g^P||_2`, the projected gradient norm.
    pub proj_grad_2: f64,
    /// `||g^P||_2 / ||r||_2` (MPRGP's stopping quantity).
    pub proj_grad_rel: f64,
    /// Chrono's Res4 with `eps = 1/n^2`.
    pub res4: f64,
    /// `dist(gamma, K)`.
    pub primal_feas: f64,
    /// `dist(g, K^*)`.
    pub dual_feas: f64,
    /// `|gamma^T g|` (box: sum of per-component terms).
    pub complementarity: f64,
    /// Largest per-contact (per-component) complementarity.
    pub complementarity_max: f64,
    /// Objective `f(gamma)`.
    pub objective: f64,
    /// Siconos' error: fc3d error of the Coulomb problem for cones, LCP error otherwise (see
    /// the module documentation). `NaN` when read from a results file that predates it.
    pub fc3d_error: f64,
    /// Heyn's residual 3 (absolute, see the module documentation; Heyn et al. 2013, Melanz et
    /// al. 2017). `NaN` when read from a results file that predates it.
    pub res3: f64,
}

/// Selects one residual, e.g. for a stopping test. Its JSON name (manifests, settings files,
/// the summary's `settings` column) is [`ResidualKind::as_str`], the CLI's and the CSV
/// columns' spelling; the names of earlier manifests (`nat_map_rel2`, `nat_map_abs2`,
/// `nat_map_rel_max1`) still read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ResidualKind {
    /// Relative natural map, 2-norm (the class default of LCP, box QP and CCP instances, see
    /// [`ResidualKind::class_default`]).
    #[default]
    #[serde(rename = "nat_map_rel_2", alias = "nat_map_rel2")]
    NatMapRel2,
    /// Relative natural map, inf-norm.
    NatMapRelInf,
    /// Absolute natural map, 2-norm.
    #[serde(rename = "nat_map_abs_2", alias = "nat_map_abs2")]
    NatMapAbs2,
    /// Natural map divided by `max(1, ||r||)`.
    #[serde(rename = "nat_map_rel_max1_2", alias = "nat_map_rel_max1")]
    NatMapRelMax1,
    /// Relative projected gradient (Dostal).
    ProjGradRel,
    /// Chrono's Res4.
    Res4,
    /// Siconos' fc3d error (true Coulomb problem) / LCP error.
    Fc3dError,
    /// Heyn's residual 3 (absolute; DVIDE's common stopping test).
    Res3,
}

impl ResidualKind {
    /// All kinds, in CSV column order.
    pub const ALL: [ResidualKind; 8] = [
        ResidualKind::NatMapRel2,
        ResidualKind::NatMapRelInf,
        ResidualKind::NatMapAbs2,
        ResidualKind::NatMapRelMax1,
        ResidualKind::ProjGradRel,
        ResidualKind::Res4,
        ResidualKind::Fc3dError,
        ResidualKind::Res3,
    ];

    /// The residual of an instance of `class` when none is chosen (no `--residual`, no suite
    /// default): Siconos' fc3d error ([`ResidualKind::Fc3dError`]) on a Coulomb instance, where
    /// the natural-map and projected-gradient kinds measure the CCP relaxation, a different
    /// problem; the relative natural map ([`ResidualKind::NatMapRel2`]) on every other class.
    pub fn class_default(class: crate::ProblemClass) -> Self {
        match class {
            crate::ProblemClass::Coulomb => ResidualKind::Fc3dError,
            _ => ResidualKind::NatMapRel2,
        }
    }

    /// The residual used on an instance of `class`: `choice` when given (an explicit choice is
    /// always honoured, `nat_map_rel_2` on a Coulomb instance included), else
    /// [`ResidualKind::class_default`].
    pub fn resolve(choice: Option<Self>, class: crate::ProblemClass) -> Self {
        choice.unwrap_or_else(|| Self::class_default(class))
    }

    /// The column name of this residual in [`Residuals`].
    pub fn as_str(self) -> &'static str {
        match self {
            ResidualKind::NatMapRel2 => "nat_map_rel_2",
            ResidualKind::NatMapRelInf => "nat_map_rel_inf",
            ResidualKind::NatMapAbs2 => "nat_map_abs_2",
            ResidualKind::NatMapRelMax1 => "nat_map_rel_max1_2",
            ResidualKind::ProjGradRel => "proj_grad_rel",
            ResidualKind::Res4 => "res4",
            ResidualKind::Fc3dError => "fc3d_error",
            ResidualKind::Res3 => "res3",
        }
    }

    /// Parse a column name (as printed by [`ResidualKind::as_str`]).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl Residuals {
    /// Number of residual columns ([`Residuals::NAMES`]).
    pub const COUNT: usize = 15;

    /// Column names, in the order of [`Residuals::values`]. Columns added after the first
    /// files were written come last (`fc3d_error`, then `res3`): readers take a missing one as
    /// NaN.
    pub const NAMES: [&'static str; Self::COUNT] = [
        "nat_map_abs_2",
        "nat_map_abs_inf",
        "nat_map_rel_2",
        "nat_map_rel_inf",
        "nat_map_rel_max1_2",
        "proj_grad_2",
        "proj_grad_rel",
        "res4",
        "primal_feas",
        "dual_feas",
        "complementarity",
        "complementarity_max",
        "objective",
        "fc3d_error",
        "res3",
    ];

    /// Values in the order of [`Residuals::NAMES`].
    pub fn values(&self) -> [f64; Self::COUNT] {
        [
            self.nat_map_abs_2,
            self.nat_map_abs_inf,
            self.nat_map_rel_2,
            self.nat_map_rel_inf,
            self.nat_map_rel_max1_2,
            self.proj_grad_2,
            self.proj_grad_rel,
            self.res4,
            self.primal_feas,
            self.dual_feas,
            self.complementarity,
            self.complementarity_max,
            self.objective,
            self.fc3d_error,
            self.res3,
        ]
    }

    /// Inverse of [`Residuals::values`].
    pub fn from_values(v: [f64; Self::COUNT]) -> Self {
        Self {
            nat_map_abs_2: v[0],
            nat_map_abs_inf: v[1],
            nat_map_rel_2: v[2],
            nat_map_rel_inf: v[3],
            nat_map_rel_max1_2: v[4],
            proj_grad_2: v[5],
            proj_grad_rel: v[6],
            res4: v[7],
            primal_feas: v[8],
            dual_feas: v[9],
            complementarity: v[10],
            complementarity_max: v[11],
            objective: v[12],
            fc3d_error: v[13],
            res3: v[14],
        }
    }

    /// The value of one residual kind.
    pub fn get(&self, kind: ResidualKind) -> f64 {
        match kind {
            ResidualKind::NatMapRel2 => self.nat_map_rel_2,
            ResidualKind::NatMapRelInf => self.nat_map_rel_inf,
            ResidualKind::NatMapAbs2 => self.nat_map_abs_2,
            ResidualKind::NatMapRelMax1 => self.nat_map_rel_max1_2,
            ResidualKind::ProjGradRel => self.proj_grad_rel,
            ResidualKind::Res4 => self.res4,
            ResidualKind::Fc3dError => self.fc3d_error,
            ResidualKind::Res3 => self.res3,
        }
    }

    /// True when every value is finite.
    pub fn is_finite(&self) -> bool {
        self.values().iter().all(|v| v.is_finite())
    }
}

/// Scratch memory for [`ResidualWorkspace::compute`], so that per-iteration monitoring
/// allocates nothing. Sized for one instance.
#[derive(Clone, Debug)]
pub struct ResidualWorkspace {
    g: Vec<f64>,
    norm_r: f64,
}

impl ResidualWorkspace {
    /// Workspace for `instance` (allocates `n` floats once).
    pub fn new(instance: &Instance) -> Self {
        Self {
            g: vec![0.0; instance.n()],
            norm_r: norm2(instance.r()),
        }
    }

    /// All residuals of `gamma` (one `N`-product). `gamma` has length `n`.
    pub fn compute(&mut self, instance: &Instance, gamma: &[f64]) -> Residuals {
        instance.gradient(gamma, &mut self.g);
        residuals_with_gradient(instance, gamma, &self.g, self.norm_r)
    }

    /// The residual `kind` and the primal feasibility of `gamma` ([`stopping_residuals`]; one
    /// `N`-product, the other fields NaN); the gradient stays for [`ResidualWorkspace::last_gradient`].
    pub fn compute_stopping(
        &mut self,
        instance: &Instance,
        gamma: &[f64],
        kind: ResidualKind,
    ) -> Residuals {
        instance.gradient(gamma, &mut self.g);
        stopping_residuals(instance, (gamma, &self.g, self.norm_r), kind)
    }

    /// All residuals of `gamma` from the gradient of the last `compute*` call, which must have
    /// been of the same `gamma` (no product).
    pub fn complete(&self, instance: &Instance, gamma: &[f64]) -> Residuals {
        residuals_with_gradient(instance, gamma, &self.g, self.norm_r)
    }

    /// The gradient `g = N gamma + r` of the last `compute*` call.
    pub fn last_gradient(&self) -> &[f64] {
        &self.g
    }
}

/// All residuals of `gamma` (allocating convenience wrapper; one `N`-product).
pub fn residuals(instance: &Instance, gamma: &[f64]) -> Residuals {
    ResidualWorkspace::new(instance).compute(instance, gamma)
}

/// Blocks below which [`residuals_with_gradient`] makes one sequential pass (the results are
/// then bit for bit those of the plain loop in index order).
pub const RESIDUAL_PAR_MIN_BLOCKS: usize = 32_768;
/// Most chunks of the parallel pass: a chunk has `max(4096, blocks / 64)` blocks, a number
/// that depends on the size alone, never on the threads.
const RESIDUAL_MAX_CHUNKS: usize = 64;

/// Which parts of the residual pass to compute: the stopping test needs one kind and the
/// primal feasibility ([`stopping_residuals`]), a trace every field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Need {
    nat_map: bool,
    res4: bool,
    proj_grad: bool,
    /// Dual feasibility, complementarity, Res3 and the cones' fc3d error.
    terms: bool,
}

impl Need {
    const ALL: Need = Need {
        nat_map: true,
        res4: true,
        proj_grad: true,
        terms: true,
    };

    /// The parts `kind` is made of on a set with (`cones`) or without cones.
    fn of(kind: ResidualKind, cones: bool) -> Need {
        let none = Need {
            nat_map: false,
            res4: false,
            proj_grad: false,
            terms: false,
        };
        match kind {
            ResidualKind::NatMapRel2
            | ResidualKind::NatMapRelInf
            | ResidualKind::NatMapAbs2
            | ResidualKind::NatMapRelMax1 => Need {
                nat_map: true,
                ..none
            },
            ResidualKind::ProjGradRel => Need {
                proj_grad: true,
                ..none
            },
            ResidualKind::Res4 => Need { res4: true, ..none },
            ResidualKind::Fc3dError if !cones => Need {
                nat_map: true,
                ..none
            },
            ResidualKind::Fc3dError | ResidualKind::Res3 => Need {
                terms: true,
                ..none
            },
        }
    }
}

/// The sums and maxima of one run of blocks of [`residuals_with_gradient`]'s pass.
#[derive(Clone, Copy, Debug)]
struct Partial {
    nm2: f64,
    nm_inf: f64,
    pg2: f64,
    r4: f64,
    pf2: f64,
    terms: ResidualTerms,
    /// `||gamma||^2`, `||g||^2` and `gamma^T (g + r)`, from `-0.0` as `Iterator::sum` starts.
    xx: f64,
    gg: f64,
    obj: f64,
}

impl Default for Partial {
    fn default() -> Self {
        Self {
            nm2: 0.0,
            nm_inf: 0.0,
            pg2: 0.0,
            r4: 0.0,
            pf2: 0.0,
            terms: ResidualTerms::default(),
            xx: -0.0,
            gg: -0.0,
            obj: -0.0,
        }
    }
}

impl Partial {
    /// The pass over the blocks `blocks` (block size `bs`, Res4's `eps`), in index order.
    fn of_blocks(
        k: &crate::constraints::ConstraintSet,
        (eps, need): (f64, Need),
        (bs, blocks): (usize, std::ops::Range<usize>),
        (gamma, g, r): (&[f64], &[f64], &[f64]),
    ) -> Self {
        let mut p = Self::default();
        let mut buf = [0.0f64; 3];
        for b in blocks {
            let s = b * bs..(b + 1) * bs;
            let (x, gb, rb) = (&gamma[s.clone()], &g[s.clone()], &r[s]);
            let m = x.len();
            for i in 0..m {
                p.xx += x[i] * x[i];
                p.gg += gb[i] * gb[i];
                p.obj += x[i] * (gb[i] + rb[i]);
            }
            // natural map: x - P(x - g)
            if need.nat_map {
                for i in 0..m {
                    buf[i] = x[i] - gb[i];
                }
                k.project_at(b, x, &mut buf[..m]);
                for i in 0..m {
                    let d = x[i] - buf[i];
                    p.nm2 += d * d;
                    p.nm_inf = p.nm_inf.max(d.abs());
                }
            }
            // Res4: (x - P(x - eps g)) / eps
            if need.res4 {
                for i in 0..m {
                    buf[i] = x[i] - eps * gb[i];
                }
                k.project_at(b, x, &mut buf[..m]);
                for i in 0..m {
                    let d = (x[i] - buf[i]) / eps;
                    p.r4 += d * d;
                }
            }
            // primal feasibility
            buf[..m].copy_from_slice(x);
            k.project_block(b, &mut buf[..m]);
            for i in 0..m {
                let d = x[i] - buf[i];
                p.pf2 += d * d;
            }
            // dual feasibility, complementarity, Res3 and the fc3d error: asked of the set
            if need.terms {
                k.residual_terms(b, x, gb, &mut p.terms);
            }
            // projected gradient (the definition shared with MPRGP / MPGP)
            if need.proj_grad {
                k.projected_gradient_block(b, x, gb, &mut buf[..m]);
                p.pg2 += buf[..m].iter().map(|v| v * v).sum::<f64>();
            }
        }
        p
    }

    /// `self` followed by `o` (sums added, maxima taken).
    fn then(mut self, o: &Self) -> Self {
        self.nm2 += o.nm2;
        self.nm_inf = self.nm_inf.max(o.nm_inf);
        self.pg2 += o.pg2;
        self.r4 += o.r4;
        self.pf2 += o.pf2;
        self.terms.dual_feas2 += o.terms.dual_feas2;
        self.terms.comp_sum += o.terms.comp_sum;
        self.terms.comp_max = self.terms.comp_max.max(o.terms.comp_max);
        self.terms.res3 = self.terms.res3.max(o.terms.res3);
        self.terms.fc3d2 += o.terms.fc3d2;
        self.xx += o.xx;
        self.gg += o.gg;
        self.obj += o.obj;
        self
    }
}

/// All residuals of `gamma` given its gradient `g = N gamma + r` and `||r||_2`. No `N`-product,
/// no allocation. Shapes: `gamma`, `g` of length `n`.
///
/// One pass over the blocks computes every sum. From [`RESIDUAL_PAR_MIN_BLOCKS`] blocks on it
/// runs in at most 64 chunks on the current rayon pool (each chunk's sums in index order, then
/// the chunks' in chunk order): the residuals are bit-identical for any number of threads
/// given `n`, and differ from the sequential pass by the summation order only.
pub fn residuals_with_gradient(
    instance: &Instance,
    gamma: &[f64],
    g: &[f64],
    norm_r: f64,
) -> Residuals {
    residuals_of(instance, (gamma, g, norm_r), Need::ALL)
}

/// The residual `kind` and the primal feasibility `primal_feas` of `gamma` given its gradient
/// `g = N gamma + r` and `||r||_2`: what the executor's stopping test reads. One pass as
/// [`residuals_with_gradient`]'s that skips the parts of the other residuals (of the five
/// projections per block, the natural map's, Res4's and the projected gradient's, and the
/// set's dual, complementarity and fc3d terms, it makes only those `kind` needs, plus the
/// primal one), so both values are bit for bit those [`residuals_with_gradient`] gives;
/// `objective` is computed too; every other field is NaN. Shapes as there.
pub fn stopping_residuals(
    instance: &Instance,
    (gamma, g, norm_r): (&[f64], &[f64], f64),
    kind: ResidualKind,
) -> Residuals {
    let cones = instance.constraints().cone_dim().is_some();
    residuals_of(instance, (gamma, g, norm_r), Need::of(kind, cones))
}

/// The residuals of `need` (the others NaN); see [`residuals_with_gradient`].
fn residuals_of(
    instance: &Instance,
    (gamma, g, norm_r): (&[f64], &[f64], f64),
    need: Need,
) -> Residuals {
    use rayon::prelude::*;
    let n = gamma.len();
    let k = instance.constraints();
    let eps = if n > 0 {
        1.0 / (n as f64 * n as f64)
    } else {
        1.0
    };
    let scale = if norm_r > 0.0 { norm_r } else { 1.0 };
    let bs = k.block_size();
    let nb = n / bs;
    let data = (gamma, g, instance.r());
    let p = if nb < RESIDUAL_PAR_MIN_BLOCKS {
        Partial::of_blocks(k, (eps, need), (bs, 0..nb), data)
    } else {
        let per = nb.div_ceil(RESIDUAL_MAX_CHUNKS).max(4096);
        let mut parts = [Partial::default(); RESIDUAL_MAX_CHUNKS];
        let chunks = nb.div_ceil(per);
        parts[..chunks]
            .par_iter_mut()
            .enumerate()
            .for_each(|(c, part)| {
                let blocks = c * per..((c + 1) * per).min(nb);
                *part = Partial::of_blocks(k, (eps, need), (bs, blocks), data);
            });
        parts[1..chunks].iter().fold(parts[0], |a, b| a.then(b))
    };
    let Partial {
        nm2,
        nm_inf,
        pg2,
        r4,
        pf2,
        terms,
        ..
    } = p;
    let nm2 = nm2.sqrt();
    let pg2 = pg2.sqrt();
    let cones = k.cone_dim().is_some();
    let fc3d_abs = if cones { terms.fc3d2.sqrt() } else { nm2 };
    // Siconos' relative scaling: max(||q||, ||r||, ||u||) for the fc3d error (what Siconos 4.4's
    // NSGS reports: checked against its output on all 13 Siconos and fclib fc3d files, e.g. fclib Spheres
    // 7.314e-9 where ||q|| alone would give 1.099e-8), ||q|| for the LCP error. The same for
    // 2-D cones (Siconos 4.4's fc2d error: its Lemke solver reports 1.209471145640437e-14 on
    // FC2D_SliderCrankLagrangian00000, this scaling of its answer gives 1.2094711456404371e-14).
    let siconos_norm = if cones {
        norm_r.max(p.xx.sqrt()).max(p.gg.sqrt())
    } else {
        norm_r
    };
    let siconos_scale = if siconos_norm > f64::EPSILON {
        siconos_norm
    } else {
        1.0
    };
    // the parts not computed are NaN
    let only = |on: bool, v: f64| if on { v } else { f64::NAN };
    let fc3d_on = if cones { need.terms } else { need.nat_map };
    Residuals {
        nat_map_abs_2: only(need.nat_map, nm2),
        nat_map_abs_inf: only(need.nat_map, nm_inf),
        nat_map_rel_2: only(need.nat_map, nm2 / scale),
        nat_map_rel_inf: only(need.nat_map, nm_inf / scale),
        nat_map_rel_max1_2: only(need.nat_map, nm2 / norm_r.max(1.0)),
        proj_grad_2: only(need.proj_grad, pg2),
        proj_grad_rel: only(need.proj_grad, pg2 / scale),
        res4: only(need.res4, r4.sqrt()),
        primal_feas: pf2.sqrt(),
        dual_feas: only(need.terms, terms.dual_feas2.sqrt()),
        complementarity: only(need.terms, terms.comp_sum.abs()),
        complementarity_max: only(need.terms, terms.comp_max),
        objective: p.obj * 0.5,
        fc3d_error: only(fc3d_on, fc3d_abs / siconos_scale),
        res3: only(need.terms, terms.res3),
    }
}

/// How far the CCP relaxation's solution is from the Coulomb problem's
/// ([`coulomb_gap`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoulombGap {
    /// `||r_ccp - r_coulomb||_2 / max(||r_ccp||, ||r_coulomb||)` (0 when both vanish).
    /// With a rank-deficient `W` the reactions need not be unique, so this may include the
    /// spread of the solution sets; `u_n_rel` is the sharper figure.
    pub r_rel: f64,
    /// `||u_n,ccp - u_n,coulomb||_2 / max(||u_ccp||, ||u_coulomb||, ||q||)` over the normal
    /// components, `u = W r + q` (`||q||` keeps it meaningful when both velocities vanish, as
    /// on a sticking solution; 0 when all three do).
    pub u_n_rel: f64,
    /// Contacts sliding in the Coulomb solution (`r` on the cone surface, `r_n > 0`,
    /// `||u_T|| > 1e-9 max(||u||, ||q||)`).
    pub sliding: usize,
    /// Number of contacts.
    pub contacts: usize,
}

/// The gap between a CCP solution `r_ccp` and a Coulomb solution `r_coulomb` of the cone
/// instance `instance` (either class; `u = N r + r_data`): see [`CoulombGap`]. On a sticking or
/// separating solution the two problems coincide (`mu ||u_T|| = 0`), so the gap vanishes;
/// sliding contacts get a spurious normal velocity `u_n = mu ||u_T||` in the CCP (Anitescu 2006).
/// Two products, allocates. Shapes: length `n`; 0 contacts for a non-cone instance.
pub fn coulomb_gap(instance: &Instance, r_ccp: &[f64], r_coulomb: &[f64]) -> CoulombGap {
    let n = instance.n();
    let (mut ua, mut ub) = (vec![0.0; n], vec![0.0; n]);
    instance.gradient(r_ccp, &mut ua);
    instance.gradient(r_coulomb, &mut ub);
    let rel = |num: f64, a: f64, b: f64| {
        let d = a.max(b);
        if d > 0.0 {
            num / d
        } else {
            0.0
        }
    };
    let dr = dist2(r_ccp, r_coulomb);
    let (mut dun, mut sliding, mut contacts) = (0.0f64, 0, 0);
    let unorm = norm2(&ub).max(norm2(instance.r()));
    if let Some(mu) = instance.constraints().friction() {
        // contacts only: the leading joint blocks (bilateral) neither slide nor count
        let joints = instance.constraints().joints();
        contacts = mu.len() - joints;
        let d = instance.constraints().block_size();
        let tnorm = |v: &[f64], o: usize| {
            if d == 3 {
                v[o + 1].hypot(v[o + 2])
            } else {
                v[o + 1].abs()
            }
        };
        for (c, &m) in mu.iter().enumerate().skip(joints) {
            let o = d * c;
            dun += (ua[o] - ub[o]) * (ua[o] - ub[o]);
            let (rn, rt) = (r_coulomb[o], tnorm(r_coulomb, o));
            let ut = tnorm(&ub, o);
            if rn > 0.0 && rt >= m * rn * (1.0 - 1e-8) && ut > 1e-9 * unorm {
                sliding += 1;
            }
        }
    }
    CoulombGap {
        r_rel: rel(dr, norm2(r_ccp), norm2(r_coulomb)),
        u_n_rel: rel(dun.sqrt(), norm2(&ua).max(norm2(instance.r())), norm2(&ub)),
        sliding,
        contacts,
    }
}
