//! What `memperf info` derives from the fingerprint: TLB reach per level,
//! and the GPUs NVIDIA's driver finds.

use crate::about::About;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "info",
    summary: "Machine fingerprint: CPU, caches and TLBs as claimed (each checked) beside the measured clock and cache levels, huge pages, THP, PMU, prefetch instructions",
    title: "Machine",
    question: "What is this machine: CPU, caches, TLBs per page size, huge-page pools, THP, counters?",
    classic: "",
};

/// Memory one TLB level maps when full, for one page size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TlbReach {
    pub level: u8,
    pub kind: String,
    pub page_size_bytes: Bytes,
    pub entries: Option<u32>,
    pub reach_bytes: Option<Bytes>,
}

/// The fingerprint itself is the document's `machine`; the outcome is what
/// follows from it. The machine's warnings are the document's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "InfoOutcome")]
pub struct Outcome {
    /// For L1 and L2 and each of 4 KiB, 2 MiB and 1 GiB pages; entries
    /// `None` where the CPU does not say.
    pub tlb_reach: Vec<TlbReach>,
    /// Each GPU as `gpu` describes it (the part, SMs, L2, memory, clocks,
    /// ECC and PCIe link); empty where there is none …
    #[serde(default)]
    pub gpus: Vec<super::gpu::Device>,
    /// … and then why: no driver, or no device.
    #[serde(default)]
    pub no_gpu: Option<String>,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        true
    }
}
