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
    /// The probe's later looks: the points around the last knee measured
    /// again, until two looks in a row place the far level and memory at
    /// the same sizes (`found` is then the first of the two), or three
    /// looks disagree (`found` then says "unstable").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<Vec<LevelPoint>>,
    /// One thread reading sequentially (bandwidth's `simd` kernel) over the
    /// far level's working sets, doubling: the best of three passes, B/s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_rates: Vec<ReadRate>,
}

/// One size of the probe's sequential reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadRate {
    pub size_bytes: Bytes,
    pub bytes_per_s: f64,
}

impl MeasuredLevels {
    /// The first read size whose doubling changes the rate by under
    /// `within` (a fraction), at or past where latency's memory begins:
    /// where a sequential read is in memory, verified in the same run.
    pub fn read_memory_from(&self, within: f64) -> Option<Bytes> {
        let from = self.found.memory_from?;
        self.read_rates
            .windows(2)
            .filter(|w| w[0].size_bytes >= from && w[1].size_bytes.0 == 2 * w[0].size_bytes.0)
            .find(|w| (w[1].bytes_per_s / w[0].bytes_per_s - 1.0).abs() < within)
            .map(|w| w[0].size_bytes)
    }
}
