//! The memory budget of everything cpbench allocates from its input: readers, generators,
//! derived formulations and solves are refused, with the predicted size, before they
//! allocate more than it. The budget is [`DEFAULT_MEMORY_FRACTION`] of the machine's memory
//! unless the front end sets another one ([`set_memory_limit`], from `--memory-limit`).

use crate::error::{ProblemError, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// Fraction of the machine's total memory that is the default memory budget.
pub const DEFAULT_MEMORY_FRACTION: f64 = 0.6;

/// [`DEFAULT_MEMORY_FRACTION`] of `MemTotal` in `/proc/meminfo` (bytes); `None` where that
/// file is missing or unreadable (non-Linux systems).
pub fn default_memory_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let total = mem_total_bytes(&text)?;
    Some((total as f64 * DEFAULT_MEMORY_FRACTION) as u64)
}

/// `MemTotal` of a `/proc/meminfo` text in bytes (the file gives kB), `None` without it.
pub fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut parts = line["MemTotal:".len()..].split_whitespace();
    let value: u64 = parts.next()?.parse().ok()?;
    let unit = match parts.next() {
        Some("kB") | Some("KB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    value.checked_mul(unit)
}

/// The budget set by [`set_memory_limit`] (0: not set).
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Set the process's memory budget in bytes (`--memory-limit`); `None` restores the default.
pub fn set_memory_limit(bytes: Option<u64>) {
    LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The memory budget in bytes and where it comes from (`--memory-limit`, or the default
/// fraction of this machine's memory); `None` where neither is known.
pub fn memory_limit() -> Option<(u64, &'static str)> {
    match LIMIT.load(Ordering::Relaxed) {
        0 => default_memory_limit().map(|b| (b, "60 % of this machine's memory")),
        b => Some((b, "--memory-limit")),
    }
}

/// Bytes in a short human form: `45.2 GB` (powers of 1000), `812 kB`, `17 B`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..=999 => format!("{bytes} B"),
        1_000..=999_999 => format!("{:.0} kB", b / 1e3),
        1_000_000..=999_999_999 => format!("{:.1} MB", b / 1e6),
        1_000_000_000..=999_999_999_999 => format!("{:.1} GB", b / 1e9),
        _ => format!("{:.1} TB", b / 1e12),
    }
}

/// Refuse `what`, predicted to need `bytes`, when that is more than the budget
/// ([`memory_limit`]). `hint` says what to change (`use a smaller k`). Errors:
/// [`ProblemError::OverBudget`].
pub fn check(what: &str, bytes: u64, hint: &str) -> Result<()> {
    match memory_limit() {
        Some((limit, source)) if bytes > limit => Err(ProblemError::OverBudget {
            what: what.to_string(),
            bytes,
            limit,
            message: format!(
                "{what} needs about {} ({bytes} bytes), more than the memory budget of {} \
                 ({source}; --memory-limit changes it): {hint}",
                human_bytes(bytes),
                human_bytes(limit)
            ),
        }),
        _ => Ok(()),
    }
}

/// An empty `Vec` with room for `count` values, reserved with `try_reserve_exact`: where the
/// allocator cannot give it, an error naming `what` and the size instead of an abort (the
/// sizes come from input that was already checked against the bytes it holds, so this is the
/// machine running out, not a forged header). Errors: [`ProblemError::OverBudget`].
pub fn try_with_capacity<T>(count: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(count).map_err(|_| {
        let bytes = (count as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        ProblemError::OverBudget {
            what: what.to_string(),
            bytes,
            limit: 0,
            message: format!(
                "{what}: {} ({bytes} bytes) could not be allocated: this machine is out of \
                 memory",
                human_bytes(bytes)
            ),
        }
    })?;
    Ok(v)
}
