//! How busy the machine was around a timed run: the load average and the share of the CPUs that
//! other processes used, sampled at the start and the end of a run and recorded in the
//! manifest, so that a reader can tell quiet timings from timings taken on a shared machine.
//!
//! Linux only (`/proc/loadavg`, `/proc/stat`, `/proc/self/stat`); elsewhere every field is
//! `None`. The other processes' share is measured over a short window ([`WINDOW`]): the busy
//! time of all CPUs (`/proc/stat`: user, nice, system, irq, softirq, steal) less this
//! process's own CPU time (`/proc/self/stat`: utime + stime), over the total time of all
//! CPUs in the window; 1.0 means every core was busy with other work.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Length of the window over which the other processes' CPU share is measured.
pub const WINDOW: Duration = Duration::from_millis(500);

/// One sample of the machine's load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadSample {
    /// Load average over the last minute (`/proc/loadavg`), `None` off Linux.
    pub loadavg_1min: Option<f64>,
    /// Load average over the last 5 minutes.
    pub loadavg_5min: Option<f64>,
    /// Share of all CPUs' time used by other processes during [`WINDOW`], in `[0, 1]`.
    pub others_cpu_share: Option<f64>,
}

impl LoadSample {
    /// Sample now (takes [`WINDOW`] on Linux, nothing elsewhere).
    pub fn now() -> Self {
        let (l1, l5) = loadavg().unzip();
        Self {
            loadavg_1min: l1,
            loadavg_5min: l5,
            others_cpu_share: others_share(WINDOW),
        }
    }

    /// Whether the sample says the machine was busy: the one-minute load average above the
    /// number of logical CPUs `cpus`, or other processes using more than a tenth of the CPUs.
    pub fn busy(&self, cpus: usize) -> bool {
        self.loadavg_1min.is_some_and(|l| l > cpus as f64)
            || self.others_cpu_share.is_some_and(|s| s > 0.1)
    }

    /// `load 0.42 (1 min), others 3% of the CPUs` (`?` where unknown).
    pub fn describe(&self) -> String {
        format!(
            "load {} (1 min), other processes {} of the CPUs",
            self.loadavg_1min
                .map_or("?".to_string(), |l| format!("{l:.2}")),
            self.others_cpu_share
                .map_or("?".to_string(), |s| format!("{:.0}%", 100.0 * s))
        )
    }
}

fn loadavg() -> Option<(f64, f64)> {
    let t = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = t.split_whitespace();
    let a = it.next()?.parse().ok()?;
    let b = it.next()?.parse().ok()?;
    Some((a, b))
}

/// `(busy, total)` jiffies of all CPUs from the first line of `/proc/stat`.
fn cpu_jiffies() -> Option<(u64, u64)> {
    let t = std::fs::read_to_string("/proc/stat").ok()?;
    parse_stat(t.lines().next()?)
}

/// `(busy, total)` jiffies of a `/proc/stat` `cpu` line (`proc(5)`: `cpu user nice system idle
/// iowait irq softirq steal [guest guest_nice]`): busy = user + nice + system + irq + softirq +
/// steal, total = busy + idle + iowait (guest time is already counted in user and nice).
/// `None` when the line has fewer than eight counters or one is not a whole number.
pub fn parse_stat(line: &str) -> Option<(u64, u64)> {
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    if v.len() < 8 {
        return None;
    }
    let busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    let total = busy + v[3] + v[4];
    Some((busy, total))
}

/// This process's CPU time in jiffies (utime + stime, `/proc/self/stat` fields 14 and 15).
fn self_jiffies() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the command name (field 2) may hold spaces: fields count from after its ')'
    let rest = &t[t.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn others_share(window: Duration) -> Option<f64> {
    let (b0, t0) = cpu_jiffies()?;
    let s0 = self_jiffies()?;
    std::thread::sleep(window);
    let (b1, t1) = cpu_jiffies()?;
    let s1 = self_jiffies()?;
    let total = t1.checked_sub(t0)?;
    if total == 0 {
        return None;
    }
    let others = (b1.saturating_sub(b0)).saturating_sub(s1.saturating_sub(s0));
    Some((others as f64 / total as f64).clamp(0.0, 1.0))
}
