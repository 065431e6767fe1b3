//! What `memperf tlb` found: the sweeps, the reaches beside CPUID's
//! figures, whether the control could be trusted, and the walk cost.

use crate::about::About;
use crate::analysis::attribution::Attribution;
use crate::memory::{Backing, PagePolicy};
use crate::timing::core_clock::CoreClock;
use crate::timing::{Ratio, Summary};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "tlb",
    summary: "TLB reach per page size and the cost of a page walk",
    title: "TLB reach and page walks",
    question: "How much memory does each TLB level cover per page size, and what does a page walk cost?",
    classic: "UltraSPARC III: 512 entries × 8 KiB = 4 MiB reach; ~90 cycles per miss.",
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "TlbPoint")]
pub struct Point {
    pub pages: PagePolicy,
    /// `own`: one line per page of the policy; `control`: one line every
    /// 4 KiB on a huge-page region (the lines and cache sets of the 4 KiB
    /// sweep, with fewer translations).
    pub sweep: Sweep,
    /// Distance between the lines visited.
    pub stride_bytes: Bytes,
    pub page_count: u64,
    /// Memory the P pages span.
    pub span_bytes: Bytes,
    /// Mean ns per access of each sample, one per repetition.
    pub sample_ns: Vec<f64>,
    pub ns_per_access: Summary,
    pub valid: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Sweep {
    Own,
    Control,
}

/// A knee on one policy's curve: a TLB reach.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "TlbKnee")]
pub struct Reach {
    pub pages: PagePolicy,
    /// The page size read back from the region (`None`: partly huge).
    pub page_size_bytes: Option<Bytes>,
    /// Largest page count before the knee.
    pub measured_entries: u64,
    /// Entries × the page size read back; `None` where that size does not
    /// say what one entry maps (partly huge, or huge pages that use small
    /// entries here).
    pub measured_reach_bytes: Option<Bytes>,
    /// The CPUID level within ×2 of the measured entries, or unattributed.
    pub attribution: Attribution,
    /// What CPUID says for this page size, L1 and L2 (a hypervisor may
    /// invent these): shown beside the measurement whatever they say.
    pub cpuid_l1_entries: Option<u32>,
    pub cpuid_l2_entries: Option<u32>,
    pub ns_within: f64,
    pub ns_beyond: f64,
    /// The knee lies where the lines visited outgrow L1 and no valid control
    /// separates translation from cache: it may be a cache step, so it is
    /// not attributed.
    pub confounded_with_cache: bool,
    /// The knee found again on the even and on the odd samples apart?
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_look: Option<crate::analysis::second_look::SecondLook>,
}

/// Small pages minus the control at one page count, per repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WalkCost {
    pub page_count: u64,
    pub control: PagePolicy,
    /// Per-repetition differences small − control, in ns.
    pub differences_ns: Vec<f64>,
    pub ns_median: f64,
}

/// Whether the control sweep measures what it must (the same lines with
/// fewer translations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Control {
    /// The control steps only where caches do: walk costs are derived.
    Valid { policy: PagePolicy, huge_fraction: f64 },
    /// The control steps where the 4 KiB sweep steps, at a page count whose
    /// lines fit in L1: its translations use small TLB entries too (a VM
    /// backed by small host pages). No walk cost is derived.
    SameReach { policy: PagePolicy, pages: u64 },
    /// The control region got too few huge pages (under 90%).
    NotHuge { policy: PagePolicy, huge_fraction: Option<f64> },
    /// No huge-page region could be had for a control.
    Unavailable { reason: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "TlbOutcome")]
pub struct Outcome {
    pub seed: u64,
    /// Backing of each region, read back after the measurement.
    pub regions: Vec<Backing>,
    pub core_clock: Vec<CoreClock>,
    pub points: Vec<Point>,
    pub control: Control,
    pub reaches: Vec<Reach>,
    pub walk_costs: Vec<WalkCost>,
    /// Walk cost beyond the last 4 KiB reach (median of the points past
    /// it, each a paired difference), only with a valid control.
    pub walk_ns: Option<Ratio>,
    pub walk_cycles: Option<f64>,
    /// What this means for a user, one sentence per finding, drawn only
    /// from attributed results.
    pub advice: Vec<String>,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
