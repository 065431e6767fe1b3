//! How the prefetch-fault experiment's list walks prefetch.

use serde::{Deserialize, Serialize};

/// How the list walk prefetches `ahead`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Guard {
    /// No prefetch.
    None,
    /// Prefetch `ahead` even when it is null.
    Unguarded,
    /// Prefetch `ahead` only when it is not null.
    Guarded,
}

impl Guard {
    /// In the order the experiment measures them, `None` the baseline.
    pub const ALL: [Guard; 3] = [Guard::None, Guard::Unguarded, Guard::Guarded];

    /// As the document and the report spell it.
    pub fn name(self) -> &'static str {
        match self {
            Guard::None => "none",
            Guard::Unguarded => "unguarded",
            Guard::Guarded => "guarded",
        }
    }
}
