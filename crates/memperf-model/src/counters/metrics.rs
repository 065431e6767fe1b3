//! Derived metrics as the document records them.

use serde::{Deserialize, Serialize};

/// What a metric came to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "kebab-case")]
#[schemars(rename = "MetricOutcome")]
pub enum Outcome {
    Computed {
        value: f64,
        /// Some input was a multiplexed (scaled) count.
        scaled: bool,
        /// Some input came from a PMU that failed the sanity check.
        suspect: bool,
    },
    /// An input was not measured; the names it lacks.
    NotMeasured {
        #[schemars(length(min = 1))]
        missing: Vec<String>,
    },
    /// Every input was measured but the formula has no value (a zero divisor).
    Undefined { reason: String },
}

/// A metric as the document records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub description: String,
    /// The formula used (or the first one, when none could be).
    pub formula: String,
    pub outcome: Outcome,
}

impl Metric {
    pub fn value(&self) -> Option<f64> {
        match self.outcome {
            Outcome::Computed { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The value in its unit, marked when scaled or suspect; the reason
    /// when there is none.
    pub fn display(&self) -> String {
        match &self.outcome {
            Outcome::Computed { value, scaled, suspect } => {
                let mut s = format_value(*value, &self.unit);
                if *scaled {
                    s.push_str(" (from scaled counts)");
                }
                if *suspect {
                    s.push_str(" (SUSPECT: the PMU failed its check)");
                }
                s
            }
            Outcome::NotMeasured { missing } => format!("not measured (needs {})", missing.join(", ")),
            Outcome::Undefined { reason } => format!("undefined ({reason})"),
        }
    }
}

/// `0.283` fraction as `28.3%`, rates with SI prefixes.
pub fn format_value(v: f64, unit: &str) -> String {
    match unit {
        "fraction" => format!("{:.2}%", v * 100.0),
        "B/s" => format!("{:.2} GB/s", v / 1e9),
        _ if v.abs() >= 1e6 => format!("{:.3e} {unit}", v),
        _ if v.abs() >= 100.0 => format!("{v:.0} {unit}"),
        _ => format!("{v:.3} {unit}"),
    }
}
