//! Where a region's 4 KiB pages lie in physical memory, and a first touch
//! that decides it. A stream over 4 KiB pages reads faster where frames
//! follow each other than where they are scattered, and which it gets
//! depends on how fragmented free memory was. So a region's layout is read
//! back and recorded ([`in_order_fraction`]), and a region whose figure must
//! not depend on that luck is first touched in a shuffled page order
//! ([`touch_shuffled`]). Frame numbers come from `/proc/self/pagemap`, shown
//! only to CAP_SYS_ADMIN: without it the layout is not measured (`None`),
//! never guessed.

use crate::process::pagemap;
use std::sync::OnceLock;

const PAGE: usize = 4096;

/// Of the pairs of neighbouring 4 KiB pages of `[ptr, ptr + len)` whose
/// frames are both known, the fraction whose second frame directly follows
/// the first's (1.0 for a region on huge pages, near 0 for scattered
/// frames); `None` where the frames cannot be read (no CAP_SYS_ADMIN, no
/// pagemap: hidden frames read zero) or no such pair exists. Reads pagemap
/// in chunks and counts as it goes: no memory grows with the region.
pub fn in_order_fraction(ptr: *const u8, len: usize) -> Option<f64> {
    let mut count = InOrder::default();
    each_frame(ptr, len, |f| count.next(f))?;
    count.fraction()
}

/// Calls `f` with the frame of every 4 KiB page of `[ptr, ptr + len)`, in
/// page order (`None` for a page without one); `None` where frames cannot
/// be read.
fn each_frame(ptr: *const u8, len: usize, mut f: impl FnMut(Option<u64>)) -> Option<()> {
    if !frames_readable() {
        return None;
    }
    let file = std::fs::File::open("/proc/self/pagemap").ok()?;
    let start = ptr as u64;
    pagemap::each_entry(&file, start, start + len as u64, |_, e| f(pagemap::frame(e))).ok()
}

/// Of the 4 KiB pages of `[ptr, ptr + len)` whose frames are known, how
/// many share each 2 MiB block of physical memory their frames touch, on
/// average: 512 where they fill whole blocks (a huge page, or pages split
/// from whole free blocks), near 1 where each page's frame lies in a block
/// of its own. On a guest the host maps its memory in blocks like these,
/// so the same stream over 4 KiB pages can read at different rates as its
/// frames span fewer or more of them. `None` as for [`in_order_fraction`].
/// The set of blocks seen grows with the region (one entry per block).
pub fn pages_per_2mib_block(ptr: *const u8, len: usize) -> Option<f64> {
    let mut count = PerBlock::default();
    each_frame(ptr, len, |f| count.next(f))?;
    count.pages_per_block()
}

/// Known frames, and the distinct 2 MiB blocks (512 frames) they lie in.
#[derive(Default)]
struct PerBlock {
    pages: u64,
    blocks: std::collections::HashSet<u64>,
}

impl PerBlock {
    fn next(&mut self, frame: Option<u64>) {
        if let Some(f) = frame {
            self.pages += 1;
            self.blocks.insert(f / 512);
        }
    }

    fn pages_per_block(&self) -> Option<f64> {
        (self.pages > 0).then(|| self.pages as f64 / self.blocks.len() as f64)
    }
}

/// Pairs of neighbouring known frames, and those in order, counted page by
/// page.
#[derive(Default)]
struct InOrder {
    prev: Option<u64>,
    pairs: u64,
    in_order: u64,
}

impl InOrder {
    fn next(&mut self, frame: Option<u64>) {
        if let (Some(a), Some(b)) = (self.prev, frame) {
            self.pairs += 1;
            self.in_order += u64::from(b == a + 1);
        }
        self.prev = frame;
    }

    fn fraction(&self) -> Option<f64> {
        (self.pairs > 0).then(|| self.in_order as f64 / self.pairs as f64)
    }
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
/// otherwise reads zeros): CAP_SYS_ADMIN in its effective set, read once.
/// Root in a user namespace has the bit and still reads zeros: the frames
/// then count as hidden, not as out of order.
fn frames_readable() -> bool {
    static READABLE: OnceLock<bool> = OnceLock::new();
    *READABLE.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let caps = status.lines().find_map(|l| l.strip_prefix("CapEff:"));
        caps.and_then(|v| u64::from_str_radix(v.trim(), 16).ok()).is_some_and(|c| c & (1 << 21) != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Buffer, PagePolicy};
    use crate::units::Bytes;

    fn fraction(frames: &[Option<u64>]) -> Option<f64> {
        let mut count = InOrder::default();
        frames.iter().for_each(|&f| count.next(f));
        count.fraction()
    }

    fn per_block(frames: &[Option<u64>]) -> Option<f64> {
        let mut count = PerBlock::default();
        frames.iter().for_each(|&f| count.next(f));
        count.pages_per_block()
    }

    #[test]
    fn pages_per_block_counts_the_2mib_blocks_the_frames_span() {
        // Frames 0..511 are block 0, 512.. block 1: order does not matter.
        assert_eq!(per_block(&[Some(3), Some(700), Some(1), Some(511), None]), Some(2.0));
        let whole: Vec<Option<u64>> = (1024..1536).map(Some).collect();
        assert_eq!(per_block(&whole), Some(512.0), "a 2 MiB block's frames fill it");
        let apart: Vec<Option<u64>> = (0..8).map(|b| Some(b * 512 + 7)).collect();
        assert_eq!(per_block(&apart), Some(1.0), "each page in a block of its own");
        assert_eq!(per_block(&[None, None]), None, "hidden frames: not measured");
    }

    #[test]
    fn fraction_counts_frames_that_follow_their_neighbour() {
        assert_eq!(fraction(&[Some(10), Some(11), Some(12), Some(13)]), Some(1.0));
        // 11 → 20 breaks the run; a page without a known frame makes no pair.
        assert_eq!(fraction(&[Some(10), Some(11), Some(20), Some(21), None, Some(22)]), Some(2.0 / 3.0));
        // Reverse order is not in order.
        assert_eq!(fraction(&[Some(13), Some(12), Some(11)]), Some(0.0));
        // Hidden frames and too few pages: not measured.
        assert_eq!(fraction(&[None, None, None]), None);
        assert_eq!(fraction(&[Some(5)]), None);
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
        let Some(f) = in_order_fraction(ptr, len) else {
            return crate::test_support::skip(
                "pagemap hides frame numbers without CAP_SYS_ADMIN (in the initial user namespace)",
                "run the tests as root (CI does)",
            );
        };
        // 4096 pages in a random order: a frame follows its neighbour's by
        // chance only.
        assert!(f < 0.05, "{f:.3} of the pages in order after a shuffled touch");
        // The same region read as THP is in order: the fraction is not
        // stuck near 0. (A region the kernel gave no huge page reads as
        // the kernel placed it, which no test can expect.)
        let huge = Buffer::new(PagePolicy::Thp, Bytes(8 << 20)).unwrap();
        if huge.backing().huge_fraction.is_some_and(|h| h >= 0.99) {
            let g = in_order_fraction(huge.as_ptr(), huge.len()).expect("frames readable");
            assert!(g > 0.99, "{g:.3} of a huge page's 4 KiB frames in order");
            let b = pages_per_2mib_block(huge.as_ptr(), huge.len()).expect("frames readable");
            assert_eq!(b, 512.0, "four huge pages fill four blocks");
        }
    }
}
