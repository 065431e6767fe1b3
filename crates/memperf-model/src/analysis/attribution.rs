//! Naming a knee: what a knee was attributed to, and the levels it may be.

use serde::{Deserialize, Serialize};

/// A level a knee may belong to: its name and size (bytes, or entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KnownLevel {
    pub name: String,
    pub size: f64,
}

/// What a knee was attributed to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Attribution {
    /// Within ×2 of this level's size.
    Level { name: String, size: f64 },
    /// Near no known level.
    Unattributed,
}
