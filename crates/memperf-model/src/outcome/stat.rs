//! What `memperf stat -- CMD` saw: the program's exit, its counters (each
//! measured, scaled, not counted or unavailable with the reason), interval
//! rows, its memory and huge-page coverage over time, derived metrics, what
//! cannot be known on this machine, and advice with numbers in it.

use crate::about::About;
use crate::counters::metrics::Metric;
use crate::counters::sanity::PmuCheck;
use crate::counters::CounterStatus;
use crate::process::memory::{Coverage, MemorySample};
use crate::process::{ChildUsage, Exit};
use serde::{Deserialize, Serialize};

/// What this experiment is: its name, `--help` line, question and title.
pub const ABOUT: About = About {
    name: "stat",
    summary: "Count a program's events (at intervals with -I), derive CPI, miss rates and the time in page walks, and advise; honest without a PMU",
    title: "A program's counters",
    question: "What did the program count, what follows from it, and what cannot be known on this machine?",
    classic: "2002: cputrack -T 5 and libcpc, then CPI 6.89 and 31 s of 85 s lost to TLB misses, by hand.",
};

/// One event's total over the run (or a region).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventCount {
    #[schemars(length(min = 1))]
    pub name: String,
    pub description: String,
    /// Counted by the kernel; works without a PMU.
    pub software: bool,
    pub status: CounterStatus,
}

/// Counts during one interval (`-I`): the change of each event since the
/// previous row, in the order of `events`; `None` where nothing was counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "StatInterval")]
pub struct Interval {
    /// Seconds since the program was released, at the end of the interval.
    pub t_s: f64,
    pub counts: Vec<Option<f64>>,
    pub memory: Option<MemorySample>,
}

/// Figures of this machine that the derived metrics use, and where they
/// came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MachineFigures {
    /// The memperf result the walk cost came from.
    pub source: Option<String>,
    /// Cost of one page walk beyond the 4 KiB TLB reach (`memperf tlb`).
    pub walk_ns: Option<crate::units::Nanos>,
    pub line_bytes: u64,
    /// L2 DTLB entries × page size, from CPUID (a hypervisor may invent these).
    pub tlb_reach_4k_bytes: Option<u64>,
    pub tlb_reach_2m_bytes: Option<u64>,
    /// The largest 4 KiB-page TLB reach `memperf tlb` measured here (same
    /// source as the walk cost), shown beside CPUID's.
    #[serde(default)]
    pub measured_reach_4k_bytes: Option<u64>,
    /// Why no walk cost can be measured on this host at all (its huge
    /// pages use small TLB entries: `memperf tlb` has no walk-free control).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_not_measurable: Option<String>,
    /// Why a figure is missing.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "StatOutcome")]
pub struct Outcome {
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    pub exit: Exit,
    pub wall_s: f64,
    /// From wait4: the program and the children it waited for.
    pub usage: ChildUsage,
    pub pmu_check: PmuCheck,
    pub events: Vec<EventCount>,
    pub interval_ms: Option<u64>,
    pub intervals: Vec<Interval>,
    /// /proc/PID/smaps_rollup of the program (not of its child processes).
    pub memory_samples: Vec<MemorySample>,
    pub coverage: Coverage,
    pub machine_figures: MachineFigures,
    pub metrics: Vec<crate::counters::metrics::Metric>,
    /// What this machine cannot tell, and what can be done instead.
    pub cannot_know: Vec<String>,
    pub advice: Vec<String>,
    /// The program's hot working set over the run (`--wss`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_set: Option<Box<super::wss::Outcome>>,
    /// False when the program could not be observed as asked (never for
    /// its own exit status, which is reported, not judged).
    pub valid: bool,
}

impl super::Valid for Outcome {
    fn valid(&self) -> bool {
        self.valid
    }
}

impl Outcome {
    pub fn event(&self, name: &str) -> Option<&EventCount> {
        self.events.iter().find(|e| e.name == name)
    }

    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }
}
