//! What `memperf latency` found: per-chunk samples of every point, the
//! levels of the curve, policy ratios and the memory-level-parallelism sweep.

use crate::about::About;
use crate::analysis;
use crate::memory::{Backing, PagePolicy};
use crate::timing::core_clock::CoreClock;
use crate::timing::{Ratio, Summary};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "latency",
    summary: "Load-to-use latency from L1 to DRAM per page policy, its knees, and memory-level parallelism",
    title: "Load-to-use latency",
    question: "What is the latency from L1 to DRAM for each page size, and how much memory-level parallelism does one core reach?",
    classic: "McCalpin 2010: 6.08 GB/s × 74 ns ≈ 450 B ≈ 7 lines in flight (Little's law).",
};

/// One working set under one policy and visiting order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "LatencyPoint")]
pub struct Point {
    pub pages: PagePolicy,
    /// `random` or `page-local`.
    pub order: String,
    pub size_bytes: Bytes,
    pub loads_per_sample: u64,
    /// Mean ns per load of each sample (one per repetition, each at least
    /// the minimum sample time, after an untimed warm-up traversal).
    pub sample_latency_ns: Vec<f64>,
    pub latency_ns: Summary,
    /// Share of this point's own region on huge pages, read back after it
    /// was measured (each working set has a region of its own size).
    pub huge_fraction: Option<f64>,
    pub valid: bool,
}

/// A level of the random-order curve: between two knees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyLevel {
    pub pages: PagePolicy,
    /// `L1`, `L2`, `L3` (the knee after it lies within ×2 of that cache,
    /// and it answers at least twice as fast as the far level the run's
    /// probe measured), `DRAM` (the last level, its largest working set at
    /// or past where the probe verified memory), or `unattributed`.
    #[schemars(regex(pattern = r"^(L[0-9]|DRAM|unattributed)$"))]
    pub name: String,
    pub latency_ns: crate::units::Nanos,
    /// At the measured core clock.
    pub cycles: Option<f64>,
    pub from_bytes: Bytes,
    pub up_to_bytes: Bytes,
    /// What the knee after this level was attributed to (none for the last).
    pub knee_after: Option<analysis::attribution::Attribution>,
    /// The knee after this level found again on the even and on the odd
    /// samples apart? (None for the last level.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_look: Option<analysis::second_look::SecondLook>,
}

/// Policy B over policy A at one size: per-repetition ratio of the
/// latencies, measured next to each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicyRatio {
    pub size_bytes: Bytes,
    pub a: PagePolicy,
    pub b: PagePolicy,
    pub ratio: Ratio,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MlpPoint {
    pub pages: PagePolicy,
    pub size_bytes: Bytes,
    pub chains: usize,
    /// Time per load with K chains in flight (wall time / (K × steps)).
    pub ns_per_load: f64,
    /// Loads per second with K chains over loads per second with one.
    pub speedup: f64,
    pub valid: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "LatencyOutcome")]
pub struct Outcome {
    pub seed: u64,
    /// Backing of the regions of the largest working set (the K-chain
    /// sweep's), read back after the measurement; each point carries its
    /// own region's coverage.
    pub regions: Vec<Backing>,
    /// The core clock, measured before and after the sweep.
    pub core_clock: Vec<CoreClock>,
    pub points: Vec<Point>,
    pub levels: Vec<LatencyLevel>,
    pub ratios: Vec<PolicyRatio>,
    pub mlp: Vec<MlpPoint>,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
