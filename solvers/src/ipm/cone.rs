//! Jordan algebra, Nesterov-Todd scaling and step-to-boundary of the cones the interior point
//! works in: the nonnegative half-line and the second-order (Lorentz) cone of dimension 3,
//! `Q = {(y0, y1, y2) : y0 >= ||(y1, y2)||}`.
//!
//! Source: L. Vandenberghe, "The CVXOPT linear and quadratic cone program solvers" (2010),
//! sections 2-3 (Jordan product `x o y = (x^T y, x0 y1 + y0 x1)`, identity `e = (1, 0, 0)`,
//! NT scaling `W z = W^-1 s = lambda`); Nesterov & Todd, "Self-scaled barriers and
//! interior-point methods for convex programming", Math. Oper. Res. 22 (1997).

/// `J`-norm `sqrt(y0^2 - ||y1||^2)` of a 3-vector, computed as `sqrt((y0 - t)(y0 + t))` to
/// keep relative accuracy near the boundary. Negative or NaN outside the cone interior.
pub(crate) fn jnorm(y: &[f64; 3]) -> f64 {
    let t = (y[1] * y[1] + y[2] * y[2]).sqrt();
    ((y[0] - t) * (y[0] + t)).sqrt()
}

/// Jordan square `y o y = (||y||^2, 2 y0 y1)`.
pub fn jsquare(y: &[f64; 3]) -> [f64; 3] {
    [
        y[0] * y[0] + y[1] * y[1] + y[2] * y[2],
        2.0 * y[0] * y[1],
        2.0 * y[0] * y[2],
    ]
}

/// Jordan product `x o y = (x^T y, x0 y1 + y0 x1)`.
pub fn jprod(x: &[f64; 3], y: &[f64; 3]) -> [f64; 3] {
    [
        x[0] * y[0] + x[1] * y[1] + x[2] * y[2],
        x[0] * y[1] + y[0] * x[1],
        x[0] * y[2] + y[0] * x[2],
    ]
}

/// Jordan division: the `v` with `lambda o v = r`, for `lambda` in the interior of `Q`:
/// `v0 = (lambda0 r0 - lambda1^T r1) / det`, `v1 = (r1 - v0 lambda1) / lambda0`,
/// `det = lambda0^2 - ||lambda1||^2`.
pub fn jdiv(lambda: &[f64; 3], r: &[f64; 3]) -> [f64; 3] {
    let det = jnorm(lambda).powi(2);
    let v0 = (lambda[0] * r[0] - lambda[1] * r[1] - lambda[2] * r[2]) / det;
    [
        v0,
        (r[1] - v0 * lambda[1]) / lambda[0],
        (r[2] - v0 * lambda[2]) / lambda[0],
    ]
}

/// Nesterov-Todd scaling of one 3-dimensional second-order cone block: the symmetric
/// `W = eta [[w0, w1^T], [w1, I + w1 w1^T / (1 + w0)]]` with `W z = W^-1 s` (Vandenberghe
/// 2010, eq. (31)-(33)), for `s`, `z` in the interior of `Q`.
#[derive(Clone, Copy, Debug)]
pub struct SocScaling {
    eta: f64,
    w: [f64; 3],
}

impl SocScaling {
    /// The scaling of `(s, z)`; `None` if either is not in the interior of `Q`.
    pub fn new(s: &[f64; 3], z: &[f64; 3]) -> Option<Self> {
        let sn = jnorm(s);
        let zn = jnorm(z);
        if !(sn > 0.0 && zn > 0.0 && s[0] > 0.0 && z[0] > 0.0) {
            return None;
        }
        let sb = [s[0] / sn, s[1] / sn, s[2] / sn];
        let zb = [z[0] / zn, z[1] / zn, z[2] / zn];
        let gamma = ((1.0 + sb[0] * zb[0] + sb[1] * zb[1] + sb[2] * zb[2]) / 2.0).sqrt();
        let w = [
            (sb[0] + zb[0]) / (2.0 * gamma),
            (sb[1] - zb[1]) / (2.0 * gamma),
            (sb[2] - zb[2]) / (2.0 * gamma),
        ];
        Some(Self {
            eta: (sn / zn).sqrt(),
            w,
        })
    }

    /// `W v`.
    pub fn apply(&self, v: &[f64; 3]) -> [f64; 3] {
        self.apply_signed(v, 1.0, self.eta)
    }

    /// `W^-1 v`.
    pub fn apply_inv(&self, v: &[f64; 3]) -> [f64; 3] {
        self.apply_signed(v, -1.0, 1.0 / self.eta)
    }

    fn apply_signed(&self, v: &[f64; 3], sign: f64, scale: f64) -> [f64; 3] {
        let w = &self.w;
        let w1v1 = w[1] * v[1] + w[2] * v[2];
        let c = w1v1 / (1.0 + w[0]);
        [
            scale * (w[0] * v[0] + sign * w1v1),
            scale * (sign * v[0] * w[1] + v[1] + c * w[1]),
            scale * (sign * v[0] * w[2] + v[2] + c * w[2]),
        ]
    }

    /// `W^-2` as a dense symmetric 3x3 matrix (row major).
    pub fn inv_squared(&self) -> [[f64; 3]; 3] {
        let mut m = [[0.0; 3]; 3];
        for (j, col) in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
            .iter()
            .enumerate()
        {
            let c = self.apply_inv(&self.apply_inv(col));
            for i in 0..3 {
                m[i][j] = c[i];
            }
        }
        m
    }
}

/// Largest `alpha >= 0` with `y + alpha dy` in `Q` (for `y` in its interior), `+inf` if the
/// whole ray stays inside: the smallest positive root of
/// `(y0 + a dy0)^2 - ||y1 + a dy1||^2 = 0`, solved in the cancellation-free form.
pub fn soc_max_step(y: &[f64; 3], dy: &[f64; 3]) -> f64 {
    let a = dy[0] * dy[0] - dy[1] * dy[1] - dy[2] * dy[2];
    let b = y[0] * dy[0] - y[1] * dy[1] - y[2] * dy[2];
    let c = jnorm(y).powi(2);
    if !(c > 0.0) {
        return 0.0;
    }
    // The ray leaves Q only if dy is not in Q.
    let t = (dy[1] * dy[1] + dy[2] * dy[2]).sqrt();
    if dy[0] >= t {
        return f64::INFINITY;
    }
    // Here dy is not in Q: either a < 0 (then a c < 0 and the discriminant is positive), or
    // a >= 0 with dy0 < -||dy1||, dy in -Q: the ray passes from Q's interior towards -Q and
    // must cross Q's boundary, where f = 0, so the exact discriminant is >= 0. It is 0 when
    // y and dy are collinear (y on the axis, dy along -e: a resting contact with no
    // tangential load), where rounding can make it negative by an ulp; a negative value is
    // rounding and counts as 0 (the double root -b / a). Reading it as "never leaves" let a
    // full step jump out of the cone (ipm's stalls on resting columns, issue 33).
    let disc = (b * b - a * c).max(0.0);
    let sq = disc.sqrt();
    let q = -(b + if b >= 0.0 { sq } else { -sq });
    let mut best = f64::INFINITY;
    for root in [q / a, c / q] {
        if root.is_finite() && root > 0.0 && root < best {
            best = root;
        }
    }
    best
}

/// Largest `alpha >= 0` with `y + alpha dy >= 0` (for `y > 0`), `+inf` if `dy >= 0`.
pub fn nonneg_max_step(y: f64, dy: f64) -> f64 {
    if dy < 0.0 {
        -y / dy
    } else {
        f64::INFINITY
    }
}
