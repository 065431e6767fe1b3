//! What counters yielded, as the document records it: each counter's
//! status, the PMU's, its sanity check, and derived metrics.

pub mod metrics;
pub mod sanity;

use serde::{Deserialize, Serialize};

/// What a counter yielded, as the document records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum CounterStatus {
    /// Counted the whole time.
    Measured { count: u64 },
    /// Counted part of the time and scaled up by enabled/running.
    Multiplexed {
        estimate: f64,
        #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0))]
        running_fraction: f64,
    },
    /// Opened but never scheduled on the PMU: nothing is known.
    NotCounted {
        #[schemars(length(min = 1))]
        reason: String,
    },
    /// Could not be opened.
    Unavailable {
        #[schemars(length(min = 1))]
        reason: String,
        fix: Option<String>,
    },
}

impl CounterStatus {
    /// The count (an estimate when multiplexed), and whether it was scaled;
    /// `None` when nothing was counted: never a zero.
    pub fn value(&self) -> Option<(f64, bool)> {
        match self {
            CounterStatus::Measured { count } => Some((*count as f64, false)),
            CounterStatus::Multiplexed { estimate, .. } => Some((*estimate, true)),
            _ => None,
        }
    }

    /// The count as a table shows it: the number, `~number (NN% of the time)`
    /// when scaled, `not counted` / `not measured` otherwise.
    pub fn display(&self) -> String {
        match self {
            CounterStatus::Measured { count } => crate::units::group_thousands(*count),
            CounterStatus::Multiplexed { estimate, running_fraction } => format!(
                "~{} (scaled: counted {:.0}% of the time)",
                crate::units::group_thousands(estimate.round() as u64),
                running_fraction * 100.0
            ),
            CounterStatus::NotCounted { .. } => "not counted".into(),
            CounterStatus::Unavailable { .. } => "not measured".into(),
        }
    }
}

/// Whether hardware counters can be opened here, and if not, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PmuStatus {
    pub hardware_counters: bool,
    pub software_counters: bool,
    pub reason: Option<String>,
    pub fix: Option<String>,
    pub perf_event_paranoid: Option<i32>,
}

impl PmuStatus {
    /// Nothing opened, for `reason` (a recorded machine).
    pub fn not_probed(reason: &str) -> PmuStatus {
        PmuStatus {
            hardware_counters: false,
            software_counters: false,
            reason: Some(reason.into()),
            fix: Some("record the machine's counters on the machine itself (memperf info)".into()),
            perf_event_paranoid: None,
        }
    }
}
