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
