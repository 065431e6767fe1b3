//! The context saves and interpreter protections the context experiment times.

use serde::{Deserialize, Serialize};

crate::named_enum! {
    /// A save (and restore) of execution context. The document spells each
    /// as the command line does; the order is the C enum's
    /// (src/kernels/c/context/context.c).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, schemars::JsonSchema)]
    pub enum SaveOp ("context save") {
        /// `__builtin_setjmp` / `__builtin_longjmp`: the compiler's own, saves
        /// three words.
        BuiltinSetjmp = "builtin-setjmp",
        /// `_setjmp` / `_longjmp`: never the signal mask.
        UnderscoreSetjmp = "_setjmp",
        /// `setjmp` / `longjmp` (glibc: no signal mask unless BSD semantics).
        Setjmp = "setjmp",
        /// `sigsetjmp(env, 0)` / `siglongjmp`.
        SigsetjmpNoMask = "sigsetjmp-0",
        /// `sigsetjmp(env, 1)` / `siglongjmp`: saves and restores the mask.
        SigsetjmpMask = "sigsetjmp-1",
        /// `getcontext` alone.
        Getcontext = "getcontext",
        /// `swapcontext` to a coroutine and back (two swaps).
        Swapcontext = "swapcontext",
    }
}

impl SaveOp {
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
