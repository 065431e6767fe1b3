//! How the c2c experiment hands a cache line between two cores.

use serde::{Deserialize, Serialize};

/// How the line changes hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Handoff {
    LoadStore,
    Cas,
}

impl Handoff {
    pub const ALL: [Handoff; 2] = [Handoff::LoadStore, Handoff::Cas];

    pub fn name(self) -> &'static str {
        match self {
            Handoff::LoadStore => "load-store",
            Handoff::Cas => "cas",
        }
    }

    pub fn parse(text: &str) -> crate::error::Result<Handoff> {
        Handoff::ALL
            .into_iter()
            .find(|h| h.name() == text.trim())
            .ok_or_else(|| crate::error::Error::usage(format!("unknown handoff '{text}': use load-store or cas")))
    }
}
