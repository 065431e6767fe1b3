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

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

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

/// Loop shapes of the bandwidth experiment: four that read one array, and
/// the write side. Read:write mixes are ratios of the bytes the program
/// reads to those it writes: 1:0 is `simd`, 1:1 `copy`, 2:1 `triad`, and
/// 3:1 (`a = b + c·d`, likwid-bench's `triad`) has a kernel of its own.
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
    /// `a = s`.
    Store,
    /// `a = s` with non-temporal (streaming) stores.
    StoreNt,
    /// `a = b`.
    Copy,
    /// `a = b` with non-temporal stores.
    CopyNt,
    /// STREAM's triad, `a = b + s·c`.
    Triad,
    /// Read-modify-write, `a = s·a`.
    Update,
    /// `a = b + c·d`: three streams read per one written.
    #[serde(rename = "mix-3:1")]
    Mix31,
}

impl StreamShape {
    pub const READ: [StreamShape; 4] =
        [StreamShape::Sum1, StreamShape::Sum4, StreamShape::Simd, StreamShape::SimdPrefetch];
    pub const WRITE: [StreamShape; 7] = [
        StreamShape::Store,
        StreamShape::StoreNt,
        StreamShape::Copy,
        StreamShape::CopyNt,
        StreamShape::Triad,
        StreamShape::Update,
        StreamShape::Mix31,
    ];

    pub fn all() -> Vec<StreamShape> {
        StreamShape::READ.into_iter().chain(StreamShape::WRITE).collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            StreamShape::Sum1 => "sum1",
            StreamShape::Sum4 => "sum4",
            StreamShape::Simd => "simd",
            StreamShape::SimdPrefetch => "simd-prefetch",
            StreamShape::Store => "store",
            StreamShape::StoreNt => "store-nt",
            StreamShape::Copy => "copy",
            StreamShape::CopyNt => "copy-nt",
            StreamShape::Triad => "triad",
            StreamShape::Update => "update",
            StreamShape::Mix31 => "mix-3:1",
        }
    }

    /// A name, or a read:write mix (`mix-1:0`, `mix-1:1`, `mix-2:1`,
    /// `mix-3:1`).
    pub fn parse(text: &str) -> Result<StreamShape> {
        let t = text.trim();
        let alias = match t {
            "mix-1:0" => Some(StreamShape::Simd),
            "mix-1:1" => Some(StreamShape::Copy),
            "mix-2:1" => Some(StreamShape::Triad),
            _ => None,
        };
        alias.or_else(|| StreamShape::all().into_iter().find(|s| s.name() == t)).ok_or_else(|| {
            Error::usage(format!(
                "unknown kernel '{text}': use sum1, sum4, simd, simd-prefetch, store, store-nt, copy, copy-nt, \
                 triad, update, or a mix mix-1:0, mix-1:1, mix-2:1, mix-3:1"
            ))
        })
    }

    /// Whether the kernel stores.
    pub fn writes(self) -> bool {
        !StreamShape::READ.contains(&self)
    }

    /// Whether its stores are non-temporal.
    pub fn non_temporal(self) -> bool {
        matches!(self, StreamShape::StoreNt | StreamShape::CopyNt)
    }

    /// Arrays the kernel touches (A plus its sources).
    pub fn streams(self) -> usize {
        match self {
            StreamShape::Copy | StreamShape::CopyNt => 2,
            StreamShape::Triad => 3,
            StreamShape::Mix31 => 4,
            _ => 1,
        }
    }

    /// The write operation of a write kernel.
    pub fn write_op(self) -> Option<super::write::Op> {
        use super::write::Op;
        match self {
            StreamShape::Store | StreamShape::StoreNt => Some(Op::Store),
            StreamShape::Copy | StreamShape::CopyNt => Some(Op::Copy),
            StreamShape::Triad => Some(Op::Triad),
            StreamShape::Update => Some(Op::Update),
            StreamShape::Mix31 => Some(Op::Mix31),
            _ => None,
        }
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
    #[serde(flatten)]
    pub traffic: Traffic,
    pub flops_per_element: u64,
}

/// Bytes one element index moves: what the program asks for (reads and
/// writes), and the read of each written line that an ordinary store
/// causes before it (write-allocate, "read for ownership"). Non-temporal
/// stores and read-modify-write (whose line was just read) have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traffic {
    pub bytes_read_per_element: u64,
    pub bytes_written_per_element: u64,
    pub write_allocate_bytes_per_element: u64,
}

impl Traffic {
    /// What the program reads and writes.
    pub fn program_bytes(&self) -> u64 {
        self.bytes_read_per_element + self.bytes_written_per_element
    }

    /// What crosses the memory bus: the program's bytes plus write-allocate.
    pub fn bus_bytes(&self) -> u64 {
        self.program_bytes() + self.write_allocate_bytes_per_element
    }
}

impl StreamShape {
    /// The bytes and flops of one element index.
    pub fn traffic(self) -> (Traffic, u64) {
        let f = 8u64;
        let (reads, writes, allocate, flops) = match self {
            StreamShape::Sum1 | StreamShape::Sum4 | StreamShape::Simd | StreamShape::SimdPrefetch => (1, 0, 0, 1),
            StreamShape::Store => (0, 1, 1, 0),
            StreamShape::StoreNt => (0, 1, 0, 0),
            StreamShape::Copy => (1, 1, 1, 0),
            StreamShape::CopyNt => (1, 1, 0, 0),
            StreamShape::Triad => (2, 1, 1, 2),
            StreamShape::Update => (1, 1, 0, 1),
            StreamShape::Mix31 => (3, 1, 1, 2),
        };
        let t = Traffic {
            bytes_read_per_element: reads * f,
            bytes_written_per_element: writes * f,
            write_allocate_bytes_per_element: allocate * f,
        };
        (t, flops)
    }
}

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
    if let Some(op) = shape.write_op() {
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
