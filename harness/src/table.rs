//! The plain-text summary table `cpbench run` prints on the terminal.

use crate::results::SummaryRow;
use cpbench_problems::ResidualKind;

/// A plain-text table of the summary for the terminal: instance, solver (variant label),
/// profile, status, check, iterations, residual, time; rows that did not run to an answer
/// (`unsupported`, `numerical_error`, `load_error`) end with their reason, cut to 160
/// characters. Column widths follow the longest entry.
pub fn format_table(rows: &[SummaryRow]) -> String {
    let w = |f: fn(&SummaryRow) -> &str, head: &str| {
        rows.iter()
            .map(|r| f(r).chars().count())
            .chain([head.len()])
            .max()
            .unwrap_or(0)
    };
    let wi = w(|r| &r.instance, "instance");
    let ws = w(|r| &r.solver, "solver");
    let wp = w(|r| &r.profile, "profile");
    let mut s = format!(
        "{:<wi$} {:<ws$} {:<wp$} {:<15} {:<7} {:>7} {:>10} {:>10}\n",
        "instance", "solver", "profile", "status", "success", "iter", "residual", "time [s]"
    );
    for r in rows {
        let residual = ResidualKind::parse(&r.check_residual)
            .map(|k| r.residuals.get(k))
            .unwrap_or(f64::NAN);
        let mut line = format!(
            "{:<wi$} {:<ws$} {:<wp$} {:<15} {:<7} {:>7} {:>10.2e} {:>10.4}",
            r.instance,
            r.solver,
            r.profile,
            r.status,
            if r.success { "yes" } else { "no" },
            r.iterations,
            residual,
            r.time_s
        );
        if matches!(
            r.status.as_str(),
            "unsupported" | "numerical_error" | "load_error" | "ray_termination"
        ) && !r.message.is_empty()
        {
            let reason: String = r.message.chars().take(160).collect();
            line.push_str(&format!("  ({reason})"));
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// An aligned plain-text table: `head` and `rows` (cells in `head`'s order), columns as wide as
/// their longest entry, one space apart; the first `left` columns left-aligned (names), the
/// others right-aligned (numbers).
pub fn aligned<S: AsRef<str>>(head: &[&str], rows: &[Vec<S>], left: usize) -> String {
    let width: Vec<usize> = (0..head.len())
        .map(|k| {
            rows.iter()
                .filter_map(|c| c.get(k))
                .map(|c| c.as_ref().chars().count())
                .fold(head[k].len(), usize::max)
        })
        .collect();
    let mut s = String::new();
    let mut line = |items: &mut dyn Iterator<Item = &str>| {
        let cells: Vec<String> = items
            .zip(&width)
            .enumerate()
            .map(|(k, (x, &w))| {
                if k < left {
                    format!("{x:<w$}")
                } else {
                    format!("{x:>w$}")
                }
            })
            .collect();
        s.push_str(cells.join(" ").trim_end());
        s.push('\n');
    };
    line(&mut head.iter().copied());
    for r in rows {
        line(&mut r.iter().map(AsRef::as_ref));
    }
    s
}

/// A Markdown table: the header line, the rule, one line per row (cells in `head`'s order).
pub fn markdown<S: AsRef<str>>(head: &[&str], rows: &[Vec<S>]) -> String {
    let mut s = format!("| {} |\n|{}\n", head.join(" | "), "---|".repeat(head.len()));
    for r in rows {
        let cells: Vec<&str> = r.iter().map(AsRef::as_ref).collect();
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    s
}
