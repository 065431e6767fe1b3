//! The verdict on a PMU: its instruction count checked against a loop of known length.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum PmuCheck {
    /// Counted within the tolerance of the known count.
    Trusted { expected: u64, counted: u64, error: f64 },
    /// Counted, but off by more than the tolerance.
    Suspect { expected: u64, counted: u64, error: f64 },
    /// No instruction counter to check.
    Unavailable { reason: String },
}

impl PmuCheck {
    pub fn suspect(&self) -> bool {
        matches!(self, PmuCheck::Suspect { .. })
    }
}
