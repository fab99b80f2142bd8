//! `cpbench generate`: simulate a granular scene with a solver in the loop and export the
//! contact problems of chosen steps as native bundles or, with `--fclib`, fclib HDF5 files (a
//! folder usable as `cpbench run --instances DIR`), plus `trajectory.csv`, and on request VTK
//! files (`--vtk`) and PNG views (`--snapshots`) of the scene. With `--model penalty` the scene
//! runs on the penalty (spring-dashpot, velocity Verlet) stepper instead, for comparison, and
//! only `trajectory.csv` is written.

use crate::cmd::args;
use crate::AnyError;
use clap::Args;
use cpbench_granular::{SceneKind, SceneSpec, StepReport};
use cpbench_harness::generate::{
    generate as run_generate, ExportFormat, GenerateConfig, RunSettings,
};
use cpbench_problems::io::OutputFormat;
use cpbench_problems::operator::OperatorKind;
use cpbench_solvers::ExecSettings;
use std::path::PathBuf;

/// `--scene`'s parser: one of [`cpbench_granular::scene_names`]. Errors: the unknown name
/// with every known one.
fn scene_name(s: &str) -> Result<String, String> {
    let names = cpbench_granular::scene_names();
    if names.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!("unknown scene '{s}' (known: {})", names.join(", ")))
    }
}

/// Arguments of `cpbench generate`, in groups: the scene or the random LCP, the run, the
/// solver in the loop (complementarity stepper), the export, the 3-D contact laws and views
/// (3-D complementarity stepper), and the penalty model. Which groups a model takes follows
/// from [`Model`]: a flag of a group the model does not take is refused by name.
#[derive(Args)]
pub struct GenerateArgs {
    /// The scene.
    #[command(flatten)]
    pub scene: SceneArgs,
    /// The random LCP (instead of a scene).
    #[command(flatten)]
    pub lcp: LcpArgs,
    /// Steps, exports, seed, output.
    #[command(flatten)]
    pub run: RunArgs,
    /// The solver in the loop.
    #[command(flatten)]
    pub solve: SolveArgs,
    /// Export format and storage of the exported steps.
    #[command(flatten)]
    pub export: ExportArgs,
    /// Restitution and rolling resistance (3-D complementarity stepper).
    #[command(flatten)]
    pub laws: ContactLawArgs,
    /// Views and the saved state (3-D complementarity stepper).
    #[command(flatten)]
    pub views: ViewArgs,
    /// The penalty model.
    #[command(flatten)]
    pub penalty: PenaltyArgs,
}

/// The scene of `cpbench generate`.
#[derive(Args)]
pub struct SceneArgs {
    /// Scene: fill (Melanz 2017 TEST_FILL, size n -> n x 10 x n spheres), pile (size spheres),
    /// pyramid (size layers), tube (size spheres), bounce (size spheres dropped onto a floor,
    /// restitution 0.8), cradle (Newton's cradle: size spheres in a row, restitution 1),
    /// ellipsoid-fill (size n -> n x 10 x n ellipsoids in a box; 10: the 1000 ellipsoids of
    /// Vyatkin & Dolgovesov), ellipsoid-pile (size ellipsoids poured into a heap), stack (a
    /// column of size spheres at rest on a floor), slide (size balls sliding on a floor until
    /// they roll), mass-ratio (a 1 kg sphere between two of size kg in a column), chain (size
    /// spheres on ball joints, pinned at one end, swinging onto a floor), bridge (size spheres
    /// on ball joints pinned at both ends, heavy spheres dropped on it), hinge-chain (the chain
    /// on hinges whose axes are tilted 0.5 rad from z towards y: it swings in the tilted
    /// plane); planar
    /// (2-D discs, fc2d instances): disc-hopper (size discs flowing through a hopper orifice),
    /// beam-impact (a bonded beam of size x 3 discs struck by a disc, fracturing).
    #[arg(long, required_unless_present = "lcp", value_parser = scene_name)]
    pub scene: Option<String>,
    /// Aspect ratio a/b of the spheroids (a, b, b) of the ellipsoid scenes, in [0.1, 10]:
    /// > 1 prolate, < 1 oblate, 1 spheres through the ellipsoid narrow phase [default: 2].
    #[arg(long)]
    pub aspect: Option<f64>,
    /// Scene size (see --scene).
    #[arg(long, required_unless_present = "lcp", allow_negative_numbers = true)]
    pub size: Option<i64>,
}

/// `cpbench generate --lcp`: a random LCP instead of a scene.
#[derive(Args)]
#[command(next_help_heading = "Random LCP (instead of a scene)")]
pub struct LcpArgs {
    /// Instead of a scene, export one seeded random general LCP with a known solution:
    /// `p-matrix`, `psd` or `nonmonotone` (docs/formulation.md), of --n unknowns, off-diagonal
    /// --density, --seed; written as --format bundle (default) or npz into --out.
    #[arg(long, conflicts_with_all = ["scene", "size"], value_parser = ["p-matrix", "psd", "nonmonotone"])]
    pub lcp: Option<String>,
    /// Unknowns of the --lcp instance.
    #[arg(
        long,
        default_value_t = 100,
        requires = "lcp",
        allow_negative_numbers = true
    )]
    pub n: i64,
    /// Off-diagonal density of the --lcp instance, in (0, 1].
    #[arg(long, default_value_t = 0.1, requires = "lcp")]
    pub density: f64,
}

/// What every scene's run takes.
#[derive(Args)]
#[command(next_help_heading = "Run (every model)")]
pub struct RunArgs {
    /// Time steps to simulate.
    #[arg(long, default_value_t = 300, allow_negative_numbers = true)]
    pub steps: i64,
    /// Export the problem of every k-th step (0: none).
    #[arg(long, default_value_t = 50, allow_negative_numbers = true)]
    pub export_every: i64,
    /// Frictionless mode: LCP on the normal impulses (default: CCP with Coulomb cones).
    #[arg(long)]
    pub frictionless: bool,
    /// Scene seed (or the seed of the --lcp instance).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Print a line every k steps (0: only the summary).
    #[arg(long, default_value_t = 50, allow_negative_numbers = true)]
    pub print_every: i64,
}

impl RunArgs {
    /// `(steps, export_every, print_every)`, checked.
    fn counts(&self) -> Result<(u64, u64, u64), String> {
        Ok((
            args::at_least_one("--steps", self.steps, "time steps to simulate")?,
            args::non_negative("--export-every", self.export_every, "0 exports none")?,
            args::non_negative(
                "--print-every",
                self.print_every,
                "0 prints the summary only",
            )?,
        ))
    }
}

/// The solver in the loop of the complementarity steppers (3-D and planar).
#[derive(Args)]
#[command(next_help_heading = "Solver in the loop (complementarity steppers)")]
pub struct SolveArgs {
    /// Solver in the loop (warm-started from the previous step).
    #[arg(long, default_value = "apgd")]
    pub solver: String,
    /// Solver settings: a JSON object inline, e.g. '{"omega": 0.8}', or the path of a JSON
    /// file (as `run --settings`). `--solver-settings` is an older name of this flag.
    #[arg(long = "settings", alias = "solver-settings", value_name = "JSON|FILE")]
    pub settings: Option<String>,
    /// Tolerance of each solve (on the class default residual unless --residual).
    #[arg(long, default_value_t = cpbench_solvers::executor::DEFAULT_TOL, allow_negative_numbers = true)]
    pub tol: f64,
    /// Stopping residual of each solve, always honoured when given [default: the class
    /// default: fc3d_error on Coulomb instances, nat_map_rel_2 on the others].
    #[arg(long)]
    pub residual: Option<String>,
    /// Iteration budget of each solve.
    #[arg(long, default_value_t = cpbench_solvers::executor::DEFAULT_MAX_ITER as i64, allow_negative_numbers = true)]
    pub max_iter: i64,
}

impl SolveArgs {
    /// The executor settings and the solver settings, checked. Errors: a non-positive budget
    /// or tolerance, an unknown residual, bad settings JSON.
    fn checked(&self) -> Result<(ExecSettings, Option<serde_json::Value>), AnyError> {
        let max_iter =
            args::at_least_one("--max-iter", self.max_iter, "iteration budget per solve")?;
        args::positive(
            "--tol",
            self.tol,
            "the stopping tolerance of each step's solve",
        )?;
        let residual = args::residual(self.residual.as_deref())?;
        let exec = ExecSettings {
            tol: self.tol,
            residual,
            max_iter,
            ..Default::default()
        };
        exec.validate()?;
        let settings = match &self.settings {
            Some(s) => Some(args::json_arg("--settings", s)?.0),
            None => None,
        };
        Ok((exec, settings))
    }
}

/// How the exported steps are written.
#[derive(Args)]
#[command(next_help_heading = "Export")]
pub struct ExportArgs {
    /// Export the steps as fclib local problems `{label}_step{NNNN}.hdf5` instead of bundles
    /// (frictional scenes only); the same as `--format fclib`.
    #[arg(long)]
    pub fclib: bool,
    /// Export format of the steps: `bundle` (MatrixMarket + JSON folders), `fclib` (HDF5,
    /// frictional scenes only) or `npz` (NumPy arrays, one `.npz` file per step; fast to load).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(OutputFormat::NAMES))]
    pub format: Option<String>,
    /// Storage of `N` in the instances: `auto` (CSC below 2M stored entries, else the block
    /// storage assembled directly; 2x2 blocks for the planar scenes), `csc`, `block`, or
    /// `matrix-free` (3-D scenes: N never formed, the instance holds D of the movable bodies
    /// and the diagonal of M; exported with --format npz or bundle, not fclib).
    #[arg(long, default_value = "auto", value_parser = ["auto", "csc", "block", "matrix-free"])]
    pub operator: String,
    /// Build and export the problem of the first step only, without solving it (3-D scenes;
    /// needs --steps 1; exported unless --export-every 0): for timing and exporting large
    /// scenes.
    #[arg(long)]
    pub no_solve: bool,
}

impl ExportArgs {
    /// The export format of `--fclib` / `--format`. Errors: the two disagree.
    fn format(&self) -> Result<ExportFormat, String> {
        let named = self
            .format
            .as_deref()
            .map(OutputFormat::parse)
            .transpose()
            .map_err(|e| format!("--format: {e}"))?;
        Ok(match (named, self.fclib) {
            (Some(f), false) => f,
            (None, false) => ExportFormat::Bundle,
            (None | Some(ExportFormat::Fclib), true) => ExportFormat::Fclib,
            (Some(f), true) => {
                return Err(format!(
                    "--fclib and --format {f} disagree: give one of them"
                ))
            }
        })
    }

    /// The complementarity steppers' options given (3-D, and `--operator` also planar):
    /// `--no-solve`, and `--operator` other than `auto` unless `planar`.
    fn given_3d(&self, planar: bool) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.no_solve {
            v.push("--no-solve");
        }
        if self.operator != "auto" && !planar {
            v.push("--operator");
        }
        v
    }

    /// `--operator` as a storage choice (`auto`: `None`). Errors: an unknown name.
    fn operator_kind(&self) -> Result<Option<OperatorKind>, AnyError> {
        Ok(match self.operator.as_str() {
            "auto" => None,
            "csc" => Some(OperatorKind::Csc),
            "block" => Some(OperatorKind::Block),
            "matrix-free" => Some(OperatorKind::MatrixFree),
            o => return Err(format!("unknown --operator '{o}'").into()),
        })
    }
}

/// Contact laws of the 3-D complementarity stepper beyond Coulomb friction.
#[derive(Args)]
#[command(next_help_heading = "Contact laws (3-D complementarity stepper)")]
pub struct ContactLawArgs {
    /// Newton's coefficient of restitution `e` in [0, 1] of every contact: Moreau's impact law
    /// `v_n(t+h) + e v_n(t) >= 0` on the normal rows of contacts closing faster than
    /// --restitution-threshold (their gap term dropped); 0 is the inelastic scheme. Recorded
    /// in the exported instances' provenance (`restitution`, `impacts`) when > 0 [default:
    /// the scene's: 0.8 bounce, 1 cradle, 0 the others].
    #[arg(long, allow_negative_numbers = true)]
    pub restitution: Option<f64>,
    /// Closing speed (m/s) above which a contact impacts with --restitution [default: 1e-2].
    #[arg(long, allow_negative_numbers = true)]
    pub restitution_threshold: Option<f64>,
    /// Rolling resistance mu_r >= 0: a torque impulse of at most mu_r |r| gamma_n against the
    /// rolling part of the relative angular velocity at every contact, clipped at rest and
    /// applied after the solve (the exported problems do not contain it) [default: the
    /// scene's: 0.05 ellipsoid-fill and ellipsoid-pile, 0 the others].
    #[arg(long, allow_negative_numbers = true)]
    pub rolling_friction: Option<f64>,
    /// Compliant contact, every step's problem becoming (N + R, r~) (docs/formulation.md,
    /// "Compliant contact"): `sap:K,TAU_D[,SIGMA]` (Drake SAP: stiffness N/m, dissipation
    /// time s, tangential sigma, default 1e-3) or `mujoco:D,TIMECONST,DAMPRATIO` (constant
    /// impedance d in (0, 1), solref). Not with --restitution; not saved in state.json
    /// [default: rigid contact].
    #[arg(long, allow_hyphen_values = true, value_parser = parse_compliance)]
    pub compliance: Option<cpbench_granular::ContactCompliance>,
}

/// `--compliance`'s parser ([`cpbench_granular::ContactCompliance::parse`]).
pub fn parse_compliance(s: &str) -> Result<cpbench_granular::ContactCompliance, String> {
    cpbench_granular::ContactCompliance::parse(s)
}

impl ContactLawArgs {
    /// The flags given, as the refusals name them.
    fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.rolling_friction.is_some() {
            v.push("--rolling-friction");
        }
        if self.compliance.is_some() {
            v.push("--compliance");
        }
        if self.restitution.is_some() || self.restitution_threshold.is_some() {
            v.push("--restitution / --restitution-threshold");
        }
        v
    }
}

/// Views of the 3-D scenes and their saved state.
#[derive(Args)]
#[command(next_help_heading = "Views and state (3-D complementarity stepper)")]
pub struct ViewArgs {
    /// Also write the final state to state.json (restorable snapshot).
    #[arg(long)]
    pub save_state: bool,
    /// Write VTK files (legacy, ParaView) of the bodies and contacts at every view step:
    /// `vtk/bodies_NNNN.vtk` (centres, radius, velocity, ...) and `vtk/contacts_NNNN.vtk`
    /// (contact points, force, ...); see docs/formats.md.
    #[arg(long)]
    pub vtk: bool,
    /// Draw PNG views of the scene (side x-y and top x-z, spheres to scale) at every view
    /// step: `snapshots/step_NNNN.png`.
    #[arg(long)]
    pub snapshots: bool,
    /// Write --vtk and --snapshots output every k steps (0: none) [default: --export-every].
    #[arg(long, allow_negative_numbers = true)]
    pub view_every: Option<i64>,
}

impl ViewArgs {
    /// The flags given.
    fn given(&self) -> Vec<&'static str> {
        [
            (self.vtk, "--vtk"),
            (self.snapshots, "--snapshots"),
            (self.view_every.is_some(), "--view-every"),
            (self.save_state, "--save-state"),
        ]
        .into_iter()
        .filter_map(|(set, flag)| set.then_some(flag))
        .collect()
    }
}

/// The penalty model (`--model penalty`).
#[derive(Args)]
#[command(next_help_heading = "Penalty model")]
pub struct PenaltyArgs {
    /// Contact model: `ncd` (the complementarity stepper with a solver in the loop, exports
    /// instances) or `penalty` (spring-dashpot contacts with velocity Verlet, no
    /// complementarity problem: writes only `trajectory.csv` with the observables of every
    /// step of the scene's `h`; see `cpbench_granular::penalty`; --solver, --settings, --tol,
    /// --residual, --max-iter and --export-every do not apply to it).
    #[arg(long, default_value = "ncd", value_parser = ["ncd", "penalty"])]
    pub model: String,
    /// `--model penalty`: normal force law, `linear` (Cundall & Strack 1979) or `hertz`
    /// (Hertz 1882, Tsuji et al. 1992 dashpot).
    #[arg(long, default_value = "linear", value_parser = ["linear", "hertz"])]
    pub penalty_law: String,
    /// `--model penalty`: normal stiffness, N/m (linear) or N/m^1.5 (hertz) [default: 1e5
    /// linear, 3e6 hertz: an overlap of about 1e-3 m under 100 N].
    #[arg(long, allow_negative_numbers = true)]
    pub penalty_stiffness: Option<f64>,
    /// `--model penalty`: normal coefficient of restitution in (0, 1], mapped to the dashpot's
    /// damping ratio `zeta = -ln e / sqrt(pi^2 + ln^2 e)`.
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    pub penalty_restitution: f64,
    /// `--model penalty`: Verlet steps per (undamped) contact time, >= 10; the step is the
    /// scene's `h` divided into a whole number of such steps.
    #[arg(long, default_value_t = 20.0, allow_negative_numbers = true)]
    pub penalty_steps_per_contact: f64,
    /// `--model penalty`: tangential damping rate `gamma_t` (1/s) of the regularised Coulomb
    /// friction, `c_t = gamma_t m_eff` [default: 0.2 / h of the Verlet step].
    #[arg(long, allow_negative_numbers = true)]
    pub penalty_tangential_rate: Option<f64>,
}

/// A stepper that does not take every argument group (the 3-D complementarity stepper takes
/// them all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Model {
    /// The planar complementarity stepper: run, solver and export (format only).
    Planar,
    /// The penalty model: run and [`PenaltyArgs`].
    Penalty,
}

impl GenerateArgs {
    /// The flags given that `model` does not take, in the order the refusal names the first.
    fn refused(&self, model: Model) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        match model {
            Model::Planar => {
                if self.penalty.model != "ncd" {
                    v.push("--model penalty".into());
                }
                v.extend(self.views.given().into_iter().map(String::from));
                v.extend(self.export.given_3d(true).into_iter().map(String::from));
                if self.scene.aspect.is_some() {
                    v.push("--aspect".into());
                }
                // the planar stepper takes --compliance, not the other contact laws
                v.extend(
                    self.laws
                        .given()
                        .into_iter()
                        .filter(|f| *f != "--compliance")
                        .map(String::from),
                );
            }
            Model::Penalty => {
                v.extend(self.views.given().into_iter().map(String::from));
                if self.export.fclib || self.export.format.is_some() {
                    v.push("--fclib / --format".into());
                }
                v.extend(self.export.given_3d(false).into_iter().map(String::from));
                for f in self.laws.given() {
                    v.push(if f.starts_with("--restitution") {
                        format!("{f} (use --penalty-restitution)")
                    } else {
                        f.into()
                    });
                }
            }
        }
        v
    }

    /// The settings of a complementarity stepper's run (steps, exports, solver, format) and
    /// `--print-every`. Errors: bad counts, solver settings or export format.
    fn run_settings(&self) -> Result<(RunSettings, u64), AnyError> {
        let (steps, export_every, print_every) = self.run.counts()?;
        let (exec, solver_settings) = self.solve.checked()?;
        let run = RunSettings {
            steps,
            export_every,
            out: self.run.out.clone(),
            solver: self.solve.solver.clone(),
            solver_settings,
            exec,
            export_format: self.export.format()?,
        };
        Ok((run, print_every))
    }

    /// The 3-D scene `scene` of `size` with the run's seed and friction and `--aspect`.
    /// Errors: an unknown scene.
    fn scene_spec(&self, scene: &str, size: usize) -> Result<SceneSpec, AnyError> {
        Ok(SceneSpec {
            kind: SceneKind::parse(scene)?,
            size,
            seed: self.run.seed,
            frictionless: self.run.frictionless,
            aspect: self.scene.aspect,
        })
    }

    /// [`Self::refused`] as an error naming the first flag.
    fn check_model(&self, model: Model, scene: &str) -> Result<(), AnyError> {
        match self.refused(model).first() {
            None => Ok(()),
            Some(flag) if model == Model::Planar => Err(format!(
                "{flag} is not available for the planar scene {scene} (3-D scenes only)"
            )
            .into()),
            Some(flag) => Err(format!(
                "{flag} is not available with --model penalty (it writes trajectory.csv only)"
            )
            .into()),
        }
    }
}

/// `generate --lcp`: write one random general LCP (bundle or `.npz`) into `--out` and print
/// its path. Errors: bad parameters ([`cpbench_problems::ProblemError::InvalidParameter`]),
/// `--format fclib`, write failures.
fn generate_lcp(a: &GenerateArgs, family: &str) -> Result<(), AnyError> {
    use cpbench_problems::generators::lcp::{random_lcp, LcpFamily};
    let family = LcpFamily::parse(family).ok_or_else(|| format!("unknown --lcp '{family}'"))?;
    let n = args::at_least_one("--n", a.lcp.n, "unknowns of the LCP")? as usize;
    // the matrix is built in memory: refuse before allocating what cannot fit
    // (16 bytes per stored entry, value and index, and 8 per entry of each vector)
    // (k off-diagonal entries a row; `psd` is B^T B: up to k^2 a row, at most n)
    let nf = n as f64;
    let k = (a.lcp.density.clamp(0.0, 1.0) * (nf - 1.0)).ceil() + 1.0;
    let per_row = if matches!(family, LcpFamily::Psd) {
        (k * k).min(nf)
    } else {
        2.0 * k
    };
    let predicted = 16.0 * nf * per_row + 48.0 * nf;
    if let Some(limit) = cpbench_solvers::ExecSettings::default().memory_limit() {
        if predicted > limit as f64 {
            return Err(format!(
                "--n {n} --density {}: the LCP needs about {:.3e} bytes, more than the memory \
                 budget of {limit} bytes ({:.0} % of this machine's memory): use a smaller --n or \
                 --density",
                a.lcp.density,
                predicted,
                100.0 * cpbench_solvers::executor::DEFAULT_MEMORY_FRACTION
            )
            .into());
        }
    }
    let g = random_lcp(family, n, a.lcp.density, a.run.seed)?;
    let format = a.export.format()?;
    if format == OutputFormat::Fclib {
        return Err("--lcp writes --format bundle or npz (fclib holds friction problems)".into());
    }
    let path = format.path_in(&a.run.out, &g.instance);
    if format != OutputFormat::Bundle {
        std::fs::create_dir_all(&a.run.out)?;
    }
    format.write(&g.instance, &path)?;
    println!("{}", path.display());
    Ok(())
}

/// Print the mean phase times of a step (seconds in, milliseconds out): detection, assembly,
/// instance, solve, update.
fn print_phase_times([det, asm, inst, solve, upd]: [f64; 5]) {
    println!(
        "per step (ms): detection {:.3}, assembly {:.3}, instance {:.3}, solve {:.3}, update {:.3}",
        det * 1e3,
        asm * 1e3,
        inst * 1e3,
        solve * 1e3,
        upd * 1e3
    );
}

/// The progress line of step `r`; the planar scenes' has the live and broken bonds
/// (`bonds`) and the time to 5 decimals.
fn progress_line(r: &StepReport, bonds: Option<(usize, usize)>) -> String {
    let (t, bonds) = match bonds {
        None => (format!("{:7.3}", r.time), String::new()),
        Some((live, broken)) => (
            format!("{:8.5}", r.time),
            format!("bonds {live:6} ({broken} broken)  "),
        ),
    };
    format!(
        "step {:5}  t = {t} s  contacts {:6}  KE {:10.4e} J  {bonds}max pen {:9.3e} m  \
         iters {:5}{}",
        r.step,
        r.contacts,
        r.kinetic_energy,
        r.max_penetration,
        r.iterations,
        if r.converged { "" } else { " (not converged)" }
    )
}

/// Mean contacts and solver iterations per step, and the steps not converged.
fn means<'a>(steps: impl IntoIterator<Item = &'a StepReport>) -> (f64, f64, usize) {
    let (mut n, mut nc, mut it, mut unconverged) = (0usize, 0.0, 0.0, 0);
    for r in steps {
        n += 1;
        nc += r.contacts as f64;
        it += r.iterations as f64;
        unconverged += usize::from(!r.converged);
    }
    let n = n.max(1) as f64;
    (nc / n, it / n, unconverged)
}

/// Print what was written: `count` exports of `format` and `trajectory.csv` in `out`.
fn print_exported(count: usize, format: ExportFormat, out: &std::path::Path) {
    println!(
        "{count} {} and trajectory.csv in {}",
        format.plural(),
        out.display()
    );
}

/// `generate --model penalty`: simulate the scene with the penalty stepper
/// ([`cpbench_granular::penalty`]) for `--steps` steps of the scene's `h`, each a whole number
/// of Verlet steps, write `trajectory.csv`
/// ([`cpbench_granular::penalty::PENALTY_TRAJECTORY_HEADER`]) and print the observables (pile
/// height, settling time, final kinetic energy, largest overlap) and the wall time. Errors:
/// options that only the complementarity stepper has, bad penalty parameters, write failures.
fn generate_penalty(a: &GenerateArgs, scene: &str, size: usize) -> Result<(), AnyError> {
    use cpbench_granular::penalty::{
        pile_height, settle_threshold, settling_time, ContactLaw, Damping, PenaltyParams,
        PenaltySim, PENALTY_TRAJECTORY_HEADER,
    };
    a.check_model(Model::Penalty, scene)?;
    let (steps, _, print_every) = a.run.counts()?;
    if !(a.penalty.penalty_steps_per_contact.is_finite()
        && a.penalty.penalty_steps_per_contact >= 10.0)
    {
        return Err(format!(
            "--penalty-steps-per-contact must be >= 10, not {}",
            a.penalty.penalty_steps_per_contact
        )
        .into());
    }
    let spec = a.scene_spec(scene, size)?;
    let built = spec.build()?;
    let sp = built.world.params.clone();
    let law = ContactLaw::parse(&a.penalty.penalty_law)?;
    let mut params = PenaltyParams {
        law,
        stiffness: a.penalty.penalty_stiffness.unwrap_or(match law {
            ContactLaw::Linear => 1e5,
            ContactLaw::Hertz => 3e6,
        }),
        damping: Damping::Restitution(a.penalty.penalty_restitution),
        mu: if sp.frictionless { 0.0 } else { sp.mu },
        tangential_rate: 0.0,
        h: sp.h,
        gravity: sp.gravity,
    };
    // the stiffness must be valid before it sets the step
    params.validate(&[])?;
    let target = params
        .contact_time(&built.world.bodies)
        .map_or(sp.h, |t| t / a.penalty.penalty_steps_per_contact);
    let substeps = (sp.h / target).ceil().max(1.0);
    if substeps > 1e9 {
        return Err(format!("{substeps} Verlet steps per step of h: lower the stiffness").into());
    }
    params.h = sp.h / substeps;
    params.tangential_rate = a.penalty.penalty_tangential_rate.unwrap_or(0.2 / params.h);
    let substeps = substeps as u64;
    let label = built.label.clone();
    let threshold = settle_threshold(&built.world.bodies, &sp.gravity);
    let mut sim = PenaltySim::from_scene(built, params.clone())?;
    let _lock = cpbench_harness::lock::FolderLock::acquire(&a.run.out)?;
    std::fs::create_dir_all(&a.run.out)?;
    let start = std::time::Instant::now();
    let mut csv = String::from(PENALTY_TRAJECTORY_HEADER);
    csv.push('\n');
    let (mut times, mut kes, mut max_pen) = (Vec::new(), Vec::new(), 0.0f64);
    let traj = a.run.out.join("trajectory.csv");
    for _ in 0..steps {
        let r = match sim.advance(substeps) {
            Ok(r) => r,
            Err(e) => {
                std::fs::write(&traj, &csv)?;
                return Err(e.into());
            }
        };
        csv.push_str(&r.csv_row());
        csv.push('\n');
        times.push(r.time);
        kes.push(r.kinetic_energy);
        max_pen = max_pen.max(r.max_penetration);
        if print_every > 0 && r.step % print_every == 0 {
            eprintln!(
                "step {:5}  t = {:7.3} s  contacts {:6}  KE {:10.4e} J  max pen {:9.3e} m  \
                 pile height {:.4} m",
                r.step, r.time, r.contacts, r.kinetic_energy, r.max_penetration, r.pile_height
            );
        }
    }
    let wall = start.elapsed().as_secs_f64();
    std::fs::write(&traj, &csv)?;
    let settled = settling_time(&times, &kes, threshold);
    println!(
        "{label}: penalty model ({}, k = {:e}, e = {}, mu = {}), {} bodies, {steps} steps of \
         {} s = {substeps} Verlet steps of {:.4e} s each, in {wall:.2} s",
        law.as_str(),
        params.stiffness,
        a.penalty.penalty_restitution,
        params.mu,
        sim.bodies().len(),
        sp.h,
        params.h,
    );
    println!(
        "pile height {:.4} m, settling time {} (KE < {threshold:.4e} J), final KE {:.4e} J, \
         max penetration {max_pen:.4e} m",
        pile_height(sim.bodies()),
        settled.map_or("not settled".to_string(), |t| format!("{t:.3} s")),
        sim.kinetic_energy(),
    );
    println!("trajectory.csv in {}", a.run.out.display());
    Ok(())
}

/// `generate --scene disc-hopper|beam-impact`: the planar (2-D) stepper with the solver in the
/// loop ([`cpbench_harness::generate_planar`]): fc2d instances of every `--export-every`-th
/// step as bundles, `.npz` or 2-D fclib files, `trajectory.csv`, and a summary, `N` on the
/// storage `--operator` asks for (`auto`, `csc`, `block`; `matrix-free` is refused by the
/// stepper). Errors: options of the 3-D stepper only (penalty model, views, state,
/// restitution, --no-solve), bad settings, scene, solver and write failures.
fn generate_planar(a: &GenerateArgs, scene: &str, size: usize) -> Result<(), AnyError> {
    use cpbench_granular::planar::PlanarSceneKind;
    use cpbench_harness::generate_planar::{generate_planar as run, PlanarGenerateConfig};
    a.check_model(Model::Planar, scene)?;
    let (run_settings, print_every) = a.run_settings()?;
    let export_format = run_settings.export_format;
    let cfg = PlanarGenerateConfig {
        scene: PlanarSceneKind::parse(scene)?,
        size,
        seed: a.run.seed,
        frictionless: a.run.frictionless,
        compliance: a.laws.compliance,
        run: run_settings,
        operator: a.export.operator_kind()?,
    };
    let _lock = cpbench_harness::lock::FolderLock::acquire(&a.run.out)?;
    let s = run(&cfg, |r| {
        if print_every > 0 && r.core.step % print_every == 0 {
            eprintln!(
                "{}",
                progress_line(&r.core, Some((r.bonds, r.broken_bonds)))
            );
        }
    })?;
    let [det, asm, inst, solve, upd] = s.mean_timings();
    let (nc, it, unconverged) = means(s.steps.iter().map(|r| &r.core));
    let last = s.steps.last().expect("steps >= 1");
    println!(
        "{} discs, {} steps in {:.2} s ({:.1} steps/s); mean contacts {:.0} (last {}), mean \
         solver iterations {:.1}, {} steps not converged",
        s.bodies,
        s.steps.len(),
        s.wall.as_secs_f64(),
        s.steps.len() as f64 / s.wall.as_secs_f64().max(1e-12),
        nc,
        last.core.contacts,
        it,
        unconverged
    );
    print_phase_times([det, asm, inst, solve, upd]);
    let max_pen = s
        .steps
        .iter()
        .fold(0.0f64, |m, r| m.max(r.core.max_penetration));
    let below = s
        .final_discs
        .iter()
        .filter(|d| !d.fixed && d.pos.y < 0.0)
        .count();
    match cfg.scene {
        PlanarSceneKind::DiscHopper => println!(
            "{below} of {} discs below the orifice, final KE {:.4e} J, max penetration \
             {max_pen:.4e} m",
            s.bodies, last.core.kinetic_energy
        ),
        PlanarSceneKind::BeamImpact => println!(
            "{} of {} bonds broken, final KE {:.4e} J, bond energy {:.4e} J, max penetration \
             {max_pen:.4e} m",
            last.broken_bonds, s.bonds, last.core.kinetic_energy, last.bond_energy
        ),
    }
    print_exported(s.exported.len(), export_format, &a.run.out);
    Ok(())
}

/// Run the simulation and print a per-phase timing summary.
pub fn generate(a: GenerateArgs) -> Result<(), AnyError> {
    if let Some(family) = &a.lcp.lcp {
        return generate_lcp(&a, family);
    }
    let (Some(scene), Some(size)) = (&a.scene.scene, a.scene.size) else {
        return Err("give --scene and --size (or --lcp)".into());
    };
    let size = args::at_least_one("--size", size, "the scene's size, see --scene")? as usize;
    if cpbench_harness::generate_planar::is_planar_scene(scene) {
        return generate_planar(&a, scene, size);
    }
    SceneKind::parse(scene)?;
    if a.penalty.model == "penalty" {
        return generate_penalty(&a, scene, size);
    }
    let (run, print_every) = a.run_settings()?;
    let view_every = match a.views.view_every {
        Some(v) => Some(args::non_negative("--view-every", v, "0 writes no views")?),
        None => None,
    };
    let spec = a.scene_spec(scene, size)?;
    let export_format = run.export_format;
    let operator = a.export.operator_kind()?;
    let cfg = GenerateConfig {
        spec,
        run,
        save_state: a.views.save_state,
        vtk: a.views.vtk,
        snapshots: a.views.snapshots,
        view_every,
        operator,
        no_solve: a.export.no_solve,
        restitution: a.laws.restitution,
        restitution_threshold: a.laws.restitution_threshold,
        rolling_friction: a.laws.rolling_friction,
        compliance: a.laws.compliance,
    };
    let _lock = cpbench_harness::lock::FolderLock::acquire(&a.run.out)?;
    let every = print_every;
    let s = run_generate(&cfg, |r| {
        if every > 0 && r.step % every == 0 {
            eprintln!("{}", progress_line(r, None));
        }
    })?;
    let [det, asm, inst, solve, upd] = s.mean_timings();
    let (nc, it, unconverged) = means(&s.steps);
    if a.export.no_solve {
        let nnz = s.steps.first().map_or(0, |r| r.nnz);
        println!(
            "{} bodies, first step built without solving in {:.2} s; contacts {:.0}, \
             stored entries of N {nnz}",
            s.bodies,
            s.wall.as_secs_f64(),
            nc,
        );
    } else {
        println!(
            "{} bodies, {} steps in {:.2} s; mean contacts {:.0}, mean solver iterations \
             {:.1}, {} steps not converged",
            s.bodies,
            s.steps.len(),
            s.wall.as_secs_f64(),
            nc,
            it,
            unconverged
        );
    }
    print_phase_times([det, asm, inst, solve, upd]);
    if det + asm > 0.0 {
        println!("detection + assembly: {:.3e} contacts/s", nc / (det + asm));
    }
    if !a.export.no_solve {
        let times: Vec<f64> = s.steps.iter().map(|r| r.time).collect();
        let kes: Vec<f64> = s.steps.iter().map(|r| r.kinetic_energy).collect();
        let settled = cpbench_granular::penalty::settling_time(&times, &kes, s.settle_threshold);
        let max_pen = s.steps.iter().fold(0.0f64, |m, r| m.max(r.max_penetration));
        println!(
            "pile height {:.4} m, settling time {} (KE < {:.4e} J), final KE {:.4e} J, max \
             penetration {max_pen:.4e} m",
            s.pile_height,
            settled.map_or("not settled".to_string(), |t| format!("{t:.3} s")),
            s.settle_threshold,
            kes.last().copied().unwrap_or(0.0),
        );
    }
    print_exported(s.exported.len(), export_format, &a.run.out);
    if a.views.vtk || a.views.snapshots {
        let vtk = s
            .views
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "vtk"));
        let png = s.views.len() - vtk.count();
        println!(
            "{} VTK files in {}, {} PNG views in {}",
            s.views.len() - png,
            a.run.out.join(cpbench_harness::simout::VTK_DIR).display(),
            png,
            a.run
                .out
                .join(cpbench_harness::simout::SNAPSHOT_DIR)
                .display()
        );
    }
    Ok(())
}
