//! The arrays stream kernels work on: `parts` f64 arrays of one size in
//! one region under one page policy, filled with the checksum pattern and
//! sliced per thread (used by `bandwidth`, `curves`, `numa` and by
//! `loaded-latency`'s loaders). Each thread first touches its slice in
//! address order, as STREAM and likwid-bench do and as a program that
//! allocates and fills an array does: on a machine with free memory its
//! frames come in physical order. [`Array::fragmented`] touches a 4 KiB
//! region's pages in a shuffled order instead, the frames of fragmented
//! free memory, the same shuffle every run (the region records it, and
//! the fraction of its pages in order where pagemap shows it).

use crate::error::Result;
use crate::kernels::{pattern_value, StreamArg};
use crate::memory::{layout, Buffer, PagePolicy};
use crate::timing::{Clock, Team};
use crate::units::Bytes;

/// Elements between the end of one part and the start of the next (17
/// lines): parts that started at the same offset in a page would send
/// a[i], b[i], c[i] to the same cache sets and DRAM banks, and their loads
/// and stores would alias at 4 KiB (STREAM's OFFSET, for the same reason).
pub const PART_GAP: usize = 17 * 8;

/// The seed of a 4 KiB region's shuffled first touch (one per thread and
/// part): the same scattered layout's statistics every run.
const TOUCH_SEED: u64 = 0x0073_6361_7474_6572;

/// `parts` arrays of `len` f64 each, in one region under one page policy,
/// filled with the checksum pattern: one for the read kernels, four (A, B,
/// C, D) for the write kernels.
pub struct Array {
    pub region: Buffer,
    pub parts: usize,
    /// Elements of each part.
    pub len: usize,
}

impl Array {
    /// The parts are sliced for the threads of `team` from `first_thread`
    /// on; each of those first-touches (fills) its own slice of every part,
    /// so on a NUMA machine its pages live on that thread's node.
    pub fn new(
        policy: PagePolicy,
        size: Bytes,
        parts: usize,
        team: &Team,
        first_thread: usize,
        clock: &dyn Clock,
    ) -> Result<Array> {
        // As many elements as `size` holds, not as the region rounded to
        // its page size holds: every policy's arrays of one size read and
        // write the same elements (their checksums and rates alike).
        let len = size.0 as usize / 8 / 64 * 64;
        Array::fill_len(Array::region(policy, size, parts)?, parts, len, team, first_thread, clock, false)
    }

    /// As [`Array::new`] on 4 KiB pages, each thread first touching its
    /// slice's pages in a shuffled order: the frames of fragmented memory.
    pub fn fragmented(size: Bytes, team: &Team, clock: &dyn Clock) -> Result<Array> {
        let len = size.0 as usize / 8 / 64 * 64;
        Array::fill_len(Array::region(PagePolicy::Small, size, 1)?, 1, len, team, 0, clock, true)
    }

    /// The untouched region `parts` arrays of `size` need (a caller may
    /// set its memory policy before [`Array::fill`] touches it).
    pub fn region(policy: PagePolicy, size: Bytes, parts: usize) -> Result<Buffer> {
        let gaps = (parts as u64 - 1) * PART_GAP as u64 * 8;
        Buffer::untouched(policy, Bytes(size.0 * parts as u64 + gaps))
    }

    /// The arrays in `region` (from [`Array::region`]), filled as [`Array::new`] says.
    pub fn fill(region: Buffer, parts: usize, team: &Team, first_thread: usize, clock: &dyn Clock) -> Result<Array> {
        let len = (region.len() / 8 - (parts - 1) * PART_GAP) / parts / 64 * 64;
        Array::fill_len(region, parts, len, team, first_thread, clock, false)
    }

    /// [`Array::fill`] with `len` elements a part (at most what the region
    /// holds), its pages first touched in a shuffled order where
    /// `shuffled` and the region is on 4 KiB pages.
    #[allow(clippy::too_many_arguments)]
    fn fill_len(
        region: Buffer,
        parts: usize,
        len: usize,
        team: &Team,
        first_thread: usize,
        clock: &dyn Clock,
        shuffled: bool,
    ) -> Result<Array> {
        assert!(len * parts + (parts - 1) * PART_GAP <= region.len() / 8, "{len} elements a part fit the region");
        let mut a = Array { region, parts, len };
        let owners = team.threads().saturating_sub(first_thread).max(1);
        let slices: Vec<Vec<StreamArg>> = (0..parts).map(|k| a.part_slices(k, owners)).collect();
        let base = a.region.as_ptr() as usize;
        let shuffled = shuffled && a.region.backing().requested == PagePolicy::Small;
        team.run(clock, |thread| {
            let Some(t) = thread.checked_sub(first_thread) else { return };
            for (k, part) in slices.iter().enumerate() {
                let s = &part[t];
                if shuffled {
                    // SAFETY: this thread's slice of the region, which it
                    // alone writes during this run.
                    unsafe { layout::touch_shuffled(s.ptr as *mut u8, s.len * 8, TOUCH_SEED ^ (t * 4 + k) as u64) };
                }
                let first = (s.ptr as usize - base) / 8 - k * (len + PART_GAP);
                for i in 0..s.len {
                    // SAFETY: i < s.len, inside this thread's slice.
                    unsafe { (s.ptr as *mut f64).add(i).write(pattern_value(first + i)) };
                }
            }
        });
        if shuffled {
            a.region.mark_touched_shuffled();
        }
        a.region.read_back();
        Ok(a)
    }

    /// Per-thread slices of part `k`, each a multiple of 64 elements (one
    /// AVX-512 iteration); the last thread takes the remainder.
    pub fn part_slices(&self, k: usize, threads: usize) -> Vec<StreamArg> {
        let per = (self.len / threads) / 64 * 64;
        // SAFETY: part k lies inside the region (parts × len f64 and the gaps between them).
        let base = unsafe { (self.region.as_ptr() as *const f64).add(k * (self.len + PART_GAP)) };
        (0..threads)
            .map(|t| {
                let start = t * per;
                let len = if t + 1 == threads { self.len - start } else { per };
                // SAFETY: start + len <= self.len, inside the part.
                StreamArg::read(unsafe { base.add(start) }, len, 0)
            })
            .collect()
    }

    /// The read kernels' slices.
    pub fn slices(&self, threads: usize, distance: usize) -> Vec<StreamArg> {
        self.part_slices(0, threads).into_iter().map(|s| StreamArg { distance, ..s }).collect()
    }

    /// The write kernels' slices: A in part 0, B, C, D at the same offsets
    /// in parts 1 to 3.
    pub fn write_slices(&self, threads: usize) -> Vec<StreamArg> {
        assert_eq!(self.parts, 4, "a write array");
        let sources: Vec<Vec<StreamArg>> = (1..4).map(|k| self.part_slices(k, threads)).collect();
        self.part_slices(0, threads)
            .into_iter()
            .enumerate()
            .map(|(t, a)| StreamArg { sources: [0, 1, 2].map(|k| sources[k][t].ptr), ..a })
            .collect()
    }

    /// NUMA node of the first page of each slice.
    pub fn slice_nodes(&self, threads: usize) -> Vec<Option<i32>> {
        self.slices(threads, 0).iter().map(|s| crate::memory::buffer::numa_node_of(s.ptr as usize)).collect()
    }
}
