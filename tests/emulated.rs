//! memperf on aarch64, run end to end: every read and write kernel with its
//! checksum, SVE where the CPU has it (named with its vector length) and
//! NEON where it does not, prefetch-fault's cells without a fault, and the
//! emulation notice. On an x86-64 host this file is empty: `.ci/run` builds
//! it for aarch64 and runs it under qemu-user, which also runs each memperf
//! it starts, as one emulated CPU after another. Under emulation nothing
//! here judges a figure.
#![cfg(target_arch = "aarch64")]

mod common;
use common::*;

/// The emulated CPUs and the vector ISA memperf must pick on each; `None`
/// where memperf runs on real Arm hardware (its own CPU, whatever it is).
fn cpus() -> Vec<(Option<&'static str>, &'static str)> {
    let emulated = std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| !c.contains("CPU implementer"));
    if !emulated {
        return vec![(None, "")];
    }
    vec![
        (Some("max,sve-default-vector-length=16"), "sve-128"),
        (Some("max,sve-default-vector-length=256"), "sve-2048"),
        (Some("cortex-a72"), "neon"),
    ]
}

/// The CPU single-CPU checks use: SVE at 128 bits under emulation, the
/// machine's own on hardware.
fn one_cpu() -> Option<&'static str> {
    cpus().into_iter().find(|c| c.0.is_none() || c.1 == "sve-128").and_then(|c| c.0)
}

/// memperf with `args` on `cpu` (under qemu-aarch64 when emulated).
fn on(cpu: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut c = match cpu {
        Some(cpu) => {
            let mut c = std::process::Command::new("qemu-aarch64");
            c.args(["-L", "/usr/aarch64-linux-gnu", "-cpu", cpu, exe()]);
            c
        }
        None => std::process::Command::new(exe()),
    };
    c.env("MEMPERF_RESULTS", no_saved_results()).args(args).output().expect("memperf runs")
}

/// The end-to-end run on two CPUs: SVE at 2048 bits (the longest vector,
/// the most of each array in tails) and NEON. Both SVE lengths' kernels
/// are checked by the library's tests, run once per emulated CPU
/// (.ci/aarch64.sh).
#[test]
fn every_kernel_holds_its_checksum_with_sve_and_with_neon() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bw.json");
    let kernels = ["simd", "simd-prefetch", "store-nt", "store", "copy", "copy-nt", "triad", "update", "mix-3:1"];
    let all = cpus();
    for &(cpu, isa) in all.iter().filter(|c| c.0.is_none() || c.1 == "sve-2048" || c.1 == "neon") {
        for kernel in kernels {
            let args = ["bandwidth", "--quiet", "--kernel", kernel, "--size", "4MiB", "--threads", "1"];
            let o = on(cpu, &[&args[..], &["--repetitions", "2", "--json", json.to_str().unwrap()]].concat());
            assert_eq!(o.status.code(), Some(0), "{cpu:?} {kernel}: {}", stderr(&o));
            let doc = read_json(&json);
            let outcome = &doc["experiments"][0]["outcome"];
            let rows = outcome["results"].as_array().unwrap();
            assert!(!rows.is_empty(), "{cpu:?} {kernel}");
            for r in rows {
                assert_eq!(r["checksum_ok"], true, "{cpu:?} {kernel}: {r}");
                if !isa.is_empty() && !kernel.starts_with("sum") {
                    assert_eq!(r["isa"], isa, "{cpu:?} {kernel}");
                }
            }
        }
    }
}

#[test]
fn prefetch_fault_runs_every_cell_without_a_fault() {
    let cpu = one_cpu();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("pf.json");
    let o = on(cpu, &["prefetch-fault", "--quick", "--quiet", "--json", json.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let outcome = &read_json(&json)["experiments"][0]["outcome"];
    let cells = outcome["cells"].as_array().expect("cells");
    assert!(cells.iter().any(|c| c["instruction"] == "prfm pldl1keep"), "{cells:?}");
    assert!(cells.iter().all(|c| c["instruction"].as_str().is_some_and(|i| i == "none" || i.starts_with("prfm"))));
}

#[test]
fn emulation_and_unchecked_figures_are_said() {
    let cpu = one_cpu();
    let o = on(cpu, &["info", "--json", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["machine"]["arch"], "aarch64");
    let codes: Vec<&str> = doc["experiments"][0]["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(doc["warnings"].as_array().into_iter().flatten())
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert_eq!(cpu.is_some(), doc["machine"]["emulation"].is_string(), "{}", doc["machine"]);
    if cpu.is_some() {
        assert!(codes.contains(&"emulated"), "{codes:?}");
    }
    assert!(codes.contains(&"aarch64-not-yet-checked"), "{codes:?}");
    let text = on(cpu, &["info"]);
    assert!(stdout(&text).contains("vector isa"), "{}", stdout(&text));
}
