//! What a program's ELF header says about its C library.

use serde::{Deserialize, Serialize};

/// What the program's ELF header says about its C library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[schemars(rename = "LibcLinkage")]
pub enum Linkage {
    /// Dynamically linked through glibc's loader.
    Glibc { interpreter: String },
    /// Dynamically linked through another loader (musl's, say).
    OtherLibc { interpreter: String },
    /// No interpreter: statically linked.
    Static,
    /// Not an ELF file (a script: the tunable reaches what it runs).
    NotElf,
}
