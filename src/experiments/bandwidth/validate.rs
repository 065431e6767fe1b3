//! What every write sample is checked against: the elements of A read
//! back after it (one per 16 KiB and the last of each slice) must hold what
//! the kernel's definition stores, and the lines that check read are
//! evicted so the next timed sample starts as if nothing had looked.

use crate::kernels::{write, StreamArg};

/// Elements of A read back after each write sample: one per 16 KiB and the
/// last of each slice.
pub(super) fn spots(args: &[StreamArg]) -> Vec<(usize, usize)> {
    const STRIDE: usize = 16 * 1024 / 8;
    let mut v = Vec::new();
    for (t, a) in args.iter().enumerate() {
        v.extend((0..a.len).step_by(STRIDE).map(|i| (t, i)));
        if a.len > 0 {
            v.push((t, a.len - 1));
        }
    }
    v
}

/// Reads element `i` of A of slice `t` (volatile: the kernel wrote it
/// through a pointer the compiler cannot see).
pub(super) fn read_a(args: &[StreamArg], (t, i): (usize, usize)) -> f64 {
    // SAFETY: i < args[t].len, inside the array.
    unsafe { args[t].ptr.add(i).read_volatile() }
}

/// Whether every spot of A holds what `op` stores in passes `first ..
/// first + n` (update: `before` times the product of those passes' scalars).
pub(super) fn stored_as_defined(
    op: u8,
    args: &[StreamArg],
    spots: &[(usize, usize)],
    first: u64,
    n: u64,
    before: &[f64],
) -> bool {
    let last = write::scalar(op, first + n - 1);
    let product: f64 = (first..first + n).map(|p| write::scalar(op, p)).product();
    spots.iter().copied().enumerate().all(|(k, spot)| {
        let (t, i) = spot;
        // SAFETY: i < the slice's length; its sources are as long as A.
        let src = |j: usize| unsafe { source(&args[t], j, i) };
        let want = if op == write::UPDATE {
            before[k] * product
        } else {
            write::element(op, last, 0.0, src(0), src(1), src(2))
        };
        read_a(args, spot) == want
    })
}

/// Evicts the lines of A and of its three sources at every spot (what
/// [`stored_as_defined`] and update's `before` read), so the next timed
/// pass starts as if nothing had checked them.
pub(super) fn evict_spots(args: &[StreamArg], spots: &[(usize, usize)]) {
    for &(t, i) in spots {
        let a = &args[t];
        // SAFETY: i < the slice's length; A and its sources are mapped and as long.
        unsafe {
            crate::kernels::evict_line(a.ptr.add(i) as *const u8);
            for src in a.sources.into_iter().filter(|s| !s.is_null()) {
                crate::kernels::evict_line(src.add(i) as *const u8);
            }
        }
    }
}

/// Element `i` of source `j` of a write slice.
///
/// # Safety
/// `i` < `arg.len`, and the slice's sources are as long as A.
unsafe fn source(arg: &StreamArg, j: usize, i: usize) -> f64 {
    // SAFETY: guaranteed by the caller.
    unsafe { arg.sources[j].add(i).read_volatile() }
}
