//! `memperf prefetch-fault`: what a software prefetch of a bad address
//! costs, and whether a prefetch that misses the TLB walks the page table.
//!
//! Part 1: every prefetch instruction against a mapped line, NULL, an
//! unmapped hole, a PROT_NONE page, a kernel address and a non-canonical
//! address, each verified to be what it claims before the loop; ns per
//! prefetch in a throughput loop and in a latency-bound loop, user and
//! system time and page faults from getrusage. (UltraSPARC IV+'s "strong"
//! prefetch of address 0 trapped: 1.34 s of system time per 10^6.)
//! Part 2: many short linked lists whose walk prefetches the node k ahead,
//! which is NULL near each end: no prefetch, unguarded, guarded.
//! Part 3: a walk touching one line per 4 KiB, over far more memory than
//! the last-level cache, with a prefetch D pages
//! ahead, on 4 KiB pages (every prefetch misses the TLB) and on huge pages
//! (it hits): if prefetches were dropped on a TLB miss, the speed-up on
//! 4 KiB pages would vanish. Variants are interleaved and compared per round.

use super::{Context, Experiment};
use crate::error::{Error, Result};
use crate::kernels::Hint;
use crate::memory::{PagePolicy, Region};
pub use crate::model::outcome::prefetch_fault::*;
use crate::timing::Summary;
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub instructions: Vec<Hint>,
    pub targets: Vec<Target>,
    /// Prefetches per sample of part 1.
    pub prefetches: u64,
    pub repetitions: usize,
    pub list_lengths: Vec<usize>,
    /// Nodes per list-walk sample (spread over `list_region_bytes`).
    pub list_nodes: usize,
    pub list_region_bytes: Bytes,
    /// The walk prefetches the node this many ahead (2 = next->next).
    pub list_ahead: usize,
    pub stride_pages: usize,
    pub stride_ahead_pages: Vec<usize>,
    pub stride_hint: Hint,
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: super::Preset) -> Params {
        use super::Preset;
        let (prefetches, reps, nodes, region, pages) = match preset {
            Preset::Quick => (200_000, 3, 1 << 16, 64 * MIB, 1 << 16),
            Preset::Default => (1_000_000, 5, 1 << 18, 256 * MIB, 1 << 16),
            Preset::Full => (4_000_000, 7, 1 << 20, 1024 * MIB, 1 << 17),
        };
        Params {
            instructions: Hint::ALL.to_vec(),
            targets: Target::ALL.to_vec(),
            prefetches,
            repetitions: reps,
            list_lengths: vec![1, 2, 4, 8, 16, 32, 64],
            list_nodes: nodes,
            list_region_bytes: Bytes(region),
            list_ahead: 2,
            stride_pages: pages,
            stride_ahead_pages: vec![1, 4, 16],
            stride_hint: Hint::T0,
            seed: 0x7072_6566,
        }
    }
}

/// CPU time and faults of the calling thread.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub user_s: f64,
    pub system_s: f64,
    pub faults: u64,
}

impl Usage {
    pub fn now() -> Usage {
        // SAFETY: rusage is plain data; getrusage fills it.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a rusage.
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Usage { user_s: s(u.ru_utime), system_s: s(u.ru_stime), faults: (u.ru_minflt + u.ru_majflt) as u64 }
    }

    fn since(self, before: Usage) -> Usage {
        Usage {
            user_s: self.user_s - before.user_s,
            system_s: self.system_s - before.system_s,
            faults: self.faults - before.faults,
        }
    }

    fn add(&mut self, o: Usage) {
        self.user_s += o.user_s;
        self.system_s += o.system_s;
        self.faults += o.faults;
    }
}

pub struct PrefetchFault;

impl Experiment for PrefetchFault {
    const NAME: &'static str = "prefetch-fault";
    type Params = Params;
    type Outcome = Outcome;
    fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
        run(p, ctx)
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn run(_: &Params, _: &Context) -> Result<Outcome> {
    Err(Error::unsatisfiable("prefetch-fault is implemented for x86_64 only", "run it on an x86_64 machine"))
}

/// Bad (and one good) addresses, each checked before use.
pub struct Targets {
    mapped: Region,
    prot_none: *mut libc::c_void,
    pub checks: Vec<TargetCheck>,
    addrs: Vec<(Target, usize)>,
}

impl Drop for Targets {
    fn drop(&mut self) {
        // SAFETY: unmapping the page mapped in `Targets::new`.
        unsafe { libc::munmap(self.prot_none, 4096) };
    }
}

fn mincore_unmapped(addr: usize) -> bool {
    let mut v = [0u8; 1];
    // SAFETY: mincore only reads the page tables; v has room for one page.
    let r = unsafe { libc::mincore((addr & !4095) as *mut libc::c_void, 4096, v.as_mut_ptr()) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOMEM)
}

fn maps_perms(addr: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|l| {
        let (range, rest) = l.split_once(' ')?;
        let (a, b) = range.split_once('-')?;
        let (a, b) = (usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?);
        (a <= addr && addr < b).then(|| rest.split_whitespace().next().unwrap_or("").to_string())
    })
}

impl Targets {
    pub fn new() -> Result<Targets> {
        let mapped = Region::new(PagePolicy::Small, Bytes(4096))?;
        // A hole: map, then unmap, so nothing is there.
        // SAFETY: fresh anonymous mappings, checked; the hole is unmapped at once.
        let hole = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                2 << 20,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return Err(Error::unsatisfiable("cannot map a probe page", "check ulimit -v"));
            }
            libc::munmap(p, 2 << 20);
            p as usize + (1 << 20)
        };
        // SAFETY: a fresh anonymous PROT_NONE page, checked.
        let prot_none = unsafe {
            libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if prot_none == libc::MAP_FAILED {
            return Err(Error::unsatisfiable("cannot map a PROT_NONE page", "check ulimit -v"));
        }
        let addrs = vec![
            (Target::Mapped, mapped.as_ptr() as usize + 64),
            (Target::Null, 0),
            (Target::Unmapped, hole),
            (Target::ProtNone, prot_none as usize + 64),
            (Target::Kernel, 0xffff_ffff_8100_0000),
            (Target::NonCanonical, 0x0100_0000_0000_0000),
        ];
        let checks = addrs
            .iter()
            .map(|&(t, a)| {
                let (check, ok) = match t {
                    Target::Mapped => ("resident per mincore".to_string(), !mincore_unmapped(a)),
                    Target::Null | Target::Unmapped => {
                        ("mincore: ENOMEM (nothing mapped)".to_string(), mincore_unmapped(a))
                    }
                    Target::ProtNone => {
                        let p = maps_perms(a);
                        (
                            format!("/proc/self/maps: {}", p.clone().unwrap_or_else(|| "not found".into())),
                            p.as_deref() == Some("---p"),
                        )
                    }
                    Target::Kernel => ("in the kernel half (bit 63 set, canonical)".into(), a >> 56 == 0xff),
                    Target::NonCanonical => (
                        "bits 63..56 differ: non-canonical under 4- and 5-level paging".into(),
                        (a >> 56) != 0 && (a >> 56) != 0xff,
                    ),
                };
                TargetCheck { target: t, address: format!("{a:#x}"), check, ok }
            })
            .collect();
        Ok(Targets { mapped, prot_none, checks, addrs })
    }

    pub fn address(&self, t: Target) -> usize {
        self.addrs.iter().find(|a| a.0 == t).map(|a| a.1).unwrap_or(0)
    }

    /// A small cycle of pointers in the mapped page (for the latency loop).
    fn cycle(&mut self) -> *const usize {
        let s = self.mapped.as_mut_slice::<usize>();
        for i in 0..8 {
            s[i * 8] = &s[((i + 1) % 8) * 8] as *const usize as usize;
        }
        s.as_ptr()
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;
    use crate::kernels::prefetch::{self as k, Guard, Node, TargetArg};
    use crate::kernels::x86_64::*;
    use crate::timing::stats;

    pub type TargetKernel = unsafe fn(u64, &TargetArg) -> u64;
    pub type ListKernel = unsafe fn(&[*const Node]) -> u64;
    pub type StrideKernel = unsafe fn(*const u8, usize, &[u32], usize, usize) -> u64;

    /// (throughput, latency) kernels for an instruction, `None` = baseline.
    pub fn target_kernels(h: Option<Hint>) -> (TargetKernel, TargetKernel) {
        fn of<P: Prefetcher>() -> (TargetKernel, TargetKernel) {
            (k::target_throughput::<P>, k::target_latency::<P>)
        }
        match h {
            None => of::<NoPrefetch>(),
            Some(Hint::T0) => of::<PrefetchT0>(),
            Some(Hint::T1) => of::<PrefetchT1>(),
            Some(Hint::T2) => of::<PrefetchT2>(),
            Some(Hint::Nta) => of::<PrefetchNta>(),
            Some(Hint::W) => of::<PrefetchW>(),
        }
    }

    pub fn list_kernel(g: Guard) -> ListKernel {
        match g {
            Guard::None => k::walk_lists::<NoPrefetch, 0>,
            Guard::Unguarded => k::walk_lists::<PrefetchT0, 1>,
            Guard::Guarded => k::walk_lists::<PrefetchT0, 2>,
        }
    }

    pub fn stride_kernel(h: Option<Hint>) -> StrideKernel {
        match h {
            None => k::page_walk::<NoPrefetch>,
            Some(Hint::T0) => k::page_walk::<PrefetchT0>,
            Some(Hint::T1) => k::page_walk::<PrefetchT1>,
            Some(Hint::T2) => k::page_walk::<PrefetchT2>,
            Some(Hint::Nta) => k::page_walk::<PrefetchNta>,
            Some(Hint::W) => k::page_walk::<PrefetchW>,
        }
    }

    /// `count` lists of `length` nodes each, placed on random lines of
    /// `region`; node values 1..=count×length. Returns the heads.
    pub fn build_lists(region: &mut Region, length: usize, count: usize, ahead: usize, seed: u64) -> Vec<*const Node> {
        let nodes = region.len() / 64;
        let mut order: Vec<usize> = (0..nodes).collect();
        crate::kernels::chase::SplitMix64(seed).shuffle(&mut order);
        let base = region.as_mut_slice::<u8>().as_mut_ptr() as *mut Node;
        let mut heads = Vec::with_capacity(count);
        let mut value = 0u64;
        for l in 0..count {
            let idx = &order[l * length..(l + 1) * length];
            // SAFETY: every index < nodes, so each node lies in the region.
            let at = |i: usize| unsafe { base.add(idx[i]) };
            for i in 0..length {
                value += 1;
                let node = Node {
                    next: if i + 1 < length { at(i + 1) } else { std::ptr::null() },
                    ahead: if i + ahead < length { at(i + ahead) } else { std::ptr::null() },
                    value,
                };
                // SAFETY: at(i) is a line of the region, aligned for Node.
                unsafe { at(i).write(node) };
            }
            heads.push(at(0) as *const Node);
        }
        heads
    }

    fn time<R>(ctx: &Context, f: impl FnOnce() -> R) -> (R, f64, Usage) {
        let u0 = Usage::now();
        let t0 = ctx.clock.now_ns();
        let r = f();
        let dt = (ctx.clock.now_ns() - t0) as f64;
        (r, dt, Usage::now().since(u0))
    }

    pub fn part1(p: &Params, ctx: &Context, targets: &mut Targets) -> Result<Vec<PrefetchCell>> {
        let chase = targets.cycle();
        let mut variants: Vec<(Option<Hint>, Target, bool)> = Vec::new();
        for lat in [false, true] {
            variants.push((None, Target::Mapped, lat));
            for &h in &p.instructions {
                for &t in &p.targets {
                    variants.push((Some(h), t, lat));
                }
            }
        }
        let mut samples = vec![Vec::new(); variants.len()];
        let mut usage = vec![Usage::default(); variants.len()];
        for _ in 0..p.repetitions {
            for (i, &(h, t, lat)) in variants.iter().enumerate() {
                ctx.check_interrupt()?;
                let arg = TargetArg { target: targets.address(t), chase, zero: 0 };
                let (thr, latk) = target_kernels(h);
                let (iters, per) = if lat { (p.prefetches, 1.0) } else { (p.prefetches / 8, 8.0) };
                // SAFETY: prefetches never fault; the chase is a valid cycle.
                let (_, dt, u) = time(ctx, || unsafe {
                    if lat {
                        latk(iters, &arg)
                    } else {
                        thr(iters, &arg)
                    }
                });
                samples[i].push(dt / (iters as f64 * per));
                usage[i].add(u);
                ctx.progress.advance(1);
            }
        }
        let median_of = |h: Option<Hint>, t: Target, lat: bool| {
            variants.iter().position(|v| v.0 == h && v.1 == t && v.2 == lat).and_then(|i| stats::median(&samples[i]))
        };
        let baseline = |lat: bool| median_of(None, Target::Mapped, lat).unwrap_or(0.0);
        Ok(variants
            .iter()
            .enumerate()
            .map(|(i, &(h, t, lat))| {
                let s = Summary::of(&samples[i]).expect("measured");
                let n = p.prefetches * p.repetitions as u64;
                PrefetchCell {
                    instruction: h.map(|h| h.x86_instruction().to_string()).unwrap_or_else(|| "none".into()),
                    target: t,
                    loop_kind: if lat { "latency" } else { "throughput" }.into(),
                    cost_ns: s.median - baseline(lat),
                    extra_over_mapped_ns: s.median - median_of(h, Target::Mapped, lat).unwrap_or(s.median),
                    ns_per_prefetch: s,
                    samples_ns: samples[i].clone(),
                    user_s: usage[i].user_s,
                    system_s: usage[i].system_s,
                    system_ns_per_prefetch: usage[i].system_s * 1e9 / n as f64,
                    page_faults: usage[i].faults,
                    prefetches: n,
                }
            })
            .collect())
    }

    pub fn part2(p: &Params, ctx: &Context) -> Result<Vec<ListCell>> {
        let mut region = Region::new(PagePolicy::Small, p.list_region_bytes)?;
        let guards = [("none", Guard::None), ("unguarded", Guard::Unguarded), ("guarded", Guard::Guarded)];
        let mut out = Vec::new();
        let nodes = p.list_nodes.min(region.len() / 64);
        for &len in &p.list_lengths {
            ctx.check_interrupt()?;
            let count = nodes / len;
            let heads = build_lists(&mut region, len, count, p.list_ahead, p.seed);
            let total = (count * len) as u64;
            let expect = total * (total + 1) / 2;
            let mut cells: Vec<(Vec<f64>, Usage, bool)> = vec![(Vec::new(), Usage::default(), true); 3];
            for _ in 0..p.repetitions {
                for (g, cell) in guards.iter().zip(cells.iter_mut()) {
                    let kernel = list_kernel(g.1);
                    // SAFETY: the heads start null-terminated lists built above.
                    let (sum, dt, u) = time(ctx, || unsafe { kernel(&heads) });
                    cell.0.push(dt / total as f64);
                    cell.1.add(u);
                    cell.2 &= sum == expect;
                }
            }
            let nulls = (count * len.min(p.list_ahead)) as u64 * p.repetitions as u64;
            for (g, (s, u, ok)) in guards.iter().zip(cells) {
                out.push(ListCell {
                    length: len,
                    variant: g.0.into(),
                    ns_per_node: Summary::of(&s).expect("measured"),
                    samples_ns_per_node: s,
                    null_prefetches: if g.1 == Guard::Unguarded { nulls } else { 0 },
                    user_s: u.user_s,
                    system_s: u.system_s,
                    checksum_ok: ok,
                });
            }
            ctx.progress.advance(1);
        }
        Ok(out)
    }

    /// Part 3. Pages in random order, loads dependent on each other, the
    /// region far larger than the last-level cache, and each sample touching
    /// a line of each page that no earlier sample touched (the line offset
    /// rotates): every access waits for memory unless the prefetch helped.
    pub fn part3(p: &Params, ctx: &Context) -> Result<(Vec<StrideResult>, bool)> {
        const STRIDE: usize = 4096;
        let bytes = Bytes((p.stride_pages * STRIDE) as u64);
        let mut out = Vec::new();
        let mut ok = true;
        let mut regions = Vec::new();
        for pol in [PagePolicy::Small, PagePolicy::Thp] {
            let mut r = Region::new(pol, bytes)?;
            for (i, w) in r.as_mut_slice::<u64>().iter_mut().enumerate() {
                *w = (i / 8) as u64; // every line holds its index
            }
            regions.push((pol, r));
        }
        let mut aheads = vec![0usize];
        aheads.extend(&p.stride_ahead_pages);
        let mut order: Vec<u32> = (0..p.stride_pages as u32).collect();
        crate::kernels::chase::SplitMix64(p.seed).shuffle(&mut order);
        let mut times = vec![vec![Vec::new(); aheads.len()]; regions.len()];
        let mut sample = 0usize;
        for _ in 0..p.repetitions {
            for (ri, (_, r)) in regions.iter().enumerate() {
                for (ai, &d) in aheads.iter().enumerate() {
                    ctx.check_interrupt()?;
                    let line = (sample * 7) % 64; // 7 is coprime with 64: all 64 lines in turn
                    sample += 1;
                    let kernel = stride_kernel(if d == 0 { None } else { Some(p.stride_hint) });
                    let count = order.len();
                    // SAFETY: every page index < stride_pages; line × 64 + 8 <= 4096.
                    let (sum, dt, _) = time(ctx, || unsafe { kernel(r.as_ptr(), STRIDE, &order, line * 64, d) });
                    let n = count as u64;
                    ok &= sum == 64 * n * (n - 1) / 2 + n * line as u64;
                    times[ri][ai].push(dt / count as f64);
                }
            }
        }
        for (ri, (pol, r)) in regions.iter().enumerate() {
            for (ai, &d) in aheads.iter().enumerate().skip(1) {
                let ratios: Vec<f64> = times[ri][0].iter().zip(&times[ri][ai]).map(|(a, b)| a / b).collect();
                let s = Summary::of(&ratios).expect("measured");
                out.push(StrideResult {
                    pages: *pol,
                    huge_fraction: r.backing().huge_fraction,
                    ahead_pages: d,
                    speedup_median: s.median,
                    speedup_min: s.min,
                    speedup_max: s.max,
                    ns_per_access_without: stats::median(&times[ri][0]).unwrap_or(f64::NAN),
                    ns_per_access_with: stats::median(&times[ri][ai]).unwrap_or(f64::NAN),
                });
            }
        }
        ctx.progress.advance(1);
        Ok((out, ok))
    }
}

/// The verdict for one instruction over the bad targets of part 1.
pub fn verdicts(cells: &[PrefetchCell]) -> Vec<Verdict> {
    let mut names: Vec<&str> = cells.iter().map(|c| c.instruction.as_str()).filter(|n| *n != "none").collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let bad: Vec<&PrefetchCell> =
                cells.iter().filter(|c| c.instruction == name && c.target != Target::Mapped).collect();
            let traps = bad.iter().find(|c| c.page_faults > 0 || c.system_ns_per_prefetch > 100.0);
            let worst = bad.iter().max_by(|a, b| a.extra_over_mapped_ns.total_cmp(&b.extra_over_mapped_ns));
            let worst_cost = worst.map(|c| c.extra_over_mapped_ns).unwrap_or(0.0);
            let verdict = if let Some(t) = traps {
                format!(
                    "traps to the kernel ({:?}: {:.0} ns of system time per prefetch)",
                    t.target, t.system_ns_per_prefetch
                )
            } else if worst_cost < 0.2 {
                "costs nothing".to_string()
            } else {
                format!("costs {worst_cost:.1} ns more than a prefetch of a mapped line")
            };
            Verdict {
                instruction: name.to_string(),
                verdict,
                worst_target: worst.map(|c| c.target),
                worst_cost_ns: worst_cost,
            }
        })
        .collect()
}

/// Does a prefetch that misses the TLB walk the page table?
pub fn tlb_miss_verdict(stride: &[StrideResult]) -> String {
    let best = |pol: PagePolicy| {
        stride.iter().filter(|s| s.pages == pol).max_by(|a, b| a.speedup_median.total_cmp(&b.speedup_median))
    };
    let (Some(small), Some(huge)) = (best(PagePolicy::Small), best(PagePolicy::Thp)) else {
        return "not measured".into();
    };
    let helps = |s: &StrideResult| s.speedup_min > 1.0 && s.speedup_median >= 1.05;
    match (helps(small), helps(huge)) {
        (true, _) => format!(
            "prefetches that miss the TLB walk the page table: prefetching {} pages ahead speeds up 4 KiB pages ×{:.2} (huge pages ×{:.2})",
            small.ahead_pages, small.speedup_median, huge.speedup_median
        ),
        (false, true) => format!(
            "prefetches that miss the TLB are dropped: ×{:.2} on 4 KiB pages against ×{:.2} on huge pages",
            small.speedup_median, huge.speedup_median
        ),
        (false, false) => format!(
            "inconclusive: prefetch brings no clear speed-up on either page size (×{:.2} on 4 KiB, ×{:.2} on huge pages)",
            small.speedup_median, huge.speedup_median
        ),
    }
}

#[cfg(target_arch = "x86_64")]
fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
    if p.instructions.is_empty() || p.targets.is_empty() || p.repetitions == 0 || p.list_lengths.contains(&0) {
        return Err(Error::usage(
            "prefetch-fault needs instructions, targets, repetitions and list lengths above zero",
        ));
    }
    let _pin = crate::timing::team::PinGuard::first_cpu();
    let mut targets = Targets::new()?;
    if let Some(bad) = targets.checks.iter().find(|c| !c.ok) {
        return Err(Error::validation(format!(
            "target {:?} at {} is not what it claims: {}",
            bad.target, bad.address, bad.check
        )));
    }
    let n1 = 2 * p.repetitions * (1 + p.instructions.len() * p.targets.len());
    ctx.progress.start("prefetch-fault", (n1 + p.list_lengths.len() + 1) as u64);
    let cells = x86::part1(p, ctx, &mut targets)?;
    let lists = x86::part2(p, ctx)?;
    let (stride, stride_ok) = x86::part3(p, ctx)?;
    Ok(Outcome {
        targets: targets.checks.clone(),
        verdicts: verdicts(&cells),
        tlb_miss_verdict: tlb_miss_verdict(&stride),
        valid: stride_ok && lists.iter().all(|l| l.checksum_ok),
        cells,
        lists,
        stride,
    })
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn targets_are_what_they_claim() {
        let t = Targets::new().unwrap();
        for c in &t.checks {
            assert!(c.ok, "{c:?}");
        }
    }

    #[test]
    fn lists_have_the_lengths_asked_for_and_end_in_null() {
        let mut r = Region::new(PagePolicy::Small, Bytes(1 << 20)).unwrap();
        for len in [1, 3, 64] {
            let heads = x86::build_lists(&mut r, len, 100, 2, 5);
            assert_eq!(heads.len(), 100);
            let mut values = Vec::new();
            for &h in &heads {
                let (mut p, mut n) = (h, 0);
                while !p.is_null() {
                    // SAFETY: nodes built above in the live region.
                    let node = unsafe { &*p };
                    // `ahead` is the node two further, or null near the end.
                    let two = if node.next.is_null() { std::ptr::null() } else { unsafe { (*node.next).next } };
                    assert_eq!(node.ahead, two);
                    values.push(node.value);
                    p = node.next;
                    n += 1;
                }
                assert_eq!(n, len);
            }
            values.sort();
            assert_eq!(values, (1..=100 * len as u64).collect::<Vec<_>>());
        }
    }

    #[test]
    fn every_prefetch_of_every_target_survives() {
        // Runs each kernel once per target: reaching the end without a
        // signal is the assertion.
        let mut t = Targets::new().unwrap();
        let chase = t.cycle();
        for h in Hint::ALL {
            for target in Target::ALL {
                let arg = crate::kernels::prefetch::TargetArg { target: t.address(target), chase, zero: 0 };
                let (thr, lat) = x86::target_kernels(Some(h));
                // SAFETY: prefetches never fault; the chase is a valid cycle.
                unsafe {
                    thr(100, &arg);
                    lat(100, &arg);
                }
            }
        }
    }

    #[test]
    fn verdict_rules() {
        let cell = |target, cost, faults, sys| PrefetchCell {
            instruction: "prefetcht0".into(),
            target,
            loop_kind: "throughput".into(),
            samples_ns: vec![],
            ns_per_prefetch: Summary::of(&[1.0]).unwrap(),
            cost_ns: cost,
            extra_over_mapped_ns: cost,
            user_s: 0.0,
            system_s: 0.0,
            system_ns_per_prefetch: sys,
            page_faults: faults,
            prefetches: 1,
        };
        assert_eq!(
            verdicts(&[cell(Target::Mapped, 5.0, 0, 0.0), cell(Target::Null, 0.1, 0, 0.0)])[0].verdict,
            "costs nothing"
        );
        assert!(verdicts(&[cell(Target::Null, 12.34, 0, 0.0)])[0].verdict.starts_with("costs 12.3 ns"));
        assert!(verdicts(&[cell(Target::Null, 900.0, 10, 1000.0)])[0].verdict.starts_with("traps to the kernel"));
    }
}
