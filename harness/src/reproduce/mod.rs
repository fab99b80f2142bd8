//! Published experiments re-run by name: `cpbench reproduce <id>`.
//!
//! A recipe ([`Recipe`]) is data plus a little code: the instances or the scene, the solvers
//! with the paper's parameters, the residual and tolerance, the caps, and the figures to draw.
//! [`reproduce`] runs one into an output folder and writes, besides the usual run files
//! (`summary.csv`, `traces/`, `manifest.json`: those of [`crate::run`] for recipes that solve
//! instances, those of [`sim`] for recipes that run the time stepper), three files of its own:
//!
//! - `reproduce.md`: the set-up, our numbers beside the paper's ([`Comparison`]), whether each
//!   published number is matched within its stated tolerance (10 % where the paper gives a
//!   number and no other tolerance) or, for a qualitative claim, our measurement beside the
//!   claim labelled "claim" (never an invented number), the figures, and the command that
//!   regenerates the folder;
//! - `comparison.csv`: the same comparisons, one row each (`quantity, ours, published, kind,
//!   tolerance, verdict, source`), for tests and scripts;
//! - `reproduce.json`: recipe id, paper, size (`full` or `quick`), git revision, machine, start
//!   time and wall time.
//!
//! `--quick` runs a reduced size that finishes in under a minute (the tests use it); the full
//! size is the paper's, or the largest this machine affords where the recipe says so. Runs
//! resume: what a folder already holds (summary rows, completed simulation traces) is reused
//! unless [`Context::rerun`] is set. One writer per folder ([`crate::lock::FolderLock`]).
//!
//! The recipes ([`recipes`]) and their sources are listed by `cpbench reproduce --list`.

use crate::error::{HarnessError, Result};
use crate::fsutil::{write_atomic, write_json_atomic};
use crate::manifest::{git_revision, machine, now_utc};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub mod acary;
pub mod cannonball;
pub mod formulations;
pub mod mazhar;
pub mod melanz;
pub mod permon;
pub mod sim;
pub mod sliding;
pub mod stacking;

/// What `--list` shows of a recipe.
#[derive(Clone, Debug)]
pub struct RecipeInfo {
    /// The id (`permon-mprgp`).
    pub id: &'static str,
    /// The paper (authors, year, venue) or project the numbers come from.
    pub paper: &'static str,
    /// What the recipe regenerates (one line).
    pub regenerates: &'static str,
    /// Expected wall time at full size on a 2-core machine (release build), as measured when
    /// the committed results were made (e.g. `4 min`; the machine was shared while they were
    /// made, so these are upper estimates).
    pub full_time: &'static str,
    /// Expected wall time with `--quick` (release build).
    pub quick_time: &'static str,
}

/// Where and how a recipe runs.
#[derive(Clone, Debug)]
pub struct Context {
    /// Output folder (created if missing).
    pub out: PathBuf,
    /// Reduced size (under a minute), for tests and a first look.
    pub quick: bool,
    /// Recompute what the folder already holds.
    pub rerun: bool,
    /// Progress messages on stderr.
    pub progress: bool,
}

impl Context {
    /// Print a progress line on stderr when [`Context::progress`] is set.
    pub fn say(&self, msg: impl AsRef<str>) {
        if self.progress {
            eprintln!("{}", msg.as_ref());
        }
    }
}

/// A published value, or a claim, to set our measurement beside.
#[derive(Clone, Debug, PartialEq)]
pub enum Published {
    /// A number the paper (or its code's output) gives: matched when
    /// `|ours - value| <= rel_tol |value|` (`rel_tol` 0: exactly).
    Value {
        /// The published number.
        value: f64,
        /// Relative tolerance of the match (0.1 = 10 %).
        rel_tol: f64,
    },
    /// A qualitative statement of the paper: our measurement is printed beside it;
    /// `holds` says whether our measurement supports it (`None`: not decidable here).
    Claim {
        /// The claim, quoted or paraphrased from the paper.
        text: String,
        /// Whether our numbers support it.
        holds: Option<bool>,
    },
}

/// One line of the comparison table.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// What is compared (`MPRGP iterations, ex1, -mprgp preset permon`).
    pub quantity: String,
    /// Our measurement (a number; NaN where it failed).
    pub ours: f64,
    /// Our measurement as shown, with its unit or a short qualifier (`181`, `2.3x faster`).
    pub ours_text: String,
    /// The published side.
    pub published: Published,
    /// Where the published side comes from (paper table/figure, or repository and path).
    pub source: String,
}

/// Outcome of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A published number matched within its tolerance.
    Match,
    /// A published number not matched.
    Mismatch,
    /// A claim our numbers support.
    ClaimHolds,
    /// A claim our numbers do not support.
    ClaimFails,
    /// A claim our numbers neither support nor contradict.
    ClaimOpen,
}

impl Verdict {
    /// The word written in `comparison.csv` and `reproduce.md`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Match => "match",
            Verdict::Mismatch => "no match",
            Verdict::ClaimHolds => "claim holds",
            Verdict::ClaimFails => "claim not reproduced",
            Verdict::ClaimOpen => "claim: not decided",
        }
    }
}

impl Comparison {
    /// A published number with a relative tolerance.
    pub fn value(
        quantity: impl Into<String>,
        ours: f64,
        ours_text: impl Into<String>,
        published: f64,
        rel_tol: f64,
        source: impl Into<String>,
    ) -> Self {
        Self {
            quantity: quantity.into(),
            ours,
            ours_text: ours_text.into(),
            published: Published::Value {
                value: published,
                rel_tol,
            },
            source: source.into(),
        }
    }

    /// A claim with our measurement beside it.
    pub fn claim(
        quantity: impl Into<String>,
        ours: f64,
        ours_text: impl Into<String>,
        claim: impl Into<String>,
        holds: Option<bool>,
        source: impl Into<String>,
    ) -> Self {
        Self {
            quantity: quantity.into(),
            ours,
            ours_text: ours_text.into(),
            published: Published::Claim {
                text: claim.into(),
                holds,
            },
            source: source.into(),
        }
    }

    /// Whether the published side is matched ([`Verdict`]).
    pub fn verdict(&self) -> Verdict {
        match &self.published {
            Published::Value { value, rel_tol } => {
                if (self.ours - value).abs() <= rel_tol * value.abs() {
                    Verdict::Match
                } else {
                    Verdict::Mismatch
                }
            }
            Published::Claim { holds, .. } => match holds {
                Some(true) => Verdict::ClaimHolds,
                Some(false) => Verdict::ClaimFails,
                None => Verdict::ClaimOpen,
            },
        }
    }

    fn published_text(&self) -> String {
        match &self.published {
            Published::Value { value, .. } => fmt_value(*value),
            Published::Claim { text, .. } => format!("claim: {text}"),
        }
    }

    fn tolerance_text(&self) -> String {
        match &self.published {
            Published::Value { rel_tol, .. } if *rel_tol == 0.0 => "exact".into(),
            Published::Value { rel_tol, .. } => fmt_tolerance(*rel_tol),
            Published::Claim { .. } => String::new(),
        }
    }
}

/// A table of our own numbers (markdown), e.g. the per-solver means behind a figure.
#[derive(Clone, Debug, Default)]
pub struct MdTable {
    /// Heading above the table.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows (as many cells as `header`).
    pub rows: Vec<Vec<String>>,
}

impl MdTable {
    /// A table with a title and column names.
    pub fn new(title: impl Into<String>, header: &[&str]) -> Self {
        Self {
            title: title.into(),
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Append a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn markdown(&self, out: &mut String) {
        let _ = writeln!(out, "### {}\n", self.title);
        let _ = writeln!(out, "| {} |", self.header.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(self.header.len()));
        for r in &self.rows {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
        out.push('\n');
    }
}

/// A figure the recipe drew into the output folder.
#[derive(Clone, Debug)]
pub struct Figure {
    /// File name of the PNG, relative to the output folder (an SVG of the same stem sits
    /// beside it).
    pub file: String,
    /// Caption.
    pub caption: String,
}

/// What a recipe hands back for `reproduce.md`.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The set-up as run (markdown): instances or scene, solvers and parameters, residual,
    /// tolerance, caps; what differs from the paper and why.
    pub setup: String,
    /// Our numbers beside the published ones.
    pub comparisons: Vec<Comparison>,
    /// Further tables of our numbers.
    pub tables: Vec<MdTable>,
    /// Figures drawn.
    pub figures: Vec<Figure>,
    /// Remarks: why a number does not match, what was left out.
    pub notes: Vec<String>,
}

/// A published experiment.
pub trait Recipe: Send + Sync {
    /// Id, paper, what it regenerates, expected run times.
    fn info(&self) -> RecipeInfo;
    /// Run it into `ctx.out` (full size, or reduced with `ctx.quick`) and return what
    /// `reproduce.md` shows. Errors: solver, scene and file-system errors.
    fn run(&self, ctx: &Context) -> Result<Outcome>;
}

/// Every recipe, in the order `--list` shows them.
pub fn recipes() -> Vec<Box<dyn Recipe>> {
    vec![
        Box::new(permon::PermonMprgp),
        Box::new(melanz::Melanz2017Fill),
        Box::new(mazhar::Mazhar2015Apgd),
        Box::new(cannonball::ChronoCannonball),
        Box::new(acary::Acary2018Fclib),
        Box::new(stacking::HorakTrinkleStacking),
        Box::new(sliding::SlidingBall),
    ]
}

/// The recipe with this id. Errors: [`HarnessError::Invalid`] naming the known ids.
pub fn find(id: &str) -> Result<Box<dyn Recipe>> {
    let all = recipes();
    let ids: Vec<&str> = all.iter().map(|r| r.info().id).collect();
    let known = ids.join(", ");
    all.into_iter()
        .find(|r| r.info().id == id)
        .ok_or_else(|| HarnessError::Invalid(format!("unknown recipe '{id}' (known: {known})")))
}

/// The default output folder of a recipe: `results/reproduce/<id>` (full size, where the
/// committed results live) or `results/reproduce/<id>-quick`.
pub fn default_out_dir(id: &str, quick: bool) -> PathBuf {
    let name = if quick {
        format!("{id}-quick")
    } else {
        id.to_string()
    };
    Path::new("results").join("reproduce").join(name)
}

/// What [`reproduce`] returns: the recipe's outcome and the files written.
#[derive(Clone, Debug)]
pub struct Reproduced {
    /// The recipe's outcome.
    pub outcome: Outcome,
    /// Wall time of the recipe (s).
    pub wall_s: f64,
    /// Path of `reproduce.md`.
    pub markdown: PathBuf,
}

/// Run `recipe` into `ctx.out`, then write `reproduce.md`, `comparison.csv` and
/// `reproduce.json` there (atomically). Errors: those of the recipe, file-system errors.
pub fn reproduce(recipe: &dyn Recipe, ctx: &Context) -> Result<Reproduced> {
    let info = recipe.info();
    std::fs::create_dir_all(&ctx.out).map_err(|e| HarnessError::io(&ctx.out, e))?;
    let (stamp, started) = now_utc();
    let t0 = Instant::now();
    let outcome = recipe.run(ctx)?;
    let wall_s = t0.elapsed().as_secs_f64();
    let _lock = crate::lock::FolderLock::acquire(&ctx.out)?;
    let rev = git_revision();
    let mach = machine();
    let command = command_line(info.id, ctx);
    write_atomic(
        &ctx.out.join("comparison.csv"),
        comparison_csv(&outcome.comparisons).as_bytes(),
    )?;
    write_json_atomic(
        &ctx.out.join("reproduce.json"),
        &json!({
            "recipe": info.id,
            "paper": info.paper,
            "regenerates": info.regenerates,
            "size": if ctx.quick { "quick" } else { "full" },
            "command": command,
            "git_revision": rev,
            "machine": mach,
            "started": started,
            "stamp": stamp,
            "wall_s": wall_s,
            "verdicts": outcome.comparisons.iter().map(|c| json!({
                "quantity": c.quantity, "ours": finite_or_null(c.ours),
                "verdict": c.verdict().as_str(),
            })).collect::<Vec<_>>(),
        }),
    )?;
    let md = markdown(
        &info, ctx, &outcome, &command, &rev, &started, wall_s, &mach,
    );
    let path = ctx.out.join("reproduce.md");
    write_atomic(&path, md.as_bytes())?;
    Ok(Reproduced {
        outcome,
        wall_s,
        markdown: path,
    })
}

fn finite_or_null(v: f64) -> serde_json::Value {
    if v.is_finite() {
        json!(v)
    } else {
        serde_json::Value::Null
    }
}

/// The command that regenerates the folder.
fn command_line(id: &str, ctx: &Context) -> String {
    let mut c = format!("cpbench reproduce {id}");
    if ctx.quick {
        c.push_str(" --quick");
    }
    if ctx.out != default_out_dir(id, ctx.quick) {
        let _ = write!(c, " --out {}", ctx.out.display());
    }
    c.push_str(" --rerun");
    c
}

/// `comparison.csv`: `quantity, ours, published, kind, tolerance, verdict, source`.
pub fn comparison_csv(rows: &[Comparison]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "quantity",
        "ours",
        "ours_text",
        "published",
        "kind",
        "tolerance",
        "verdict",
        "source",
    ]);
    for c in rows {
        let (published, kind) = match &c.published {
            Published::Value { value, .. } => (format!("{value:e}"), "value"),
            Published::Claim { text, .. } => (text.clone(), "claim"),
        };
        let _ = w.write_record([
            c.quantity.clone(),
            format!("{:e}", c.ours),
            c.ours_text.clone(),
            published,
            kind.to_string(),
            c.tolerance_text(),
            c.verdict().as_str().to_string(),
            c.source.clone(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[allow(clippy::too_many_arguments)]
fn markdown(
    info: &RecipeInfo,
    ctx: &Context,
    o: &Outcome,
    command: &str,
    rev: &str,
    started: &str,
    wall_s: f64,
    mach: &crate::manifest::Machine,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# `{}`: {}\n", info.id, info.paper);
    let _ = writeln!(s, "{}\n", info.regenerates);
    let _ = writeln!(
        s,
        "Regenerate: `{command}` ({} size). Run {started} at git `{rev}` on {} {} with {} \
         logical CPUs; wall time {}.\n",
        if ctx.quick { "quick, reduced" } else { "full" },
        mach.os,
        mach.arch,
        mach.logical_cpus,
        fmt_duration(wall_s)
    );
    s.push_str("## Set-up\n\n");
    s.push_str(o.setup.trim_end());
    s.push_str("\n\n");
    s.push_str("## Our numbers beside the published ones\n\n");
    if o.comparisons.is_empty() {
        s.push_str("(no published numbers or claims to compare)\n\n");
    } else {
        s.push_str("| quantity | ours | published | tolerance | verdict | source |\n");
        s.push_str("|---|---|---|---|---|---|\n");
        for c in &o.comparisons {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | **{}** | {} |",
                c.quantity,
                c.ours_text,
                c.published_text(),
                c.tolerance_text(),
                c.verdict().as_str(),
                c.source
            );
        }
        let count = |v: Verdict| o.comparisons.iter().filter(|c| c.verdict() == v).count();
        let values = count(Verdict::Match) + count(Verdict::Mismatch);
        let claims = o.comparisons.len() - values;
        let _ = writeln!(
            s,
            "\n{} of {} published numbers matched within their tolerance; {} of {} claims hold \
             ({} not reproduced, {} not decided).\n",
            count(Verdict::Match),
            values,
            count(Verdict::ClaimHolds),
            claims,
            count(Verdict::ClaimFails),
            count(Verdict::ClaimOpen)
        );
    }
    for t in &o.tables {
        t.markdown(&mut s);
    }
    if !o.figures.is_empty() {
        s.push_str("## Figures\n\n");
        for f in &o.figures {
            let _ = writeln!(s, "![{}]({})\n\n{}\n", f.caption, f.file, f.caption);
        }
    }
    if !o.notes.is_empty() {
        s.push_str("## Notes\n\n");
        for n in &o.notes {
            let _ = writeln!(s, "- {n}");
        }
        s.push('\n');
    }
    s.push_str(
        "Files: `summary.csv`, `traces/`, `manifest.json` (the run), `comparison.csv` (the \
         table above), `reproduce.json` (this run's record).\n",
    );
    s
}

/// A published number as written: integers plainly (`181`), others in Rust's shortest
/// round-trip form (`-0.183437`, `0.0146`, `10.52`), very large or small ones in scientific
/// notation (`1.2e-9`).
pub fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{v:.0}")
    } else if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e9) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A relative tolerance as written: `10%`, `0.5%`, or below 0.1 % as `1e-6 rel.`.
pub fn fmt_tolerance(rel_tol: f64) -> String {
    let pct = rel_tol * 100.0;
    if pct >= 0.1 {
        let t = format!("{pct:.2}");
        format!("{}%", t.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{rel_tol:.0e} rel.")
    }
}

/// `83 s`, `4.2 min`.
pub fn fmt_duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.1} min", s / 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_tolerance_and_the_claim() {
        let c = Comparison::value("q", 105.0, "105", 100.0, 0.1, "s");
        assert_eq!(c.verdict(), Verdict::Match);
        let c = Comparison::value("q", 111.0, "111", 100.0, 0.1, "s");
        assert_eq!(c.verdict(), Verdict::Mismatch);
        let c = Comparison::value("q", 181.0, "181", 181.0, 0.0, "s");
        assert_eq!(c.verdict(), Verdict::Match);
        let c = Comparison::value("q", f64::NAN, "failed", 181.0, 0.0, "s");
        assert_eq!(c.verdict(), Verdict::Mismatch);
        let c = Comparison::claim("q", 30.0, "30x", "10-100x", Some(true), "s");
        assert_eq!(c.verdict(), Verdict::ClaimHolds);
        assert_eq!(fmt_value(181.0), "181");
        assert_eq!(fmt_tolerance(0.1), "10%");
        assert_eq!(fmt_tolerance(1e-6), "1e-6 rel.");
        assert_eq!(fmt_tolerance(1e-5), "1e-5 rel.");
        assert_eq!(fmt_value(-0.183437), "-0.183437");
        assert_eq!(fmt_value(6.19e-4), "6.19e-4");
        let csv = comparison_csv(&[c]);
        assert!(csv.contains("claim,,claim holds,s"), "{csv}");
    }

    #[test]
    fn ids_are_unique_and_found() {
        let all = recipes();
        let mut ids: Vec<_> = all.iter().map(|r| r.info().id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
        assert!(find("permon-mprgp").is_ok());
        let e = find("nope").err().unwrap().to_string();
        assert!(e.contains("permon-mprgp"), "{e}");
    }
}
