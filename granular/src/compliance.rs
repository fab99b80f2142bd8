//! Compliant contact: the diagonal compliance `R` and the modified constant term of a step's
//! contact problem, set from a contact stiffness and damping the way Drake's SAP and MuJoCo do
//! (issue 33; docs/formulation.md, "Compliant contact"). The problem of a step becomes
//! `(N + R, r~)` ([`cpbench_problems::Instance::with_compliance`]); both mappings give the
//! rigid problem of the stepper back in a limit, said per variant.
//!
//! Our rigid step (stepper.rs) has `u = N gamma + r`, `r_c = (Phi_c / h, 0, 0) + D_c^T v_free`
//! (`Phi` the signed gap, m; `h` the step, s). Per contact `c` with diagonal block `W_cc` of `N`
//! and start velocity `v0_c = D_c^T v(t)`:
//!
//! - **SAP** (Castro, Permenter & Han 2022, "An unconstrained convex formulation of compliant
//!   contact", IEEE T-RO 39(2), sec. V and eq. 19-20): normal compliance
//!   `R_n = 1 / (h k (h + tau_d))` (`k` the contact stiffness, N/m; `tau_d` the linear
//!   dissipation time scale, s), tangential `R_t = sigma w_c` with `w_c = ||W_cc||_F / bs` (the
//!   RMS norm of the block, SAP's diagonal approximation; `sigma` dimensionless, SAP's default
//!   1e-3), and the normal stabilisation velocity `v_hat_n = -Phi / (h + tau_d)` in place of our
//!   `-Phi / h`: `r~_n = r_n - Phi / h + Phi / (h + tau_d)`. Limit: `k -> inf`, `tau_d = 0`,
//!   `sigma -> 0` gives `R -> 0`, `r~ = r`.
//! - **MuJoCo** (Todorov 2014; MuJoCo's documentation, "Computation", soft constraints): a
//!   constant impedance `d` in (0, 1) (`solimp` with `dmin = dmax = d`), `solref =
//!   (timeconst, dampratio)`: `R_i = (1 - d) / d N_ii` on every row (MuJoCo approximates
//!   `N_ii`, we take it exactly; `impratio = 1`), reference acceleration `a_ref = -B v - K d Phi`
//!   with `B = 2 / (d timeconst)`, `K = 1 / (d^2 timeconst^2 dampratio^2)` (the friction rows
//!   have no position term). The acceleration-level problem `(A + R) f + a0 - a_ref` times `h`
//!   with `gamma = h f`, `A = N` and `h a0 = v_free - v0` gives
//!   `r~_k = v_free,k - (1 - h B) v0_k + [k = n] h K d Phi`. Limit: `timeconst = 2 h`,
//!   `dampratio = 1/2`, `d -> 1` gives `R -> 0`, `r~ = r`.

use crate::{invalid, Result};

/// A contact compliance model (module documentation), the same for every contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContactCompliance {
    /// Drake SAP's linear compliant contact.
    Sap {
        /// Contact stiffness `k` (N/m), `> 0`.
        stiffness: f64,
        /// Dissipation time scale `tau_d` (s), `>= 0`.
        dissipation: f64,
        /// Tangential regularisation `sigma` (dimensionless), `>= 0`.
        sigma: f64,
    },
    /// MuJoCo's soft constraints with a constant impedance.
    Mujoco {
        /// Impedance `d` in (0, 1).
        impedance: f64,
        /// `solref` time constant (s), `> 0`.
        timeconst: f64,
        /// `solref` damping ratio (dimensionless), `> 0`.
        dampratio: f64,
    },
}

/// The range a compliance parameter must lie in.
#[derive(Clone, Copy, Debug)]
enum Range {
    Positive,
    NonNegative,
    /// The open interval (0, 1).
    Unit,
}

/// SAP's default tangential regularisation `sigma` (Castro et al. 2022, sec. V-B).
pub const SAP_SIGMA: f64 = 1e-3;

impl ContactCompliance {
    /// Parse `sap:K,TAU_D[,SIGMA]` or `mujoco:D,TIMECONST,DAMPRATIO` (numbers as Rust reads
    /// them). Errors: a message naming the part that is wrong and what was expected.
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        let (model, rest) = s.split_once(':').ok_or_else(|| {
            format!("'{s}': expected sap:K,TAU_D[,SIGMA] or mujoco:D,TIMECONST,DAMPRATIO")
        })?;
        let nums = rest
            .split(',')
            .map(|x| {
                x.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("'{s}': '{x}' is not a number"))
            })
            .collect::<std::result::Result<Vec<f64>, String>>()?;
        let c = match (model, &nums[..]) {
            ("sap", &[k, tau]) => Self::Sap {
                stiffness: k,
                dissipation: tau,
                sigma: SAP_SIGMA,
            },
            ("sap", &[k, tau, sigma]) => Self::Sap {
                stiffness: k,
                dissipation: tau,
                sigma,
            },
            ("mujoco", &[d, tc, z]) => Self::Mujoco {
                impedance: d,
                timeconst: tc,
                dampratio: z,
            },
            ("sap", _) => return Err(format!("'{s}': sap takes K,TAU_D or K,TAU_D,SIGMA")),
            ("mujoco", _) => return Err(format!("'{s}': mujoco takes D,TIMECONST,DAMPRATIO")),
            (m, _) => return Err(format!("'{s}': unknown model '{m}' (sap or mujoco)")),
        };
        c.validate().map_err(|e| format!("'{s}': {e}"))?;
        Ok(c)
    }

    /// The model's name and its three parameters: name in provenance records, name in
    /// errors, value, and the range it must lie in.
    fn params(&self) -> (&'static str, [(&'static str, &'static str, f64, Range); 3]) {
        use Range::{NonNegative, Positive, Unit};
        match *self {
            Self::Sap {
                stiffness,
                dissipation,
                sigma,
            } => (
                "sap",
                [
                    ("k", "compliance stiffness", stiffness, Positive),
                    ("tau_d", "compliance dissipation", dissipation, NonNegative),
                    ("sigma", "compliance sigma", sigma, NonNegative),
                ],
            ),
            Self::Mujoco {
                impedance,
                timeconst,
                dampratio,
            } => (
                "mujoco",
                [
                    ("d", "compliance impedance", impedance, Unit),
                    ("timeconst", "compliance timeconst", timeconst, Positive),
                    ("dampratio", "compliance dampratio", dampratio, Positive),
                ],
            ),
        }
    }

    /// Errors: [`crate::GranularError::InvalidParameter`] for a value out of its range.
    pub fn validate(&self) -> Result<()> {
        for (_, name, x, range) in self.params().1 {
            let (ok, why) = match range {
                Range::Positive => (x.is_finite() && x > 0.0, "must be finite and > 0"),
                Range::NonNegative => (x.is_finite() && x >= 0.0, "must be finite and >= 0"),
                Range::Unit => (x > 0.0 && x < 1.0, "must be in (0, 1)"),
            };
            if !ok {
                return Err(invalid(name, x, why));
            }
        }
        Ok(())
    }

    /// Whether the mapping needs the contacts' start velocities `v0 = D^T v(t)` (MuJoCo's).
    pub fn needs_start_velocity(&self) -> bool {
        matches!(self, Self::Mujoco { .. })
    }

    /// One contact's compliance `rc` (length `bs`, written) and constant term `r` (length `bs`,
    /// the rigid one on entry, normal first) for the step `h` (s), gap `phi` (m), diagonal
    /// block `w` of `N` (row-major `bs x bs` in the first `bs^2` entries) and start velocity
    /// `v0` (length `bs`; ignored by SAP).
    pub fn apply(&self, h: f64, phi: f64, w: &[f64], v0: &[f64], r: &mut [f64], rc: &mut [f64]) {
        let bs = r.len();
        match *self {
            Self::Sap {
                stiffness,
                dissipation,
                sigma,
            } => {
                let frob = w[..bs * bs].iter().map(|x| x * x).sum::<f64>().sqrt();
                rc[0] = 1.0 / (h * stiffness * (h + dissipation));
                for x in &mut rc[1..bs] {
                    *x = sigma * frob / bs as f64;
                }
                r[0] += phi / (h + dissipation) - phi / h;
            }
            Self::Mujoco {
                impedance: d,
                timeconst,
                dampratio,
            } => {
                let b = 2.0 / (d * timeconst);
                let k = 1.0 / (d * d * timeconst * timeconst * dampratio * dampratio);
                for i in 0..bs {
                    rc[i] = (1.0 - d) / d * w[i * bs + i];
                    r[i] -= (1.0 - h * b) * v0[i];
                }
                r[0] += h * k * d * phi - phi / h;
            }
        }
    }

    /// A one-line description for provenance records (`sap k=1e4 tau_d=0.01 sigma=0.001`).
    pub fn describe(&self) -> String {
        let (model, params) = self.params();
        let kv: Vec<String> = params
            .iter()
            .map(|(k, _, v, _)| format!("{k}={v}"))
            .collect();
        format!("{model} {}", kv.join(" "))
    }
}
