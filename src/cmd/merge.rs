//! `cpbench merge`: join shard folders into one results folder.

use crate::AnyError;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `cpbench merge`.
#[derive(Args)]
pub struct MergeArgs {
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Shard folders (outputs of `cpbench run --shard i/n`).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Skip the plots.
    #[arg(long)]
    pub no_plots: bool,
}

/// Merge and print the number of rows.
pub fn run(a: MergeArgs) -> Result<(), AnyError> {
    let rows = cpbench_harness::merge::merge(&a.out, &a.dirs, !a.no_plots)?;
    println!(
        "merged {} rows from {} folders into {}",
        rows.len(),
        a.dirs.len(),
        a.out.display()
    );
    Ok(())
}
