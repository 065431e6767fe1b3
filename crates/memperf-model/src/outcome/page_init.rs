//! What `memperf page-init` found: every variant against the store limit.

use crate::about::About;
use crate::memory::Backing;
use crate::timing::{Ratio, Summary};
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "page-init",
    summary: "Page-descriptor initialisation: locked, lock-free, prefetch, parallel, against the store-bandwidth limit",
    title: "Page-descriptor initialisation",
    question: "How fast can a kernel-style array of 128-byte page descriptors be initialised and freed, and how close is that to the store-bandwidth limit?",
    classic: "Solaris 10 page_t init: 1.785 µs → 0.388 µs per page (4.6×) with prefetch and no locks.",
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "PageInitVariant")]
pub struct VariantResult {
    /// `locked`, `lockfree`, `prefetch` or `parallel`.
    pub variant: String,
    pub threads: usize,
    pub ahead: usize,
    /// Seconds per initialisation of every page, one per repetition.
    pub samples_s: Vec<f64>,
    pub ns_per_page: Summary,
    pub pages_per_s: f64,
    /// Time of `locked` over this variant's, paired per repetition.
    pub speedup_vs_locked: Option<Ratio>,
    /// The store limit (same thread count) in ns per page over this
    /// variant's: at most 1 when the limit is one.
    pub fraction_of_store_limit: f64,
    pub extrapolated_s: Vec<(String, f64)>,
    pub valid: bool,
    pub validation: String,
}

/// One store kernel over the descriptor array, measured interleaved with
/// the variants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StoreKernel {
    pub kernel: String,
    pub threads: usize,
    pub samples_s: Vec<f64>,
    pub bytes_per_s: Summary,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "PageInitOutcome")]
pub struct Outcome {
    pub segments: Vec<(u64, u64)>,
    pub pages: u64,
    pub large_pages: u64,
    pub descriptor_bytes: u64,
    /// The descriptor array's backing, read back after the run.
    pub descriptors: Backing,
    /// Every store kernel; the limit is the best of them per thread count.
    pub store_kernels: Vec<StoreKernel>,
    pub store_bytes_per_s_1t: f64,
    pub store_bytes_per_s_all: f64,
    pub limit_ns_per_page_1t: f64,
    pub limit_ns_per_page_all: f64,
    /// A variant ran faster than the best store kernel beyond the noise
    /// (paired per repetition, the whole interval above 1): the limit is
    /// not one. A median fraction just above 1 inside the noise is "at the
    /// limit", not broken.
    pub limit_broken: bool,
    /// The prefetch distance chosen on the even repetitions (single thread),
    /// which the parallel figure uses.
    pub best_ahead: usize,
    pub results: Vec<VariantResult>,
    pub best: String,
    pub valid: bool,
}
