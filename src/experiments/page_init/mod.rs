//! `memperf page-init`: initialising page descriptors at the speed of
//! memory (after Solaris 10's `add_physmem`: 1.785 µs → 0.388 µs per page,
//! 4.6×, with no locking, large-page coalescing and software prefetch four
//! descriptors ahead; Linux later initialised in parallel). A boot-like
//! layout, one 128-byte descriptor per base page; the variants run
//! interleaved beside the store kernels that set the limit (descriptor bytes
//! over the best store bandwidth), and one above it says so, loudly. Every
//! variant must produce the same lists. The method, step by step:
//! docs/methods/page-init.md.

pub mod options;

pub use options::Options;
mod summary;

use crate::error::{Error, Result};
use crate::experiments::{Bench, Experiment};
use crate::kernels::page_init::{add_physmem, validate, FreeLists, Mode, PageDesc, Segment};
use crate::kernels::{stream_kernel, StreamArg, StreamKernel, StreamShape};
use crate::memory::{PagePolicy, Buffer};
use crate::model::outcome::page_init::StoreKernel as StoreKernelResult;
pub use crate::model::outcome::page_init::*;
use crate::model::Caution;
use crate::timing::schedule::{self, StepReport, Ratio, Step};
use crate::timing::{Summary, Team};
use crate::units::{Bytes, Sweep, GIB, KIB, MIB, TIB};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub memory_bytes: Bytes,
    pub base_page_bytes: Bytes,
    pub large_page_bytes: Bytes,
    /// (base, size) ranges in bytes; empty: generated from `memory_bytes`.
    pub layout: Vec<(Bytes, Bytes)>,
    /// Prefetch distances (descriptors ahead) for the `prefetch` variant.
    pub ahead: Sweep,
    pub threads: usize,
    pub repetitions: usize,
}

impl Params {
    pub fn preset(preset: super::Preset) -> Params {
        use super::Preset;
        // Ten repetitions: the fewest whose comparison against the locked
        // reference has a 99% interval.
        let (mem, reps) = match preset {
            Preset::Quick => (GIB, 10),
            Preset::Default => (16 * GIB, 10),
            Preset::Full => (64 * GIB, 12),
        };
        Params {
            memory_bytes: Bytes(mem),
            base_page_bytes: Bytes(4 * KIB),
            large_page_bytes: Bytes(2 * MIB),
            layout: Vec::new(),
            ahead: Sweep { start: 8, end: 24, step: 8 },
            threads: crate::timing::team::allowed_cpus().len().max(1),
            repetitions: reps,
        }
    }
}

/// Descriptors ahead for the prefetch variant (and the parallel one). The
/// 2005 code used 4: an 8-deep prefetch queue and two lines per descriptor.
/// Current x86 cores have 16 or more line-fill buffers and a far longer
/// memory latency in cycles; on the machine of docs/validation.md the sweep
/// peaks at 16.
pub const DEFAULT_AHEAD: u64 = 16;

/// A boot-like layout of about `memory` bytes: low memory below 640 KiB, a
/// range with a misaligned start below 3 GiB, and the rest above 4 GiB
/// with a misaligned end.
pub fn generated_layout(memory: Bytes) -> Vec<(Bytes, Bytes)> {
    let m = memory.0;
    let low = (Bytes(64 * KIB), Bytes(576 * KIB));
    let mid_base = MIB + 12 * KIB;
    let mid = (3 * GIB - mid_base).min(m.saturating_sub(low.1 .0));
    let mut out = vec![low, (Bytes(mid_base), Bytes(mid))];
    let rest = m.saturating_sub(low.1 .0 + mid);
    if rest > 16 * KIB {
        out.push((Bytes(4 * GIB), Bytes(rest - 8 * KIB)));
    }
    out
}

/// Parses `BASE:SIZE,BASE:SIZE,…` with IEC sizes.
pub fn parse_layout(text: &str) -> Result<Vec<(Bytes, Bytes)>> {
    crate::units::parse_list(text, parse_range)
}

/// Parses one `BASE:SIZE` range of a layout.
pub fn parse_range(item: &str) -> Result<(Bytes, Bytes)> {
    let (b, s) = item
        .split_once(':')
        .ok_or_else(|| Error::usage(format!("malformed --layout range '{item}': use BASE:SIZE, e.g. 4GiB:60GiB")))?;
    Ok((crate::units::parse_size(b)?, crate::units::parse_nonzero_size(s)?))
}

/// The segments of a layout, in base pages, with their descriptor offsets.
pub fn segments(layout: &[(Bytes, Bytes)], base_page: Bytes) -> Result<Vec<Segment>> {
    let mut sorted = layout.to_vec();
    sorted.sort();
    let mut out = Vec::new();
    let mut first = 0;
    let mut prev_end = 0;
    for (b, s) in sorted {
        if b.0 < prev_end {
            return Err(Error::usage(format!("--layout ranges overlap at {b}")));
        }
        prev_end = b.0 + s.0;
        let start = b.0.div_ceil(base_page.0);
        let end = (b.0 + s.0) / base_page.0;
        if end > start {
            out.push(Segment { base_pfn: start, pages: end - start, first_desc: first });
            first += end - start;
        }
    }
    if out.is_empty() {
        return Err(Error::usage("the layout holds no whole base page"));
    }
    Ok(out)
}

pub struct PageInit;

impl Experiment for PageInit {
    const NAME: &'static str = "page-init";
    const SHARE: f64 = 3.7;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        check(p)?;
        Ok(Default::default())
    }
    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// Pieces (segment, from, count) of thread `t` of `threads`, split at
/// large-page boundaries so no run is cut.
fn pieces(segs: &[Segment], ratio: u64, threads: usize, t: usize) -> Vec<(Segment, u64, u64)> {
    let split = |s: &Segment, k: usize| -> u64 {
        if k == 0 {
            return 0;
        }
        if k == threads {
            return s.pages;
        }
        let i = s.pages * k as u64 / threads as u64;
        let aligned = (s.base_pfn + i).div_ceil(ratio) * ratio - s.base_pfn;
        aligned.min(s.pages)
    };
    segs.iter()
        .map(|s| (*s, split(s, t), split(s, t + 1)))
        .filter(|(_, a, b)| b > a)
        .map(|(s, a, b)| (s, a, b - a))
        .collect()
}

struct Descs(*mut PageDesc);
// SAFETY: threads write disjoint descriptor ranges (see `pieces`).
unsafe impl Sync for Descs {}
// SAFETY: as above.
unsafe impl Send for Descs {}

pub(crate) fn check(p: &Params) -> Result<()> {
    if p.base_page_bytes.0 == 0
        || !p.large_page_bytes.0.is_multiple_of(p.base_page_bytes.0)
        || p.large_page_bytes <= p.base_page_bytes
    {
        return Err(Error::usage("--large-page must be a multiple of --base-page, and larger"));
    }
    if p.repetitions < 2 {
        return Err(Error::usage("--repetitions must be at least 2"));
    }
    if p.layout.is_empty() && p.memory_bytes.0 < 256 * MIB {
        return Err(Error::usage(format!(
            "--memory {} is too small to model: use at least 256MiB (65536 pages; the figures are extrapolated from it)",
            p.memory_bytes
        )));
    }
    if p.ahead.values().iter().any(|&k| k > 4096) {
        return Err(Error::usage("--ahead is out of range: use 0 to 4096 descriptors"));
    }
    Ok(())
}

/// What one sample of a variant runs: a store kernel, or add_physmem.
enum Work {
    Store(&'static str, StoreFn),
    Init(InitVariant, Mode),
}

/// A store kernel over u64 words, storing `value`.
type WordStore = unsafe fn(*mut u64, usize, u64) -> u64;

/// The two ABIs a store kernel of the limit comes in: page-init's own
/// word stores, and `bandwidth`'s write kernels (one pass).
#[derive(Clone, Copy)]
enum StoreFn {
    Words(WordStore),
    Stream(StreamKernel),
}

/// The store kernels whose best is the limit: full-line non-temporal
/// stores and the widest vector stores (`bandwidth`'s `store-nt` and
/// `store` kernels), `rep stosb`, non-temporal stores of the descriptor
/// images themselves (some memory writes some values faster: the limit is
/// for these bytes), and two allocating ones kept for reference.
fn store_kernels() -> Vec<(&'static str, StoreFn)> {
    let mut v: Vec<(&'static str, StoreFn)> = vec![
        ("plain", StoreFn::Words(crate::kernels::portable::store_fill)),
        ("descriptor-images", StoreFn::Words(crate::kernels::page_init::store_descriptor_images)),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        use crate::kernels::x86_64 as x;
        v.extend([
            ("prefetchw", StoreFn::Words(x::store_prefetchw)),
            ("rep-stosb", StoreFn::Words(x::store_rep_stosb)),
        ]);
    }
    #[cfg(target_arch = "aarch64")]
    if crate::kernels::aarch64::zero::zva_block_bytes().is_some() {
        // Zeroes whole blocks without reading them (how Linux clears pages).
        v.push(("dc-zva", StoreFn::Words(crate::kernels::aarch64::zero::store_dc_zva)));
    }
    for (name, shape) in [("non-temporal", StreamShape::StoreNt), ("wide-vector", StreamShape::Store)] {
        if let Ok((k, _)) = stream_kernel(shape, None) {
            v.push((name, StoreFn::Stream(k)));
        }
    }
    v
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    check(p)?;
    let layout = if p.layout.is_empty() { generated_layout(p.memory_bytes) } else { p.layout.clone() };
    let segs = segments(&layout, p.base_page_bytes)?;
    let ratio = p.large_page_bytes.0 / p.base_page_bytes.0;
    let pages: u64 = segs.iter().map(|s| s.pages).sum();
    let bytes = Bytes(pages * 128);
    let mut region = Buffer::new(PagePolicy::Small, bytes)?;
    let team1 = Team::new(1)?;
    let team_all = Team::new(p.threads)?;
    let descs = Descs(region.as_mut_slice::<u8>().as_mut_ptr() as *mut PageDesc);
    let keys = work_keys(p, &team1, &team_all);
    let checks: Vec<Check> = keys.iter().map(|_| std::cell::RefCell::new(None)).collect();
    let words = region.len() / 8;
    let mut variants: Vec<schedule::Variant> = keys
        .iter()
        .zip(&checks)
        .map(|((_, work, team), check)| {
            let timed = Timed { team, clock: ctx.clock, descs: &descs, segs: &segs, ratio, words };
            Box::new(move |step: Step| {
                let ns = (0..step.iterations(1)).map(|_| timed.once(work, step == Step::WarmUp, check)).sum();
                StepReport::timed(true, ns)
            }) as schedule::Variant
        })
        .collect();
    let mut plan = schedule::Plan::new(p.repetitions, 0.01);
    plan.seed = 0x7061_6765;
    let series = ctx.measure("page-init", &plan, &mut variants)?;
    drop(variants);
    region.read_back();
    let checks: Vec<_> = checks.into_iter().map(|c| c.into_inner()).collect();
    let measured = summary::Measured {
        keys: &keys,
        series: &series,
        checks: &checks,
        pages,
        bytes,
        segs: &segs,
        ratio,
        descriptors: region.backing().clone(),
    };
    summary::summarise(p, ctx, measured)
}

/// A variant's validation of its warm-up run, once it ran.
type Check = std::cell::RefCell<Option<std::result::Result<u64, String>>>;

/// What is measured, in order: each store kernel on one thread and on all
/// (where there are more), then the init variants (prefetch at each
/// distance on one thread, parallel at each distance on all).
fn work_keys<'t>(p: &Params, team1: &'t Team, team_all: &'t Team) -> Vec<(String, Work, &'t Team)> {
    let aheads: Vec<usize> = p.ahead.values().into_iter().filter(|&k| k > 0).map(|k| k as usize).collect();
    let mut keys: Vec<(String, Work, &Team)> = Vec::new();
    for team in [team1, team_all].into_iter().take(if team_all.threads() > 1 { 2 } else { 1 }) {
        keys.extend(store_kernels().into_iter().map(|(n, k)| (n.to_string(), Work::Store(n, k), team)));
    }
    use InitVariant as V;
    let init = |v: V, ahead, team| {
        let mode = Mode { locked: v == V::Locked, ahead, streaming: matches!(v, V::Streaming | V::ParallelStreaming) };
        (v.name().to_string(), Work::Init(v, mode), team)
    };
    keys.push(init(V::Locked, 0, team1));
    keys.push(init(V::Lockfree, 0, team1));
    for &k in &aheads {
        keys.push(init(V::Prefetch, k, team1));
    }
    keys.push(init(V::Streaming, 0, team1));
    for &k in aheads.iter().chain(aheads.is_empty().then_some(&(DEFAULT_AHEAD as usize))) {
        keys.push(init(V::Parallel, k, team_all));
    }
    if team_all.threads() > 1 {
        keys.push(init(V::ParallelStreaming, 0, team_all));
    }
    keys
}

/// What one timed run needs: the team, the clock, the descriptor array
/// and its layout.
struct Timed<'a> {
    team: &'a Team,
    clock: &'a dyn crate::timing::Clock,
    descs: &'a Descs,
    segs: &'a [Segment],
    ratio: u64,
    words: usize,
}

impl Timed<'_> {
    /// One run of `work`, its ns. The warm-up (untimed) run of each init
    /// variant is validated in full (validating costs as much as a run).
    fn once(&self, work: &Work, warm_up: bool, check: &Check) -> u64 {
        let Timed { team, clock, descs, segs, ratio, words } = *self;
        match work {
            Work::Store(_, k) => store_run(team, clock, descs, words, *k),
            Work::Init(_, mode) => {
                let run = init_run(team, clock, descs, segs, ratio, *mode);
                if warm_up {
                    let mut all = FreeLists::default();
                    for l in &run.results {
                        // SAFETY: every list links into this array.
                        unsafe { all.splice(l, descs.0) };
                    }
                    // SAFETY: every descriptor was initialised by this run.
                    *check.borrow_mut() = Some(unsafe { validate(descs.0, segs, ratio, &all) });
                }
                run.elapsed_ns
            }
        }
    }
}

/// Seconds of one run of store kernel `k` over the array by `team`.
fn store_run(team: &Team, clock: &dyn crate::timing::Clock, d: &Descs, words: usize, k: StoreFn) -> u64 {
    let n = team.threads();
    // Per-thread parts in whole cache lines.
    let per = words / n / 8 * 8;
    let run = team.run(clock, |t| {
        let len = if t + 1 == n { (words - t * per) / 8 * 8 } else { per };
        // SAFETY: each thread writes its own line-aligned part of the region.
        let ptr = unsafe { (d.0 as *mut u64).add(t * per) };
        match k {
            // SAFETY: as above.
            StoreFn::Words(k) => unsafe { k(ptr, len, 0x5a5a_5a5a_5a5a_5a5a) },
            // SAFETY: as above; a store kernel reads no source.
            StoreFn::Stream(k) => unsafe { k(1, &StreamArg::read(ptr as *const f64, len, 0)) as u64 },
        }
    });
    run.elapsed_ns
}

fn init_run(
    team: &Team,
    clock: &dyn crate::timing::Clock,
    d: &Descs,
    segs: &[Segment],
    ratio: u64,
    mode: Mode,
) -> crate::timing::team::TeamRun<FreeLists> {
    let n = team.threads();
    team.run(clock, |t| {
        let mut lists = FreeLists::default();
        for (s, from, count) in pieces(segs, ratio, n, t) {
            // SAFETY: the array holds every segment; threads get disjoint pieces.
            unsafe { add_physmem(d.0, s, from, count, ratio, mode, &mut lists) };
        }
        lists
    })
}

/// `report --reanalyze` draws none of its stored claims again.
impl crate::model::Redraw for Outcome {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_layout_has_holes_and_misalignment() {
        let l = generated_layout(Bytes(8 * GIB));
        assert_eq!(l.len(), 3);
        let total: u64 = l.iter().map(|r| r.1 .0).sum();
        assert!(total <= 8 * GIB && total > 8 * GIB - MIB);
        assert_ne!(l[1].0 .0 % (2 * MIB), 0, "misaligned start");
        assert_ne!((l[2].0 .0 + l[2].1 .0) % (2 * MIB), 0, "misaligned end");
        let segs = segments(&l, Bytes(4096)).unwrap();
        assert_eq!(segs[1].first_desc, segs[0].pages);
    }

    #[test]
    fn layouts_parse_and_overlaps_are_refused() {
        assert_eq!(parse_layout("0:640KiB,4GiB:1GiB").unwrap()[1], (Bytes(4 * GIB), Bytes(GIB)));
        assert!(parse_layout("4GiB").is_err());
        assert!(segments(&[(Bytes(0), Bytes(GIB)), (Bytes(MIB), Bytes(MIB))], Bytes(4096)).is_err());
        assert!(segments(&[(Bytes(1), Bytes(100))], Bytes(4096)).is_err());
    }

    #[test]
    fn thread_pieces_cover_each_segment_at_large_page_boundaries() {
        let segs = segments(&generated_layout(Bytes(GIB)), Bytes(4096)).unwrap();
        for threads in [1, 2, 3] {
            for s in &segs {
                let mut covered = 0;
                for t in 0..threads {
                    for (seg, from, count) in pieces(&segs, 512, threads, t).into_iter().filter(|x| x.0 == *s) {
                        assert_eq!(from, covered);
                        assert!(from == 0 || (seg.base_pfn + from) % 512 == 0);
                        covered += count;
                    }
                }
                assert_eq!(covered, s.pages);
            }
        }
    }
}
