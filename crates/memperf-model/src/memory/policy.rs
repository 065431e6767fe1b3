//! Page policies: how a region's memory is backed.

use crate::error::{Error, Result};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
pub enum PagePolicy {
    /// Base pages only (THP disabled for the region with MADV_NOHUGEPAGE).
    #[serde(rename = "4k")]
    Small,
    /// Transparent huge pages requested with MADV_HUGEPAGE on a 2 MiB-aligned region.
    #[serde(rename = "thp")]
    Thp,
    /// hugetlb 2 MiB pages (MAP_HUGETLB | MAP_HUGE_2MB).
    #[serde(rename = "2m")]
    Huge2M,
    /// hugetlb 1 GiB pages (MAP_HUGETLB | MAP_HUGE_1GB).
    #[serde(rename = "1g")]
    Huge1G,
    /// SysV shared memory with SHM_HUGETLB (2 MiB pages), as Solaris ISM.
    #[serde(rename = "shm")]
    Shm,
}

impl PagePolicy {
    pub const ALL: [PagePolicy; 5] =
        [PagePolicy::Small, PagePolicy::Thp, PagePolicy::Huge2M, PagePolicy::Huge1G, PagePolicy::Shm];

    pub fn name(self) -> &'static str {
        match self {
            PagePolicy::Small => "4k",
            PagePolicy::Thp => "thp",
            PagePolicy::Huge2M => "2m",
            PagePolicy::Huge1G => "1g",
            PagePolicy::Shm => "shm",
        }
    }

    /// The page size this policy aims for.
    pub fn page_size(self) -> Bytes {
        match self {
            PagePolicy::Small => Bytes(4096),
            PagePolicy::Thp | PagePolicy::Huge2M | PagePolicy::Shm => Bytes(2 << 20),
            PagePolicy::Huge1G => Bytes(1 << 30),
        }
    }

    /// Whether the policy draws from a hugetlb pool that must be reserved.
    pub fn uses_hugetlb_pool(self) -> bool {
        matches!(self, PagePolicy::Huge2M | PagePolicy::Huge1G | PagePolicy::Shm)
    }

    pub fn parse(text: &str) -> Result<PagePolicy> {
        match text.trim().to_ascii_lowercase().as_str() {
            "4k" | "4kib" | "small" => Ok(PagePolicy::Small),
            "thp" => Ok(PagePolicy::Thp),
            "2m" | "2mib" | "hugetlb-2m" => Ok(PagePolicy::Huge2M),
            "1g" | "1gib" | "hugetlb-1g" => Ok(PagePolicy::Huge1G),
            "shm" | "shm-huge" => Ok(PagePolicy::Shm),
            other => Err(Error::usage(format!("unknown page policy '{other}': use one of 4k, thp, 2m, 1g, shm"))),
        }
    }
}

impl fmt::Display for PagePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in PagePolicy::ALL {
            assert_eq!(PagePolicy::parse(p.name()).unwrap(), p);
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{}\"", p.name()));
        }
        assert!(PagePolicy::parse("8k").unwrap_err().message.contains("4k, thp, 2m, 1g, shm"));
    }
}
