//! Classic box-constrained QP test problems, as cpbench [`Instance`]s with
//! [`ConstraintSet::Box`]: `min 1/2 x^T N x + r^T x` subject to `lo <= x <= hi`.
//!
//! | generator | problem | source |
//! |---|---|---|
//! | [`permon_ex1`] | 1-D obstacle problem `-u'' = -15`, `u >= sin(4 pi x - pi/6)/2 - 2` | PERMON `src/tutorials/ex1.c` |
//! | [`jbearing2`] | pressure in a journal bearing (MINPACK-2 `dpjb`) | PETSc/TAO and PERMON `jbearing2.c`; Averick et al. 1992 |
//! | [`torsion`] | elastic-plastic torsion, `|v| <= dist(x, boundary)` (MINPACK-2 `dept`) | Averick et al. 1992 |
//! | [`obstacle2d`] | 2-D obstacle problem between two oscillating obstacles | modelled on MINPACK-2 `dobs` |
//! | [`random_box_qp`] | dense random box QP with a prescribed spectrum and active set, known solution | cpbench |
//!
//! Sign convention: PERMON and PETSc/TAO write `1/2 x^T A x - x^T b`; cpbench writes
//! `1/2 x^T N x + r^T x`, so `N = A` and `r = -b`. Every discretisation below is written out in
//! the docstring of its generator so that the instance can be rebuilt independently.
//!
//! Averick, Carter, More, Xue, "The MINPACK-2 test problem collection", Argonne MCS-P153-0692
//! (1992).

use crate::constraints::ConstraintSet;
use crate::error::{ProblemError, Result};
use crate::instance::{Instance, Provenance, ValidationOptions};
use crate::linalg::CscMatrix;
use crate::rng::SplitMix64;
use std::collections::BTreeMap;
use std::f64::consts::PI;

fn invalid(generator: &str, name: &str, value: impl ToString, reason: &str) -> ProblemError {
    ProblemError::InvalidParameter {
        generator: generator.into(),
        name: name.into(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn provenance(generator: &str, params: &[(&str, String)], seed: Option<u64>) -> Provenance {
    Provenance {
        source: generator.into(),
        format: generator.into(),
        derivation: "as-is".into(),
        parameters: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
        seed,
        ..Default::default()
    }
}

fn build(
    name: String,
    n: usize,
    triplets: &[(usize, usize, f64)],
    r: Vec<f64>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    prov: Provenance,
) -> Result<Instance> {
    let m = CscMatrix::from_triplets(n, n, triplets)?;
    Instance::new(
        name,
        m,
        r,
        ConstraintSet::Box { lo, hi },
        prov,
        ValidationOptions::default(),
    )
}

/// PERMON's `ex1` (`src/tutorials/ex1.c`): the 1-D obstacle problem
/// `-u'' = -15` on `[0, 1]`, `u(0) = u(1) = 0`, `u >= sin(4 pi x - pi/6)/2 - 2`, on `n` mesh
/// points `x_i = i h`, `h = 1/(n - 1)`, `i = 0..n-1`, including the two boundary points. PERMON's
/// test `ex1_1` uses `n = 100` (the instance is then named `ex1`, otherwise `ex1-n<n>`).
///
/// Exactly PERMON's algebraic problem (no `1/h^2` scaling of the matrix, `h^2` on the right):
/// - `N`: rows `0` and `n-1` are identity rows; interior rows `i = 1..n-2` carry `(-1, 2, -1)`
///   in columns `(i-1, i, i+1)`, except that the couplings to the boundary columns `0` and
///   `n-1` are left out (Dirichlet rows eliminated), so `N` is symmetric and block diagonal;
/// - `r = -b` with `b_i = -15 h^2 * 2 = -30 h^2` on interior rows and `b = 0` on the boundary;
/// - `lo_i = sin(4 pi i h - pi/6)/2 - 2` on interior rows; on the two boundary rows PERMON's
///   bound vector is left at its zero initial value, so `lo = 0` there (with `x = 0` and `g = 0`
///   on those rows the iterates are the same as with `lo = -inf`); `hi = +inf`;
/// - start at zero (cpbench's default start), which is feasible.
///
/// PERMON runs it as `ex1 -n 100` with MPGP at its default `rtol = 1e-5`, stopping on
/// `||g^P|| <= rtol ||b||` (`||b|| = 30 h^2 sqrt(n - 2) = 3.030e-2` for `n = 100`).
/// Errors: [`ProblemError::InvalidParameter`] for `n < 3`.
pub fn permon_ex1(n: usize) -> Result<Instance> {
    if n < 3 {
        return Err(invalid("ex1", "n", n, "needs at least 3 mesh points"));
    }
    let h = 1.0 / (n as f64 - 1.0);
    let mut t = Vec::with_capacity(3 * n);
    let mut r = vec![0.0; n];
    let mut lo = vec![0.0; n];
    t.push((0, 0, 1.0));
    t.push((n - 1, n - 1, 1.0));
    for i in 1..n - 1 {
        t.push((i, i, 2.0));
        if i > 1 {
            t.push((i, i - 1, -1.0));
        }
        if i < n - 2 {
            t.push((i, i + 1, -1.0));
        }
        // the same floating-point expressions as ex1.c: b_i = -15*h*h*2, r = -b
        r[i] = -(-15.0 * h * h * 2.0);
        lo[i] = (4.0 * PI * i as f64 * h - PI / 6.0).sin() / 2.0 - 2.0;
    }
    let name = if n == 100 {
        "ex1".to_string()
    } else {
        format!("ex1-n{n}")
    };
    build(
        name,
        n,
        &t,
        r,
        lo,
        vec![f64::INFINITY; n],
        provenance("permon-ex1", &[("n", n.to_string())], None),
    )
}

/// The journal-bearing problem (MINPACK-2 `dpjb`) discretised exactly as PETSc/TAO's and
/// PERMON's `jbearing2.c`: `min 1/2 v^T A v + B^T v`, `0 <= v <= 1000`, on the rectangle
/// `(0, 2 pi) x (0, 2 b)` with `nx x ny` interior nodes, `hx = 2 pi/(nx + 1)`,
/// `hy = 2 b/(ny + 1)`; unknown `k = i + nx j` is node `((i+1) hx, (j+1) hy)`. PERMON's tests use
/// `ecc = 0.1`, `b = 10` with `8 x 12` (`jbearing2_1`, `_4`) and `30 x 30` (`jbearing2_3`, `_6`);
/// the instance is named `jbearing2-<nx>x<ny>`.
///
/// With `p(xi) = (1 + ecc cos xi)^3`, `xi = (i+1) hx`, `h1 = hx hy`:
/// `t1 = h1 (2 p(xi) + p(xi + hx))/6`, `t2 = h1 (2 p(xi) + p(xi - hx))/6`,
/// `t3 = h1 (p(xi) + 2 p(xi + hx))/6`, `t4 = h1 (p(xi) + 2 p(xi - hx))/6`;
/// diagonal `(t1 + t2 + t3 + t4)/hx^2 + 2 (t1 + t2)/hy^2`; coupling to the node above and below
/// `-(t1 + t2)/hy^2`; coupling between `i` and `i + 1` in the same row
/// `-(t1 + t3)/hx^2 = -h1 (p(xi) + p(xi + hx)) / (2 hx^2)` (evaluated at node `i`, which makes
/// the matrix exactly symmetric; `jbearing2.c` evaluates the same quantity from both rows, equal
/// up to the rounding of `xi + hx`); Dirichlet neighbours are dropped.
/// `r = B`, `B_k = -ecc hx hy sin((i+1) hx)` (`QPSetRhsPlus`). The upper bound 1000 is
/// `jbearing2.c`'s `xu` (never active; MINPACK-2 has none).
///
/// Reference optima (TAO/PERMON, `jbearing2_1.out`, `_3.out`): `-0.183437` (8 x 12),
/// `-0.180302` (30 x 30). Errors: [`ProblemError::InvalidParameter`] for an empty grid,
/// `ecc` outside `[0, 1)` or `b <= 0`.
pub fn jbearing2(nx: usize, ny: usize, ecc: f64, b: f64) -> Result<Instance> {
    let g = "jbearing2";
    if nx == 0 || ny == 0 {
        return Err(invalid(
            g,
            "nx x ny",
            format!("{nx}x{ny}"),
            "needs nx, ny >= 1",
        ));
    }
    if !(0.0..1.0).contains(&ecc) {
        return Err(invalid(g, "ecc", ecc, "must lie in [0, 1)"));
    }
    if !(b > 0.0 && b.is_finite()) {
        return Err(invalid(g, "b", b, "must be positive"));
    }
    let hx = 2.0 * PI / (nx as f64 + 1.0);
    let hy = 2.0 * b / (ny as f64 + 1.0);
    let hxhy = hx * hy;
    let (hxhx, hyhy) = (1.0 / (hx * hx), 1.0 / (hy * hy));
    let p = |xi: f64| {
        let t = 1.0 + ecc * xi.cos();
        t * t * t
    };
    let n = nx * ny;
    let mut t = Vec::with_capacity(5 * n);
    let mut r = vec![0.0; n];
    let ehxhy = ecc * hx * hy;
    for i in 0..nx {
        let xi = (i as f64 + 1.0) * hx;
        let (pc, pp, pm) = (p(xi), p(xi + hx), p(xi - hx));
        let t1 = hxhy * (pc + pp + pc) / 6.0;
        let t2 = hxhy * (pc + pm + pc) / 6.0;
        let t3 = hxhy * (pc + pp + pp) / 6.0;
        let t4 = hxhy * (pc + pm + pm) / 6.0;
        let diag = hxhx * (t1 + t2 + t3 + t4) + hyhy * (t1 + t2 + t1 + t2);
        let vy = -hyhy * (t1 + t2);
        let vx = -hxhx * (t1 + t3);
        let bi = -ehxhy * xi.sin();
        for j in 0..ny {
            let k = i + nx * j;
            r[k] = bi;
            t.push((k, k, diag));
            if i + 1 < nx {
                t.push((k, k + 1, vx));
                t.push((k + 1, k, vx));
            }
            if j + 1 < ny {
                t.push((k, k + nx, vy));
                t.push((k + nx, k, vy));
            }
        }
    }
    build(
        format!("jbearing2-{nx}x{ny}"),
        n,
        &t,
        r,
        vec![0.0; n],
        vec![1000.0; n],
        provenance(
            "jbearing2",
            &[
                ("nx", nx.to_string()),
                ("ny", ny.to_string()),
                ("ecc", ecc.to_string()),
                ("b", b.to_string()),
            ],
            None,
        ),
    )
}

/// The P1 stiffness matrix of `-Laplace` on the unit square with `nx x ny` interior nodes on
/// the uniform right-triangle mesh (`hx = 1/(nx+1)`, `hy = 1/(ny+1)`), which is the 5-point
/// stencil `2 (hy/hx + hx/hy)` on the diagonal, `-hy/hx` between horizontal and `-hx/hy`
/// between vertical neighbours; unknown `k = i + nx j`.
fn unit_square_laplacian(nx: usize, ny: usize) -> Vec<(usize, usize, f64)> {
    let hx = 1.0 / (nx as f64 + 1.0);
    let hy = 1.0 / (ny as f64 + 1.0);
    let (ax, ay) = (hy / hx, hx / hy);
    let mut t = Vec::with_capacity(5 * nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            let k = i + nx * j;
            t.push((k, k, 2.0 * (ax + ay)));
            if i + 1 < nx {
                t.push((k, k + 1, -ax));
                t.push((k + 1, k, -ax));
            }
            if j + 1 < ny {
                t.push((k, k + nx, -ay));
                t.push((k + nx, k, -ay));
            }
        }
    }
    t
}

fn check_grid(generator: &str, nx: usize, ny: usize, c: f64) -> Result<()> {
    if nx == 0 || ny == 0 {
        return Err(invalid(
            generator,
            "nx x ny",
            format!("{nx}x{ny}"),
            "needs nx, ny >= 1",
        ));
    }
    if !c.is_finite() {
        return Err(invalid(generator, "c", c, "must be finite"));
    }
    Ok(())
}

/// Elastic-plastic torsion of a square bar (MINPACK-2 `dept`): minimise
/// `int_D 1/2 |grad v|^2 - c v` over `|v(x)| <= dist(x, boundary of D)`, `D = (0, 1)^2`, with
/// piecewise-linear elements on the uniform right-triangle mesh with `nx x ny` interior nodes.
/// The energy is `1/2 v^T N v + r^T v` with `N` the P1 stiffness matrix, which on this mesh is
/// the 5-point stencil (`2 (hy/hx + hx/hy)`, `-hy/hx`, `-hx/hy`), and
/// `r_k = -c hx hy` (each node carries the load of its six triangles, `6 (hx hy/2)/3`);
/// `lo_k = -d_k`, `hi_k = d_k`, `d_k = min(x, 1 - x, y, 1 - y)` at node
/// `((i+1) hx, (j+1) hy)`. MINPACK-2 uses `c = 5`. Named `torsion-<nx>x<ny>`.
/// Errors: [`ProblemError::InvalidParameter`] for an empty grid or a non-finite `c`.
pub fn torsion(nx: usize, ny: usize, c: f64) -> Result<Instance> {
    grid_box_qp("torsion", nx, ny, c, |x, y| {
        let d = x.min(1.0 - x).min(y).min(1.0 - y);
        (-d, d)
    })
}

/// The P1 box QP of a grid problem on `(0, 1)^2` shared by [`torsion`] and [`obstacle2d`]:
/// `N` the 5-point stencil, `r_k = -c hx hy`, and the bounds `(lo, hi) = bounds(x, y)` at
/// the interior node `(x, y)`. Named `<gname>-<nx>x<ny>`. Errors: those of `check_grid`.
fn grid_box_qp(
    gname: &str,
    nx: usize,
    ny: usize,
    c: f64,
    bounds: impl Fn(f64, f64) -> (f64, f64),
) -> Result<Instance> {
    check_grid(gname, nx, ny, c)?;
    let hx = 1.0 / (nx as f64 + 1.0);
    let hy = 1.0 / (ny as f64 + 1.0);
    let n = nx * ny;
    let mut lo = vec![0.0; n];
    let mut hi = vec![0.0; n];
    for j in 0..ny {
        for i in 0..nx {
            let (x, y) = ((i as f64 + 1.0) * hx, (j as f64 + 1.0) * hy);
            (lo[i + nx * j], hi[i + nx * j]) = bounds(x, y);
        }
    }
    build(
        format!("{gname}-{nx}x{ny}"),
        n,
        &unit_square_laplacian(nx, ny),
        vec![-c * hx * hy; n],
        lo,
        hi,
        provenance(
            gname,
            &[
                ("nx", nx.to_string()),
                ("ny", ny.to_string()),
                ("c", c.to_string()),
            ],
            None,
        ),
    )
}

/// A 2-D obstacle problem on `D = (0, 1)^2`: minimise `int_D 1/2 |grad v|^2 - c v` subject to
/// `psi_lo <= v <= psi_hi`, `v = 0` on the boundary, with the oscillating obstacles of
/// MINPACK-2's `dobs`, `psi_lo = s^3`, `psi_hi = s^2 + 0.02`, `s(x, y) = sin(9.2 pi x) sin(9.3 pi y)`
/// (so `psi_lo <= psi_hi` everywhere). Same P1 discretisation as [`torsion`]: `N` the 5-point
/// stencil, `r_k = -c hx hy`, bounds sampled at the nodes. Named `obstacle-<nx>x<ny>`.
/// Errors: [`ProblemError::InvalidParameter`] for an empty grid or a non-finite `c`.
pub fn obstacle2d(nx: usize, ny: usize, c: f64) -> Result<Instance> {
    grid_box_qp("obstacle", nx, ny, c, |x, y| {
        let s = (9.2 * PI * x).sin() * (9.3 * PI * y).sin();
        (s * s * s, s * s + 0.02)
    })
}

/// A random box QP together with its exact solution.
#[derive(Clone, Debug)]
pub struct RandomBoxQp {
    /// The instance (`N` dense SPD, stored sparse).
    pub instance: Instance,
    /// The unique minimiser `x*` (length `n`).
    pub solution: Vec<f64>,
    /// `f(x*)`.
    pub objective: f64,
    /// Indices of the components active at `x*` (on a bound, with a nonzero multiplier).
    pub active: Vec<usize>,
}

/// A dense random box QP with a prescribed spectrum, active-set fraction and known solution
/// (seeded, deterministic across platforms: [`crate::rng::SplitMix64`] and Box-Muller, no
/// library RNG).
///
/// Construction, in this order of random draws:
/// 1. `N = Q diag(lambda) Q^T`, `lambda_i = kappa^(-i/(n-1))` (so `lambda_max = 1`,
///    `lambda_min = 1/kappa`, condition number `kappa`), `Q` from modified Gram-Schmidt on an
///    `n x n` standard normal matrix (Haar distributed); `N` is symmetrised, `(M + M^T)/2`;
/// 2. bounds `lo_i = -1`, `hi_i = 1`, except `hi_i = +inf` for `i % 4 == 3` (one-sided rows);
/// 3. the active set: `round(active_fraction n)` indices drawn without replacement; an active
///    index sits at `lo` or (with probability 1/2, if `hi` is finite) at `hi`, with multiplier
///    `m_i` uniform in `[0.1, 1]`: `g*_i = m_i` at `lo`, `-m_i` at `hi` (strict complementarity);
///    a free index has `x*_i` uniform in `(-0.9, 0.9)` and `g*_i = 0`;
/// 4. `r = g* - N x*`, so that `x*` satisfies the KKT conditions; `N` SPD makes it the unique
///    minimiser, with `f* = 1/2 x*^T N x* + r^T x*`.
///
/// Cost `O(n^3)` (dense); meant for `n` up to a few hundred. Named
/// `random-box-n<n>-k<kappa>-a<fraction>-s<seed>`.
/// Errors: [`ProblemError::InvalidParameter`] for `n = 0`, `kappa < 1` or non-finite, or a
/// fraction outside `[0, 1]`.
pub fn random_box_qp(n: usize, kappa: f64, active_fraction: f64, seed: u64) -> Result<RandomBoxQp> {
    let gname = "random-box";
    if n == 0 {
        return Err(invalid(gname, "n", n, "must be at least 1"));
    }
    if !(kappa >= 1.0 && kappa.is_finite()) {
        return Err(invalid(gname, "kappa", kappa, "must be >= 1 and finite"));
    }
    if !(0.0..=1.0).contains(&active_fraction) {
        return Err(invalid(
            gname,
            "active_fraction",
            active_fraction,
            "must lie in [0, 1]",
        ));
    }
    let mut rng = SplitMix64::new(seed);
    // 1. Q by modified Gram-Schmidt on a Gaussian matrix (columns q_j, column-major)
    let mut q: Vec<f64> = (0..n * n).map(|_| rng.normal()).collect();
    for j in 0..n {
        for k in 0..j {
            let d: f64 = (0..n).map(|i| q[i + k * n] * q[i + j * n]).sum();
            for i in 0..n {
                q[i + j * n] -= d * q[i + k * n];
            }
        }
        let nrm: f64 = (0..n).map(|i| q[i + j * n].powi(2)).sum::<f64>().sqrt();
        for i in 0..n {
            q[i + j * n] /= nrm;
        }
    }
    let lambda: Vec<f64> = (0..n)
        .map(|i| {
            if n == 1 {
                1.0
            } else {
                kappa.powf(-(i as f64) / (n as f64 - 1.0))
            }
        })
        .collect();
    let mut m = vec![0.0; n * n];
    for c in 0..n {
        for rr in 0..=c {
            let v: f64 = (0..n)
                .map(|k| q[rr + k * n] * lambda[k] * q[c + k * n])
                .sum();
            m[rr + c * n] = v;
            m[c + rr * n] = v;
        }
    }
    // 2. bounds
    let lo = vec![-1.0; n];
    let hi: Vec<f64> = (0..n)
        .map(|i| if i % 4 == 3 { f64::INFINITY } else { 1.0 })
        .collect();
    // 3. active set (partial Fisher-Yates), solution and gradient at the solution
    let n_active = ((active_fraction * n as f64).round() as usize).min(n);
    let mut perm: Vec<usize> = (0..n).collect();
    for i in 0..n_active {
        let j = i + (rng.next_u64() % (n - i) as u64) as usize;
        perm.swap(i, j);
    }
    let mut is_active = vec![false; n];
    let mut active: Vec<usize> = perm[..n_active].to_vec();
    active.sort_unstable();
    for &i in &active {
        is_active[i] = true;
    }
    let mut x = vec![0.0; n];
    let mut g = vec![0.0; n];
    for i in 0..n {
        if is_active[i] {
            let upper = hi[i].is_finite() && rng.next_f64() < 0.5;
            let mult = 0.1 + 0.9 * rng.next_f64();
            if upper {
                x[i] = hi[i];
                g[i] = -mult;
            } else {
                x[i] = lo[i];
                g[i] = mult;
            }
        } else {
            x[i] = -0.9 + 1.8 * rng.next_f64();
        }
    }
    // 4. r = g* - N x*
    let mut r = g.clone();
    for c in 0..n {
        for rr in 0..n {
            r[rr] -= m[rr + c * n] * x[c];
        }
    }
    let n_mat = CscMatrix::from_dense_col_major(n, n, &m)?;
    let name = format!("random-box-n{n}-k{kappa}-a{active_fraction}-s{seed}");
    let instance = Instance::new(
        name,
        n_mat,
        r,
        ConstraintSet::Box { lo, hi },
        provenance(
            gname,
            &[
                ("n", n.to_string()),
                ("kappa", kappa.to_string()),
                ("active_fraction", active_fraction.to_string()),
            ],
            Some(seed),
        ),
        ValidationOptions::default(),
    )?;
    let objective = instance.objective(&x);
    Ok(RandomBoxQp {
        instance,
        solution: x,
        objective,
        active,
    })
}
