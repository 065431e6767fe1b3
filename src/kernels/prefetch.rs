//! Kernels of the prefetch-fault experiment (x86_64 and aarch64): a prefetch of one
//! address in a throughput loop and in a latency-bound loop, a linked-list
//! walk with a look-ahead prefetch, and a page-stride walk with a prefetch
//! D pages ahead. All generic over the prefetch instruction ([`super::hint`]), and over
//! `NoPrefetch` for the baselines.

use super::hint::Prefetcher;

/// The addresses to prefetch (rotated over, so no single address keeps
/// the paging-structure caches warm) and a small mapped cycle for
/// dependent loads.
#[derive(Debug, Clone, Copy)]
pub struct TargetArg {
    /// `mask + 1` addresses (a power of two).
    pub targets: *const usize,
    pub mask: usize,
    /// Head of a pointer cycle in mapped, cached memory.
    pub chase: *const usize,
    /// Always 0, but opaque to the compiler, to make an address depend on a load.
    pub zero: usize,
}

/// `iters` × 8 prefetches, of the targets in turn; returns iters.
///
/// # Safety
/// `arg.targets` must hold `arg.mask + 1` readable words. Prefetches never
/// fault on x86_64.
#[inline(never)]
pub unsafe fn target_throughput<P: Prefetcher>(iters: u64, arg: &TargetArg) -> u64 {
    let (t, mask) = (std::hint::black_box(arg.targets), arg.mask);
    let mut k = 0usize;
    for _ in 0..iters {
        for _ in 0..8 {
            // SAFETY: k & mask indexes the caller's array; a prefetch never faults.
            unsafe { P::prefetch(*t.add(k & mask) as *const f64) };
            k = k.wrapping_add(1);
        }
        std::hint::black_box(());
    }
    iters
}

/// `iters` steps of: prefetch the next target (its address depending on
/// the previous load), then load the next element of a cached cycle.
/// Returns the final cycle position (the caller checks it is in the cycle).
///
/// # Safety
/// As for [`target_throughput`]; `arg.chase` must head a cycle of valid pointers.
#[inline(never)]
pub unsafe fn target_latency<P: Prefetcher>(iters: u64, arg: &TargetArg) -> u64 {
    let mut p = arg.chase;
    let zero = std::hint::black_box(arg.zero);
    for i in 0..iters as usize {
        // SAFETY: i & mask indexes the caller's array.
        let addr = unsafe { *arg.targets.add(i & arg.mask) } | (p as usize & zero);
        // SAFETY: a prefetch never faults.
        unsafe { P::prefetch(addr as *const f64) };
        // SAFETY: p is in the caller's cycle.
        p = unsafe { std::ptr::read_volatile(p) } as *const usize;
    }
    p as u64
}

/// A list node: one per cache line.
#[repr(C, align(64))]
pub struct Node {
    pub next: *const Node,
    /// The node `k` ahead in the same list, or null near its end.
    pub ahead: *const Node,
    pub value: u64,
}

pub use memperf_model::kernels::prefetch::Guard;

/// Walks every list in `heads`; returns the sum of node values.
///
/// # Safety
/// Every head must start a null-terminated list of valid nodes.
#[inline(never)]
pub unsafe fn walk_lists<P: Prefetcher, const G: u8>(heads: &[*const Node]) -> u64 {
    let mut sum = 0u64;
    for &h in heads {
        let mut p = h;
        while !p.is_null() {
            // SAFETY: p is a valid node of the list (caller's contract).
            let n = unsafe { &*p };
            if G == 1 || (G == 2 && !n.ahead.is_null()) {
                // SAFETY: a prefetch never faults, even of null.
                unsafe { P::prefetch(n.ahead as *const f64) };
            }
            sum += n.value;
            p = n.next;
        }
    }
    sum
}

/// Visits pages in the order `pages` (page indices), loading the line at
/// `line_offset` of each; each load's address depends on the previous load
/// (so the walk is latency-bound and the pages' order defeats the hardware
/// prefetchers), and the line of the page `ahead` steps further on is
/// prefetched — its address depending on the previous load too, so the
/// prefetch cannot run ahead of the walk out of order. Returns the sum of
/// the first word of each line loaded.
///
/// # Safety
/// `base + page × page_bytes + line_offset + 8` must be readable for every page listed.
#[inline(never)]
pub unsafe fn page_walk<P: Prefetcher>(
    base: *const u8,
    page_bytes: usize,
    pages: &[u32],
    line_offset: usize,
    ahead: usize,
) -> u64 {
    let mut sum = 0u64;
    let mut prev = 0u64;
    let zero = std::hint::black_box(0u64);
    let n = pages.len();
    for i in 0..n {
        if ahead > 0 {
            let far = pages[(i + ahead) % n] as usize;
            let at = far * page_bytes + line_offset + (prev & zero) as usize;
            // SAFETY: a prefetch never faults.
            unsafe { P::prefetch(base.wrapping_add(at) as *const f64) };
        }
        let at = pages[i] as usize * page_bytes + line_offset + (prev & zero) as usize;
        // SAFETY: inside the caller's region (prev & zero is 0).
        prev = unsafe { std::ptr::read_volatile(base.add(at) as *const u64) };
        sum = sum.wrapping_add(prev);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::disasm::mnemonics;
    use crate::kernels::hint::*;

    fn has(m: &[String], ins: &str) -> bool {
        m.iter().any(|x| x == ins)
    }

    #[test]
    fn each_kernel_contains_the_instruction_it_claims() {
        fn check<P: Prefetcher>(ins: &str) {
            for f in [
                target_throughput::<P> as *const u8,
                target_latency::<P> as *const u8,
                walk_lists::<P, 1> as *const u8,
                walk_lists::<P, 2> as *const u8,
                page_walk::<P> as *const u8,
            ] {
                let m = mnemonics(f);
                assert!(has(&m, ins), "{ins} missing: {m:?}");
            }
        }
        check::<PrefetchT0>(instruction(Hint::T0));
        check::<PrefetchT1>(instruction(Hint::T1));
        check::<PrefetchT2>(instruction(Hint::T2));
        check::<PrefetchNta>(instruction(Hint::Nta));
        check::<PrefetchW>(instruction(Hint::W));
        for f in [target_throughput::<NoPrefetch> as *const u8, walk_lists::<PrefetchT0, 0> as *const u8] {
            assert!(mnemonics(f).iter().all(|m| !m.starts_with("prefetch") && !m.starts_with("prfm")));
        }
    }

    /// In the guarded walk the instruction before each prefetch is the
    /// conditional branch of the null test; in the unguarded one, never.
    #[test]
    fn guarded_walk_tests_for_null_before_prefetching() {
        let guarded_before = |f: *const u8| -> Vec<bool> {
            let m = mnemonics(f);
            let conditional = |x: &str| {
                x.starts_with('j') && x != "jmp" || x.starts_with("b.") || ["cbz", "cbnz", "tbz", "tbnz"].contains(&x)
            };
            m.windows(2).filter(|w| w[1] == instruction(Hint::T0)).map(|w| conditional(&w[0])).collect()
        };
        let g = guarded_before(walk_lists::<PrefetchT0, 2> as *const u8);
        let u = guarded_before(walk_lists::<PrefetchT0, 1> as *const u8);
        assert!(!g.is_empty() && g.iter().all(|&b| b), "{g:?}");
        assert!(!u.is_empty() && u.iter().all(|&b| !b), "{u:?}");
    }
}
