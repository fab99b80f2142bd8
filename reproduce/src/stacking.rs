//! `horak-trinkle2019-stacking`: Horak & Trinkle 2019 (IEEE RA-L 4(2), "On the similarities
//! and differences among contact models in robot simulation"), the sphere-stacking experiment
//! of their code (`erwincoumans/contact_models`, `experiments/exp_stacking.m`,
//! `exp_stacking_err.m`, `solvers/solver_*.m`).
//!
//! Their set-up, as the scripts have it: `n = 1..15` spheres (`r = 0.05 m`, `m = 0.2 kg`) in a
//! box `3r x 3r` (walls at `0` and `3r` in both horizontal directions, floor at height 0),
//! started `3r` apart vertically (centres at heights `r (3k - 1.5)`, `k = 1..n`) and
//! horizontally at the box centre, each coordinate perturbed uniformly by `+-r/2`; they fall
//! and stack; `mu = 0.3`, `h = 0.01 s`, 100 steps (101 time points); contacts within 0.1 m
//! (sphere pairs, walls, floor) enter the problem with the gap term `psi / h`. Every
//! formulation is solved by 30 sweeps of projected Gauss-Seidel from zero (no tolerance):
//! NCP (true Coulomb, normal then disc projection per contact), BLCP (ODE boxes, scalar
//! sweeps), CCP (block sweeps with the cone projection, step `1 / mean(diag N_cc)`), convex
//! (the CCP with `N + diag(R)`, `R_c = max(1e-3 mean(diag N_cc), 1e-5)`, same sweeps). They
//! record the penetration at the last step (`-min(psi, 0)`) and the summed solve time.
//! `exp_stacking_err.m` steps the 4-sphere column 100 steps with their direct LCP solver
//! (Lemke on the pyramid LCP), then runs each model's sweeps 1000 times on that state and
//! plots `min_c (N gamma + r)_n` per iteration.
//!
//! Ours: the same scene in the granular stepper (`y` up), each formulation derived from the
//! stepper's CCP ([`super::formulations`]) and solved by the registry solver closest to
//! theirs: NCP -> `coulomb` + `nsgs`, BLCP -> `blcp` + `pgs`, CCP -> `ccp` + `pgs` (trace
//! block step), convex -> the regularised CCP + `pgs` (trace block step), and the LCP ->
//! `lcp-pyramid:4` + `lemke`; 30 iterations from zero, no tolerance test (Lemke: to
//! convergence).

use super::formulations::{Formulation, FormulationSolver};
use super::sim::{self, RunStats, StepRow};
use super::{Comparison, Context, Figure, MdTable, Outcome, Recipe, RecipeInfo};
use cpbench_granular::nalgebra::Vector3;
use cpbench_granular::rng::SplitMix64;
use cpbench_granular::{Body, ContactSolver, Plane, SimParams, Simulation, World};
use cpbench_harness::error::{HarnessError, Result};
use cpbench_harness::plot::{Axis, LinePlot, Series};
use cpbench_problems::io::ClassChoice;
use cpbench_solvers::ExecSettings;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The recipe (see the module documentation).
pub struct HorakTrinkleStacking;

/// One run's figures: final penetration, largest penetration (m), total and mean solve time (s).
type Cell = (f64, f64, f64, f64);

/// Sphere radius (m).
pub const RADIUS: f64 = 0.05;
/// Sphere mass (kg).
pub const MASS: f64 = 0.2;
/// Friction coefficient.
pub const MU: f64 = 0.3;
/// Time step (s).
pub const H: f64 = 0.01;
/// Steps (their `N = 101` time points).
pub const STEPS: u64 = 100;
/// Their contact distance `ctol` (m): our collision envelope.
pub const ENVELOPE: f64 = 0.1;
/// Their fixed number of Gauss-Seidel sweeps per step.
pub const SWEEPS: u64 = 30;
/// Iterations of the `_err` experiment.
pub const ERR_ITERATIONS: u64 = 1000;
/// Seed of the initial perturbations (height `n` uses `SEED + n`).
pub const SEED: u64 = 2019;

/// A model of the paper and how we run it.
#[derive(Clone, Copy, Debug)]
pub struct Model {
    /// The paper's name (`NCP`).
    pub name: &'static str,
    /// Our formulation.
    pub formulation: Formulation,
    /// Our registry solver.
    pub solver: &'static str,
    /// Its settings (JSON), `None`: defaults.
    pub settings: Option<&'static str>,
    /// Fixed sweeps from zero (`true`) or a direct solve to convergence (Lemke).
    pub fixed_sweeps: bool,
}

/// The models: the paper's four, then the pyramid LCP solved by Lemke (their reference).
pub fn models() -> [Model; 5] {
    let trace = Some(r#"{"block_step": "trace"}"#);
    [
        Model {
            name: "NCP",
            formulation: Formulation::Class(ClassChoice::Coulomb),
            solver: "nsgs",
            settings: None,
            fixed_sweeps: true,
        },
        Model {
            name: "BLCP",
            formulation: Formulation::Class(ClassChoice::Blcp),
            solver: "pgs",
            settings: None,
            fixed_sweeps: true,
        },
        Model {
            name: "CCP",
            formulation: Formulation::Class(ClassChoice::Ccp),
            solver: "pgs",
            settings: trace,
            fixed_sweeps: true,
        },
        Model {
            name: "Convex",
            formulation: Formulation::HORAK_TRINKLE_CONVEX,
            solver: "pgs",
            settings: trace,
            fixed_sweeps: true,
        },
        Model {
            name: "LCP",
            formulation: Formulation::Class(ClassChoice::LcpPyramid { k: 4 }),
            solver: "lemke",
            settings: None,
            fixed_sweeps: false,
        },
    ]
}

/// The executor of a model: `iterations` sweeps and no tolerance test (a tolerance of the
/// smallest positive double), or for a direct solver tolerance `1e-12` and 100000 pivots.
pub fn exec(fixed_sweeps: bool, iterations: u64) -> ExecSettings {
    if fixed_sweeps {
        ExecSettings {
            tol: f64::MIN_POSITIVE,
            max_iter: iterations,
            stall_window: None,
            divergence_factor: f64::MAX,
            ..ExecSettings::default()
        }
    } else {
        ExecSettings {
            tol: 1e-12,
            max_iter: 100_000,
            stall_window: None,
            ..ExecSettings::default()
        }
    }
}

fn solver_of(m: &Model, iterations: u64) -> Result<FormulationSolver> {
    let settings = m
        .settings
        .map(serde_json::from_str::<serde_json::Value>)
        .transpose()
        .map_err(|e| HarnessError::Invalid(e.to_string()))?;
    FormulationSolver::new(
        m.formulation,
        m.solver,
        settings.as_ref(),
        exec(m.fixed_sweeps, iterations),
    )
    .map(FormulationSolver::cold)
    .map_err(|e| HarnessError::Invalid(format!("{}: {e}", m.name)))
}

/// The iteration counts at which the `exp_stacking_err` curve is sampled: 1..10, then about
/// 12 per decade up to `max` (rounded, distinct, increasing, `max` included).
pub fn err_grid(max: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (1..=max.min(10)).collect();
    let mut x = 10.0f64;
    while x < max as f64 {
        x *= 10f64.powf(1.0 / 12.0);
        let k = (x.round() as u64).min(max);
        if v.last().is_none_or(|&l| k > l) {
            v.push(k);
        }
    }
    if v.last() != Some(&max) {
        v.push(max);
    }
    v
}

/// The column of `n` spheres in the `3r x 3r` box (module documentation), perturbed with
/// seed `SEED + n`. Errors: `n = 0`.
pub fn build(n: usize) -> Result<Simulation> {
    if n == 0 {
        return Err(HarnessError::Invalid("a column of 0 spheres".into()));
    }
    let r = RADIUS;
    let mut rng = SplitMix64::new(SEED + n as u64);
    let g = |e: cpbench_granular::GranularError| HarnessError::Invalid(e.to_string());
    let mut bodies = Vec::with_capacity(n);
    for k in 1..=n {
        let x = 1.5 * r + r * (rng.next_f64() - 0.5);
        let z = 1.5 * r + r * (rng.next_f64() - 0.5);
        let y = r * (3.0 * k as f64 - 1.5) + r * (rng.next_f64() - 0.5);
        bodies.push(Body::sphere(Vector3::new(x, y, z), r, MASS).map_err(g)?);
    }
    let w = 3.0 * r;
    let planes = [
        (Vector3::y(), Vector3::zeros()),
        (Vector3::x(), Vector3::zeros()),
        (-Vector3::x(), Vector3::new(w, 0.0, 0.0)),
        (Vector3::z(), Vector3::zeros()),
        (-Vector3::z(), Vector3::new(0.0, 0.0, w)),
    ]
    .into_iter()
    .map(|(nrm, p)| Plane::new(nrm, p).map_err(g))
    .collect::<Result<Vec<_>>>()?;
    let world = World {
        bodies,
        planes,
        params: SimParams {
            h: H,
            gravity: Vector3::new(0.0, -9.81, 0.0),
            mu: MU,
            envelope: ENVELOPE,
            frictionless: false,
            ..Default::default()
        },
    };
    let mut params = BTreeMap::new();
    params.insert("spheres".into(), n.to_string());
    Simulation::new(world, format!("stack{n:02}"), params, Some(SEED + n as u64)).map_err(g)
}

/// `min_c (N gamma + r)_n` over the contacts of the CCP `inst` (their `err`: the normal
/// velocity after the step, `psi / h` included; m/s).
pub fn min_normal_velocity(inst: &cpbench_problems::Instance, gamma: &[f64]) -> f64 {
    let mut u = vec![0.0; inst.n()];
    inst.matvec(gamma, &mut u);
    u.iter()
        .zip(inst.r())
        .step_by(3)
        .map(|(a, b)| a + b)
        .fold(f64::INFINITY, f64::min)
}

impl Recipe for HorakTrinkleStacking {
    fn info(&self) -> RecipeInfo {
        RecipeInfo {
            id: "horak-trinkle2019-stacking",
            paper: "Horak & Trinkle 2019, IEEE RA-L 4(2) (erwincoumans/contact_models, \
                    experiments/exp_stacking.m)",
            regenerates: "penetration error and solve time against the height of a sphere \
                          column (1-15 spheres) for the NCP, BLCP, CCP and convex models (30 \
                          PGS sweeps) and the pyramid LCP (Lemke); the 1000-sweep error on the \
                          4-sphere column",
        }
    }

    fn run(&self, ctx: &Context) -> Result<Outcome> {
        let (heights, steps) = if ctx.quick {
            (4usize, 20u64)
        } else {
            (15usize, STEPS)
        };
        let models = models();
        let mut stats: Vec<RunStats> = Vec::new();
        // [height][model] -> (final penetration, max penetration, total solve, mean solve)
        let mut grid: Vec<Vec<Cell>> = Vec::new();
        let mut failures: Vec<String> = Vec::new();
        for n in 1..=heights {
            let case = format!("n{n:02}");
            let mut line = Vec::new();
            for m in &models {
                let mut solver = solver_of(m, SWEEPS)?;
                let rows: Vec<StepRow> = match sim::simulate(
                    ctx,
                    &case,
                    m.name,
                    &mut || build(n),
                    &mut solver,
                    steps,
                    None,
                    1,
                ) {
                    Ok(rows) => rows,
                    Err(e) => {
                        // a solver failure is a result of the run, recorded, not fatal
                        failures.push(format!("{n} spheres, {}: {e}", m.name));
                        line.push((f64::NAN, f64::NAN, f64::NAN, f64::NAN));
                        continue;
                    }
                };
                let st = RunStats::of(&case, m.name, &rows);
                let last = rows.last().map_or(f64::NAN, |r| r.max_penetration);
                line.push((last, st.max_penetration, st.total_solve_s, st.mean_solve_s));
                stats.push(st);
            }
            ctx.say(format!("{n} spheres done"));
            grid.push(line);
        }
        sim::write_summary(&ctx.out, &stats)?;
        sim::write_manifest(
            &ctx.out,
            "horak-trinkle2019-stacking",
            json!({ "heights": format!("1..={heights}"), "radius": RADIUS, "mass": MASS,
                    "mu": MU, "h": H, "steps": steps, "envelope": ENVELOPE, "box": 3.0 * RADIUS,
                    "seed": format!("{SEED} + n") }),
            json!(models
                .iter()
                .map(
                    |m| json!({ "model": m.name, "formulation": m.formulation.label(),
                    "solver": m.solver, "settings": m.settings,
                    "iterations": if m.fixed_sweeps { json!(SWEEPS) } else { json!("to 1e-12") },
                    "cold_start": true })
                )
                .collect::<Vec<_>>()),
        )?;

        // the `_err` experiment on the 4-sphere column
        let n_err = 4.min(heights);
        let mut sim4 = build(n_err)?;
        let mut direct = solver_of(&models[4], 0)?;
        for _ in 0..steps {
            sim4.step(&mut direct)
                .map_err(|e| HarnessError::Invalid(format!("err state: {e}")))?;
        }
        let inst = sim4
            .build_instance()
            .map_err(|e| HarnessError::Invalid(e.to_string()))?
            .cloned()
            .ok_or_else(|| HarnessError::Invalid("the 4-sphere column has no contacts".into()))?;
        let mut err_rows = Vec::new();
        for m in &models {
            let mut s = solver_of(m, ERR_ITERATIONS)?;
            let sol = s.solve(&inst, None).map_err(HarnessError::Invalid)?;
            err_rows.push((
                m.name,
                sol.iterations,
                min_normal_velocity(&inst, &sol.gamma),
            ));
        }

        // their `exp_stacking_err` figure: the error of each sweep model against the
        // iteration, from zero on the same state; we sample the iterations on a log grid and
        // solve from zero to each (the returned, best-residual iterate after k iterations)
        let ks = err_grid(ERR_ITERATIONS);
        let mut err_curves: Vec<Series> = Vec::new();
        let mut err_csv = String::from("model,iteration,min_normal_velocity\n");
        for (k_model, m) in models.iter().enumerate().filter(|(_, m)| m.fixed_sweeps) {
            let mut pts = Vec::new();
            for &k in &ks {
                let mut s = solver_of(m, k)?;
                let sol = s.solve(&inst, None).map_err(HarnessError::Invalid)?;
                let u = min_normal_velocity(&inst, &sol.gamma);
                let _ = writeln!(err_csv, "{},{k},{u:e}", m.name);
                // their axis: the negative error on a reversed log scale; ours: -u on a log
                // scale (a non-negative error, no penetration velocity, is not drawn)
                if u < 0.0 {
                    pts.push((k as f64, -u));
                }
            }
            err_curves.push(Series {
                label: m.name.to_string(),
                points: pts,
                color: Some(k_model),
            });
        }
        cpbench_harness::fsutil::write_atomic(
            &ctx.out.join("error_vs_iterations.csv"),
            err_csv.as_bytes(),
        )?;
        let err_plot = LinePlot::lines(
            &format!("exp_stacking_err: {n_err}-sphere column, error against iterations from zero"),
            "iteration (log scale)",
            "-min_c (N gamma + r)_n [m/s]",
            err_curves,
            Axis::Log10,
            Axis::Log10,
        );
        let err_png = sim::draw(&ctx.out, "error_vs_iterations", &err_plot)?;

        let mut out = Outcome {
            setup: format!(
                "Scene as `exp_stacking.m`: 1..{heights} spheres, r = {RADIUS} m, m = {MASS} \
                 kg, in a box {w} m x {w} m (walls and floor are planes), started 3r apart \
                 vertically, each coordinate perturbed uniformly by +-r/2 (our SplitMix64, \
                 seed {SEED} + n; MATLAB's `rng('default')` stream is not reproduced), mu = \
                 {MU}, h = {H} s, {steps} steps{quick}, contacts within {ENVELOPE} m (their \
                 `ctol`) in the problem, gap term Phi/h (their `psi/h`). Models (their name -> \
                 our formulation and solver): NCP -> `coulomb` + `nsgs`; BLCP -> `blcp` + \
                 `pgs`; CCP -> `ccp` + `pgs` (block step tr(N_cc)/3 as theirs); Convex -> \
                 the CCP with N + diag(R), R_c = max(1e-3 tr(N_cc)/3, 1e-5) (their \
                 `solver_convex.m`), `pgs` with the same block step; LCP -> `lcp-pyramid:4` + \
                 `lemke` (their `solver_lcp.m`, used as the direct reference). Each of the \
                 four models: {SWEEPS} iterations from zero every step, no tolerance test \
                 (theirs: 30 sweeps); Lemke to convergence. Penetration error: the largest \
                 overlap at the start of the last step (theirs: `-min(psi, 0)` at the last \
                 step); solve time: the solver's own time summed over the steps (theirs: \
                 `tic/toc` around the solver function, which also forms `A = J M^-1 J^T`).\n",
                w = 3.0 * RADIUS,
                quick = ctx.quick_note(" (quick size: the paper's is 1..15 spheres, 100 steps)")
            ),
            ..Default::default()
        };
        let mut pen = MdTable::new(
            "Penetration error at the last step [m] (max over the run in brackets)",
            &["spheres", "NCP", "BLCP", "CCP", "Convex", "LCP (Lemke)"],
        );
        let mut time = MdTable::new(
            "Solve time summed over the run [s] (mean per step in brackets)",
            &["spheres", "NCP", "BLCP", "CCP", "Convex", "LCP (Lemke)"],
        );
        for (i, line) in grid.iter().enumerate() {
            let mut a = vec![(i + 1).to_string()];
            let mut b = vec![(i + 1).to_string()];
            for &(last, max, total, mean) in line {
                if last.is_nan() {
                    a.push("failed".into());
                    b.push("failed".into());
                    continue;
                }
                a.push(format!("{last:.2e} ({max:.2e})"));
                b.push(format!("{total:.2e} ({mean:.1e})"));
            }
            pen.row(a);
            time.row(b);
        }
        out.tables.push(pen);
        out.tables.push(time);
        let mut et = MdTable::new(
            format!(
                "`exp_stacking_err`: {n_err}-sphere column after {steps} Lemke steps, one \
                 solve from zero ({ERR_ITERATIONS} iterations; Lemke to convergence)"
            ),
            &[
                "model",
                "iterations",
                "min_c (N gamma + r)_n [m/s]",
                "implied overlap h max(0, -u) [m]",
            ],
        );
        for (name, it, u) in &err_rows {
            et.row(vec![
                name.to_string(),
                it.to_string(),
                format!("{u:.3e}"),
                format!("{:.3e}", H * (-u).max(0.0)),
            ]);
        }
        out.tables.push(et);

        // figures as theirs: penetration (log y) and solve time against the column height
        let series = |f: &dyn Fn(&Cell) -> f64| -> Vec<Series> {
            models
                .iter()
                .enumerate()
                .map(|(k, m)| Series {
                    label: m.name.to_string(),
                    points: grid
                        .iter()
                        .enumerate()
                        .map(|(i, l)| ((i + 1) as f64, f(&l[k])))
                        .filter(|p| p.1.is_finite())
                        .collect(),
                    color: Some(k),
                })
                .collect()
        };
        // (file stem, title, y label, value, y axis, caption)
        type Panel<'a> = (
            &'a str,
            &'a str,
            &'a str,
            &'a dyn Fn(&Cell) -> f64,
            Axis,
            &'a str,
        );
        let panels: [Panel; 2] = [
            (
                "penetration",
                "Sphere column: penetration error at the last step",
                "penetration error [m]",
                &|c| c.0,
                Axis::Log10,
                "Penetration error (largest overlap at the last step) against the number of \
                 spheres, one line per model (their Fig.: `exp_stacking.m` figure 1); zero is \
                 drawn at the axis' low end.",
            ),
            (
                "solve_time",
                "Sphere column: solve time over the run",
                "solve time [s]",
                &|c| c.2,
                Axis::Linear,
                "Solver time summed over the run against the number of spheres (their \
                 `exp_stacking.m` figure 2).",
            ),
        ];
        for (stem, title, y_label, pick, y_axis, caption) in panels {
            let plot = LinePlot::lines(
                title,
                "number of spheres",
                y_label,
                series(pick),
                Axis::Linear,
                y_axis,
            );
            out.figures.push(Figure {
                file: sim::draw(&ctx.out, stem, &plot)?,
                caption: caption.into(),
            });
        }

        out.figures.push(Figure {
            file: err_png,
            caption: format!(
                "Their `exp_stacking_err.m` figure: the penetration velocity -min_c (N gamma + \
                 r)_n of each sweep model against the iterations from zero on the \
                 {n_err}-sphere column after {steps} Lemke steps, sampled at {} iteration \
                 counts from 1 to {ERR_ITERATIONS} (data: `error_vs_iterations.csv`). Theirs \
                 plots the same quantity negated on a reversed log axis and the convex model's \
                 with N + diag(R); ours uses N for every model. A model whose error reaches 0 \
                 or above has no point there.",
                ks.len()
            ),
        });

        // the one statement of their code we can check: the direct LCP solve
        let lemke_u = err_rows[4].2;
        out.comparisons.push(Comparison::claim(
            format!("min normal velocity after the direct LCP solve, {n_err}-sphere column"),
            lemke_u,
            format!("{lemke_u:.2e} m/s"),
            "\"Use direct solver so penetration error is near machine precision\" (comment in \
             exp_stacking_err.m on solver_lcp)",
            Some(lemke_u > -1e-12),
            "erwincoumans/contact_models experiments/exp_stacking_err.m",
        ));
        // the direct LCP solver over the columns: not the source's set-up (exp_stacking.m
        // runs no LCP), so set beside the statement and not decided, but never hidden
        let lcp_col = 4;
        let lcp_fail: Vec<String> = failures
            .iter()
            .filter(|f| f.contains(&format!(" spheres, {}: ", models[lcp_col].name)))
            .cloned()
            .collect();
        let (worst_n, worst) = grid
            .iter()
            .enumerate()
            .map(|(i, l)| (i + 1, l[lcp_col].1))
            .filter(|(_, v)| v.is_finite())
            .fold((0, 0.0f64), |a, b| if b.1 > a.1 { b } else { a });
        out.comparisons.push(Comparison::claim(
            format!(
                "the direct LCP solve (Lemke) over the 1..{heights}-sphere columns: failures and \
                 the largest overlap of any step"
            ),
            worst,
            format!(
                "{} failed run(s){}; largest overlap {worst:.2e} m ({worst_n} spheres). Not \
                 decided: the statement is made for the 4-sphere column of exp_stacking_err.m; \
                 exp_stacking.m runs no LCP solver, the columns are our extension",
                lcp_fail.len(),
                if lcp_fail.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", lcp_fail.join("; "))
                }
            ),
            "\"Use direct solver so penetration error is near machine precision\" (comment in \
             exp_stacking_err.m on solver_lcp)",
            None,
            "erwincoumans/contact_models experiments/exp_stacking_err.m",
        ));
        for f in &failures {
            out.notes.push(format!(
                "Failed (no numbers; drawn as gaps, `failed` in the tables): {f}"
            ));
        }
        out.not_compared.push(
            "the paper's text and numbers (which models' penetration grows with the column \
             height, their timings): not available to us; the tables and figures are our \
             measurements of their scripts' set-up"
                .into(),
        );
        out.notes.push(
            "Differences from their solvers: `nsgs` solves each contact's Coulomb problem \
             locally (Alart-Curnier/fixed-point local solver) where their NCP sweep makes one \
             normal then one disc projection; our `pgs` on `blcp` sweeps the scalar rows as \
             theirs; `pgs` on the CCP with `block_step: trace` is their block update. The \
             convex model is the CCP with a constant diagonal regulariser (MuJoCo's soft \
             contacts without the impedance schedule): a different problem from the CCP, \
             whose solution has N gamma + r = -R gamma in the normal rows, i.e. a built-in \
             penetration velocity."
                .into(),
        );
        Ok(out)
    }
}
