//! What `memperf hugepages -- CMD` found: the unmodified program run
//! alternately without and with huge pages (glibc's malloc tunable), each
//! run's exit, times and huge-page coverage read back, the paired ratio per
//! arm with its interval and verdict, and why an arm got no huge pages.

use crate::about::About;
use crate::process::elf::Linkage;
use crate::process::memory::{Coverage, KernelActivity};
use crate::process::{ChildUsage, Exit};
use crate::timing::{Ratio, Summary};
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "hugepages",
    summary: "Does this unmodified program get faster on huge pages? A/B runs through glibc's malloc tunable, with the coverage read back",
    title: "Huge pages for an unmodified program",
    question: "Does this program get faster on huge pages, and did it really get them?",
    classic: "",
};

crate::named_enum! {
    /// One side of the A/B.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, schemars::JsonSchema)]
    pub enum Arm ("arm") {
        /// `glibc.malloc.hugetlb=0`: malloc as usual.
        Without = "without",
        /// `glibc.malloc.hugetlb=1`: malloc asks for THP (madvise).
        Thp = "thp",
        /// `glibc.malloc.hugetlb=2`: malloc takes hugetlb pages from the pool.
        Hugetlb = "hugetlb",
    }
}

impl Arm {
    pub fn tunable(self) -> &'static str {
        match self {
            Arm::Without => "glibc.malloc.hugetlb=0",
            Arm::Thp => "glibc.malloc.hugetlb=1",
            Arm::Hugetlb => "glibc.malloc.hugetlb=2",
        }
    }

}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The arm of the run just before this one (`None` for the first): a
    /// run meets what its predecessor left behind (freed memory the kernel
    /// must compact before it can hand out 2 MiB blocks, warm caches).
    #[serde(default)]
    pub after: Option<Arm>,
    /// What the kernel did for the whole machine while the run lasted
    /// (/proc/vmstat), where it could be read.
    #[serde(default)]
    pub kernel: Option<KernelActivity>,
}

/// One of two groups of an arm's runs (see [`crate::analysis::modes`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mode {
    /// Rounds (from 0) of the runs in this mode.
    pub rounds: Vec<usize>,
    pub wall_s_median: f64,
    pub system_s_median: f64,
    /// Lowest and highest of the runs' speed-ups over the median run
    /// without huge pages (`None` for the arm without).
    pub speedup_range: Option<(f64, f64)>,
    /// How many of the runs came right after a run of each arm.
    pub after: Vec<(Arm, usize)>,
    /// Median compaction stalls per run, where /proc/vmstat was read.
    pub compact_stalls_median: Option<f64>,
}

/// A pair on the other side of 1 from every other pair of an arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LonePair {
    /// Round (from 0) of the pair.
    pub round: usize,
    pub wall_s: f64,
    pub system_s: f64,
    pub after: Option<Arm>,
    /// The speed-up over the other pairs.
    pub rest: Ratio,
}

/// An arm whose runs fall into two separate groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Modes {
    pub fast: Mode,
    pub slow: Mode,
    /// Fastest slow run / slowest fast run (of system time when
    /// `by_system_time`).
    pub separation: f64,
    /// The groups were told apart by system time, their wall times being
    /// closer than two modes need (×1.3): the kernel's work differs by
    /// run, and the wall-time verdict mixes the two.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_system_time: bool,
}

impl Run {
    pub fn ok(&self) -> bool {
        self.exit == Exit::Exited { code: 0 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Two groups of runs, where the arm's wall times form two.
    #[serde(default)]
    pub modes: Option<Modes>,
    /// The one pair that alone keeps the speed-up's interval across 1,
    /// where there is one.
    #[serde(default)]
    pub lone_pair: Option<LonePair>,
    /// The speed-up's verdict on the even and on the odd rounds apart.
    #[serde(default)]
    pub second_look: Option<crate::analysis::second_look::SecondLook>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "HugepagesOutcome")]
pub struct Outcome {
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    pub rounds: usize,
    #[schemars(length(min = 2))]
    pub arms: Vec<Arm>,
    /// The order the runs were made.
    pub order: Vec<Arm>,
    /// The seed of that order (random circuits in which every arm follows
    /// every arm equally often); `None` in documents from before it.
    #[serde(default)]
    pub order_seed: Option<u64>,
    /// THP defrag setting while it ran.
    #[serde(default)]
    pub thp_defrag: Option<String>,
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

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
