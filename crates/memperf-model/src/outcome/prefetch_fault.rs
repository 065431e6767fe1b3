//! What `memperf prefetch-fault` found: the targets and how each was
//! verified, the cost of each prefetch per loop kind, the list walks, the
//! TLB-walk test, and one verdict per instruction and loop kind.

use crate::about::About;
use crate::kernels::prefetch::Guard;
use crate::memory::PagePolicy;
use crate::timing::{Ratio, Summary};
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "prefetch-fault",
    summary: "What a prefetch of NULL, an unmapped, PROT_NONE or kernel address costs; whether a prefetch survives a TLB miss",
    title: "Prefetching bad addresses",
    question: "What does a prefetch of NULL, an unmapped, a PROT_NONE or a kernel address cost? Does a prefetch that misses the TLB walk the page table?",
    classic: "UltraSPARC IV+ strong prefetch of address 0: 1.34 s of system time per 10^6 prefetches; the weak variant cost nothing.",
};

crate::named_enum! {
    /// An address a prefetch is aimed at.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, schemars::JsonSchema)]
    pub enum Target ("target") {
        Mapped = "mapped",
        Null = "null",
        Unmapped = "unmapped",
        ProtNone = "prot-none",
        Kernel = "kernel",
        NonCanonical = "non-canonical",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LoopKind {
    /// Eight independent prefetches per step.
    Throughput,
    /// One prefetch per step, its address depending on a load.
    Latency,
}

/// How a target was checked to be what it claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetCheck {
    pub target: Target,
    /// Distinct pages (or lines, for NULL) the loops rotate over.
    pub addresses: usize,
    /// The first and last of them.
    pub first: String,
    pub last: String,
    pub check: String,
    pub ok: bool,
}

/// One (instruction, target, loop) cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PrefetchCell {
    /// Instruction (`prefetcht0` …) or `none` for the baseline loop.
    pub instruction: String,
    pub target: Target,
    pub loop_kind: LoopKind,
    /// ns per prefetch of each sample (one per repetition).
    pub samples_ns: Vec<f64>,
    pub ns_per_prefetch: Summary,
    /// Over the same loop without prefetch, paired per repetition, in ns.
    pub over_baseline_ns: Option<Ratio>,
    /// Over the same instruction prefetching mapped lines, measured next to
    /// it, in ns: what the bad address itself costs (bad targets only).
    pub over_mapped_ns: Option<Ratio>,
    /// CPU time of the timed samples; system time only when the cell ran
    /// long enough for clock ticks to resolve it (≥ 1 s).
    pub user_s: f64,
    pub system_s: Option<f64>,
    /// Page faults during the timed samples (warm-up and calibration excluded).
    pub page_faults: u64,
    pub prefetches: u64,
}

/// One verdict per instruction and loop kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub instruction: String,
    pub loop_kind: LoopKind,
    pub finding: Finding,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Finding {
    /// At least one page fault per two prefetches of this target.
    Traps { target: Target, faults_per_prefetch: f64 },
    /// The costliest bad target, whose interval lies above 0.
    Costs { target: Target, over_mapped_ns: Ratio },
    /// Every bad target's verdict is no change (within ± the threshold of
    /// the mapped prefetch's cost) or costs less.
    NoCostBeyondNoise { widest_high_ns: f64 },
    /// No bad target costs more beyond its interval, and at least one is
    /// not resolved (the one with the widest interval).
    NotResolved { target: Target, over_mapped_ns: Ratio },
    /// No bad target, or too few samples for an interval of 90%.
    NotMeasured { reason: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ListCell {
    pub length: usize,
    pub variant: Guard,
    pub samples_ns_per_node: Vec<f64>,
    pub ns_per_node: Summary,
    /// Over `none` at the same length, paired per repetition.
    pub over_none_ns: Option<Ratio>,
    pub null_prefetches: u64,
    pub checksum_ok: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StrideResult {
    pub pages: PagePolicy,
    /// Read back after the measurement.
    pub huge_fraction: Option<f64>,
    pub ahead_pages: usize,
    /// Time without prefetch over time with it, against the no-prefetch
    /// walk measured next to it.
    pub speedup: Ratio,
    pub ns_per_access_without: f64,
    pub ns_per_access_with: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TlbMissVerdict {
    /// Prefetching ahead speeds up the 4 KiB walk beyond the noise, though
    /// every prefetch there misses the TLB.
    Walks {
        ahead_pages: usize,
        speedup_small: Ratio,
    },
    /// No gain on 4 KiB pages, a clear gain on huge pages (≥ 90% coverage).
    Dropped {
        speedup_small: Ratio,
        speedup_huge: Ratio,
    },
    Inconclusive {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "PrefetchFaultOutcome")]
pub struct Outcome {
    pub targets: Vec<TargetCheck>,
    pub cells: Vec<PrefetchCell>,
    pub verdicts: Vec<Verdict>,
    pub lists: Vec<ListCell>,
    pub stride: Vec<StrideResult>,
    pub tlb_miss_verdict: TlbMissVerdict,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}

impl Finding {
    /// The finding in one sentence.
    pub fn describe(&self) -> String {
        match self {
            Finding::Traps { target, faults_per_prefetch } => format!(
                "traps to the kernel ({} faults per prefetch of {})",
                faults_per_prefetch,
                target.name()
            ),
            Finding::Costs { target, over_mapped_ns: r } => format!(
                "costs {:.2} ns more than a prefetch of a mapped line on {} [{:.2}, {:.2}] ns",
                r.estimate,
                target.name(),
                r.low,
                r.high
            ),
            Finding::NoCostBeyondNoise { widest_high_ns } => format!(
                "no cost on any bad target (each within ±5% of a mapped prefetch's, or less; at most +{widest_high_ns:.2} ns)"
            ),
            Finding::NotResolved { target, over_mapped_ns: r } => format!(
                "not resolved on {}: {:+.2} [{:+.2}, {:+.2}] ns over a prefetch of a mapped line holds no cost and more than 5%",
                target.name(),
                r.estimate,
                r.low,
                r.high
            ),
            Finding::NotMeasured { reason } => format!("not measured: {reason}"),
        }
    }
}

impl TlbMissVerdict {
    pub fn describe(&self) -> String {
        match self {
            TlbMissVerdict::Walks { ahead_pages, speedup_small: r } => format!(
                "prefetches that miss the TLB walk the page table: prefetching {ahead_pages} pages ahead speeds up the 4 KiB walk ×{:.2} [×{:.2}, ×{:.2}]",
                r.estimate, r.low, r.high
            ),
            TlbMissVerdict::Dropped { speedup_small: s, speedup_huge: h } => format!(
                "prefetches that miss the TLB are dropped: ×{:.2} [×{:.2}, ×{:.2}] on 4 KiB pages against ×{:.2} [×{:.2}, ×{:.2}] on huge pages",
                s.estimate, s.low, s.high, h.estimate, h.low, h.high
            ),
            TlbMissVerdict::Inconclusive { reason } => format!("inconclusive: {reason}"),
        }
    }
}
