//! Part 3: does a prefetch that misses the TLB walk the page table? Pages
//! in random order, each load's address (and the prefetch's) depending on
//! the previous load, the region far larger than the last-level cache, and
//! each walk touching a line of each page that the previous walks did not
//! (the line offset rotates): every access waits for memory unless the
//! prefetch helped. On 4 KiB pages every prefetch misses the TLB; on huge
//! pages it hits. Each prefetch distance is measured next to the walk
//! without prefetch on the same pages.

use super::params::Params;
use super::StrideResult;
use crate::error::Result;
use crate::experiments::Bench;
use crate::kernels::prefetch as k;
use crate::kernels::hint::*;
use crate::kernels::Hint;
use crate::memory::{PagePolicy, Buffer};
use crate::timing::schedule::{self, StepReport, Ratio, Step};
use crate::timing::stats;
use memperf_model::timing::verdict::Scale;
use crate::units::Bytes;
use std::cell::Cell;

pub type StrideKernel = unsafe fn(*const u8, usize, &[u32], usize, usize) -> u64;

pub fn stride_kernel(h: Option<Hint>) -> StrideKernel {
    struct Of;
    impl ForHint for Of {
        type Out = StrideKernel;
        fn with<P: Prefetcher>(self) -> StrideKernel {
            k::page_walk::<P>
        }
    }
    for_hint(h, Of)
}

const STRIDE: usize = 4096;

/// The page policies walked, 4 KiB first.
const POLICIES: [PagePolicy; 2] = [PagePolicy::Small, PagePolicy::Thp];

/// Both page policies' buffers, every line holding its index.
fn buffers(p: &Params) -> Result<Vec<(PagePolicy, Buffer)>> {
    let bytes = Bytes((p.stride_pages * STRIDE) as u64);
    let mut regions = Vec::new();
    for pol in POLICIES {
        let mut r = Buffer::new(pol, bytes)?;
        for (i, w) in r.as_mut_slice::<u64>().iter_mut().enumerate() {
            *w = (i / 8) as u64; // every line holds its index
        }
        regions.push((pol, r));
    }
    Ok(regions)
}

/// One pass over the pages in `order` per iteration, prefetching `ahead`
/// pages ahead (0: none), each pass on the next line of every page; valid
/// when every pass sums the lines it read.
fn variant<'a>(
    p: &Params,
    base: *const u8,
    order: &'a [u32],
    ahead: usize,
    walks: &'a Cell<usize>,
) -> schedule::Variant<'a> {
    let kernel = stride_kernel((ahead > 0).then_some(p.stride_hint));
    let base = base as usize;
    Box::new(move |step: Step| {
        let mut ok = true;
        for _ in 0..step.iterations(1) {
            // 7 is coprime with 64: all 64 lines of a page in turn.
            let line = (walks.get() * 7) % 64;
            walks.set(walks.get() + 1);
            // SAFETY: every page index < stride_pages; line × 64 + 8 <= 4096.
            let sum = unsafe { kernel(base as *const u8, STRIDE, order, line * 64, ahead) };
            let n = order.len() as u64;
            ok &= sum == 64 * n * (n - 1) / 2 + n * line as u64;
        }
        StepReport::valid(ok)
    })
}

/// Each policy's huge fraction as one mapping was read back.
type Backing = Vec<(PagePolicy, Option<f64>)>;

/// What one variant gave over every share: per repetition, the speed-up
/// against the walk without prefetch beside it, and ns per access.
#[derive(Default)]
struct Merged {
    speed: Vec<f64>,
    ns_per_access: Vec<f64>,
}

/// One share of the repetitions on freshly mapped and filled regions:
/// each variant's figures added to `merged`, each policy's huge fraction
/// read back; whether every pass summed what it read.
fn one_share(
    p: &Params,
    ctx: &Bench,
    (order, keys, repetitions, seed): (&[u32], &[(usize, usize)], usize, u64),
    walks: &Cell<usize>,
    merged: &mut [Merged],
) -> Result<(Backing, bool)> {
    let mut regions = buffers(p)?;
    let mut variants: Vec<schedule::Variant> =
        keys.iter().map(|&(ri, d)| variant(p, regions[ri].1.as_ptr(), order, d, walks)).collect();
    let mut plan = schedule::Plan::new(repetitions, p.min_sample_s);
    plan.seed = seed;
    plan.warm_each_sample = false;
    plan.reference_of =
        keys.iter().map(|&(ri, d)| (d > 0).then(|| keys.iter().position(|k| *k == (ri, 0))).flatten()).collect();
    let (series, _) = schedule::measure(&plan, ctx.clock, &mut variants, &mut || ctx.check_interrupt())?;
    drop(variants);
    for (j, s) in series.iter().enumerate() {
        let per_iter = s.per_iter_s();
        merged[j].ns_per_access.extend(per_iter.iter().map(|t| t * 1e9 / p.stride_pages as f64));
        merged[j].speed.extend(s.speed_over_reference());
    }
    let backing = regions
        .iter_mut()
        .map(|(pol, r)| {
            r.read_back();
            (*pol, r.backing().huge_fraction)
        })
        .collect();
    Ok((backing, series.iter().all(|s| s.ok)))
}

/// The smaller of two huge fractions, either where only one was read.
fn least(x: Option<f64>, y: Option<f64>) -> Option<f64> {
    match (x, y) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Every distance on both policies, the repetitions split among fresh
/// mappings (`p.groups()`): where the pages and their page tables land
/// moves the 4 KiB walk from run to run (by a quarter: docs/validation.md, "Figures behind constants"),
/// so the speed-up's interval spans mappings, not one.
pub fn measure(p: &Params, ctx: &Bench) -> Result<(Vec<StrideResult>, bool)> {
    let mut aheads = vec![0usize];
    aheads.extend(&p.stride_ahead_pages);
    let mut order: Vec<u32> = (0..p.stride_pages as u32).collect();
    crate::kernels::chase::SplitMix64(p.seed).shuffle(&mut order);
    let keys: Vec<(usize, usize)> = (0..POLICIES.len()).flat_map(|r| aheads.iter().map(move |&d| (r, d))).collect();
    let walks = Cell::new(0usize);
    let mut merged: Vec<Merged> = keys.iter().map(|_| Merged::default()).collect();
    let mut ok = true;
    // A policy's huge fraction: the least any of its mappings got.
    let mut backing: Backing = POLICIES.iter().map(|&pol| (pol, None)).collect();
    for (share, repetitions) in p.groups().into_iter().enumerate() {
        let seed = p.seed.wrapping_add(share as u64);
        let (b, share_ok) = one_share(p, ctx, (&order, &keys, repetitions, seed), &walks, &mut merged)?;
        ok &= share_ok;
        backing = backing.into_iter().zip(b).map(|((pol, x), (_, y))| (pol, least(x, y))).collect();
    }
    let mapping_of: Vec<u32> =
        p.groups().iter().enumerate().flat_map(|(k, &n)| std::iter::repeat_n(k as u32, n)).collect();
    let out = keys
        .iter()
        .enumerate()
        .filter(|(_, (_, d))| *d > 0)
        .filter_map(|(j, &(ri, d))| {
            let without = keys.iter().position(|k| *k == (ri, 0))?;
            let (pages, huge_fraction) = backing[ri];
            Some(StrideResult {
                pages,
                huge_fraction,
                ahead_pages: d,
                speedup: Ratio::with_evidence(merged[j].speed.clone(), mapping_of.clone(), Scale::Ratio)?,
                ns_per_access_without: stats::median(&merged[without].ns_per_access).unwrap_or(f64::NAN),
                ns_per_access_with: stats::median(&merged[j].ns_per_access).unwrap_or(f64::NAN),
            })
        })
        .collect();
    Ok((out, ok))
}
