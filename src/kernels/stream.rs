//! Streaming kernels over f64 arrays: the read shapes of McCalpin's 2010
//! Opteron article, the write side (store, copy, triad, update, read:write
//! mixes, with and without non-temporal stores), and the array pattern
//! they are validated against.
//!
//! The arrays hold `v(i) = (i mod 1024) + 1`: small integers, so every
//! partial sum is an exact integer in f64 whatever the summation order, and
//! the checksum of any slice has a closed form ([`pattern_sum`]); every
//! value a write kernel stores (`b + s·c`, `b + c·d`, `s·a` with `s` a power
//! of two) is exact too, so a read-back compares with `==`.

use crate::error::Result;
pub use memperf_model::kernels::stream::{Hint, StreamKernelInfo, StreamShape, Traffic};

/// What a stream kernel works on. Read kernels read `len` f64 at `ptr`,
/// prefetching `distance` elements ahead (prefetch kernels only). Write
/// kernels write `len` f64 at `ptr` (the array A) from the sources B, C, D
/// of their shape, with the scalar of each pass derived from its global
/// index (`first_pass` + the pass within the call), so that what a pass
/// stored can be told from what an earlier one did.
#[derive(Debug, Clone, Copy)]
pub struct StreamArg {
    pub ptr: *const f64,
    pub len: usize,
    pub distance: usize,
    /// B, C, D (null where the shape reads fewer).
    pub sources: [*const f64; 3],
    pub first_pass: u64,
}

impl StreamArg {
    /// The argument of a read kernel.
    pub fn read(ptr: *const f64, len: usize, distance: usize) -> StreamArg {
        StreamArg { ptr, len, distance, sources: [std::ptr::null(); 3], first_pass: 0 }
    }
}

// SAFETY: StreamArg is a read-only view handed to kernel threads; the
// owner of the memory outlives every team run that uses it.
unsafe impl Send for StreamArg {}
// SAFETY: as above; kernels only read through ptr.
unsafe impl Sync for StreamArg {}

/// The kernel ABI: `iters` passes over the arrays. A read kernel returns the
/// sum of all elements read, over all passes; a write kernel the number of
/// elements it stored (what it stored is checked by reading it back).
///
/// # Safety
/// `arg.ptr` must be valid for reading `arg.len` f64 (write kernels: for
/// writing them, and each source of the shape for reading them).
pub type StreamKernel = unsafe fn(iters: u64, arg: &StreamArg) -> f64;

/// The kernel for `shape` (and `hint`, for prefetch kernels) on this CPU.
pub fn stream_kernel(shape: StreamShape, hint: Option<Hint>) -> Result<(StreamKernel, StreamKernelInfo)> {
    let info = |isa: &str| {
        let (traffic, flops_per_element) = shape.traffic();
        StreamKernelInfo {
            shape,
            hint: if shape == StreamShape::SimdPrefetch { hint } else { None },
            isa: isa.to_string(),
            traffic,
            flops_per_element,
        }
    };
    if let Some(op) = super::write::Op::of(shape) {
        return super::write::kernel(op, shape.non_temporal()).map(|(k, isa)| (k, info(isa)));
    }
    match shape {
        StreamShape::Sum1 => Ok((super::portable::sum1 as StreamKernel, info("scalar"))),
        StreamShape::Sum4 => Ok((super::portable::sum4 as StreamKernel, info("scalar"))),
        _ => simd_kernel(shape, hint).map(|(k, isa)| (k, info(isa))),
    }
}

#[cfg(target_arch = "x86_64")]
fn simd_kernel(shape: StreamShape, hint: Option<Hint>) -> Result<(StreamKernel, &'static str)> {
    use super::x86_64 as x;
    let prefetch = match shape {
        StreamShape::SimdPrefetch => Some(hint.unwrap_or(Hint::T0)),
        _ => None,
    };
    Ok(x::simd_for(x::best_isa(), prefetch))
}

#[cfg(not(target_arch = "x86_64"))]
fn simd_kernel(shape: StreamShape, _hint: Option<Hint>) -> Result<(StreamKernel, &'static str)> {
    match shape {
        StreamShape::Simd => Ok((super::portable::simd8 as StreamKernel, "portable")),
        _ => Err(Error::unsatisfiable(
            "simd-prefetch is implemented for x86_64 only in this build",
            "use --kernel simd, sum4 or sum1",
        )),
    }
}

/// The value stored at element `i`.
#[inline]
pub fn pattern_value(i: usize) -> f64 {
    ((i % 1024) + 1) as f64
}

/// Sum of `pattern_value(i)` for `i` in `start .. start + len`, in closed form.
pub fn pattern_sum(start: usize, len: usize) -> f64 {
    fn prefix(n: u128) -> u128 {
        let (q, r) = (n / 1024, n % 1024);
        q * (1024 * 1025 / 2) + r * (r + 1) / 2
    }
    (prefix((start + len) as u128) - prefix(start as u128)) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(n: usize) -> Vec<f64> {
        (0..n).map(pattern_value).collect()
    }

    #[test]
    fn closed_form_matches_the_pattern() {
        let v = pattern(5000);
        for (s, l) in [(0, 0), (0, 1), (0, 1024), (3, 2000), (1023, 2), (100, 4900)] {
            assert_eq!(pattern_sum(s, l), v[s..s + l].iter().sum::<f64>(), "{s} {l}");
        }
    }

    /// Every kernel reads every element exactly once per pass (its metadata
    /// says 8 bytes read per element): the checksum equals iters × the sum,
    /// for lengths that exercise the vector loop and the scalar tail.
    #[test]
    fn every_kernel_sums_every_element_once_per_pass() {
        for len in [0usize, 1, 7, 63, 64, 65, 511, 4096 + 13] {
            // Past `len` the array holds NaN: a kernel that read beyond its
            // slice would return NaN, one that skipped or repeated an element
            // a different sum — so each element is read exactly once, the
            // 8 bytes per element its metadata claims.
            let mut v = pattern(len + 4096);
            v[len..].fill(f64::NAN);
            let arg = StreamArg::read(v.as_ptr(), len, 256);
            for shape in StreamShape::READ {
                let hints: Vec<Option<Hint>> =
                    if shape == StreamShape::SimdPrefetch { Hint::ALL.map(Some).to_vec() } else { vec![None] };
                for hint in hints {
                    let Ok((k, info)) = stream_kernel(shape, hint) else { continue };
                    assert_eq!(info.traffic.bytes_read_per_element, std::mem::size_of::<f64>() as u64);
                    assert_eq!(info.traffic.bytes_written_per_element, 0);
                    let before = v.clone();
                    // SAFETY: v holds len + 4096 elements.
                    let got = unsafe { k(3, &arg) };
                    assert_eq!(got, 3.0 * pattern_sum(0, len), "{shape} {hint:?} len {len}");
                    assert!(v.iter().zip(&before).all(|(a, b)| a.to_bits() == b.to_bits()), "a read kernel wrote");
                }
            }
        }
    }

    #[test]
    fn names_parse() {
        assert_eq!(StreamShape::parse("simd-prefetch").unwrap(), StreamShape::SimdPrefetch);
        assert_eq!(Hint::parse("NTA").unwrap(), Hint::Nta);
        assert!(StreamShape::parse("sum8").is_err());
        assert_eq!(StreamShape::parse("mix-3:1").unwrap(), StreamShape::Mix31);
        assert_eq!(StreamShape::parse("mix-2:1").unwrap(), StreamShape::Triad);
        assert_eq!(StreamShape::parse("mix-1:0").unwrap(), StreamShape::Simd);
        for s in StreamShape::all() {
            assert_eq!(StreamShape::parse(s.name()).unwrap(), s);
        }
        assert!(Hint::parse("t3").unwrap_err().message.contains("t0, t1, t2, nta or w"));
    }
}
