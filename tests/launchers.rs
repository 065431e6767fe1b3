//! memperf under real launchers: a one-host Slurm and Open MPI, started by
//! `.ci/run` (`.ci/launchers.sh`). Two ranks each write their own document
//! into one `-o DIR`, with distinct ranks, the launcher named, each rank's
//! threads inside the CPUs its launcher gave it, and the host shared by
//! both noted. Where no Slurm or Open MPI runs, each test skips, saying so.

mod common;

use common::{read_json, schema_errors};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const RUN: &[&str] =
    &["bandwidth", "--quiet", "--kernel", "simd", "--threads", "all", "--size", "8MiB", "--repetitions", "2"];

fn works(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd).args(args).output().is_ok_and(|o| o.status.success())
}

/// The documents under `dir`, one per folder.
fn documents(dir: &Path) -> Vec<Value> {
    let mut docs: Vec<Value> =
        std::fs::read_dir(dir).unwrap().map(|e| read_json(&e.unwrap().path().join("results.json"))).collect();
    docs.sort_by_key(|d| d["origin"]["rank"].as_u64());
    docs
}

/// Runs `launcher LAUNCH… memperf RUN… -o DIR` with `env`, checks it
/// succeeded and the two ranks' documents, and returns them.
fn two_ranks(launcher: &str, launch: &[&str], env: &[(&str, &str)], name: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(launcher)
        .args(launch)
        .arg(common::exe())
        .args(RUN)
        .args(["-o", dir.path().to_str().unwrap()])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let docs = documents(dir.path());
    check_two_ranks(&docs, name);
    docs
}

fn check_two_ranks(docs: &[Value], launcher: &str) {
    assert_eq!(docs.len(), 2, "one folder per rank");
    let mut cpus = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        assert!(schema_errors(d).is_empty(), "{:#?}", schema_errors(d));
        assert_eq!(d["origin"]["rank"], i as u64);
        assert_eq!(d["origin"]["launcher"], launcher);
        assert_eq!(d["experiments"][0]["valid"], true);
        let placement = &d["experiments"][0]["outcome"]["placement"];
        for team in placement.as_array().unwrap() {
            assert_eq!(team["migrated_samples"], 0, "a thread left its CPU");
            cpus.push(team["cpus"].clone());
        }
        let shared = d["warnings"].as_array().unwrap().iter().any(|w| w["code"] == "ranks-share-host");
        assert!(shared, "two ranks on one host are noted: {}", d["warnings"]);
    }
    eprintln!("{launcher}: ranks ran on CPUs {cpus:?}");
}

#[test]
fn two_slurm_ranks_write_two_documents() {
    if !works("sinfo", &["-h"]) {
        return common::skip("no Slurm is running here", ".ci/run starts one with .ci/launchers.sh");
    }
    let docs = two_ranks("srun", &["-n", "2"], &[], "slurm");
    assert!(docs[0]["origin"]["job_id"].is_string(), "Slurm's job id is kept");
    // Slurm gave each task one CPU: each rank's `all` is that one CPU, and
    // they differ.
    let one = |d: &Value| d["experiments"][0]["outcome"]["placement"][0]["cpus"].clone();
    // (With one CPU, both tasks share it.)
    if std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) >= 2 {
        assert_eq!(one(&docs[0]).as_array().unwrap().len(), 1, "{}", one(&docs[0]));
        assert_ne!(one(&docs[0]), one(&docs[1]), "two tasks, two CPUs");
    }
}

#[test]
fn two_open_mpi_ranks_write_two_documents() {
    if !works("mpirun", &["--version"]) {
        return common::skip("Open MPI is not installed here", "apt-get install openmpi-bin; .ci/run installs it");
    }
    let root = [("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")];
    two_ranks("mpirun", &["-n", "2", "--oversubscribe"], &root, "openmpi");
}
