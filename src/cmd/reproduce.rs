//! `cpbench reproduce`: published experiments re-run by name
//! ([`cpbench_reproduce`]).

use crate::AnyError;
use clap::Args;
use cpbench_reproduce::{self as reproduce, Context, Verdict};
use std::path::PathBuf;

/// Arguments of `cpbench reproduce`.
#[derive(Args)]
pub struct ReproduceArgs {
    /// Recipe id (see --list).
    #[arg(required_unless_present = "list")]
    pub id: Option<String>,
    /// List the recipes: id, paper, what each regenerates, expected run time on 2 cores.
    #[arg(long)]
    pub list: bool,
    /// Output folder [default: results/reproduce/<id>, or results/reproduce/<id>-quick].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A reduced size that finishes in under a minute (what the tests run).
    #[arg(long)]
    pub quick: bool,
    /// Recompute what the folder already holds (otherwise completed runs are read back).
    #[arg(long)]
    pub rerun: bool,
    /// No progress messages.
    #[arg(long)]
    pub quiet: bool,
    /// Timed solves behind every time the recipe compares (their median; at least 1). A
    /// verdict by time is decided only with at least 3 and when the ratio clears its
    /// threshold by more than the measured spread.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true)]
    pub repeat: i64,
}

/// List, or run one recipe and print its comparison table's verdicts.
pub fn run(a: ReproduceArgs) -> Result<(), AnyError> {
    if a.list {
        let cwd = std::env::current_dir().unwrap_or_default();
        let (times, source) = reproduce::timings::known_timings(&cwd);
        println!(
            "{:<28} {:<10} {:<26} paper / regenerates",
            "id", "full", "quick (verdicts it decides)"
        );
        for r in reproduce::recipes() {
            let i = r.info();
            println!(
                "{:<28} {:<10} {:<26} {}\n{:<66} {}",
                i.id,
                reproduce::timings::cell(&times, i.id, "full"),
                reproduce::timings::cell(&times, i.id, "quick"),
                i.paper,
                "",
                i.regenerates
            );
        }
        println!(
            "\nWall times measured (release build, --repeat 3) as recorded in {source}; a run \
             into results/reproduce/<id>[-quick] refreshes its row. A quick run decides only \
             the verdicts counted; its reproduce.md says which and why the others are not \
             decided."
        );
        let other = reproduce::timings::other_machines(&times);
        if !other.is_empty() {
            println!(
                "Measured on another machine than this one ({}): scale accordingly.",
                other.join("; ")
            );
        }
        return Ok(());
    }
    let id = a.id.unwrap_or_default();
    let recipe = reproduce::find(&id)?;
    let ctx = Context {
        out: a
            .out
            .unwrap_or_else(|| reproduce::default_out_dir(&id, a.quick)),
        quick: a.quick,
        rerun: a.rerun,
        progress: !a.quiet,
        repeat: crate::cmd::args::at_least_one("--repeat", a.repeat, "timed solves")? as usize,
    };
    let done = reproduce::reproduce(recipe.as_ref(), &ctx)?;
    let cs = &done.outcome.comparisons;
    for c in cs {
        println!(
            "{:<24} {:<60} ours {}",
            c.verdict().as_str(),
            c.quantity,
            c.ours_text
        );
    }
    let count = |v: Verdict| cs.iter().filter(|c| c.verdict() == v).count();
    println!(
        "{id}: {} of {} published numbers matched, {} claims hold, {} not reproduced, {} not \
         decided; {} ({})",
        count(Verdict::Match),
        count(Verdict::Match) + count(Verdict::Mismatch),
        count(Verdict::ClaimHolds),
        count(Verdict::ClaimFails),
        count(Verdict::ClaimOpen),
        done.markdown.display(),
        reproduce::fmt_duration(done.wall_s)
    );
    Ok(())
}
