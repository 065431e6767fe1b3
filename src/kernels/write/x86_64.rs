//! The write kernels' vector loops for x86_64: one generic loop over the
//! vector type (AVX-512, AVX2, SSE2), the operation, and ordinary or
//! non-temporal stores. A disassembly test holds each instantiation to its
//! kind of store: streaming stores in the `-nt` kernels and none elsewhere.

use super::element::{self as write, Op, COPY, MIX31, STORE, TRIAD, UPDATE};
use crate::kernels::abi::{StreamArg, StreamKernel};
use crate::kernels::x86_64::{Isa, Vector};
use std::arch::x86_64::*;

/// One pass's vector body: eight vectors (`LANES` cache lines) of A per
/// iteration, loaded from the sources the operation reads.
///
/// # Safety
/// A valid for writing `arg.len` f64 (update: reading too), each source of
/// `OP` valid for reading it; the CPU supports `V`'s set. Inlined into the
/// `#[target_feature]` entries below.
#[inline(always)]
unsafe fn write_loop<V: Vector, const OP: u8, const NT: bool>(iters: u64, arg: &StreamArg) -> f64 {
    let n = arg.len;
    let step = 8 * V::LANES;
    let [b, c, d] = arg.sources;
    for pass in 0..iters {
        // Opaque per pass, so the compiler cannot drop a pass's stores as
        // overwritten by the next one.
        let a = std::hint::black_box(arg.ptr as *mut f64);
        // Streaming stores need aligned vectors: the head goes one by one.
        let head = if NT { a.align_offset(8 * V::LANES).min(n) } else { 0 };
        let end = head + (n - head) / step * step;
        let s = write::scalar(OP, arg.first_pass + pass);
        // SAFETY: the caller guarantees V's set.
        let sv = unsafe { V::splat(s) };
        // SAFETY: head <= n.
        unsafe { write::scalar_range::<OP>(arg, a, 0, head, s) };
        let mut i = head;
        while i < end {
            for k in 0..8 {
                let o = i + k * V::LANES;
                // SAFETY: o + LANES <= end <= n; only OP's sources are read.
                unsafe {
                    let v = match OP {
                        STORE => sv,
                        COPY => V::load(b.add(o)),
                        TRIAD => V::mul_add(V::load(b.add(o)), sv, V::load(c.add(o))),
                        UPDATE => V::mul(sv, V::load(a.add(o))),
                        _ => V::mul_add(V::load(b.add(o)), V::load(c.add(o)), V::load(d.add(o))),
                    };
                    if NT {
                        V::stream(a.add(o), v)
                    } else {
                        V::store(a.add(o), v)
                    }
                }
            }
            i += step;
        }
        // SAFETY: end <= n.
        unsafe { write::scalar_range::<OP>(arg, a, end, n, s) };
    }
    if NT {
        // Streaming stores are weakly ordered: drain them before returning.
        // SAFETY: sfence is SSE, baseline on x86_64; it only orders stores.
        unsafe { _mm_sfence() };
    }
    (iters * n as u64) as f64
}

/// AVX-512: eight 64-byte vectors per iteration.
///
/// # Safety
/// As for [`write_loop`]; the CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline(never)]
pub unsafe fn write_avx512<const OP: u8, const NT: bool>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { write_loop::<__m512d, OP, NT>(iters, arg) }
}

/// AVX2: eight 32-byte vectors per iteration.
///
/// # Safety
/// As for [`write_loop`]; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline(never)]
pub unsafe fn write_avx2<const OP: u8, const NT: bool>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { write_loop::<__m256d, OP, NT>(iters, arg) }
}

/// SSE2: eight 16-byte vectors per iteration.
///
/// # Safety
/// As for [`write_loop`].
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
