//! The context saves of `memperf context` (C, src/kernels/c/context/context.c):
//! each operation is a save and the jump back to it (or, for `getcontext`,
//! the save alone; for `swapcontext`, a round trip to a coroutine and
//! back), and the interpreter of the Ruby lesson, whose every operation
//! runs through a protected call.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

extern "C" {
    fn memperf_context_run(op: i32, reps: i64) -> i64;
    fn memperf_interp_run(mode: i32, program: *const u8, len: i64, reps: i64) -> i64;
}

/// A save (and restore) of execution context.
/// The document spells each as the command line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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

    fn index(self) -> i32 {
        SaveOp::ALL.iter().position(|&o| o == self).expect("listed") as i32
    }
}

impl fmt::Display for SaveOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs `reps` round trips of `op`; returns how many came back as they
/// should (`reps` when all did).
pub fn run(op: SaveOp, reps: u64) -> i64 {
    // SAFETY: the C side only touches its own stack and thread-local
    // state; every jump lands in the function that saved (context.c).
    unsafe { memperf_context_run(op.index(), reps as i64) }
}

/// How each interpreter operation is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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

/// The interpreter's program: `len` operations from a fixed pattern.
pub fn program(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

/// Runs the program `reps` times with each operation protected as `p`;
/// returns the accumulator (the same for every protection).
pub fn interpret(p: Protection, program: &[u8], reps: u64) -> i64 {
    let mode = Protection::ALL.iter().position(|&x| x == p).expect("listed") as i32;
    // SAFETY: program is valid for len bytes; the C side reads only them.
    unsafe { memperf_interp_run(mode, program.as_ptr(), program.len() as i64, reps as i64) }
}

/// The interpreter in Rust, for validation: the accumulator the C side must
/// return whatever the protection.
pub fn interpret_reference(program: &[u8], reps: u64) -> i64 {
    let mut acc: u64 = 1;
    for r in 0..reps {
        for &b in program {
            let arg = (b as u64).wrapping_add(r);
            acc = match b & 3 {
                0 => acc.wrapping_add(arg),
                1 => acc ^ arg,
                2 => acc.wrapping_mul(arg | 1),
                _ => (acc << 1) ^ (acc >> 3) ^ arg,
            };
        }
    }
    acc as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn memperf_context_op_count() -> i32;
    }

    #[test]
    fn the_c_side_knows_every_op() {
        // SAFETY: a constant getter.
        assert_eq!(unsafe { memperf_context_op_count() } as usize, SaveOp::ALL.len());
    }

    #[test]
    fn every_round_trip_lands() {
        for op in SaveOp::ALL {
            assert_eq!(run(op, 1000), 1000, "{op}");
        }
    }

    #[test]
    fn threads_save_at_the_same_time() {
        std::thread::scope(|s| {
            let h: Vec<_> = (0..2).map(|_| s.spawn(|| run(SaveOp::Swapcontext, 20_000))).collect();
            for h in h {
                assert_eq!(h.join().unwrap(), 20_000);
            }
        });
    }

    #[test]
    fn every_protection_computes_the_same_thing() {
        let prog = program(64);
        let want = interpret_reference(&prog, 50);
        for p in Protection::ALL {
            assert_eq!(interpret(p, &prog, 50), want, "{p:?}");
        }
    }

    #[test]
    fn names_parse_and_the_document_spells_them_alike() {
        for op in SaveOp::ALL {
            assert_eq!(SaveOp::parse(op.name()).unwrap(), op);
            assert_eq!(serde_json::to_value(op).unwrap(), op.name());
        }
        assert!(SaveOp::parse("vfork").unwrap_err().message.contains("sigsetjmp-1"));
    }
}
