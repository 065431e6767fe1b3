//! What the library's unit tests share (built only for them): the one way
//! a test that cannot run here says so (`skip`, a failure under CI; the
//! same file the integration tests use), and the recorded machines, so a
//! test of what memperf concludes about "this machine" also runs on every
//! machine recorded in tests/data/machines.

#[path = "../tests/common/skip.rs"]
mod skip;

pub use skip::{is_root, skip};

use std::path::{Path, PathBuf};

/// The recorded machines' folders, sorted by name.
pub fn recording_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/data/machines exists")
        .map(|e| e.expect("a readable folder entry").path())
        .filter(|p| p.join("cpuid.txt").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Each recorded machine's quick suite, read through the model, with the
/// recording's name.
pub fn recorded_suites() -> Vec<(String, crate::model::Document)> {
    recording_dirs()
        .into_iter()
        .filter(|d| d.join("run-quick.json").is_file())
        .map(|d| {
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            let doc = crate::model::journal::load(&d.join("run-quick.json")).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, doc)
        })
        .collect()
}

/// A checked-in file the code generates (`rel`, from the crate's root) is
/// what it makes now; with MEMPERF_WRITE_SCHEMA=1 it is written anew first.
pub fn assert_generated_file_is_current(rel: &str, made: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    if std::env::var_os("MEMPERF_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, made).unwrap();
    }
    let held = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        held == made,
        "{rel} is not what the model makes: run MEMPERF_WRITE_SCHEMA=1 cargo test --lib schema, and commit it"
    );
}

/// The block of a checked-in document (`rel`) between `<!-- generated:
/// WHAT -->` and `<!-- end: WHAT -->` is `made`; with
/// MEMPERF_WRITE_SCHEMA=1 it is written anew first.
pub fn assert_generated_block_is_current(rel: &str, what: &str, made: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let (open, close) = (format!("<!-- generated: {what} -->\n"), format!("<!-- end: {what} -->"));
    let start = text.find(&open).unwrap_or_else(|| panic!("{rel} has no {open}")) + open.len();
    let end = start + text[start..].find(&close).unwrap_or_else(|| panic!("{rel} has no {close}"));
    if std::env::var_os("MEMPERF_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, format!("{}{made}{}", &text[..start], &text[end..])).unwrap();
    }
    let held = std::fs::read_to_string(&path).unwrap();
    let block = held.get(start..).and_then(|rest| rest.find(&close).map(|e| &rest[..e])).unwrap_or_default();
    assert!(
        block == made,
        "{rel}'s {what} block is not what the code makes: run MEMPERF_WRITE_SCHEMA=1 cargo test --lib schema, and commit it"
    );
}

/// A 2-CPU machine with nothing measured, `memory` of it, and one claimed
/// L3 of `size` shared by both CPUs (`implausible`: why the claim cannot
/// be; empty for a plausible one): what sizes come from claims alone.
pub fn claiming_l3(memory: crate::units::Bytes, size: u64, implausible: Vec<String>) -> crate::machine::Fingerprint {
    let mut m = crate::machine::collect();
    m.measured_levels = None;
    m.memory_total_bytes = Some(memory);
    m.memory_available_bytes = Some(memory);
    m.cpu.logical_cpus = 2;
    m.caches = vec![crate::machine::Cache {
        level: 3,
        kind: "Unified".into(),
        size_bytes: crate::units::Bytes(size),
        line_bytes: 64,
        ways: Some(16),
        sets: None,
        shared_by_cpus: 2,
        cpuid_size_bytes: None,
        implausible,
    }];
    m
}

/// A host reference's point whose memory holds still (40 GB/s, 140 ns) and
/// whose call chain and system call read `call_ns` and `syscall_ns`.
pub fn core_point(after: usize, call_ns: f64, syscall_ns: f64) -> memperf_model::timing::drift::DriftPoint {
    memperf_model::timing::drift::DriftPoint {
        after_experiments: after,
        read_bytes_per_s: vec![40e9],
        chase_ns: vec![140.0],
        all_read_bytes_per_s: Vec::new(),
        call_ns: vec![call_ns],
        syscall_ns: vec![syscall_ns],
        chase_4k_ns: Vec::new(),
        chase_4k_pages_per_block: None,
    }
}
