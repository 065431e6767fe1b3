//! The one way a test that cannot run here says so. Under CI (`CI` set to
//! anything but `0`/`false`, or `MEMPERF_TEST_STRICT=1`, which `.ci/run`
//! sets) a skip is a failure: CI installs and sets up everything a test
//! needs, so a skip there is a test that silently stopped testing.
//! Elsewhere the test passes and prints `skipped: REASON (FIX)`.
//!
//! This file is shared by the integration tests (`tests/common`) and the
//! library's unit tests (`src/lib.rs` includes it under `cfg(test)`).

/// Whether skips fail: under CI, or where `MEMPERF_TEST_STRICT` asks.
pub fn strict() -> bool {
    let set = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    set("CI") || set("MEMPERF_TEST_STRICT")
}

/// Says why the calling test cannot run here and what to install or do
/// (`fix`); panics instead under CI. The caller returns right after.
#[track_caller]
pub fn skip(reason: &str, fix: &str) {
    let line = format!("skipped: {reason} ({fix})");
    if strict() {
        panic!("{line}: a skip fails under CI (CI or MEMPERF_TEST_STRICT is set)");
    }
    eprintln!("{line}");
}

/// Whether this process runs as root (the hugetlb pools, another user's
/// process, the accessed bits of any process).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0")))
        .unwrap_or(false)
}
