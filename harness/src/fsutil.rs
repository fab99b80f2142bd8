//! Atomic file writes: write to a temporary file in the same directory, flush, then rename, so
//! that a reader never sees a half-written file and a killed run loses nothing already written.

use crate::error::{HarnessError, Result};
use std::path::Path;

/// Write `bytes` to `path` atomically (creating parent directories);
/// [`cpbench_problems::io::write_atomic`] with the harness's error type naming `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    cpbench_problems::io::write_atomic(path, bytes).map_err(|e| HarnessError::io(path, e))
}

/// Write `value` as pretty-printed JSON to `path`, atomically ([`write_atomic`]).
pub fn write_json_atomic(path: &Path, value: &serde_json::Value) -> Result<()> {
    write_atomic(
        path,
        serde_json::to_string_pretty(value)
            .unwrap_or_default()
            .as_bytes(),
    )
}

/// A solver variant's label as a file name component: like [`safe_file_name`] but keeping
/// `@`, `=` and `+` (legal on Linux, macOS and Windows), so that `pgs@omega=0.8` stays
/// readable; a preset's `:` still becomes `_` (`mprgp:permon1` -> `mprgp_permon1`).
pub fn solver_file_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '=' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Make a string safe as a file name component (keeps `[A-Za-z0-9._-]`, maps the rest to `_`).
pub fn safe_file_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
