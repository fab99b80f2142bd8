//! The interior start point (see the module docs of [`super`]): `x` at distance
//! `theta_x = ||r||_inf / mean(diag N)` inside every bound (`x_n = theta_x`, `x_t = 0` in a
//! cone), `z = theta_z e` with `theta_z = ||r||_inf`.

use super::constraints::ConicForm;
use cpbench_problems::{ConicPiece, ConstraintSet};

/// The scales `(theta_x, theta_z)` of the start point from `diag N` and `r` (`(1, mean diag)`
/// when `r = 0`; a zero diagonal counts as mean 1).
pub(super) fn thetas(diag: &[f64], r: &[f64]) -> (f64, f64) {
    let n = diag.len();
    let r_inf = cpbench_problems::linalg::norm_inf(r);
    let mean_diag = {
        let d: f64 = diag.iter().map(|x| x.abs()).sum::<f64>() / n.max(1) as f64;
        if d > 0.0 {
            d
        } else {
            1.0
        }
    };
    if r_inf > 0.0 {
        (r_inf / mean_diag, r_inf)
    } else {
        (1.0, mean_diag)
    }
}

/// The primal start `x` (length `n`): `theta_x` inside each bound (half the gap of a narrower
/// box), fixed variables at their value, `x_n = theta_x` and `x_t = 0` on each contact.
pub(super) fn start_x(set: &ConstraintSet, n: usize, theta_x: f64) -> Vec<f64> {
    let mut x = vec![0.0; n];
    for p in set.conic_pieces(n) {
        match p {
            ConicPiece::HalfLine { j } => x[j] = theta_x,
            ConicPiece::Interval { j, lo: l, hi: h } => {
                x[j] = if l == h {
                    l
                } else {
                    match (l.is_finite(), h.is_finite()) {
                        (true, true) => l + (0.5 * (h - l)).min(theta_x),
                        (true, false) => l + theta_x,
                        (false, true) => h - theta_x,
                        (false, false) => 0.0,
                    }
                };
            }
            ConicPiece::Cone { b, .. } | ConicPiece::FrictionPyramid { b, .. } => x[b] = theta_x,
        }
    }
    x
}

/// The dual start `z = theta_z e` (`e`: 1 on each half-line row, `(1, 0, 0)` on each cone).
pub(super) fn start_z(form: &ConicForm, theta_z: f64) -> Vec<f64> {
    let m = form.m_rows();
    let mut z = vec![0.0; form.dim()];
    z[..m].fill(theta_z);
    for c in 0..form.cones.len() {
        z[m + 3 * c] = theta_z;
    }
    z
}
