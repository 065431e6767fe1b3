//! Page policies: how a region's memory is backed.

use crate::units::Bytes;

crate::named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, schemars::JsonSchema)]
    pub enum PagePolicy ("page policy") {
        /// Base pages only (THP disabled for the region with MADV_NOHUGEPAGE).
        Small = "4k" | "4kib" | "small",
        /// Transparent huge pages requested with MADV_HUGEPAGE on a 2 MiB-aligned region.
        Thp = "thp",
        /// hugetlb 2 MiB pages (MAP_HUGETLB | MAP_HUGE_2MB).
        Huge2M = "2m" | "2mib" | "hugetlb-2m",
        /// hugetlb 1 GiB pages (MAP_HUGETLB | MAP_HUGE_1GB).
        Huge1G = "1g" | "1gib" | "hugetlb-1g",
        /// SysV shared memory with SHM_HUGETLB (2 MiB pages), as Solaris ISM.
        Shm = "shm" | "shm-huge",
    }
}

impl PagePolicy {
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
