//! How the calls experiment links its chain of functions.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How one function of the chain reaches the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "CallLinkage")]
pub enum Linkage {
    Direct,
    Plt,
    Got,
    Saves,
    Inlined,
}

impl Linkage {
    pub const ALL: [Linkage; 5] = [Linkage::Direct, Linkage::Plt, Linkage::Got, Linkage::Saves, Linkage::Inlined];

    pub fn name(self) -> &'static str {
        match self {
            Linkage::Direct => "direct",
            Linkage::Plt => "plt",
            Linkage::Got => "got",
            Linkage::Saves => "saves",
            Linkage::Inlined => "inlined",
        }
    }

    pub fn parse(text: &str) -> Result<Linkage> {
        Linkage::ALL.into_iter().find(|l| l.name() == text.trim()).ok_or_else(|| {
            Error::usage(format!("unknown call variant '{text}': use direct, plt, got, saves or inlined"))
        })
    }

    /// What the variant stands for, for the report.
    pub fn meaning(self) -> &'static str {
        match self {
            Linkage::Direct => "call/ret between two objects of one binary",
            Linkage::Plt => "between two shared libraries, through the PLT",
            Linkage::Got => "between two shared libraries built with -fno-plt (through the GOT)",
            Linkage::Saves => "direct, every callee-saved register spilled and filled",
            Linkage::Inlined => "inlining allowed: no call left",
        }
    }
}

impl fmt::Display for Linkage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
