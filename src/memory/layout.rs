//! Where a region's 4 KiB pages lie in physical memory, and a first touch
//! that decides it.
//!
//! A stream over 4 KiB pages reads faster where each page's frame follows
//! the previous one's than where the frames are scattered: the same
//! program on the same machine reads at one rate or the other depending on
//! how fragmented free memory was when it touched its pages (a process
//! that touches its pages in order gets frames in order after a large
//! free, and in reverse or scattered order after many small ones). So a
//! region's layout is read back and recorded ([`in_order_fraction`]), and
//! a region on 4 KiB pages whose figure must not depend on that luck is
//! first touched in a shuffled page order ([`touch_shuffled`]): its frames
//! are then scattered whatever the free lists held, on every run.
//!
//! Frame numbers come from `/proc/self/pagemap`, which shows them only to
//! a process with CAP_SYS_ADMIN (zeros otherwise): without it the layout
//! is not measured (`None`), never guessed.

use std::io::Read;
use std::os::unix::fs::FileExt;

const PAGE: usize = 4096;
/// A pagemap entry: bit 63 the page is present, bits 0–54 its frame.
const PRESENT: u64 = 1 << 63;
const FRAME: u64 = (1 << 55) - 1;

/// Of the pairs of neighbouring 4 KiB pages of `[ptr, ptr + len)` that are
/// both present, the fraction whose second frame directly follows the
/// first's (1.0 for a region on huge pages, near 0 for scattered frames);
/// `None` where the frames cannot be read (not CAP_SYS_ADMIN, no pagemap)
/// or fewer than two pages are present.
pub fn in_order_fraction(ptr: *const u8, len: usize) -> Option<f64> {
    let frames = frames(ptr as usize, len)?;
    fraction(&frames)
}

/// The fraction of neighbouring present frames in order (see
/// [`in_order_fraction`]), from pagemap entries.
fn fraction(entries: &[u64]) -> Option<f64> {
    let frame = |e: u64| (e & PRESENT != 0).then_some(e & FRAME);
    let pairs: Vec<(u64, u64)> = entries.windows(2).filter_map(|w| Some((frame(w[0])?, frame(w[1])?))).collect();
    // Every frame zero: pagemap hid them (no CAP_SYS_ADMIN).
    if pairs.is_empty() || pairs.iter().all(|&(a, b)| a == 0 && b == 0) {
        return None;
    }
    Some(pairs.iter().filter(|&&(a, b)| b == a + 1).count() as f64 / pairs.len() as f64)
}

/// The pagemap entries of the pages of `[start, start + len)`.
fn frames(start: usize, len: usize) -> Option<Vec<u64>> {
    let file = std::fs::File::open("/proc/self/pagemap").ok()?;
    let pages = len.div_ceil(PAGE);
    let mut bytes = vec![0u8; pages * 8];
    file.read_exact_at(&mut bytes, (start / PAGE * 8) as u64).ok()?;
    Some(bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

/// Writes one byte to every 4 KiB page of `[ptr, ptr + len)` in an order
/// shuffled by `seed`, so the kernel hands out frames in an order that has
/// nothing to do with the pages' (a region whose pages were already
/// touched keeps its frames).
///
/// # Safety
/// `[ptr, ptr + len)` must be writable memory the caller owns, with no
/// other reference to it alive.
pub unsafe fn touch_shuffled(ptr: *mut u8, len: usize, seed: u64) {
    let mut order: Vec<usize> = (0..len.div_ceil(PAGE)).collect();
    crate::rng::SplitMix64(seed).shuffle(&mut order);
    for page in order {
        // SAFETY: page × 4096 < len, inside the caller's writable region.
        unsafe { std::ptr::write_volatile(ptr.add(page * PAGE), 0x5a) };
    }
}

/// Whether this process may read frame numbers from pagemap (which
/// otherwise reads zeros): CAP_SYS_ADMIN in its effective set.
pub fn frames_readable() -> bool {
    let mut status = String::new();
    let read = std::fs::File::open("/proc/self/status").and_then(|mut f| f.read_to_string(&mut status));
    read.is_ok()
        && status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << 21) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Buffer, PagePolicy};
    use crate::units::Bytes;

    #[test]
    fn fraction_counts_frames_that_follow_their_neighbour() {
        let e = |f: u64| PRESENT | f;
        assert_eq!(fraction(&[e(10), e(11), e(12), e(13)]), Some(1.0));
        // 11 → 20 breaks the run; a page not present makes no pair.
        assert_eq!(fraction(&[e(10), e(11), e(20), e(21), 0, e(22)]), Some(2.0 / 3.0));
        // Reverse order is not in order.
        assert_eq!(fraction(&[e(13), e(12), e(11)]), Some(0.0));
        // Hidden frames (zeros) and too few pages: not measured.
        assert_eq!(fraction(&[e(0), e(0), e(0)]), None);
        assert_eq!(fraction(&[e(5)]), None);
        assert_eq!(fraction(&[]), None);
    }

    /// A region on 4 KiB pages first touched in a shuffled order has its
    /// frames scattered, whatever the free lists held; without
    /// CAP_SYS_ADMIN the layout is not measured rather than guessed.
    #[test]
    fn a_shuffled_first_touch_scatters_the_frames() {
        let len = 16 << 20;
        let mut region = Buffer::untouched(PagePolicy::Small, Bytes(len as u64)).unwrap();
        let ptr = region.as_mut_slice::<u8>().as_mut_ptr();
        // SAFETY: the region is writable, ours, and nothing else refers to it.
        unsafe { touch_shuffled(ptr, len, 7) };
        let got = in_order_fraction(ptr, len);
        if !frames_readable() {
            assert_eq!(got, None, "frames hidden without CAP_SYS_ADMIN");
            return crate::test_support::skip(
                "pagemap hides frame numbers without CAP_SYS_ADMIN",
                "run the tests as root (CI does)",
            );
        }
        // 4096 pages in a random order: a frame follows its neighbour's by
        // chance only.
        let f = got.expect("frames readable");
        assert!(f < 0.05, "{f:.3} of the pages in order after a shuffled touch");
    }
}
