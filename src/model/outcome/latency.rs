//! What `memperf latency` found: per-chunk samples of every point, the
//! levels of the curve, policy ratios and the memory-level-parallelism sweep.

use crate::memory::{Backing, PagePolicy};
use crate::timing::Summary;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// Per-chunk latency samples of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub pages: PagePolicy,
    /// `random` or `page-local`.
    pub order: String,
    pub size_bytes: Bytes,
    pub loads_per_chunk: u64,
    /// ns per load of each chunk, in measurement order.
    pub chunk_latency_ns: Vec<f64>,
    pub latency_ns: Summary,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub valid: bool,
}

/// A level of the curve, beside the cache it corresponds to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyLevel {
    pub pages: PagePolicy,
    /// `L1`, `L2`, `L3`, … or `DRAM`.
    pub name: String,
    pub latency_ns: f64,
    pub cycles: Option<f64>,
    pub up_to_bytes: Bytes,
    /// The size `info` reports for this cache level.
    pub cache_bytes: Option<Bytes>,
}

/// Policy B over policy A at one size, from per-round ratios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyRatio {
    pub size_bytes: Bytes,
    pub a: PagePolicy,
    pub b: PagePolicy,
    pub ratio_median: f64,
    pub ratio_min: f64,
    pub ratio_max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub seed: u64,
    pub regions: Vec<Backing>,
    pub nominal_ghz: Option<f64>,
    pub points: Vec<Point>,
    pub levels: Vec<LatencyLevel>,
    pub ratios: Vec<PolicyRatio>,
    pub mlp: Vec<MlpPoint>,
    pub valid: bool,
}
