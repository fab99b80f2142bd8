//! Peak resident memory of a run, from the operating system.
//!
//! On Linux the kernel keeps the process's high-water mark of resident memory (`VmHWM` in
//! `/proc/self/status`), and writing `5` to `/proc/self/clear_refs` resets it to the current
//! resident size (Linux >= 4.0, `proc(5)`). [`PeakRss::start`] resets it before a run and
//! [`PeakRss::read`] reads it afterwards: the peak of the process *during* the run, which
//! includes everything resident when the run started (the binary, the instance, other
//! instances still loaded). Where the reset is refused, the value is the process's peak since
//! it started (`VmHWM` without reset, the number `getrusage`'s `ru_maxrss` gives); elsewhere
//! on Unix it is `ru_maxrss` (also since the process started). [`PeakRss::method`] says which.
//!
//! The mark is per process: when runs execute concurrently (`jobs > 1`) the value is the
//! peak of the whole process, whose other runs share it, and the harness does not reset it
//! between runs.

use serde::{Deserialize, Serialize};

/// How a peak was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeakMethod {
    /// `VmHWM` after a reset through `/proc/self/clear_refs`: the peak during the run.
    VmhwmReset,
    /// `VmHWM` without a reset: the process's peak since it started.
    VmhwmProcess,
    /// `getrusage(RUSAGE_SELF).ru_maxrss`: the process's peak since it started.
    Getrusage,
}

impl PeakMethod {
    /// `vmhwm-reset`, `vmhwm-process` or `getrusage`.
    pub fn as_str(self) -> &'static str {
        match self {
            PeakMethod::VmhwmReset => "vmhwm-reset",
            PeakMethod::VmhwmProcess => "vmhwm-process",
            PeakMethod::Getrusage => "getrusage",
        }
    }
}

/// A peak-memory measurement in progress: [`PeakRss::start`] before the run, [`PeakRss::read`]
/// after it.
#[derive(Clone, Copy, Debug)]
pub struct PeakRss {
    reset: bool,
}

impl PeakRss {
    /// Start a measurement; with `reset` (one run at a time) the high-water mark is reset
    /// first where the system allows it.
    pub fn start(reset: bool) -> Self {
        Self {
            reset: reset && reset_peak(),
        }
    }

    /// How [`Self::read`] measures (`None`: not at all on this system).
    pub fn method(&self) -> Option<PeakMethod> {
        if vm_hwm().is_some() {
            Some(if self.reset {
                PeakMethod::VmhwmReset
            } else {
                PeakMethod::VmhwmProcess
            })
        } else if rusage_max_rss().is_some() {
            Some(PeakMethod::Getrusage)
        } else {
            None
        }
    }

    /// The peak resident memory in bytes since [`Self::start`] (or since the process started,
    /// see [`Self::method`]); `None` where the system tells nothing.
    pub fn read(&self) -> Option<u64> {
        vm_hwm().or_else(rusage_max_rss)
    }
}

/// Reset the process's high-water mark of resident memory (`echo 5 > /proc/self/clear_refs`).
/// Returns whether it was reset (false off Linux, or where the write is refused).
pub fn reset_peak() -> bool {
    cfg!(target_os = "linux") && std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// A `kB` field of `/proc/self/status` in bytes.
fn status_kb(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line[field.len()..]
        .trim_start_matches(':')
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// `VmHWM` (peak resident memory) in bytes, Linux only.
pub fn vm_hwm() -> Option<u64> {
    status_kb("VmHWM")
}

/// `VmRSS` (current resident memory) in bytes, Linux only.
pub fn vm_rss() -> Option<u64> {
    status_kb("VmRSS")
}

/// `getrusage(RUSAGE_SELF).ru_maxrss` in bytes (kilobytes on Linux and the BSDs, bytes on
/// macOS); `None` off Unix or when the call fails.
pub fn rusage_max_rss() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: `getrusage` writes a `rusage` into the zeroed struct we own; plain data.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        if rc != 0 || ru.ru_maxrss <= 0 {
            return None;
        }
        let v = ru.ru_maxrss as u64;
        Some(if cfg!(target_os = "macos") {
            v
        } else {
            v * 1024
        })
    }
    #[cfg(not(unix))]
    {
        None
    }
}
