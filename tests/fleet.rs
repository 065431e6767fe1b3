//! `memperf merge` as a user meets it: a fleet of documents made from the
//! fixture (one host with half the bandwidth, one with another CPU), the
//! fleet document against its schema, the outlier found, the groups kept
//! apart, the references' exit status, CSV and OpenMetrics read back, and
//! bad input refused by name with nothing written.

mod common;

use common::{memperf, read_json, stderr};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn fixture() -> Value {
    read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minimal-bandwidth.json"))
}

/// A document of host `name` whose headline bandwidth is `gbps`.
fn doc(name: &str, gbps: f64, cpu: &str) -> Value {
    let mut d = fixture();
    d["origin"]["hostname"] = name.into();
    d["origin"]["run_id"] = format!("{name}-1-1").into();
    d["machine"]["cpu"]["model_name"] = cpu.into();
    d["experiments"][0]["outcome"]["headlines"][0]["simd_bytes_per_s"] = (gbps * 1e9).into();
    d
}

fn write(dir: &Path, name: &str, v: &Value) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(dir.join(name).join("results.json"), serde_json::to_string(v).unwrap()).unwrap();
}

fn fleet_schema_errors(v: &Value) -> Vec<String> {
    common::errors_against("fleet.schema.json", v)
}

/// The one-thread read headline, by its key (its name says its size).
const HEADLINE: &str = "bandwidth.read{kernel=simd,memory=not-verified,pages=4k,threads=1}";

#[test]
fn merge_flags_the_bad_host_keeps_cpus_apart_and_checks_references() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    for (name, gbps, cpu) in
        [("n1", 40.0, "EPYC"), ("n2", 41.0, "EPYC"), ("n3", 39.0, "EPYC"), ("n4", 20.0, "EPYC"), ("x1", 90.0, "Xeon")]
    {
        write(&runs.join("deep"), name, &doc(name, gbps, cpu));
    }
    let reference = tmp.path().join("ref.json");
    std::fs::write(&reference, format!(r#"{{"*": {{"{HEADLINE}": [38.0, -0.1, null, "GB/s"]}}}}"#)).unwrap();
    let out = tmp.path().join("fleet");
    let (csv, prom) = (tmp.path().join("f.csv"), tmp.path().join("f.prom"));
    let o = memperf(&[
        "merge",
        runs.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--reference",
        reference.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--openmetrics",
        prom.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "n4 fails its reference: {}", stderr(&o));
    let f = read_json(&out.join("fleet.json"));
    assert!(fleet_schema_errors(&f).is_empty(), "{:#?}", fleet_schema_errors(&f));
    let groups = f["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "two CPUs, two groups");
    let epyc = groups.iter().find(|g| g["cpu"].as_str().unwrap().contains("EPYC")).unwrap();
    let outliers = epyc["outliers"].as_array().unwrap();
    assert_eq!(outliers.len(), 1, "{outliers:#?}");
    assert_eq!((outliers[0]["host"].as_str(), outliers[0]["rule"].as_str()), (Some("n4"), Some("robust")));
    assert_eq!(outliers[0]["direction"], "worse");
    let xeon = groups.iter().find(|g| g["cpu"].as_str().unwrap().contains("Xeon")).unwrap();
    assert!(xeon["outliers"].as_array().unwrap().is_empty(), "90 GB/s on another CPU is not compared with 40");
    let verdict: Vec<(String, bool)> = f["reference"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["host"].as_str().unwrap().to_string(), h["passed"].as_bool().unwrap()))
        .collect();
    assert_eq!(verdict.iter().filter(|v| !v.1).map(|v| v.0.as_str()).collect::<Vec<_>>(), ["n4"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("outlier (robust, worse): n4") && text.contains("n4: FAIL"), "{text}");
    assert_eq!(std::fs::read_to_string(out.join("fleet.txt")).unwrap(), text);
    let rows: Vec<String> = std::fs::read_to_string(&csv).unwrap().lines().map(String::from).collect();
    assert_eq!(rows[0], "host,rank,cpu,headline,key,unit,value,outlier,started_utc");
    let n4 = rows.iter().find(|r| r.starts_with("n4,")).unwrap();
    assert!(n4.contains(",20,robust,"), "{n4}");
    let prom = std::fs::read_to_string(&prom).unwrap();
    for h in ["n1", "n2", "n3", "n4", "x1"] {
        assert!(prom.contains(&format!("host=\"{h}\"")), "{h} missing from the OpenMetrics");
    }
    assert!(prom.ends_with("# EOF\n"));
    // Without the reference, the same fleet exits 0.
    let o = memperf(&["merge", runs.to_str().unwrap(), "-o", tmp.path().join("f2").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn bad_input_is_refused_by_name_and_nothing_is_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    write(&runs, "a", &doc("a", 40.0, "EPYC"));
    write(&runs, "b", &doc("b", 40.0, "EPYC"));
    std::fs::create_dir_all(runs.join("c")).unwrap();
    std::fs::write(runs.join("c/results.json"), "{\"schema_version\": 3, \"build\": ").unwrap();
    let out = tmp.path().join("fleet");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![runs.display().to_string()], "c/results.json"),
        (vec![tmp.path().join("nothing").display().to_string()], "nothing"),
    ];
    for (paths, needle) in cases {
        let mut args = vec!["merge".to_string()];
        args.extend(paths);
        args.extend(["-o".to_string(), out.display().to_string()]);
        let o = memperf(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(needle) && e.lines().count() == 1, "{e}");
        assert!(!out.exists(), "nothing written on bad input");
    }
    std::fs::remove_dir_all(runs.join("c")).unwrap();
    let mut old = doc("c", 40.0, "EPYC");
    old["schema_version"] = 99.into();
    write(&runs, "c", &old);
    let o = memperf(&["merge", runs.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("schema_version 99") && stderr(&o).contains("c/results.json"), "{}", stderr(&o));
    write(&runs, "c", &doc("a", 41.0, "EPYC"));
    let o = memperf(&["merge", runs.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the same run (a-1-1 of a)"), "{}", stderr(&o));
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = memperf(&["merge", empty.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no memperf result document"), "{}", stderr(&o));
    assert!(!out.exists());
    let o = memperf(&["merge", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "no documents at all");
}

/// The ReFrame check in contrib/reframe loads, runs memperf, passes its
/// sanity check and reads each performance figure memperf wrote in its
/// OpenMetrics: the largest sample of the family, exactly; a figure memperf
/// withheld (one it could not resolve on a moving host) is one ReFrame
/// says it skipped, never a value. Its references are placeholders, so
/// only the extraction is asserted, not the pass. Runs where ReFrame is
/// installed (`.ci/run` installs reframe-hpc).
#[test]
fn the_reframe_check_runs_memperf_and_reads_its_figures() {
    if !Command::new("reframe").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return common::skip("ReFrame is not installed", "pip install reframe-hpc; .ci/run installs it");
    }
    let dir = tempfile::tempdir().unwrap();
    let check = common::repo("contrib/reframe/memperf_check.py");
    let o = Command::new("reframe")
        .arg("-c")
        .arg(&check)
        .args(["-r", "--keep-stage-files", "-S", &format!("executable={}", common::exe())])
        .env("MEMPERF_RESULTS", common::no_saved_results())
        .current_dir(dir.path())
        .env("RFM_REPORT_FILE", dir.path().join("report.json"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Ran 1/1 test case(s)"), "{out}\n{}", stderr(&o));
    assert!(!out.contains("sanity error"), "{out}");
    let prom = find_file(&dir.path().join("stage"), "memperf.prom").unwrap_or_else(|| panic!("no memperf.prom: {out}"));
    let prom = std::fs::read_to_string(prom).unwrap();
    let families = [
        ("read_bandwidth", "memperf_read_bandwidth_bytes_per_second{", &["pages=\"4k", "kernel=\"simd"][..]),
        ("dram_latency", "memperf_latency_random_seconds{", &["pages=\"4k"][..]),
        ("loaded_latency_saturated", "memperf_loaded_latency_saturated_latency_seconds{", &[][..]),
    ];
    for (perf, family, labels) in families {
        let written = prom
            .lines()
            .filter(|l| l.starts_with(family) && labels.iter().all(|x| l.contains(x)))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let line = out.lines().find(|l| l.contains(&format!("P: {perf}: ")));
        match (written, line) {
            (Some(want), Some(line)) => {
                let got: f64 = line.split(": ").nth(2).unwrap().split(' ').next().unwrap().parse().unwrap();
                assert!(got > 0.0 && (got / want - 1.0).abs() < 1e-9, "{perf}: {got} read, {want} written");
            }
            (None, None) => {
                assert!(out.contains(&format!("skipping evaluation of performance variable '{perf}'")), "{out}")
            }
            _ => panic!("{perf}: memperf wrote {written:?}, ReFrame read {line:?}\n{out}\n{prom}"),
        }
    }
}

/// The first file named `name` under `dir`, depth first.
fn find_file(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = find_file(&p, name) {
                return Some(f);
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
    }
    None
}

/// Five daily runs of one host losing 1 GB/s a day, beside two other
/// hosts: merged as a series (each run's value in time order, the spread,
/// the drift: worse, Kendall's exact p = 2/120), the fleet comparing the
/// host's newest run, the CSV holding a row per run.
#[test]
fn runs_of_one_host_merge_as_a_series_with_their_drift() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    for day in 0..5 {
        let mut d = doc("s", 40.0 - day as f64, "EPYC");
        d["origin"]["run_id"] = format!("s-{day}").into();
        d["origin"]["started_utc"] = format!("2026-11-{:02}T08:00:00Z", 20 + day).into();
        write(&runs, &format!("s{day}"), &d);
    }
    write(&runs, "a", &doc("a", 40.0, "EPYC"));
    write(&runs, "b", &doc("b", 39.0, "EPYC"));
    let out = tmp.path().join("fleet");
    let csv = tmp.path().join("fleet.csv");
    let o = memperf(&["merge", runs.to_str().unwrap(), "-o", out.to_str().unwrap(), "--csv", csv.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let f = read_json(&out.join("fleet.json"));
    assert!(fleet_schema_errors(&f).is_empty(), "{:#?}", fleet_schema_errors(&f));
    assert_eq!(f["hosts"].as_array().unwrap().len(), 3, "the series stands in the fleet once");
    let s = &f["series"][0];
    assert_eq!(s["host"], "s");
    assert_eq!(s["runs"].as_array().unwrap().len(), 5);
    assert_eq!(s["runs"][0]["started_utc"], "2026-11-20T08:00:00Z");
    let bw = s["figures"].as_array().unwrap().iter().find(|x| x["key"] == HEADLINE).expect("the bandwidth");
    let values: Vec<f64> = bw["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(values.iter().map(|v| v.round()).collect::<Vec<_>>(), vec![40.0, 39.0, 38.0, 37.0, 36.0]);
    assert_eq!(bw["drift"]["kind"], "tested");
    assert_eq!(bw["drift"]["trend"], true);
    assert_eq!(bw["drift"]["worse"], true);
    assert!((bw["drift"]["p"].as_f64().unwrap() - 2.0 / 120.0).abs() < 1e-9, "{}", bw["drift"]);
    assert!((bw["drift"]["pct_per_day"].as_f64().unwrap() + 100.0 / 38.0).abs() < 1e-6, "{}", bw["drift"]);
    // The group compares the newest run: 36 GB/s.
    let newest = f["hosts"].as_array().unwrap().iter().find(|h| h["id"] == "s").unwrap();
    assert_eq!(newest["run_id"], "s-4");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("s over 5 runs, 2026-11-20T08:00:00Z to 2026-11-24T08:00:00Z"), "{text}");
    // 4 GB/s lost over 4 days, of a median of 38: −10.5%.
    assert!(text.contains("-10.5% over 4.0 days, worse (Kendall p = 0.017)"), "{text}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = csv.lines().filter(|l| l.starts_with("s,") && l.contains(HEADLINE)).collect();
    assert_eq!(rows.len(), 5, "{csv}");
    assert!(rows.iter().any(|r| r.ends_with(",2026-11-20T08:00:00Z")), "{csv}");
}
