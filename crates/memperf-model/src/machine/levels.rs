//! Where the cache levels end, as measured at the start of a run.

use crate::analysis::levels::CacheLevelsFound;
use crate::memory::PagePolicy;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// One working set of the probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LevelPoint {
    pub size_bytes: Bytes,
    /// Median ns per load.
    pub latency_ns: crate::units::Nanos,
    pub samples_ns: Vec<f64>,
}

/// The measured cache levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MeasuredLevels {
    /// The page policy of the chase, and the share of it on huge pages.
    pub pages: PagePolicy,
    pub huge_fraction: Option<f64>,
    pub points: Vec<LevelPoint>,
    pub found: CacheLevelsFound,
    pub duration_s: f64,
    /// Every sample ended where the cycle says.
    pub valid: bool,
    /// One thread reading the largest working set sequentially, B/s: what
    /// the plan costs streaming passes with (not a bandwidth result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_s: Option<f64>,
    /// B/s a region is mapped and touched at, on 4 KiB pages and on THP
    /// (direct compaction included), measured on 32 MiB each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_bytes_per_s: Option<(f64, f64)>,
}
