//! The `scale` suite: the cost of an iteration, of an `N`-product and the peak memory from a
//! thousand to a million contacts.
//!
//! Instances: the first-step CCP of cpbench's cannonball pyramid (`pyramid` scene of
//! [`cpbench_granular`], seed [`SCALE_SEED`], bottom layer fixed, every sphere touching its
//! neighbours), with the number of layers chosen so that the contact count is nearest (in
//! ratio) to each target of [`SCALE_TARGETS`]: `1e3, 1e4, 1e5, 1e6` contacts give 9, 18, 38
//! and 80 layers (1152, 10404, 104044 and 998560 contacts, [`pyramid_contacts`]). Each is
//! generated once and cached as `pyramid-<L>_seed<S>__ccp.npz` in a cache folder
//! ([`scale_instance`]); a cached file is read instead of generating again.
//!
//! Runs ([`run_scale`]): one size after the other, each instance loaded only while its runs
//! execute (so the peak memory of a run is that of its own instance), every run alone on the
//! whole machine ([`crate::RunConfig::whole_machine`]), the memory bandwidth measured once
//! ([`crate::bandwidth`]).

use crate::error::{HarnessError, Result};
use crate::manifest::Manifest;
use crate::order::sort_canonical;
use crate::run::{run, RunConfig, RunOutcome};
use cpbench_granular::scenes::PyramidParams;
use cpbench_problems::io::npz::{read_npz, write_npz};
use cpbench_problems::{Instance, ValidationOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Contact counts the suite aims at by default.
pub const SCALE_TARGETS: [f64; 4] = [1e3, 1e4, 1e5, 1e6];

/// Seed of the pyramid scenes (the pyramid has no randomness; recorded in the provenance).
pub const SCALE_SEED: u64 = 1;

/// Solvers run by default: the first-order methods APGD, PGS (plain, and with Anderson
/// acceleration: the preset `pgs:anderson`) and SPG-QP at a fixed iteration
/// budget ([`SCALE_MAX_ITER`]) and the interior point under a time limit
/// ([`SCALE_TIME_LIMIT_S`]).
pub const SCALE_SOLVERS: [&str; 5] = ["apgd", "pgs", "pgs:anderson", "spgqp", "ipm"];

/// Iteration budget of every run (the suite measures the time per iteration and per product,
/// not the time to a tolerance).
pub const SCALE_MAX_ITER: u64 = 100;

/// Time limit of every run, seconds (binding for the interior point on the largest sizes; a
/// running iteration is finished first).
pub const SCALE_TIME_LIMIT_S: f64 = 300.0;

/// Every k-th iteration traced (residuals cost several products each).
pub const SCALE_TRACE_EVERY: u64 = 10;

/// Largest contact count on which factorising solvers (`ipm`) run by default. The sparse
/// Cholesky factor of the pyramid's KKT system grows about 30x per 10x contacts (0.6 million
/// entries at 1152 contacts, 20 million at 10404, 1.6 s per factorisation on 2 cores): at
/// 1e5 contacts it would need some 5 GB and minutes per factorisation, at 1e6 more memory
/// than a workstation has, and one factorisation cannot be stopped by the time limit.
pub const SCALE_FACTORISING_MAX_CONTACTS: f64 = 2e4;

/// Contacts of the first step of a pyramid of `layers` layers: layer sizes `m = 1 .. L-1`
/// above the fixed bottom layer each have `2 m (m - 1)` contacts within the layer and
/// `4 m^2` with the layer below (the bottom layer's own pairs are fixed-fixed and left out):
/// `sum_{m=1}^{L-1} (6 m^2 - 2 m)`. `pyramid_contacts(40) = 121680`.
pub fn pyramid_contacts(layers: usize) -> u64 {
    (1..layers as u64).map(|m| 6 * m * m - 2 * m).sum()
}

/// One size of the suite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleSize {
    /// The contact count asked for.
    pub target: f64,
    /// Pyramid layers.
    pub layers: usize,
    /// Contacts of that pyramid ([`pyramid_contacts`]).
    pub contacts: u64,
}

impl ScaleSize {
    /// The pyramid whose contact count is nearest to `target` in ratio (at least 2 layers,
    /// at most 1024). Errors: [`HarnessError::Invalid`] for a target that is not a positive
    /// finite number.
    pub fn for_target(target: f64) -> Result<ScaleSize> {
        if !(target.is_finite() && target > 0.0) {
            return Err(HarnessError::Invalid(format!(
                "scale size {target}: the contact count must be a positive number"
            )));
        }
        let dist = |l: usize| (pyramid_contacts(l) as f64 / target).ln().abs();
        let mut best = 2;
        for l in 3..=1024 {
            if dist(l) < dist(best) {
                best = l;
            }
            if pyramid_contacts(l) as f64 > 2.0 * target {
                break;
            }
        }
        Ok(ScaleSize {
            target,
            layers: best,
            contacts: pyramid_contacts(best),
        })
    }
}

/// The sizes for `targets` (default [`SCALE_TARGETS`] when empty) whose contact count is at
/// most `max_contacts`, smallest first, without repeats. Errors: a target that is not
/// positive, or no size left under the cap.
pub fn scale_sizes(targets: &[f64], max_contacts: Option<f64>) -> Result<Vec<ScaleSize>> {
    let targets: &[f64] = if targets.is_empty() {
        &SCALE_TARGETS
    } else {
        targets
    };
    let mut sizes = targets
        .iter()
        .map(|&t| ScaleSize::for_target(t))
        .collect::<Result<Vec<_>>>()?;
    sizes.sort_by_key(|s| s.layers);
    sizes.dedup_by_key(|s| s.layers);
    if let Some(cap) = max_contacts {
        sizes.retain(|s| s.contacts as f64 <= cap);
        if sizes.is_empty() {
            return Err(HarnessError::Invalid(format!(
                "no scale size has at most {cap} contacts (sizes: {})",
                targets
                    .iter()
                    .map(|&t| {
                        ScaleSize::for_target(t)
                            .map(|s| s.contacts.to_string())
                            .unwrap_or_default()
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(sizes)
}

/// Cache file of a size: `cache/pyramid-<L>_seed<S>__ccp.npz`.
pub fn cache_path(cache: &Path, size: &ScaleSize) -> PathBuf {
    cache.join(format!("pyramid-{}_seed{SCALE_SEED}__ccp.npz", size.layers))
}

/// The instance of `size`: read from its cache file when present, otherwise generated (the
/// first step of the pyramid, before any solve) and written there (atomically: a temporary
/// file renamed). Returns it and whether it was generated now. Errors: a cache folder that
/// cannot be created, a cache file that does not read ([`HarnessError::Problem`] naming it;
/// delete it to generate again), generation and write errors.
pub fn scale_instance(size: &ScaleSize, cache: &Path) -> Result<(Instance, bool)> {
    let path = cache_path(cache, size);
    if path.exists() {
        return Ok((read_npz(&path, ValidationOptions::default())?, false));
    }
    let inst = generate_pyramid(size)?;
    std::fs::create_dir_all(cache).map_err(|e| HarnessError::io(cache, e))?;
    let tmp = path.with_extension("npz.tmp");
    write_npz(&inst, &tmp)?;
    std::fs::rename(&tmp, &path).map_err(|e| HarnessError::io(&path, e))?;
    Ok((inst, true))
}

/// Generate the instance of `size` (no cache): the CCP of the first step of the pyramid of
/// `size.layers` layers, before any solve, named `pyramid-<L>_step0001__ccp`. About 1 s per
/// 1e5 contacts. Errors: [`HarnessError::Suite`] naming the scene when the generator fails.
pub fn generate_pyramid(size: &ScaleSize) -> Result<Instance> {
    generate_pyramid_with(size, None)
}

/// [`generate_pyramid`] with the storage of `N` chosen (`None`: automatic, as the generator
/// does; `Some(OperatorKind::MatrixFree)`: `D` and `M` of the movable bodies, `N` never
/// formed). Errors: as [`generate_pyramid`].
pub fn generate_pyramid_with(
    size: &ScaleSize,
    operator: Option<cpbench_problems::OperatorKind>,
) -> Result<Instance> {
    let err = |message: String| HarnessError::Suite {
        path: PathBuf::from(format!("pyramid-{}", size.layers)),
        message,
    };
    let mut sim = PyramidParams {
        layers: size.layers,
        ..Default::default()
    }
    .build(SCALE_SEED, false)
    .and_then(|s| s.into_simulation())
    .map_err(|e| err(e.to_string()))?;
    sim.set_operator(operator);
    let inst = sim
        .build_instance()
        .map_err(|e| err(e.to_string()))?
        .cloned()
        .ok_or_else(|| err("the pyramid has no contacts".into()))?;
    Ok(inst)
}

/// What [`run_scale`] did for one size.
#[derive(Clone, Debug)]
pub struct SizeReport {
    /// The size.
    pub size: ScaleSize,
    /// Unknowns of its instance.
    pub n: usize,
    /// Whether the instance was generated now (else read from the cache).
    pub generated: bool,
    /// Seconds to generate or read the instance.
    pub load_s: f64,
    /// Wall seconds of its runs (checks, traces and plots included).
    pub run_s: f64,
    /// Solver labels left out on this size (factorising solvers above their cap).
    pub left_out: Vec<String>,
}

/// Run `cfg` on every size, smallest first: each instance from [`scale_instance`], its runs
/// with [`run`] into `cfg.out_dir` (rows accumulate; a rerun skips the runs present), the
/// instance dropped before the next size; solvers whose cost model is not first-order
/// (`ipm`) only on sizes of at most `factorising_max_contacts` contacts (`None`: every
/// size); bandwidth measured with the first size when `cfg.measure_bandwidth`; convergence
/// plots drawn once, after the last size; the manifest's solvers in the order of
/// `cfg.solvers` at the end. `progress` is called after each size. Returns the folder's rows
/// in canonical order with the runs of all sizes counted, and a report per size. Errors:
/// those of [`scale_instance`] and [`run`].
pub fn run_scale(
    sizes: &[ScaleSize],
    cache: &Path,
    cfg: &RunConfig,
    factorising_max_contacts: Option<f64>,
    mut progress: impl FnMut(&SizeReport),
) -> Result<(RunOutcome, Vec<SizeReport>)> {
    use cpbench_solvers::registry::{cost_model, CostModel};
    let mut reports = Vec::new();
    let mut outcome = RunOutcome {
        rows: Vec::new(),
        executed: 0,
        skipped: 0,
    };
    for (k, size) in sizes.iter().enumerate() {
        let t = Instant::now();
        let (inst, generated) = scale_instance(size, cache)?;
        let load_s = t.elapsed().as_secs_f64();
        let mut c = cfg.clone();
        let too_big = factorising_max_contacts.is_some_and(|cap| size.contacts as f64 > cap);
        let (keep, dropped): (Vec<_>, Vec<_>) = cfg.solvers.iter().cloned().partition(|s| {
            !too_big || cost_model(&s.name).is_none_or(|m| m == CostModel::FirstOrder)
        });
        c.solvers = keep;
        let left_out: Vec<String> = dropped.into_iter().map(|s| s.label).collect();
        if c.solvers.is_empty() {
            progress(&SizeReport {
                size: *size,
                n: 0,
                generated: false,
                load_s: 0.0,
                run_s: 0.0,
                left_out: left_out.clone(),
            });
            continue;
        }
        c.measure_bandwidth = cfg.measure_bandwidth && k == 0;
        c.plots = cfg.plots && k + 1 == sizes.len();
        c.load_errors = if k == 0 {
            cfg.load_errors.clone()
        } else {
            Vec::new()
        };
        let t = Instant::now();
        let o = run(std::slice::from_ref(&inst), &c)?;
        let rep = SizeReport {
            size: *size,
            n: inst.n(),
            generated,
            load_s,
            run_s: t.elapsed().as_secs_f64(),
            left_out,
        };
        drop(inst);
        progress(&rep);
        reports.push(rep);
        outcome = RunOutcome {
            rows: o.rows,
            executed: outcome.executed + o.executed,
            skipped: outcome.skipped + o.skipped,
        };
    }
    // the manifest lists the solvers in the order asked for (a size without some of them
    // put those first), and the rows follow it
    if let Ok(mut m) = Manifest::read(&cfg.out_dir) {
        let pos = |label: &str| {
            cfg.solvers
                .iter()
                .position(|s| s.label == label)
                .unwrap_or(usize::MAX)
        };
        m.solvers.sort_by_key(|e| pos(e.label()));
        m.write(&cfg.out_dir)?;
        sort_canonical(&mut outcome.rows, &m);
    }
    Ok((outcome, reports))
}
