//! What the integration tests share: running the memperf binary (kept away
//! from results saved on this machine, so a run the developer made does not
//! change what a test sees), reading JSON, checking a document against the
//! schema kept in the repository, the machine recordings, and the one way
//! a test that cannot run says so (`skip`, a failure under CI).
#![allow(dead_code)]

mod skip;

#[allow(unused_imports)]
pub use skip::{is_root, skip, strict};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_memperf")
}

/// A command running memperf in the test's own world: `MEMPERF_RESULTS`
/// names a folder that holds nothing, so `stat` and `wss` find no result a
/// developer's `memperf run` saved in ./memperf-results or ~/memperf-results
/// (a test that wants one passes `--machine-results` or sets the variable).
pub fn command() -> Command {
    let mut c = Command::new(exe());
    c.env("MEMPERF_RESULTS", no_saved_results());
    c
}

/// A folder that exists and is empty, for `MEMPERF_RESULTS`.
pub fn no_saved_results() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-saved-results");
    std::fs::create_dir_all(&dir).expect("the test's temporary folder");
    dir
}

/// memperf with `args`, run to its end.
pub fn memperf(args: &[&str]) -> Output {
    command().args(args).output().expect("memperf runs")
}

/// memperf with `args` in the folder `cwd`.
pub fn memperf_in(args: &[&str], cwd: &Path) -> Output {
    command().args(args).current_dir(cwd).output().expect("memperf runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn read_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A file of the repository.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Every way `doc` breaks `schema` (a file of schema/), one line each.
pub fn errors_against(schema: &str, doc: &serde_json::Value) -> Vec<String> {
    let schema = read_json(&repo(&format!("schema/{schema}")));
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path)).collect()
}

/// Every way `doc` breaks schema/results.schema.json, one line each.
pub fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    errors_against("results.schema.json", doc)
}

/// The recorded machines (tests/data/machines/<name>/: a CPUID dump, the
/// /sys and /proc files memperf reads and, for most, a quick suite run on
/// them), sorted by name.
pub fn recordings() -> Vec<PathBuf> {
    let root = repo("tests/data/machines");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/data/machines exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("cpuid.txt").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The quick-suite documents of the recorded machines.
pub fn recorded_suites() -> Vec<PathBuf> {
    recordings().iter().map(|d| d.join("run-quick.json")).filter(|p| p.is_file()).collect()
}

/// A C program of tests/data, built with the system C compiler into `dir`.
pub fn c_program(dir: &Path, name: &str) -> PathBuf {
    let exe = dir.join(name);
    let src = repo(&format!("tests/data/{name}.c"));
    let o = Command::new("cc").args(["-O2", "-o"]).arg(&exe).arg(&src).output().expect("cc runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exe
}

/// Waits (at most 10 s, else panics) until process `pid` has a child whose
/// name is `comm`: the program memperf watches has started, so a signal
/// sent now finds it (a fixed sleep is too short on a loaded host).
pub fn wait_for_child(pid: u32, comm: &str) {
    let start = std::time::Instant::now();
    let children = format!("/proc/{pid}/task/{pid}/children");
    let named = |c: &str| std::fs::read_to_string(format!("/proc/{c}/comm")).is_ok_and(|n| n.trim() == comm);
    while !std::fs::read_to_string(&children).unwrap_or_default().split_whitespace().any(named) {
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "`{comm}` never started under {pid}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The tests of one file that measure take turns through this: two
/// measuring processes at once would take each other's CPUs (2 on the CI
/// machine) and stretch windows their checks rest on.
pub fn turn(lock: &'static std::sync::Mutex<()>) -> std::sync::MutexGuard<'static, ()> {
    lock.lock().unwrap_or_else(|e| e.into_inner())
}
