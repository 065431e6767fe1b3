//! The one ABI every stream kernel has (`unsafe fn(iters, &StreamArg) ->
//! checksum`), what a kernel works on, and the array pattern the kernels
//! are validated against.
//!
//! The arrays hold `v(i) = (i mod 1024) + 1`: small integers, so every
//! partial sum is an exact integer in f64 whatever the summation order, and
//! the checksum of any slice has a closed form ([`pattern_sum`]); every
//! value a write kernel stores (`b + s·c`, `b + c·d`, `s·a` with `s` a power
//! of two) is exact too, so a read-back compares with `==`.

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
