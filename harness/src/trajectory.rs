//! Trajectories (issue 32): the step instances of one simulation with the identities of their
//! contacts, and their replay, open loop, by solvers cold and warm-started.
//!
//! **On disk** (`docs/formats.md`, "Trajectories"): `cpbench generate` writes, beside every
//! exported step instance, `{label}_step{NNNN}.contacts.csv` (one row per contact, in the
//! instance's contact order: `a,b,feature` (see [`ContactId`]) and, since version 2, the world
//! directions of the contact's coordinates, [`ContactFrames`]) and, at the end, the index
//! [`INDEX_FILE`] (`trajectory.json`, [`TrajectoryIndex`]) listing the exported steps in order.
//!
//! **Replay** ([`replay`]): every solver goes through the steps in order, once from zero
//! (`cold`) and once from its own previous answer mapped by contact identity (`warm`): a
//! contact of step `k + 1` whose identity was a contact of step `k` starts at that contact's
//! answer, a new one at zero; contacts that vanished are dropped. With frames (version 2) the
//! answer is carried as the world impulse `f = sum_j g_j e_j` and projected on the new frame
//! (`g'_j = f . e'_j`, [`map_world_warm_start`]), as the stepper's own warm start does; without
//! them (version 1) it is copied in contact coordinates ([`map_warm_start`]), which is wrong
//! wherever a contact's tangent frame turns between steps (the steppers' frames switch their
//! reference axis where two components of the normal are equal in size, e.g. in a pyramid).
//! The executor projects the start onto `K` and, when it already meets the tolerance, ends the
//! solve after zero iterations (`converged`, as MuJoCo's solver does); the harness's check is
//! applied to every answer.

use crate::error::{HarnessError, Result};
use crate::fsutil::write_atomic;
use crate::solve::{checked_solve, Runnable, SolverSpec};
use cpbench_granular::contact::{ContactFrames, ContactId, PartnerId};
use cpbench_problems::io::LoadOptions;
use cpbench_problems::Instance;
use cpbench_solvers::ExecSettings;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The index file of a trajectory folder.
pub const INDEX_FILE: &str = "trajectory.json";
/// The `format` field of [`TrajectoryIndex`].
pub const FORMAT: &str = "cpbench-trajectory";
/// The version written (version 1, without frames, is read too).
pub const VERSION: u32 = 2;
/// The header of a contacts file up to the frame columns ([`frame_columns`]).
pub const CONTACTS_HEADER: &str = "a,b,feature";

/// The names of the frame columns of a contacts file for `bs` coordinates per contact in
/// `dim` dimensions: direction `e{k}` of coordinate `k` (`e0` the normal), component `x`, `y`
/// (, `z`): `e0x,e0y,e0z,e1x,...`.
pub fn frame_columns(bs: usize, dim: usize) -> Vec<String> {
    let axes = ["x", "y", "z"];
    (0..bs)
        .flat_map(|k| axes[..dim.min(3)].iter().map(move |a| format!("e{k}{a}")))
        .collect()
}

/// The index of a trajectory folder ([`INDEX_FILE`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryIndex {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The scene's label (`fill-5`, `disc-hopper-60`).
    pub scene: String,
    /// The exported steps, in simulation order.
    pub steps: Vec<IndexStep>,
}

/// One step of a [`TrajectoryIndex`]; paths are relative to the folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexStep {
    /// The simulation step number (1-based, as in the instance names).
    pub step: u64,
    /// The instance (a bundle folder, `.npz` or fclib `.hdf5`).
    pub instance: String,
    /// Its contacts file ([`CONTACTS_HEADER`]).
    pub contacts: String,
    /// Number of contacts.
    pub contacts_count: usize,
}

/// The name of the contacts file of the instance exported at `path` (a bundle folder
/// `{label}_step{NNNN}__ccp`, `{...}.npz` or `{...}.hdf5`): `{label}_step{NNNN}.contacts.csv`.
pub fn contacts_file_name(instance_path: &Path) -> String {
    let name = instance_path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".npz")
        .or_else(|| name.strip_suffix(".hdf5"))
        .unwrap_or(&name);
    let stem = stem.rsplit_once("__").map_or(stem, |(s, _)| s);
    format!("{stem}.contacts.csv")
}

/// The text of a contacts file: [`CONTACTS_HEADER`] (and the [`frame_columns`] when `frames`
/// has directions), then per contact `a,b,feature` (`b` a body index or `w<wall>`) and its
/// frame (shortest round-trip decimals).
pub fn contacts_csv(ids: &[ContactId], frames: Option<&ContactFrames>) -> String {
    let frames =
        frames.filter(|f| f.dim > 0 && f.directions.len() == ids.len() * f.block_size * f.dim);
    let per = frames.map_or(0, |f| f.block_size * f.dim);
    let mut s = String::with_capacity((16 + 24 * per) * (ids.len() + 1));
    s.push_str(CONTACTS_HEADER);
    if let Some(f) = frames {
        for c in frame_columns(f.block_size, f.dim) {
            s.push(',');
            s.push_str(&c);
        }
    }
    s.push('\n');
    for (c, id) in ids.iter().enumerate() {
        // writing into a String cannot fail
        let _ = write!(s, "{},{},{}", id.a, id.b, id.feature);
        if let Some(f) = frames {
            for x in &f.directions[c * per..(c + 1) * per] {
                let _ = write!(s, ",{x:?}");
            }
        }
        s.push('\n');
    }
    s
}

/// Parse a contacts file's text: the identities and, when the header has frame columns, the
/// frames (`bs` directions of `dim` components per contact, `bs` and `dim` read from the
/// header). `path` names it in errors ([`HarnessError::Trajectory`] with the line and the
/// value): a wrong header, a wrong number of fields, a malformed identity or number.
pub fn parse_contacts(
    text: &str,
    path: &Path,
    step: u64,
) -> Result<(Vec<ContactId>, Option<ContactFrames>)> {
    let bad = |line: usize, reason: String| HarnessError::Trajectory {
        path: path.to_path_buf(),
        step: Some(step),
        message: format!("line {line}: {reason}"),
    };
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("").trim();
    let mut frames = None;
    if header != CONTACTS_HEADER {
        let shape = header
            .strip_prefix(CONTACTS_HEADER)
            .and_then(|rest| rest.strip_prefix(','))
            .and_then(|rest| {
                let cols: Vec<&str> = rest.split(',').collect();
                [(1, 2), (2, 2), (1, 3), (3, 3)]
                    .into_iter()
                    .find(|&(bs, dim)| frame_columns(bs, dim) == cols)
            });
        match shape {
            Some((block_size, dim)) => {
                frames = Some(ContactFrames {
                    block_size,
                    dim,
                    directions: Vec::new(),
                })
            }
            None => {
                return Err(bad(
                    1,
                    format!(
                        "expected the header {CONTACTS_HEADER:?}, alone or followed by the \
                         frame columns (e.g. {:?}), found {header:?}",
                        frame_columns(3, 3).join(",")
                    ),
                ))
            }
        }
    }
    let per = frames.as_ref().map_or(0, |f| f.block_size * f.dim);
    let mut ids = Vec::new();
    for (i, line) in lines.enumerate() {
        let line_no = i + 2;
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 3 + per {
            return Err(bad(
                line_no,
                format!(
                    "expected {} fields (a,b,feature and {per} frame components), found {line:?}",
                    3 + per
                ),
            ));
        }
        let a = f[0].parse::<usize>().map_err(|_| {
            bad(
                line_no,
                format!("a: expected a body index, found {:?}", f[0]),
            )
        })?;
        let b = f[1]
            .parse::<PartnerId>()
            .map_err(|e| bad(line_no, format!("b: {e}")))?;
        let feature = f[2].parse::<u32>().map_err(|_| {
            bad(
                line_no,
                format!("feature: expected an integer, found {:?}", f[2]),
            )
        })?;
        ids.push(ContactId { a, b, feature });
        if let Some(fr) = frames.as_mut() {
            for (k, x) in f[3..].iter().enumerate() {
                match x.parse::<f64>() {
                    Ok(v) if v.is_finite() => fr.directions.push(v),
                    _ => {
                        return Err(bad(
                            line_no,
                            format!(
                                "{}: expected a finite number, found {x:?}",
                                header.split(',').nth(3 + k).unwrap_or("?")
                            ),
                        ))
                    }
                }
            }
        }
    }
    Ok((ids, frames))
}

/// Write the index of the steps exported into `dir`. Errors: I/O.
pub fn write_index(dir: &Path, scene: &str, steps: Vec<IndexStep>) -> Result<()> {
    let index = TrajectoryIndex {
        format: FORMAT.into(),
        version: VERSION,
        scene: scene.into(),
        steps,
    };
    let text = serde_json::to_string_pretty(&index).expect("the index serialises");
    write_atomic(&dir.join(INDEX_FILE), text.as_bytes())
}

/// One loaded step: its instance and the identities of its contacts.
#[derive(Debug)]
pub struct TrajectoryStep {
    /// The simulation step number.
    pub step: u64,
    /// The instance.
    pub instance: Instance,
    /// One identity per contact, in the instance's order.
    pub ids: Vec<ContactId>,
    /// The contacts' frames (version 2 files), in the same order; `None` in version 1.
    pub frames: Option<ContactFrames>,
}

/// A loaded trajectory: its folder, scene label and steps in order.
#[derive(Debug)]
pub struct Trajectory {
    /// The folder.
    pub dir: PathBuf,
    /// The scene label of the index.
    pub scene: String,
    /// The steps.
    pub steps: Vec<TrajectoryStep>,
}

impl Trajectory {
    /// Load the folder `dir`: its index, then every step's instance (with `opts`, e.g. the
    /// class) and contacts file. Errors ([`HarnessError::Trajectory`] naming the step and the
    /// file): a missing or malformed index, a missing or corrupt instance or contacts file,
    /// a contacts file whose count differs from the index or from the instance
    /// (`n = contacts x block size`), steps out of order.
    pub fn load(dir: &Path, opts: &LoadOptions) -> Result<Trajectory> {
        let index_path = dir.join(INDEX_FILE);
        let fail = |path: &Path, step: Option<u64>, message: String| HarnessError::Trajectory {
            path: path.to_path_buf(),
            step,
            message,
        };
        let text = std::fs::read_to_string(&index_path)
            .map_err(|e| fail(&index_path, None, format!("cannot read the index: {e}")))?;
        let index: TrajectoryIndex = serde_json::from_str(&text)
            .map_err(|e| fail(&index_path, None, format!("not a trajectory index: {e}")))?;
        if index.format != FORMAT || !(1..=VERSION).contains(&index.version) {
            return Err(fail(
                &index_path,
                None,
                format!(
                    "expected format {FORMAT:?} version 1 to {VERSION}, found {:?} version {}",
                    index.format, index.version
                ),
            ));
        }
        if index.steps.is_empty() {
            return Err(fail(&index_path, None, "the index lists no step".into()));
        }
        let mut steps = Vec::with_capacity(index.steps.len());
        let mut last = 0;
        for s in &index.steps {
            if s.step <= last {
                return Err(fail(
                    &index_path,
                    Some(s.step),
                    format!("steps out of order: step {} after step {last}", s.step),
                ));
            }
            last = s.step;
            let ipath = dir.join(&s.instance);
            let instance = cpbench_problems::io::load(&ipath, opts).map_err(|e| {
                fail(
                    &ipath,
                    Some(s.step),
                    format!("cannot load the instance: {e}"),
                )
            })?;
            let cpath = dir.join(&s.contacts);
            let ctext = std::fs::read_to_string(&cpath).map_err(|e| {
                fail(
                    &cpath,
                    Some(s.step),
                    format!("cannot read the contacts: {e}"),
                )
            })?;
            let (ids, mut frames) = parse_contacts(&ctext, &cpath, s.step)?;
            let bs = instance.constraints().block_size();
            // a class with fewer coordinates per contact (the frictionless LCP of a CCP step,
            // `--class lcp`) keeps the first directions: the normal first
            if let Some(f) = frames.as_mut().filter(|f| f.block_size > bs) {
                let dim = f.dim;
                f.directions = f
                    .directions
                    .chunks_exact(f.block_size * dim)
                    .flat_map(|c| c[..bs * dim].iter().copied())
                    .collect();
                f.block_size = bs;
            }
            if let Some(f) = frames.as_ref().filter(|f| f.block_size != bs) {
                return Err(fail(
                    &cpath,
                    Some(s.step),
                    format!(
                        "frames of {} coordinates per contact, but the instance {} has {bs}",
                        f.block_size, s.instance
                    ),
                ));
            }
            if ids.len() != s.contacts_count || ids.len() * bs != instance.n() {
                return Err(fail(
                    &cpath,
                    Some(s.step),
                    format!(
                        "{} contacts, but the index says {} and the instance {} has n = {} \
                         ({} contacts of {bs} unknowns)",
                        ids.len(),
                        s.contacts_count,
                        s.instance,
                        instance.n(),
                        instance.n() / bs.max(1)
                    ),
                ));
            }
            steps.push(TrajectoryStep {
                step: s.step,
                instance,
                ids,
                frames,
            });
        }
        Ok(Trajectory {
            dir: dir.to_path_buf(),
            scene: index.scene,
            steps,
        })
    }
}

/// The start point of a step from the previous step's answer: for each contact `ids[c]` the
/// `bs` entries of `prev[ids[c]]` where that identity was a contact of the previous step,
/// zeros otherwise. Returns the start (length `ids.len() bs`) and how many contacts
/// persisted.
pub fn map_warm_start(
    prev: &HashMap<ContactId, Vec<f64>>,
    ids: &[ContactId],
    bs: usize,
) -> (Vec<f64>, usize) {
    let mut start = vec![0.0; ids.len() * bs];
    let mut persisted = 0;
    for (c, id) in ids.iter().enumerate() {
        if let Some(p) = prev.get(id) {
            if p.len() == bs {
                start[c * bs..(c + 1) * bs].copy_from_slice(p);
                persisted += 1;
            }
        }
    }
    (start, persisted)
}

/// [`map_warm_start`] through the world: `prev` holds, per identity, the world impulse of the
/// previous answer (`dim` components, [`world_impulses`]); contact `c` of this step starts at
/// `g_k = f . e_k` on its own frame (`frames`). Returns the start and how many contacts
/// persisted.
pub fn map_world_warm_start(
    prev: &HashMap<ContactId, Vec<f64>>,
    ids: &[ContactId],
    frames: &ContactFrames,
) -> (Vec<f64>, usize) {
    let (bs, dim) = (frames.block_size, frames.dim);
    let mut start = vec![0.0; ids.len() * bs];
    let mut persisted = 0;
    for (c, id) in ids.iter().enumerate() {
        if let Some(f) = prev.get(id).filter(|f| f.len() == dim) {
            for k in 0..bs {
                let e = &frames.directions[(c * bs + k) * dim..(c * bs + k + 1) * dim];
                start[c * bs + k] = e.iter().zip(f).map(|(a, b)| a * b).sum();
            }
            persisted += 1;
        }
    }
    (start, persisted)
}

/// The world impulse `sum_k g_k e_k` of each contact of the answer `gamma` (contact
/// coordinates, `frames.block_size` per contact), `frames.dim` components each.
pub fn world_impulses(gamma: &[f64], frames: &ContactFrames) -> Vec<Vec<f64>> {
    let (bs, dim) = (frames.block_size, frames.dim);
    gamma
        .chunks_exact(bs)
        .enumerate()
        .map(|(c, g)| {
            let mut f = vec![0.0; dim];
            for (k, gk) in g.iter().enumerate() {
                let e = &frames.directions[(c * bs + k) * dim..(c * bs + k + 1) * dim];
                for (fi, ei) in f.iter_mut().zip(e) {
                    *fi += gk * ei;
                }
            }
            f
        })
        .collect()
}

/// How a replay starts each step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartMode {
    /// From zero.
    Cold,
    /// From the solver's previous answer, mapped by contact identity ([`map_warm_start`]).
    Warm,
}

impl StartMode {
    /// `cold` or `warm`.
    pub fn as_str(self) -> &'static str {
        match self {
            StartMode::Cold => "cold",
            StartMode::Warm => "warm",
        }
    }
}

/// One solve of a replay.
#[derive(Clone, Debug)]
pub struct ReplayRow {
    /// Solver label.
    pub solver: String,
    /// Cold or warm.
    pub mode: StartMode,
    /// Simulation step number.
    pub step: u64,
    /// Contacts of the step.
    pub contacts: usize,
    /// Contacts that started from a previous answer (0 when cold).
    pub persisted: usize,
    /// Executor status.
    pub status: String,
    /// The harness's check passed.
    pub success: bool,
    /// Iterations (0: the start met the tolerance).
    pub iterations: u64,
    /// Counted `N`-products.
    pub matvecs: u64,
    /// Solver time (s).
    pub time_s: f64,
    /// The check residual of the answer.
    pub residual: f64,
    /// The answer (for mapping and comparisons; not written).
    pub gamma: Vec<f64>,
}

/// Replay `traj` with each of `solvers`, cold then warm, every step under `exec` (its
/// tolerance, the per-step budget `max_iter` / `max_time_s`, and its residual: the one the
/// executor stops on and the harness checks, the class default when `None`). Rows in the
/// order solver, mode, step.
/// Errors: a solver that cannot be built, an executor error (invalid settings); a failed step
/// is a row, not an error.
pub fn replay(
    traj: &Trajectory,
    solvers: &[SolverSpec],
    exec: &ExecSettings,
) -> Result<Vec<ReplayRow>> {
    let mut rows = Vec::with_capacity(2 * solvers.len() * traj.steps.len());
    for spec in solvers {
        for mode in [StartMode::Cold, StartMode::Warm] {
            let mut prev: HashMap<ContactId, Vec<f64>> = HashMap::new();
            for st in &traj.steps {
                let bs = st.instance.constraints().block_size();
                let (start, persisted) = match (mode, &st.frames) {
                    (StartMode::Cold, _) => (vec![0.0; st.instance.n()], 0),
                    (StartMode::Warm, Some(f)) => map_world_warm_start(&prev, &st.ids, f),
                    (StartMode::Warm, None) => map_warm_start(&prev, &st.ids, bs),
                };
                let mut runnable = Runnable::of(spec)?;
                if runnable.refusal(&st.instance).is_some() {
                    continue;
                }
                let c = checked_solve(
                    &mut runnable,
                    exec.clone(),
                    &st.instance,
                    Some(&start),
                    exec.residual,
                    &mut [],
                )?;
                let r = c.result;
                prev.clear();
                match &st.frames {
                    Some(f) => prev.extend(st.ids.iter().copied().zip(world_impulses(&r.gamma, f))),
                    None => prev.extend(
                        st.ids
                            .iter()
                            .copied()
                            .zip(r.gamma.chunks_exact(bs).map(<[f64]>::to_vec)),
                    ),
                }
                rows.push(ReplayRow {
                    solver: spec.label.clone(),
                    mode,
                    step: st.step,
                    contacts: st.ids.len(),
                    persisted,
                    status: r.status.as_str().to_string(),
                    success: c.verdict.success,
                    iterations: r.iterations,
                    matvecs: r.matvecs,
                    time_s: r.time_s,
                    residual: c.verdict.residuals.get(c.check_residual),
                    gamma: r.gamma,
                });
            }
        }
    }
    Ok(rows)
}

/// The per-step cost of one solver and mode along a trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayStats {
    /// Solver label.
    pub solver: String,
    /// Cold or warm.
    pub mode: StartMode,
    /// Steps solved (refused steps are not rows).
    pub steps: usize,
    /// Steps whose answer failed the check.
    pub failed: usize,
    /// Steps that ended after zero iterations (the start met the tolerance).
    pub zero_iterations: usize,
    /// Median, 95th percentile and maximum of the iterations per step.
    pub iterations: [f64; 3],
    /// Median, 95th percentile and maximum of the solver time per step (s).
    pub time_s: [f64; 3],
    /// Total solver time (s).
    pub total_time_s: f64,
}

/// The `q`-quantile (`0 <= q <= 1`) of sorted `v` by the nearest-rank rule (the smallest
/// value with at least `q` of the values at or below it); NaN when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// [`ReplayStats`] per solver and mode of `rows`, in their order of first appearance.
pub fn replay_stats(rows: &[ReplayRow]) -> Vec<ReplayStats> {
    let mut keys: Vec<(String, StartMode)> = Vec::new();
    for r in rows {
        if !keys.iter().any(|(s, m)| *s == r.solver && *m == r.mode) {
            keys.push((r.solver.clone(), r.mode));
        }
    }
    let three = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        [quantile(&v, 0.5), quantile(&v, 0.95), quantile(&v, 1.0)]
    };
    keys.into_iter()
        .map(|(solver, mode)| {
            let mine: Vec<&ReplayRow> = rows
                .iter()
                .filter(|r| r.solver == solver && r.mode == mode)
                .collect();
            ReplayStats {
                steps: mine.len(),
                failed: mine.iter().filter(|r| !r.success).count(),
                zero_iterations: mine.iter().filter(|r| r.iterations == 0).count(),
                iterations: three(mine.iter().map(|r| r.iterations as f64).collect()),
                time_s: three(mine.iter().map(|r| r.time_s).collect()),
                total_time_s: mine.iter().map(|r| r.time_s).sum(),
                solver,
                mode,
            }
        })
        .collect()
}

/// The header of `replay_steps.csv`.
pub const STEPS_HEADER: &str =
    "solver,mode,step,contacts,persisted,status,success,iterations,matvecs,time_s,residual";
/// The header of `replay_stats.csv`.
pub const STATS_HEADER: &str = "solver,mode,steps,failed,zero_iterations,iter_p50,iter_p95,\
                                iter_max,time_p50_s,time_p95_s,time_max_s,total_time_s";

impl ReplayStats {
    /// The cells of this row of `replay_stats.csv` ([`STATS_HEADER`]; times to 4 significant
    /// digits, the timer's noise is larger).
    pub fn cells(&self) -> [String; 12] {
        let [i50, i95, imax] = self.iterations;
        let [t50, t95, tmax] = self.time_s;
        [
            self.solver.clone(),
            self.mode.as_str().to_string(),
            self.steps.to_string(),
            self.failed.to_string(),
            self.zero_iterations.to_string(),
            i50.to_string(),
            i95.to_string(),
            imax.to_string(),
            format!("{t50:.3e}"),
            format!("{t95:.3e}"),
            format!("{tmax:.3e}"),
            format!("{:.3e}", self.total_time_s),
        ]
    }
}

/// Write `replay_steps.csv` (one row per solve) and `replay_stats.csv` (one row per solver
/// and mode) into `out`. Errors: I/O.
pub fn write_replay(out: &Path, rows: &[ReplayRow], stats: &[ReplayStats]) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| HarnessError::io(out, e))?;
    let mut s = String::from(STEPS_HEADER);
    s.push('\n');
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{:e},{:e}\n",
            r.solver,
            r.mode.as_str(),
            r.step,
            r.contacts,
            r.persisted,
            r.status,
            if r.success { "yes" } else { "no" },
            r.iterations,
            r.matvecs,
            r.time_s,
            r.residual
        ));
    }
    write_atomic(&out.join("replay_steps.csv"), s.as_bytes())?;
    let mut s = String::from(STATS_HEADER);
    s.push('\n');
    for t in stats {
        s.push_str(&t.cells().join(","));
        s.push('\n');
    }
    write_atomic(&out.join("replay_stats.csv"), s.as_bytes())
}

/// The stats as an aligned text table, the columns of `replay_stats.csv` (what `cpbench run
/// --trajectory` prints).
pub fn stats_table(stats: &[ReplayStats]) -> String {
    let head: Vec<&str> = STATS_HEADER.split(',').collect();
    let rows: Vec<Vec<String>> = stats.iter().map(|t| t.cells().to_vec()).collect();
    crate::table::aligned(&head, &rows, 2)
}

/// Write `replay.md` into `out`: what was replayed (the trajectory's folder, scene and steps,
/// the tolerance and the per-step budget), the per-solver table of `stats` (p50 / p95 / max
/// iterations and time per step, failed and zero-iteration steps) and, when drawn, the figure
/// `replay.png`. Errors: I/O.
pub fn write_replay_md(
    out: &Path,
    traj: &Trajectory,
    exec: &ExecSettings,
    stats: &[ReplayStats],
    figure: bool,
) -> Result<()> {
    let mut s = format!(
        "# Trajectory replay: {}\n\n{} steps from `{}`; every solver solves them in order from \
         zero (`cold`) and from its own previous answer mapped by contact identity (`warm`). \
         Tolerance {:e} on each step's {} (the stop and the check); budget per step: {} \
         iterations{}. Percentiles by the nearest rank; times are solver times (s) of this \
         machine.\n\n",
        traj.scene,
        traj.steps.len(),
        traj.dir.display(),
        exec.tol,
        exec.residual
            .map_or("class-default residual", |r| r.as_str()),
        exec.max_iter,
        exec.max_time_s
            .map_or(String::new(), |t| format!(", {t} s"))
    );
    let head: Vec<&str> = STATS_HEADER.split(',').collect();
    let rows: Vec<Vec<String>> = stats.iter().map(|t| t.cells().to_vec()).collect();
    s.push_str(&crate::table::markdown(&head, &rows));
    if figure {
        s.push_str(
            "\n![iterations per step, cumulative time, ECDF](replay.png)\n\nLeft: iterations \
             of every step (0 drawn at 0.5); middle: cumulative solver time; right: the \
             fraction of steps solved within x iterations.\n",
        );
    }
    write_atomic(&out.join("replay.md"), s.as_bytes())
}
