//! `memperf curves` as a user runs it: the quick family (four mixes, each
//! from idle to saturation with its points, knee and checks) in a document
//! the schema accepts and a CSV with Mess's columns; and one usable CPU,
//! which measures nothing and says so.

mod common;

use common::{command, read_json, schema_errors};
use std::process::Command;
use std::sync::Mutex;

/// The tests of this file take turns: a second `memperf` on CPU 0 would
/// take the chaser's CPU from the measuring one, and its figures (not its
/// checks) would be a neighbour's.
static TURN: Mutex<()> = Mutex::new(());

/// The curves outcome of a `curves` document.
fn outcome(doc: &serde_json::Value) -> &serde_json::Value {
    let e = doc["experiments"].as_array().unwrap().iter().find(|e| e["name"] == "curves").expect("a curves record");
    &e["outcome"]
}

#[test]
fn the_quick_family_has_four_mixes_each_from_idle_to_saturation() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("c.json"), dir.path().join("c.csv"));
    let o = command()
        .args(["curves", "--quick", "--quiet", "--json", json.to_str().unwrap(), "--csv", csv.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = read_json(&json);
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let out = outcome(&doc);
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        assert!(out["not_measured"].as_str().unwrap().contains("curves need 2 CPUs"), "{out}");
        return;
    }
    let curves = out["curves"].as_array().unwrap();
    let mixes: Vec<String> = curves.iter().map(|c| mix(&c["mix"])).collect();
    assert_eq!(mixes, ["100:0", "3:1", "1:1", "0:100nt"]);
    let mut rows = 0;
    for c in curves {
        let points = c["points"].as_array().unwrap();
        rows += points.len();
        assert!(points.len() >= 8, "{}: {} points", mix(&c["mix"]), points.len());
        assert!(points[0]["pause_ns"].is_null(), "idle first");
        assert!(points.iter().all(|p| p["valid"] == true), "every block and chase validated");
        let bw: Vec<f64> = points.iter().map(|p| p["bytes_per_s"]["median"].as_f64().unwrap()).collect();
        assert!(bw.windows(2).skip(1).all(|w| w[0] <= w[1]), "loaded points by rising bandwidth: {bw:?}");
        assert!(c["saturated_bytes_per_s"].as_f64().unwrap() > bw[0], "traffic adds bandwidth to the idle chase");
        assert!(["found", "none-below-saturation"].contains(&c["knee"]["kind"].as_str().unwrap()), "{}", c["knee"]);
    }
    // The second looks: the idle chase, the read traffic at saturation
    // against a plain read, and against itself at the run's end (drift).
    let checks = out["consistency"].as_array().unwrap();
    assert_eq!(checks.len(), 3, "{checks:?}");
    assert!(out["host_read_bytes_per_s"].as_f64().unwrap() > 0.0);
    assert!(checks.iter().all(|c| c["ratio"].as_f64().unwrap().is_finite()));
    assert_eq!(out["writes_cost"].as_array().unwrap().len(), 3, "3:1, 1:1 and 0:100nt against 100:0");
    // Memory-controller counters where this machine has them, else why not.
    let counted = out["counted_traffic"].as_str().unwrap();
    assert!(counted.starts_with("not measured — ") || counted.starts_with("counted by "), "{counted}");
    // The CSV: Mess's columns first, one row per point.
    let text = std::fs::read_to_string(&csv).unwrap();
    let header = text.lines().next().unwrap();
    assert!(header.starts_with(
        "read_pct_rounded,pause,bandwidth_mean,bandwidth_std,rd_percentage_actual_mean,latency_mean,latency_std,"
    ));
    assert_eq!(text.lines().count(), 1 + rows);
    assert!(text.lines().skip(1).all(|l| l.split(',').count() == header.split(',').count()), "{text}");
}

/// `R:W` with `nt` where the mix's stores are non-temporal.
fn mix(m: &serde_json::Value) -> String {
    format!("{}:{}{}", m["reads"], m["writes"], if m["non_temporal"] == true { "nt" } else { "" })
}

/// Under `taskset -c 0` no CPU is left for traffic: exit 0, nothing
/// measured, and the document and the warning say why.
#[test]
fn one_usable_cpu_measures_no_curve_and_says_so() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if Command::new("taskset").arg("--version").output().is_err() {
        common::skip("needs taskset to run on one CPU", "apt-get install util-linux");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let o = Command::new("taskset")
        .args(["-c", "0", common::exe(), "curves", "--quick", "--quiet", "--mixes", "100:0", "--json"])
        .arg(&json)
        .env("MEMPERF_RESULTS", common::no_saved_results())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("not measured — curves need 2 CPUs"), "{err}");
    let doc = read_json(&json);
    let out = outcome(&doc);
    assert!(out["not_measured"].as_str().unwrap().contains("curves need 2 CPUs"), "{out}");
    assert_eq!(out["curves"].as_array().unwrap().len(), 0);
}
