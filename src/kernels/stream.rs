//! Read-only streaming kernels over an f64 array (the shapes of McCalpin's
//! 2010 Opteron article) and the array pattern they are validated against.
//!
//! The array holds `v(i) = (i mod 1024) + 1`: small integers, so every
//! partial sum is an exact integer in f64 whatever the summation order, and
//! the checksum of any slice has a closed form ([`pattern_sum`]).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a stream kernel reads: `len` f64 at `ptr`, prefetching `distance`
/// elements ahead (prefetch kernels only).
#[derive(Debug, Clone, Copy)]
pub struct StreamArg {
    pub ptr: *const f64,
    pub len: usize,
    pub distance: usize,
}

// SAFETY: StreamArg is a read-only view handed to kernel threads; the
// owner of the memory outlives every team run that uses it.
unsafe impl Send for StreamArg {}
// SAFETY: as above; kernels only read through ptr.
unsafe impl Sync for StreamArg {}

/// The kernel ABI: `iters` passes over the array; returns the sum of all
/// elements read, over all passes.
///
/// # Safety
/// `arg.ptr` must be valid for reading `arg.len` f64.
pub type StreamKernel = unsafe fn(iters: u64, arg: &StreamArg) -> f64;

/// Loop shapes of the bandwidth experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StreamShape {
    /// One scalar accumulator: bound by the add latency.
    Sum1,
    /// Four partial sums, unrolled to one cache line per iteration.
    Sum4,
    /// The widest vectors the CPU has, eight accumulators.
    Simd,
    /// `Simd` plus one software prefetch per cache line, D elements ahead.
    SimdPrefetch,
}

impl StreamShape {
    pub const ALL: [StreamShape; 4] =
        [StreamShape::Sum1, StreamShape::Sum4, StreamShape::Simd, StreamShape::SimdPrefetch];

    pub fn name(self) -> &'static str {
        match self {
            StreamShape::Sum1 => "sum1",
            StreamShape::Sum4 => "sum4",
            StreamShape::Simd => "simd",
            StreamShape::SimdPrefetch => "simd-prefetch",
        }
    }

    pub fn parse(text: &str) -> Result<StreamShape> {
        StreamShape::ALL
            .into_iter()
            .find(|s| s.name() == text.trim())
            .ok_or_else(|| Error::usage(format!("unknown kernel '{text}': use sum1, sum4, simd or simd-prefetch")))
    }
}

impl fmt::Display for StreamShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Software prefetch hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hint {
    T0,
    T1,
    T2,
    Nta,
    /// Prefetch with intent to write (PREFETCHW).
    W,
}

impl Hint {
    pub const ALL: [Hint; 5] = [Hint::T0, Hint::T1, Hint::T2, Hint::Nta, Hint::W];

    pub fn name(self) -> &'static str {
        match self {
            Hint::T0 => "t0",
            Hint::T1 => "t1",
            Hint::T2 => "t2",
            Hint::Nta => "nta",
            Hint::W => "w",
        }
    }

    /// The x86 instruction this hint compiles to.
    pub fn x86_instruction(self) -> &'static str {
        match self {
            Hint::T0 => "prefetcht0",
            Hint::T1 => "prefetcht1",
            Hint::T2 => "prefetcht2",
            Hint::Nta => "prefetchnta",
            Hint::W => "prefetchw",
        }
    }

    pub fn parse(text: &str) -> Result<Hint> {
        Hint::ALL
            .into_iter()
            .find(|h| h.name() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| Error::usage(format!("unknown prefetch hint '{text}': use t0, t1, t2, nta or w")))
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Metadata beside a kernel: what it moves and computes per element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamKernelInfo {
    pub shape: StreamShape,
    pub hint: Option<Hint>,
    /// Instruction set the kernel was built for (`avx512f`, `avx2`, `sse2`, `scalar`).
    pub isa: String,
    pub bytes_read_per_element: u64,
    pub bytes_written_per_element: u64,
    pub flops_per_element: u64,
}

/// The kernel for `shape` (and `hint`, for prefetch kernels) on this CPU.
pub fn stream_kernel(shape: StreamShape, hint: Option<Hint>) -> Result<(StreamKernel, StreamKernelInfo)> {
    let info = |isa: &str| StreamKernelInfo {
        shape,
        hint: if shape == StreamShape::SimdPrefetch { hint } else { None },
        isa: isa.to_string(),
        bytes_read_per_element: 8,
        bytes_written_per_element: 0,
        flops_per_element: 1,
    };
    match shape {
        StreamShape::Sum1 => Ok((super::portable::sum1 as StreamKernel, info("scalar"))),
        StreamShape::Sum4 => Ok((super::portable::sum4 as StreamKernel, info("scalar"))),
        StreamShape::Simd | StreamShape::SimdPrefetch => simd_kernel(shape, hint).map(|(k, isa)| (k, info(isa))),
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
            let arg = StreamArg { ptr: v.as_ptr(), len, distance: 256 };
            for shape in StreamShape::ALL {
                let hints: Vec<Option<Hint>> =
                    if shape == StreamShape::SimdPrefetch { Hint::ALL.map(Some).to_vec() } else { vec![None] };
                for hint in hints {
                    let Ok((k, info)) = stream_kernel(shape, hint) else { continue };
                    assert_eq!(info.bytes_read_per_element, std::mem::size_of::<f64>() as u64);
                    assert_eq!(info.bytes_written_per_element, 0);
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
        assert!(Hint::parse("t3").unwrap_err().message.contains("t0, t1, t2, nta or w"));
    }
}
