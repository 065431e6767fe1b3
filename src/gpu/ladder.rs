//! The GPU's latency: one thread's dependent chase along a chain of slots
//! in a random cyclic order, timed by the SM's clock (`clock64`) and
//! cross-checked by the driver's events.
//!
//! The chain is built on the device (`memperf_chain`) in the order
//! [`slot`] replays here, so every chase's end is checked on the host.
//! The ladder has a slot per 128-byte line; the TLB chase a slot per
//! driver page (through the L2 only, so each load hits the L2 and only
//! the page walk differs); the L2 spread has every SM chase one chain
//! inside the L2 at once. What the curves say: `analysis::gpu_latency`.

use super::{Arg, CopyOp, DevicePtr, Driver, GpuError, Kernel};
use crate::rng::SplitMix64;
use crate::timing::Summary;
use memperf_model::outcome::gpu::{ChasePoint, L2Spread};

/// Bytes between the ladder's slots: the L1's and the L2's line.
pub const LINE: u64 = 128;
/// The ladder's smallest chain.
pub const LADDER_MIN: u64 = 4 << 10;
/// Timed loads of the shorter of a sample's two launches (the longer has
/// twice as many), and the most loads that warm a chain first.
pub const STEPS: u64 = 4096;
pub const WARM_MAX: u64 = 4096;
/// The spread's single loads timed alone on each SM.
pub const SPREAD_EACH: u64 = 32;

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The ladder's chains, bytes (a slot per [`LINE`]).
    pub ladder: Vec<u64>,
    /// The driver's page, and the TLB chase's page counts.
    pub page_bytes: u64,
    pub tlb_pages: Vec<u64>,
    /// Samples of each chain, the chains taking turns.
    pub rounds: usize,
    pub seed: u64,
}

/// Doublings from `from` to `to` (both included where `to` is one), each
/// with a point half way (×1.5) before the next.
pub fn doublings(from: u64, to: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut x = from.max(1);
    while x <= to {
        out.push(x);
        if x + x / 2 <= to && x >= 2 {
            out.push(x + x / 2);
        }
        x *= 2;
    }
    out
}

/// kernels.cu's `memperf_mix`: a bijection of [0, 2^bits).
pub fn mix(mut x: u64, bits: u32, key: u64) -> u64 {
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let shift = bits.div_ceil(2);
    for _ in 0..3 {
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(key) & mask;
        if shift > 0 {
            x ^= x >> shift;
        }
    }
    x
}

/// kernels.cu's `memperf_slot`: the slot at position `p` of the cycle, a
/// bijection of [0, slots) by cycle-walking [`mix`].
pub fn slot(p: u64, slots: u64, key: u64) -> u64 {
    let bits = 64 - slots.saturating_sub(1).leading_zeros();
    let mut x = mix(p, bits, key);
    while x >= slots {
        x = mix(x, bits, key);
    }
    x
}

/// A chain: its slots, their stride in words, and its order's key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chain {
    slots: u64,
    stride_words: u64,
    key: u64,
}

impl Chain {
    pub fn new(slots: u64, stride_words: u64, key: u64) -> Chain {
        Chain { slots: slots.max(1), stride_words: stride_words.max(1), key }
    }
    /// The word at position `loads` of the cycle: where a chase from its
    /// first slot is after that many loads.
    pub fn after(&self, loads: u64) -> u64 {
        slot(loads % self.slots, self.slots, self.key) * self.stride_words
    }
    pub fn bytes(&self) -> u64 {
        self.slots * self.stride_words * 8
    }
    /// Builds the chain on the device at `at`, which holds its bytes.
    pub fn build(&self, d: &dyn Driver, at: DevicePtr, sms: u32) -> Result<(), GpuError> {
        let args = [Arg::Ptr(at), Arg::U64(self.slots), Arg::U64(self.stride_words), Arg::U64(self.key)];
        let grid = self.slots.div_ceil(256).clamp(1, 8 * sms.max(1) as u64) as u32;
        // SAFETY: the chain's slots × stride words lie inside the
        // allocation at `at` (the caller's promise).
        unsafe { d.launch(Kernel::Chain, grid, 256, &args) }
    }
}

/// Device memory for the chains, a reduction's partial sums to touch a
/// chain into the L2, and what the chases write, read back through pinned
/// memory.
struct Buffers<'a> {
    d: &'a dyn Driver,
    chain: DevicePtr,
    partial: DevicePtr,
    out: DevicePtr,
    out_words: usize,
    host: *mut u8,
    sms: u32,
}

impl<'a> Buffers<'a> {
    fn new(d: &'a dyn Driver, chain_bytes: u64, sms: u32) -> Result<Buffers<'a>, GpuError> {
        let out_words = (sms as usize * (3 + SPREAD_EACH as usize)).max(4);
        // Each is freed by Drop, the ones made before a failure included.
        let mut b = Buffers { d, chain: 0, partial: 0, out: 0, out_words, host: std::ptr::null_mut(), sms };
        b.chain = d.alloc(chain_bytes as usize)?;
        b.partial = d.alloc(touch_grid(sms) as usize * 8)?;
        b.out = d.alloc(out_words * 8)?;
        b.host = d.alloc_pinned(out_words * 8)?;
        Ok(b)
    }

    /// Builds `c` on the device (`plan_bytes` sized the allocation for
    /// the largest chain).
    fn build(&self, c: &Chain) -> Result<(), GpuError> {
        c.build(self.d, self.chain, self.sms)
    }

    /// Reads `c`'s bytes from every SM: what fits the L2 is in it.
    fn touch(&self, c: &Chain) -> Result<(), GpuError> {
        let args = [Arg::Ptr(self.chain), Arg::Ptr(self.partial), Arg::U64(c.bytes() / 8)];
        // SAFETY: the chain's bytes lie inside the allocation, and the
        // partial sums hold one a block of the grid.
        unsafe { self.d.launch(Kernel::Read, touch_grid(self.sms), 256, &args) }
    }

    /// The first `len` words of the output, once the stream has passed.
    fn read_out(&self, len: usize) -> Result<Vec<u64>, GpuError> {
        let op = CopyOp::DeviceToHost { dst: self.host, src: self.out, bytes: len.min(self.out_words) * 8 };
        // SAFETY: the pinned buffer holds `out_words` words and outlives
        // the synchronize.
        unsafe { self.d.copy(op)? };
        self.d.synchronize()?;
        // SAFETY: the words the copy just wrote.
        let bytes = unsafe { std::slice::from_raw_parts(self.host as *const u8, len.min(self.out_words) * 8) };
        Ok(bytes.chunks_exact(8).map(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes"))).collect())
    }

    /// One launch of the chase from position `from` of the cycle, `warm`
    /// and `steps` loads, writing at word `at` of the output; its time by
    /// the events, milliseconds.
    fn chase(&self, c: &Chain, from: u64, warm: u64, steps: u64, l2_only: bool, at: u64) -> Result<f64, GpuError> {
        let args = [
            Arg::Ptr(self.chain),
            Arg::U64(c.after(from)),
            Arg::U64(warm),
            Arg::U64(steps),
            Arg::U64(l2_only as u64),
            Arg::Ptr(self.out + at * 8),
        ];
        let from = self.d.record()?;
        // SAFETY: the chain lies in the allocation and its words index
        // inside it; the output has room for two words at `at` (< 4).
        let to = match unsafe { self.d.launch(Kernel::Chase, 1, 1, &args) }.and_then(|_| self.d.record()) {
            Ok(to) => to,
            Err(e) => {
                self.d.discard(from);
                return Err(e);
            }
        };
        self.d.elapsed_ms(from, to)
    }
}

impl Drop for Buffers<'_> {
    fn drop(&mut self) {
        let _ = self.d.synchronize();
        for p in [self.chain, self.partial, self.out].into_iter().filter(|&p| p != 0) {
            self.d.free(p);
        }
        if !self.host.is_null() {
            self.d.free_pinned(self.host);
        }
    }
}

/// Blocks of the read that touches a chain into the L2.
fn touch_grid(sms: u32) -> u32 {
    4 * sms.max(1)
}

/// One sample of chain `c`: (cycles per load by the clock, ns per load by
/// the events, both chases ended where the host says). The second launch
/// goes on from where the first ended, so neither re-reads a line the
/// other brought in: a chain too large for the caches misses in both.
fn sample(b: &Buffers, c: &Chain, l2_only: bool, touch: bool) -> Result<(f64, f64, bool), GpuError> {
    let warm = c.slots.min(WARM_MAX);
    let mut ms = [0.0; 2];
    let mut from = 0;
    for (i, steps) in [STEPS, 2 * STEPS].into_iter().enumerate() {
        if touch {
            b.touch(c)?;
        }
        ms[i] = b.chase(c, from, warm, steps, l2_only, 2 * i as u64)?;
        from += warm + steps;
    }
    let out = b.read_out(4)?;
    let ended = out[0] == c.after(warm + STEPS) && out[2] == c.after(from);
    let cycles = out[3] as f64 / (2 * STEPS) as f64;
    Ok((cycles, (ms[1] - ms[0]) * 1e6 / STEPS as f64, ended))
}

/// Every chain of `chains`, `rounds` samples each, the chains taking
/// turns in an order shuffled anew each round.
fn chase_all(
    b: &Buffers,
    chains: &[Chain],
    l2_only: bool,
    touch_below: u64,
    rounds: usize,
    rng: &mut SplitMix64,
) -> Result<Vec<ChasePoint>, GpuError> {
    let mut samples = vec![Vec::new(); chains.len()];
    let mut ns = vec![Vec::new(); chains.len()];
    let mut valid = vec![true; chains.len()];
    super::in_turns(rng, chains.len(), rounds, false, |at, _| {
        let c = &chains[at];
        b.build(c)?;
        let (cycles, n, ended) = sample(b, c, l2_only, c.bytes() <= touch_below)?;
        samples[at].push(cycles);
        ns[at].push(n);
        valid[at] &= ended;
        Ok(())
    })?;
    Ok(chains
        .iter()
        .zip(samples)
        .zip(ns.iter().zip(valid))
        .map(|((c, s), (n, valid))| ChasePoint {
            bytes: c.bytes(),
            slots: c.slots,
            stride: c.stride_words * 8,
            cycles: Summary::of(&s).expect("a round at least"),
            samples_cycles: s,
            ns: crate::timing::stats::median(n).filter(|x| *x > 0.0),
            valid,
        })
        .collect())
}

/// The bytes the largest chain of `plan` needs.
fn plan_bytes(plan: &Plan) -> u64 {
    let ladder = plan.ladder.iter().copied().max().unwrap_or(0);
    let tlb = plan.tlb_pages.iter().copied().max().unwrap_or(0) * (plan.page_bytes + LINE);
    ladder.max(tlb).max(SPREAD_MAX)
}

/// The spread's chain: at most this, and an eighth of the L2.
pub const SPREAD_MAX: u64 = 4 << 20;

/// What the chases measured on one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub ladder: Vec<ChasePoint>,
    pub tlb: Vec<ChasePoint>,
    /// Every SM's chase (the partitions left to the analysis) …
    pub l2_spread: L2Spread,
    /// … and the single loads each timed alone, all SMs together.
    pub single_loads: Vec<f64>,
}

/// The ladder, the TLB chase and the L2's spread on the current device,
/// its kernels loaded by the caller.
pub fn measure(d: &dyn Driver, sms: u32, l2_bytes: u64, plan: &Plan) -> Result<Measured, GpuError> {
    let b = Buffers::new(d, plan_bytes(plan), sms)?;
    let mut rng = SplitMix64(plan.seed);
    let key = |rng: &mut SplitMix64| rng.next_u64();
    let ladder: Vec<Chain> =
        plan.ladder.iter().map(|&bytes| Chain::new(bytes / LINE, LINE / 8, key(&mut rng))).collect();
    let stride_words = (plan.page_bytes + LINE) / 8;
    let tlb: Vec<Chain> = plan.tlb_pages.iter().map(|&pages| Chain::new(pages, stride_words, key(&mut rng))).collect();
    let ladder = chase_all(&b, &ladder, false, 2 * l2_bytes, plan.rounds, &mut rng)?;
    let tlb = chase_all(&b, &tlb, true, u64::MAX, plan.rounds, &mut rng)?;
    let spread_bytes = SPREAD_MAX.min(l2_bytes / 8).max(LINE);
    let chain = Chain::new(spread_bytes / LINE, LINE / 8, key(&mut rng));
    let (l2_spread, single_loads) = spread(&b, &chain)?;
    Ok(Measured { ladder, tlb, l2_spread, single_loads })
}

/// Threads of a spread block: only the first chases; a full block keeps
/// the scheduler from putting two chasers on one SM.
const SPREAD_THREADS: u32 = 1024;

/// Every SM chases `c` through the L2 at once, each from its own place in
/// the cycle: each SM's cycles a load, and the single loads timed alone.
fn spread(b: &Buffers, c: &Chain) -> Result<(L2Spread, Vec<f64>), GpuError> {
    b.build(c)?;
    b.touch(c)?;
    let steps = c.slots.min(WARM_MAX);
    let grid = b.sms.max(1);
    let spacing = (c.slots / grid as u64).max(1);
    let args = [
        Arg::Ptr(b.chain),
        Arg::U64(c.slots),
        Arg::U64(c.stride_words),
        Arg::U64(c.key),
        Arg::U64(spacing),
        Arg::U64(steps),
        Arg::U64(SPREAD_EACH),
        Arg::Ptr(b.out),
    ];
    // SAFETY: the chain lies in the allocation; the output holds
    // 3 + SPREAD_EACH words for each of the `sms` blocks.
    unsafe { b.d.launch(Kernel::Spread, grid, SPREAD_THREADS, &args)? };
    let words = 3 + SPREAD_EACH as usize;
    let out = b.read_out(grid as usize * words)?;
    let each = SPREAD_EACH.min(steps);
    let mut valid = true;
    let mut by_sm: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
    let mut single = Vec::new();
    for (i, block) in out.chunks_exact(words).enumerate() {
        valid &= block[1] == c.after(i as u64 * spacing + 2 * steps + each);
        by_sm.entry(block[0] as u32).or_default().push(block[2] as f64 / steps as f64);
        single.extend(block[3..3 + each as usize].iter().map(|&x| x as f64));
    }
    let sm_cycles: Vec<(u32, f64)> =
        by_sm.into_iter().map(|(sm, v)| (sm, v.iter().sum::<f64>() / v.len() as f64)).collect();
    let per_sm: Vec<f64> = sm_cycles.iter().map(|x| x.1).collect();
    let spread = L2Spread {
        bytes: c.bytes(),
        cycles: Summary::of(&per_sm).expect("one SM at least"),
        sm_cycles,
        near_cycles: None,
        far_cycles: None,
        valid,
    };
    Ok((spread, single))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's order is a cycle through every slot, for sizes that are
    /// and are not powers of two.
    #[test]
    fn a_chain_visits_every_slot_once() {
        for slots in [1u64, 2, 3, 32, 48, 1000, 4096] {
            let mut seen = vec![false; slots as usize];
            for p in 0..slots {
                let s = slot(p, slots, 0xfeed) as usize;
                assert!(!seen[s], "slot {s} twice in {slots}");
                seen[s] = true;
            }
        }
        // Not the identity: neighbours in the cycle are not neighbours in memory.
        let near = (0..4095).filter(|&p| slot(p + 1, 4096, 7).abs_diff(slot(p, 4096, 7)) == 1).count();
        assert!(near < 16, "{near}");
    }

    /// On a fake of 4 SMs with a 256 KiB L2, a 32 KiB L1 and 64 KiB pages
    /// eight of which its TLB reaches: the ladder's levels are the L1, the
    /// L2 and memory at the fake's cycles (memory's past the TLB too), the
    /// TLB chase steps past 8 pages, every SM is timed, the partitions are
    /// found, every chase ends on its cycle, and the buffers are given back.
    #[test]
    fn a_fakes_levels_tlb_and_partitions_are_found() {
        let gpu = crate::gpu::fake::FakeGpu::small(4, 256 << 10);
        gpu.use_device(0).unwrap();
        gpu.load_kernels(9, 0).unwrap();
        let plan = Plan {
            ladder: doublings(LADDER_MIN, 1 << 20),
            page_bytes: 64 << 10,
            tlb_pages: doublings(1, 16),
            rounds: 4,
            seed: 5,
        };
        let m = measure(&gpu, 4, 256 << 10, &plan).unwrap();
        assert!(m.ladder.iter().chain(&m.tlb).all(|p| p.valid), "{m:?}");
        assert_eq!(gpu.live_allocations(), 0);
        let l = crate::analysis::gpu_latency::analyse(0, m, 64 << 10, 256 << 10);
        let got: Vec<(&str, u64, u64, f64)> =
            l.levels.iter().map(|v| (v.name.as_str(), v.from_bytes, v.to_bytes, v.cycles)).collect();
        assert_eq!(
            got,
            [
                ("L1", 4 << 10, 32 << 10, 34.0),
                ("L2", 48 << 10, 256 << 10, 265.0),
                ("memory", 384 << 10, 1 << 20, 770.0)
            ]
        );
        assert!((l.clock_ghz.unwrap() - 1.98).abs() < 1e-9, "{:?}", l.clock_ghz);
        let steps: Vec<(u64, u64, f64, f64)> =
            l.tlb_steps.iter().map(|s| (s.pages, s.reach_bytes, s.cycles_before, s.cycles_after)).collect();
        assert_eq!(steps, [(8, 512 << 10, 265.0, 385.0)]);
        let s = l.l2_spread.unwrap();
        assert!(s.valid && s.sm_cycles.len() == 4, "{s:?}");
        assert!(s.cycles.min >= 200.0 && s.cycles.max <= 333.0, "{s:?}");
        assert!(s.near_cycles.is_some_and(|n| (200.0..=203.0).contains(&n)), "{s:?}");
        assert!(s.far_cycles.is_some_and(|f| (330.0..=333.0).contains(&f)), "{s:?}");
    }

    #[test]
    fn doublings_have_a_point_half_way() {
        assert_eq!(doublings(4, 32), [4, 6, 8, 12, 16, 24, 32]);
        assert_eq!(doublings(1, 4), [1, 2, 3, 4]);
    }
}
