//! The generic vector loops of the stream kernels, over a vector type of
//! f64 lanes that each architecture provides (x86-64: AVX-512, AVX2,
//! SSE2; aarch64: NEON), so every architecture's `simd` and
//! `simd-prefetch` kernels are one loop, differing only in their vector
//! and prefetch instructions (checked by disassembly tests).

use super::abi::StreamArg;
use super::hint::Prefetcher;

/// A vector of f64 lanes: the one thing the three `simd` kernels differ in.
///
/// The methods are `#[inline(always)]` and carry no target feature of their
/// own: they are inlined into a `#[target_feature]` kernel entry, which is
/// where the intrinsics get their instruction set (the disassembly tests
/// check that the loop calls nothing).
pub trait Vector: Copy {
    /// f64 lanes per vector: 8 vectors of `LANES` are `LANES` cache lines.
    const LANES: usize;
    /// # Safety
    /// The CPU must support the vector's instruction set.
    unsafe fn zero() -> Self;
    /// # Safety
    /// `p` valid for reading `LANES` f64; the CPU supports the set.
    unsafe fn load(p: *const f64) -> Self;
    /// # Safety
    /// The CPU must support the vector's instruction set.
    unsafe fn add(a: Self, b: Self) -> Self;
    /// # Safety
    /// The CPU must support the vector's instruction set.
    unsafe fn mul(a: Self, b: Self) -> Self;
    /// `a + b·c` (fused where the set has it).
    ///
    /// # Safety
    /// The CPU must support the vector's instruction set.
    unsafe fn mul_add(a: Self, b: Self, c: Self) -> Self;
    /// # Safety
    /// The CPU must support the vector's instruction set.
    unsafe fn splat(x: f64) -> Self;
    /// An ordinary store.
    ///
    /// # Safety
    /// `p` valid for writing `LANES` f64; the CPU supports the set.
    unsafe fn store(p: *mut f64, v: Self);
    /// A non-temporal store, around the caches.
    ///
    /// # Safety
    /// `p` valid for writing `LANES` f64 and aligned to the vector's width;
    /// the CPU supports the set.
    unsafe fn stream(p: *mut f64, v: Self);
}

/// The `simd` loop, once: each iteration loads eight vectors into eight
/// independent accumulators (`8 × LANES` f64, `LANES` cache lines) and
/// prefetches each of those lines `distance` elements ahead.
///
/// # Safety
/// `arg.ptr` valid for `arg.len` f64; the CPU supports `V`'s set. Only
/// called from the `#[target_feature]` entries below, into which it is
/// inlined.
#[inline(always)]
pub unsafe fn simd_loop<V: Vector, P: Prefetcher>(iters: u64, arg: &StreamArg) -> f64 {
    let step = 8 * V::LANES;
    let (n, d) = (arg.len, arg.distance);
    let body = n - n % step;
    let mut total = 0.0;
    for _ in 0..iters {
        let p = std::hint::black_box(arg.ptr);
        // SAFETY: the caller guarantees V's instruction set.
        let mut acc = [unsafe { V::zero() }; 8];
        let mut i = 0;
        while i < body {
            for line in 0..V::LANES {
                // SAFETY: a prefetch never faults, so wrapping past the end is harmless.
                unsafe { P::prefetch(p.wrapping_add(i + d + line * 8)) };
            }
            for (k, a) in acc.iter_mut().enumerate() {
                // SAFETY: i + LANES·(k + 1) <= body <= n; V's set is present.
                *a = unsafe { V::add(*a, V::load(p.add(i + V::LANES * k))) };
            }
            i += step;
        }
        // SAFETY: a vector of f64 lanes is LANES f64 with no padding, so the
        // accumulators are 8·LANES initialised f64.
        let lanes = unsafe { std::slice::from_raw_parts(acc.as_ptr() as *const f64, 8 * V::LANES) };
        // SAFETY: body..n is inside the array.
        total += lanes.iter().sum::<f64>() + (body..n).map(|j| unsafe { *p.add(j) }).sum::<f64>();
    }
    total
}
