//! The plain-text summary table `cpbench run` prints on the terminal.

use crate::results::SummaryRow;
use cpbench_problems::ResidualKind;

/// A plain-text table of the summary for the terminal: instance, solver, profile, status,
/// check, iterations, residual, time.
pub fn format_table(rows: &[SummaryRow]) -> String {
    let mut s = format!(
        "{:<34} {:<7} {:<8} {:<15} {:<7} {:>7} {:>10} {:>10}\n",
        "instance", "solver", "profile", "status", "success", "iter", "residual", "time [s]"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<34} {:<7} {:<8} {:<15} {:<7} {:>7} {:>10.2e} {:>10.4}\n",
            r.instance,
            r.solver,
            r.profile,
            r.status,
            if r.success { "yes" } else { "no" },
            r.iterations,
            r.residuals
                .get(ResidualKind::parse(&r.check_residual).unwrap_or_default()),
            r.time_s
        ));
    }
    s
}
