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

crate::named_enum! {
    /// How the descriptors are initialised.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, schemars::JsonSchema)]
    pub enum InitVariant ("page-init variant") {
        /// Each descriptor under its lock, as the original code.
        Locked = "locked",
        /// No locks: the array belongs to one initialiser.
        Lockfree = "lockfree",
        /// Lock-free, with a prefetch `ahead` descriptors ahead.
        Prefetch = "prefetch",
        /// Whole descriptors as two lines of non-temporal stores, each list
        /// head held back until its prev is known.
        Streaming = "streaming",
        /// Prefetch on every thread, each its own share of the array.
        Parallel = "parallel",
        /// Streaming on every thread.
        ParallelStreaming = "parallel-streaming",
    }
}

impl InitVariant {
    /// As the document and the report spell it.
    /// Whether it runs with a prefetch distance (`ahead`).
    pub fn prefetches(self) -> bool {
        matches!(self, InitVariant::Prefetch | InitVariant::Parallel)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "PageInitVariant")]
pub struct VariantResult {
    pub variant: InitVariant,
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

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}

/// The variant with the lowest median time per page (the one `best` names).
pub fn fastest(results: &[VariantResult]) -> Option<&VariantResult> {
    results.iter().min_by(|a, b| a.ns_per_page.median.total_cmp(&b.ns_per_page.median))
}

impl Outcome {
    /// The variant `best` names: the lowest median time per page.
    pub fn fastest(&self) -> Option<&VariantResult> {
        fastest(&self.results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are the strings documents before the enum held.
    #[test]
    fn variants_read_and_write_the_names_documents_hold() {
        for (v, n) in [
            (InitVariant::Locked, "locked"),
            (InitVariant::Lockfree, "lockfree"),
            (InitVariant::Prefetch, "prefetch"),
            (InitVariant::Streaming, "streaming"),
            (InitVariant::Parallel, "parallel"),
            (InitVariant::ParallelStreaming, "parallel-streaming"),
        ] {
            assert_eq!(serde_json::to_value(v).unwrap(), serde_json::json!(n));
            assert_eq!(serde_json::from_value::<InitVariant>(serde_json::json!(n)).unwrap(), v);
            assert_eq!(v.name(), n);
        }
        assert!(serde_json::from_value::<InitVariant>(serde_json::json!("prefetch-16")).is_err());
    }
}
