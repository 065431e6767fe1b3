//! A headline figure as every output of a document knows it: its identity
//! (what compare, merge, references and OpenMetrics join on), how a person
//! reads it, its unit (and through it its SI form), its raw samples and
//! which way is better. Renderers make them from outcomes; compare and
//! merge write and read them back.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One headline metric and the raw samples behind it. `id` and `labels`
/// are its identity (what compare, merge, references and OpenMetrics join
/// on); `name` is how a person reads it, and `unit` says both how its
/// value is shown and what it is in SI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    /// `experiment.quantity`, lower case: `bandwidth.read`, `latency.random`.
    pub id: String,
    /// What tells it apart from the other figures of its id: `pages`,
    /// `threads`, `kernel`, `size_bytes` …
    pub labels: BTreeMap<String, String>,
    pub name: String,
    pub unit: Unit,
    pub value: f64,
    pub samples: Vec<f64>,
    pub higher_is_better: bool,
    /// CPUs the figure took at once: its `threads` label where it has one,
    /// else one, unless its renderer says more (a chaser beside traffic, a
    /// line bounced between two CPUs). Where the host placed the vCPUs
    /// moves such a figure and not one of one CPU; `compare` reads this.
    #[serde(default = "one_cpu")]
    pub cpus: usize,
    /// A core's own work, no memory traffic (a call chain, a context
    /// save): a neighbour sharing the core moves it while memory holds
    /// still, so `compare` judges it against the reference's call chain
    /// too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub core_bound: bool,
    /// It enters the kernel (a context save that saves the signal mask):
    /// the host moves the kernel's entry and exit on their own, so
    /// `compare` judges it against the reference's system call too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub enters_kernel: bool,
    /// Its loads walk 4 KiB page tables (a random chase on 4 KiB pages):
    /// the host moves those walks apart from memory, so `compare` judges
    /// it against the reference's chase on 4 KiB pages too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub walks_4k: bool,
    /// Where the host moved across its samples and its value is the
    /// median of their steady stretch (`Summary::steady_of`): that stretch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::timing::steady::Stretch>,
}

fn one_cpu() -> usize {
    1
}

/// A headline's unit: the scale its value is shown in, and through that
/// its SI form. Written as its symbol ("GB/s", "ns/page").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Unit {
    /// GB/s: 1e9 bytes per second.
    GigabytesPerSecond,
    /// ns, or ns per one of something (`ns/page`: `Some("page")`).
    Nanoseconds(Option<String>),
    Seconds,
    /// MiB: 2^20 bytes.
    Mebibytes,
    /// How many times something happened.
    Count,
    /// A derived metric's own unit (a ratio, a percentage, a user's
    /// definition): shown as given, with no SI form.
    Other(String),
}

impl Unit {
    /// `ns/page`.
    pub fn ns_per(what: &str) -> Unit {
        Unit::Nanoseconds(Some(what.to_string()))
    }

    /// (scale to the SI base unit, that unit's OpenMetrics name, what one
    /// figure is per): GB/s are 1e9 bytes_per_second, ns/page 1e-9
    /// seconds per page; a unit without an SI form is its own.
    pub fn si(&self) -> (f64, Option<&'static str>, Option<String>) {
        let per =
            |u: &str| u.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
        match self {
            Unit::GigabytesPerSecond => (1e9, Some("bytes_per_second"), None),
            Unit::Nanoseconds(each) => (1e-9, Some("seconds"), each.as_deref().map(per)),
            Unit::Seconds => (1.0, Some("seconds"), None),
            Unit::Mebibytes => (1048576.0, Some("bytes"), None),
            Unit::Count | Unit::Other(_) => (1.0, None, None),
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unit::GigabytesPerSecond => f.write_str("GB/s"),
            Unit::Nanoseconds(None) => f.write_str("ns"),
            Unit::Nanoseconds(Some(each)) => write!(f, "ns/{each}"),
            Unit::Seconds => f.write_str("s"),
            Unit::Mebibytes => f.write_str("MiB"),
            Unit::Count => f.write_str("count"),
            Unit::Other(u) => f.write_str(u),
        }
    }
}

impl From<Unit> for String {
    fn from(u: Unit) -> String {
        u.to_string()
    }
}

/// A symbol read back from a document written before (compare and merge
/// JSON): the symbols memperf writes are its own units again.
impl From<String> for Unit {
    fn from(s: String) -> Unit {
        match s.as_str() {
            "GB/s" => Unit::GigabytesPerSecond,
            "ns" => Unit::Nanoseconds(None),
            "s" => Unit::Seconds,
            "MiB" => Unit::Mebibytes,
            "count" => Unit::Count,
            u => match u.strip_prefix("ns/") {
                Some(each) if !each.is_empty() => Unit::ns_per(each),
                _ => Unit::Other(s),
            },
        }
    }
}

/// A headline: its identity, its display name and unit, its samples (in
/// the order they were taken) and central value, and which way is better.
/// Where the value is the median of the samples' steady stretch, the
/// headline records that stretch.
pub fn headline(
    id: &str,
    labels: &[(&str, String)],
    name: String,
    unit: Unit,
    samples: Vec<f64>,
    value: f64,
    higher: bool,
) -> Headline {
    let steady = crate::timing::steady::stretch(&samples).filter(|s| {
        crate::timing::stats::median(&samples[s.from..s.to]).is_some_and(|m| (m - value).abs() <= 1e-9 * value.abs())
    });
    Headline {
        id: id.into(),
        labels: labels.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        name,
        unit,
        value,
        samples,
        higher_is_better: higher,
        cpus: labels.iter().find(|(k, _)| *k == "threads").and_then(|(_, v)| v.parse().ok()).unwrap_or(1),
        core_bound: false,
        enters_kernel: false,
        walks_4k: false,
        steady,
    }
}

impl Headline {
    /// The same figure, taken on `cpus` CPUs at once.
    pub fn on_cpus(self, cpus: usize) -> Headline {
        Headline { cpus, ..self }
    }

    /// The same figure, marked as a core's own work.
    pub fn core_bound(self) -> Headline {
        Headline { core_bound: true, ..self }
    }

    /// The same figure, marked as entering the kernel.
    pub fn enters_kernel(self) -> Headline {
        Headline { enters_kernel: true, ..self }
    }

    /// The same figure, marked as walking 4 KiB page tables.
    pub fn walks_4k(self) -> Headline {
        Headline { walks_4k: true, ..self }
    }

    /// The join key: `id{label=value,…}`, labels in name order.
    pub fn key(&self) -> String {
        if self.labels.is_empty() {
            return self.id.clone();
        }
        let labels: Vec<String> = self.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}{{{}}}", self.id, labels.join(","))
    }
}
