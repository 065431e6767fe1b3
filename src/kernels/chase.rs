//! Dependent-load pointer chase: the latency kernel. Each slot (a cache
//! line, or one line per page for the TLB sweep) holds the address of the
//! next; the visiting order is one random cycle through every slot from a
//! recorded seed, so prefetchers cannot predict it and it is verifiably one
//! cycle. A windowed order shuffles only inside windows of a few pages
//! (multichase's `-T`): TLB misses vanish, cache misses stay. `K` chains
//! run interleaved from evenly spaced points of the cycle (the memory-level
//! parallelism); the checksum is where each chain ends, in closed form.

pub use crate::rng::SplitMix64;

/// The order in which slots `0..n` are visited: a random permutation, or,
/// with `window` = w, the slots grouped in windows of w consecutive slots,
/// windows in random order and slots in random order inside each window.
pub fn visit_order(n: usize, window: Option<usize>, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64(seed);
    match window {
        None => {
            let mut order: Vec<usize> = (0..n).collect();
            rng.shuffle(&mut order);
            order
        }
        Some(w) => {
            let w = w.max(1);
            let mut windows: Vec<usize> = (0..n.div_ceil(w)).collect();
            rng.shuffle(&mut windows);
            let mut order = Vec::with_capacity(n);
            for win in windows {
                let start = order.len();
                order.extend(win * w..((win + 1) * w).min(n));
                rng.shuffle(&mut order[start..]);
            }
            order
        }
    }
}

/// Links `order` into one cycle in `base`: slot `order[i]`, at byte offset
/// `offset(order[i])`, holds the address of slot `order[i + 1]`.
///
/// # Safety
/// `base + offset(s) .. + 8` must be writable and 8-byte aligned for every slot.
pub unsafe fn link(base: *mut u8, order: &[usize], offset: impl Fn(usize) -> usize) {
    for (i, &s) in order.iter().enumerate() {
        let next = order[(i + 1) % order.len()];
        // SAFETY: guaranteed by the caller.
        unsafe { (base.add(offset(s)) as *mut usize).write(base.add(offset(next)) as usize) };
    }
}

/// Follows the chain from `start` until it returns; the cycle length, or
/// `None` if it does not return within `limit` steps.
///
/// # Safety
/// The chain from `start` must have been built by [`link`] in live memory.
pub unsafe fn cycle_length(start: *const usize, limit: usize) -> Option<usize> {
    let mut p = start;
    for steps in 1..=limit {
        // SAFETY: guaranteed by the caller.
        p = unsafe { *p } as *const usize;
        if p == start {
            return Some(steps);
        }
    }
    None
}

/// Where `K` chains are and go: their current positions, updated in place.
pub struct ChaseArg {
    pub heads: [*const usize; 16],
}

/// The chase ABI: `iters` dependent loads on each of K chains; returns the
/// XOR of the final positions (and leaves them in `arg.heads`).
///
/// # Safety
/// Each of the first K heads must point into a cycle built by [`link`].
pub type ChaseKernel = unsafe fn(iters: u64, arg: &mut ChaseArg) -> u64;

/// K interleaved chains; the positions live in registers for the loop.
///
/// # Safety
/// See [`ChaseKernel`].
#[inline(never)]
pub unsafe fn chase<const K: usize>(iters: u64, arg: &mut ChaseArg) -> u64 {
    let mut p: [*const usize; K] = [std::ptr::null(); K];
    p.copy_from_slice(&arg.heads[..K]);
    for _ in 0..iters {
        for q in p.iter_mut() {
            // SAFETY: every head is inside a linked cycle (caller's contract).
            *q = unsafe { std::ptr::read_volatile(*q) } as *const usize;
        }
    }
    arg.heads[..K].copy_from_slice(&p);
    p.iter().fold(0, |x, q| x ^ *q as u64)
}

/// The kernel for `k` chains (1..=16).
pub fn chase_kernel(k: usize) -> Option<ChaseKernel> {
    Some(match k {
        1 => chase::<1>,
        2 => chase::<2>,
        3 => chase::<3>,
        4 => chase::<4>,
        5 => chase::<5>,
        6 => chase::<6>,
        7 => chase::<7>,
        8 => chase::<8>,
        9 => chase::<9>,
        10 => chase::<10>,
        11 => chase::<11>,
        12 => chase::<12>,
        13 => chase::<13>,
        14 => chase::<14>,
        15 => chase::<15>,
        16 => chase::<16>,
        _ => return None,
    })
}

/// A cycle over slots `0..n` built once and linked into many regions: its
/// visit order, and each slot's successor, so that linking writes the
/// slots in address order (a random-order link walks the page tables at
/// every write, which on 4 KiB pages of a guest costs more than the
/// measurement it prepares).
#[derive(Debug, Clone)]
pub struct Cycle {
    pub order: Vec<usize>,
    succ: Vec<usize>,
}

impl Cycle {
    /// The cycle visiting `order`, a permutation of `0..order.len()`
    /// (as [`visit_order`] gives); `None` where it is not one.
    pub fn of(order: Vec<usize>) -> Option<Cycle> {
        let n = order.len();
        let mut succ = vec![usize::MAX; n];
        for (i, &s) in order.iter().enumerate() {
            let slot = succ.get_mut(s).filter(|x| **x == usize::MAX)?;
            *slot = order[(i + 1) % n];
        }
        Some(Cycle { order, succ })
    }

    /// Links the cycle in `base`, slot by slot in slot order: slot `s`, at
    /// byte offset `offset(s)`, holds the address of its successor.
    ///
    /// # Safety
    /// As for [`link`].
    pub unsafe fn link(&self, base: *mut u8, offset: impl Fn(usize) -> usize) {
        for (s, &next) in self.succ.iter().enumerate() {
            // SAFETY: guaranteed by the caller.
            unsafe { (base.add(offset(s)) as *mut usize).write(base.add(offset(next)) as usize) };
        }
    }
}

/// A linked chase over a set of slots, with what validation needs.
pub struct Chase {
    base: *mut u8,
    order: Vec<usize>,
    /// Byte offset of each slot in visit order (`offsets[i]` = offset of order[i]).
    offsets: Vec<usize>,
    /// Position in `order` of each chain's head.
    positions: Vec<usize>,
    pub arg: ChaseArg,
}

impl Chase {
    /// Links `order` in `base` and places `chains` heads evenly along it.
    ///
    /// # Safety
    /// As for [`link`]; the memory must outlive the Chase.
    pub unsafe fn new(base: *mut u8, order: Vec<usize>, offset: impl Fn(usize) -> usize, chains: usize) -> Chase {
        // SAFETY: guaranteed by the caller.
        unsafe { link(base, &order, &offset) };
        let offsets: Vec<usize> = order.iter().map(|&s| offset(s)).collect();
        let mut c =
            Chase { base, order, offsets, positions: Vec::new(), arg: ChaseArg { heads: [std::ptr::null(); 16] } };
        c.set_chains(chains);
        c
    }

    /// Links `cycle` in `base` (in slot order) and places `chains` heads
    /// evenly along it.
    ///
    /// # Safety
    /// As for [`link`]; the memory must outlive the Chase.
    pub unsafe fn of_cycle(base: *mut u8, cycle: &Cycle, offset: impl Fn(usize) -> usize, chains: usize) -> Chase {
        // SAFETY: guaranteed by the caller.
        unsafe { cycle.link(base, &offset) };
        let order = cycle.order.clone();
        let offsets: Vec<usize> = order.iter().map(|&s| offset(s)).collect();
        let mut c =
            Chase { base, order, offsets, positions: Vec::new(), arg: ChaseArg { heads: [std::ptr::null(); 16] } };
        c.set_chains(chains);
        c
    }

    /// Places `chains` (1..=16) heads evenly along the cycle, starting where
    /// the first head is now, so that successive runs keep visiting new
    /// slots instead of replaying a segment that is now cached.
    pub fn set_chains(&mut self, chains: usize) {
        let n = self.order.len();
        let chains = chains.clamp(1, 16);
        let from = self.positions.first().copied().unwrap_or(0);
        self.positions = (0..chains).map(|c| (from + c * n / chains) % n).collect();
        for (h, &pos) in self.arg.heads.iter_mut().zip(&self.positions) {
            *h = self.base.wrapping_add(self.offsets[pos]) as *const usize;
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Runs `kernel` for `iters` steps per chain and checks that every chain
    /// ended where the order says it must.
    ///
    /// # Safety
    /// The memory behind the chase must still be live and unmodified.
    pub unsafe fn run(&mut self, kernel: ChaseKernel, iters: u64) -> bool {
        // SAFETY: heads are inside the linked cycle.
        let x = unsafe { kernel(iters, &mut self.arg) };
        let n = self.order.len();
        let mut expect = 0u64;
        for (c, pos) in self.positions.iter_mut().enumerate() {
            *pos = (*pos + (iters % n as u64) as usize) % n;
            let addr = self.base as usize + self.offsets[*pos];
            expect ^= addr as u64;
            if self.arg.heads[c] as usize != addr {
                return false;
            }
        }
        x == expect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_a_permutation_and_the_link_one_cycle() {
        for (n, window) in [(1usize, None), (1000, None), (4096, Some(64)), (1000, Some(7))] {
            let order = visit_order(n, window, 42);
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            let mut mem = vec![0usize; n * 8];
            let base = mem.as_mut_ptr() as *mut u8;
            // SAFETY: slot s is at s*64 bytes, inside n*64 bytes.
            unsafe { link(base, &order, |s| s * 64) };
            // SAFETY: linked above.
            let len = unsafe { cycle_length(base as *const usize, n + 1) };
            assert_eq!(len, Some(n), "one cycle through all {n} slots");
        }
    }

    /// A cycle linked slot by slot writes what the random-order link
    /// writes, and only a permutation is a cycle.
    #[test]
    fn a_cycle_links_the_same_pointers_in_slot_order() {
        for window in [None, Some(7)] {
            let order = visit_order(1000, window, 5);
            let (mut a, mut b) = (vec![0usize; 1000 * 8], vec![0usize; 1000 * 8]);
            let (pa, pb) = (a.as_mut_ptr() as *mut u8, b.as_mut_ptr() as *mut u8);
            // SAFETY: 1000 slots of 64 bytes fit each buffer.
            unsafe { link(pa, &order, |s| s * 64) };
            let cycle = Cycle::of(order).unwrap();
            // SAFETY: as above.
            unsafe { cycle.link(pb, |s| s * 64) };
            let rebased: Vec<usize> =
                b.iter().map(|&x| if x == 0 { 0 } else { x - pb as usize + pa as usize }).collect();
            assert_eq!(a, rebased);
        }
        assert!(Cycle::of(vec![0, 2]).is_none(), "a slot past the end");
        assert!(Cycle::of(vec![1, 1, 0]).is_none(), "a slot twice");
    }

    #[test]
    fn windowed_order_never_leaves_its_window() {
        let w = 64;
        let order = visit_order(64 * 50, Some(w), 7);
        for chunk in order.chunks(w) {
            let win = chunk[0] / w;
            assert!(chunk.iter().all(|s| s / w == win), "{chunk:?}");
        }
        // and it is not the identity inside windows
        assert_ne!(&order[..w], &(order[0] / w * w..order[0] / w * w + w).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn seed_makes_the_order_reproducible() {
        assert_eq!(visit_order(100, None, 9), visit_order(100, None, 9));
        assert_ne!(visit_order(100, None, 9), visit_order(100, None, 10));
    }

    #[test]
    fn chains_end_where_the_order_says() {
        let n = 1000;
        let mut mem = vec![0usize; n * 8];
        for k in [1, 3, 16] {
            // SAFETY: slots at s*64 inside mem.
            let mut c = unsafe { Chase::new(mem.as_mut_ptr() as *mut u8, visit_order(n, None, 1), |s| s * 64, k) };
            for iters in [1, 999, 1000, 2500] {
                // SAFETY: mem is live.
                assert!(unsafe { c.run(chase_kernel(k).unwrap(), iters) }, "k={k} iters={iters}");
            }
        }
        assert!(chase_kernel(17).is_none());
    }

    #[test]
    fn new_chains_start_where_the_first_head_stopped() {
        let n = 1000;
        let mut mem = vec![0usize; n * 8];
        // SAFETY: slots at s*64 inside mem.
        let mut c = unsafe { Chase::new(mem.as_mut_ptr() as *mut u8, visit_order(n, None, 3), |s| s * 64, 1) };
        // SAFETY: mem is live.
        assert!(unsafe { c.run(chase_kernel(1).unwrap(), 300) });
        let head = c.arg.heads[0];
        c.set_chains(4);
        assert_eq!(c.arg.heads[0], head);
        // SAFETY: mem is live.
        assert!(unsafe { c.run(chase_kernel(4).unwrap(), 10) });
    }
}
