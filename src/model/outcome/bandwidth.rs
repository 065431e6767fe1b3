//! What `memperf bandwidth` found: every variant's raw samples, the
//! headline figures, prefetch-distance plateaus and the effect of prefetch.

use crate::kernels::{Hint, StreamShape};
use crate::memory::{Backing, PagePolicy};
use crate::timing::Summary;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// What is measured in one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub pages: PagePolicy,
    pub threads: usize,
    pub kernel: StreamShape,
    pub hint: Option<Hint>,
    pub distance_elements: Option<u64>,
}

impl Variant {
    pub fn label(&self) -> String {
        match (self.hint, self.distance_elements) {
            (Some(h), Some(d)) => format!("{}/{h}/D={d}", self.kernel),
            _ => self.kernel.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantResult {
    #[serde(flatten)]
    pub variant: Variant,
    pub isa: String,
    /// Passes over the array per sample.
    pub passes: u64,
    pub bytes_per_sample: u64,
    /// Raw sample durations, in seconds, in measurement order.
    pub samples_s: Vec<f64>,
    pub bytes_per_s: Summary,
    pub checksum_ok: bool,
}

/// The best plateau of a prefetch-distance curve: "D = 416..448: 6.08 GB/s".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    pub pages: PagePolicy,
    pub threads: usize,
    pub hint: Hint,
    pub start_elements: u64,
    pub end_elements: u64,
    pub bytes_per_s: f64,
}

/// Prefetch at its best distance against plain `simd`, paired by repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefetchEffect {
    pub pages: PagePolicy,
    pub threads: usize,
    pub hint: Hint,
    pub distance_elements: u64,
    pub ratio_median: f64,
    pub ratio_min: f64,
    pub ratio_max: f64,
    /// `helps`, `hurts` or `within noise` (all ratios on one side of 1, or not).
    pub verdict: String,
}

/// The best figure for one page policy and thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    pub pages: PagePolicy,
    pub threads: usize,
    pub best: String,
    /// Median bandwidth of the best variant.
    pub bytes_per_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub isa: String,
    pub size_bytes: Bytes,
    pub regions: Vec<Backing>,
    pub cpus: Vec<usize>,
    pub results: Vec<VariantResult>,
    pub headlines: Vec<Headline>,
    pub plateaus: Vec<Plateau>,
    pub prefetch_effects: Vec<PrefetchEffect>,
    pub valid: bool,
}

