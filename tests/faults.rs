//! Fault scenarios against the real binary: signals at several moments,
//! kill -9 during a reserving run, two reserving runs at once. Whatever
//! happens, the hugetlb pools end at the value they started at (after
//! kill -9: after `memperf cleanup`), and a signalled run still writes a
//! valid document. These need root; without it they say so and pass.

mod common;

use common::command;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The pool tests of this file take turns: each reads the pool's value.
static TURN: Mutex<()> = Mutex::new(());

const NR: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";

fn nr() -> u64 {
    std::fs::read_to_string(NR).unwrap().trim().parse().unwrap()
}

fn root() -> bool {
    let ok = common::is_root() && std::path::Path::new(NR).exists();
    if !ok {
        common::skip(
            "needs root and a 2 MiB hugetlb pool",
            "run the tests as root on a kernel with hugetlbfs, as CI does",
        );
    }
    ok
}

/// A reserving latency run long enough to be caught in the middle.
fn reserving_run(json: &std::path::Path) -> Child {
    command()
        .args(["latency", "--quiet", "--pages", "4k,2m", "--sizes", "4KiB:64MiB", "--reserve-hugepages"])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the run has reserved its pages (the pool grew), at most 20 s.
fn wait_reserved(before: u64) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        if nr() > before {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: sending a signal to our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn sigterm_and_sighup_finish_the_sample_write_the_document_and_give_the_pages_back() {
    if !root() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    for (sig, after_ms) in [(libc::SIGTERM, 0u64), (libc::SIGHUP, 300), (libc::SIGINT, 1000)] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let before = nr();
        let mut child = reserving_run(&json);
        if !wait_reserved(before) {
            let _ = child.kill();
            let _ = child.wait();
            return common::skip(
                "the pool could not grow (memory too fragmented)",
                "free memory, or run the tests early after boot",
            );
        }
        std::thread::sleep(Duration::from_millis(after_ms));
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "signal {sig}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(nr(), before, "signal {sig}: pages given back");
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(doc["experiments"][0]["status"], "interrupted", "signal {sig}");
    }
}

#[test]
fn kill_9_leaves_a_record_that_cleanup_gives_back() {
    if !root() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let before = nr();
    let mut child = reserving_run(&dir.path().join("r.json"));
    if !wait_reserved(before) {
        let _ = child.kill();
        let _ = child.wait();
        return common::skip(
            "the pool could not grow (memory too fragmented)",
            "free memory, or run the tests early after boot",
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(nr() > before, "SIGKILL runs no destructor: the pages are still out");
    let o = command().arg("cleanup").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("pid {}", child.id())));
    assert_eq!(nr(), before);
}

/// Two quick runs reserve at once: what is checked is the pool's
/// accounting, not a figure (the default sizes held the test binary 110 s
/// on CI's two cores).
#[test]
fn two_reserving_runs_at_once_each_give_back_their_own() {
    if !root() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let before = nr();
    let small = |name: &str| {
        command()
            .args(["latency", "--quick", "--quiet", "--pages", "2m", "--sizes", "4KiB:16MiB", "--chains", "1"])
            .args(["--reserve-hugepages", "--json", dir.path().join(name).to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (small("a.json"), small("b.json"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!(nr(), before, "the pool is back where it started");
    let said = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    // The kernel may not find the contiguous memory for both pools at once
    // (as its siblings, this cannot be had on every machine at every
    // moment); then each run still gave back what it got (above).
    if [&a, &b].iter().any(|o| o.status.code() == Some(2) && said(o).contains("memory too fragmented")) {
        return common::skip(
            "the pool could not grow for both runs (memory too fragmented)",
            "free memory, or run the tests early after boot",
        );
    }
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)), "a: {}\nb: {}", said(&a), said(&b));
}

#[test]
fn a_signalled_suite_keeps_every_finished_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let child = command()
        .args(["run", "--quiet", "--only", "info,bandwidth,tlb", "-o", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until info and bandwidth are in the journal (header + 2 lines).
    let journal = out.join("journal.jsonl");
    let t = Instant::now();
    while std::fs::read_to_string(&journal).map_or(0, |s| s.lines().count()) < 3 {
        assert!(t.elapsed() < Duration::from_secs(120), "bandwidth never finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(&child, libc::SIGTERM);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let status: Vec<(&str, &str)> = doc["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["status"].as_str().unwrap()))
        .collect();
    // The signal comes after bandwidth's line: tlb was either measuring
    // (interrupted) or not yet begun (skipped); it never completes.
    assert!(
        matches!(status[..], [("info", "completed"), ("bandwidth", "completed"), ("tlb", "interrupted" | "skipped")]),
        "{status:?}"
    );
    assert!(out.join("report.html").exists());
}

/// A FIFO's reader, there when the run starts, stays connected through the
/// run (the plan holds the FIFO open) and gets the whole document; a reader
/// that leaves before the end gives one line and exit 2, not a signal death.
#[test]
fn a_fifos_reader_is_held_from_the_plan_and_its_leaving_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let small = ["bandwidth", "--quiet", "--kernel", "sum1", "--size", "1MiB", "--threads", "1", "--repetitions", "2"];
    // The run, tried again while its reader is not yet in open() (the
    // reader's thread may not have reached it: then the plan refuses).
    let run = |fifo: &std::path::Path| {
        for _ in 0..50 {
            let o = command().args(small).args(["--json", fifo.to_str().unwrap()]).output().unwrap();
            if !String::from_utf8_lossy(&o.stderr).contains("nothing reads the FIFO") {
                return o;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the reader never opened the FIFO");
    };
    // A reader that stays: it opens first (blocking until memperf's plan
    // opens the write end) and reads to the end.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = run(&fifo);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = reader.join().unwrap();
    assert!(text.contains("\"schema_version\"") && text.trim_end().ends_with('}'), "the whole document: {text}");
    // A reader that leaves as soon as the run has opened the FIFO.
    let leaver = {
        let fifo = fifo.clone();
        std::thread::spawn(move || drop(std::fs::File::open(fifo).unwrap()))
    };
    let o = run(&fifo);
    leaver.join().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let said: Vec<&str> = err.lines().filter(|l| !l.starts_with("warning:")).collect();
    assert!(said.len() == 1 && said[0].contains("cannot write") && said[0].contains("out.fifo"), "{err}");
}

/// `wss --pid`: a process that ends while it is watched ends the watch,
/// with the intervals sampled until then; SIGTERM to memperf ends a watch
/// of a process that does not end, with its document written (exit 130).
#[test]
fn wss_follows_a_pid_to_its_end_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough that memperf, started under load, still samples it.
    let mut short = Command::new("sleep").arg("1.5").spawn().unwrap();
    let json = dir.path().join("w.json");
    let o = command()
        .args(["wss", "--no-probe", "-I", "100", "--json", json.to_str().unwrap(), "--pid", &short.id().to_string()])
        .output()
        .unwrap();
    let _ = short.wait();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let n = doc["experiments"][0]["outcome"]["intervals"].as_array().unwrap().len();
    assert!((1..=16).contains(&n), "sampled until the process ended: {n} intervals");
    let mut long = Command::new("sleep").arg("30").spawn().unwrap();
    let json = dir.path().join("l.json");
    let watch = command()
        .args(["wss", "--no-probe", "-I", "100", "--json", json.to_str().unwrap(), "--pid", &long.id().to_string()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    signal(&watch, libc::SIGTERM);
    let o = watch.wait_with_output().unwrap();
    let _ = long.kill();
    let _ = long.wait();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(json.is_file(), "the document of what was watched is written");
}

/// Whether `pid` catches SIGINT yet (its handler is installed).
fn catches_sigint(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:")).map(str::trim).unwrap_or("0");
    u64::from_str_radix(mask, 16).is_ok_and(|m| m & (1 << (libc::SIGINT - 1)) != 0)
}

/// `stat` interrupted at its start (its handler is the first thing it
/// installs) exits 130 with its document written, the record marked
/// interrupted; interrupted while the program runs, the signal reaches the
/// program and memperf exits with its status (130), its document written.
#[test]
fn stat_interrupted_at_any_moment_exits_130_with_its_document() {
    let dir = tempfile::tempdir().unwrap();
    for (when, json) in [("start", dir.path().join("a.json")), ("run", dir.path().join("b.json"))] {
        let child = command()
            .args(["stat", "-e", "task-clock", "--json", json.to_str().unwrap(), "--", "sleep", "30"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !catches_sigint(child.id()) {
            assert!(start.elapsed() < Duration::from_secs(10), "no SIGINT handler after 10 s");
            std::thread::sleep(Duration::from_millis(1));
        }
        if when == "run" {
            // The program runs: memperf's child has become `sleep`.
            common::wait_for_child(child.id(), "sleep");
        }
        signal(&child, libc::SIGINT);
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(start.elapsed() < Duration::from_secs(20), "{when}: sleep 30 was not stopped");
        assert_eq!(o.status.code(), Some(130), "{when}: {err}");
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let status = &doc["experiments"][0]["status"];
        match when {
            "start" => assert_eq!(status, "interrupted", "{doc}"),
            _ => assert_eq!(doc["experiments"][0]["outcome"]["exit"]["signal"], libc::SIGINT, "{doc}"),
        }
    }
}
