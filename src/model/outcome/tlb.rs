//! What `memperf tlb` found: the sweeps, the reaches and the walk cost.

use crate::memory::{Backing, PagePolicy};
use crate::timing::Summary;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub pages: PagePolicy,
    /// Distance between the lines visited: the page size, or 4 KiB for the
    /// control sweep on huge pages.
    pub stride_bytes: Bytes,
    pub page_count: u64,
    /// Memory the P pages span (the TLB reach needed).
    pub span_bytes: Bytes,
    pub chunk_ns: Vec<f64>,
    pub ns_per_access: Summary,
    pub p90_ns: f64,
    pub valid: bool,
}

/// A reach found on one policy's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reach {
    pub pages: PagePolicy,
    pub page_size_bytes: Bytes,
    /// `L1` or `L2`: the TLB level whose reach ends at this knee.
    pub level: String,
    /// Largest page count before the knee.
    pub measured_entries: u64,
    pub measured_reach_bytes: Bytes,
    /// Entries CPUID reports for this level and page size.
    pub cpuid_entries: Option<u32>,
    pub ns_within: f64,
    pub ns_beyond: f64,
}

/// The translation cost at one page count: small pages minus huge pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkCost {
    pub page_count: u64,
    pub small: PagePolicy,
    pub huge: PagePolicy,
    /// Per-round difference of medians, small − huge, in ns.
    pub ns_median: f64,
    pub ns_min: f64,
    pub ns_max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub seed: u64,
    pub regions: Vec<Backing>,
    pub nominal_ghz: Option<f64>,
    pub points: Vec<Point>,
    pub reaches: Vec<Reach>,
    pub walk_costs: Vec<WalkCost>,
    /// Page-walk cost beyond the small-page reach: median over those points.
    pub walk_ns: Option<f64>,
    pub walk_cycles: Option<f64>,
    /// What this means for a user, in one sentence per page size.
    pub advice: Vec<String>,
    pub valid: bool,
}
