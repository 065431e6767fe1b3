//! Part 1: the cost of each prefetch instruction on each target, in a
//! throughput loop and a latency-bound loop, through the scheduler. Each
//! bad target is measured next to the same instruction on mapped lines;
//! the baseline (no prefetch) is paired per repetition. CPU time and page
//! faults are counted over the timed samples only, so the faults of a
//! first execution or of calibration are not taken for traps.

use super::targets::{Targets, COUNT};
use super::params::Params;
use super::{LoopKind, PrefetchCell, Target};
use crate::error::Result;
use crate::experiments::Bench;
use crate::kernels::prefetch::{self as k, TargetArg};
use crate::kernels::hint::*;
use crate::kernels::Hint;
use crate::model::Caution;
use crate::timing::schedule::{self, StepReport, Ratio, Step};
use crate::timing::usage::Usage;
use crate::timing::Summary;
use std::cell::Cell;

pub type TargetKernel = unsafe fn(u64, &TargetArg) -> u64;

/// (throughput, latency) kernels for an instruction, `None` = baseline.
pub fn target_kernels(h: Option<Hint>) -> (TargetKernel, TargetKernel) {
    struct Of;
    impl ForHint for Of {
        type Out = (TargetKernel, TargetKernel);
        fn with<P: Prefetcher>(self) -> Self::Out {
            (k::target_throughput::<P>, k::target_latency::<P>)
        }
    }
    for_hint(h, Of)
}

/// A system time below this many seconds per cell is tick noise.
pub const SYSTEM_TIME_RESOLUTION_S: f64 = 1.0;

/// One cell: the instruction (`None` = no prefetch), its target, its loop.
type Key = (Option<Hint>, Target, LoopKind);

/// Prefetches per iteration of each loop.
fn per_iteration(kind: LoopKind) -> f64 {
    if kind == LoopKind::Throughput {
        8.0
    } else {
        1.0
    }
}

/// Every cell, each loop's baseline and mapped lines before the bad targets.
fn cell_keys(p: &Params) -> Vec<Key> {
    let mut keys = Vec::new();
    for kind in [LoopKind::Throughput, LoopKind::Latency] {
        keys.push((None, Target::Mapped, kind));
        for &h in &p.instructions {
            keys.push((Some(h), Target::Mapped, kind));
            keys.extend(p.targets.iter().filter(|t| **t != Target::Mapped).map(|&t| (Some(h), t, kind)));
        }
    }
    keys
}

/// The scheduled variant of one cell: its kernel over its target array,
/// with the CPU time and faults of timed samples added to `used`.
fn variant<'a>(
    key: Key,
    addresses: &'a [usize],
    chase: *const usize,
    cycle: &'a [u64],
    used: &'a Cell<Usage>,
    ctx: &'a Bench,
) -> schedule::Variant<'a> {
    let (h, _, kind) = key;
    let arg = TargetArg { targets: addresses.as_ptr(), mask: COUNT - 1, chase, zero: 0 };
    let (thr, lat) = target_kernels(h);
    Box::new(move |step: Step| {
        let n = step.iterations(1 << 16);
        // getrusage brackets the kernel but stays out of its time.
        let u0 = Usage::now();
        let t0 = ctx.clock.now_ns();
        // SAFETY: the target array and the cycle live in `measure`'s
        // frame; prefetches never fault.
        let r = unsafe {
            match kind {
                LoopKind::Throughput => thr(n, &arg),
                LoopKind::Latency => lat(n, &arg),
            }
        };
        let ns = ctx.clock.now_ns().saturating_sub(t0);
        if let Step::Run(_) = step {
            used.set(used.get() + Usage::now().since(u0));
        }
        StepReport::timed(kind == LoopKind::Throughput || cycle.contains(&r), ns)
    })
}

/// The cells, and whether every latency loop ended inside its cycle.
pub fn measure(p: &Params, ctx: &Bench, targets: &Targets) -> Result<(Vec<PrefetchCell>, bool)> {
    let chase = targets.cycle();
    let cycle: Vec<u64> = (0..8).map(|i| chase as u64 + i * 64).collect();
    let keys = cell_keys(p);
    let usage: Vec<Cell<Usage>> = keys.iter().map(|_| Cell::new(Usage::default())).collect();
    let arrays: Vec<Vec<usize>> = keys.iter().map(|k| targets.addresses(k.1).to_vec()).collect();
    let mut variants: Vec<schedule::Variant> =
        keys.iter().enumerate().map(|(i, &key)| variant(key, &arrays[i], chase, &cycle, &usage[i], ctx)).collect();
    let mut plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
    plan.seed = p.seed;
    plan.reference_of = keys
        .iter()
        .map(|&(h, t, kind)| {
            (t != Target::Mapped).then(|| keys.iter().position(|k| *k == (h, Target::Mapped, kind))).flatten()
        })
        .collect();
    // Each bad target against the mapped line beside it goes on, doubling,
    // until it is resolved.
    let questions = (0..keys.len())
        .filter(|&i| plan.reference_of[i].is_some())
        .map(|variant| schedule::Question::DifferenceOverReference { variant })
        .collect();
    let mut plan = plan.resolving(questions, 4 * p.repetitions);
    plan.stop_looking_at_ns = ctx.deadline_ns();
    let (series, _) = schedule::measure(&plan, ctx.clock, &mut variants, &mut || ctx.check_interrupt())?;
    drop(variants);
    let ns: Vec<Vec<f64>> = series
        .iter()
        .zip(&keys)
        .map(|(s, k)| s.per_iter_s().iter().map(|x| x * 1e9 / per_iteration(k.2)).collect())
        .collect();
    let cells: Vec<PrefetchCell> =
        (0..keys.len()).map(|i| cell(&keys, i, &series[i], &ns, usage[i].get())).collect();
    let shortest = series.iter().map(|s| s.samples_s.iter().sum::<f64>()).fold(f64::INFINITY, f64::min);
    if shortest < SYSTEM_TIME_RESOLUTION_S {
        ctx.warn(Caution::SystemTimeBelowResolution { seconds: shortest });
    }
    Ok((cells, series.iter().all(|s| s.ok)))
}

/// Paired differences, judged against the level of the arm they are
/// taken from (its median): "no change" is within ± the threshold of it.
fn difference(diffs: &[f64], from: &[f64]) -> Option<Ratio> {
    let level = crate::timing::stats::median(from)?;
    Ratio::differences(diffs).map(|r| r.relative_to(level))
}

/// Cell `i` from its series: ns per prefetch, paired differences from the
/// loop's baseline and from the adjacent mapped line, CPU time and faults.
fn cell(keys: &[Key], i: usize, s: &schedule::Series, ns: &[Vec<f64>], u: Usage) -> PrefetchCell {
    let (h, t, kind) = keys[i];
    let baseline = keys.iter().position(|k| *k == (None, Target::Mapped, kind)).expect("always measured");
    let diffs = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x - y).collect::<Vec<f64>>();
    let adjacent: Vec<f64> = s.adjacent_reference_s_per_iter.iter().map(|x| x * 1e9 / per_iteration(kind)).collect();
    let seconds: f64 = s.samples_s.iter().sum();
    PrefetchCell {
        instruction: h.map(|h| crate::kernels::hint::instruction(h).to_string()).unwrap_or_else(|| "none".into()),
        target: t,
        loop_kind: kind,
        ns_per_prefetch: Summary::of(&ns[i]).expect("measured"),
        over_baseline_ns: (i != baseline).then(|| difference(&diffs(&ns[i], &ns[baseline]), &ns[baseline])).flatten(),
        over_mapped_ns: (t != Target::Mapped)
            .then(|| difference(&diffs(&ns[i], &adjacent), &adjacent).map(|r| r.looked(s.looks.clone())))
            .flatten(),
        samples_ns: ns[i].clone(),
        user_s: u.user_s,
        system_s: (seconds >= SYSTEM_TIME_RESOLUTION_S).then_some(u.system_s),
        page_faults: u.faults,
        prefetches: s.iters * per_iteration(kind) as u64 * s.samples_s.len() as u64,
    }
}
