//! # cpbench-reproduce
//!
//! Published experiments re-run by name: `cpbench reproduce <id>`.
//!
//! A recipe ([`Recipe`]) is data plus a little code: the instances or the scene, the solvers
//! with the paper's parameters, the residual and tolerance, the caps, and the figures to draw.
//! [`reproduce`] runs one into an output folder and writes, besides the usual run files
//! (`summary.csv`, `traces/`, `manifest.json`: those of [`cpbench_harness::run()`] for recipes that solve
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
//! unless [`Context::rerun`] is set. One writer per folder ([`cpbench_harness::lock::FolderLock`]).
//!
//! The recipes ([`recipes`]) and their sources are listed by `cpbench reproduce --list`.
#![deny(missing_docs)]

use cpbench_harness::error::{HarnessError, Result};
use cpbench_harness::fsutil::{write_atomic, write_json_atomic};
use cpbench_harness::manifest::{git_revision, machine, now_utc};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub mod acary;
pub mod cannonball;
pub mod contactbench;
pub mod formulations;
pub mod mazhar;
pub mod melanz;
pub mod permon;
pub mod sim;
pub mod sliding;
pub mod stacking;
pub mod timings;

/// What `--list` shows of a recipe.
#[derive(Clone, Debug)]
pub struct RecipeInfo {
    /// The id (`permon-mprgp`).
    pub id: &'static str,
    /// The paper (authors, year, venue) or project the numbers come from.
    pub paper: &'static str,
    /// What the recipe regenerates (one line).
    pub regenerates: &'static str,
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
    /// Timed solves per solve whose time the recipe reports (at least 1; the CLI's default
    /// is 3): times are medians, and verdicts by time need at least
    /// [`MIN_TIMED_REPEATS`] to be decided ([`time_noise`]).
    pub repeat: usize,
}

/// The fewest timed repeats on which a recipe decides a verdict by time.
pub const MIN_TIMED_REPEATS: usize = 3;

/// The relative noise of a time measured `repeats` times with relative spread `spread`
/// (`(max - min) / median`), for [`ratio_verdict`]: the spread itself with at least
/// [`MIN_TIMED_REPEATS`] repeats, `None` with fewer (no verdict by time is then decided).
pub fn time_noise(repeats: usize, spread: f64) -> Option<f64> {
    (repeats >= MIN_TIMED_REPEATS && spread.is_finite()).then_some(spread.max(0.0))
}

impl Context {
    /// Print a progress line on stderr when [`Context::progress`] is set.
    pub fn say(&self, msg: impl AsRef<str>) {
        if self.progress {
            eprintln!("{}", msg.as_ref());
        }
    }

    /// `note` at the reduced size ([`Context::quick`]), nothing at full size: the sentence a
    /// recipe's set-up adds about what the quick size leaves out.
    pub fn quick_note(&self, note: &'static str) -> &'static str {
        if self.quick {
            note
        } else {
            ""
        }
    }
}

/// A published value, or a claim, to set our measurement beside.
#[derive(Clone, Debug, PartialEq)]
pub enum Published {
    /// A number the paper (or its code's output) gives: matched when
    /// `|ours - value| <= rel_tol |value|` (`rel_tol` 0: exactly). The tolerance is no looser
    /// than the printed digits allow (half a unit of the last printed digit, relative: see
    /// [`printed_tolerance`]) unless `reason` states why ([`Comparison::tolerance_check`]).
    Value {
        /// The published number.
        value: f64,
        /// Relative tolerance of the match (0.1 = 10 %).
        rel_tol: f64,
        /// The number as the source prints it (`-0.183437`), which fixes the strict tolerance;
        /// `None` for exact integers and for values that are not printed (analytic ones).
        printed: Option<String>,
        /// Why the tolerance is looser than the printed digits (a physical or numerical
        /// reason, shown in the table); `None` for a strict comparison.
        reason: Option<String>,
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
        let published = Published::Value {
            value: published,
            rel_tol,
            printed: None,
            reason: None,
        };
        Self::with(quantity, ours, ours_text, published, source)
    }

    /// The comparison of `ours` (printed as `ours_text`) with `published`.
    fn with(
        quantity: impl Into<String>,
        ours: f64,
        ours_text: impl Into<String>,
        published: Published,
        source: impl Into<String>,
    ) -> Self {
        Self {
            quantity: quantity.into(),
            ours,
            ours_text: ours_text.into(),
            published,
            source: source.into(),
        }
    }

    /// A published number compared at its printed digits: `printed` is the number exactly as
    /// the source prints it (`-0.183437`, `1.2e-3`), the tolerance half a unit of its last
    /// digit, relative ([`printed_tolerance`]). Panics when `printed` is not a number (a
    /// recipe's constant, not user input).
    pub fn printed(
        quantity: impl Into<String>,
        ours: f64,
        ours_text: impl Into<String>,
        printed: &str,
        source: impl Into<String>,
    ) -> Self {
        let value: f64 = printed
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("printed value '{printed}' is not a number"));
        let published = Published::Value {
            value,
            rel_tol: printed_tolerance(printed).unwrap_or(0.0),
            printed: Some(printed.trim().to_string()),
            reason: None,
        };
        Self::with(quantity, ours, ours_text, published, source)
    }

    /// The same comparison with a looser tolerance and the reason for it (shown in the
    /// table; [`Comparison::tolerance_check`] requires it). A claim is returned unchanged.
    pub fn looser(mut self, rel_tol: f64, why: impl Into<String>) -> Self {
        if let Published::Value {
            rel_tol: t, reason, ..
        } = &mut self.published
        {
            *t = rel_tol;
            *reason = Some(why.into());
        }
        self
    }

    /// `(rel_tol, printed, reason)` of a published number; `None` for a claim.
    fn value_tolerance(&self) -> Option<(f64, Option<&str>, Option<&str>)> {
        match &self.published {
            Published::Value {
                rel_tol,
                printed,
                reason,
                ..
            } => Some((*rel_tol, printed.as_deref(), reason.as_deref())),
            Published::Claim { .. } => None,
        }
    }

    /// Whether the comparison is strict: a published number compared exactly or within its
    /// printed digits ([`printed_tolerance`]), with no stated reason for a looser tolerance.
    /// `false` for claims.
    pub fn is_strict(&self) -> bool {
        self.value_tolerance()
            .is_some_and(|(rel_tol, printed, reason)| {
                reason.is_none()
                    && (rel_tol == 0.0
                        || printed
                            .and_then(printed_tolerance)
                            .is_some_and(|t| rel_tol <= t * (1.0 + 1e-12)))
            })
    }

    /// The tolerance rule of the recipes: a published number's tolerance is no looser than its
    /// printed digits, or a reason is stated. Errors: a message naming the quantity, the
    /// tolerance and the strict one.
    pub fn tolerance_check(&self) -> std::result::Result<(), String> {
        let Some((rel_tol, printed, reason)) = self.value_tolerance() else {
            return Ok(());
        };
        if self.is_strict() || reason.is_some_and(|r| !r.trim().is_empty()) {
            return Ok(());
        }
        let strict = match printed.and_then(printed_tolerance) {
            Some(t) => format!("its printed digits allow ({t:e})"),
            None => "exact (no printed digits given)".to_string(),
        };
        Err(format!(
            "'{}': tolerance {rel_tol:e} is looser than {strict} and states no reason",
            self.quantity
        ))
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
        let published = Published::Claim {
            text: claim.into(),
            holds,
        };
        Self::with(quantity, ours, ours_text, published, source)
    }

    /// Whether the published side is matched ([`Verdict`]).
    pub fn verdict(&self) -> Verdict {
        match &self.published {
            Published::Value { value, rel_tol, .. } => {
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
            Published::Value {
                printed: Some(p), ..
            } => p.clone(),
            Published::Value { value, .. } => fmt_value(*value),
            Published::Claim { text, .. } => format!("claim: {text}"),
        }
    }

    fn tolerance_text(&self) -> String {
        match &self.published {
            Published::Value { rel_tol, .. } if *rel_tol == 0.0 => "exact".into(),
            Published::Value {
                rel_tol,
                reason: Some(why),
                ..
            } => format!("{} ({why})", fmt_tolerance(*rel_tol)),
            Published::Value { rel_tol, .. } if self.is_strict() => {
                format!("printed digits ({})", fmt_tolerance(*rel_tol))
            }
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
    /// What the source shows that we could not compare, each with the reason (the opening
    /// line of `reproduce.md` lists them).
    pub not_compared: Vec<String>,
}

impl Outcome {
    /// The opening line of `reproduce.md`: published numbers compared strictly (exactly or at
    /// their printed digits) and how many matched; numbers compared at a stated looser
    /// tolerance; claims decided and how many hold; what could not be compared and why.
    pub fn headline(&self) -> String {
        let cs = &self.comparisons;
        let values: Vec<&Comparison> = cs
            .iter()
            .filter(|c| matches!(c.published, Published::Value { .. }))
            .collect();
        let strict: Vec<&&Comparison> = values.iter().filter(|c| c.is_strict()).collect();
        let loose: Vec<&&Comparison> = values.iter().filter(|c| !c.is_strict()).collect();
        let matched =
            |v: &[&&Comparison]| v.iter().filter(|c| c.verdict() == Verdict::Match).count();
        let decided = cs
            .iter()
            .filter(|c| matches!(c.verdict(), Verdict::ClaimHolds | Verdict::ClaimFails))
            .count();
        let holds = cs
            .iter()
            .filter(|c| c.verdict() == Verdict::ClaimHolds)
            .count();
        let open = cs
            .iter()
            .filter(|c| c.verdict() == Verdict::ClaimOpen)
            .count();
        let mut line = format!(
            "**{} published numbers compared strictly, {} matched",
            strict.len(),
            matched(&strict)
        );
        if !loose.is_empty() {
            let _ = write!(
                line,
                "; {} compared at a stated looser tolerance, {} matched",
                loose.len(),
                matched(&loose)
            );
        }
        let _ = write!(
            line,
            "; {decided} claims decided, {holds} hold ({open} not decided).**"
        );
        if self.not_compared.is_empty() {
            line.push_str(" Nothing the source shows was left uncompared.");
        } else {
            let _ = write!(line, " Not compared: {}.", self.not_compared.join("; "));
        }
        line
    }
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
        Box::new(contactbench::ContactBenchFidelity),
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
/// `reproduce.json` there (atomically); a run into the default folder also records its wall
/// time in `results/reproduce/timings.csv` ([`timings::record_timing`]). Errors: those of the recipe, file-system errors.
pub fn reproduce(recipe: &dyn Recipe, ctx: &Context) -> Result<Reproduced> {
    let info = recipe.info();
    std::fs::create_dir_all(&ctx.out).map_err(|e| HarnessError::io(&ctx.out, e))?;
    let (stamp, started) = now_utc();
    let load_start = cpbench_harness::load::LoadSample::now();
    let t0 = Instant::now();
    let outcome = recipe.run(ctx)?;
    let wall_s = t0.elapsed().as_secs_f64();
    let load_end = cpbench_harness::load::LoadSample::now();
    let _lock = cpbench_harness::lock::FolderLock::acquire(&ctx.out)?;
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
            "repeat": ctx.repeat.max(1),
            "load_start": load_start,
            "load_end": load_end,
            "verdicts": outcome.comparisons.iter().map(|c| json!({
                "quantity": c.quantity, "ours": finite_or_null(c.ours),
                "verdict": c.verdict().as_str(),
            })).collect::<Vec<_>>(),
        }),
    )?;
    let load = format!(
        "machine load at the start: {}; at the end: {}{}",
        load_start.describe(),
        load_end.describe(),
        if load_start.busy(mach.logical_cpus) || load_end.busy(mach.logical_cpus) {
            " (**busy**: times may be inflated)"
        } else {
            ""
        }
    );
    let md = markdown(
        &info, ctx, &outcome, &command, &rev, &started, wall_s, &mach, &load,
    );
    let path = ctx.out.join("reproduce.md");
    write_atomic(&path, md.as_bytes())?;
    // the measured time for `--list`, when the run wrote the default folder
    // (`results/reproduce/<id>[-quick]`: the table is `results/reproduce/timings.csv`)
    if ctx.out == default_out_dir(info.id, ctx.quick) {
        let parent = ctx.out.parent().unwrap_or(Path::new("."));
        let verdicts = outcome.comparisons.len();
        let open = outcome
            .comparisons
            .iter()
            .filter(|c| c.verdict() == Verdict::ClaimOpen)
            .count();
        timings::record_timing(
            parent,
            timings::Timing {
                recipe: info.id.to_string(),
                size: if ctx.quick { "quick" } else { "full" }.into(),
                wall_s,
                repeat: ctx.repeat.max(1),
                decided: verdicts - open,
                verdicts,
                logical_cpus: mach.logical_cpus,
                cpu: timings::cpu_model(),
                git_revision: rev.clone(),
                started: started.clone(),
            },
        )?;
    }
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
    if ctx.repeat != 3 {
        let _ = write!(c, " --repeat {}", ctx.repeat.max(1));
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
        "strict",
        "verdict",
        "source",
    ]);
    for c in rows {
        let (published, kind) = match &c.published {
            Published::Value {
                printed: Some(p), ..
            } => (p.clone(), "value"),
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
            match c.published {
                Published::Value { .. } => c.is_strict().to_string(),
                Published::Claim { .. } => String::new(),
            },
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
    mach: &cpbench_harness::manifest::Machine,
    load: &str,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# `{}`: {}\n", info.id, info.paper);
    let _ = writeln!(s, "{}\n", o.headline());
    let _ = writeln!(s, "{}\n", info.regenerates);
    let _ = writeln!(
        s,
        "Regenerate: `{command}` ({} size). Run {started} at git `{rev}` on {} {} with {} \
         logical CPUs; wall time {} (measured); {load}; every time compared is the median of \
         {} timed solve(s).\n",
        if ctx.quick { "quick, reduced" } else { "full" },
        mach.os,
        mach.arch,
        mach.logical_cpus,
        fmt_duration(wall_s),
        ctx.repeat.max(1)
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

/// The verdict on a claim "`slow` takes at least `threshold` times as long as `fast`" from a
/// measured ratio `ratio = t_slow / t_fast`, honest about what the measurement bounds:
/// - a run of `slow` stopped at a cap (`slow_capped`) took less than it would to the
///   tolerance: the true ratio is at least `ratio` (a lower bound);
/// - a run of `fast` stopped at a cap (`fast_capped`): the true ratio is at most `ratio`;
/// - both capped: nothing is decided;
/// - `noise` is the relative spread of the times (e.g. `(max - min) / median` over repeats):
///   the claim holds only when `ratio (1 - noise)` clears the threshold and fails only when
///   `ratio (1 + noise)` is below it; in between, `None` ("not decided (within noise)").
///
/// Returns `Some(true)` (holds), `Some(false)` (fails) or `None` (not decided).
pub fn ratio_verdict(
    ratio: f64,
    threshold: f64,
    slow_capped: bool,
    fast_capped: bool,
    noise: f64,
) -> Option<bool> {
    if !ratio.is_finite() || (slow_capped && fast_capped) {
        return None;
    }
    let noise = noise.max(0.0);
    let clears = ratio * (1.0 - noise) >= threshold;
    let misses = ratio * (1.0 + noise) < threshold;
    if clears && !fast_capped {
        Some(true)
    } else if misses && !slow_capped {
        Some(false)
    } else {
        None
    }
}

/// Why [`ratio_verdict`] decided nothing, for the table (`None` when it decided).
pub fn ratio_undecided_reason(
    ratio: f64,
    threshold: f64,
    slow_capped: bool,
    fast_capped: bool,
    noise: f64,
) -> Option<String> {
    if ratio_verdict(ratio, threshold, slow_capped, fast_capped, noise).is_some() {
        return None;
    }
    Some(if !ratio.is_finite() {
        "no finite ratio".to_string()
    } else if slow_capped && fast_capped {
        "both runs stopped at the cap".to_string()
    } else if slow_capped {
        format!("a lower bound below {threshold}x")
    } else if fast_capped {
        format!("an upper bound above {threshold}x")
    } else {
        format!("within noise ({:.0}% spread)", 100.0 * noise)
    })
}

/// What a measured ratio says about a "`threshold`x faster" claim on the set-up it was
/// measured on ([`ratio_verdict`]), as text for a table cell: `clears 10x` / `misses 10x` /
/// `decides nothing (<reason>)`; `repeats` below [`MIN_TIMED_REPEATS`] decide nothing.
pub fn ratio_reading(
    ratio: f64,
    threshold: f64,
    slow_capped: bool,
    fast_capped: bool,
    spread: f64,
    repeats: usize,
) -> String {
    let Some(noise) = time_noise(repeats, spread) else {
        return format!(
            "decides nothing (fewer than {MIN_TIMED_REPEATS} timed repeats: {})",
            repeats.max(1)
        );
    };
    match ratio_verdict(ratio, threshold, slow_capped, fast_capped, noise) {
        Some(true) => format!("clears {threshold}x beyond the noise"),
        Some(false) => format!("misses {threshold}x beyond the noise"),
        None => format!(
            "decides nothing ({})",
            ratio_undecided_reason(ratio, threshold, slow_capped, fast_capped, noise)
                .unwrap_or_default()
        ),
    }
}

/// Half a unit of the last printed digit of `printed`, relative to its value: the strictest
/// tolerance a number printed with those digits supports (`1.42853` -> `0.5e-5 / 1.42853`,
/// `-0.183437` -> `0.5e-6 / 0.183437`, `1.2e-3` -> `0.05e-3 / 1.2e-3`, `181` -> `0.5 / 181`).
/// `None` when `printed` is not a number or is zero.
pub fn printed_tolerance(printed: &str) -> Option<f64> {
    let t = printed.trim();
    let value: f64 = t.parse().ok()?;
    if value == 0.0 || !value.is_finite() {
        return None;
    }
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let decimals = mantissa.find('.').map_or(0, |i| mantissa.len() - i - 1) as i32;
    Some(0.5 * 10f64.powi(exp - decimals) / value.abs())
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
    if s < 1.0 {
        format!("{s:.2} s")
    } else if s < 120.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.1} min", s / 60.0)
    }
}
