//! What `memperf page-init` found: every variant against the store limit.

use crate::timing::Summary;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantResult {
    /// `locked`, `lockfree`, `prefetch` or `parallel`.
    pub variant: String,
    pub threads: usize,
    pub ahead: usize,
    pub samples_s: Vec<f64>,
    pub ns_per_page: Summary,
    pub pages_per_s: f64,
    /// Per-repetition time of `locked` over this variant's.
    pub speedup_vs_locked: f64,
    pub speedup_min: f64,
    pub speedup_max: f64,
    /// ns per page at the store-bandwidth limit over this variant's ns per page.
    pub fraction_of_store_limit: f64,
    pub extrapolated_s: Vec<(String, f64)>,
    pub valid: bool,
    pub validation: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub segments: Vec<(u64, u64)>,
    pub pages: u64,
    pub large_pages: u64,
    pub descriptor_bytes: u64,
    /// Each store kernel's bandwidth over the descriptor array: (kernel,
    /// threads, bytes/s). The limit is the best of them.
    pub store_kernels: Vec<(String, usize, f64)>,
    pub store_bytes_per_s_1t: f64,
    pub store_bytes_per_s_all: f64,
    pub limit_ns_per_page_1t: f64,
    pub limit_ns_per_page_all: f64,
    pub results: Vec<VariantResult>,
    pub best: String,
    pub valid: bool,
}
