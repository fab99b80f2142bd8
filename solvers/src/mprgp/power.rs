//! The power method of PERMON's `MatGetMaxEigenvalue` (used by its MPGP to set
//! the expansion step), with counted products: start from the all-ones vector `v`, estimate
//! `lambda_k = v^T N v / v^T v` (the Rayleigh quotient), stop when
//! `|lambda_k - lambda_{k-1}| / |lambda_k| < rtol` or after `max_iter` products, else
//! `v <- N v / ||v||`. PERMON's defaults are `rtol = 1e-4`, `max_iter = 50`.
//!
//! The Rayleigh quotient never exceeds `lambda_max(N)`; stopped early it underestimates it, which
//! makes the fixed expansion step `c / lambda` longer than `c / lambda_max`.

use crate::problem::Problem;
use cpbench_problems::linalg::dot;

/// Estimate `lambda_max(N)` into `(lambda, products)`. `v`, `av` are scratch vectors of length
/// `n` (overwritten). If the all-ones vector lies in the null space of `N` (`lambda_1 = 0`), the
/// iteration restarts once from a fixed non-constant vector (PERMON draws a random one); a
/// zero matrix gives `lambda = 0`.
pub(crate) fn power_method(
    problem: &Problem,
    v: &mut [f64],
    av: &mut [f64],
    max_iter: usize,
    rtol: f64,
) -> (f64, u64) {
    v.iter_mut().for_each(|x| *x = 1.0);
    let mut lam = 0.0f64;
    let mut products = 0u64;
    let mut restarted = false;
    let mut i = 0;
    while i < max_iter {
        i += 1;
        problem.matvec(v, av);
        products += 1;
        let vv = dot(v, v);
        let lam_new = if vv > 0.0 { dot(v, av) / vv } else { 0.0 };
        if lam_new < f64::EPSILON && !restarted {
            // hit the null space: restart from a fixed non-constant vector
            restarted = true;
            for (k, x) in v.iter_mut().enumerate() {
                *x = ((k * 7919) % 104_729) as f64 / 104_729.0 - 0.5;
            }
            lam = 0.0;
            continue;
        }
        let relerr = (lam_new - lam).abs() / lam_new.abs();
        lam = lam_new;
        if !(relerr >= rtol) {
            break;
        }
        let s = 1.0 / vv.sqrt();
        for (x, y) in v.iter_mut().zip(av.iter()) {
            *x = y * s;
        }
    }
    (lam.max(0.0), products)
}
