//! What a watched program held: samples of its memory, its huge-page
//! coverage, and the kernel's huge-page activity around a run.

use serde::{Deserialize, Serialize};

/// One sample of the program's memory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemorySample {
    /// Seconds since the program was released.
    pub t_s: f64,
    pub rss_bytes: u64,
    /// Anonymous memory on transparent huge pages.
    pub thp_bytes: u64,
    /// Memory on hugetlb pages (private and shared).
    pub hugetlb_bytes: u64,
}

impl MemorySample {
    pub fn huge_bytes(&self) -> u64 {
        self.thp_bytes + self.hugetlb_bytes
    }
}

/// Peak and time-weighted huge-page coverage over a run's samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Coverage {
    pub samples: usize,
    pub peak_rss_bytes: u64,
    pub peak_huge_bytes: u64,
    /// Huge bytes over resident bytes, each sample weighted by the time to
    /// the next (`None` without two samples).
    pub time_weighted_huge_fraction: Option<f64>,
}

pub fn coverage(samples: &[MemorySample]) -> Coverage {
    let mut huge_t = 0.0;
    let mut rss_t = 0.0;
    for w in samples.windows(2) {
        let dt = w[1].t_s - w[0].t_s;
        huge_t += w[0].huge_bytes() as f64 * dt;
        rss_t += w[0].rss_bytes as f64 * dt;
    }
    Coverage {
        samples: samples.len(),
        peak_rss_bytes: samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        peak_huge_bytes: samples.iter().map(|s| s.huge_bytes()).max().unwrap_or(0),
        time_weighted_huge_fraction: (rss_t > 0.0).then(|| huge_t / rss_t),
    }
}

/// Differences of /proc/vmstat counters over one run: machine-wide, so
/// they are the run's own only on an otherwise quiet machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelActivity {
    /// Allocations that stalled to compact memory (`compact_stall`).
    pub compact_stalls: u64,
    /// Huge pages handed out at a fault (`thp_fault_alloc`).
    pub thp_fault_alloc: u64,
    /// Faults that wanted a huge page and got 4 KiB ones (`thp_fault_fallback`).
    pub thp_fault_fallback: u64,
}

impl KernelActivity {
    /// Reads `compact_stall`, `thp_fault_alloc` and `thp_fault_fallback`
    /// from vmstat text; `None` when any is missing.
    pub fn parse(text: &str) -> Option<KernelActivity> {
        let field = |name: &str| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == name).then(|| v.trim().parse::<u64>().ok()).flatten()
            })
        };
        Some(KernelActivity {
            compact_stalls: field("compact_stall")?,
            thp_fault_alloc: field("thp_fault_alloc")?,
            thp_fault_fallback: field("thp_fault_fallback")?,
        })
    }

    /// What happened between `before` and `self` (counters never go back;
    /// a wrap reads as zero).
    pub fn since(&self, before: &KernelActivity) -> KernelActivity {
        KernelActivity {
            compact_stalls: self.compact_stalls.saturating_sub(before.compact_stalls),
            thp_fault_alloc: self.thp_fault_alloc.saturating_sub(before.thp_fault_alloc),
            thp_fault_fallback: self.thp_fault_fallback.saturating_sub(before.thp_fault_fallback),
        }
    }
}
