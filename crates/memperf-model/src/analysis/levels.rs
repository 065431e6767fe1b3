//! What a latency curve says about the cache levels.

use crate::units::Bytes;
use serde::{Deserialize, Serialize};

use super::knees::Level;

/// What a latency curve says about the cache levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CacheLevelsFound {
    /// The levels, nearest first (the last one may be the far level).
    pub levels: Vec<Level>,
    /// The largest working set still inside the last cache level, and the
    /// first one past it: the last cache ends between the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_cache_end: Option<(Bytes, Bytes)>,
    /// First working set of the far level, when the curve confirms one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub far_from: Option<Bytes>,
    /// ns per load at the far level's largest working set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub far_ns: Option<crate::units::Nanos>,
    /// Why no far level is confirmed, when none is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub far_not_reached: Option<String>,
    /// The first working set of the far level whose doubling changes
    /// latency by under 10%, and by under 7% per doubling on average to the
    /// sweep's end ×8 past it or more: where a working set is in memory,
    /// verified in the same run. Sizes that headlines call memory (DRAM)
    /// are at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_from: Option<Bytes>,
    /// Why memory is not verified anywhere, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_not_verified: Option<String>,
}
