//! Where memory begins below memory by size: a working set against its
//! doubling and against a set memory's by size, the three measured in the
//! same repetitions (once each, shuffled, each warmed before its sample)
//! and judged by the verdict engine. A set is memory's where its doubling
//! agrees within memory's flatness (7% for a chase, 5% for a read) and
//! memory by size within that per doubling: a cache's plateau is flat at
//! its doubling too. Each kind stops at its first such set, and the pairs
//! share a time box. A chase's warm-up (`warm`) errs, if at all, toward
//! the smaller set, so memory begins later, never earlier.

use crate::kernels::chase::{chase_kernel, visit_order, Chase, Cycle};
use crate::kernels::{pattern_sum, StreamArg, StreamShape};
use crate::machine::levels::{fill_pattern, Doubling, DoublingKind, WARM_CAP_LOADS};
use crate::memory::{Buffer, PagePolicy};
use crate::timing::schedule::{self, Question, Step, StepReport, Variant};
use crate::timing::Clock;
use crate::units::{Bytes, MIB};
use std::cell::RefCell;

/// Repetitions at a pair's first look, and at most (sequential looks).
const REPETITIONS: usize = 10;
const MOST: usize = 40;
/// One sample lasts at least this long.
const SAMPLE_S: f64 = 0.002;
/// The smallest set paired: below it every level is a cache's (and a
/// huge page would round a smaller set up to its doubling's size).
const SMALLEST: Bytes = Bytes(4 * MIB);
const LINE: usize = 64;

/// The sizes paired with their doubling: from the far level `far` or the
/// last-level cache (`by_size` / 8), whichever is larger, doubling while
/// the doubled set is below `by_size` and within `reach`.
pub fn pairs(far: Option<Bytes>, by_size: Bytes, reach: Bytes) -> Vec<Bytes> {
    let first = far.unwrap_or_default().max(Bytes(by_size.0 / 8)).max(SMALLEST);
    std::iter::successors(Some(first), |s| Some(Bytes(s.0 * 2)))
        .take_while(|s| 2 * s.0 <= by_size.0 && 2 * s.0 <= reach.0)
        .collect()
}

/// Measures each size of [`pairs`] against its doubling and `memory` (a
/// size that is memory's by size) on `pages`, until each kind has one that
/// agrees or `box_s` seconds are spent; the doublings and whether every
/// chase ended where its cycle says and every read summed to its pattern.
pub fn measure(
    clock: &dyn Clock,
    sizes: &[Bytes],
    memory: Bytes,
    pages: PagePolicy,
    box_s: f64,
) -> (Vec<Doubling>, bool) {
    let deadline = clock.now_ns() + (box_s * 1e9) as u64;
    let (mut out, mut ok) = (Vec::new(), true);
    for &size in sizes {
        let open: Vec<DoublingKind> = DoublingKind::ALL
            .into_iter()
            .filter(|&k| !out.iter().any(|d: &Doubling| d.kind == k && d.agrees()))
            .collect();
        if open.is_empty() {
            break;
        }
        for kind in open {
            if clock.now_ns() >= deadline {
                return (out, ok);
            }
            match pair(clock, kind, [size, memory], pages, deadline) {
                Some((d, fine)) => {
                    ok &= fine;
                    out.extend(d);
                }
                None => return (out, ok),
            }
        }
    }
    (out, ok)
}

/// One size against twice it and against `memory` where that is larger
/// still; `None` where memory was refused.
fn pair(
    clock: &dyn Clock,
    kind: DoublingKind,
    [size, memory]: [Bytes; 2],
    pages: PagePolicy,
    deadline: u64,
) -> Option<(Option<Doubling>, bool)> {
    let mut sizes = vec![size, Bytes(2 * size.0)];
    sizes.extend(Some(memory).filter(|m| m.0 > 2 * size.0));
    let mut regions: Vec<Buffer> = sizes.iter().map(|&s| Buffer::new(pages, s).ok()).collect::<Option<_>>()?;
    // A region rounded up to its page size is another set: no pair.
    if regions.iter().zip(&sizes).any(|(r, s)| r.len() as u64 != s.0) {
        return Some((None, true));
    }
    let questions: Vec<Question> = (1..sizes.len()).map(|a| Question::Pair { a, b: 0 }).collect();
    let mut plan = schedule::Plan::new(REPETITIONS, SAMPLE_S).resolving(questions.clone(), MOST);
    plan.warm_each_sample = true;
    plan.stop_looking_at_ns = Some(deadline);
    plan.settle_within = Some(kind.flat());
    plan.seed ^= size.0;
    let measured = match kind {
        DoublingKind::Chase => chases(clock, &plan, &mut regions),
        DoublingKind::Read => reads(clock, &plan, &mut regions),
    };
    let (series, _) = measured.ok()?;
    let ok = series.iter().all(|s| s.ok);
    let ratio = |q: &Question| q.ratio(&series).map(|r| r.looked(series[0].looks.clone()));
    let to_memory = questions.get(1).and_then(ratio).map(|r| (memory, r));
    Some((ratio(&questions[0]).map(|ratio| Doubling { kind, size_bytes: size, ratio, to_memory }), ok))
}

/// A random chase over each region, warmed by [`warm`].
fn chases(
    clock: &dyn Clock,
    plan: &schedule::Plan,
    regions: &mut [Buffer],
) -> crate::error::Result<(Vec<schedule::Series>, schedule::Orders)> {
    let k1 = chase_kernel(1).expect("one chain");
    let arms: Vec<(RefCell<Chase>, *const u8, Vec<u32>)> = regions
        .iter_mut()
        .map(|r| {
            let lines = r.len() / LINE;
            let base = r.as_mut_slice::<u8>().as_mut_ptr();
            let cycle = Cycle::of(visit_order(lines, None, 0x646f_7562 ^ lines as u64)).expect("a permutation");
            // SAFETY: the cycle's lines × 64 bytes fit the region, which
            // outlives the chase (both live until this function returns).
            // Linked in address order: a random-order link walks the page
            // tables at every write.
            let chase = unsafe { Chase::of_cycle(base, &cycle, |s| s * LINE, 1) };
            (RefCell::new(chase), base as *const u8, warm_lines(lines))
        })
        .collect();
    let mut variants: Vec<Variant> = arms
        .iter()
        .map(|(chase, base, warm_lines)| {
            Box::new(move |step: Step| match step {
                // SAFETY: every line index lies inside the region, which
                // is live; the chase is idle while it is read.
                Step::WarmUp => StepReport::valid(unsafe { warm(*base, warm_lines) }),
                // SAFETY: the chase's memory is live and linked.
                Step::Calibrate(n) | Step::Run(n) => StepReport::valid(unsafe { chase.borrow_mut().run(k1, n) }),
            }) as Variant
        })
        .collect();
    schedule::measure(plan, clock, &mut variants, &mut || Ok(()))
}

/// One thread's `simd` read, checked against its pattern: an iteration of
/// every arm reads as many bytes as the first arm holds (a larger arm its
/// parts in turn), so that time per iteration is time per byte times that.
fn reads(
    clock: &dyn Clock,
    plan: &schedule::Plan,
    regions: &mut [Buffer],
) -> crate::error::Result<(Vec<schedule::Series>, schedule::Orders)> {
    let (simd, _) = crate::kernels::stream_kernel(StreamShape::Simd, None)?;
    let size = regions[0].len() / 8;
    let mut variants: Vec<Variant> = regions
        .iter_mut()
        .map(|r| {
            fill_pattern(r, Bytes(r.len() as u64));
            let words = &r.as_slice::<f64>()[..r.len() / 8 / size * size];
            let chunks: Vec<(StreamArg, f64)> = words
                .chunks(size)
                .enumerate()
                .map(|(i, c)| (StreamArg::read(c.as_ptr(), c.len(), 0), pattern_sum(i * size, c.len())))
                .collect();
            let mut next = 0;
            Box::new(move |step: Step| {
                let mut ok = true;
                for _ in 0..step.iterations(chunks.len() as u64) {
                    let (arg, want) = &chunks[next % chunks.len()];
                    next += 1;
                    // SAFETY: `arg` views the region, which outlives the
                    // measurement.
                    ok &= unsafe { simd(1, arg) } == *want;
                }
                StepReport::valid(ok)
            }) as Variant
        })
        .collect();
    schedule::measure(plan, clock, &mut variants, &mut || Ok(()))
}

/// The lines a chase over `lines` is warmed from: every line once, in a
/// random order, where they are no more than [`WARM_CAP_LOADS`]; past
/// that, as many drawn at random (no permutation of millions is built).
fn warm_lines(lines: usize) -> Vec<u32> {
    let seed = 0x7761_726d ^ lines as u64;
    if lines as u64 <= WARM_CAP_LOADS {
        return visit_order(lines, None, seed).into_iter().map(|l| l as u32).collect();
    }
    let mut rng = crate::rng::SplitMix64(seed);
    (0..WARM_CAP_LOADS).map(|_| rng.below(lines) as u32).collect()
}

/// One load from each of `lines` (line indices from `base`), independent
/// of one another so that many are in flight; always valid. A random
/// subset of a chase's lines, apart from its path, leaves the caches as a
/// random chase does, at a tenth of a dependent walk's time; a sequential
/// pass does not (the smaller set then reads up to ×1.5 faster than in its
/// steady state). Near the cache's size it still favours the smaller set.
///
/// # Safety
/// Every line must lie inside live memory from `base`.
unsafe fn warm(base: *const u8, lines: &[u32]) -> bool {
    let sum = lines.iter().fold(0u64, |a, &l| {
        // SAFETY: guaranteed by the caller.
        a.wrapping_add(unsafe { std::ptr::read_volatile(base.add(l as usize * LINE) as *const u64) })
    });
    std::hint::black_box(sum);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From the far level or the last-level cache (an eighth of memory by
    /// size), doubling, the doubled set below memory by size and within
    /// reach.
    #[test]
    fn pairs_double_from_the_far_level_below_memory_by_size() {
        let mib = |n: u64| Bytes(n * MIB);
        assert_eq!(pairs(Some(mib(4)), mib(256), mib(512)), vec![mib(32), mib(64), mib(128)]);
        assert_eq!(pairs(Some(mib(64)), mib(1024), mib(512)), vec![mib(128), mib(256)]);
        assert_eq!(pairs(None, mib(256), mib(512)), vec![mib(32), mib(64), mib(128)]);
        assert_eq!(pairs(Some(mib(256)), mib(256), mib(512)), Vec::<Bytes>::new());
        assert_eq!(pairs(None, mib(16), mib(512)), vec![mib(4), mib(8)]);
    }

    /// Small sets on the real clock: each kind's pairs are measured in
    /// order, valid, each with its repetitions, and a kind stops at its
    /// first pair that agrees.
    #[test]
    fn small_pairs_are_measured_valid_and_stop_where_they_agree() {
        let sizes = [Bytes(4 * MIB), Bytes(8 * MIB)];
        // A box no host runs past, so both kinds are measured everywhere.
        let (d, ok) = measure(&crate::timing::MonotonicClock::new(), &sizes, Bytes(32 * MIB), PagePolicy::Small, 600.0);
        assert!(ok);
        for kind in DoublingKind::ALL {
            let of: Vec<&Doubling> = d.iter().filter(|x| x.kind == kind).collect();
            assert!(!of.is_empty() && of.len() <= 2, "{kind:?}: {d:?}");
            assert!(of.iter().all(|x| x.ratio.n >= REPETITIONS), "{of:?}");
            assert!(of
                .iter()
                .all(|x| x.to_memory.as_ref().is_some_and(|(m, r)| *m == Bytes(32 * MIB) && r.n >= REPETITIONS)));
            assert!(of.iter().rev().skip(1).all(|x| !x.agrees()), "measured past agreement: {of:?}");
            assert_eq!(of[0].size_bytes, Bytes(4 * MIB));
        }
    }
}
