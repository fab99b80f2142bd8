//! The harness's own verdict on an answer: residuals recomputed from the instance data and the
//! returned `gamma` with a fresh product, never the solver's numbers or its status.

use cpbench_problems::linalg::norm2;
use cpbench_problems::{residuals, Fidelity, Instance, ResidualKind, Residuals};
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
#[derive(Clone, Debug)]
pub struct Verdict {
    /// Recomputed residuals of the answer.
    pub residuals: Residuals,
    /// `true` when every residual is finite, the chosen residual is `<= tol`, and the answer is
    /// feasible to `tol` relative to its size (`dist(gamma, K) <= tol max(1, ||gamma||)`).
    pub success: bool,
    /// When `success` is false: which of the three rules failed and by how much
    /// (`check: nat_map_rel_2 = 3.1e-6 > tol 1e-6`), every failing rule, `; `-separated.
    pub reason: Option<String>,
    /// The answer's physical-fidelity criteria ([`cpbench_problems::fidelity()`]; NaN without
    /// friction). Reported, not part of the verdict.
    pub fidelity: Fidelity,
}

impl Verdict {
    /// The verdict on a run that ended with `status`: a run that reached its time budget
    /// (`max_time`) is not a success even when its answer passes (a driven solver that never
    /// reported an iterate returns whenever it likes: its time is past the budget every other
    /// solver was held to). Our own solvers reach `max_time` only with a failing answer, so
    /// for them this changes nothing.
    pub fn for_status(mut self, status: &str) -> Verdict {
        if status == "max_time" && self.success {
            self.success = false;
            self.reason = Some(
                "check: the run is past its time budget (status max_time): an answer returned \
                 after the budget does not count"
                    .into(),
            );
        }
        self
    }
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
            fidelity: Fidelity::NAN,
            reason: Some(format!(
                "check: the answer has {} entries, the instance {}",
                gamma.len(),
                instance.n()
            )),
        };
    }
    let res = residuals(instance, gamma);
    let mut why: Vec<String> = Vec::new();
    let bad = gamma.iter().filter(|x| !x.is_finite()).count();
    if bad > 0 {
        why.push(format!("check: {bad} non-finite entries in the answer"));
    } else if !res.is_finite() {
        why.push("check: a residual of the answer is not finite".into());
    }
    let value = res.get(spec.residual);
    // NaN fails too: only a value below the tolerance passes
    if value.is_nan() || value > spec.tol {
        why.push(format!(
            "check: {} = {value:.3e} > tol {:.1e}",
            spec.residual.as_str(),
            spec.tol
        ));
    }
    let size = norm2(gamma).max(1.0);
    let feas_tol = spec.tol * size;
    if res.primal_feas.is_nan() || res.primal_feas > feas_tol {
        why.push(format!(
            "check: primal infeasible: dist(gamma, K) = {:.3e} > tol max(1, ||gamma||) = {:.3e}",
            res.primal_feas,
            spec.tol * size
        ));
    }
    Verdict {
        residuals: res,
        fidelity: cpbench_problems::fidelity(instance, gamma),
        success: why.is_empty(),
        reason: (!why.is_empty()).then(|| why.join("; ")),
    }
}
