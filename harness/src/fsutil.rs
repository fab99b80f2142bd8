//! Atomic file writes: write to a temporary file in the same directory, flush, then rename, so
//! that a reader never sees a half-written file and a killed run loses nothing already written.

use crate::error::{HarnessError, Result};
use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically (creating parent directories).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| HarnessError::io(dir, e))?;
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp).map_err(|e| HarnessError::io(&tmp, e))?;
    f.write_all(bytes).map_err(|e| HarnessError::io(&tmp, e))?;
    f.sync_all().map_err(|e| HarnessError::io(&tmp, e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| HarnessError::io(path, e))
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
