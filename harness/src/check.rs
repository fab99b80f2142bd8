//! The harness's own verdict on an answer: residuals recomputed from the instance data and the
//! returned `gamma` with a fresh product, never the solver's numbers or its status.

use cpbench_problems::linalg::norm2;
use cpbench_problems::{residuals, Instance, ResidualKind, Residuals};
use serde::{Deserialize, Serialize};

/// What counts as solved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckSpec {
    /// The residual compared with `tol` (default: relative natural map, 2-norm).
    pub residual: ResidualKind,
    /// Tolerance.
    pub tol: f64,
}

/// The verdict.
#[derive(Clone, Copy, Debug)]
pub struct Verdict {
    /// Recomputed residuals of the answer.
    pub residuals: Residuals,
    /// `true` when every residual is finite, the chosen residual is `<= tol`, and the answer is
    /// feasible to `tol` relative to its size (`dist(gamma, K) <= tol max(1, ||gamma||)`).
    pub success: bool,
}

/// Check `gamma` for `instance`.
pub fn check(instance: &Instance, gamma: &[f64], spec: CheckSpec) -> Verdict {
    if gamma.len() != instance.n() {
        return Verdict {
            residuals: Residuals {
                nat_map_rel_2: f64::NAN,
                ..Default::default()
            },
            success: false,
        };
    }
    let res = residuals(instance, gamma);
    let success = res.is_finite()
        && gamma.iter().all(|x| x.is_finite())
        && res.get(spec.residual) <= spec.tol
        && res.primal_feas <= spec.tol * norm2(gamma).max(1.0);
    Verdict {
        residuals: res,
        success,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpbench_problems::{ConstraintSet, CscMatrix, Provenance, ValidationOptions};

    fn lcp() -> Instance {
        // N = I, r = (1, -1): solution (0, 1)
        let m = CscMatrix::identity(2);
        Instance::new(
            "t",
            m,
            vec![1.0, -1.0],
            ConstraintSet::NonNegative,
            Provenance::default(),
            ValidationOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn check_accepts_the_solution_and_rejects_wrong_answers() {
        let spec = CheckSpec {
            residual: ResidualKind::NatMapRel2,
            tol: 1e-8,
        };
        let i = lcp();
        assert!(check(&i, &[0.0, 1.0], spec).success);
        // close but not within tolerance
        assert!(!check(&i, &[0.0, 1.0 + 1e-6], spec).success);
        // a zero natural map needs feasibility too: an infeasible point is rejected
        assert!(!check(&i, &[-1.0, 1.0], spec).success);
        // NaN and wrong length
        assert!(!check(&i, &[f64::NAN, 1.0], spec).success);
        assert!(!check(&i, &[0.0], spec).success);
    }
}
