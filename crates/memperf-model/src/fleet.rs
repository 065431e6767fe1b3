//! The fleet document `memperf merge` writes (`fleet.json`): every host's
//! headline figures, grouped by CPU, with each headline's spread, the
//! outliers by the robust and the model rule, the reference checks, and
//! each repeated host's series. Its schema (`schema/fleet.schema.json`) is
//! generated from these types, as the result document's is.

use crate::document::Build;
use serde::{Deserialize, Serialize};

/// Version of the fleet document (`schema/fleet.schema.json`).
pub const FLEET_SCHEMA_VERSION: u32 = 1;

/// One headline figure of one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figure {
    /// The headline's join key (`id{label=value,…}`, as `compare` joins).
    pub key: String,
    pub name: String,
    pub unit: String,
    pub value: f64,
    pub higher_is_better: bool,
}

/// One host (one process: host and rank) of the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Host {
    /// `host`, or `host#rank` under a launcher.
    #[schemars(length(min = 1))]
    pub id: String,
    pub hostname: String,
    pub rank: Option<u64>,
    pub run_id: String,
    /// When the run started (`YYYY-MM-DDTHH:MM:SSZ`): orders a host's runs.
    #[serde(default)]
    pub started_utc: String,
    /// The CPU, as hosts are grouped by it.
    pub cpu: String,
    /// The document it came from.
    pub source: String,
    pub figures: Vec<Figure>,
    /// All-thread read bandwidth (bytes/s) and DRAM latency (ns) for the
    /// model, where the document has both.
    pub model_inputs: Option<Inputs>,
}

impl Host {
    /// The figure of this key, or of this display name (what references
    /// written before keys existed name).
    pub fn figure(&self, metric: &str) -> Option<&Figure> {
        self.figures.iter().find(|f| f.key == metric).or_else(|| self.figures.iter().find(|f| f.name == metric))
    }
}

/// A headline's spread across the hosts of a group that measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spread {
    pub key: String,
    pub name: String,
    pub unit: String,
    #[schemars(range(min = 1))]
    pub hosts: usize,
    pub median: f64,
    /// Median absolute deviation from the median.
    #[schemars(range(min = 0.0))]
    pub mad: f64,
    pub min: f64,
    pub max: f64,
}

/// A host that stands out, and by which rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outlier {
    pub host: String,
    pub name: String,
    pub value: f64,
    /// `robust` (median and MAD) or `model` (Little's law).
    #[schemars(extend("enum" = ["robust", "model"]))]
    pub rule: String,
    /// `worse` or `better` than the group.
    #[schemars(extend("enum" = ["worse", "better"]))]
    pub direction: String,
    pub detail: String,
}

/// Hosts with one CPU, compared with each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Group {
    pub cpu: String,
    #[schemars(length(min = 1))]
    pub hosts: Vec<String>,
    pub spreads: Vec<Spread>,
    pub outliers: Vec<Outlier>,
    /// The fleet's concurrency (median lines in flight) the model used, or
    /// why the model was not applied.
    pub model: Verdict,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fleet {
    pub fleet_schema_version: u32,
    pub kind: String,
    pub build: Build,
    #[schemars(length(min = 1))]
    pub hosts: Vec<Host>,
    #[schemars(length(min = 1))]
    pub groups: Vec<Group>,
    /// Pass/fail per host against `--reference`, when given.
    pub reference: Option<Vec<HostCheck>>,
    /// Hosts given with two or more runs: each headline over the runs,
    /// its spread and drift. `hosts` and `groups` hold each one's newest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
}

impl Fleet {
    /// Some host failed a reference.
    pub fn failed(&self) -> bool {
        self.reference.iter().flatten().any(|h| !h.passed)
    }
}

/// The inputs of the model rule of a host: its all-thread read bandwidth,
/// the threads that moved it, and its DRAM latency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Inputs {
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub bytes_per_s: f64,
    pub threads: usize,
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub latency_ns: crate::units::Nanos,
}

/// The model rule's verdict on a group: applied (with the fleet's lines in
/// flight and the tolerance), or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    Applied { fleet_lines_in_flight: f64, tolerance: f64 },
    NotApplied { reason: String },
}

/// One reference checked on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    pub metric: String,
    pub target: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub unit: String,
    /// The host's figure, or None when it did not measure it (a failure).
    pub value: Option<f64>,
    pub passed: bool,
    pub reason: String,
}

/// A host against every reference that applies to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostCheck {
    pub host: String,
    pub passed: bool,
    pub checks: Vec<Check>,
}

/// A host given with two or more runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Run {
    pub run_id: String,
    pub started_utc: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeriesFigure {
    pub key: String,
    pub name: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Per run, in the order of [`Series::runs`]; `None` where that run did
    /// not measure it.
    pub values: Vec<Option<f64>>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// (max − min) / median, in percent.
    #[schemars(range(min = 0.0))]
    pub spread_pct: f64,
    pub drift: Drift,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Drift {
    /// Kendall's test on value against time, and the Theil–Sen slope:
    /// per day, and times the time from the first run to the last
    /// (`pct_over_span`, in percent of the median: what a reader sets beside
    /// the spread, where %/day would extrapolate runs minutes apart).
    Tested {
        pct_per_day: f64,
        pct_over_span: f64,
        #[schemars(range(min = 0.0))]
        span_s: f64,
        #[schemars(range(min = -1.0, max = 1.0))]
        tau: f64,
        #[schemars(range(min = 0.0, max = 1.0))]
        p: f64,
        trend: bool,
        worse: bool,
    },
    NotTested {
        #[schemars(length(min = 1))]
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Series {
    #[schemars(length(min = 1))]
    pub host: String,
    /// Oldest first.
    #[schemars(length(min = 2))]
    pub runs: Vec<Run>,
    pub figures: Vec<SeriesFigure>,
}
