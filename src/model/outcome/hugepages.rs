//! What `memperf hugepages -- CMD` found: the unmodified program run
//! alternately without and with huge pages (glibc's malloc tunable), each
//! run's exit, times and huge-page coverage read back, the paired ratio per
//! arm with its interval and verdict, and why an arm got no huge pages.

use crate::process::elf::Linkage;
use crate::process::memory::Coverage;
use crate::process::{ChildUsage, Exit};
use crate::timing::{Ratio, Summary};
use serde::{Deserialize, Serialize};

/// One side of the A/B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    /// `glibc.malloc.hugetlb=0`: malloc as usual.
    Without,
    /// `glibc.malloc.hugetlb=1`: malloc asks for THP (madvise).
    Thp,
    /// `glibc.malloc.hugetlb=2`: malloc takes hugetlb pages from the pool.
    Hugetlb,
}

impl Arm {
    pub fn tunable(self) -> &'static str {
        match self {
            Arm::Without => "glibc.malloc.hugetlb=0",
            Arm::Thp => "glibc.malloc.hugetlb=1",
            Arm::Hugetlb => "glibc.malloc.hugetlb=2",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Arm::Without => "without",
            Arm::Thp => "thp",
            Arm::Hugetlb => "hugetlb",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub arm: Arm,
    pub round: usize,
    pub exit: Exit,
    pub wall_s: f64,
    pub usage: ChildUsage,
    pub coverage: Coverage,
    /// The last lines of a failed run's output (when not shown live).
    pub output_tail: Option<String>,
    /// The run's counters (inherited by its threads and children).
    #[serde(default)]
    pub counters: Vec<super::stat::EventCount>,
}

impl Run {
    pub fn ok(&self) -> bool {
        self.exit == Exit::Exited { code: 0 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    pub arm: Arm,
    pub runs_ok: usize,
    pub runs_failed: usize,
    /// Over the runs that succeeded only.
    pub wall_s: Option<Summary>,
    pub user_s_median: Option<f64>,
    pub system_s_median: Option<f64>,
    pub peak_huge_bytes: u64,
    /// Median over runs of each run's time-weighted coverage.
    pub huge_fraction_median: Option<f64>,
    /// Wall time without / with, paired by round (> 1: faster with).
    pub speedup: Option<Ratio>,
    /// Why this arm got no huge pages, when it got none.
    pub no_huge_reason: Option<String>,
    /// Median per run of each counter over the runs that succeeded;
    /// `None` where it was not measured.
    #[serde(default)]
    pub counter_medians: Vec<(String, Option<f64>)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub command: Vec<String>,
    pub rounds: usize,
    pub arms: Vec<Arm>,
    /// The order the runs were made, round by round.
    pub order: Vec<Arm>,
    pub linkage: Linkage,
    pub glibc_version: Option<String>,
    /// Why the tunable will not reach this program, when it will not.
    pub tunable_ignored: Option<String>,
    pub thp_mode: String,
    pub runs: Vec<Run>,
    pub summaries: Vec<ArmSummary>,
    pub advice: Vec<String>,
    /// False when a run failed or an arm could not be compared.
    pub valid: bool,
}
