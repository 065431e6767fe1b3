//! What the two halves of the repetitions said of a verdict.

use serde::{Deserialize, Serialize};

/// What the halves said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SecondLook {
    /// Both halves reach the whole's verdict.
    Stable { first: String, second: String },
    /// The halves reach different verdicts: no advice follows.
    Unstable { first: String, second: String },
    /// Too few repetitions to split: the verdict stands on one look.
    NotChecked { why: String },
}

impl SecondLook {
    /// Compares the verdicts of the two halves.
    pub fn of<T: PartialEq + std::fmt::Display>(first: T, second: T) -> SecondLook {
        let (a, b) = (first.to_string(), second.to_string());
        if first == second {
            SecondLook::Stable { first: a, second: b }
        } else {
            SecondLook::Unstable { first: a, second: b }
        }
    }

    pub fn is_unstable(&self) -> bool {
        matches!(self, SecondLook::Unstable { .. })
    }

    /// A short phrase for a report: "stable", "unstable (a vs b)" or
    /// "one look (why)".
    pub fn describe(&self) -> String {
        match self {
            SecondLook::Stable { .. } => "stable on both halves".into(),
            SecondLook::Unstable { first, second } => format!("unstable: {first} on one half, {second} on the other"),
            SecondLook::NotChecked { why } => format!("one look only ({why})"),
        }
    }
}
