//! The page-descriptor initialisation of a kernel's boot path (Solaris
//! `add_physmem`), in user space: one 128-byte descriptor per base page in
//! one array; for each segment, every descriptor initialised, aligned runs
//! that fit becoming large pages, the rest going on the base-page free
//! list. Variants: locked (the original), lock-free, prefetching k ahead,
//! parallel (segments split among threads, lists spliced at the end), and
//! streaming (each descriptor built in registers and written whole with
//! non-temporal stores, so no line is read for ownership and none written
//! twice).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

pub const NIL: u64 = u64::MAX;

/// A page descriptor: exactly 128 bytes (two cache lines).
#[repr(C, align(128))]
pub struct PageDesc {
    pub pfn: u64,
    pub next: u64,
    pub prev: u64,
    /// Index of the large page's root, or this page's own index.
    pub root: u64,
    pub hash_next: u64,
    pub vnode: u64,
    pub offset: u64,
    pub lock: AtomicU32,
    /// 0 = base page, 1 = constituent or root of a large page.
    pub size_code: u8,
    pub flags: u8,
    pub share_count: u16,
    pub io_lock: u64,
    pub mapping: u64,
    pub pad: [u64; 6],
}

const _: () = assert!(std::mem::size_of::<PageDesc>() == 128);

/// A free list: singly pushed at the head, doubly linked through the descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreeList {
    pub head: u64,
    pub tail: u64,
    pub count: u64,
}

impl Default for FreeList {
    fn default() -> Self {
        FreeList { head: NIL, tail: NIL, count: 0 }
    }
}

/// The free lists of one thread (or of the whole system).
#[derive(Debug, Default)]
pub struct FreeLists {
    pub base: FreeList,
    pub large: FreeList,
    lock: AtomicBool,
}

impl FreeLists {
    fn acquire(&self) {
        while self.lock.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
    }
    fn release(&self) {
        self.lock.store(false, Ordering::Release);
    }

    /// Appends `other` to these lists (O(1) per list).
    ///
    /// # Safety
    /// `descs` must be the array both lists link into.
    pub unsafe fn splice(&mut self, other: &FreeLists, descs: *mut PageDesc) {
        for (mine, theirs) in [(&mut self.base, other.base), (&mut self.large, other.large)] {
            if theirs.count == 0 {
                continue;
            }
            if mine.count == 0 {
                *mine = theirs;
                continue;
            }
            // SAFETY: tail and head are valid indices of `descs`.
            unsafe {
                (*descs.add(mine.tail as usize)).next = theirs.head;
                (*descs.add(theirs.head as usize)).prev = mine.tail;
            }
            mine.tail = theirs.tail;
            mine.count += theirs.count;
        }
    }
}

/// One range of physical memory: `pages` base pages from `base_pfn`, whose
/// descriptors start at `first_desc` in the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub base_pfn: u64,
    pub pages: u64,
    pub first_desc: u64,
}

/// How `add_physmem` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    pub locked: bool,
    /// Prefetch the descriptor this many ahead (0: none).
    pub ahead: usize,
    /// Write whole descriptors with non-temporal stores (no lock, no
    /// prefetch: a streaming store reads nothing).
    pub streaming: bool,
}

/// Pushes descriptor `idx` on `list`.
///
/// # Safety
/// `idx` and every index on `list` must be valid descriptors of `descs`,
/// not touched by another thread.
#[inline(always)]
unsafe fn push(list: &mut FreeList, descs: *mut PageDesc, idx: u64) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        let d = &mut *descs.add(idx as usize);
        d.next = list.head;
        d.prev = NIL;
        if list.head != NIL {
            (*descs.add(list.head as usize)).prev = idx;
        } else {
            list.tail = idx;
        }
    }
    list.head = idx;
    list.count += 1;
}

#[inline(always)]
unsafe fn prefetch_desc(p: *const PageDesc) {
    use crate::kernels::hint::{PrefetchW, Prefetcher};
    // SAFETY: prefetches never fault.
    unsafe {
        PrefetchW::prefetch(p as *const f64);
        PrefetchW::prefetch((p as *const u8).add(64) as *const f64);
    }
}

/// A descriptor's value, off its list (next and prev NIL).
#[inline(always)]
fn descriptor(pfn: u64, root: u64, in_run: bool) -> PageDesc {
    PageDesc {
        pfn,
        next: NIL,
        prev: NIL,
        root,
        hash_next: NIL,
        vnode: 0,
        offset: pfn << 12,
        lock: AtomicU32::new(0),
        size_code: u8::from(in_run),
        flags: 1,
        share_count: 0,
        io_lock: 0,
        mapping: 0,
        pad: [0; 6],
    }
}

/// Writes `d` to `dst` as two whole lines of non-temporal stores.
///
/// # Safety
/// `dst` must be a valid, 128-byte aligned descriptor no other thread touches.
#[inline(always)]
unsafe fn stream_desc(dst: *mut PageDesc, d: &PageDesc) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86_64; both pointers hold 128 bytes, `dst` is
    // 16-byte aligned (the caller's contract).
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let (src, dst) = (d as *const PageDesc as *const __m128i, dst as *mut __m128i);
        for k in 0..8 {
            _mm_stream_si128(dst.add(k), _mm_loadu_si128(src.add(k)));
        }
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: both pointers hold 128 bytes; `stnp` stores a pair of words
    // with a non-temporal hint and reads nothing.
    unsafe {
        let (src, dst) = (d as *const PageDesc as *const u64, dst as *mut u64);
        for k in (0..16).step_by(2) {
            std::arch::asm!("stnp {a}, {b}, [{p}]", a = in(reg) *src.add(k), b = in(reg) *src.add(k + 1),
                p = in(reg) dst.add(k), options(nostack, preserves_flags));
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: as the caller guarantees.
    unsafe {
        std::ptr::copy_nonoverlapping(d, dst, 1)
    };
}

/// Streams `len / 16` descriptor images (the values `add_physmem` writes,
/// off any list) over `ptr`: the store limit for these very bytes, since
/// on some machines the write rate depends on the data written. Returns
/// the descriptors written.
///
/// # Safety
/// `ptr` must be 128-byte aligned and hold `len` words no other thread touches.
pub unsafe fn store_descriptor_images(ptr: *mut u64, len: usize, first_pfn: u64) -> u64 {
    let descs = ptr as *mut PageDesc;
    let n = len / 16;
    for i in 0..n as u64 {
        let pfn = first_pfn.wrapping_add(i);
        // SAFETY: i < n descriptors fit in the caller's `len` words.
        unsafe { stream_desc(descs.add(i as usize), &descriptor(pfn, pfn, false)) };
    }
    stream_fence();
    n as u64
}

/// Drains the weakly ordered streaming stores before anyone reads the lists.
#[inline(always)]
fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence only orders stores.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// A list head not yet written: its `prev` is the next page pushed.
type Held = Option<(u64, PageDesc)>;

/// Pushes descriptor `idx` (value `d`) on `list`, writing the page held
/// before it, now that its `prev` is known.
///
/// # Safety
/// As for [`push`]; `held` belongs to `list`.
#[inline(always)]
unsafe fn push_streaming(list: &mut FreeList, held: &mut Held, descs: *mut PageDesc, idx: u64, mut d: PageDesc) {
    d.next = list.head;
    // SAFETY: guaranteed by the caller.
    unsafe {
        if let Some((h, mut hd)) = held.take() {
            hd.prev = idx;
            stream_desc(descs.add(h as usize), &hd);
        } else if list.head != NIL {
            // The head was written by an earlier call: one ordinary store.
            (*descs.add(list.head as usize)).prev = idx;
        } else {
            list.tail = idx;
        }
    }
    *held = Some((idx, d));
    list.head = idx;
    list.count += 1;
}

/// [`add_physmem`] with every descriptor written once, whole, by streaming
/// stores: constituents at once, a large page's root when its run is
/// complete, each list head when the next page on its list is known.
///
/// # Safety
/// As for [`add_physmem`].
unsafe fn add_physmem_streaming(
    descs: *mut PageDesc,
    seg: Segment,
    from: u64,
    count: u64,
    ratio: u64,
    lists: &mut FreeLists,
) {
    let (mut held_base, mut held_large): (Held, Held) = (None, None);
    let mut root: Option<(u64, PageDesc)> = None;
    let mut run_end = 0u64;
    for i in from..from + count {
        let idx = seg.first_desc + i;
        let pfn = seg.base_pfn + i;
        if root.is_none() && pfn.is_multiple_of(ratio) && i + ratio <= seg.pages {
            root = Some((idx, descriptor(pfn, idx, true)));
            run_end = i + ratio;
            continue;
        }
        // SAFETY: idx and every index on the lists are this thread's (caller's contract).
        unsafe {
            match &root {
                None => push_streaming(&mut lists.base, &mut held_base, descs, idx, descriptor(pfn, idx, false)),
                Some((r, _)) => stream_desc(descs.add(idx as usize), &descriptor(pfn, *r, true)),
            }
            if root.is_some() && i + 1 == run_end {
                let (r, d) = root.take().expect("in a run");
                push_streaming(&mut lists.large, &mut held_large, descs, r, d);
            }
        }
    }
    for (h, d) in [held_base, held_large].into_iter().flatten() {
        // SAFETY: h is this thread's descriptor; its prev stays NIL.
        unsafe { stream_desc(descs.add(h as usize), &d) };
    }
    stream_fence();
}

/// Initialises the descriptors of pages `from..from + count` of `seg` and
/// frees them onto `lists`. `from` must be a multiple of `ratio` relative
/// to the pfn alignment, or 0 (threads split segments at large-page
/// boundaries so no run is cut).
///
/// # Safety
/// `descs` must hold the segment's descriptors; no other thread may touch
/// descriptors `first_desc + from .. + count`.
#[inline(never)]
pub unsafe fn add_physmem(
    descs: *mut PageDesc,
    seg: Segment,
    from: u64,
    count: u64,
    ratio: u64,
    mode: Mode,
    lists: &mut FreeLists,
) {
    if mode.streaming {
        // SAFETY: the same contract.
        return unsafe { add_physmem_streaming(descs, seg, from, count, ratio, lists) };
    }
    let end = seg.pages;
    let stop = from + count;
    let mut run_root = NIL;
    let mut run_end = 0u64;
    for i in from..stop {
        let idx = seg.first_desc + i;
        if mode.ahead > 0 {
            // SAFETY: a prefetch never faults, even past the array.
            unsafe { prefetch_desc(descs.wrapping_add((idx as usize).wrapping_add(mode.ahead))) };
        }
        let pfn = seg.base_pfn + i;
        // Does a complete, aligned large page start here?
        if run_root == NIL && pfn.is_multiple_of(ratio) && i + ratio <= end {
            run_root = idx;
            run_end = i + ratio;
        }
        let in_run = run_root != NIL;
        // SAFETY: idx is inside this segment's descriptors (caller's contract).
        init_desc(unsafe { &mut *descs.add(idx as usize) }, pfn, if in_run { run_root } else { idx }, in_run);
        if !in_run {
            // SAFETY: idx is this thread's; the list holds only its own pages.
            unsafe { free_onto(lists, false, descs, idx, mode.locked) };
        } else if i + 1 == run_end {
            // SAFETY: run_root is this thread's; the list holds only its own pages.
            unsafe { free_onto(lists, true, descs, run_root, mode.locked) };
            run_root = NIL;
        }
    }
}

/// A descriptor's first state: its frame, its run's root, no links, free.
/// Inlined: it is the body of the timed loop.
#[inline(always)]
fn init_desc(d: &mut PageDesc, pfn: u64, root: u64, in_run: bool) {
    d.pfn = pfn;
    d.next = NIL;
    d.prev = NIL;
    d.root = root;
    d.hash_next = NIL;
    d.vnode = 0;
    d.offset = pfn << 12;
    d.lock.store(0, Ordering::Relaxed);
    d.size_code = u8::from(in_run);
    d.flags = 1;
    d.share_count = 0;
    d.io_lock = 0;
    d.mapping = 0;
}

/// Pushes page `idx` onto the large or the base free list, under the lists'
/// lock when `locked`. Inlined: it is part of the timed loop.
///
/// # Safety
/// As `push`: `idx` is the caller's, the list holds only the caller's pages.
#[inline(always)]
unsafe fn free_onto(lists: &mut FreeLists, large: bool, descs: *mut PageDesc, idx: u64, locked: bool) {
    if locked {
        lists.acquire();
    }
    let list = if large { &mut lists.large } else { &mut lists.base };
    // SAFETY: the caller's contract.
    unsafe { push(list, descs, idx) };
    if locked {
        lists.release();
    }
}

/// Large and base pages a segment yields, in closed form.
pub fn expected_counts(seg: Segment, ratio: u64) -> (u64, u64) {
    let first = seg.base_pfn.div_ceil(ratio);
    let last = (seg.base_pfn + seg.pages) / ratio;
    let large = last.saturating_sub(first);
    (large, seg.pages - large * ratio)
}

/// Checks the free lists against the segments: every page on exactly one
/// list (alone, or as a constituent of exactly one large page); every large
/// page aligned and complete; counts equal to the closed form. Returns an
/// order-independent digest of the lists, so variants can be compared.
///
/// # Safety
/// `descs` must hold every segment's descriptors, initialised by `add_physmem`.
pub unsafe fn validate(descs: *const PageDesc, segs: &[Segment], ratio: u64, lists: &FreeLists) -> Result<u64, String> {
    let total: u64 = segs.iter().map(|s| s.first_desc + s.pages).max().unwrap_or(0);
    let mut seen = vec![0u8; total as usize];
    // SAFETY: every index passed is checked against `total` first or comes
    // from a segment, inside the caller's array.
    let d = |i: u64| unsafe { &*descs.add(i as usize) };
    let mut digest = 0u64;
    let mix = |x: u64| crate::kernels::chase::SplitMix64(x).next_u64();
    let (mut nb, mut p) = (0u64, lists.base.head);
    while p != NIL {
        if p >= total || seen[p as usize] != 0 || d(p).size_code != 0 {
            return Err(format!("base page {p} is listed twice, out of range or not a base page"));
        }
        seen[p as usize] = 1;
        digest = digest.wrapping_add(mix(d(p).pfn));
        nb += 1;
        p = d(p).next;
    }
    let (mut nl, mut p) = (0u64, lists.large.head);
    while p != NIL {
        let root = d(p);
        if root.pfn % ratio != 0 {
            return Err(format!("large page at pfn {} is not aligned", root.pfn));
        }
        for k in 0..ratio {
            let c = p + k;
            if c >= total || seen[c as usize] != 0 || d(c).root != p || d(c).pfn != root.pfn + k || d(c).size_code != 1
            {
                return Err(format!("large page at pfn {} is incomplete or shares page {}", root.pfn, root.pfn + k));
            }
            seen[c as usize] = 1;
        }
        digest = digest.wrapping_add(mix(root.pfn ^ (1 << 63)));
        nl += 1;
        p = root.next;
    }
    for s in segs {
        if let Some(i) = (s.first_desc..s.first_desc + s.pages).find(|&i| seen[i as usize] == 0) {
            return Err(format!("page at pfn {} is on no free list", d(i).pfn));
        }
    }
    let (el, eb) = segs.iter().map(|&s| expected_counts(s, ratio)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if (nl, nb) != (el, eb) || lists.large.count != nl || lists.base.count != nb {
        return Err(format!("counts {nl} large + {nb} base differ from the closed form {el} + {eb}"));
    }
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(n: u64) -> Vec<PageDesc> {
        // SAFETY: PageDesc is plain data (integers and atomics): zero is valid.
        (0..n).map(|_| unsafe { std::mem::zeroed() }).collect()
    }

    fn layout() -> Vec<Segment> {
        // Misaligned start, a hole, a misaligned end; ratio 8.
        vec![
            Segment { base_pfn: 3, pages: 30, first_desc: 0 },
            Segment { base_pfn: 64, pages: 64, first_desc: 30 },
            Segment { base_pfn: 200, pages: 21, first_desc: 94 },
        ]
    }

    #[test]
    fn closed_form_counts() {
        assert_eq!(expected_counts(Segment { base_pfn: 3, pages: 30, first_desc: 0 }, 8), (3, 6));
        assert_eq!(expected_counts(Segment { base_pfn: 0, pages: 7, first_desc: 0 }, 8), (0, 7));
        assert_eq!(expected_counts(Segment { base_pfn: 200, pages: 21, first_desc: 0 }, 8), (2, 5));
    }

    #[test]
    fn every_variant_builds_the_same_valid_lists() {
        let segs = layout();
        let mut digests = Vec::new();
        let mode = |locked, ahead, streaming| Mode { locked, ahead, streaming };
        for mode in [mode(true, 0, false), mode(false, 0, false), mode(false, 4, false), mode(false, 0, true)] {
            let mut a = array(115);
            let mut lists = FreeLists::default();
            for &s in &segs {
                // SAFETY: a holds every segment's descriptors.
                unsafe { add_physmem(a.as_mut_ptr(), s, 0, s.pages, 8, mode, &mut lists) };
            }
            // SAFETY: as above.
            digests.push(unsafe { validate(a.as_ptr(), &segs, 8, &lists) }.unwrap());
        }
        // Split like the parallel variants: halves at a large-page boundary, spliced.
        for m in [mode(false, 0, false), mode(false, 0, true)] {
            let mut a = array(115);
            let (mut l1, mut l2) = (FreeLists::default(), FreeLists::default());
            let s = segs[1];
            // SAFETY: a holds the descriptors; the halves are disjoint.
            unsafe {
                add_physmem(a.as_mut_ptr(), segs[0], 0, segs[0].pages, 8, m, &mut l1);
                add_physmem(a.as_mut_ptr(), s, 0, 32, 8, m, &mut l1);
                add_physmem(a.as_mut_ptr(), s, 32, 32, 8, m, &mut l2);
                add_physmem(a.as_mut_ptr(), segs[2], 0, segs[2].pages, 8, m, &mut l2);
                l1.splice(&l2, a.as_mut_ptr());
                digests.push(validate(a.as_ptr(), &segs, 8, &l1).unwrap());
            }
        }
        assert_eq!(digests.len(), 6);
        assert!(digests.windows(2).all(|w| w[0] == w[1]), "{digests:?}");
    }

    /// The streaming path and the image kernel store with non-temporal
    /// moves and fence before they return.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn streaming_writes_are_non_temporal_and_fenced() {
        use crate::kernels::disasm::mnemonics;
        for f in [add_physmem as *const u8, store_descriptor_images as *const u8] {
            let m = mnemonics(f);
            assert!(m.iter().filter(|x| x.starts_with("movnt")).count() >= 8, "{m:?}");
            assert!(m.iter().any(|x| x == "sfence"), "{m:?}");
        }
    }

    #[test]
    fn validation_catches_a_missing_page() {
        let segs = layout();
        let mut a = array(115);
        let mut lists = FreeLists::default();
        for &s in &segs[..2] {
            // SAFETY: a holds the descriptors.
            unsafe {
                add_physmem(
                    a.as_mut_ptr(),
                    s,
                    0,
                    s.pages,
                    8,
                    Mode { locked: false, ahead: 0, streaming: false },
                    &mut lists,
                )
            };
        }
        // SAFETY: as above (the third segment is left uninitialised on purpose).
        let e = unsafe { validate(a.as_ptr(), &segs, 8, &lists) }.unwrap_err();
        assert!(e.contains("on no free list"), "{e}");
    }
}
