//! # cpbench-solvers
//!
//! Iterative methods for `min 1/2 gamma^T N gamma + r^T gamma` over `gamma in K` (LCP, box QP,
//! Coulomb-cone CCP) behind one [`Solver`] trait, run by one [`Executor`] that owns limits,
//! the stopping test, counted `N`-products, timing, observers and the best iterate.
//!
//! | name | method | source |
//! |---|---|---|
//! | `pgs` | projected block Gauss-Seidel / PSOR | Tasora & Anitescu 2011 |
//! | `jacobi` | projected Jacobi | Tasora & Anitescu 2011 |
//! | `apgd` | Nesterov APGD with backtracking and restart | Mazhar et al. 2015 |
//! | `spgqp` | spectral projected gradient (BB + GLL) | Pospisil & Dostal 2018 |
//! | `bb` | projected Barzilai-Borwein, BB1/BB2 alternating (Chrono's BB) | Barzilai & Borwein 1988; Mazhar et al. 2015 |
//! | `mprgp` | MPRGP (box QP, LCP), with PERMON's expansion variants | Dostal & Schoberl 2005; Kruzik et al. 2020 |
//! | `mpgp` | MPGP (separable convex sets: cones, boxes) | Dostal & Kozubek 2012 |
//! | `clarabel` | external reference: Clarabel's conic interior point, one-shot | Goulart & Chen 2024 |
//! | `nsgs` | non-smooth Gauss-Seidel for the true Coulomb problem | Acary & Brogliato 2008; De Saxce & Feng 1991 |
//! | `newton-fb` | semismooth Newton on the Fischer-Burmeister function (general LCP) | De Luca, Facchinei & Kanzow 1996 |
//! | `psor` | projected SOR for the general LCP (positive diagonal) | Cryer 1971; Cottle, Pang & Stone 1992 |
//! | `nsn-ac`, `nsn-jm`, `nsn-nm` | semismooth Newton on the Alart-Curnier, Jean-Moreau and natural-map functions (Coulomb; sparse LU) | Alart & Curnier 1991; Acary, Bremond & Huber 2018 |
//! | `nsn-fb` | semismooth Newton on the Fischer-Burmeister function for SOCs with De Saxce's velocity (Coulomb; sparse LU) | Fukushima, Luo & Tseng 2001; Acary, Bremond & Huber 2018, sec. 4 |
//! | `lemke` | Lemke's complementary pivoting, lexicographic ratio test (general LCP) | Cottle, Pang & Stone 1992 |
//! | `enum` | enumeration of the `2^n` complementary bases (general LCP, `n <= 20`) | Murty 1988; Siconos ENUM |
//! | `ppa` | proximal point around semismooth Newton (Coulomb; Siconos' PROX rules) | Rockafellar 1976; Acary, Bremond & Huber 2018, sec. 5 |
//! | `nsgs-nsn` | NSGS until it stalls, then semismooth Newton (Alart-Curnier), back to NSGS when Newton makes no progress (Coulomb) | Acary, Bremond & Huber 2018, sec. 5 |
//! | `nsgs-admm` | NSGS while it converges fast, then ADMM from its iterate (Coulomb; in the default run list) | Acary, Bremond & Huber 2018, sec. 5 (hybrid strategies) |
//! | `vi-fpp` | fixed-point projection on the Coulomb VI, self-adaptive step | Acary, Bremond & Huber 2018; Siconos VI_FPP |
//! | `vi-eg` | extragradient on the Coulomb VI, Khobotov's self-adaptive step, Siconos' corrector | Korpelevich 1976; Khobotov 1987; Marcotte 1991; Siconos VI_EG |
//! | `dsfp` | De Saxce's fixed point `r <- P_K(r - rho (u + mu ||u_T|| e_n))` with a constant step (Coulomb) | De Saxce & Feng 1991; Acary, Bremond & Huber 2018; Siconos DSFP |
//! | `tfp` | Tresca fixed point: outer iteration on `s = mu r_n`, Gauss-Seidel on the Tresca problem (Coulomb) | Acary, Bremond & Huber 2018; Siconos TFP |
//! | `pfp` | Panagiotopoulos' fixed point: alternating normal LCP and tangential Tresca problem, Gauss-Seidel (Coulomb) | Panagiotopoulos 1975; Acary, Bremond & Huber 2018; Siconos PFP |
//! | `admm` (presets `admm:siconos`, `admm:chrono`, `admm:pinocchio`) | ADMM on `N + rho I` (sparse LU) with residual-balancing, spectral and Chrono step rules, acceleration with restart; De Saxce's shift on the Coulomb problem (QP classes, Coulomb) | Boyd et al. 2011; Goldstein et al. 2014; Tasora et al. 2021; Carpentier et al. 2024 |
//! | `desaxce-<ccp solver>` | De Saxce's fixed point on `s = mu ||u_T||` around a CCP solver (Coulomb) | De Saxce & Feng 1991; Acary et al. 2011 |
//!
//! The authoritative list (with classes, cost models and settings ranges) is the registry's
//! one table, [`registry::SOLVERS`], printed by `cpbench solvers`; settings are checked in one
//! place, [`settings::SolverSettings`].
//!
//! 2-D friction cones (`d = 2`): `pgs`, `jacobi`, `apgd`, `spgqp`, `mprgp`, `mpgp`,
//! `clarabel`, `nsgs` (exact planar one-contact solver), `vi-fpp`, `vi-eg`, `dsfp`, `tfp`, `pfp`
//! and `admm` work on them directly; `ipm`, `nsn-*`, `ppa` and the `desaxce-*` drivers through the exact 3-D embedding of
//! [`embed`].
//!
//! Registry names may carry a preset, `name:preset` (see [`registry::PRESETS`]), e.g.
//! `mprgp:permon-opt` for PERMON's settings with the `opt` expansion, or `admm:chrono` for
//! Chrono's ADMM defaults.
#![deny(missing_docs)]
// `!(x > a)` is deliberate in settings validation: it also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod admm;
mod anderson;
pub mod apgd;
pub mod bb;
pub mod clarabel;
pub mod coloured;
pub mod desaxce;
pub mod driven;
pub mod embed;
pub mod enumerative;
pub mod executor;
pub mod external;
pub mod fixed_point;
pub mod hybrid;
pub mod ipm;
pub mod jacobi;
pub mod kernels;
pub mod lemke;
pub mod mpgp;
pub mod mprgp;
pub mod newton_fb;
pub mod nsgs;
pub mod nsn;
pub mod observer;
pub mod pgs;
pub mod ppa;
pub mod problem;
pub mod psor;
pub mod registry;
pub mod result;
pub mod sap;
pub mod settings;
pub mod solver;
mod sparse_lu;
pub mod spgqp;
pub mod state;
pub mod status;
pub mod vi;

pub use driven::{DrivenAnswer, DrivenSolver, Monitor};
pub use executor::{meets_tol, ExecSettings, Executor};
pub use observer::{IterInfo, IterRecord, Observer, ObserverMode, TraceRecorder};
pub use problem::Problem;
pub use result::SolveResult;
pub use settings::{SolverSettings, Validator};
pub use solver::{Solver, StepOutcome};
pub use state::IterState;
pub use status::{SolverError, Status};
