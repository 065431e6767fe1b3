//! What sysfs said, as the document holds it: caches, hugetlb pools and
//! the THP settings.

use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// A cache as sysfs describes it for cpu0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SysfsCache {
    pub level: u8,
    pub kind: String,
    pub size_bytes: Bytes,
    pub line_bytes: u64,
    pub ways: Option<u64>,
    /// `number_of_sets`, where sysfs gives it.
    pub sets: Option<u64>,
    pub shared_cpu_list: String,
    pub shared_by_cpus: usize,
}

/// One hugetlb pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HugePagePool {
    pub page_size_bytes: Bytes,
    pub total: u64,
    pub free: u64,
    pub reserved: u64,
    pub surplus: u64,
}

impl HugePagePool {
    /// Pages that a new mapping can still get.
    pub fn available(&self) -> u64 {
        self.free.saturating_sub(self.reserved)
    }
}

/// Transparent huge page settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThpSettings {
    /// `always`, `madvise` or `never`; `unavailable` when the kernel has no THP.
    pub enabled: String,
    pub defrag: String,
}

impl ThpSettings {
    /// Whether a region may get transparent huge pages (`always` or
    /// `madvise`, which memperf's THP regions ask for).
    pub fn usable(&self) -> bool {
        !matches!(self.enabled.as_str(), "never" | "unavailable")
    }
}
