//! What `memperf working-set` found: the 2002 sample application on each
//! page policy, measured interleaved: time per row, FLOP/s, the speed-up
//! over 4 KiB pages with its interval, the huge-page coverage read back,
//! counters where the machine has them, the time attributable to
//! translation (4k − huge, said as such) beside what the measured walk cost
//! predicts, and the article's figures beside today's.

use super::stat::EventCount;
use crate::about::About;
use crate::memory::{Backing, PagePolicy};
use crate::timing::{Ratio, Summary};
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "working-set",
    summary: "The 2002 sample application (random rows of three large float arrays) on every page policy: time, FLOP/s, speed-up, coverage, TLB cost",
    title: "Large working sets on huge pages",
    question: "How much faster do random rows of three large float arrays run on each page policy, and did the arrays really get huge pages?",
    classic: "2002, UltraSPARC III: 85 s → 15 s on 4 MiB ISM pages (×5.7); DTLB miss rate 30% → 0.03%, CPI 6.89 → 2.59.",
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicyResult {
    pub pages: PagePolicy,
    /// The three arrays' region, read back after the measurement.
    pub backing: Backing,
    pub rows_per_sample: u64,
    #[schemars(length(min = 1), extend("items" = {"type": "number", "exclusiveMinimum": 0}))]
    pub samples_s: Vec<f64>,
    pub ns_per_row: Summary,
    /// Median, from the FLOPs of the rows done.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub flops_per_s: f64,
    /// 4k time / this policy's time, paired by repetition (> 1: faster).
    pub speedup_vs_4k: Option<Ratio>,
    /// Median ns per row on 4k minus on this policy: the time
    /// attributable to address translation when the policy is huge.
    pub translation_ns_per_row: Option<f64>,
    /// Counted over one extra sample, where counters exist.
    pub counters: Vec<EventCount>,
    /// CPI, DTLB misses per load and the estimated time in page walks,
    /// from those counts ("not measured" without them).
    #[serde(default)]
    pub metrics: Vec<crate::counters::metrics::Metric>,
    /// The f32 sum of the validation rows agreed with the f64 recomputation,
    /// and every sample's sum was finite.
    pub valid: bool,
    /// Seconds mapping the arrays and writing them first took (the faults,
    /// page zeroing and, for huge pages, compaction a whole program pays
    /// at its start, outside the rows timed above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_s: Option<f64>,
}

/// The 2002 article's figures (UltraSPARC III, Solaris ISM).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Article {
    pub machine: String,
    pub seconds_small_pages: f64,
    pub seconds_large_pages: f64,
    pub speedup: f64,
    pub dtlb_miss_rate_small: f64,
    pub dtlb_miss_rate_large: f64,
    pub cpi_small: f64,
    pub cpi_large: f64,
}

impl Article {
    pub fn figures() -> Article {
        Article {
            machine: "UltraSPARC III, 750 MHz, 8 KiB base pages, 4 MiB ISM pages, 512-entry DTLB".into(),
            seconds_small_pages: 85.0,
            seconds_large_pages: 15.0,
            speedup: 85.0 / 15.0,
            dtlb_miss_rate_small: 0.30,
            dtlb_miss_rate_large: 0.0003,
            cpi_small: 6.89,
            cpi_large: 2.59,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WorkingSetOutcome")]
pub struct Outcome {
    #[schemars(range(min = 1))]
    pub total_bytes: u64,
    pub row_floats: u64,
    pub rows: u64,
    pub index_len: u64,
    /// Seed of the random row index.
    pub seed: u64,
    pub order_seed: u64,
    #[schemars(length(min = 1))]
    pub results: Vec<PolicyResult>,
    /// Every policy computed the same sum over the validation rows, bit for bit.
    pub sums_agree: bool,
    /// Walk cost `memperf tlb` measured here (a saved result), and what it
    /// predicts per row: three arrays × walk × (miss chance on 4 KiB − on 2 MiB).
    pub walk_ns: Option<crate::units::Nanos>,
    pub predicted_translation_ns_per_row: Option<f64>,
    pub walk_cost_source: Option<String>,
    pub article: Article,
    pub advice: Vec<String>,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
