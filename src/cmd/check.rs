//! `cpbench check DIR --baseline FILE`: regression test of solver accuracy against a committed
//! baseline; exit code 1 when anything regressed. Regressions are printed first, each naming
//! any changed setting; notes and improvements are one summary line (`--verbose`: every row).
//! Rows of the run the baseline lacks are listed first; a failing one fails the check unless
//! `--allow-new`.

use crate::AnyError;
use clap::Args;
use cpbench_harness::regression::{
    compare, failed, format_comparison, format_new_rows, new_row_fails, new_rows, read_baseline,
    write_baseline, RegressionOptions,
};
use cpbench_harness::results::read_summary;
use cpbench_harness::HarnessError;
use std::path::PathBuf;

/// Arguments of `cpbench check`.
#[derive(Args)]
pub struct CheckArgs {
    /// Results folder of `cpbench run`.
    pub dir: PathBuf,
    /// Baseline CSV (e.g. results/baselines/default.csv).
    #[arg(long)]
    pub baseline: PathBuf,
    /// Rewrite the baseline from DIR instead of checking.
    #[arg(long)]
    pub update: bool,
    /// Allowed growth factor of the checked residual.
    #[arg(long, default_value_t = 10.0)]
    pub residual_factor: f64,
    /// Allowed relative growth of the iteration count.
    #[arg(long, default_value_t = 0.10)]
    pub iter_growth: f64,
    /// Allowed absolute growth of the iteration count on top of the relative one.
    #[arg(long, default_value_t = 2)]
    pub iter_slack: u64,
    /// List every improved row and every note (changed settings, instance data, iteration
    /// drift within thresholds) instead of one summary line.
    #[arg(long, short)]
    pub verbose: bool,
    /// Accept failing rows that the baseline lacks (new variants, instances or profiles):
    /// they are still listed, but do not fail the check.
    #[arg(long)]
    pub allow_new: bool,
}

/// Compare (or update); `Ok(false)` when a regression was found.
pub fn run(a: CheckArgs) -> Result<bool, AnyError> {
    let rows = read_summary(&a.dir.join("summary.csv"))?;
    if a.update {
        write_baseline(&a.baseline, &rows)?;
        println!("wrote {} rows to {}", rows.len(), a.baseline.display());
        return Ok(true);
    }
    if !a.baseline.exists() {
        return Err(HarnessError::Invalid(format!(
            "--baseline {}: no such file; create it from this run with `cpbench check {} --baseline {} --update`",
            a.baseline.display(),
            a.dir.display(),
            a.baseline.display()
        ))
        .into());
    }
    let base = read_baseline(&a.baseline)?;
    let opts = RegressionOptions {
        residual_factor: a.residual_factor,
        iter_growth: a.iter_growth,
        iter_slack: a.iter_slack,
    };
    let cmp = compare(&base, &rows, opts);
    let new = new_rows(&base, &rows);
    print!("{}", format_new_rows(&new, a.allow_new));
    print!("{}", format_comparison(&cmp, a.verbose));
    let new_failed = !a.allow_new && new.iter().any(new_row_fails);
    Ok(!failed(&cmp) && !new_failed)
}
