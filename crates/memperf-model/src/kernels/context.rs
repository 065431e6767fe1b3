//! The context saves and interpreter protections the context experiment times.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A save (and restore) of execution context.
/// The document spells each as the command line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
pub enum SaveOp {
    /// `__builtin_setjmp` / `__builtin_longjmp`: the compiler's own, saves
    /// three words.
    #[serde(rename = "builtin-setjmp")]
    BuiltinSetjmp,
    /// `_setjmp` / `_longjmp`: never the signal mask.
    #[serde(rename = "_setjmp")]
    UnderscoreSetjmp,
    /// `setjmp` / `longjmp` (glibc: no signal mask unless BSD semantics).
    #[serde(rename = "setjmp")]
    Setjmp,
    /// `sigsetjmp(env, 0)` / `siglongjmp`.
    #[serde(rename = "sigsetjmp-0")]
    SigsetjmpNoMask,
    /// `sigsetjmp(env, 1)` / `siglongjmp`: saves and restores the mask.
    #[serde(rename = "sigsetjmp-1")]
    SigsetjmpMask,
    /// `getcontext` alone.
    #[serde(rename = "getcontext")]
    Getcontext,
    /// `swapcontext` to a coroutine and back (two swaps).
    #[serde(rename = "swapcontext")]
    Swapcontext,
}

impl SaveOp {
    /// In the order of the C enum (src/kernels/c/context/context.c).
    pub const ALL: [SaveOp; 7] = [
        SaveOp::BuiltinSetjmp,
        SaveOp::UnderscoreSetjmp,
        SaveOp::Setjmp,
        SaveOp::SigsetjmpNoMask,
        SaveOp::SigsetjmpMask,
        SaveOp::Getcontext,
        SaveOp::Swapcontext,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SaveOp::BuiltinSetjmp => "builtin-setjmp",
            SaveOp::UnderscoreSetjmp => "_setjmp",
            SaveOp::Setjmp => "setjmp",
            SaveOp::SigsetjmpNoMask => "sigsetjmp-0",
            SaveOp::SigsetjmpMask => "sigsetjmp-1",
            SaveOp::Getcontext => "getcontext",
            SaveOp::Swapcontext => "swapcontext",
        }
    }

    /// The C spelling of one round trip.
    pub fn spelled(self) -> &'static str {
        match self {
            SaveOp::BuiltinSetjmp => "__builtin_setjmp + __builtin_longjmp",
            SaveOp::UnderscoreSetjmp => "_setjmp + _longjmp",
            SaveOp::Setjmp => "setjmp + longjmp",
            SaveOp::SigsetjmpNoMask => "sigsetjmp(env, 0) + siglongjmp",
            SaveOp::SigsetjmpMask => "sigsetjmp(env, 1) + siglongjmp",
            SaveOp::Getcontext => "getcontext",
            SaveOp::Swapcontext => "swapcontext there and back",
        }
    }

    pub fn parse(text: &str) -> Result<SaveOp> {
        SaveOp::ALL.into_iter().find(|o| o.name() == text.trim()).ok_or_else(|| {
            Error::usage(format!("unknown context save '{text}': use {}", SaveOp::ALL.map(|o| o.name()).join(", ")))
        })
    }
}

impl fmt::Display for SaveOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How each interpreter operation is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Protection {
    /// A plain call: nothing could unwind to it.
    None,
    /// The cheapest correct save: `__builtin_setjmp`.
    Cheap,
    /// A needless heavy save: `sigsetjmp(env, 1)`, a system call per
    /// operation (what Ruby 1.8's register-window flush amounted to).
    Heavy,
}

impl Protection {
    pub const ALL: [Protection; 3] = [Protection::None, Protection::Cheap, Protection::Heavy];

    pub fn name(self) -> &'static str {
        match self {
            Protection::None => "no save",
            Protection::Cheap => "__builtin_setjmp",
            Protection::Heavy => "sigsetjmp(env, 1)",
        }
    }
}
