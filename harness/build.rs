//! Records the git revision the harness was built from (`CPBENCH_BUILD_GIT_REV`), the fallback
//! of `manifest::git_revision` when `cpbench` runs outside a checkout.

fn main() {
    println!("cargo:rerun-if-changed=../.git/HEAD");
    println!("cargo:rerun-if-changed=../.git/refs/heads");
    let rev = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=CPBENCH_BUILD_GIT_REV={rev}");
}
