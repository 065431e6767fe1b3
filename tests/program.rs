//! Looking at a user's program: `memperf stat -- CMD` as a user meets it
//! (exit status, signals and output passed through, one-line errors, the
//! document, the CSV) and the C region API (the example compiles, links
//! against the static and the shared library, and writes a document that
//! `report` reads).

mod common;

use common::{command, memperf, read_json, schema_errors, skip, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The tests that measure memory (hugepages, working-set, c2c, bandwidth,
/// loaded-latency) take turns.
static TURN: Mutex<()> = Mutex::new(());

/// Runs memperf with `args` and `--json json`, asserts it succeeded, and
/// returns the document it wrote, checked against the schema.
fn measured(args: &[&str], json: &Path) -> serde_json::Value {
    let o = memperf(&[args, &["--json", json.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = read_json(json);
    assert!(schema_errors(&doc).is_empty(), "{:#?}", schema_errors(&doc));
    doc
}

#[test]
fn the_programs_status_and_output_pass_through() {
    let o = memperf(&["stat", "--", "sh", "-c", "echo out; echo err >&2; exit 5"]);
    assert_eq!(o.status.code(), Some(5));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "out\n", "stdout is the program's alone");
    let e = stderr(&o);
    assert!(e.starts_with("err\n"), "{e}");
    assert!(e.contains("exited with status 5") && e.contains("task-clock"), "{e}");
    let killed = memperf(&["stat", "-e", "task-clock", "--", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(killed.status.code(), Some(143));
    assert!(stderr(&killed).contains("killed by signal 15 (SIGTERM)"));
}

/// README example 3: a named event this CPU has no encoding for is "not
/// measured — no encoding for <CPU>" in the table, the JSON and the CSV;
/// the others are counted; the exit status is the program's. On a CPU
/// that encodes every named event, each is resolved to its encoding (and
/// counted, or refused by the PMU, never "no encoding").
#[test]
fn an_event_this_cpu_cannot_encode_is_not_measured_and_the_rest_counted() {
    let cpu = memperf::machine::cpuid::this_identity();
    let names = ["dtlb-walk-cycles", "dtlb-walks", "loads"];
    let lacks = |n: &str| memperf::counters::events::resolve(n, &cpu).is_ok_and(|e| e.no_encoding().is_some());
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("s.json"), dir.path().join("s.csv"));
    let Some(foreign) = names.into_iter().find(|n| lacks(n)) else {
        let events = format!("task-clock,{}", names.join(","));
        let o = memperf(&["stat", "-e", &events, "--json", json.to_str().unwrap(), "--", "true"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!stderr(&o).contains("no encoding"), "{}", stderr(&o));
        return;
    };
    let events = format!("task-clock,{foreign},page-faults");
    let o = memperf(&[
        "stat",
        "-e",
        &events,
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "exit 3",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("not measured: {foreign}: no encoding for {}", cpu.vendor)), "{}", stderr(&o));
    let doc = read_json(&json);
    let events = doc["experiments"][0]["outcome"]["events"].as_array().unwrap().clone();
    let status = |n: &str| events.iter().find(|e| e["name"] == n).unwrap()["status"].clone();
    assert_eq!(status(foreign)["status"], "unavailable");
    assert!(status(foreign)["reason"].as_str().unwrap().starts_with("no encoding for"));
    assert_eq!(status("task-clock")["status"], "measured");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(
        rows.lines().any(|l| l.starts_with(&format!("total,,,{foreign},,")) && l.ends_with("not measured")),
        "{rows}"
    );
}

#[test]
fn a_sigterm_to_memperf_reaches_the_program() {
    let child =
        command().args(["stat", "-e", "task-clock", "--", "sleep", "30"]).stderr(Stdio::piped()).spawn().unwrap();
    common::wait_for_child(child.id(), "sleep");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let started = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(started.elapsed().as_secs() < 10, "sleep was not told");
    assert_eq!(o.status.code(), Some(143));
    assert!(stderr(&o).contains("`sleep 30` killed by signal 15"), "{}", stderr(&o));
}

#[test]
fn bad_input_is_one_line_with_the_shells_status_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "not a program").unwrap();
    let bad_metrics = dir.path().join("m.json");
    std::fs::write(&bad_metrics, r#"[{"name":"x","formula":["a +"],"unit":"u","description":""}]"#).unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--", "no-such-program-memperf"], 127, "command not found"),
        (&["--", plain.to_str().unwrap()], 126, "not executable"),
        (&[], 2, "no command to run"),
        (&["-e", "bogus", "--", "true"], 2, "unknown event 'bogus'"),
        (&["-e", "cycles,,page-faults", "--", "true"], 2, "empty event name"),
        (&["-I", "5", "--", "true"], 2, "from 10 to 3600000"),
        (&["--metrics", bad_metrics.to_str().unwrap(), "--", "true"], 2, "metric 'x'"),
        (&["--machine-results", "/nonexistent", "--", "true"], 2, "/nonexistent"),
    ];
    for (args, code, needle) in cases {
        let mut all = vec!["stat", "--json", out.to_str().unwrap()];
        all.extend_from_slice(args);
        let o = memperf(&all);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(*code), "{args:?}: {e}");
        assert!(e.contains(needle), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
        assert!(!out.exists(), "{args:?} left a file");
    }
}

/// The document validates; the CSV reads back to the same counts; the
/// report and compare read the document.
#[test]
fn the_document_and_the_csv_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("s.json"), dir.path().join("s.csv"));
    let touch = "dd if=/dev/zero of=/dev/null bs=32M count=1 2>/dev/null";
    let o = memperf(&[
        "stat",
        "-I",
        "20",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        touch,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = read_json(&json);
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    let outcome = &doc["experiments"][0]["outcome"];
    assert_eq!(outcome["experiment"], "stat");
    let events = outcome["events"].as_array().unwrap();
    for e in events.iter().filter(|e| e["status"]["status"] == "unavailable") {
        assert!(e["status"].get("count").is_none(), "an unavailable counter carries no count: {e}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), "record,t_s,region,name,value,unit,status");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 7), "tidy rows of seven cells");
    let faults = events.iter().find(|e| e["name"] == "page-faults").unwrap();
    if let Some(count) = faults["status"]["count"].as_u64() {
        let row = rows.iter().find(|r| r[0] == "total" && r[3] == "page-faults").unwrap();
        assert_eq!(row[4].parse::<u64>().unwrap(), count);
        // dd's 32 MiB buffer: 8192 faults of 4 KiB, or 16 of 2 MiB where
        // THP gives malloc huge pages by itself.
        let least = if thp_mode() == "always" { 16 } else { 8192 };
        assert!(count >= least, "32 MiB of fresh pages under THP {}: {count}", thp_mode());
    }
    for r in rows.iter().filter(|r| r[6] == "not measured") {
        assert_eq!(r[4], "", "an unmeasured value is empty, never 0: {r:?}");
    }
    assert!(rows.iter().any(|r| r[0] == "interval"));
    let report = memperf(&["report", json.to_str().unwrap(), "-o", dir.path().join("rep").to_str().unwrap()]);
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    let html = std::fs::read_to_string(dir.path().join("rep/report.html")).unwrap();
    assert!(html.contains("stat") && html.contains("not measured"));
    let c = memperf(&["compare", json.to_str().unwrap(), json.to_str().unwrap()]);
    assert_eq!(c.status.code(), Some(0), "{}", stderr(&c));
    assert!(String::from_utf8_lossy(&c.stdout).contains("stat wall time"));
}

/// Builds libmemperf.a and libmemperf.so (the capi crate) beside the
/// memperf library `cargo test` has just compiled, and links them to it:
/// the same target folder, the test profile, and memperf's dev-dependencies
/// selected (`--test program`), so the features of what they share unify as
/// they did for `cargo test` and the library's hash is the same. Under a
/// plain `cargo test` only the C API compiles then (seconds; a separate
/// build took CI's two cores 70–85 s); under `--release` or other options
/// memperf builds once more in the test profile. cargo holds no lock on
/// the target folder while the tests run (a build started during a test
/// binary's run finished at once).
fn c_libraries() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // This test's binary is <target>/<profile>/deps/program-<hash>.
    let exe = std::env::current_exe().expect("the test knows its own path");
    let target = exe.ancestors().nth(3).expect("the test binary lies in <target>/<profile>/deps");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--offline",
            "--profile",
            "test",
            "-p",
            "memperf-capi",
            "-p",
            "memperf",
            "--lib",
            "--test",
            "program",
        ])
        .arg("--target-dir")
        .arg(target)
        .current_dir(root)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the C API failed");
    // The test profile's outputs go where the dev profile's do.
    target.join("debug")
}

fn compile(out: &Path, libs: &Path, link: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("cc")
        .args(["-O2", "-Wall", "-Werror", "-I"])
        .arg(root.join("include"))
        .arg(root.join("examples/region_sample.c"))
        .arg("-L")
        .arg(libs)
        .args(link)
        .arg("-o")
        .arg(out)
        .output()
        .expect("cc runs");
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_c_example_links_both_libraries_and_writes_a_document() {
    let libs = c_libraries();
    let dir = tempfile::tempdir().unwrap();
    let rpath = format!("-Wl,-rpath,{}", libs.display());
    let builds: [(&str, Vec<&str>); 2] =
        [("static", vec!["-l:libmemperf.a", "-lpthread", "-ldl", "-lm"]), ("shared", vec!["-lmemperf", &rpath])];
    let mut outputs = Vec::new();
    for (kind, link) in &builds {
        let exe = dir.path().join(format!("sample-{kind}"));
        compile(&exe, &libs, link);
        let doc_path = dir.path().join(format!("{kind}.json"));
        // cargo test puts its own target folders on LD_LIBRARY_PATH, where an
        // older libmemperf.so may lie: the rpath must decide which one loads.
        let o = Command::new(&exe)
            .args(["8", "4000"])
            .env("MEMPERF_REGIONS", &doc_path)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        assert!(o.status.success(), "{kind}: {}", stderr(&o));
        outputs.push(String::from_utf8_lossy(&o.stdout).into_owned());
        let doc = read_json(&doc_path);
        let errors = schema_errors(&doc);
        assert!(errors.is_empty(), "{kind}: {errors:#?}");
        let regions = doc["experiments"][0]["outcome"]["regions"].as_array().unwrap();
        let entries = |n: &str| regions.iter().find(|r| r["name"] == n).map(|r| r["entries"].as_u64().unwrap());
        assert_eq!((entries("run"), entries("init"), entries("doit")), (Some(1), Some(1), Some(3)), "{kind}");
        let report = memperf(&["report", doc_path.to_str().unwrap(), "-o", dir.path().join(kind).to_str().unwrap()]);
        assert_eq!(report.status.code(), Some(0), "{kind}: {}", stderr(&report));
    }
    assert!(outputs[0].starts_with("tmp = ") && outputs[0] == outputs[1], "{outputs:?}");
}

/// MEMPERF_REGIONS naming a FIFO that nothing reads: the program's exit
/// writer gives up at once with a line saying why, and the program ends
/// with its own status instead of waiting on a reader.
#[test]
fn a_fifo_nobody_reads_does_not_hold_a_program_at_exit() {
    let libs = c_libraries();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("sample");
    compile(&exe, &libs, &["-lmemperf", &format!("-Wl,-rpath,{}", libs.display())]);
    let fifo = dir.path().join("regions.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let started = std::time::Instant::now();
    let mut child = Command::new(&exe)
        .args(["8", "4000"])
        .env("MEMPERF_REGIONS", &fifo)
        .env_remove("LD_LIBRARY_PATH")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(8) {
            let _ = child.kill();
            panic!("the program still waits at exit after 8 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(err.contains("nothing reads the FIFO"), "{err}");
}

fn walk_program(dir: &Path) -> PathBuf {
    let exe = dir.join("walk");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/walk.c");
    let o = Command::new("cc").args(["-O2", "-o"]).arg(&exe).arg(&src).output().expect("cc runs");
    assert!(o.status.success(), "{}", stderr(&o));
    exe
}

fn thp_mode() -> String {
    let text = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    text.split_whitespace().find(|w| w.starts_with('[')).unwrap_or("").trim_matches(['[', ']']).to_string()
}

/// A glibc program that mallocs 256 MiB and walks it: with the THP
/// tunable its memory is read back on huge pages, without it not.
#[test]
fn hugepages_reads_back_the_coverage_of_each_arm() {
    let _turn = common::turn(&TURN);
    let dir = tempfile::tempdir().unwrap();
    let exe = walk_program(dir.path());
    let json = dir.path().join("h.json");
    let o = memperf(&["hugepages", "-n", "2", "--json", json.to_str().unwrap(), "--", exe.to_str().unwrap(), "256"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("speed-up vs without"));
    assert!(
        !String::from_utf8_lossy(&o.stdout).lines().any(|l| l.chars().all(|c| c.is_ascii_digit()) && !l.is_empty()),
        "the program's output is not shown without --show-output"
    );
    let doc = read_json(&json);
    assert!(schema_errors(&doc).is_empty(), "{:#?}", schema_errors(&doc));
    let out = &doc["experiments"][0]["outcome"];
    assert_eq!(out["runs"].as_array().unwrap().len(), 4);
    let huge = |arm: &str| {
        out["summaries"].as_array().unwrap().iter().find(|s| s["arm"] == arm).unwrap()["peak_huge_bytes"]
            .as_u64()
            .unwrap()
    };
    // Where THP is off, or this glibc ignores the tunable, no arm can get
    // huge pages and the document says why; elsewhere the THP arm gets them.
    if thp_mode() == "never" {
        assert_eq!(huge("thp"), 0, "THP is off");
        return;
    }
    if let Some(why) = out["tunable_ignored"].as_str() {
        assert!(!why.is_empty(), "the document says why the tunable was ignored");
        return;
    }
    assert!(huge("thp") > 64 << 20, "the THP arm got {} huge bytes", huge("thp"));
    if thp_mode() == "madvise" {
        assert_eq!(huge("without"), 0, "in madvise mode malloc gets no THP by itself");
    }
}

#[test]
fn hugepages_keeps_exit_statuses_and_output() {
    let failing = memperf(&["hugepages", "-n", "1", "--", "sh", "-c", "echo from-the-program; exit 3"]);
    assert_eq!(failing.status.code(), Some(1), "a failed run fails validation: {}", stderr(&failing));
    let text = String::from_utf8_lossy(&failing.stdout);
    assert!(text.contains("exited with status 3 (left out)"), "{text}");
    assert!(text.contains("| from-the-program"), "a failed run's output is kept: {text}");
    let shown = memperf(&["hugepages", "-n", "1", "--show-output", "--", "sh", "-c", "echo hello-out"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let lines = String::from_utf8_lossy(&shown.stdout).lines().filter(|l| *l == "hello-out").count();
    assert_eq!(lines, 2, "both runs pass their output through");
    let cases: &[(&[&str], &str)] = &[
        (&["hugepages"], "no command to run"),
        (&["hugepages", "-n", "0", "--", "true"], "positive integer"),
        (&["hugepages", "--", "no-such-program-memperf"], "command not found"),
        (&["hugepages", "--mode", "bogus", "--", "true"], "'bogus' for '--mode <MODE>'"),
    ];
    for (args, needle) in cases {
        let o = memperf(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(needle) && e.trim_end().lines().count() == 1, "{args:?}: {e}");
    }
}

#[test]
fn working_set_validates_on_every_policy() {
    let _turn = common::turn(&TURN);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    let args = [
        "working-set",
        "--quiet",
        "--size",
        "48MiB",
        "--pages",
        "4k,thp",
        "--repetitions",
        "3",
        "--allocations",
        "2",
        "--json",
    ];
    let o = memperf(&[&args[..], &[json.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = read_json(&json);
    assert!(schema_errors(&doc).is_empty(), "{:#?}", schema_errors(&doc));
    let out = &doc["experiments"][0]["outcome"];
    assert_eq!(out["sums_agree"], true);
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["valid"] == true && r["samples_s"].as_array().unwrap().len() == 3));
    assert!(results[1]["speedup_vs_4k"].is_object());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("85 s → 15 s"), "the article's figures beside today's: {text}");
}

#[test]
fn c2c_measures_every_pair_and_refuses_cpus_it_may_not_use() {
    let _turn = common::turn(&TURN);
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if cpus < 2 {
        return skip("c2c needs two CPUs", "run on a machine with two CPUs");
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let doc = measured(&["c2c", "--quiet", "--repetitions", "3"], &json);
    let out = &doc["experiments"][0]["outcome"];
    let n = out["cpus"].as_array().unwrap().len();
    assert_eq!(out["pairs"].as_array().unwrap().len(), n * (n - 1) / 2 * 2, "every pair, both handoffs");
    for (args, needle) in
        [(&["c2c", "--cpus", "0,4096"][..], "CPU 4096"), (&["c2c", "--handoff", "xchg"][..], "unknown handoff")]
    {
        let e = memperf(args);
        assert_eq!(e.status.code(), Some(2));
        assert!(stderr(&e).contains(needle), "{}", stderr(&e));
    }
}

/// The write kernels run, read back what they stored, and report both the
/// program's bytes and the bus's (write-allocate) per the model.
#[test]
fn bandwidth_write_kernels_validate_and_report_bus_bytes() {
    let _turn = common::turn(&TURN);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    let doc = measured(
        &[
            "bandwidth",
            "--quiet",
            "--kernel",
            "store,store-nt,copy,update,mix-2:1,mix-3:1",
            "--size",
            "8MiB",
            "--threads",
            "1",
            "--repetitions",
            "2",
        ],
        &json,
    );
    let results = doc["experiments"][0]["outcome"]["results"].as_array().unwrap();
    let kernels: Vec<&str> = results.iter().map(|r| r["kernel"].as_str().unwrap()).collect();
    assert_eq!(kernels, ["store", "store-nt", "copy", "update", "triad", "mix-3:1"], "mix-2:1 is triad");
    for r in results {
        assert_eq!(r["checksum_ok"], true, "{}", r["kernel"]);
        let (read, written, wa) = (
            r["bytes_read_per_element"].as_u64().unwrap(),
            r["bytes_written_per_element"].as_u64().unwrap(),
            r["write_allocate_bytes_per_element"].as_u64().unwrap(),
        );
        let per_pass = r["bytes_per_sample"].as_u64().unwrap() / r["passes"].as_u64().unwrap();
        let bus_per_pass = r["bus_bytes_per_sample"].as_u64().unwrap() / r["passes"].as_u64().unwrap();
        assert_eq!(per_pass * (read + written + wa), bus_per_pass * (read + written), "{}", r["kernel"]);
    }
    let nt = results.iter().find(|r| r["kernel"] == "store-nt").unwrap();
    assert_eq!(nt["write_allocate_bytes_per_element"], 0, "non-temporal stores allocate nothing");
    let e = memperf(&["bandwidth", "--kernel", "mix-4:1"]);
    assert_eq!(e.status.code(), Some(2));
    assert!(stderr(&e).contains("mix-3:1"), "{}", stderr(&e));
}

/// The curve has the idle point and one point per delay, validates, and the
/// loaders move less with a long delay than with none (a 20 µs wait per
/// 16 KiB block caps each loader at 0.8 GB/s, far below a core's stream;
/// there is a loader on every CPU but the chaser's, one on two CPUs,
/// fifteen on sixteen).
#[test]
fn loaded_latency_draws_its_curve_and_refuses_bad_input() {
    let _turn = common::turn(&TURN);
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if cpus < 2 {
        return skip("loaded-latency needs two CPUs", "run on a machine with two CPUs");
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("l.json");
    let doc = measured(
        &[
            "loaded-latency",
            "--quiet",
            "--size",
            "16MiB",
            "--delays",
            "0,20us",
            "--repetitions",
            "2",
            "--window",
            "20ms",
        ],
        &json,
    );
    let out = &doc["experiments"][0]["outcome"];
    let points = out["points"].as_array().unwrap();
    let delays: Vec<Option<u64>> = points.iter().map(|p| p["delay_ns"].as_u64()).collect();
    assert_eq!(delays, [None, Some(0), Some(20_000)]);
    assert_eq!(out["valid"], true);
    // Through the scheduler: every point once per repetition, no more.
    for p in points {
        assert_eq!(p["samples_latency_ns"].as_array().unwrap().len(), 2, "{p}");
        assert_eq!(p["samples_loader_bytes_per_s"].as_array().unwrap().len(), 2, "{p}");
    }
    let bw = |i: usize| points[i]["loader_bytes_per_s"]["median"].as_f64().unwrap();
    assert_eq!(bw(0), 0.0, "no loader runs at the idle point");
    assert!(bw(2) * 2.0 < bw(1), "delay 20us: {} B/s, none: {} B/s", bw(2), bw(1));
    let loaders = out["loader_cpus"].as_array().unwrap().len() as f64;
    assert!(loaders >= 1.0, "{}", out["loader_cpus"]);
    assert!(bw(2) <= loaders * 16384.0 / 20e-6, "the delay caps {loaders} loaders: {}", bw(2));
    for (args, needle) in [
        (&["loaded-latency", "--loader", "sum1"][..], "'sum1' for '--loader <KERNEL>'"),
        (&["loaded-latency", "--delays", "5parsecs"][..], "--delays '5parsecs'"),
        (&["loaded-latency", "--window", "0"][..], "--window"),
    ] {
        let e = memperf(args);
        assert_eq!(e.status.code(), Some(2), "{args:?}");
        assert!(stderr(&e).contains(needle), "{}", stderr(&e));
    }
}
