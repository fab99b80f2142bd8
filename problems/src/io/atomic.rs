//! Atomic file writes: write to a temporary sibling, flush to disk, then rename, so that a reader
//! never sees a half-written file and a killed process loses nothing already written.

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically, creating parent directories. The temporary file is
/// `.<name>.tmp<pid>` in the same directory and is removed if the write fails.
/// Errors: the file-system error (the caller names `path`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}
