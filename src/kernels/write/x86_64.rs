//! The write kernels for x86_64: [`write_loop`] over AVX-512, AVX2 and
//! SSE2 vectors, for each operation, with ordinary or non-temporal stores. A disassembly test holds each instantiation to its
//! kind of store: streaming stores in the `-nt` kernels and none elsewhere.

use super::element::{Op, COPY, MIX31, STORE, TRIAD, UPDATE};
use super::simd::write_loop;
use crate::kernels::abi::{StreamArg, StreamKernel};
use crate::kernels::x86_64::Isa;
use std::arch::x86_64::*;

/// AVX-512: eight 64-byte vectors per iteration.
///
/// # Safety
/// As for [`super::simd::write_loop`]; the CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline(never)]
pub unsafe fn write_avx512<const OP: u8, const NT: bool>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { write_loop::<__m512d, OP, NT>(iters, arg) }
}

/// AVX2: eight 32-byte vectors per iteration.
///
/// # Safety
/// As for [`super::simd::write_loop`]; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline(never)]
pub unsafe fn write_avx2<const OP: u8, const NT: bool>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { write_loop::<__m256d, OP, NT>(iters, arg) }
}

/// SSE2: eight 16-byte vectors per iteration.
///
/// # Safety
/// As for [`super::simd::write_loop`].
#[target_feature(enable = "sse2")]
#[inline(never)]
pub unsafe fn write_sse2<const OP: u8, const NT: bool>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { write_loop::<__m128d, OP, NT>(iters, arg) }
}

fn entry<const OP: u8, const NT: bool>(isa: Isa) -> StreamKernel {
    match isa {
        Isa::Avx512 => write_avx512::<OP, NT>,
        Isa::Avx2 => write_avx2::<OP, NT>,
        Isa::Sse2 => write_sse2::<OP, NT>,
    }
}

fn with_stores<const OP: u8>(isa: Isa, nt: bool) -> StreamKernel {
    if nt {
        entry::<OP, true>(isa)
    } else {
        entry::<OP, false>(isa)
    }
}

/// The write kernel of `op` for `isa`, non-temporal if `nt`.
pub fn write_for(isa: Isa, op: Op, nt: bool) -> StreamKernel {
    match op {
        Op::Store => with_stores::<STORE>(isa, nt),
        Op::Copy => with_stores::<COPY>(isa, nt),
        Op::Triad => with_stores::<TRIAD>(isa, nt),
        Op::Update => with_stores::<UPDATE>(isa, nt),
        Op::Mix31 => with_stores::<MIX31>(isa, nt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::disasm::{mnemonics, text};
    use crate::kernels::StreamShape;

    /// The `-nt` kernels store with non-temporal moves and fence; every
    /// other write kernel has no non-temporal store; all of them store
    /// full vectors of their set and call nothing inside their loop.
    #[test]
    fn nontemporal_stores_are_in_the_nt_kernels_and_nowhere_else() {
        for isa in crate::kernels::x86_64::supported_isas() {
            for shape in StreamShape::WRITE {
                let op = Op::of(shape).unwrap();
                let k = write_for(isa, op, shape.non_temporal());
                let m = mnemonics(k as *const u8);
                let nt_stores = m.iter().filter(|x| x.starts_with("movnt") || x.starts_with("vmovnt")).count();
                if shape.non_temporal() {
                    assert!(nt_stores > 0, "{isa:?} {shape}: {m:?}");
                    assert!(m.iter().any(|x| x == "sfence"), "{isa:?} {shape} does not fence: {m:?}");
                } else {
                    assert_eq!(nt_stores, 0, "{isa:?} {shape}: {m:?}");
                }
                let wide = match isa {
                    Isa::Avx512 => "zmm",
                    Isa::Avx2 => "ymm",
                    Isa::Sse2 => "xmm",
                };
                assert!(text(k as *const u8).contains(wide), "{isa:?} {shape} uses {wide}");
                assert!(m.iter().all(|x| x != "call"), "{isa:?} {shape} calls out of its loop: {m:?}");
            }
        }
    }
}
