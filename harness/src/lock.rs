//! Exclusive lock on an output folder, so that two processes never write the same results.
//!
//! [`FolderLock::acquire`] creates `DIR/.cpbench.lock` atomically (`create_new`: it fails when
//! the file exists) and writes into it the holder's pid, host name, start time and command
//! (`pid=...`, `host=...`, `started=...`, `command=...`, one per line). The file is removed when
//! the [`FolderLock`] is dropped: on success, on an error returned through `?`, and on a panic
//! that unwinds. A process killed outright (Ctrl-C, `kill -9`, a crash) leaves the file behind:
//!
//! - **Stale locks.** On Linux a lock whose `pid` no longer runs (no `/proc/<pid>`) on this host
//!   is stale: it is taken over with a warning on stderr. On other platforms, and for a lock
//!   written on another host (a network file system), liveness cannot be checked without
//!   platform calls: the lock is treated as held, and the error says how to remove it by hand.
//! - **Refusal.** A folder locked by a live process gives [`HarnessError::Locked`], which names
//!   the folder, the holder and the lock file to delete if the holder is known to be gone.

use crate::error::{HarnessError, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Name of the lock file inside the locked folder.
pub const LOCK_FILE: &str = ".cpbench.lock";

/// An exclusive lock on a folder, held until dropped (which removes the lock file).
#[derive(Debug)]
pub struct FolderLock {
    path: PathBuf,
}

/// What a lock file says about its holder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockHolder {
    /// Process id.
    pub pid: Option<u32>,
    /// Host name (`/etc/hostname`).
    pub host: String,
    /// Start time, RFC 3339 UTC.
    pub started: String,
    /// The command line of the holder.
    pub command: String,
}

impl LockHolder {
    fn ours() -> Self {
        LockHolder {
            pid: Some(std::process::id()),
            host: crate::manifest::host_name(),
            started: crate::manifest::now_utc().1,
            command: std::env::args().collect::<Vec<_>>().join(" "),
        }
    }

    /// The lock file's text: four `key=value` lines, `pid`, `host`, `started` and `command`,
    /// each ending in a newline (an unknown pid as an empty value). [`FolderLock::acquire`]
    /// writes it and reads it back to name the holder of a taken lock.
    pub fn to_text(&self) -> String {
        format!(
            "pid={}\nhost={}\nstarted={}\ncommand={}\n",
            self.pid.map(|p| p.to_string()).unwrap_or_default(),
            self.host,
            self.started,
            self.command
        )
    }

    fn parse(text: &str) -> Self {
        let mut h = LockHolder::default();
        for line in text.lines() {
            match line.split_once('=') {
                Some(("pid", v)) => h.pid = v.trim().parse().ok(),
                Some(("host", v)) => h.host = v.trim().to_string(),
                Some(("started", v)) => h.started = v.trim().to_string(),
                Some(("command", v)) => h.command = v.trim().to_string(),
                _ => {}
            }
        }
        h
    }

    /// `pid 123 on host, started 2026-01-01T00:00:00Z (cpbench run ...)`.
    pub fn describe(&self) -> String {
        let mut s = match self.pid {
            Some(p) => format!("pid {p}"),
            None => "an unknown process".to_string(),
        };
        if !self.host.is_empty() {
            s.push_str(&format!(" on {}", self.host));
        }
        if !self.started.is_empty() {
            s.push_str(&format!(", started {}", self.started));
        }
        if !self.command.is_empty() {
            s.push_str(&format!(" ({})", self.command));
        }
        s
    }
}

/// Whether the holder is known to be gone: on Linux, a pid on this host without `/proc/<pid>`.
/// `false` (assume alive) wherever that cannot be decided.
fn holder_is_gone(h: &LockHolder) -> bool {
    if !cfg!(target_os = "linux") || h.host != crate::manifest::host_name() {
        return false;
    }
    match h.pid {
        Some(pid) => {
            Path::new("/proc/self").exists() && !Path::new(&format!("/proc/{pid}")).exists()
        }
        None => false,
    }
}

impl FolderLock {
    /// Lock `dir` (created if missing). Errors: [`HarnessError::Locked`] when another live
    /// process holds the lock, [`HarnessError::Io`] when the folder or the lock file cannot be
    /// created. A stale lock (see the module documentation) is taken over with a warning.
    pub fn acquire(dir: &Path) -> Result<FolderLock> {
        std::fs::create_dir_all(dir).map_err(|e| HarnessError::io(dir, e))?;
        let path = dir.join(LOCK_FILE);
        let ours = LockHolder::ours();
        // two tries: the second after removing a stale lock
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    let lock = FolderLock { path: path.clone() };
                    f.write_all(ours.to_text().as_bytes())
                        .map_err(|e| HarnessError::io(&path, e))?;
                    return Ok(lock);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder =
                        LockHolder::parse(&std::fs::read_to_string(&path).unwrap_or_default());
                    if !holder_is_gone(&holder) {
                        return Err(HarnessError::Locked {
                            dir: dir.to_path_buf(),
                            holder: holder.describe(),
                            lock: path,
                        });
                    }
                    eprintln!(
                        "warning: {}: taking over the stale lock of {}, which no longer runs",
                        path.display(),
                        holder.describe()
                    );
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(HarnessError::io(&path, e)),
                    }
                }
                Err(e) => return Err(HarnessError::io(&path, e)),
            }
        }
        let holder = LockHolder::parse(&std::fs::read_to_string(&path).unwrap_or_default());
        Err(HarnessError::Locked {
            dir: dir.to_path_buf(),
            holder: holder.describe(),
            lock: path,
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
