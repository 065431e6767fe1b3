//! Kernels written in plain Rust: the scalar shapes, and a portable vector
//! shape for CPUs without a hand-written one.

use super::abi::StreamArg;

/// One accumulator: each add waits for the previous one, so this loop is
/// bound by the floating-point add latency, not by memory.
///
/// # Safety
/// `arg.ptr` must be valid for reading `arg.len` f64.
#[inline(never)]
pub unsafe fn sum1(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: guaranteed by the caller.
    let data = unsafe { std::slice::from_raw_parts(arg.ptr, arg.len) };
    let mut total = 0.0;
    for _ in 0..iters {
        // Opaque per pass, so the compiler cannot hoist the pass out of the loop.
        let a = std::hint::black_box(data);
        let mut s = 0.0;
        for &x in a {
            s += x;
        }
        total += s;
    }
    total
}

/// Four partial sums, unrolled to one 64-byte line (8 f64) per iteration.
///
/// # Safety
/// `arg.ptr` must be valid for reading `arg.len` f64.
#[inline(never)]
pub unsafe fn sum4(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: guaranteed by the caller.
    let data = unsafe { std::slice::from_raw_parts(arg.ptr, arg.len) };
    let mut total = 0.0;
    for _ in 0..iters {
        // Opaque per pass, so the compiler cannot hoist the pass out of the loop.
        let a = std::hint::black_box(data);
        let (mut s0, mut s1, mut s2, mut s3) = (0.0, 0.0, 0.0, 0.0);
        let lines = a.chunks_exact(8);
        let tail = lines.remainder();
        for l in lines {
            s0 += l[0];
            s1 += l[1];
            s2 += l[2];
            s3 += l[3];
            s0 += l[4];
            s1 += l[5];
            s2 += l[6];
            s3 += l[7];
        }
        for &x in tail {
            s0 += x;
        }
        total += (s0 + s1) + (s2 + s3);
    }
    total
}

/// Eight independent accumulators over 8-element chunks; the compiler
/// vectorises this for the target's baseline vectors.
///
/// # Safety
/// `arg.ptr` must be valid for reading `arg.len` f64.
#[inline(never)]
#[allow(dead_code)]
pub unsafe fn simd8(iters: u64, arg: &StreamArg) -> f64 {
    // SAFETY: guaranteed by the caller.
    let data = unsafe { std::slice::from_raw_parts(arg.ptr, arg.len) };
    let mut total = 0.0;
    for _ in 0..iters {
        // Opaque per pass, so the compiler cannot hoist the pass out of the loop.
        let a = std::hint::black_box(data);
        let mut acc = [0.0f64; 8];
        let chunks = a.chunks_exact(8);
        let tail: f64 = chunks.remainder().iter().sum();
        for c in chunks {
            for k in 0..8 {
                acc[k] += c[k];
            }
        }
        total += acc.iter().sum::<f64>() + tail;
    }
    total
}

/// Writes `value` to `len` u64 words at `ptr`: the plain store kernel that
/// sets the store-bandwidth limit (stores allocate their lines, as the
/// descriptor writes do).
///
/// # Safety
/// `ptr` must be valid for writing `len` u64.
#[inline(never)]
pub unsafe fn store_fill(ptr: *mut u64, len: usize, value: u64) -> u64 {
    // SAFETY: guaranteed by the caller.
    let a = unsafe { std::slice::from_raw_parts_mut(std::hint::black_box(ptr), len) };
    for x in a.iter_mut() {
        *x = value;
    }
    len as u64
}
