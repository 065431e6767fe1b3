//! What `memperf wss -- CMD` found: a program's hot working set over time,
//! per mapping (the bytes it referenced in each interval, from the page
//! tables' accessed bits), its phases, and the hot set set beside the
//! TLB's reach on this machine.

use crate::about::About;
use crate::process::pages::MappingKind;
use crate::process::Exit;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "wss",
    summary: "A program's hot working set over time, per mapping, from the page tables' accessed bits, set beside the TLB's reach",
    title: "A program's hot working set",
    question: "How much memory does the program touch, where, and does it outgrow what the TLB can map?",
    classic: "2002: DTLB-miss counters said the sample application's data outgrew the TLB; 4 MiB ISM pages cured it.",
};

/// One mapping of the program, as first seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub kind: MappingKind,
    /// The file or `[heap]`-style name; empty for anonymous memory.
    pub path: String,
    /// The descendant process it belongs to (`--children`); `None` for the
    /// program (or pid) watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<i32>,
}

/// One mapping in one interval, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MappingSample {
    /// Index into [`Outcome::mappings`].
    pub mapping: usize,
    pub rss_bytes: u64,
    /// Referenced since the accessed bits were last cleared: in this interval.
    pub referenced_bytes: u64,
    /// Resident on transparent huge pages.
    pub anon_huge_bytes: u64,
    /// With `--pages`: the 2 MiB spans holding a resident page of it
    /// (from /proc/PID/pagemap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_spans: Option<u64>,
    /// With `--pages`: the 2 MiB spans holding a page accessed in the
    /// interval, where counted: with idle-page tracking, or, under the
    /// accessed bits, the resident spans when every resident page was
    /// referenced (never from DAMON's region estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_spans: Option<u64>,
    /// With `--pages` under the accessed bits, where some resident pages
    /// went unreferenced (so `hot_spans` is not known): the fewest spans
    /// the referenced pages can lie in, the resident spans less one per
    /// unreferenced 4 KiB page. The most is the resident spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_spans_min: Option<u64>,
    /// With `--pages` where the kernel keeps soft-dirty bits: the bytes
    /// written in the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bytes: Option<u64>,
}

/// One interval: the mappings with resident memory at its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WssInterval")]
pub struct Interval {
    /// Seconds since the program started, at the interval's end.
    pub t_s: f64,
    pub mappings: Vec<MappingSample>,
}

impl Interval {
    /// The hot set: bytes referenced in this interval.
    pub fn hot_bytes(&self) -> u64 {
        self.mappings.iter().map(|m| m.referenced_bytes).sum()
    }

    pub fn rss_bytes(&self) -> u64 {
        self.mappings.iter().map(|m| m.rss_bytes).sum()
    }
}

/// A stretch of intervals whose hot sets stay within a band of their
/// median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Phase {
    pub from_s: f64,
    pub to_s: f64,
    pub intervals: usize,
    /// Median hot set of its intervals.
    pub hot_bytes: u64,
    /// The mapping holding most of the hot set, and its share.
    pub top_mapping: Option<usize>,
    pub top_share: f64,
    /// Of the hot set, the bytes in mappings huge pages can cover.
    pub coverable_bytes: u64,
    /// Fewest 2 MiB pages that could map the hot set (each mapping's hot
    /// bytes rounded up to 2 MiB), and the most (every hot 4 KiB page in a
    /// 2 MiB page of its own, capped by each mapping's size, and with
    /// `--pages` by the spans holding its resident pages): smaps says how
    /// much of a mapping was referenced, not where in it. Equal where the
    /// hot spans were counted (`--pages`).
    pub huge_pages_min: u64,
    pub huge_pages_max: u64,
    /// Min and max come from the 2 MiB spans holding the hot pages, read
    /// page by page in every interval of the phase (equal where each
    /// interval's count was exact).
    #[serde(default)]
    pub huge_pages_counted: bool,
    /// The top mapping's 2 MiB spans holding its hot pages (the fewest,
    /// where bounded) and its hot bytes, where read page by page
    /// (`--pages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_spans: Option<(u64, u64)>,
    /// The most spans the top mapping's hot pages can lie in, where that
    /// is more than `top_spans`' count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_spans_max: Option<u64>,
}

/// The TLB reach the hot set is set beside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WssReach")]
pub struct Reach {
    /// Entries of the first-level data TLB for 4 KiB pages: the knee
    /// `memperf tlb` measured here, or CPUID's claim where none was.
    pub entries: u64,
    /// The second level's, where measured (or, unmeasured, claimed).
    pub l2_entries: Option<u64>,
    /// Where the figures come from: a saved `memperf tlb` result, a quick
    /// probe, or CPUID.
    pub source: String,
    /// Measured (else CPUID's claim).
    #[serde(default)]
    pub measured: bool,
    /// The machine a saved result measured it on, when not this one: "host
    /// H", or "host H (CPU, family F model M)" where only the name matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_on: Option<String>,
    /// What CPUID claims, shown beside a measurement (a hypervisor may
    /// invent or hide these).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuid_entries: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuid_l2_entries: Option<u64>,
    /// `memperf tlb` found huge pages stepping at this many pages, as 4 KiB
    /// pages do: they use small TLB entries here and do not enlarge the
    /// reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_same_reach: Option<u64>,
    /// Where memory begins on the same machine: the measured start of the
    /// far level, else a plausible claim of the last-level cache (never an
    /// assumed default), and which of the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches_source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WssOutcome")]
pub struct Outcome {
    pub command: Vec<String>,
    /// The process watched, when it was given with `--pid`.
    pub pid: Option<i32>,
    /// The first interval; with `adaptive`, later ones grow with the hot set.
    #[schemars(range(min = 10))]
    pub interval_ms: u64,
    /// The interval grew so that marking the hot pages again costs the
    /// program under 5% (no -I given); each interval's end is its `t_s`.
    #[serde(default)]
    pub adaptive: bool,
    /// How the hot set was read, and why that way.
    pub method: String,
    /// Why the bytes written per interval are not given, when they are not.
    pub written_not_measured: Option<String>,
    /// With `--pages`: what the page-by-page scan could read, and why not more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_method: Option<String>,
    /// `None` for a process given with `--pid` that was still running.
    pub exit: Option<Exit>,
    pub wall_s: f64,
    pub peak_rss_bytes: u64,
    pub mappings: Vec<Mapping>,
    pub intervals: Vec<Interval>,
    pub phases: Vec<Phase>,
    pub reach: Option<Reach>,
    pub verdict: Vec<String>,
    /// False when no interval could be sampled.
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}

/// "the anonymous mapping at 0x7f…", "[heap]", "/usr/lib/x.so".
pub fn mapping_name(m: &Mapping) -> String {
    let owner = m.process.map(|p| format!("pid {p}'s ")).unwrap_or_default();
    let name = match m.kind {
        MappingKind::Anonymous => format!("anonymous mapping at {:#x}", m.start),
        MappingKind::File | MappingKind::Shared if !m.path.is_empty() => {
            format!("{} mapping of {}", m.kind.name(), m.path)
        }
        _ if !m.path.is_empty() => m.path.clone(),
        _ => format!("{} mapping at {:#x}", m.kind.name(), m.start),
    };
    format!("{owner}{name}")
}

/// The phase the verdict is about: the largest hot set that lasted two
/// intervals or more (the one that asks most of the TLB), else the
/// largest.
pub fn judged_phase(o: &Outcome) -> Option<&Phase> {
    let largest = |min: usize| o.phases.iter().filter(move |p| p.intervals >= min).max_by_key(|p| p.hot_bytes);
    largest(2).or_else(|| largest(1))
}
