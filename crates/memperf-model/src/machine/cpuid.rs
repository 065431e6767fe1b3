//! What CPUID said, as the document holds it: the CPU's identity, its
//! caches with their geometry, and its data TLBs per page size.

use crate::units::Bytes;
use serde::{Deserialize, Serialize};

pub use crate::cpu::CpuIdentity;

/// A cache as CPUID describes it, with the geometry its size comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuidCache {
    pub level: u8,
    pub kind: String,
    pub size_bytes: Bytes,
    pub line_bytes: u64,
    pub ways: u64,
    pub sets: u64,
    pub partitions: u64,
    /// Most logical CPUs that may share one instance, as CPUID states it.
    pub max_sharing: u64,
}

/// One TLB structure for one page size, as CPUID describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TlbLevel {
    /// 1 for the first-level (L1) TLB, 2 for the second level.
    pub level: u8,
    /// `data`, `load`, `store` or `unified` (instruction TLBs are left out).
    pub kind: String,
    pub page_size_bytes: Bytes,
    /// Entries usable for this page size; `None` when the CPU does not say.
    pub entries: Option<u32>,
    /// Whether the same entries also hold other page sizes.
    pub shared_with_other_sizes: bool,
}

impl TlbLevel {
    /// Memory this TLB maps when full: entries × page size.
    pub fn reach(&self) -> Option<Bytes> {
        self.entries.map(|e| Bytes(e as u64 * self.page_size_bytes.0))
    }
}

pub const PAGE_4K: Bytes = Bytes(4096);
pub const PAGE_2M: Bytes = Bytes(2 << 20);
pub const PAGE_1G: Bytes = Bytes(1 << 30);
