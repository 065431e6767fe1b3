//! What `memperf prefetch-fault` found: the targets and how each was
//! verified, the cost of each prefetch, the list walks and the TLB-walk test.

use crate::memory::PagePolicy;
use crate::timing::Summary;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    Mapped,
    Null,
    Unmapped,
    ProtNone,
    Kernel,
    NonCanonical,
}

impl Target {
    pub const ALL: [Target; 6] =
        [Target::Mapped, Target::Null, Target::Unmapped, Target::ProtNone, Target::Kernel, Target::NonCanonical];
}

/// One cell of part 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefetchCell {
    /// Instruction (`prefetcht0` …) or `none` for the baseline loop.
    pub instruction: String,
    pub target: Target,
    /// `throughput` or `latency`.
    pub loop_kind: String,
    pub samples_ns: Vec<f64>,
    pub ns_per_prefetch: Summary,
    /// Median ns per prefetch above the same loop without prefetch.
    pub cost_ns: f64,
    /// Median ns above the same instruction prefetching a mapped line: what
    /// the bad address itself costs.
    pub extra_over_mapped_ns: f64,
    pub user_s: f64,
    pub system_s: f64,
    pub system_ns_per_prefetch: f64,
    pub page_faults: u64,
    pub prefetches: u64,
}

/// How a target was checked to be what it claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetCheck {
    pub target: Target,
    pub address: String,
    pub check: String,
    pub ok: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub instruction: String,
    /// `costs nothing`, `costs N ns` or `traps to the kernel`.
    pub verdict: String,
    pub worst_target: Option<Target>,
    pub worst_cost_ns: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListCell {
    pub length: usize,
    /// `none`, `unguarded` or `guarded`.
    pub variant: String,
    pub samples_ns_per_node: Vec<f64>,
    pub ns_per_node: Summary,
    pub null_prefetches: u64,
    pub user_s: f64,
    pub system_s: f64,
    pub checksum_ok: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrideResult {
    pub pages: PagePolicy,
    pub huge_fraction: Option<f64>,
    pub ahead_pages: usize,
    /// time without prefetch / time with it, per round.
    pub speedup_median: f64,
    pub speedup_min: f64,
    pub speedup_max: f64,
    pub ns_per_access_without: f64,
    pub ns_per_access_with: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub targets: Vec<TargetCheck>,
    pub cells: Vec<PrefetchCell>,
    pub verdicts: Vec<Verdict>,
    pub lists: Vec<ListCell>,
    pub stride: Vec<StrideResult>,
    pub tlb_miss_verdict: String,
    pub valid: bool,
}
