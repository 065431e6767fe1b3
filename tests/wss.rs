//! `memperf wss` on a program with a known pattern (tests/data/wss_phases.c):
//! touch 2 GiB, loop over 256 MiB, then over a different 512 MiB.

use std::path::{Path, PathBuf};
use std::process::Command;

fn memperf(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_memperf")).args(args).output().expect("memperf runs")
}

/// The test program, built with the system C compiler.
fn phases_program(dir: &Path) -> PathBuf {
    let exe = dir.join("wss_phases");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wss_phases.c");
    let o = Command::new("cc").args(["-O2", "-o"]).arg(&exe).arg(&src).output().expect("cc runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exe
}

/// Hot sets within ±10% of 256 MiB and 512 MiB, the change of phase
/// within two intervals of when the program switched, both in its own
/// anonymous mapping of 2 GiB, and the verdict on the larger one.
#[test]
fn a_known_pattern_gives_its_hot_sets_phases_and_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let exe = phases_program(dir.path());
    let json = dir.path().join("wss.json");
    let o = memperf(&[
        "wss",
        "-I",
        "200",
        "--json",
        json.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "2048",
        "256",
        "1.6",
        "512",
        "1.6",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    if err.contains("cannot clear the accessed bits") {
        eprintln!("skipped: {err}");
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{err}");
    let switch: f64 = err
        .lines()
        .find_map(|l| l.strip_prefix("wss_phases: second phase from "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("the program's switch time: {err}"));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/results.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let out = &doc["experiments"][0]["outcome"];
    let phases = out["phases"].as_array().unwrap();
    let mib = |p: &serde_json::Value| p["hot_bytes"].as_f64().unwrap() / 1048576.0;
    // The touching of the 2 GiB comes first and may read anything per
    // interval: the two loops are a phase at 256 MiB followed by one at 512.
    let near = |p: &serde_json::Value, target: f64| (mib(p) / target - 1.0).abs() <= 0.10;
    let (first, second) = phases
        .windows(2)
        .rev()
        .find(|w| near(&w[0], 256.0) && near(&w[1], 512.0))
        .map(|w| (&w[0], &w[1]))
        .unwrap_or_else(|| panic!("no phase at 256 MiB ± 10% followed by one at 512 MiB ± 10%: {phases:#?}"));
    let from = second["from_s"].as_f64().unwrap();
    assert!((from - switch).abs() <= 2.0 * 0.2 + 0.05, "phase 2 from {from} s, the program switched at {switch} s");
    for p in [first, second] {
        let m = &out["mappings"][p["top_mapping"].as_u64().unwrap() as usize];
        assert_eq!(m["kind"], "anonymous", "{m}");
        let size = m["end"].as_u64().unwrap() - m["start"].as_u64().unwrap();
        assert!(size >= 2 << 30, "the program's 2 GiB mapping: {m}");
        assert!(p["top_share"].as_f64().unwrap() > 0.95, "{p}");
    }
    let verdict = out["verdict"][0].as_str().unwrap();
    assert!(verdict.starts_with("Hot set 512"), "{verdict}");
    assert!(verdict.contains("memperf hugepages --") || verdict.contains("`memperf tlb`"), "{verdict}");
}

/// A program that ends before the first interval: its peak RSS and no hot
/// set, said as such.
#[test]
fn a_program_that_ends_at_once_has_no_hot_set() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("wss.json");
    let o = memperf(&["wss", "--json", json.to_str().unwrap(), "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let out = &doc["experiments"][0]["outcome"];
    assert_eq!(out["intervals"].as_array().unwrap().len(), 0);
    assert!(out["verdict"][0].as_str().unwrap().starts_with("No hot set: the program ended before the first interval"));
}

/// Bad input: one line and exit 2; a failing program's status is memperf's.
#[test]
fn bad_input_is_one_line_and_the_program_status_is_kept() {
    for (args, says) in [
        (&["wss", "-I", "0", "--", "true"][..], "at least 10"),
        (&["wss", "--", "/nonexistent/program"][..], "/nonexistent/program"),
        (&["wss", "--pid", "999999999"][..], "no such process"),
        (&["wss", "--pid", "1", "--", "true"][..], "not both"),
        (&["wss"][..], "no command to watch"),
    ] {
        let o = memperf(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let o = memperf(&["wss", "-I", "10", "--", "sh", "-c", "exit 7"]);
    assert_eq!(o.status.code(), Some(7), "{}", String::from_utf8_lossy(&o.stderr));
}
