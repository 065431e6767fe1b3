//! The result document: the contract between measuring and rendering.
//!
//! Every table, plot, HTML page and comparison is rendered from a
//! [`Document`] alone. It carries `schema_version`, the memperf version and
//! git revision, the command line, host identity and run id (so fleets can
//! be merged), the machine fingerprint, and for each experiment its exact
//! parameters, raw samples, warnings (each with its fix) and validity.
//! JSON keys carry their unit (`bytes_per_s`, `latency_ns`).

use crate::error::{Error, Result};
use crate::machine::Fingerprint;
use crate::outcome::Outcome;
use serde::{Deserialize, Serialize};

/// Version 2: outcomes are typed and tagged by experiment.
pub const SCHEMA_VERSION: u32 = 3;

/// The oldest version [`Document::from_json`] still reads, by upgrading it:
/// version 2 had read kernels only in `bandwidth`, so each of its results
/// moved 8 bytes read per element and its bus bytes were its bytes.
pub const OLDEST_READABLE_VERSION: u32 = 2;

/// A condition that weakens or limits a result, and what to do about it,
/// as rendered from the catalogue ([`crate::Caution`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warning {
    /// Stable identifier, e.g. `no-pmu`, `noisy`, `thp-partial`.
    #[schemars(regex(pattern = r"^[a-z0-9-]+$"))]
    pub code: String,
    #[schemars(length(min = 1))]
    pub message: String,
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Completed,
    /// The machine could not run it (reason in `skip_reason`).
    Skipped,
    /// Interrupted by the user before it finished.
    Interrupted,
    /// It failed with an error.
    Failed,
}

/// One experiment in the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExperimentRecord {
    pub name: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub skip_reason: Option<String>,
    pub params: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub outcome: Option<Outcome>,
    pub warnings: Vec<Warning>,
    /// False when any result failed validation.
    pub valid: bool,
    #[schemars(range(min = 0.0))]
    pub duration_s: f64,
    /// The core clock measured just before and just after the experiment
    /// (a timed chain of dependent adds), where it could be.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 2))]
    pub core_clock: Vec<crate::timing::core_clock::CoreClock>,
    /// What the plan expected this experiment to take, in seconds
    /// (documents from before the suite's time box).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub estimated_s: Option<f64>,
    /// The share of the suite's time box it was given, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub share_s: Option<f64>,
}

impl ExperimentRecord {
    /// The record of an experiment that did not run to its end, and why.
    pub fn interrupted(name: String, why: &str) -> ExperimentRecord {
        ExperimentRecord {
            name,
            status: Status::Interrupted,
            skip_reason: Some(why.into()),
            params: serde_json::Value::Null,
            outcome: None,
            warnings: Vec::new(),
            valid: true,
            duration_s: 0.0,
            core_clock: Vec::new(),
            estimated_s: None,
            share_s: None,
        }
    }
}

/// Who produced the document: host, run id, and launcher rank if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Origin {
    pub hostname: String,
    #[schemars(length(min = 1))]
    pub run_id: String,
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))]
    pub started_utc: String,
    /// Rank from Open MPI, PMIx, MPICH or Slurm, when launched by one.
    pub rank: Option<u64>,
    pub launcher: Option<String>,
    /// Rank on this host, processes in the job and on this host (ranks on
    /// one host share its memory bandwidth), and the job's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_rank: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub ranks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub ranks_on_host: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Build {
    pub memperf_version: String,
    pub git_revision: String,
    /// `release` or `debug`; figures from a debug build are not meaningful.
    pub profile: String,
    pub target: String,
}

/// The clock every timed region uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClockInfo {
    pub source: String,
    /// Smallest step seen between consecutive reads.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub granularity_ns: crate::units::Nanos,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Document {
    pub schema_version: u32,
    pub build: Build,
    pub clock: ClockInfo,
    #[schemars(length(min = 1))]
    pub command_line: Vec<String>,
    pub origin: Origin,
    pub machine: Fingerprint,
    /// Warnings about the whole run (debug build, no PMU, steal time …).
    pub warnings: Vec<Warning>,
    /// The experiments the run set out to do, in order (a document rebuilt
    /// from the journal of a killed run says which never ran).
    #[serde(default)]
    pub planned: Vec<String>,
    pub experiments: Vec<ExperimentRecord>,
    /// A suite's reference at its start, middle and end: how far the host
    /// moved while the run measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_drift: Option<crate::timing::drift::HostDrift>,
}

impl Document {
    /// Valid when every experiment that ran is valid.
    pub fn valid(&self) -> bool {
        self.experiments.iter().all(|e| e.valid)
    }

    /// Records for planned experiments that have none (the run ended first).
    pub fn mark_never_ran(&mut self) {
        for name in self.planned.clone() {
            if !self.experiments.iter().any(|e| e.name == name) {
                self.experiments.push(ExperimentRecord::interrupted(name, "never ran: the run ended before it"));
            }
        }
    }

    pub fn experiment(&self, name: &str) -> Option<&ExperimentRecord> {
        self.experiments.iter().find(|e| e.name == name && e.status == Status::Completed)
    }

    /// The outcome of type `T` (one experiment's), if that experiment completed.
    pub fn outcome<'a, T>(&'a self) -> Option<&'a T>
    where
        &'a T: TryFrom<&'a Outcome>,
    {
        self.experiments
            .iter()
            .filter(|e| e.status == Status::Completed)
            .find_map(|e| e.outcome.as_ref().and_then(|o| <&T>::try_from(o).ok()))
    }

    /// The document in `text`, upgraded from an older schema version where
    /// it is one, its strings made safe ([`crate::text::defang`]). Its claims are as written: `memperf::model::document_from_json`
    /// judges them again by today's rules.
    pub fn from_json(text: &str) -> Result<Document> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::usage(format!("not a memperf result document: {e}")))?;
        let mut value = value;
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        match version {
            Some(v) if v == SCHEMA_VERSION as u64 => {}
            Some(2) => upgrade_from_2(&mut value),
            _ => {
                return Err(Error::usage(format!(
                    "unsupported schema_version {}: this memperf reads versions {OLDEST_READABLE_VERSION} to \
                     {SCHEMA_VERSION}",
                    version.map(|v| v.to_string()).unwrap_or_else(|| "(missing)".into())
                )))
            }
        }
        crate::text::defang(&mut value);
        serde_json::from_value(value).map_err(|e| Error::usage(format!("malformed result document: {e}")))
    }

    /// Whether any record's clock came from one chain of adds, which a
    /// renamer can fold: then no figure in cycles is drawn from any clock
    /// of this document.
    pub fn clock_folded(&self) -> bool {
        self.experiments.iter().any(|r| r.core_clock.iter().any(|c| !c.two_chains()))
    }

    /// The machine's core clock, unless the document's clock is folded.
    pub fn trusted_core_ghz(&self) -> Option<f64> {
        (!self.clock_folded()).then(|| self.machine.core_ghz()).flatten()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("documents serialise")
    }
}

/// Version 2 → 3: bandwidth results gain their traffic (all of version 2's
/// kernels read 8 bytes per element and wrote none) and their bus bytes.
fn upgrade_from_2(doc: &mut serde_json::Value) {
    use serde_json::json;
    let experiments = doc.get_mut("experiments").and_then(|e| e.as_array_mut());
    let bandwidth = crate::outcome::bandwidth::ABOUT.name;
    for e in experiments.into_iter().flatten().filter(|e| e["name"] == bandwidth) {
        let results = e.get_mut("outcome").and_then(|o| o.get_mut("results")).and_then(|r| r.as_array_mut());
        for r in results.into_iter().flatten() {
            if let Some(obj) = r.as_object_mut() {
                let bytes = obj.get("bytes_per_sample").cloned().unwrap_or(json!(null));
                let per_s = obj.get("bytes_per_s").cloned().unwrap_or(json!(null));
                obj.entry("bytes_read_per_element").or_insert(json!(8));
                obj.entry("bytes_written_per_element").or_insert(json!(0));
                obj.entry("write_allocate_bytes_per_element").or_insert(json!(0));
                obj.entry("bus_bytes_per_sample").or_insert(bytes);
                obj.entry("bus_bytes_per_s").or_insert(per_s);
            }
        }
    }
    doc["schema_version"] = json!(SCHEMA_VERSION);
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_civil_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_795_312_861), "2026-11-22T02:01:01Z");
    }

    #[test]
    fn wrong_schema_version_is_refused() {
        let e = Document::from_json(r#"{"schema_version": 99}"#).unwrap_err();
        assert!(e.message.contains("schema_version 99"));
        assert!(Document::from_json("not json").is_err());
    }

    /// The checked-in schema names the version the code writes, in its
    /// `$id`, its title and its `schema_version` constant alike.
    #[test]
    fn the_schema_file_names_the_version_written() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/results.schema.json");
        let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let v = SCHEMA_VERSION;
        assert_eq!(schema["$id"], format!("https://memperf.invalid/schema/results-{v}.json"));
        assert_eq!(schema["title"], format!("memperf result document, schema_version {v}"));
        assert_eq!(schema["properties"]["schema_version"]["const"], v);
    }

    /// A version-2 document (read kernels only) reads as version 3 with
    /// the traffic those kernels had: 8 bytes read, bus bytes = bytes.
    #[test]
    fn a_version_2_document_is_upgraded() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/minimal-bandwidth.json");
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("\"schema_version\": 2"), "the fixture is a version-2 document");
        let doc = Document::from_json(&text).unwrap();
        assert_eq!(doc.schema_version, SCHEMA_VERSION);
        let bw = doc.outcome::<crate::outcome::bandwidth::Outcome>().unwrap();
        for r in &bw.results {
            assert_eq!(r.traffic.bytes_read_per_element, 8);
            assert_eq!((r.traffic.bytes_written_per_element, r.traffic.write_allocate_bytes_per_element), (0, 0));
            assert_eq!(r.bus_bytes_per_sample, r.bytes_per_sample);
            assert_eq!(r.bus_bytes_per_s, r.bytes_per_s);
        }
    }
}
