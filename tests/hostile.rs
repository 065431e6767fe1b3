//! Hostile input, as data: every case must exit 2 with one line on stderr
//! that names the option or path at fault, no panic text, nothing written
//! to stdout, and no file left behind or replaced. Device nodes, FIFOs and
//! symlinks are made in a temporary folder, never in the real /dev.

mod common;

use common::{command, memperf_in as memperf};
use std::path::Path;
use std::process::Command;

/// (arguments, text the one-line error must contain)
const CASES: &[(&[&str], &str)] = &[
    // sizes, ranges and lists
    (&["latency", "--sizes", "4KiB:1GiB:4294967295"], "points per octave"),
    (&["latency", "--sizes", "4KiB:16KiB:4294967297"], "points per octave"),
    (&["latency", "--sizes", "1MiB:4KiB"], "END is below START"),
    (&["latency", "--sizes", "0"], "greater than zero"),
    (&["latency", "--sizes", "64"], "below two cache lines"),
    (&["latency", "--sizes", "12XB"], "unknown size unit"),
    (&["latency", "--sizes", "18446744073709551615GiB"], "too large"),
    (&["latency", "--sizes", "4KiB,4KiB"], "appears twice"),
    (&["latency", "--chains", "17"], "--chains 17"),
    (&["latency", "--chains", "0:4"], "--chains 0"),
    (&["latency", "--chains", "x"], "--chains 'x'"),
    (&["latency", "--pages", "4k,4k"], "appears twice"),
    (&["latency", "--pages", "8k"], "unknown page policy"),
    (&["latency", "--seed", "-5"], "'-5' for '--seed"),
    (&["latency", "--seed", "0xZZ"], "'0xZZ' for '--seed"),
    (&["bandwidth", "--distance", "0:18446744073709551615:18446744073709551615"], "--distance"),
    (&["bandwidth", "--distance", "0:100000000:1"], "more than 100000 points"),
    (&["bandwidth", "--distance", "10:0:1"], "END is below START"),
    (&["bandwidth", "--distance", "0:64:0"], "STEP must be greater than zero"),
    (&["bandwidth", "--threads", "-1"], "'-1' for '--threads"),
    (&["bandwidth", "--threads", "0"], "'0' for '--threads"),
    (&["bandwidth", "--threads", "1,1,2,1"], "appears twice"),
    (&["bandwidth", "--threads", "4096"], "--threads 4096"),
    (&["bandwidth", "--size", "1"], "below one page"),
    (&["bandwidth", "--size", "100TiB"], "available"),
    (&["bandwidth", "--size", "-1"], "malformed size"),
    (&["bandwidth", "--frame-sets", "0"], "'0' for '--frame-sets"),
    (&["bandwidth", "--frame-sets", "18446744073709551615"], "--frame-sets 18446744073709551615 is out of range"),
    (&["bandwidth", "--frame-sets", "3"], "--frame-sets 3 is out of range"),
    (&["bandwidth", "--frame-sets", "2", "--size", "8GiB"], "available"),
    (&["bandwidth", "--kernel", "sum8"], "sum8"),
    (&["bandwidth", "--kernel", "mix-9:1"], "mix-9:1"),
    (&["loaded-latency", "--loader", "simd-prefetch"], "a loader runs simd or a write kernel"),
    (&["loaded-latency", "--delays", "-5ns"], "--delays '-5ns'"),
    (&["loaded-latency", "--delays", "1e400"], "--delays '1e400'"),
    (&["loaded-latency", "--block", "100"], "--block 100B is not a multiple of 512"),
    (&["loaded-latency", "--window", "10m"], "--window '10m'"),
    (&["loaded-latency", "--size", "100TiB"], "available"),
    (&["numa", "--repetitions", "0"], "'0' for '--repetitions"),
    (&["numa", "--size", "12XB"], "unknown size unit"),
    (&["completions", "csh"], "unknown shell 'csh'"),
    (
        &["info", "--from", "tests/data/machines/amd-epyc-zen5-kvm-2vcpu", "--json", "out.json"],
        "--json would write nothing",
    ),
    (&["info", "--record", "rec", "--csv", "out.csv"], "--csv would write nothing"),
    (&["merge", "/nonexistent/fleet", "-o", "out"], "/nonexistent/fleet"),
    (&["bandwidth", "--kernel", ""], "empty list"),
    (&["bandwidth", "--hint", "t3"], "t3"),
    (&["bandwidth", "--pages", "4k,,4k"], "appears twice"),
    (&["bandwidth", "--repetitions", "0"], "--repetitions"),
    (&["bandwidth", "--repetitions", "many"], "--repetitions"),
    (&["tlb", "--max-pages", "0"], "--max-pages"),
    (&["tlb", "--max-pages", "1"], "--max-pages 1"),
    (&["tlb", "--max-bytes", "0"], "greater than zero"),
    (&["tlb", "--pages", "huge"], "unknown page policy"),
    (&["prefetch-fault", "--lengths", "1000000"], "--lengths 1000000"),
    (&["prefetch-fault", "--lengths", "0"], "--lengths"),
    (&["prefetch-fault", "--ahead", "100000000"], "--ahead 100000000"),
    (&["prefetch-fault", "--targets", "nowhere"], "unknown target 'nowhere'"),
    (&["prefetch-fault", "--hint", "t9"], "t9"),
    (&["prefetch-fault", "--repetitions", "1"], "--repetitions"),
    (&["calls", "--depths", "0"], "--depths 0"),
    (&["calls", "--depths", "1:100000:1"], "1..=16384"),
    (&["calls", "--depths", "deep"], "--depths 'deep'"),
    (&["calls", "--threads", "4096"], "--threads 4096"),
    (&["calls", "--threads", "0"], "'0' for '--threads"),
    (&["calls", "--variants", "virtual"], "unknown call variant 'virtual'"),
    (&["calls", "--variants", ""], "empty list"),
    (&["calls", "--repetitions", "1"], "--repetitions"),
    (&["context", "--ops", "vfork"], "unknown context save 'vfork'"),
    (&["context", "--threads", "4096"], "--threads 4096"),
    (&["context", "--repetitions", "0"], "--repetitions"),
    (&["page-init", "--memory", "4KiB"], "--memory 4KiB"),
    (&["page-init", "--memory", "0"], "greater than zero"),
    (&["page-init", "--ahead", "0:100000:1"], "--ahead"),
    (&["page-init", "--layout", "4GiB"], "BASE:SIZE"),
    (&["page-init", "--layout", "0:1GiB,1MiB:1MiB"], "overlap"),
    (&["page-init", "--threads", "0"], "--threads"),
    (&["run", "--only", "bogus"], "unknown experiment 'bogus'"),
    (&["run", "--only", "tlb", "--skip", "tlb"], "no experiment to run"),
    (&["run", "--only", "tlb,tlb"], "appears twice"),
    (&["run", "--quick", "--full"], "--full"),
    // paths
    (&["info", "--json", "/nonexistent-dir/x.json"], "does not exist"),
    (&["info", "--json", "."], "a directory"),
    (&["info", "-o", "/proc/version"], "is not a folder"),
    (&["report", "/nonexistent"], "/nonexistent"),
    (&["compare", "/nonexistent", "/nonexistent"], "/nonexistent"),
    (&["report", "Cargo.toml"], "not a memperf result document"),
    // outputs planned together, before anything runs
    (&["info", "--json", "a.json", "--csv", "./a.json"], "also the output of --json"),
    (&["info", "--json", "-", "--openmetrics", "/dev/stdout"], "also the output of --json"),
    (&["stat", "--json", "s.json", "--csv", "s.json", "--", "true"], "also the output of --json"),
    (&["compare", "Cargo.toml", "Cargo.toml", "--html", "Cargo.toml"], "a file this command reads"),
    (&["info", "--json", "/dev/full"], "neither a terminal nor /dev/null"),
    (&["info", "--csv", "/dev/zero"], "neither a terminal nor /dev/null"),
    // more ranges and lists across subcommands
    (&["latency", "--sizes", ""], "empty list"),
    (&["latency", "--sizes", "4KiB:"], "malformed size"),
    (&["latency", "--sizes", "4KiB:1MiB:x"], "points per octave"),
    (&["latency", "--sizes", "1.3B"], "not a whole number of bytes"),
    (&["bandwidth", "--size", " 5"], "spaces around it"),
    (&["c2c", "--cpus", "0,0"], "appears twice"),
    (&["calls", "--depths", "1,1"], "appears twice"),
    (&["calls", "--depths", "4,1:8:1"], "appears twice"),
    (&["stat", "-e", "task-clock,task-clock", "--", "true"], "appears twice"),
    (&["latency", "--chains", "1,1"], "appears twice"),
    (&["latency", "--chains", "-1"], "--chains"),
    (&["latency", "--seed", "18446744073709551616"], "--seed"),
    (&["bandwidth", "--size", "0"], "greater than zero"),
    (&["bandwidth", "--size", "4KiB:8KiB"], "unknown size unit"),
    (&["bandwidth", "--distance", "-5"], "--distance"),
    (&["bandwidth", "--distance", "0:2000000:1000"], "--distance"),
    (&["bandwidth", "--hint", "t0,t0"], "appears twice"),
    (&["bandwidth", "--kernel", "simd,simd"], "appears twice"),
    (&["bandwidth", "--pages", "2m,1g,2m"], "appears twice"),
    (&["bandwidth", "--repetitions", "-3"], "--repetitions"),
    (&["tlb", "--max-pages", "-1"], "--max-pages"),
    (&["tlb", "--max-bytes", "-1"], "malformed size"),
    (&["tlb", "--pages", "4k,4k"], "appears twice"),
    (&["prefetch-fault", "--targets", "null,null"], "appears twice"),
    (&["prefetch-fault", "--ahead", "0"], "--ahead"),
    (&["prefetch-fault", "--ahead", "1,1"], "appears twice"),
    (&["prefetch-fault", "--lengths", "-2"], "--lengths"),
    (&["page-init", "--memory", "-1GiB"], "malformed size"),
    (&["page-init", "--repetitions", "1"], "--repetitions"),
    (&["page-init", "--layout", ""], "empty list"),
    (&["run", "--skip", "nothing"], "unknown experiment 'nothing'"),
    (&["wss", "-I", "0", "--", "true"], "at least 10"),
    (&["wss", "-I", "1e3", "--", "true"], "'1e3' for '--interval <MS>'"),
    (&["wss", "--pid", "-5"], "must be a process id"),
    (&["wss", "--pid", "1", "--", "true"], "not both"),
    (&["wss", "--json", "w.json", "-o", "w.json", "--", "true"], "w.json"),
    (&["run", "--only", ""], "empty list"),
    // curves' mixes
    (&["curves", "--mixes", "3:1:1"], "mix '3:1:1'"),
    (&["curves", "--mixes", "0:0"], "moves nothing"),
    (&["curves", "--mixes", "100:0nt"], "stores nothing"),
    (&["curves", "--mixes", "1001:1"], "at most 1000"),
    (&["curves", "--mixes", "-1:2"], "whole number"),
    (&["curves", "--mixes", "1.5:1"], "whole number"),
    (&["curves", "--mixes", "3:1,,3:1"], "appears twice"),
    (&["curves", "--mixes", "3:1,6:2"], "are one mix"),
    (&["curves", "--mixes", ""], "empty list"),
    (&["curves", "--mixes", "reads"], "no ':'"),
    (&["curves", "--points", "2"], "--points 2"),
    (&["curves", "--points", "0"], "'0' for '--points"),
    (&["curves", "--window", "0"], "'0' for '--window"),
    (&["curves", "--size", "1KiB"], "--size"),
    // clap
    (&["frobnicate"], "frobnicate"),
    (&["bandwidth", "--frob"], "--frob"),
    (&["latency", "--sizes"], "--sizes"),
];

fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().map(|m| m.len()).unwrap_or(0)))
        .collect();
    v.sort();
    v
}

#[test]
fn every_hostile_case_is_one_line_exit_2_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    let before = listing(dir.path());
    let mut failures = Vec::new();
    for (args, needle) in CASES {
        let o = memperf(args, dir.path());
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err.trim_end().lines().last().unwrap_or("");
        let ok = o.status.code() == Some(2)
            && last.starts_with("memperf: error:")
            && last.contains(needle)
            && !err.contains("panicked")
            && o.stdout.is_empty()
            && listing(dir.path()) == before;
        if !ok {
            failures.push(format!("{args:?}: exit {:?}, stderr {err:?}", o.status.code()));
        }
    }
    assert!(CASES.len() >= 80, "{} cases", CASES.len());
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

#[test]
fn special_files_are_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    std::fs::write(&real, "keep me").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = memperf(&["info", "--json", link.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep me");
    // A FIFO is streamed into and stays a FIFO.
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = memperf(&["info", "--json", fifo.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(reader.join().unwrap().contains("\"schema_version\""));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // A full character device: exit 2, still a device.
    if Path::new("/dev/full").exists() {
        let o = memperf(&["info", "--json", "/dev/full"], dir.path());
        assert_eq!(o.status.code(), Some(2));
        assert!(std::fs::metadata("/dev/full").unwrap().file_type().is_char_device());
    }
}

#[test]
fn a_closed_pipe_ends_quietly_and_a_full_stdout_is_exit_2() {
    let mut child = command()
        .arg("info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away at once
    let o = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    assert_ne!(o.status.code(), Some(101));
    if Path::new("/dev/full").exists() {
        // Nothing to measure: no plan line, and the error is the one line.
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = command().arg("info").stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        let said: Vec<&str> = err.lines().filter(|l| !l.starts_with("warning:")).collect();
        assert!(said.len() == 1 && said[0].starts_with("memperf: error:"), "{err}");
    }
}

#[test]
fn a_crafted_hostname_cannot_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let small = ["bandwidth", "--quiet", "--kernel", "simd", "--size", "8MiB", "--threads", "1", "--repetitions", "2"];
    let o = memperf(&[&small[..], &["--json", "doc.json"]].concat(), dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let path = dir.path().join("doc.json");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc["origin"]["hostname"] = "evil\u{1b}]0;pwned\u{7}\n# EOF".into();
    std::fs::write(&path, doc.to_string()).unwrap();
    let o = memperf(&["compare", "doc.json", "doc.json"], dir.path());
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("evil?]0;pwned??# EOF"), "the name is shown, defanged, on its own line: {text}");
    assert!(!text.lines().any(|l| l.starts_with("# EOF")), "a line was forged: {text}");
    assert!(!o.stdout.contains(&0x1b) && !o.stdout.contains(&0x07), "control bytes reached stdout");
}

#[test]
fn a_results_folder_belongs_to_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let first = memperf(&["run", "--quiet", "--only", "info", "-o", "res"], dir.path());
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    let journal = std::fs::read(dir.path().join("res/journal.jsonl")).unwrap();
    let second = memperf(&["run", "--quiet", "--only", "info", "-o", "res"], dir.path());
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("already holds a run"), "{err}");
    assert_eq!(
        std::fs::read(dir.path().join("res/journal.jsonl")).unwrap(),
        journal,
        "the first run's journal is intact"
    );
}

/// Two documents of different runs, for the writers that read documents
/// (compare, merge): the Zen 5 recording and a copy under another run id.
fn two_documents(dir: &Path) -> (String, String) {
    let fixture = common::repo("tests/data/machines/amd-epyc-zen5-kvm-2vcpu/run-quick.json");
    let mut doc = common::read_json(&fixture);
    std::fs::write(dir.join("a.json"), doc.to_string()).unwrap();
    doc["origin"]["run_id"] = "another-run".into();
    std::fs::write(dir.join("b.json"), doc.to_string()).unwrap();
    (dir.join("a.json").display().to_string(), dir.join("b.json").display().to_string())
}

/// Every writer, as (arguments before the output, the output's option,
/// arguments after it). `OUT` stands for the output's path.
fn writers(a: &str, b: &str) -> Vec<Vec<String>> {
    let cases: &[&[&str]] = &[
        &["info", "--json", "OUT"],
        &["info", "--csv", "OUT"],
        &["info", "--openmetrics", "OUT"],
        &["stat", "--json", "OUT", "--", "true"],
        &["stat", "--csv", "OUT", "--", "true"],
        &["compare", "A", "B", "--json", "OUT"],
        &["compare", "A", "B", "--html", "OUT"],
        &["merge", "A", "B", "-o", "fleet", "--csv", "OUT"],
        &["merge", "A", "B", "-o", "fleet", "--openmetrics", "OUT"],
        &["run", "--quiet", "--only", "info", "--json", "OUT"],
    ];
    cases
        .iter()
        .map(|c| {
            c.iter()
                .map(|w| match *w {
                    "A" => a.to_string(),
                    "B" => b.to_string(),
                    w => w.to_string(),
                })
                .collect()
        })
        .collect()
}

/// A legal name is written by every writer, whatever its length: the
/// temporary name it is written through has a fixed length. Only a name
/// over NAME_MAX is refused, before anything is measured, and nothing is
/// left behind either way.
#[test]
fn every_writer_takes_a_legal_255_byte_name() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_documents(dir.path());
    let longest = "n".repeat(255);
    for case in writers(&a, &b) {
        let work = tempfile::tempdir().unwrap();
        let args: Vec<&str> = case.iter().map(|w| if w == "OUT" { longest.as_str() } else { w.as_str() }).collect();
        let o = memperf_within(&args, work.path(), 60);
        assert_eq!(o.status.code(), Some(0), "{:?}: {}", &case, String::from_utf8_lossy(&o.stderr));
        assert!(std::fs::metadata(work.path().join(&longest)).unwrap().len() > 0, "{case:?} wrote its output");
        let left: Vec<_> = std::fs::read_dir(work.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "{case:?} left {left:?}");
    }
    let work = tempfile::tempdir().unwrap();
    let over = "o".repeat(256);
    let o = memperf(&["info", "--json", &over], work.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("256 bytes") && err.contains("at most 255") && err.lines().count() == 1, "{err}");
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0, "nothing written");
}

/// A FIFO nobody reads is refused by every writer at once (one line, exit
/// 2), before anything is measured: no writer waits in open().
#[test]
fn every_writer_refuses_a_fifo_without_a_reader_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_documents(dir.path());
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for case in writers(&a, &b) {
        let work = tempfile::tempdir().unwrap();
        let args: Vec<&str> =
            case.iter().map(|w| if w == "OUT" { fifo.to_str().unwrap() } else { w.as_str() }).collect();
        let start = std::time::Instant::now();
        let o = memperf_within(&args, work.path(), 30);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{case:?}: {err}");
        assert!(err.contains("nothing reads the FIFO") && err.lines().count() == 1, "{case:?}: {err}");
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{case:?} took {:?}", start.elapsed());
        assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0, "{case:?} wrote nothing");
    }
}

/// Names from documents reach no output raw: a host name and a CPU name
/// with a newline, markup and escape sequences are shown defanged on the
/// terminal and in fleet.txt, fleet.json and the CSV, and forge no line.
#[test]
fn merge_passes_every_name_through_the_one_sanitiser() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = common::repo("tests/data/machines/amd-epyc-zen5-kvm-2vcpu/run-quick.json");
    let mut doc = common::read_json(&fixture);
    let evil = "evil\n# forged <script>alert(1)</script>\u{1b}]0;x\u{7}";
    doc["origin"]["hostname"] = evil.into();
    doc["machine"]["hostname"] = evil.into();
    doc["machine"]["cpu"]["model_name"] = "CPU\n# forged <b>x</b>\u{1b}[31m".into();
    std::fs::write(dir.path().join("a.json"), doc.to_string()).unwrap();
    doc["origin"]["hostname"] = "good".into();
    doc["origin"]["run_id"] = "another-run".into();
    std::fs::write(dir.path().join("b.json"), doc.to_string()).unwrap();
    let o = memperf(&["merge", "a.json", "b.json", "-o", "fleet", "--csv", "fleet.csv"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let outputs = [
        ("stdout", o.stdout.clone()),
        ("fleet.txt", std::fs::read(dir.path().join("fleet/fleet.txt")).unwrap()),
        ("fleet.json", std::fs::read(dir.path().join("fleet/fleet.json")).unwrap()),
        ("fleet.csv", std::fs::read(dir.path().join("fleet.csv")).unwrap()),
    ];
    for (name, bytes) in outputs {
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("evil?# forged ?script?alert(1)?/script??]0;x?"), "{name}: the name, defanged: {text}");
        assert!(!text.lines().any(|l| l.starts_with("# forged")), "{name}: a line was forged");
        assert!(!text.contains("<script>") && !text.contains("<b>"), "{name}: markup from a document");
        assert!(!bytes.contains(&0x1b) && !bytes.contains(&0x07), "{name}: control bytes");
        assert!(!text.contains("\\u001b") && !text.contains("\\n#"), "{name}: escapes that decode to control bytes");
    }
}

/// A folder that holds another command's results is not written over,
/// whichever command made it.
#[test]
fn a_results_folder_of_another_command_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let first = memperf(&["info", "-o", "res"], dir.path());
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    let results = std::fs::read(dir.path().join("res/results.json")).unwrap();
    let second = memperf(&["run", "--quiet", "--only", "info", "-o", "res"], dir.path());
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("already holds a run (results.json exists)"), "{err}");
    assert_eq!(std::fs::read(dir.path().join("res/results.json")).unwrap(), results);
}

/// Documents whose raw samples are empty or all zero are not compared as
/// if they were measurements: every such headline is named and left out.
#[test]
fn documents_without_usable_samples_are_not_compared_silently() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minimal-bandwidth.json");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    std::fs::write(dir.path().join("a.json"), doc.to_string()).unwrap();
    for (name, samples) in [("empty.json", serde_json::json!([])), ("zero.json", serde_json::json!([0.0, 0.0, 0.0]))] {
        for r in doc["experiments"][0]["outcome"]["results"].as_array_mut().unwrap() {
            r["samples_s"] = samples.clone();
        }
        std::fs::write(dir.path().join(name), doc.to_string()).unwrap();
        let o = memperf(&["compare", "a.json", name], dir.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        let why = if name == "empty.json" { "no raw samples in B" } else { "zero, negative or not a number" };
        assert!(err.contains("no headline could be compared") && err.contains(why), "{name}: {err}");
        assert!(o.stdout.is_empty(), "{name}: nothing compared");
    }
}

/// Runs memperf with a deadline: a hang is a failure, not a stuck suite.
fn memperf_within(args: &[&str], cwd: &Path, secs: u64) -> std::process::Output {
    let mut child = command()
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed().as_secs() > secs {
            let _ = child.kill();
            panic!("{args:?} hung for {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// FIFOs, devices, loops and unbounded input: each refused at once with
/// one line and exit 2 (or, for a loop, walked once), never a hang.
#[test]
fn special_inputs_are_refused_at_once_and_loops_walked_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let f = fifo.to_str().unwrap();
    let deep = format!(
        r#"[{{"name":"x","formula":["{}task_clock{}"],"unit":"","description":"d"}}]"#,
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    std::fs::write(dir.path().join("m.json"), deep).unwrap();
    let script = dir.path().join("noshebang");
    std::fs::write(&script, "echo hi\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["report", f], "a FIFO"),
        (&["report", "/dev/zero"], "a character device"),
        (&["compare", "/dev/zero", "/dev/zero"], "a character device"),
        (&["stat", "--machine-results", "/dev/zero", "--", "true"], "a character device"),
        (&["info", "--json", f], "nothing reads the FIFO"),
        (&["stat", "-e", "task-clock", "--metrics", "m.json", "--", "true"], "longer than 4096"),
        (&["hugepages", "-n", "1", "--", "./noshebang"], "#! line"),
    ];
    for (args, needle) in cases {
        let o = memperf_within(args, dir.path(), 30);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.trim_end().lines().last().unwrap_or("").contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // A folder that links to itself: merge walks it once and ends.
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    std::os::unix::fs::symlink(&fleet, fleet.join("loop")).unwrap();
    let o = memperf_within(&["merge", fleet.to_str().unwrap(), "-o", "out"], dir.path(), 30);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

/// help, man and completions: quiet into a closed pipe, exit 2 into a full disk.
#[test]
fn help_man_and_completions_handle_closed_and_full_stdout() {
    for args in [&["man"][..], &["completions", "bash"], &["completions", "zsh"], &["--help"]] {
        let mut child = command()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.is_empty(), "{args:?} into a closed pipe said: {err}");
        assert_ne!(o.status.code(), Some(2), "{args:?}");
        if Path::new("/dev/full").exists() {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            let o = command().args(args).stdout(full).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.starts_with("memperf: error:") && err.lines().count() == 1, "{args:?}: {err}");
        }
    }
}
