//! Hand-vectorised stream kernels for x86_64: AVX-512, AVX2 and SSE2, each
//! generic over a software-prefetch hint. The no-op hint gives the plain
//! `simd` kernel, so `simd` and `simd-prefetch` share one loop and differ
//! only in the prefetch instructions (checked by a disassembly test).
//!
//! Each iteration loads eight vectors into eight independent accumulators
//! (enough to cover the 4-cycle add latency on two ports) and issues one
//! prefetch per 64-byte line, `distance` elements ahead. Prefetches beyond
//! the end of the array are harmless on x86: a prefetch never faults.

use super::abi::{StreamArg, StreamKernel};
pub use super::hint::*;
use super::vector::simd_loop;
pub use super::vector::Vector;
use std::arch::x86_64::*;

/// Vector instruction sets with a hand-written kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Avx512,
    Avx2,
    Sse2,
}

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512f",
            Isa::Avx2 => "avx2",
            Isa::Sse2 => "sse2",
        }
    }
}

/// Every ISA with a kernel that this CPU supports, narrowest first (for
/// tests that check each instantiation).
pub fn supported_isas() -> Vec<Isa> {
    let mut v = vec![Isa::Sse2];
    if std::arch::is_x86_feature_detected!("avx2") {
        v.push(Isa::Avx2);
    }
    if std::arch::is_x86_feature_detected!("avx512f") {
        v.push(Isa::Avx512);
    }
    v
}

/// The widest ISA this CPU (and OS) supports.
pub fn best_isa() -> Isa {
    if std::arch::is_x86_feature_detected!("avx512f") {
        Isa::Avx512
    } else if std::arch::is_x86_feature_detected!("avx2") {
        Isa::Avx2
    } else {
        Isa::Sse2
    }
}

/// The `simd` kernel for `isa`, with the prefetch of `hint` if any.
pub fn simd_for(isa: Isa, hint: Option<Hint>) -> (StreamKernel, &'static str) {
    struct Pick(Isa);
    impl ForHint for Pick {
        type Out = StreamKernel;
        fn with<P: Prefetcher>(self) -> StreamKernel {
            match self.0 {
                Isa::Avx512 => simd_avx512::<P>,
                Isa::Avx2 => simd_avx2::<P>,
                Isa::Sse2 => simd_sse2::<P>,
            }
        }
    }
    (for_hint(hint, Pick(isa)), isa.name())
}

impl Vector for __m512d {
    const LANES: usize = 8;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller guarantees AVX-512F.
        unsafe { _mm512_setzero_pd() }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the caller guarantees AVX-512F and 8 readable f64.
        unsafe { _mm512_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: the caller guarantees AVX-512F.
        unsafe { _mm512_add_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: the caller guarantees AVX-512F.
        unsafe { _mm512_mul_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn mul_add(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the caller guarantees AVX-512F (whose FMA is part of F).
        unsafe { _mm512_fmadd_pd(b, c, a) }
    }
    #[inline(always)]
    unsafe fn splat(x: f64) -> Self {
        // SAFETY: the caller guarantees AVX-512F.
        unsafe { _mm512_set1_pd(x) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self) {
        // SAFETY: the caller guarantees AVX-512F and 8 writable f64.
        unsafe { _mm512_storeu_pd(p, v) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut f64, v: Self) {
        // SAFETY: the caller guarantees AVX-512F, 8 writable f64, 64-byte alignment.
        unsafe { _mm512_stream_pd(p, v) }
    }
}

impl Vector for __m256d {
    const LANES: usize = 4;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller guarantees AVX.
        unsafe { _mm256_setzero_pd() }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the caller guarantees AVX and 4 readable f64.
        unsafe { _mm256_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: the caller guarantees AVX.
        unsafe { _mm256_add_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: the caller guarantees AVX.
        unsafe { _mm256_mul_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn mul_add(a: Self, b: Self, c: Self) -> Self {
        // FMA is a feature of its own beside AVX2: multiply, then add.
        // SAFETY: the caller guarantees AVX.
        unsafe { _mm256_add_pd(a, _mm256_mul_pd(b, c)) }
    }
    #[inline(always)]
    unsafe fn splat(x: f64) -> Self {
        // SAFETY: the caller guarantees AVX.
        unsafe { _mm256_set1_pd(x) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self) {
        // SAFETY: the caller guarantees AVX and 4 writable f64.
        unsafe { _mm256_storeu_pd(p, v) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut f64, v: Self) {
        // SAFETY: the caller guarantees AVX, 4 writable f64, 32-byte alignment.
        unsafe { _mm256_stream_pd(p, v) }
    }
}

impl Vector for __m128d {
    const LANES: usize = 2;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: SSE2 is baseline on x86_64; no memory is touched.
        unsafe { _mm_setzero_pd() }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the caller guarantees 2 readable f64 (SSE2 is baseline).
        unsafe { _mm_loadu_pd(p) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: SSE2 is baseline on x86_64; no memory is touched.
        unsafe { _mm_add_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: SSE2 is baseline on x86_64; no memory is touched.
        unsafe { _mm_mul_pd(a, b) }
    }
    #[inline(always)]
    unsafe fn mul_add(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: SSE2 is baseline on x86_64; no memory is touched.
        unsafe { _mm_add_pd(a, _mm_mul_pd(b, c)) }
    }
    #[inline(always)]
    unsafe fn splat(x: f64) -> Self {
        // SAFETY: SSE2 is baseline on x86_64; no memory is touched.
        unsafe { _mm_set1_pd(x) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self) {
        // SAFETY: the caller guarantees 2 writable f64 (SSE2 is baseline).
        unsafe { _mm_storeu_pd(p, v) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut f64, v: Self) {
        // SAFETY: the caller guarantees 2 writable f64 and 16-byte alignment.
        unsafe { _mm_stream_pd(p, v) }
    }
}

/// Streaming stores are weakly ordered: SFENCE drains them.
#[inline(always)]
pub(crate) fn drain_streams() {
    // SAFETY: sfence is SSE, baseline on x86_64; it only orders stores.
    unsafe { _mm_sfence() };
}

/// AVX-512: 8 lines per iteration.
///
/// # Safety
/// `arg.ptr` valid for `arg.len` f64; the CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline(never)]
pub unsafe fn simd_avx512<P: Prefetcher>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { simd_loop::<__m512d, P>(iters, arg) }
}

/// AVX2: 4 lines per iteration.
///
/// # Safety
/// `arg.ptr` valid for `arg.len` f64; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline(never)]
pub unsafe fn simd_avx2<P: Prefetcher>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { simd_loop::<__m256d, P>(iters, arg) }
}

/// SSE2: 2 lines per iteration.
///
/// # Safety
/// `arg.ptr` valid for `arg.len` f64.
#[target_feature(enable = "sse2")]
#[inline(never)]
pub unsafe fn simd_sse2<P: Prefetcher>(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: as for this function.
    unsafe { simd_loop::<__m128d, P>(iters, arg) }
}

/// Stores `value` over `len` u64 words (a multiple of 8) with PREFETCHW
/// `ahead` lines ahead, so every line is owned before it is written.
///
/// # Safety
/// `ptr` must be valid for writing `len` u64, 64-byte aligned.
#[inline(never)]
pub unsafe fn store_prefetchw(ptr: *mut u64, len: usize, value: u64) -> u64 {
    const AHEAD: usize = 16 * 8;
    let p = std::hint::black_box(ptr);
    let mut i = 0;
    while i + 8 <= len {
        // SAFETY: a prefetch never faults; the stores are inside the buffer.
        unsafe {
            PrefetchW::prefetch(p.wrapping_add(i + AHEAD) as *const f64);
            for k in 0..8 {
                p.add(i + k).write(value);
            }
        }
        i += 8;
    }
    len as u64
}

/// `rep stosb` over `len` u64 words: the microcoded string store (fast
/// short-string and "ERMS" paths write whole lines without reading them).
///
/// # Safety
/// `ptr` must be valid for writing `len` u64.
#[inline(never)]
pub unsafe fn store_rep_stosb(ptr: *mut u64, len: usize, value: u64) -> u64 {
    // SAFETY: rep stosb writes exactly rcx bytes from rdi, inside the buffer.
    unsafe {
        std::arch::asm!(
            "rep stosb",
            inout("rdi") ptr => _,
            inout("rcx") len * 8 => _,
            in("al") value as u8,
            options(nostack),
        );
    }
    len as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::disasm::mnemonics;

    #[test]
    fn simd_prefetch_contains_its_prefetch_and_vector_loads() {
        for isa in supported_isas() {
            for hint in Hint::ALL {
                let (k, _) = simd_for(isa, Some(hint));
                let m = mnemonics(k as *const u8);
                assert!(m.iter().any(|x| x == hint.x86_instruction()), "{isa:?} {hint}: {m:?}");
                assert!(
                    m.iter().any(|x| x.starts_with("vmovupd")
                        || x.starts_with("movupd")
                        || x.starts_with("vaddpd")
                        || x.starts_with("addpd")),
                    "{isa:?}: {m:?}"
                );
            }
        }
    }

    /// Each kernel's loop, as this CPU runs it, holds the instructions its
    /// row of the kernel facts names and none it rules out.
    #[test]
    fn every_kernel_holds_the_instructions_its_facts_name() {
        use crate::kernels::{stream_kernel, StreamShape};
        for f in &memperf_model::kernels::KERNEL_FACTS {
            let hint = (f.shape == StreamShape::SimdPrefetch).then_some(Hint::T0);
            let (k, _) = stream_kernel(f.shape, hint).unwrap();
            let m = mnemonics(k as *const u8);
            let has = |alts: &str| alts.split('|').any(|a| m.iter().any(|x| x.starts_with(a)));
            for must in f.x86_must {
                assert!(has(must), "{}: none of {must} in {m:?}", f.name);
            }
            for not in f.x86_must_not {
                assert!(!has(not), "{}: {not} in {m:?}", f.name);
            }
        }
    }

    #[test]
    fn simd_has_no_prefetch() {
        for isa in supported_isas() {
            let (k, _) = simd_for(isa, None);
            let m = mnemonics(k as *const u8);
            assert!(m.iter().all(|x| !x.starts_with("prefetch")), "{isa:?}: {m:?}");
            let wide = match isa {
                Isa::Avx512 => "zmm",
                Isa::Avx2 => "ymm",
                Isa::Sse2 => "xmm",
            };
            let text = crate::kernels::disasm::text(k as *const u8);
            assert!(text.contains(wide), "{isa:?} uses {wide}");
            // The generic loop's vector helpers are inlined, not called.
            assert!(m.iter().all(|x| x != "call"), "{isa:?} calls out of its loop: {m:?}");
        }
    }

    #[test]
    fn store_kernels_write_every_word_and_use_their_instructions() {
        let mut buf = vec![0u64; 4096 + 8];
        let off = buf.as_ptr().align_offset(64);
        let words = &mut buf[off..off + 4096];
        type Store = unsafe fn(*mut u64, usize, u64) -> u64;
        let kernels: [(Store, u64); 2] = [(store_rep_stosb, 0x3c3c_3c3c_3c3c_3c3c), (store_prefetchw, 11)];
        for (k, value) in kernels {
            words.fill(0);
            // SAFETY: 4096 words, 64-byte aligned.
            assert_eq!(unsafe { k(words.as_mut_ptr(), 4096, value) }, 4096);
            assert!(words.iter().all(|&w| w == value), "{value:#x}");
        }
        assert!(mnemonics(store_rep_stosb as *const u8).iter().any(|m| m == "stosb"));
        assert!(mnemonics(store_prefetchw as *const u8).iter().any(|m| m == "prefetchw"));
    }
}
