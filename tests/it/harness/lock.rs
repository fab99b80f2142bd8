//! The folder lock (`cpbench_harness::lock`): refused while held, released on drop, a stale
//! lock of this host taken over.

use cpbench_harness::lock::{FolderLock, LockHolder, LOCK_FILE};
use cpbench_harness::HarnessError;

#[test]
fn second_lock_is_refused_and_released_on_drop() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("out");
    let a = FolderLock::acquire(&dir).unwrap();
    let text = std::fs::read_to_string(a.path()).unwrap();
    assert!(
        text.starts_with(&format!("pid={}\n", std::process::id())),
        "{text}"
    );
    let e = FolderLock::acquire(&dir).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, HarnessError::Locked { .. }), "{msg}");
    assert!(
        msg.contains(&format!("pid {}", std::process::id())),
        "{msg}"
    );
    assert!(msg.contains(&dir.display().to_string()), "{msg}");
    assert!(msg.contains(LOCK_FILE), "{msg}");
    drop(a);
    assert!(!dir.join(LOCK_FILE).exists());
    let b = FolderLock::acquire(&dir).unwrap();
    drop(b);
}

#[test]
fn stale_lock_is_taken_over_on_linux() {
    let d = tempfile::tempdir().unwrap();
    // a pid above the kernel's maximum (4194304) never runs
    let stale = LockHolder {
        pid: Some(999_999_999),
        host: cpbench_harness::manifest::host_name(),
        started: "2000-01-01T00:00:00Z".into(),
        command: "cpbench run".into(),
    };
    std::fs::write(d.path().join(LOCK_FILE), stale.to_text()).unwrap();
    let r = FolderLock::acquire(d.path());
    if cfg!(target_os = "linux") {
        let l = r.unwrap();
        let text = std::fs::read_to_string(l.path()).unwrap();
        assert!(
            text.contains(&format!("pid={}", std::process::id())),
            "{text}"
        );
    } else {
        assert!(r.is_err());
    }
    // a lock of another host is never taken over
    let other = LockHolder {
        host: "some-other-host".into(),
        ..stale
    };
    std::fs::write(d.path().join(LOCK_FILE), other.to_text()).unwrap();
    let e = FolderLock::acquire(d.path()).unwrap_err();
    assert!(e.to_string().contains("some-other-host"), "{e}");
}
