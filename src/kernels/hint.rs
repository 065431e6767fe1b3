//! Software prefetch instructions as types, on every architecture with one:
//! the one place where a runtime [`Hint`] becomes a type (every kernel
//! family picks its instantiation through [`for_hint`]). A hint is named the
//! x86 way (`t0`, `t1`, `t2`, `nta`, `w`) in options and documents; each
//! architecture maps it to its own instruction, which [`instruction`] names
//! (`prefetcht0` … `prefetchw`; `prfm pldl1keep`, `pldl2keep`, `pldl3keep`,
//! `pldl1strm`, `pstl1keep`). No prefetch instruction of either ISA faults
//! architecturally, so every kernel may prefetch past its array, of null or
//! of unmapped memory.

pub use memperf_model::kernels::stream::Hint;

/// A software prefetch instruction (or none).
pub trait Prefetcher {
    /// # Safety
    /// Always safe to execute (prefetches do not fault); unsafe only
    /// because it is an intrinsic or inline assembly.
    unsafe fn prefetch(p: *const f64);
}

/// Something generic over the prefetch instruction.
pub trait ForHint {
    type Out;
    fn with<P: Prefetcher>(self) -> Self::Out;
}

/// `f` instantiated for `hint` (`None`: no prefetch).
pub fn for_hint<F: ForHint>(hint: Option<Hint>, f: F) -> F::Out {
    match hint {
        None => f.with::<NoPrefetch>(),
        Some(Hint::T0) => f.with::<PrefetchT0>(),
        Some(Hint::T1) => f.with::<PrefetchT1>(),
        Some(Hint::T2) => f.with::<PrefetchT2>(),
        Some(Hint::Nta) => f.with::<PrefetchNta>(),
        Some(Hint::W) => f.with::<PrefetchW>(),
    }
}

/// The instruction `hint` compiles to on this build's architecture, as its
/// ISA names it.
pub fn instruction(hint: Hint) -> &'static str {
    if cfg!(target_arch = "aarch64") {
        hint.arm_instruction()
    } else {
        hint.x86_instruction()
    }
}

pub struct NoPrefetch;
pub struct PrefetchT0;
pub struct PrefetchT1;
pub struct PrefetchT2;
pub struct PrefetchNta;
pub struct PrefetchW;

impl Prefetcher for NoPrefetch {
    #[inline(always)]
    unsafe fn prefetch(_: *const f64) {}
}

/// x86-64: the `_mm_prefetch` intrinsic, and PREFETCHW in assembly
/// (`_MM_HINT_ET0` compiles to prefetcht0).
#[cfg(target_arch = "x86_64")]
macro_rules! prefetcher {
    ($ty:ident, $x86:ident, $_prfop:literal) => {
        impl Prefetcher for $ty {
            #[inline(always)]
            unsafe fn prefetch(p: *const f64) {
                use std::arch::x86_64::*;
                // SAFETY: a prefetch is a hint and never faults.
                unsafe { _mm_prefetch::<$x86>(p as *const i8) }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
impl Prefetcher for PrefetchW {
    #[inline(always)]
    unsafe fn prefetch(p: *const f64) {
        // SAFETY: PREFETCHW only moves a line towards the cache; it does not
        // fault, write memory, use the stack or change flags.
        unsafe { std::arch::asm!("prefetchw [{0}]", in(reg) p, options(nostack, preserves_flags, readonly)) }
    }
}

/// aarch64: PRFM with the operation's 5-bit encoding (type, target level,
/// policy), which assemblers and disassemblers spell `pldl1keep` etc.
#[cfg(target_arch = "aarch64")]
macro_rules! prefetcher {
    ($ty:ident, $_x86:ident, $prfop:literal) => {
        impl Prefetcher for $ty {
            #[inline(always)]
            unsafe fn prefetch(p: *const f64) {
                // SAFETY: PRFM is a hint: it never faults, writes nothing,
                // uses no stack and leaves the flags alone.
                unsafe {
                    std::arch::asm!(concat!("prfm #", $prfop, ", [{0}]"), in(reg) p,
                        options(nostack, preserves_flags, readonly))
                }
            }
        }
    };
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
macro_rules! prefetcher {
    ($ty:ident, $_x86:ident, $_prfop:literal) => {
        impl Prefetcher for $ty {
            #[inline(always)]
            unsafe fn prefetch(_: *const f64) {}
        }
    };
}

// PRFM operations: PLD (0b00) or PST (0b10) << 3 | level - 1 << 1 | STRM.
prefetcher!(PrefetchT0, _MM_HINT_T0, "0");
prefetcher!(PrefetchT1, _MM_HINT_T1, "2");
prefetcher!(PrefetchT2, _MM_HINT_T2, "4");
prefetcher!(PrefetchNta, _MM_HINT_NTA, "1");
#[cfg(not(target_arch = "x86_64"))]
prefetcher!(PrefetchW, _MM_HINT_ET0, "16");
