//! `melanz2017-fill`: a **set-up re-run** that reproduces no published number: DVIDE's
//! TEST_FILL with four of the paper's solvers in the loop (Melanz,
//! Fang, Jayakumar & Negrut 2017, CMAME 320, "A comparison of numerical methods for solving
//! multibody dynamics problems with frictional contact modeled via differential variational
//! inequalities"; the scene and solver set-up of `melanz/DVIDE`, `models/main.cu` and
//! `src/{APGD,PDIP,PGJ,PGS}.cu`).
//!
//! The scene is [`FillParams`] with 3-DOF spheres (`n x 10 x n` spheres of radius 0.4 on a
//! unit lattice jittered by U(-0.1, 0.1) in `x` and `z`, mass 1, `mu = 0.25`, `h = 1e-2`,
//! gravity 9.81 down `y`, a closed box of six planes). Every solve starts from DVIDE's initial
//! guess `gamma_c = (1, 0, 0)` per contact ([`ColdStart`]: the stepper's warm start is
//! ignored) and stops when Heyn's residual 3 ([`ResidualKind::Res3`], absolute) is at most
//! `1e-3`, the termination test DVIDE applies to all its solvers. Per step the traces record
//! DVIDE's outputs: time, contacts, iterations, solve time, and (the probe column
//! `container_weight`, [`container_weight`]) the vertical contact force on the six container
//! walls, the quantity DVIDE prints as "Weight" (N).
//!
//! Neither the paper's text nor any output of DVIDE's TEST_FILL could be found (the DVIDE
//! repository holds no result files), so no number is compared: the recipe re-runs the
//! set-up and shows our numbers only.

use super::sim::{
    plot_vs_time, simulate, time_series, write_manifest, write_summary, Probe, RunStats, StepRow,
};
use super::{Context, Figure, MdTable, Outcome, Recipe, RecipeInfo};
use cpbench_granular::narrow::Partner;
use cpbench_granular::scenes::FillParams;
use cpbench_granular::{ContactSolution, ContactSolver, Simulation};
use cpbench_harness::error::{HarnessError, Result};
use cpbench_harness::generate::RegistrySolver;
use cpbench_problems::instance::Instance;
use cpbench_problems::ResidualKind;
use cpbench_solvers::ExecSettings;
use serde_json::json;

/// The recipe (see the module documentation).
pub struct Melanz2017Fill;

/// Stopping tolerance on Heyn's residual 3 (DVIDE's TEST_FILL).
pub const TOL: f64 = 1e-3;

/// A size of the run: spheres per side and steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FillSize {
    /// Spheres per side in `x` and `z` (`n x 10 x n` spheres).
    pub n: usize,
    /// Time steps of `h = 1e-2` s.
    pub steps: u64,
}

/// Full size: the paper's default TEST_FILL, `n = 10` (1000 spheres), but 2 s (200 steps:
/// the fall, the impacts, the landed pile and the start of its collapse) instead of the
/// paper's 5 s: measured on a quiet 2-core machine (release build), PGJ takes 195 ms and PGS
/// 172 ms per step on average (up to 7004 and 8413 sweeps a step), the 200 steps 4.5 min in
/// all, so the paper's 500 would take about 11 min.
pub const FULL: FillSize = FillSize { n: 10, steps: 200 };

/// Quick size: `n = 2` (40 spheres), 0.9 s (90 steps): long enough for the pile to land and
/// come to rest.
pub const QUICK: FillSize = FillSize { n: 2, steps: 90 };

/// One solver of the comparison: the label in files and figures, the registry name, its
/// settings and the iteration cap.
#[derive(Clone, Debug)]
pub struct SolverCase {
    /// Label (`apgd`, `ipm-pcg`, `pgj`, `pgs`).
    pub label: &'static str,
    /// The paper's name of the method.
    pub paper_name: &'static str,
    /// Registry name.
    pub registry: &'static str,
    /// Settings (JSON object).
    pub settings: serde_json::Value,
    /// Iteration cap.
    pub max_iter: u64,
}

/// The solvers run, with DVIDE's parameters: APGD; the interior point method as the paper's
/// PDIP (Newton systems by PCG with relative tolerance `min(0.01 tol, 1e-6)`); projected
/// Jacobi (PGJ) and Gauss-Seidel (PGS) with `omega = 0.3`, `lambda = 2/3`. `quick` lowers the
/// first-order caps (the quick size never reaches them).
pub fn solver_cases(quick: bool) -> Vec<SolverCase> {
    let cg_rtol = (0.01 * TOL).min(1e-6);
    let first_order_cap = if quick { 100_000 } else { CAP_FIRST_ORDER };
    vec![
        SolverCase {
            label: "apgd",
            paper_name: "APGD",
            registry: "apgd",
            settings: json!({}),
            max_iter: CAP_APGD,
        },
        SolverCase {
            label: "ipm-pcg",
            paper_name: "PDIP",
            registry: "ipm",
            settings: json!({
                "linear_solver": "pcg",
                // Melanz et al.'s PDIP: block-Jacobi preconditioned CG (not the default IC(0))
                "pcg_preconditioner": "block-jacobi",
                "cg_rtol": cg_rtol,
                "max_iter": CAP_PDIP,
            }),
            max_iter: CAP_PDIP,
        },
        SolverCase {
            label: "pgj",
            paper_name: "PGJ",
            registry: "jacobi",
            settings: json!({"omega": 0.3, "lambda": 2.0 / 3.0}),
            max_iter: first_order_cap,
        },
        SolverCase {
            label: "pgs",
            paper_name: "PGS",
            registry: "pgs",
            settings: json!({"omega": 0.3, "lambda": 2.0 / 3.0}),
            max_iter: first_order_cap,
        },
    ]
}

/// APGD's iteration cap (the paper's 1e5).
pub const CAP_APGD: u64 = 100_000;
/// PDIP's iteration cap (the paper's 1000).
pub const CAP_PDIP: u64 = 1_000;
/// PGJ's and PGS's cap at full size (the paper's is 1e6).
pub const CAP_FIRST_ORDER: u64 = 1_000_000;

/// A registry solver that ignores the stepper's warm start and starts every solve from
/// DVIDE's initial guess `gamma_c = (1, 0, 0)` per contact. The reported residual is the
/// executor's stopping residual (Heyn's residual 3 here) of the returned impulses, computed by
/// the residual module from the problem data (not the solver's own monitor).
pub struct ColdStart {
    inner: RegistrySolver,
    guess: Vec<f64>,
}

impl ColdStart {
    /// Wrap `inner`.
    pub fn new(inner: RegistrySolver) -> Self {
        Self {
            inner,
            guess: Vec::new(),
        }
    }
}

impl ContactSolver for ColdStart {
    /// Errors: those of [`RegistrySolver`]'s solve.
    fn solve(
        &mut self,
        inst: &Instance,
        _warm: Option<&[f64]>,
    ) -> std::result::Result<ContactSolution, String> {
        let n = inst.n();
        let bs = inst.constraints().block_size();
        self.guess.clear();
        self.guess.resize(n, 0.0);
        for blk in self.guess.chunks_exact_mut(bs) {
            blk[0] = 1.0;
        }
        self.inner.solve(inst, Some(&self.guess))
    }
}

/// The vertical force the six container walls carry after a step (N): minus the `y` component
/// of `sum_c (n gamma_n + u gamma_u + w gamma_w) / h` over the sphere-wall contacts (the
/// impulse on a wall, partner `B`, is `+sum_k d_k gamma_k`; normal and friction parts, the
/// lid included). This is DVIDE's "Weight": `models/main.cu` (melanz/DVIDE @ 9dd44066, lines
/// 392-397) sums `f_contact[3 i + 1]`, the `y` component of `D^T gamma / h`, over its six
/// container bodies; we report it with the sign that makes a supported pile positive (DVIDE's
/// sign convention was not checked). At rest it equals the pile's weight `m g` per sphere.
pub fn container_weight(sim: &Simulation) -> f64 {
    let g = sim.last_impulses();
    let h = sim.world().params.h;
    let bs = sim.world().params.block_size();
    sim.contacts()
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c.b, Partner::Plane(_)))
        .map(|(i, c)| {
            let dirs = [c.n.y, c.u.y, c.w.y];
            -(0..bs)
                .map(|k| dirs[k] * g.get(bs * i + k).copied().unwrap_or(0.0))
                .sum::<f64>()
        })
        .sum::<f64>()
        / h
}

/// The scene of `size`: DVIDE's TEST_FILL with 3-DOF spheres, seed 1.
pub fn scene(size: FillSize) -> FillParams {
    FillParams {
        n: size.n,
        rotation: false,
        ..Default::default()
    }
}

/// What one solver's run gives.
#[derive(Clone, Debug)]
pub struct SolverRun {
    /// The solver.
    pub case: SolverCase,
    /// One row per step.
    pub rows: Vec<StepRow>,
    /// Statistics.
    pub stats: RunStats,
}

/// Run every solver on the fill of `size` into `ctx.out` (traces, summary, manifest).
/// Errors: solver, scene and file errors.
pub fn run_fill(ctx: &Context, size: FillSize, cases: &[SolverCase]) -> Result<Vec<SolverRun>> {
    let params = scene(size);
    let case_label = format!("fill3dof-{}", size.n);
    let mut runs = Vec::new();
    for c in cases {
        let exec = ExecSettings {
            tol: TOL,
            residual: Some(ResidualKind::Res3),
            max_iter: c.max_iter,
            stall_window: None,
            ..Default::default()
        };
        let inner = RegistrySolver::new(c.registry, Some(&c.settings), exec)
            .map_err(|e| HarnessError::Invalid(format!("{}: {e}", c.label)))?;
        let mut solver = ColdStart::new(inner);
        ctx.say(format!("{case_label} / {}: {} steps", c.label, size.steps));
        let mut build = || {
            params
                .build(1, false)
                .and_then(|s| s.into_simulation())
                .map_err(|e| HarnessError::Invalid(e.to_string()))
        };
        let rows = simulate(
            ctx,
            &case_label,
            c.label,
            &mut build,
            &mut solver,
            size.steps,
            Some(Probe {
                name: "container_weight",
                f: &container_weight,
            }),
            1,
        )?;
        let stats = RunStats::of(&case_label, c.label, &rows);
        runs.push(SolverRun {
            case: c.clone(),
            rows,
            stats,
        });
    }
    write_summary(
        &ctx.out,
        &runs.iter().map(|r| r.stats.clone()).collect::<Vec<_>>(),
    )?;
    write_manifest(
        &ctx.out,
        "melanz2017-fill",
        json!([{
            "case": case_label, "scene": "fill", "n": size.n, "layers": params.layers,
            "radius": params.radius, "spacing": params.spacing, "jitter": params.jitter,
            "mass": params.mass, "mu": params.mu, "g": params.g, "h": params.h,
            "envelope_min": params.envelope, "dof": 3, "seed": 1, "steps": size.steps,
        }]),
        json!(cases
            .iter()
            .map(|c| json!({
                "label": c.label, "paper": c.paper_name, "registry": c.registry,
                "settings": c.settings, "max_iter": c.max_iter, "tol": TOL,
                "residual": "res3", "initial_guess": "(1, 0, 0) per contact",
                "stall_window": null,
            }))
            .collect::<Vec<_>>()),
    )?;
    Ok(runs)
}

impl Recipe for Melanz2017Fill {
    fn info(&self) -> RecipeInfo {
        RecipeInfo {
            id: "melanz2017-fill",
            paper: "set-up re-run, no published number: Melanz, Fang, Jayakumar & Negrut 2017 \
                    (CMAME 320), DVIDE's TEST_FILL",
            regenerates: "SET-UP RE-RUN (reproduces no published number): iterations and \
                          solve time per step against simulated time for APGD, \
                          the interior point method (as PDIP), PGJ and PGS on 1000 3-DOF \
                          spheres filling a box (n = 10; 2 s of the paper's 5 s), \
                          cold-started, res3 <= 1e-3",
        }
    }

    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let size = if ctx.quick { QUICK } else { FULL };
        let cases = solver_cases(ctx.quick);
        let runs = run_fill(ctx, size, &cases)?;
        let spheres = size.n * size.n * 10;
        let weight = spheres as f64 * 9.81;
        let mut out = Outcome {
            setup: setup_text(size, &cases),
            ..Default::default()
        };
        let mut table = MdTable::new(
            format!("Per solver, {spheres} spheres, {} steps", size.steps),
            &[
                "solver (paper)",
                "mean contacts",
                "mean iterations / step",
                "max iterations",
                "unconverged steps",
                "largest res3",
                "mean solve time / step [ms]",
                "total solve time [s]",
                "max penetration [m]",
                "peak / final kinetic energy [J]",
                "container weight (DVIDE's \"Weight\"), mean of the last 0.2 s [N]",
            ],
        );
        for r in &runs {
            let s = &r.stats;
            let peak = r.rows.iter().fold(0.0f64, |a, x| a.max(x.kinetic_energy));
            let worst = r
                .rows
                .iter()
                .filter(|x| x.contacts > 0)
                .fold(0.0f64, |a, x| a.max(x.residual));
            table.row(vec![
                format!("`{}` ({})", r.case.label, r.case.paper_name),
                format!("{:.0}", s.mean_contacts),
                format!("{:.1}", s.mean_iterations),
                s.max_iterations.to_string(),
                s.unconverged_steps.to_string(),
                format!("{worst:.2e}"),
                format!("{:.3}", 1e3 * s.mean_solve_s),
                format!("{:.2}", s.total_solve_s),
                format!("{:.2e}", s.max_penetration),
                format!("{peak:.1} / {:.2e}", s.final_kinetic_energy),
                format!(
                    "{:.1} ({:.1}% of {weight:.1})",
                    tail_weight(&r.rows),
                    100.0 * tail_weight(&r.rows) / weight
                ),
            ]);
        }
        out.tables.push(table);
        let series = |f: &dyn Fn(&StepRow) -> f64| {
            let labelled = runs.iter().map(|r| {
                let label = format!("{} ({})", r.case.label, r.case.paper_name);
                (label, r.rows.as_slice())
            });
            time_series(labelled, &|x| x.contacts > 0, f)
        };
        // (file stem, title, y label, value per step, log y, caption)
        type Value = fn(&StepRow) -> f64;
        let per_step: [(&str, &str, &str, Value, bool, String); 3] = [
            (
                "iterations_vs_time",
                "iterations per step",
                "iterations",
                |x| x.iterations as f64,
                true,
                format!(
                    "Iterations per step against simulated time, one line per solver ({spheres} \
                     spheres, cold start, res3 <= 1e-3)."
                ),
            ),
            (
                "solve_time_vs_time",
                "solve time per step",
                "solve time [s]",
                |x| x.solve_s,
                true,
                "Solver time per step (the solver's own time, monitoring excluded) against \
                 simulated time."
                    .into(),
            ),
            (
                "container_weight_vs_time",
                "vertical force on the container",
                "vertical contact force on the six walls [N]",
                |x| x.probe,
                false,
                format!(
                    "Vertical contact force on the six container walls against simulated time \
                     (normal and friction, lid included: DVIDE's \"Weight\" output, \
                     models/main.cu lines 392-397); the pile's weight is {weight:.1} N."
                ),
            ),
        ];
        for (stem, title, y_label, value, y_log, caption) in per_step {
            let title = format!("TEST_FILL, {spheres} spheres: {title}");
            let file = plot_vs_time(&ctx.out, stem, &title, y_label, series(&value), y_log)?;
            out.figures.push(Figure { file, caption });
        }
        if !ctx.quick {
            // computed from this run, never fixed text
            let gauss: Vec<String> = runs
                .iter()
                .filter(|r| r.case.label == "pgj" || r.case.label == "pgs")
                .map(|r| {
                    format!(
                        "`{}` {:.0} ms per step on average, at most {} iterations in a step",
                        r.case.label,
                        1e3 * r.stats.mean_solve_s,
                        r.stats.max_iterations
                    )
                })
                .collect();
            let (peak, last) = runs
                .first()
                .map(|r| {
                    (
                        r.rows.iter().fold(0.0f64, |a, x| a.max(x.kinetic_energy)),
                        r.stats.final_kinetic_energy,
                    )
                })
                .unwrap_or((f64::NAN, f64::NAN));
            out.notes.push(format!(
                "Simulated time: {:.0} s ({} steps) of the paper's 5 s. Measured in this run: \
                 {}; the paper's 500 steps would take about {:.1} times as long. Kinetic \
                 energy of the first solver's run: peak {peak:.0} J, {last:.0} J after the last \
                 step (the pile is not at rest at the end).",
                size.steps as f64 * 1e-2,
                size.steps,
                gauss.join("; "),
                500.0 / size.steps as f64
            ));
        }
        out.not_compared.push(
            "everything: neither the paper's text (numbers, figures, conclusions) nor any \
             output of DVIDE's TEST_FILL could be found, so this recipe is a set-up re-run \
             whose tables and figures are ours only"
                .into(),
        );
        Ok(out)
    }
}

/// Mean container weight (the probe) over the last 20 steps (N).
fn tail_weight(rows: &[StepRow]) -> f64 {
    let k = rows.len().saturating_sub(20);
    let tail = &rows[k..];
    tail.iter().map(|r| r.probe).sum::<f64>() / tail.len().max(1) as f64
}

fn setup_text(size: FillSize, cases: &[SolverCase]) -> String {
    let mut s = format!(
        "Scene: DVIDE's TEST_FILL (`models/main.cu`): n x 10 x n = {} spheres (n = {}), 3 DOF \
         (translation only, as DVIDE's bodies), radius 0.4 m, mass 1 kg, on a lattice of \
         spacing 1 m jittered by U(-0.1, 0.1) m in x and z (seed 1), falling into a closed box \
         [0, n] x [0, 11] x [0, n] m of six walls; mu = 0.25, g = 9.81 m/s^2 down y, h = 1e-2 \
         s, {} steps ({} s). Our stepper's contact envelope (a contact enters the problem when \
         its gap is below max(0.01 m, 2 h v_max)) is ours, not DVIDE's.\n\n\
         Every solve starts from gamma_c = (1, 0, 0) per contact (DVIDE does not warm start) \
         and stops when Heyn's residual 3 (`res3`, absolute: the worst cone violation, dual \
         cone violation and complementarity product over the contacts) is <= {TOL:e}, the \
         test DVIDE applies to all its solvers; no stall test. The residual in the traces is \
         res3 recomputed from the returned impulses.\n\n| solver | paper | settings | cap |\n\
         |---|---|---|---|\n",
        size.n * size.n * 10,
        size.n,
        size.steps,
        size.steps as f64 * 1e-2
    );
    for c in cases {
        s.push_str(&format!(
            "| `{}` (`{}`) | {} | `{}` | {} |\n",
            c.label, c.registry, c.paper_name, c.settings, c.max_iter
        ));
    }
    s.push_str(
        "\nThe interior point method stands in for the paper's PDIP: ours is Mehrotra's \
         predictor-corrector with Nesterov-Todd scaling on the second-order cones, PDIP a \
         primal-dual method with mu_pdip = 10, alpha = 0.01, beta = 0.8 (backtracking line \
         search). Both solve the Newton systems by conjugate gradients with relative \
         tolerance min(0.01 tol, 1e-6) = 1e-6. Ours starts at its own interior point, not at \
         (1, 0, 0). PGJ and PGS use DVIDE's omega = 0.3, lambda = 2/3 (block step 1 / (tr N_cc \
         / 3), DVIDE's B). Caps: the paper's (APGD 1e5, PDIP 1000, PGJ/PGS 1e6) unless the \
         table says otherwise.\n",
    );
    s
}
