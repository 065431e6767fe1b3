//! One level of a stepped curve.

use serde::{Deserialize, Serialize};

/// One level of a stepped curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Level {
    /// Smallest and largest x of the points in this level.
    pub from_x: f64,
    pub to_x: f64,
    /// Typical y in the level.
    pub value: f64,
}
