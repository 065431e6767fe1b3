//! What the region API (`memperf::region`, `mp_region_begin/end` in C)
//! counted: per named region, how often it was entered, by how many
//! threads, its wall time, its counters and derived metrics.

use super::stat::EventCount;
use crate::about::About;
use crate::counters::metrics::Metric;
use crate::counters::sanity::PmuCheck;
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "regions",
    summary: "Counters around the regions a program marked through the region API (MEMPERF_REGIONS), read back by `memperf report`",
    title: "Counters around regions of a program",
    question: "What did each instrumented region cost?",
    classic: "",
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RegionTotals {
    pub name: String,
    /// Completed begin/end pairs, over all threads.
    pub entries: u64,
    pub threads: u32,
    /// Summed over entries and threads.
    pub wall_ns: u64,
    pub events: Vec<EventCount>,
    pub metrics: Vec<Metric>,
    /// Begins without their end when the document was written.
    pub open_at_exit: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "RegionsOutcome")]
pub struct Outcome {
    /// The instrumented program (argv[0]) and its pid.
    pub program: String,
    pub pid: u32,
    /// How counters were read inside regions: `rdpmc` (user space, through
    /// the perf mmap page) or `read` (a system call), per event.
    pub read_methods: Vec<(String, String)>,
    /// Measured cost of one begin+end pair with these events, in ns.
    pub overhead_ns: Option<crate::units::Nanos>,
    pub pmu_check: PmuCheck,
    pub regions: Vec<RegionTotals>,
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}
