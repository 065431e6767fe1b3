//! How memory was backed: the page policy asked for and what a region got.

pub mod policy;

pub use policy::PagePolicy;

use crate::units::Bytes;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a region asked for and what it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Backing {
    pub requested: PagePolicy,
    pub size_bytes: Bytes,
    /// The page size of the whole region; `None` when it is partly on huge
    /// pages (no single page size) or before it was read back.
    pub page_size_bytes: Option<Bytes>,
    /// Bytes backed by huge pages, read back after touching; `None` if
    /// smaps could not be read.
    pub huge_bytes: Option<Bytes>,
    /// `huge_bytes / size_bytes`.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub huge_fraction: Option<f64>,
    /// Of the neighbouring 4 KiB pages, the fraction whose physical frame
    /// directly follows the previous one's (1 on huge pages, near 0 for
    /// scattered frames), read back from pagemap; `None` where the frames
    /// are hidden (no CAP_SYS_ADMIN) or in documents before it was read.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub in_order_fraction: Option<f64>,
    /// Of the 4 KiB pages, how many share each 2 MiB block of physical
    /// memory their frames lie in, on average (512: whole blocks; near 1:
    /// a block each), read back from pagemap; `None` as for
    /// `in_order_fraction`.
    #[serde(default)]
    #[schemars(range(min = 1.0, max = 512.0))]
    pub pages_per_2mib_block: Option<f64>,
    /// The region's 4 KiB pages were first touched in a shuffled order, so
    /// their frames are scattered whatever free memory held (a stream's
    /// rate then does not depend on how fragmented it was).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_touch_shuffled: bool,
}

/// The shell command that sets a pool to `pages` pages: the one place that
/// spells the pool's file (the fixes of errors and warnings use it).
pub fn pool_command(page: Bytes, pages: u64) -> String {
    if page.0 == 2 << 20 {
        format!("echo {pages} > /proc/sys/vm/nr_hugepages")
    } else {
        format!("echo {pages} > {}", pool_dir(page).join("nr_hugepages").display())
    }
}

/// The sysfs folder of the hugetlb pool of `page`-sized pages.
pub fn pool_dir(page: Bytes) -> PathBuf {
    PathBuf::from(format!("/sys/kernel/mm/hugepages/hugepages-{}kB", page.0 / 1024))
}
