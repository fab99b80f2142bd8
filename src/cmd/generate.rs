//! `cpbench generate`: simulate a granular scene with a solver in the loop and export the
//! contact problems of chosen steps as native bundles or, with `--fclib`, fclib HDF5 files (a
//! folder usable as `cpbench run --instances DIR`), plus `trajectory.csv`, and on request VTK
//! files (`--vtk`) and PNG views (`--snapshots`) of the scene. With `--model penalty` the scene
//! runs on the penalty (spring-dashpot, velocity Verlet) stepper instead, for comparison, and
//! only `trajectory.csv` is written.

use crate::cmd::args;
use crate::AnyError;
use clap::Args;
use cpbench_granular::{SceneKind, SceneSpec};
use cpbench_harness::generate::{generate as run_generate, ExportFormat, GenerateConfig};
use cpbench_problems::operator::OperatorKind;
use cpbench_problems::ResidualKind;
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

/// Arguments of `cpbench generate`.
#[derive(Args)]
pub struct GenerateArgs {
    /// Scene: fill (Melanz 2017 TEST_FILL, size n -> n x 10 x n spheres), pile (size spheres),
    /// pyramid (size layers), tube (size spheres), bounce (size spheres dropped onto a floor,
    /// restitution 0.8), cradle (Newton's cradle: size spheres in a row, restitution 1),
    /// ellipsoid-fill (size n -> n x 10 x n ellipsoids in a box; 10: the 1000 ellipsoids of
    /// Vyatkin & Dolgovesov), ellipsoid-pile (size ellipsoids poured into a heap); planar
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
    /// Time steps to simulate.
    #[arg(long, default_value_t = 300, allow_negative_numbers = true)]
    pub steps: i64,
    /// Export the problem of every k-th step (0: none).
    #[arg(long, default_value_t = 50, allow_negative_numbers = true)]
    pub export_every: i64,
    /// Frictionless mode: LCP on the normal impulses (default: CCP with Coulomb cones).
    #[arg(long)]
    pub frictionless: bool,
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
    /// Scene seed (or the seed of the --lcp instance).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write the final state to state.json (restorable snapshot).
    #[arg(long)]
    pub save_state: bool,
    /// Export the steps as fclib local problems `{label}_step{NNNN}.hdf5` instead of bundles
    /// (frictional scenes only); the same as `--format fclib`.
    #[arg(long)]
    pub fclib: bool,
    /// Export format of the steps: `bundle` (MatrixMarket + JSON folders), `fclib` (HDF5,
    /// frictional scenes only) or `npz` (NumPy arrays, one `.npz` file per step; fast to load).
    #[arg(long, value_parser = ["bundle", "fclib", "npz"])]
    pub format: Option<String>,
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
    /// Storage of `N` in the instances: `auto` (CSC below 2M stored entries, else the block
    /// storage assembled directly), `csc`, `block`, or `matrix-free` (N never formed: the
    /// instance holds D of the movable bodies and the diagonal of M; exported with --format npz
    /// or bundle, not fclib).
    #[arg(long, default_value = "auto", value_parser = ["auto", "csc", "block", "matrix-free"])]
    pub operator: String,
    /// Build and export the problem of the first step only, without solving it (needs
    /// --steps 1; exported unless --export-every 0): for timing and exporting large scenes.
    #[arg(long)]
    pub no_solve: bool,
    /// Print a line every k steps (0: only the summary).
    #[arg(long, default_value_t = 50, allow_negative_numbers = true)]
    pub print_every: i64,
    /// Contact model: `ncd` (the complementarity stepper with a solver in the loop, exports
    /// instances) or `penalty` (spring-dashpot contacts with velocity Verlet, no
    /// complementarity problem: writes only `trajectory.csv` with the observables of every
    /// step of the scene's `h`; see `cpbench_granular::penalty`; --solver, --settings, --tol,
    /// --residual, --max-iter, --export-every and --operator do not apply to it).
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

/// `generate --lcp`: write one random general LCP (bundle or `.npz`) into `--out` and print
/// its path. Errors: bad parameters ([`cpbench_problems::ProblemError::InvalidParameter`]),
/// `--format fclib`, write failures.
fn generate_lcp(a: &GenerateArgs, family: &str) -> Result<(), AnyError> {
    use cpbench_problems::generators::lcp::{random_lcp, LcpFamily};
    let family = LcpFamily::parse(family).ok_or_else(|| format!("unknown --lcp '{family}'"))?;
    let n = args::at_least_one("--n", a.n, "unknowns of the LCP")? as usize;
    // the matrix is built in memory: refuse before allocating what cannot fit
    // (16 bytes per stored entry, value and index, and 8 per entry of each vector)
    // (k off-diagonal entries a row; `psd` is B^T B: up to k^2 a row, at most n)
    let nf = n as f64;
    let k = (a.density.clamp(0.0, 1.0) * (nf - 1.0)).ceil() + 1.0;
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
                a.density,
                predicted,
                100.0 * cpbench_solvers::executor::DEFAULT_MEMORY_FRACTION
            )
            .into());
        }
    }
    let g = random_lcp(family, n, a.density, a.seed)?;
    let name = g.instance.name().to_string();
    let path = match (a.format.as_deref(), a.fclib) {
        (Some("npz"), false) => {
            let p = a.out.join(format!("{name}.npz"));
            std::fs::create_dir_all(&a.out)?;
            cpbench_problems::io::npz::write_npz(&g.instance, &p)?;
            p
        }
        (Some("bundle") | None, false) => {
            let p = a.out.join(&name);
            cpbench_problems::io::bundle::write_bundle(&g.instance, &p)?;
            p
        }
        _ => {
            return Err(
                "--lcp writes --format bundle or npz (fclib holds friction problems)".into(),
            )
        }
    };
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
    let steps = args::at_least_one("--steps", a.steps, "time steps to simulate")?;
    let print_every =
        args::non_negative("--print-every", a.print_every, "0 prints the summary only")?;
    for (set, flag) in [
        (a.vtk, "--vtk"),
        (a.snapshots, "--snapshots"),
        (a.save_state, "--save-state"),
        (a.fclib || a.format.is_some(), "--fclib / --format"),
        (a.no_solve, "--no-solve"),
        (a.rolling_friction.is_some(), "--rolling-friction"),
        (
            a.restitution.is_some() || a.restitution_threshold.is_some(),
            "--restitution / --restitution-threshold (use --penalty-restitution)",
        ),
    ] {
        if set {
            return Err(format!(
                "{flag} is not available with --model penalty (it writes trajectory.csv only)"
            )
            .into());
        }
    }
    if !(a.penalty_steps_per_contact.is_finite() && a.penalty_steps_per_contact >= 10.0) {
        return Err(format!(
            "--penalty-steps-per-contact must be >= 10, not {}",
            a.penalty_steps_per_contact
        )
        .into());
    }
    let spec = SceneSpec {
        kind: SceneKind::parse(scene)?,
        size,
        seed: a.seed,
        frictionless: a.frictionless,
        aspect: a.aspect,
    };
    let built = spec.build()?;
    let sp = built.world.params.clone();
    let law = ContactLaw::parse(&a.penalty_law)?;
    let mut params = PenaltyParams {
        law,
        stiffness: a.penalty_stiffness.unwrap_or(match law {
            ContactLaw::Linear => 1e5,
            ContactLaw::Hertz => 3e6,
        }),
        damping: Damping::Restitution(a.penalty_restitution),
        mu: if sp.frictionless { 0.0 } else { sp.mu },
        tangential_rate: 0.0,
        h: sp.h,
        gravity: sp.gravity,
    };
    // the stiffness must be valid before it sets the step
    params.validate(&[])?;
    let target = params
        .contact_time(&built.world.bodies)
        .map_or(sp.h, |t| t / a.penalty_steps_per_contact);
    let substeps = (sp.h / target).ceil().max(1.0);
    if substeps > 1e9 {
        return Err(format!("{substeps} Verlet steps per step of h: lower the stiffness").into());
    }
    params.h = sp.h / substeps;
    params.tangential_rate = a.penalty_tangential_rate.unwrap_or(0.2 / params.h);
    let substeps = substeps as u64;
    let label = built.label.clone();
    let threshold = settle_threshold(&built.world.bodies, &sp.gravity);
    let mut sim = PenaltySim::from_scene(built, params.clone())?;
    let _lock = cpbench_harness::lock::FolderLock::acquire(&a.out)?;
    std::fs::create_dir_all(&a.out)?;
    let start = std::time::Instant::now();
    let mut csv = String::from(PENALTY_TRAJECTORY_HEADER);
    csv.push('\n');
    let (mut times, mut kes, mut max_pen) = (Vec::new(), Vec::new(), 0.0f64);
    let traj = a.out.join("trajectory.csv");
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
        a.penalty_restitution,
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
    println!("trajectory.csv in {}", a.out.display());
    Ok(())
}

/// `generate --scene disc-hopper|beam-impact`: the planar (2-D) stepper with the solver in the
/// loop ([`cpbench_harness::generate_planar`]): fc2d instances of every `--export-every`-th
/// step as bundles, `.npz` or 2-D fclib files, `trajectory.csv`, and a summary. Errors: options
/// of the 3-D stepper only (penalty model, views, state, operator, restitution, --no-solve),
/// bad settings, scene, solver and write failures.
fn generate_planar(a: &GenerateArgs, scene: &str, size: usize) -> Result<(), AnyError> {
    use cpbench_granular::planar::PlanarSceneKind;
    use cpbench_harness::generate_planar::{generate_planar as run, PlanarGenerateConfig};
    for (set, flag) in [
        (a.model != "ncd", "--model penalty"),
        (a.vtk, "--vtk"),
        (a.snapshots, "--snapshots"),
        (a.view_every.is_some(), "--view-every"),
        (a.save_state, "--save-state"),
        (a.no_solve, "--no-solve"),
        (a.operator != "auto", "--operator"),
        (a.aspect.is_some(), "--aspect"),
        (a.rolling_friction.is_some(), "--rolling-friction"),
        (
            a.restitution.is_some() || a.restitution_threshold.is_some(),
            "--restitution / --restitution-threshold",
        ),
    ] {
        if set {
            return Err(format!(
                "{flag} is not available for the planar scene {scene} (3-D scenes only)"
            )
            .into());
        }
    }
    let steps = args::at_least_one("--steps", a.steps, "time steps to simulate")?;
    let export_every = args::non_negative("--export-every", a.export_every, "0 exports none")?;
    let max_iter = args::at_least_one("--max-iter", a.max_iter, "iteration budget per solve")?;
    args::positive(
        "--tol",
        a.tol,
        "the stopping tolerance of each step's solve",
    )?;
    let print_every =
        args::non_negative("--print-every", a.print_every, "0 prints the summary only")?;
    let residual = match &a.residual {
        Some(r) => Some(ResidualKind::parse(r).ok_or_else(|| format!("unknown residual '{r}'"))?),
        None => None,
    };
    let exec = ExecSettings {
        tol: a.tol,
        residual,
        max_iter,
        ..Default::default()
    };
    exec.validate()?;
    let solver_settings = match &a.settings {
        Some(s) => Some(args::json_arg("--settings", s)?.0),
        None => None,
    };
    let export_format = match (a.format.as_deref(), a.fclib) {
        (Some("fclib"), _) | (None, true) => ExportFormat::Fclib,
        (Some("npz"), false) => ExportFormat::Npz,
        (Some("bundle") | None, false) => ExportFormat::Bundle,
        (Some(f), true) => {
            return Err(format!("--fclib and --format {f} disagree: give one of them").into())
        }
        (Some(f), false) => return Err(format!("unknown --format '{f}'").into()),
    };
    let cfg = PlanarGenerateConfig {
        scene: PlanarSceneKind::parse(scene)?,
        size,
        seed: a.seed,
        frictionless: a.frictionless,
        steps,
        export_every,
        out: a.out.clone(),
        solver: a.solver.clone(),
        solver_settings,
        exec,
        export_format,
    };
    let _lock = cpbench_harness::lock::FolderLock::acquire(&a.out)?;
    let s = run(&cfg, |r| {
        if print_every > 0 && r.step % print_every == 0 {
            eprintln!(
                "step {:5}  t = {:8.5} s  contacts {:6}  KE {:10.4e} J  bonds {:6} ({} broken)  \
                 max pen {:9.3e} m  iters {:5}{}",
                r.step,
                r.time,
                r.contacts,
                r.kinetic_energy,
                r.bonds,
                r.broken_bonds,
                r.max_penetration,
                r.iterations,
                if r.converged { "" } else { " (not converged)" }
            );
        }
    })?;
    let [det, asm, inst, solve, upd] = s.mean_timings();
    let n = s.steps.len().max(1) as f64;
    let nc: f64 = s.steps.iter().map(|r| r.contacts as f64).sum::<f64>() / n;
    let it: f64 = s.steps.iter().map(|r| r.iterations as f64).sum::<f64>() / n;
    let unconverged = s.steps.iter().filter(|r| !r.converged).count();
    let last = s.steps.last().expect("steps >= 1");
    println!(
        "{} discs, {} steps in {:.2} s ({:.1} steps/s); mean contacts {:.0} (last {}), mean \
         solver iterations {:.1}, {} steps not converged",
        s.bodies,
        s.steps.len(),
        s.wall.as_secs_f64(),
        s.steps.len() as f64 / s.wall.as_secs_f64().max(1e-12),
        nc,
        last.contacts,
        it,
        unconverged
    );
    print_phase_times([det, asm, inst, solve, upd]);
    let max_pen = s.steps.iter().fold(0.0f64, |m, r| m.max(r.max_penetration));
    let below = s
        .final_discs
        .iter()
        .filter(|d| !d.fixed && d.pos.y < 0.0)
        .count();
    match cfg.scene {
        PlanarSceneKind::DiscHopper => println!(
            "{below} of {} discs below the orifice, final KE {:.4e} J, max penetration \
             {max_pen:.4e} m",
            s.bodies, last.kinetic_energy
        ),
        PlanarSceneKind::BeamImpact => println!(
            "{} of {} bonds broken, final KE {:.4e} J, bond energy {:.4e} J, max penetration \
             {max_pen:.4e} m",
            last.broken_bonds, s.bonds, last.kinetic_energy, last.bond_energy
        ),
    }
    println!(
        "{} {} and trajectory.csv in {}",
        s.exported.len(),
        match export_format {
            ExportFormat::Fclib => "fclib files",
            ExportFormat::Npz => ".npz files",
            ExportFormat::Bundle => "bundles",
        },
        a.out.display()
    );
    Ok(())
}

/// Run the simulation and print a per-phase timing summary.
pub fn generate(a: GenerateArgs) -> Result<(), AnyError> {
    if let Some(family) = &a.lcp {
        return generate_lcp(&a, family);
    }
    let (Some(scene), Some(size)) = (&a.scene, a.size) else {
        return Err("give --scene and --size (or --lcp)".into());
    };
    let size = args::at_least_one("--size", size, "the scene's size, see --scene")? as usize;
    if cpbench_harness::generate_planar::is_planar_scene(scene) {
        return generate_planar(&a, scene, size);
    }
    SceneKind::parse(scene)?;
    if a.model == "penalty" {
        return generate_penalty(&a, scene, size);
    }
    let steps = args::at_least_one("--steps", a.steps, "time steps to simulate")?;
    let export_every = args::non_negative("--export-every", a.export_every, "0 exports none")?;
    let max_iter = args::at_least_one("--max-iter", a.max_iter, "iteration budget per solve")?;
    args::positive(
        "--tol",
        a.tol,
        "the stopping tolerance of each step's solve",
    )?;
    let print_every =
        args::non_negative("--print-every", a.print_every, "0 prints the summary only")?;
    ExecSettings {
        tol: a.tol,
        max_iter,
        ..Default::default()
    }
    .validate()?;
    let residual = match &a.residual {
        Some(r) => Some(ResidualKind::parse(r).ok_or_else(|| format!("unknown residual '{r}'"))?),
        None => None,
    };
    let solver_settings = match &a.settings {
        Some(s) => Some(args::json_arg("--settings", s)?.0),
        None => None,
    };
    let view_every = match a.view_every {
        Some(v) => Some(args::non_negative("--view-every", v, "0 writes no views")?),
        None => None,
    };
    let spec = SceneSpec {
        kind: SceneKind::parse(scene)?,
        size,
        seed: a.seed,
        frictionless: a.frictionless,
        aspect: a.aspect,
    };
    let export_format = match (a.format.as_deref(), a.fclib) {
        (Some("fclib"), _) | (None, true) => ExportFormat::Fclib,
        (Some("npz"), false) => ExportFormat::Npz,
        (Some("bundle") | None, false) => ExportFormat::Bundle,
        (Some(f), true) => {
            return Err(format!("--fclib and --format {f} disagree: give one of them").into())
        }
        (Some(f), false) => return Err(format!("unknown --format '{f}'").into()),
    };
    let operator = match a.operator.as_str() {
        "auto" => None,
        "csc" => Some(OperatorKind::Csc),
        "block" => Some(OperatorKind::Block),
        "matrix-free" => Some(OperatorKind::MatrixFree),
        o => return Err(format!("unknown --operator '{o}'").into()),
    };
    let cfg = GenerateConfig {
        spec,
        steps,
        export_every,
        out: a.out.clone(),
        solver: a.solver.clone(),
        solver_settings,
        exec: ExecSettings {
            tol: a.tol,
            residual,
            max_iter,
            ..Default::default()
        },
        save_state: a.save_state,
        export_format,
        vtk: a.vtk,
        snapshots: a.snapshots,
        view_every,
        operator,
        no_solve: a.no_solve,
        restitution: a.restitution,
        restitution_threshold: a.restitution_threshold,
        rolling_friction: a.rolling_friction,
    };
    let _lock = cpbench_harness::lock::FolderLock::acquire(&a.out)?;
    let every = print_every;
    let s = run_generate(&cfg, |r| {
        if every > 0 && r.step % every == 0 {
            eprintln!(
                "step {:5}  t = {:7.3} s  contacts {:6}  KE {:10.4e} J  max pen {:9.3e} m  \
                 iters {:5}{}",
                r.step,
                r.time,
                r.contacts,
                r.kinetic_energy,
                r.max_penetration,
                r.iterations,
                if r.converged { "" } else { " (not converged)" }
            );
        }
    })?;
    let [det, asm, inst, solve, upd] = s.mean_timings();
    let nc: f64 = s.steps.iter().map(|r| r.contacts as f64).sum::<f64>() / s.steps.len() as f64;
    let it: f64 = s.steps.iter().map(|r| r.iterations as f64).sum::<f64>() / s.steps.len() as f64;
    let unconverged = s.steps.iter().filter(|r| !r.converged).count();
    if a.no_solve {
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
    if !a.no_solve {
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
    println!(
        "{} {} and trajectory.csv in {}",
        s.exported.len(),
        match export_format {
            ExportFormat::Fclib => "fclib files",
            ExportFormat::Npz => ".npz files",
            ExportFormat::Bundle => "bundles",
        },
        a.out.display()
    );
    if a.vtk || a.snapshots {
        let vtk = s
            .views
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "vtk"));
        let png = s.views.len() - vtk.count();
        println!(
            "{} VTK files in {}, {} PNG views in {}",
            s.views.len() - png,
            a.out.join(cpbench_harness::simout::VTK_DIR).display(),
            png,
            a.out.join(cpbench_harness::simout::SNAPSHOT_DIR).display()
        );
    }
    Ok(())
}
