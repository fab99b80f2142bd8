//! Per-iteration observers (argmin's observer pattern): the executor calls `init` once,
//! `iter` for the start point and after every iteration, and `finish` with the result.

use crate::result::SolveResult;
use cpbench_problems::{Instance, Residuals};

/// One iteration as observed: counters and every residual of the current iterate.
#[derive(Clone, Copy, Debug)]
pub struct IterRecord {
    /// Iteration number (0 = start point).
    pub iteration: u64,
    /// Solver time so far, seconds (monitoring excluded).
    pub time_s: f64,
    /// `N`-products so far.
    pub matvecs: u64,
    /// Residuals of the current iterate.
    pub residuals: Residuals,
    /// Whether this iterate is the best so far (by the stopping residual).
    pub is_best: bool,
    /// Solver-specific per-iteration values ([`crate::Solver::iter_info`]), e.g. the
    /// interior point's barrier parameter and step lengths; empty for most solvers.
    pub info: IterInfo,
}

/// Up to [`IterInfo::CAPACITY`] named per-iteration values of a solver (fixed size, so that
/// recording them allocates nothing).
#[derive(Clone, Copy, Debug, Default)]
pub struct IterInfo {
    len: usize,
    items: [(&'static str, f64); IterInfo::CAPACITY],
}

impl IterInfo {
    /// Maximum number of values.
    pub const CAPACITY: usize = 8;

    /// Empty.
    pub const fn new() -> Self {
        Self {
            len: 0,
            items: [("", 0.0); Self::CAPACITY],
        }
    }

    /// Append `(name, value)`; values past the capacity are dropped.
    pub fn push(&mut self, name: &'static str, value: f64) {
        if self.len < Self::CAPACITY {
            self.items[self.len] = (name, value);
            self.len += 1;
        }
    }

    /// The values, in the order pushed.
    pub fn items(&self) -> &[(&'static str, f64)] {
        &self.items[..self.len]
    }
}

/// Receives the progress of a solve.
pub trait Observer {
    /// Called once before the start point is recorded.
    fn init(&mut self, _solver: &str, _instance: &Instance) {}
    /// Whether the observer records iteration `iteration` (`is_best`: its stopping residual
    /// is the best so far). The executor computes every residual only for an iteration some
    /// observer wants, and for the last one; [`Observer::iter`] is called for those alone.
    /// Default: every iteration.
    fn wants(&self, _iteration: u64, _is_best: bool) -> bool {
        true
    }
    /// Called for the start point, after each iteration that some observer wants
    /// ([`Observer::wants`]; every iteration by default) and after the last one.
    fn iter(&mut self, record: &IterRecord);
    /// Called once with the final result.
    fn finish(&mut self, _result: &SolveResult) {}
}

/// When an observer records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObserverMode {
    /// Never.
    Never,
    /// Every iteration.
    Always,
    /// Every `k`-th iteration (and the start point).
    Every(u64),
    /// Only iterations that improve the best residual.
    NewBest,
}

impl ObserverMode {
    /// Whether a record passes this mode.
    pub fn accepts(self, r: &IterRecord) -> bool {
        match self {
            ObserverMode::Never => false,
            ObserverMode::Always => true,
            ObserverMode::Every(k) => k > 0 && r.iteration % k == 0,
            ObserverMode::NewBest => r.is_best,
        }
    }
}

/// Collects the records that pass its mode in memory (the harness writes them as a trace).
#[derive(Clone, Debug)]
pub struct TraceRecorder {
    /// Which records to keep.
    pub mode: ObserverMode,
    /// The kept records, in order.
    pub records: Vec<IterRecord>,
    last: Option<IterRecord>,
}

impl TraceRecorder {
    /// A recorder with the given mode.
    pub fn new(mode: ObserverMode) -> Self {
        Self {
            mode,
            records: Vec::new(),
            last: None,
        }
    }
}

impl Observer for TraceRecorder {
    /// The iterations its mode keeps: none (`Never`), every one, every `k`-th, or the new
    /// best ones.
    fn wants(&self, iteration: u64, is_best: bool) -> bool {
        match self.mode {
            ObserverMode::Never => false,
            ObserverMode::Always => true,
            ObserverMode::Every(k) => k > 0 && iteration % k == 0,
            ObserverMode::NewBest => is_best,
        }
    }

    fn init(&mut self, _solver: &str, _instance: &Instance) {
        self.records.clear();
        self.last = None;
    }

    fn iter(&mut self, record: &IterRecord) {
        if self.mode.accepts(record) {
            self.records.push(*record);
        }
        self.last = Some(*record);
    }

    fn finish(&mut self, _result: &SolveResult) {
        // Always keep the last iteration so a thinned trace ends where the solve ended.
        if let Some(l) = self.last {
            if self.records.last().map(|r| r.iteration) != Some(l.iteration)
                && self.mode != ObserverMode::Never
            {
                self.records.push(l);
            }
        }
    }
}
