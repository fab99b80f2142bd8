//! Running an external program: its own process group, standard output and error drained by
//! threads (the last [`TAIL_CHARS`] characters kept), `try_wait` polled, the whole group
//! killed with `SIGKILL` at the time limit and after the program exits (so that no grandchild
//! outlives it).

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

/// Run `argv` in `cwd` with the extra environment `env`, killing its process group after
/// `limit_s` seconds (`None`: no limit). Errors: the program could not be started (not found,
/// not executable).
pub fn run(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    limit_s: Option<f64>,
) -> std::io::Result<Finished> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id() as libc::pid_t;
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let limit = limit_s.map(|s| Duration::from_secs_f64(s.clamp(0.0, 1e9)));
    let mut pause = Duration::from_micros(200);
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ending::Exited(status),
            Ok(None) => {}
            Err(e) => {
                kill_group(pgid);
                let _ = child.wait();
                return Err(e);
            }
        }
        if limit.is_some_and(|l| start.elapsed() >= l) {
            kill_group(pgid);
            let _ = child.wait();
            break Ending::Killed;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    let wall = start.elapsed();
    // grandchildren still holding the pipes (or running on) end with the program
    kill_group(pgid);
    let _ = out.map(JoinHandle::join);
    let stderr_tail = err
        .and_then(|h| h.join().ok())
        .map(|b| tail(&b))
        .unwrap_or_default();
    Ok(Finished {
        ending,
        wall,
        stderr_tail,
    })
}

/// `SIGKILL` to every process of the group `pgid` (errors, e.g. no process left, ignored).
fn kill_group(pgid: libc::pid_t) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Read `r` to its end on a thread, keeping the last `4 * TAIL_CHARS` bytes.
fn drain<R: Read + Send + 'static>(mut r: R) -> JoinHandle<Vec<u8>> {
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
        kept
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, limit: Option<f64>) -> Finished {
        let argv: Vec<String> = ["sh", "-c", script].map(String::from).to_vec();
        run(&argv, &std::env::temp_dir(), &[], limit).unwrap()
    }

    #[test]
    fn exit_codes_and_stderr_tails_are_kept() {
        let f = sh("echo out; echo 'oops' >&2; exit 3", None);
        match f.ending {
            Ending::Exited(s) => assert_eq!(describe(&s), "exit code 3"),
            Ending::Killed => panic!("not killed"),
        }
        assert_eq!(f.stderr_tail, "oops");
        let f = sh("kill -SEGV $$", None);
        match f.ending {
            Ending::Exited(s) => assert_eq!(describe(&s), "killed by signal 11 (SIGSEGV)"),
            Ending::Killed => panic!("not killed"),
        }
    }

    #[test]
    fn the_group_is_killed_at_the_limit_grandchildren_included() {
        let t = Instant::now();
        // the grandchild holds the pipe: without the group kill the drain would wait 30 s
        let f = sh("sleep 30 & sleep 30; echo never", Some(0.2));
        assert!(matches!(f.ending, Ending::Killed));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(f.wall >= Duration::from_millis(200));
    }

    #[test]
    fn long_output_is_cut_to_the_tail() {
        let long = "x".repeat(3 * TAIL_CHARS) + "END";
        let t = tail(long.as_bytes());
        assert!(t.ends_with("END") && t.starts_with("..."));
        assert_eq!(t.chars().count(), TAIL_CHARS + 3);
    }
}
