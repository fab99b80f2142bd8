//! Running an external program, contained: it starts in its own session and process group
//! (`setsid(2)`), with the environment variable [`TOKEN_VAR`] set to a token unique to this
//! run; standard output and error are drained by threads (the last [`TAIL_CHARS`] characters
//! kept); `try_wait` is polled. At the time limit, and again when the program has exited,
//! every process that belongs to the run is killed with `SIGKILL`: the members of the
//! program's session and process group, and every process of this user whose environment
//! holds the token, which finds descendants that started a session of their own (`setsid`) or
//! were re-parented to init. The kill is repeated until a scan of `/proc` finds none left.
//! The pipes are then read for at most [`PIPE_GRACE`] more: a descendant that removed the
//! token from its environment and left the session is the only way out, and it cannot hold
//! the run beyond that grace.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The environment variable that marks every process of one external run (value:
/// `<cpbench pid>-<run counter>-<nanoseconds>`); inherited by the program's descendants.
pub const TOKEN_VAR: &str = "CPBENCH_EXTERNAL_RUN";

/// How long the output pipes are still read after the program and its descendants were
/// killed (a descendant that escaped the kill may hold them open).
pub const PIPE_GRACE: Duration = Duration::from_secs(2);

/// Characters kept of the end of the program's standard error (and output) for messages.
pub const TAIL_CHARS: usize = 2000;

/// How a program ended.
#[derive(Debug)]
pub enum Ending {
    /// It exited by itself (code or signal).
    Exited(ExitStatus),
    /// It ran past the time limit and its process group was killed.
    Killed,
}

/// A finished program.
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub ending: Ending,
    /// Wall time from spawn to exit (or to the kill).
    pub wall: Duration,
    /// The last [`TAIL_CHARS`] characters of its standard error.
    pub stderr_tail: String,
}

/// Run `argv` in `cwd` with the extra environment `env`, contained as the module says, and
/// killed with everything it started after `limit_s` seconds (`None`: no limit). Errors: the
/// program could not be started (not found, not executable).
pub fn run(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    limit_s: Option<f64>,
) -> std::io::Result<Finished> {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let token = format!(
        "{}-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env(TOKEN_VAR, &token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent; it makes the
    // child the leader of a new session and of a new process group (pid = sid = pgid).
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let leader = child.id() as libc::pid_t;
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let limit = limit_s.map(|s| Duration::from_secs_f64(s.clamp(0.0, 1e9)));
    let mut pause = Duration::from_micros(200);
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ending::Exited(status),
            Ok(None) => {}
            Err(e) => {
                kill_run(leader, &token);
                let _ = child.wait();
                return Err(e);
            }
        }
        if limit.is_some_and(|l| start.elapsed() >= l) {
            kill_run(leader, &token);
            let _ = child.wait();
            break Ending::Killed;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    let wall = start.elapsed();
    // descendants still holding the pipes (or running on) end with the program
    kill_run(leader, &token);
    let deadline = Instant::now() + PIPE_GRACE;
    let _ = out.map(|rx| rx.recv_timeout(deadline.saturating_duration_since(Instant::now())));
    let stderr_tail = match err {
        None => String::new(),
        Some(rx) => match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(b) => tail(&b),
            Err(_) => format!(
                "(standard error still held open {} s after the program and its descendants \
                 were killed: a descendant left the session and removed {TOKEN_VAR} from its \
                 environment; its output is not read)",
                PIPE_GRACE.as_secs()
            ),
        },
    };
    Ok(Finished {
        ending,
        wall,
        stderr_tail,
    })
}

/// `SIGKILL` to every live process of the run whose session leader (and process group
/// leader) is `leader` or whose environment holds `token`, repeated until a scan finds none
/// (a process may fork between a scan and its kill; at most 100 rounds). Processes of other
/// users are not readable and not touched; errors (a process already gone) are ignored.
pub fn kill_run(leader: libc::pid_t, token: &str) {
    if leader <= 0 {
        return;
    }
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    unsafe {
        libc::kill(-leader, libc::SIGKILL);
    }
    let needle = format!("{TOKEN_VAR}={token}");
    for _ in 0..100 {
        let found = run_members(leader, needle.as_bytes());
        if found.is_empty() {
            return;
        }
        for pid in found {
            // SAFETY: as above, for one process.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The live (not zombie) processes in `/proc` whose session or process group is `leader`'s or
/// whose environment holds `needle` (`VAR=value`). Empty where `/proc` cannot be read.
fn run_members(leader: libc::pid_t, needle: &[u8]) -> Vec<libc::pid_t> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id() as libc::pid_t;
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().take(4).collect();
        if fields.len() < 4 || fields[0] == "Z" || fields[0] == "X" {
            continue;
        }
        let in_group = fields[2].parse() == Ok(leader) || fields[3].parse() == Ok(leader);
        if in_group
            || std::fs::read(entry.path().join("environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == needle))
        {
            found.push(pid);
        }
    }
    found
}

/// Read `r` to its end on a thread, keeping the last `4 * TAIL_CHARS` bytes, sent on the
/// returned channel when the pipe closes (the thread is left behind if it never does).
fn drain<R: Read + Send + 'static>(mut r: R) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let keep = 4 * TAIL_CHARS;
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => {
                    kept.extend_from_slice(&buf[..k]);
                    if kept.len() > 2 * keep {
                        kept.drain(..kept.len() - keep);
                    }
                }
            }
        }
        if kept.len() > keep {
            kept.drain(..kept.len() - keep);
        }
        let _ = tx.send(kept);
    });
    rx
}

/// The last [`TAIL_CHARS`] characters of `bytes` (lossy UTF-8), trimmed.
pub fn tail(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim_end();
    let count = s.chars().count();
    if count <= TAIL_CHARS {
        return s.to_string();
    }
    let skip = s
        .char_indices()
        .nth(count - TAIL_CHARS)
        .map_or(0, |(i, _)| i);
    format!("...{}", &s[skip..])
}

/// A sentence for an exit status: `exit code 3`, `killed by signal 11 (SIGSEGV)`.
pub fn describe(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    match status.signal() {
        Some(sig) => {
            let name = match sig {
                libc::SIGKILL => " (SIGKILL)",
                libc::SIGSEGV => " (SIGSEGV)",
                libc::SIGABRT => " (SIGABRT)",
                libc::SIGTERM => " (SIGTERM)",
                libc::SIGBUS => " (SIGBUS)",
                libc::SIGFPE => " (SIGFPE)",
                libc::SIGILL => " (SIGILL)",
                libc::SIGINT => " (SIGINT)",
                _ => "",
            };
            format!("killed by signal {sig}{name}")
        }
        None => format!("ended with status {status}"),
    }
}
