//! `manifest.json`: what produced a results folder (revision, machine, versions, settings,
//! instances with their hashes and provenance, seeds).

use cpbench_problems::Instance;
use serde_json::{json, Value};

/// Git revision of the working directory (`git rev-parse HEAD`, with `-dirty` when there are
/// uncommitted changes); outside a checkout, the revision the binary was built from with the
/// suffix ` (build)`, or `unknown`.
pub fn git_revision() -> String {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(rev) if !rev.is_empty() => {
            let dirty = run(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{rev}-dirty")
            } else {
                rev
            }
        }
        _ => format!("{} (build)", env!("CPBENCH_BUILD_GIT_REV")),
    }
}

/// Machine description: OS, architecture, logical CPUs, host name, rayon threads.
pub fn machine() -> Value {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    json!({
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "logical_cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "rayon_threads": rayon::current_num_threads(),
        "hostname": host,
    })
}

/// Current UTC time as `(YYYYmmdd-HHMMSS, RFC 3339)`.
pub fn now_utc() -> (String, String) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // civil-from-days (Howard Hinnant's algorithm)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        format!("{y:04}{m:02}{d:02}-{h:02}{mi:02}{s:02}"),
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z"),
    )
}

/// Manifest entry of an instance.
pub fn instance_entry(inst: &Instance) -> Value {
    json!({
        "name": inst.name(),
        "class": inst.class().as_str(),
        "n": inst.n(),
        "nnz": inst.n_mat().nnz(),
        "hash": inst.hash(),
        "provenance": inst.provenance(),
    })
}
