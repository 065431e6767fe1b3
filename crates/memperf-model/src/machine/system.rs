//! The system's state around a run: governor, boost, SMT, NUMA, KPTI.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SystemState {
    /// cpufreq governor of CPU 0 (`performance`, `schedutil` …).
    pub governor: Option<String>,
    /// Turbo/boost: `true` when enabled (cpufreq/boost, or intel_pstate's no_turbo = 0).
    pub boost: Option<bool>,
    /// SMT control (`on`, `off`, `notsupported` …).
    pub smt: Option<String>,
    /// NUMA nodes online.
    pub numa_nodes: Option<usize>,
    /// The Meltdown mitigation line (`Mitigation: PTI` means KPTI is on).
    pub meltdown: Option<String>,
    pub kpti: Option<bool>,
    pub kernel_cmdline: Option<String>,
}
