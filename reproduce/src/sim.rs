//! The time-stepper side of the recipes: run a scene with a solver in the loop, one row per
//! step, written as a trace; a summary row per (case, solver); a manifest; figures of a
//! per-step quantity against simulated time.
//!
//! Files (in the recipe's output folder):
//! - `traces/<case>__<solver>.csv`: one row per step, columns [`STEP_HEADER`] (plus the
//!   recipe's probe column when it has one); written atomically when the simulation ends, so
//!   a folder that holds it has the whole run, which [`simulate`] then reads back instead of
//!   recomputing (resume), unless [`super::Context::rerun`];
//! - `summary.csv`: one row per (case, solver), columns [`SUMMARY_HEADER`] ([`write_summary`]);
//! - `manifest.json`: git revision, machine, start time, the cases (scene parameters, steps)
//!   and the solvers (registry name, settings, executor settings) ([`write_manifest`]).
//!
//! Each step goes through the closed loop's step core
//! ([`cpbench_harness::closed_loop::Stepping`], the core of `cpbench simulate`): the recipes
//! and `simulate` take the same step and measure it the same way.
//!
//! Solve times are the solver's own time ([`cpbench_granular::StepReport::solver_time`]: the
//! executor's solver time without the harness's per-iteration residual checks) where the
//! solver reports it, else the stepper's wall time of the solve.

use super::Context;
use cpbench_granular::{ContactSolver, Simulation, StepReport};
use cpbench_harness::closed_loop::{LoopRow, Stepping};
use cpbench_harness::error::{HarnessError, Result};
use cpbench_harness::fsutil::{solver_file_name, write_atomic, write_json_atomic};
use cpbench_harness::manifest::{git_revision, machine, now_utc};
use cpbench_harness::plot::{draw_plot, Axis, FigureOptions, LinePlot, Series};
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;

/// One [`Series`] per run, labelled by its `String`: `(t, y(row))` over the rows `keep`
/// accepts, against simulated time `t`; a run's position in `runs` is its colour.
pub fn time_series<'r>(
    runs: impl IntoIterator<Item = (String, &'r [StepRow])>,
    keep: &dyn Fn(&StepRow) -> bool,
    y: &dyn Fn(&StepRow) -> f64,
) -> Vec<Series> {
    runs.into_iter()
        .enumerate()
        .map(|(k, (label, rows))| Series {
            label,
            points: rows
                .iter()
                .filter(|r| keep(r))
                .map(|r| (r.time, y(r)))
                .collect(),
            color: Some(k),
        })
        .collect()
}

/// Columns of a step trace (a probe column may follow). `solve_repeats_s` holds every timed
/// solve of the step, `;`-separated, when the step was solved more than once
/// ([`simulate`] with `repeat > 1`; `solve_s` is then their median), and is empty otherwise.
pub const STEP_HEADER: [&str; 14] = [
    "step",
    "time",
    "contacts",
    "n",
    "iterations",
    "residual",
    "converged",
    "solve_s",
    "solve_wall_s",
    "max_penetration",
    "kinetic_energy",
    "warm_matched",
    "solve_repeats_s",
    "other_s",
];

/// One step of a simulation as the recipes record it.
#[derive(Clone, Debug, PartialEq)]
pub struct StepRow {
    /// Step number (1-based).
    pub step: u64,
    /// Simulated time after the step (s).
    pub time: f64,
    /// Contacts in the step's problem.
    pub contacts: usize,
    /// Unknowns.
    pub n: usize,
    /// Solver iterations.
    pub iterations: u64,
    /// The solver's final stopping residual (NaN without contacts).
    pub residual: f64,
    /// Whether it reached the tolerance.
    pub converged: bool,
    /// Solver time of the step (s; see the module documentation).
    pub solve_s: f64,
    /// Wall time of the whole solve call, monitoring included, and every timed repeat of
    /// the step with it (s): one solve's wall time only when the step was solved once.
    pub solve_wall_s: f64,
    /// Largest overlap at the start of the step (m).
    pub max_penetration: f64,
    /// Kinetic energy after the step (J).
    pub kinetic_energy: f64,
    /// Contacts warm-started from the previous step.
    pub warm_matched: usize,
    /// The recipe's probe after the step (NaN without a probe).
    pub probe: f64,
    /// Every timed solve of the step (s) when it was solved more than once, in order (the
    /// first is the one whose answer the stepper used); empty for one solve.
    pub solve_repeats: Vec<f64>,
    /// Wall time of the step's other phases (s): detection, assembly, the instance and the
    /// update; `solve_s + other_s` is the step's simulation time.
    pub other_s: f64,
}

impl StepRow {
    /// The row of a step taken by the closed loop's step core
    /// ([`cpbench_harness::closed_loop::Stepping`]): the shared columns (step, time, contacts,
    /// iterations, residual, convergence, solver time, penetration, kinetic energy) from its
    /// [`LoopRow`], the rest (unknowns, wall time, warm-started contacts, other phases) from
    /// the stepper's report; with the probe value.
    pub fn from_loop(row: &LoopRow, r: &StepReport, probe: f64) -> Self {
        Self {
            step: row.step,
            time: row.time,
            contacts: row.contacts,
            n: r.n,
            iterations: row.iterations,
            residual: row.residual,
            converged: row.converged,
            solve_s: row.solve_s,
            solve_wall_s: r.timings.solve.as_secs_f64(),
            max_penetration: row.max_penetration,
            kinetic_energy: row.kinetic_energy,
            warm_matched: r.warm_matched,
            probe,
            solve_repeats: Vec::new(),
            other_s: (r.timings.detection
                + r.timings.assembly
                + r.timings.instance
                + r.timings.update)
                .as_secs_f64(),
        }
    }
}

/// A solver solved `k` times per call from the same start: the first answer is returned (the
/// stepper goes on with it; cpbench's solvers are deterministic), with the median of the `k`
/// solver times as its time; every time is kept in `last` until taken.
struct Repeated<'a> {
    inner: &'a mut dyn ContactSolver,
    k: usize,
    last: Vec<f64>,
}

impl ContactSolver for Repeated<'_> {
    fn solve(
        &mut self,
        inst: &cpbench_problems::Instance,
        warm: Option<&[f64]>,
    ) -> std::result::Result<cpbench_granular::ContactSolution, String> {
        let first = self.inner.solve(inst, warm)?;
        self.last.clear();
        let Some(t0) = first.solver_time else {
            return Ok(first);
        };
        if self.k <= 1 {
            return Ok(first);
        }
        self.last.push(t0);
        for _ in 1..self.k {
            let again = self.inner.solve(inst, warm)?;
            self.last.push(again.solver_time.unwrap_or(f64::NAN));
        }
        let (med, _, _) = cpbench_harness::run::median_min_max(&self.last);
        Ok(cpbench_granular::ContactSolution {
            solver_time: Some(med),
            ..first
        })
    }
}

/// A recipe-defined quantity recorded after every step (its column name and the function).
pub struct Probe<'a> {
    /// Column name in the trace (`speed`).
    pub name: &'a str,
    /// Its value after a step.
    pub f: &'a dyn Fn(&Simulation) -> f64,
}

/// The trace file of `case` run by `solver`.
pub fn trace_path(out: &Path, case: &str, solver: &str) -> std::path::PathBuf {
    out.join("traces").join(format!(
        "{}__{}.csv",
        cpbench_harness::fsutil::safe_file_name(case),
        solver_file_name(solver)
    ))
}

/// Run `steps` steps of `sim` with `solver` in the loop and record one [`StepRow`] per step
/// in `traces/<case>__<solver_label>.csv`; when that file exists and `ctx.rerun` is not set,
/// read it back instead (a completed run is never recomputed). `sim` is built lazily by
/// `build`, only when the run is not already in the folder. Every step's solve is timed
/// `repeat` times from the same start ([`StepRow::solve_repeats`]; `solve_s` is their median,
/// the trajectory the first solve's; 1: a single solve). A trace of another layout or probe (an
/// older version of the recipe), or with fewer repeats than asked, is recomputed.
///
/// Errors: those of the stepper (a solver failure, a non-finite state) and of the files.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    ctx: &Context,
    case: &str,
    solver_label: &str,
    build: &mut dyn FnMut() -> Result<Simulation>,
    solver: &mut dyn ContactSolver,
    steps: u64,
    probe: Option<Probe<'_>>,
    repeat: usize,
) -> Result<Vec<StepRow>> {
    let path = trace_path(&ctx.out, case, solver_label);
    let mut expected = STEP_HEADER.join(",");
    if let Some(p) = &probe {
        let _ = write!(expected, ",{}", p.name);
    }
    let same_layout = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| t.lines().next().map(str::to_string))
        .is_some_and(|h| h == expected);
    if !ctx.rerun && path.exists() && same_layout {
        let rows = read_steps(&path)?;
        let repeats_ok = repeat <= 1
            || rows
                .iter()
                .filter(|r| r.contacts > 0)
                .all(|r| r.solve_repeats.len() >= repeat);
        if rows.len() as u64 == steps && repeats_ok {
            ctx.say(format!(
                "{case} / {solver_label}: {steps} steps read back from {}",
                path.display()
            ));
            return Ok(rows);
        }
    }
    let mut core = Stepping::new(build()?);
    let mut rows = Vec::with_capacity(steps as usize);
    let t0 = std::time::Instant::now();
    let mut timed = Repeated {
        inner: solver,
        k: repeat.max(1),
        last: Vec::new(),
    };
    for k in 0..steps {
        timed.last.clear();
        let (rep, step_row) = core
            .step(&mut timed, solver_label)
            .map_err(|e| HarnessError::Invalid(format!("{case} / {solver_label}: {e}")))?;
        let p = probe
            .as_ref()
            .map(|p| (p.f)(core.sim()))
            .unwrap_or(f64::NAN);
        let mut row = StepRow::from_loop(&step_row, &rep, p);
        row.solve_repeats = std::mem::take(&mut timed.last);
        rows.push(row);
        if ctx.progress && (k + 1) % 50 == 0 {
            eprintln!(
                "  {case} / {solver_label}: step {}/{steps}, {} contacts, {} iterations, {:.0} s",
                k + 1,
                rep.contacts,
                rep.iterations,
                t0.elapsed().as_secs_f64()
            );
        }
    }
    write_steps(&path, &rows, probe.as_ref().map(|p| p.name))?;
    Ok(rows)
}

/// Write a step trace (atomically).
pub fn write_steps(path: &Path, rows: &[StepRow], probe: Option<&str>) -> Result<()> {
    let mut s = STEP_HEADER.join(",");
    if let Some(p) = probe {
        let _ = write!(s, ",{p}");
    }
    s.push('\n');
    for r in rows {
        let _ = write!(
            s,
            "{},{},{},{},{},{:e},{},{:e},{:e},{:e},{:e},{},{},{:e}",
            r.step,
            r.time,
            r.contacts,
            r.n,
            r.iterations,
            r.residual,
            r.converged,
            r.solve_s,
            r.solve_wall_s,
            r.max_penetration,
            r.kinetic_energy,
            r.warm_matched,
            r.solve_repeats
                .iter()
                .map(|t| format!("{t:e}"))
                .collect::<Vec<_>>()
                .join(";"),
            r.other_s
        );
        if probe.is_some() {
            let _ = write!(s, ",{:e}", r.probe);
        }
        s.push('\n');
    }
    write_atomic(path, s.as_bytes())
}

/// Read a step trace written by [`write_steps`]. Errors: [`HarnessError::Csv`] naming the
/// file and line.
pub fn read_steps(path: &Path) -> Result<Vec<StepRow>> {
    cpbench_harness::results::read_number_rows(path, |line, rec, f| {
        Ok(StepRow {
            step: f(0)? as u64,
            time: f(1)?,
            contacts: f(2)? as usize,
            n: f(3)? as usize,
            iterations: f(4)? as u64,
            residual: f(5)?,
            converged: rec.get(6) == Some("true"),
            solve_s: f(7)?,
            solve_wall_s: f(8)?,
            max_penetration: f(9)?,
            kinetic_energy: f(10)?,
            warm_matched: f(11)? as usize,
            probe: if rec.len() > 14 { f(14)? } else { f64::NAN },
            other_s: f(13)?,
            solve_repeats: rec
                .get(12)
                .unwrap_or("")
                .split(';')
                .filter(|t| !t.is_empty())
                .map(|t| {
                    t.parse::<f64>().map_err(|_| HarnessError::Csv {
                        path: path.to_path_buf(),
                        message: format!("line {line}: bad solve_repeats_s '{t}'"),
                    })
                })
                .collect::<Result<Vec<f64>>>()?,
        })
    })
}

/// Columns of the simulation recipes' `summary.csv`.
pub const SUMMARY_HEADER: [&str; 15] = [
    "case",
    "solver",
    "steps",
    "steps_with_contacts",
    "mean_contacts",
    "mean_iterations",
    "max_iterations",
    "unconverged_steps",
    "mean_solve_s",
    "total_solve_s",
    "max_penetration",
    "final_kinetic_energy",
    "final_probe",
    "repeats",
    "total_solve_spread",
];

/// Per-run figures of a simulation: means over the steps that had contacts.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStats {
    /// Case label.
    pub case: String,
    /// Solver label.
    pub solver: String,
    /// Steps run.
    pub steps: usize,
    /// Steps whose problem had contacts.
    pub steps_with_contacts: usize,
    /// Mean contacts per step with contacts.
    pub mean_contacts: f64,
    /// Mean iterations per step with contacts.
    pub mean_iterations: f64,
    /// Largest iteration count of a step.
    pub max_iterations: u64,
    /// Steps that stopped short of the tolerance.
    pub unconverged_steps: usize,
    /// Mean solver time per step with contacts (s).
    pub mean_solve_s: f64,
    /// Total solver time (s).
    pub total_solve_s: f64,
    /// Largest penetration over the run (m).
    pub max_penetration: f64,
    /// Kinetic energy after the last step (J).
    pub final_kinetic_energy: f64,
    /// The probe after the last step (NaN without one).
    pub final_probe: f64,
    /// Total solver time of each timed repeat of the run (s): `[total_solve_s]` for one,
    /// else the sum over the steps of each repeat's time ([`StepRow::solve_repeats`]).
    pub total_repeats: Vec<f64>,
    /// Wall time of the run's other phases summed over the steps (s): with the solver time,
    /// the time to simulate ([`RunStats::sim_repeats`]).
    pub total_other_s: f64,
}

impl RunStats {
    /// Relative spread of the run's total solver time over its repeats, `(max - min) /
    /// median` (0 for one repeat).
    pub fn total_spread(&self) -> f64 {
        spread(&self.total_repeats)
    }

    /// The time to simulate the run, per timed repeat (s): each repeat's total solver time
    /// plus the other phases (measured once).
    pub fn sim_repeats(&self) -> Vec<f64> {
        self.total_repeats
            .iter()
            .map(|t| t + self.total_other_s)
            .collect()
    }

    /// Median time to simulate the run (s) and its relative spread over the repeats.
    pub fn sim_time(&self) -> (f64, f64) {
        let v = self.sim_repeats();
        (cpbench_harness::run::median_min_max(&v).0, spread(&v))
    }
}

/// `(max - min) / median` of `v` (0 for fewer than two values).
fn spread(v: &[f64]) -> f64 {
    let (med, lo, hi) = cpbench_harness::run::median_min_max(v);
    if v.len() > 1 && med > 0.0 {
        (hi - lo) / med
    } else {
        0.0
    }
}

impl RunStats {
    /// The statistics of one run.
    pub fn of(case: &str, solver: &str, rows: &[StepRow]) -> Self {
        let with: Vec<&StepRow> = rows.iter().filter(|r| r.contacts > 0).collect();
        let m = with.len().max(1) as f64;
        let total: f64 = with.iter().map(|r| r.solve_s).sum();
        Self {
            case: case.into(),
            solver: solver.into(),
            steps: rows.len(),
            steps_with_contacts: with.len(),
            mean_contacts: with.iter().map(|r| r.contacts as f64).sum::<f64>() / m,
            mean_iterations: with.iter().map(|r| r.iterations as f64).sum::<f64>() / m,
            max_iterations: with.iter().map(|r| r.iterations).max().unwrap_or(0),
            unconverged_steps: with.iter().filter(|r| !r.converged).count(),
            mean_solve_s: total / m,
            total_solve_s: total,
            max_penetration: rows.iter().fold(0.0, |a, r| a.max(r.max_penetration)),
            final_kinetic_energy: rows.last().map_or(f64::NAN, |r| r.kinetic_energy),
            final_probe: rows.last().map_or(f64::NAN, |r| r.probe),
            total_repeats: {
                let k = with
                    .iter()
                    .map(|r| r.solve_repeats.len())
                    .min()
                    .unwrap_or(0);
                if k > 1 {
                    (0..k)
                        .map(|j| with.iter().map(|r| r.solve_repeats[j]).sum())
                        .collect()
                } else {
                    vec![total]
                }
            },
            total_other_s: rows.iter().map(|r| r.other_s).sum(),
        }
    }
}

/// Write `summary.csv` (atomically), one row per run.
pub fn write_summary(out: &Path, stats: &[RunStats]) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let csv_err = |e: csv::Error| HarnessError::Csv {
        path: out.join("summary.csv"),
        message: e.to_string(),
    };
    w.write_record(SUMMARY_HEADER).map_err(csv_err)?;
    for s in stats {
        w.write_record([
            s.case.clone(),
            s.solver.clone(),
            s.steps.to_string(),
            s.steps_with_contacts.to_string(),
            format!("{:.6e}", s.mean_contacts),
            format!("{:.6e}", s.mean_iterations),
            s.max_iterations.to_string(),
            s.unconverged_steps.to_string(),
            format!("{:.6e}", s.mean_solve_s),
            format!("{:.6e}", s.total_solve_s),
            format!("{:.6e}", s.max_penetration),
            format!("{:.6e}", s.final_kinetic_energy),
            format!("{:.6e}", s.final_probe),
            s.total_repeats.len().to_string(),
            format!("{:.6e}", s.total_spread()),
        ])
        .map_err(csv_err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| HarnessError::Invalid(e.to_string()))?;
    write_atomic(&out.join("summary.csv"), &bytes)
}

/// Write `manifest.json` of a simulation recipe: `recipe`, git revision, machine, time, and
/// the recipe's own description of its cases and solvers (`cases`, `solvers`: JSON given by
/// the recipe, e.g. scene parameters and solver settings).
pub fn write_manifest(
    out: &Path,
    recipe: &str,
    cases: serde_json::Value,
    solvers: serde_json::Value,
) -> Result<()> {
    write_json_atomic(
        &out.join("manifest.json"),
        &json!({
            "recipe": recipe,
            "git_revision": git_revision(),
            "machine": machine(),
            "created": now_utc().1,
            "cases": cases,
            "solvers": solvers,
        }),
    )
}

/// Draw one figure (PNG and SVG, stem `stem` in `out`) of a per-step quantity against
/// simulated time, one line per series; `y_log` for a log10 y axis. Returns the PNG's file
/// name. Errors: drawing errors.
pub fn plot_vs_time(
    out: &Path,
    stem: &str,
    title: &str,
    y_label: &str,
    series: Vec<Series>,
    y_log: bool,
) -> Result<String> {
    let y_axis = if y_log { Axis::Log10 } else { Axis::Linear };
    let plot = LinePlot::lines(
        title,
        "simulated time [s]",
        y_label,
        series,
        Axis::Linear,
        y_axis,
    );
    draw(out, stem, &plot)
}

/// Draw `plot` to `{out}/{stem}.png` and `.svg` at the default figure size; returns the PNG's
/// file name. Errors: drawing errors.
pub fn draw(out: &Path, stem: &str, plot: &LinePlot) -> Result<String> {
    let png = format!("{stem}.png");
    draw_plot(
        plot,
        &out.join(&png),
        &out.join(format!("{stem}.svg")),
        &FigureOptions::default(),
    )?;
    Ok(png)
}
