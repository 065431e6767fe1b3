//! The command line as a user meets it: exit codes, one-line errors, no
//! partial files, and the result document of real (small) runs.

mod common;

use common::{command, is_root, memperf, read_json as json, repo, skip, stderr};
use std::process::Command;

/// Small and fast: 8 MiB, two distances, two samples.
const SMALL: &[&str] = &["bandwidth", "--quiet", "--size", "8MiB", "--distance", "0:64:64", "--repetitions", "2"];

#[test]
fn bad_input_is_one_line_exit_2_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let out_s = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--size", "0"], "greater than zero"),
        (&["--size", "12XB"], "unknown size unit"),
        (&["--size", "abc"], "malformed size"),
        (&["--size", "100TiB"], "available"),
        (&["--distance", "10:0:1"], "END is below START"),
        (&["--distance", "0:1024:0"], "STEP"),
        (&["--threads", "4096"], "--threads"),
        (&["--threads", "0"], "positive integer"),
        (&["--kernel", "sum8"], "unknown kernel"),
        (&["--hint", "t9"], "unknown prefetch hint"),
        (&["--pages", "8k"], "unknown page policy"),
        (&["--repetitions", "-1"], "positive integer"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["bandwidth", "--json", out_s];
        args.extend_from_slice(extra);
        let o = memperf(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert!(err.starts_with("memperf: error: ") && err.trim_end().lines().count() == 1, "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{extra:?}");
        assert!(!out.exists(), "{extra:?} left a file");
    }
}

#[test]
fn unknown_subcommand_is_usage_error() {
    assert_eq!(memperf(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn info_writes_a_schema_3_document_to_stdout() {
    let o = memperf(&["info", "--json", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["schema_version"], 3);
    assert!(doc["build"]["git_revision"].is_string());
    assert!(doc["origin"]["run_id"].is_string());
    assert!(doc["machine"]["caches"].as_array().unwrap().len() >= 2);
    assert_eq!(doc["experiments"][0]["name"], "info");
    assert_eq!(doc["experiments"][0]["outcome"]["experiment"], "info", "outcomes are tagged");
    let reach = doc["experiments"][0]["outcome"]["tlb_reach"].as_array().unwrap();
    assert_eq!(reach.len(), 6, "L1 and L2 for 4 KiB, 2 MiB, 1 GiB");
    // "unknown" is null, never 0.
    assert!(reach.iter().all(|r| r["entries"].is_null() || r["entries"].as_u64().unwrap() > 0));
}

/// A small run inside the caches of any CPU: every result validates, keeps
/// its samples and ratios, a results folder is written, and the document
/// warns that the array is read from cache exactly when its own rule says
/// so for the machine the same run read (the last level as measured or
/// plausibly claimed, which moves with the neighbours on a guest).
#[test]
fn small_bandwidth_run_validates_and_writes_a_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("res");
    let size = 1u64 << 20;
    let args = ["bandwidth", "--quiet", "--size", "1MiB", "--distance", "0:64:64", "--repetitions", "2"];
    let o = memperf(&[&args[..], &["--hint", "t0,w", "-o", folder.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("plateau 4k pages") && table.contains("prefetch distance sweep"), "{table}");
    let doc = json(&folder.join("results.json"));
    let bw = &doc["experiments"][0];
    assert_eq!(bw["name"], "bandwidth");
    assert_eq!(bw["valid"], true);
    let results = bw["outcome"]["results"].as_array().unwrap();
    // Each team (1 thread, and all the CPUs this process may use where
    // that is more) × (sum1, sum4, simd + 2 hints × 2 distances + the
    // seven write kernels).
    let teams = bw["outcome"]["placement"].as_array().unwrap().len();
    assert!((1..=2).contains(&teams), "{}", bw["outcome"]["placement"]);
    assert_eq!(results.len(), 14 * teams);
    for r in results {
        assert_eq!(r["checksum_ok"], true);
        assert_eq!(r["samples_s"].as_array().unwrap().len(), 2, "every raw sample is kept");
        assert!(r["bytes_per_s"]["median"].as_f64().unwrap() > 0.0);
        // Prefetch variants carry one ratio to adjacent simd per repetition.
        let ratios = r["ratios_to_simd"].as_array().unwrap().len();
        assert_eq!(ratios, if r["hint"].is_null() { 0 } else { 2 }, "{r}");
    }
    // Plain simd over fragmented memory beside the read array by default,
    // per team: the read array's rate every round, as many rounds as the
    // fragmented array's ratio has pairs (at least the repetitions, at
    // most twice them where the first look left it unresolved).
    assert!(table.contains("fragmented memory: simd over 1MiB"), "{table}");
    let frames = bw["outcome"]["frame_sets"].as_array().expect("fragmented memory by default");
    assert_eq!(frames.len(), teams);
    for f in frames {
        assert_eq!(f["arrays"].as_array().unwrap().len(), 2, "{f}");
        let rounds = f["round_medians_bytes_per_s"].as_array().unwrap().len();
        assert_eq!(f["arrays"][1]["ratio_to_first"]["n"].as_u64(), Some(rounds as u64), "{f}");
        assert!((2..=4).contains(&rounds), "{f}");
    }
    let typed = memperf::model::document_from_json(&std::fs::read_to_string(folder.join("results.json")).unwrap())
        .expect("the document reads back");
    let (llc, _) = typed.machine.sizing_llc();
    assert!(size < llc.0, "no CPU's last level is under 1 MiB, measured or claimed: {llc}");
    let warnings = bw["warnings"].as_array().unwrap();
    let w = warnings.iter().find(|w| w["code"] == "working-set-in-cache").expect("the in-cache warning");
    assert!(w["fix"].as_str().unwrap().contains("--size"), "{w}");
    assert!(w["message"].as_str().unwrap().contains(&llc.to_string()), "the level this run sized from: {w}");
    let svgs: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "svg"))
        .collect();
    assert!(!svgs.is_empty(), "a distance curve is drawn");
}

#[test]
fn writing_into_a_missing_folder_fails_cleanly() {
    let mut args = SMALL.to_vec();
    args.extend(["--kernel", "simd", "--threads", "1", "--json", "/nonexistent-dir/r.json"]);
    let start = std::time::Instant::now();
    let o = memperf(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot write /nonexistent-dir/r.json"), "{}", stderr(&o));
    // Refused before measuring: the bandwidth run would take seconds.
    assert!(!stderr(&o).contains("warning:"), "nothing measured: {}", stderr(&o));
    let _ = start;
}

#[test]
fn hugetlb_pages_reserved_for_the_run_and_given_back() {
    if !is_root() {
        return skip("--reserve-hugepages needs root", "run the tests as root, as CI does");
    }
    let pool = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
    let before = std::fs::read_to_string(pool).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let mut args = SMALL.to_vec();
    args.extend(["--kernel", "simd", "--threads", "1", "--pages", "2m,shm,4k", "--reserve-hugepages"]);
    args.extend(["--json", out.to_str().unwrap()]);
    let o = memperf(&args);
    assert_eq!(std::fs::read_to_string(pool).unwrap(), before, "pool restored");
    if o.status.code() == Some(2) && stderr(&o).contains("fragmented") {
        return skip(stderr(&o).trim(), "free memory, or reserve 2 MiB pages early after boot");
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = json(&out);
    let regions = doc["experiments"][0]["outcome"]["regions"].as_array().unwrap().clone();
    let frac = |name: &str| regions.iter().find(|r| r["requested"] == name).unwrap()["huge_fraction"].as_f64().unwrap();
    assert_eq!(frac("2m"), 1.0);
    assert_eq!(frac("shm"), 1.0);
    assert_eq!(frac("4k"), 0.0);
}

#[test]
fn unsatisfiable_policy_names_the_fix() {
    let free: u64 = std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if free > 0 {
        return skip(
            "1 GiB pages are reserved on this machine",
            "echo 0 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
        );
    }
    let mut args = SMALL.to_vec();
    args.extend(["--pages", "1g", "--kernel", "simd"]);
    let o = memperf(&args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("fix: echo") && err.contains("hugepages-1048576kB/nr_hugepages"), "{err}");
}

#[test]
fn latency_and_tlb_bad_input() {
    let cases: &[(&[&str], &str)] = &[
        (&["latency", "--sizes", "1MiB:4KiB"], "END is below START"),
        (&["latency", "--sizes", "0"], "greater than zero"),
        (&["latency", "--sizes", "64"], "below two cache lines"),
        (&["latency", "--sizes", "4KiB:1MiB:0"], "positive integer"),
        (&["latency", "--chains", "17"], "out of range"),
        (&["latency", "--chains", "0:4"], "out of range"),
        (&["latency", "--chains", "x"], "not a number"),
        (&["tlb", "--max-pages", "0"], "positive integer"),
        (&["tlb", "--pages", "huge"], "unknown page policy"),
    ];
    for (args, needle) in cases {
        let o = memperf(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle) && err.trim_end().lines().count() == 1, "{args:?}: {err}");
    }
}

#[test]
fn small_latency_and_tlb_runs_validate() {
    let o = memperf(&[
        "latency",
        "--quiet",
        "--sizes",
        "4KiB:1MiB",
        "--chains",
        "1,2",
        "--pages",
        "4k,thp",
        "--repetitions",
        "5",
        "--precision",
        "none",
        "--per-mapping",
        "2",
        "--json",
        "-",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let lat = &doc["experiments"][0];
    assert_eq!(lat["valid"], true);
    let points = lat["outcome"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 9 * 2 * 2, "9 sizes × 2 policies × (random, page-local)");
    // The curve's points take the five samples asked for; the largest
    // working set compares the policies, a fresh mapping every two
    // repetitions, looking after 5 and doubling until resolved (20 at
    // the third look).
    let samples = |p: &serde_json::Value| p["sample_latency_ns"].as_array().unwrap().len();
    let largest = |p: &serde_json::Value| p["size_bytes"] == 1 << 20;
    assert!(points.iter().filter(|p| !largest(p)).all(|p| samples(p) == 5), "{points:?}");
    let ratios = lat["outcome"]["ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), 1, "{ratios:?}");
    let r = &ratios[0]["ratio"];
    let looks: Vec<u64> = r["looks"].as_array().unwrap().iter().map(|l| l.as_u64().unwrap()).collect();
    assert!([vec![5], vec![5, 10], vec![5, 10, 20]].contains(&looks), "{r}");
    assert_eq!(r["n"].as_u64(), looks.last().copied(), "{r}");
    // Each look fills whole mappings of two where its count allows.
    let (n, mappings) = (r["n"].as_u64().unwrap(), r["mappings"].as_u64().unwrap());
    assert!(mappings >= n.div_ceil(2) && mappings <= n.div_ceil(2) + looks.len() as u64, "{r}");
    assert!(points.iter().filter(|p| largest(p)).all(|p| samples(p) as u64 == r["n"].as_u64().unwrap()));
    assert!(points.iter().all(|p| p["valid"] == true && p["latency_ns"]["median"].as_f64().unwrap() > 0.0));
    assert_eq!(lat["outcome"]["mlp"].as_array().unwrap().len(), 2 * 2, "2 policies × chains 1, 2");

    let o = memperf(&["tlb", "--quiet", "--max-pages", "256", "--max-bytes", "64MiB", "--json", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tlb = &doc["experiments"][0]["outcome"];
    assert!(tlb["points"].as_array().unwrap().iter().all(|p| p["valid"] == true));
    // 4 KiB pages, and THP pages both at their own stride and at 4 KiB.
    let strides: std::collections::BTreeSet<u64> =
        tlb["points"].as_array().unwrap().iter().map(|p| p["stride_bytes"].as_u64().unwrap()).collect();
    assert_eq!(strides.into_iter().collect::<Vec<_>>(), vec![4096, 2 << 20]);
}

/// `calls` honours its depths, threads and variants, and its shared-library
/// chains load from the binary itself: a copy in another folder works.
#[test]
fn calls_runs_from_a_copied_binary_with_the_cells_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("memperf-copy");
    std::fs::copy(common::exe(), &copy).unwrap();
    // Another test forking at the moment of the copy holds its written file
    // open until that child execs (ETXTBSY): wait for it, briefly.
    // Its own temporary folder, so another memperf's calls (a run beside
    // the tests) cannot leave what this one is checked for.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let run = || {
        Command::new(&copy)
            .args(["calls", "--quiet", "--variants", "plt,got,direct", "--depths", "1,3,8"])
            .args(["--threads", "1", "--repetitions", "2", "--json", "-"])
            .current_dir(dir.path())
            .env("TMPDIR", &tmp)
            .output()
    };
    let mut o = run();
    for _ in 0..50 {
        match &o {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                o = run();
            }
            _ => break,
        }
    }
    let o = o.unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let calls = doc["experiments"].as_array().unwrap().iter().find(|e| e["name"] == "calls").unwrap();
    let points = calls["outcome"]["points"].as_array().unwrap();
    let mut cells: Vec<(String, u64, u64)> = points
        .iter()
        .map(|p| {
            (p["linkage"].as_str().unwrap().to_string(), p["depth"].as_u64().unwrap(), p["threads"].as_u64().unwrap())
        })
        .collect();
    cells.sort();
    let mut want: Vec<(String, u64, u64)> =
        ["direct", "got", "plt"].iter().flat_map(|l| [1, 3, 8].map(|d| (l.to_string(), d, 1))).collect();
    want.sort();
    assert_eq!(cells, want);
    assert!(points.iter().all(|p| p["valid"] == true));
    assert!(!stderr(&o).contains("hugetlb"), "no huge-page warning for call chains: {}", stderr(&o));
    let leftovers: Vec<_> = std::fs::read_dir(&tmp).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert!(leftovers.is_empty(), "temporary library folders left behind: {leftovers:?}");
}

/// `context` measures each save asked for and says which enter the kernel.
#[test]
fn context_reports_every_save_asked_for() {
    let o = memperf(&["context", "--quick", "--quiet", "--ops", "setjmp,sigsetjmp-1", "--threads", "1", "--json", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ctx = doc["experiments"].as_array().unwrap().iter().find(|e| e["name"] == "context").unwrap();
    let saves = ctx["outcome"]["saves"].as_array().unwrap();
    let ops: Vec<&str> = saves.iter().map(|s| s["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["setjmp", "sigsetjmp-1"]);
    assert!(saves.iter().all(|s| s["kernel"]["kind"].is_string() && s["valid"] == true));
    assert!(ctx["outcome"]["lesson"]["removing_heavy_save"]["estimate"].is_number());
}

/// Under a launcher each rank writes its own folder into `-o DIR`, named
/// `<host>-<rank>-<run id>`, with the launch in its document; ranks sharing
/// the host are warned about.
#[test]
fn ranks_under_a_launcher_write_folders_that_cannot_collide() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet");
    let launches: [&[(&str, &str)]; 3] = [
        &[("SLURM_PROCID", "0"), ("SLURM_LOCALID", "0"), ("SLURM_NTASKS_PER_NODE", "2"), ("SLURM_JOB_ID", "77")],
        &[("SLURM_PROCID", "1"), ("SLURM_LOCALID", "1"), ("SLURM_NTASKS_PER_NODE", "2"), ("SLURM_JOB_ID", "77")],
        &[("OMPI_COMM_WORLD_RANK", "2"), ("OMPI_COMM_WORLD_LOCAL_SIZE", "1")],
    ];
    for env in launches {
        let o = command().args(["info", "-o", out.to_str().unwrap()]).envs(env.iter().copied()).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let mut folders: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    folders.sort();
    assert_eq!(folders.len(), 3, "{folders:?}");
    // Each folder's rank from its document (a host name may itself hold
    // "-0-" or "-1-"), and its name from the host and rank.
    let docs: Vec<(String, serde_json::Value)> =
        folders.iter().map(|f| (f.clone(), json(&out.join(f).join("results.json")))).collect();
    for (rank, launcher) in [(0u64, "slurm"), (1, "slurm"), (2, "openmpi")] {
        let found: Vec<&(String, serde_json::Value)> =
            docs.iter().filter(|(_, d)| d["origin"]["rank"] == rank).collect();
        assert_eq!(found.len(), 1, "one folder per rank: {folders:?}");
        let (f, doc) = found[0];
        assert_eq!(doc["origin"]["launcher"], launcher);
        let origin = &doc["origin"];
        let name = memperf::model::launcher::rank_folder(
            origin["hostname"].as_str().unwrap(),
            rank,
            origin["run_id"].as_str().unwrap(),
        );
        assert_eq!(f, &name);
        let shared = doc["warnings"].as_array().unwrap().iter().any(|w| w["code"] == "ranks-share-host");
        assert_eq!(shared, launcher == "slurm", "two Slurm ranks per node share it, one Open MPI rank does not");
        if rank == 0 {
            assert_eq!(doc["origin"]["job_id"], "77");
        }
    }
}

/// A process given one CPU runs every measuring thread on that CPU, even
/// when asked for all threads.
#[test]
fn threads_stay_inside_the_affinity_mask() {
    if Command::new("taskset").arg("-V").output().is_err() {
        return skip("taskset is not installed", "apt-get install util-linux");
    }
    // The last CPU this process may use (not a count: the mask may be {2,3}).
    let cpu = allowed_cpus().into_iter().max().expect("at least one CPU is allowed").to_string();
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("b.json");
    let o = Command::new("taskset")
        .args(["-c", &cpu, common::exe(), "bandwidth", "--quiet", "--kernel", "simd,copy"])
        .args(["--threads", "all", "--size", "8MiB", "--repetitions", "2", "--json", j.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let placement = &json(&j)["experiments"][0]["outcome"]["placement"];
    let cpus: Vec<u64> = placement[0]["cpus"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
    assert_eq!(cpus, [cpu.parse::<u64>().unwrap()], "`all` is every CPU of the mask: one");
    assert_eq!(placement[0]["migrated_samples"], 0);
}

/// The CPUs this process may run on, from its affinity mask.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, and sched_getaffinity
    // writes at most its size into it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is this thread; the size is the set's.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    assert_eq!(rc, 0, "sched_getaffinity");
    // SAFETY: CPU_ISSET reads within the set for any index below CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

/// Completions and man pages come from the clap definitions: every
/// subcommand is in them, the bash script parses, and a bad shell is bad
/// input.
#[test]
fn completions_and_man_pages_cover_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let o = memperf(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let script = String::from_utf8_lossy(&o.stdout);
        for sub in ["loaded-latency", "numa", "bandwidth", "completions"] {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
        if shell == "bash" {
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("memperf.bash");
            std::fs::write(&f, script.as_bytes()).unwrap();
            let check = Command::new("bash").arg("-n").arg(&f).output().unwrap();
            assert!(check.status.success(), "bash -n: {}", stderr(&check));
        }
    }
    let e = memperf(&["completions", "tcsh"]);
    assert_eq!(e.status.code(), Some(2));
    assert!(stderr(&e).contains("use bash, zsh, fish"), "{}", stderr(&e));
    let page = memperf(&["man"]);
    let roff = String::from_utf8_lossy(&page.stdout);
    assert!(roff.starts_with(".ie") && page.status.success());
    for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES", ".SH EXAMPLES"] {
        assert!(roff.contains(section), "memperf(1) lacks {section}");
    }
    for word in ["MEMPERF_REGIONS", "MEMPERF_EVENTS", "MEMPERF_STATE_DIR", "journal.jsonl", "\\fB130\\fR"] {
        assert!(roff.contains(word), "memperf(1) does not mention {word}");
    }
    let dir = tempfile::tempdir().unwrap();
    let o = memperf(&["man", "-o", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let numa = std::fs::read_to_string(dir.path().join("memperf-numa.1")).unwrap();
    assert!(numa.contains(".TH memperf-numa 1") && numa.contains("\\-\\-repetitions"), "{numa}");
    assert!(numa.contains(".SH \"EXIT STATUS\"") && numa.contains("\\fBmemperf\\fR(1)"), "{numa}");
    assert!(dir.path().join("memperf-loaded-latency.1").exists() && dir.path().join("memperf.1").exists());
}

/// A Python with the Prometheus client, whose OpenMetrics parser is the
/// real one (`.ci/run` installs it).
fn python_with_prometheus_client() -> Option<&'static str> {
    let ok = Command::new("python3").args(["-c", "import prometheus_client"]).output().ok()?.status.success();
    ok.then_some("python3")
}

/// `--openmetrics` writes the headlines in a form the Prometheus client's
/// OpenMetrics parser accepts, with units in the names and host and rank
/// labels; the figure read back is the document's, in bytes per second.
#[test]
fn openmetrics_output_parses_with_the_prometheus_client() {
    let dir = tempfile::tempdir().unwrap();
    let (metrics, doc) = (dir.path().join("m.prom"), dir.path().join("d.json"));
    let o = command()
        .args(SMALL)
        .args(["--kernel", "simd,copy", "--threads", "1"])
        .args(["--openmetrics", metrics.to_str().unwrap(), "--json", doc.to_str().unwrap()])
        .env("SLURM_PROCID", "4")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&metrics).unwrap();
    assert!(text.ends_with("# EOF\n"));
    let Some(py) = python_with_prometheus_client() else {
        return skip("the parse check needs python3 with prometheus_client", "pip install prometheus_client");
    };
    let script = r#"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in f.samples:
        print(f.name, f.unit, s.labels.get("kernel", "-"), s.labels["host"], s.labels["rank"], repr(s.value))
"#;
    let parsed = Command::new(py).args(["-c", script, metrics.to_str().unwrap()]).output().unwrap();
    assert!(parsed.status.success(), "the parser refused it: {}\n{text}", stderr(&parsed));
    let lines = String::from_utf8_lossy(&parsed.stdout).into_owned();
    let read = lines.lines().find(|l| l.starts_with("memperf_read_bandwidth_bytes_per_second ")).expect(&lines);
    let f: Vec<&str> = read.split(' ').collect();
    assert_eq!((f[1], f[2], f[4]), ("bytes_per_second", "simd", "4"), "{read}");
    let d = json(&doc);
    let simd =
        d["experiments"][0]["outcome"]["results"].as_array().unwrap().iter().find(|r| r["kernel"] == "simd").unwrap();
    let want = simd["bytes_per_s"]["median"].as_f64().unwrap();
    assert!((f[5].parse::<f64>().unwrap() / want - 1.0).abs() < 1e-12, "{read} vs {want}");
    assert!(lines.contains("memperf_write_bandwidth_bytes_per_second bytes_per_second copy"), "{lines}");
}

/// `--csv` writes every table tidily: one row per raw sample of each
/// bandwidth variant; and the pandas example loads it with the document
/// and draws its plot, where Python has pandas and matplotlib.
#[test]
fn the_tidy_csv_has_a_row_per_sample_and_the_pandas_example_plots_it() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, doc) = (dir.path().join("r.csv"), dir.path().join("r.json"));
    let o = memperf(
        &[
            SMALL,
            &[
                "--kernel",
                "simd,copy",
                "--threads",
                "1",
                "--csv",
                csv.to_str().unwrap(),
                "--json",
                doc.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let results: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[col("table")] == "results")
        .collect();
    assert_eq!(results.len(), 2 * 2, "two variants × two samples");
    assert!(results.iter().any(|r| r[col("kernel")] == "copy" && r[col("bytes_written_per_element")] == "8"));
    let ok =
        Command::new("python3").args(["-c", "import pandas, matplotlib"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        return skip("the pandas example needs python3 with pandas and matplotlib", "pip install pandas matplotlib");
    }
    let png = dir.path().join("bw.png");
    let example = repo("examples/pandas_plot.py");
    let o = Command::new("python3").arg(example).args([&doc, &csv, &png]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("4 samples of 2 variants"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 1000, "a PNG was drawn");
}

/// `stat --csv`: task-clock is in ns, page faults are counts, wall time in
/// seconds; each unit is the event's own.
#[test]
fn stat_csv_gives_each_event_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let o = memperf(&["stat", "-e", "task-clock,page-faults", "--csv", csv.to_str().unwrap(), "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    let unit = |name: &str| {
        text.lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|r| r[0] == "total" && r[3] == name)
            .map(|r| r[5].to_string())
            .unwrap_or_else(|| panic!("no total row for {name}: {text}"))
    };
    assert_eq!(unit("task-clock"), "ns");
    assert_eq!(unit("page-faults"), "count");
    assert!(text.lines().any(|l| l.starts_with("run,,,wall,") && l.ends_with(",s,measured")), "{text}");
}

/// Every measuring command has `--openmetrics`: `stat` writes the run's
/// figures, `hugepages` each arm's wall time, in families named from
/// their ids and closed by `# EOF`.
#[test]
fn stat_and_hugepages_write_openmetrics() {
    let dir = tempfile::tempdir().unwrap();
    let (s, h) = (dir.path().join("s.om"), dir.path().join("h.om"));
    let o = memperf(&["stat", "--openmetrics", s.to_str().unwrap(), "--", "true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&s).unwrap();
    assert!(text.contains("\nmemperf_stat_wall_time_seconds{") && text.ends_with("# EOF\n"), "{text}");
    let o = memperf(&["hugepages", "-n", "1", "--openmetrics", h.to_str().unwrap(), "--", "true"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let text = std::fs::read_to_string(&h).unwrap();
    for arm in ["without", "thp"] {
        assert!(text.contains(&format!(",arm=\"{arm}\"}} ")), "{text}");
    }
    assert!(text.ends_with("# EOF\n"), "{text}");
}

/// `memperf report` writes next to its input, never into the current
/// folder by surprise: a results folder's report into it, any other
/// document into `NAME-report/` beside it, a re-analysis into
/// `reanalysed/` without touching the document it read.
#[test]
fn report_writes_beside_its_input_and_never_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = repo("tests/data/machines/amd-epyc-zen4-kvm-2vcpu/run-quick.json");
    let results = dir.path().join("run");
    std::fs::create_dir(&results).unwrap();
    std::fs::copy(&recorded, results.join("results.json")).unwrap();
    std::fs::copy(&recorded, dir.path().join("regions.json")).unwrap();
    let before = std::fs::read(results.join("results.json")).unwrap();
    let run_in = |args: &[&str]| common::memperf_in(args, dir.path());
    let o = run_in(&["report", "regions.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir.path().join("regions-report/report.html").is_file());
    assert!(!dir.path().join("results.json").exists() && !dir.path().join("report.html").exists());
    let o = run_in(&["report", "--reanalyze", "run"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(results.join("reanalysed/report.html").is_file());
    assert_eq!(std::fs::read(results.join("results.json")).unwrap(), before, "the document read is untouched");
    let o = run_in(&["report", "run/results.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(results.join("report.html").is_file());
}

/// `info` counts nothing, so it does not warn about the PMU: its table
/// says whether counters open (the README: the PMU is said where counters
/// are used).
#[test]
fn info_does_not_warn_about_the_pmu() {
    let o = memperf(&["info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("hardware counters unavailable"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("counters"), "the table still says it");
}

/// `memperf gpu` where there is no GPU (no NVIDIA driver, or no device):
/// one line naming what is missing, exit 2, within 5 s, and no file; where
/// there is one, a valid document with each device's copies. In `run`, its
/// record says why nothing was measured and the suite goes on (exit 0).
#[test]
fn gpu_refuses_in_one_line_without_a_gpu_and_the_suite_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gpu.json");
    let started = std::time::Instant::now();
    let o = memperf(&["gpu", "--quick", "--quiet", "--size", "64MiB", "--json", out.to_str().unwrap()]);
    let err = stderr(&o);
    if o.status.code() == Some(0) {
        let doc = json(&out);
        let g = &doc["experiments"][0]["outcome"];
        assert!(!g["devices"].as_array().unwrap().is_empty() && g["copies"].as_array().unwrap().len() >= 5, "{g}");
    } else {
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.starts_with("memperf: error: no GPU to measure: "), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(started.elapsed().as_secs_f64() < 5.0, "{:?}", started.elapsed());
        assert!(!out.exists(), "a refused run left a file");
        let suite = dir.path().join("suite.json");
        let o = memperf(&["run", "--only", "gpu", "--quiet", "--json", suite.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let doc = json(&suite);
        let rec = doc["experiments"].as_array().unwrap().iter().find(|e| e["name"] == "gpu").expect("a gpu record");
        let why = rec["outcome"]["not_measured"].as_str().unwrap();
        assert!(why.starts_with("not measured — no GPU: "), "{why}");
    }
}
