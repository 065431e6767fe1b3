//! memperf on aarch64, commands run whole in the test process: every read
//! and write kernel with its checksum, SVE named with its vector length
//! where the CPU has it and NEON where not, prefetch-fault's cells without
//! a fault, and the emulation notice. `.ci/aarch64.sh` runs the library's
//! tests under qemu-user once per emulated CPU (QEMU_CPU); each command
//! here is `main`'s path less its exit-code mapping, which the x86-64
//! tests run. Under emulation nothing here judges a figure.

use super::dispatch::run;
use super::Cli;
use crate::model::document::Document;
use clap::Parser;

/// The vector ISA memperf must pick on the CPU qemu emulates (QEMU_CPU,
/// which qemu-user passes on); `None` on real hardware, whatever it is.
fn expected_isa() -> Option<&'static str> {
    let cpu = std::env::var("QEMU_CPU").ok()?;
    Some(match cpu.as_str() {
        c if c.starts_with("cortex-a72") => "neon",
        c if c.ends_with("sve-default-vector-length=16") => "sve-128",
        c if c.ends_with("sve-default-vector-length=256") => "sve-2048",
        _ => return None,
    })
}

/// `memperf ARGS --json FILE` in this process: its document.
fn document(args: &[&str]) -> Document {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let argv = ["memperf"].iter().chain(args).copied().chain(["--json", json.to_str().unwrap()]);
    let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert_eq!(run(cli).unwrap_or_else(|e| panic!("{args:?}: {e}")), 0, "{args:?}");
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The experiment's outcome of a one-experiment document, as JSON.
fn outcome(doc: &Document) -> serde_json::Value {
    serde_json::to_value(&doc.experiments[0]).unwrap()["outcome"].clone()
}

#[test]
fn every_kernel_holds_its_checksum_on_this_cpus_vector_isa() {
    let kernels = ["simd", "simd-prefetch", "store-nt", "store", "copy", "copy-nt", "triad", "update", "mix-3:1"];
    for kernel in kernels {
        let args = ["bandwidth", "--quiet", "--kernel", kernel, "--size", "4MiB", "--threads", "1"];
        let doc = document(&[&args[..], &["--repetitions", "2"]].concat());
        let outcome = outcome(&doc);
        let rows = outcome["results"].as_array().unwrap();
        assert!(!rows.is_empty(), "{kernel}");
        for r in rows {
            assert_eq!(r["checksum_ok"], true, "{kernel}: {r}");
            if let Some(isa) = expected_isa() {
                assert_eq!(r["isa"], isa, "{kernel}");
            }
        }
    }
}

#[test]
fn prefetch_fault_runs_every_cell_without_a_fault() {
    let outcome = outcome(&document(&["prefetch-fault", "--quick", "--quiet"]));
    let cells = outcome["cells"].as_array().expect("cells");
    assert!(cells.iter().any(|c| c["instruction"] == "prfm pldl1keep"), "{cells:?}");
    assert!(cells.iter().all(|c| c["instruction"].as_str().is_some_and(|i| i == "none" || i.starts_with("prfm"))));
}

#[test]
fn emulation_and_unchecked_figures_are_said() {
    let doc = document(&["info", "--quiet"]);
    let doc_json = serde_json::to_value(&doc).unwrap();
    assert_eq!(doc_json["machine"]["arch"], "aarch64");
    let codes: Vec<&str> = doc_json["experiments"][0]["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(doc_json["warnings"].as_array().into_iter().flatten())
        .filter_map(|w| w["code"].as_str())
        .collect();
    let emulated = std::env::var_os("QEMU_CPU").is_some();
    assert_eq!(emulated, doc.machine.emulation.is_some(), "{}", doc_json["machine"]);
    if emulated {
        assert!(codes.contains(&"emulated"), "{codes:?}");
    }
    assert!(codes.contains(&"aarch64-not-yet-checked"), "{codes:?}");
    assert!(crate::report::text::render(&doc).contains("vector isa"));
}
