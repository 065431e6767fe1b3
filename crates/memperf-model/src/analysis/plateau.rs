//! The best plateau of a curve, or why there is none.

use serde::{Deserialize, Serialize};

/// The plateau, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Plateau {
    Found {
        start: u64,
        end: u64,
        points: usize,
        /// Median over the plateau's points' medians.
        value: f64,
        /// Relative tolerance used (measured noise).
        tolerance: f64,
    },
    NoPlateau {
        /// The longest run within the noise had this many points.
        longest_run: usize,
        tolerance: f64,
    },
}
