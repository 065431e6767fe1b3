//! Measuring pointer chases through the scheduler, for `latency`, `tlb`
//! and `numa`: every chase of one working set is a variant; each sample is
//! preceded by an untimed warm-up (the whole cycle, or as much of it as
//! refills every cache level when the cycle is larger; for `latency`, a
//! cycle the caches hold goes round until the caches' worth of lines has
//! passed), because chases measured in turn evict each other's lines and
//! translations.

use super::Bench;
use crate::error::Result;
use crate::kernels::chase::{chase_kernel, Chase};
use crate::timing::schedule::{self, Series, Step, StepReport};
use std::cell::RefCell;

/// How far each sample's warm-up goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warm {
    /// One traversal of the cycle, capped at twice the data caches' lines:
    /// the cycle's own lines and translations are back (`tlb`, `numa`).
    Cycle,
    /// For a cycle the caches hold (below where the probe found the far
    /// level, else below the last-level cache), [`CLEARING_TRAVERSALS`]
    /// traversals, capped alike: the lines a larger chase left in a last
    /// level that does not replace by recency (a victim L3, say) are gone
    /// too; a larger cycle, one traversal as for [`Warm::Cycle`]
    /// (`latency`).
    Caches,
}

/// Loads of the warm-up before each sample. The cap, twice the lines of
/// the data caches (one of each level, or the whole last-level cache
/// where that is larger, at least 65,536), is what a steady-state chase
/// leaves in the caches after that many loads (docs/validation.md, "Figures
/// behind constants"); one traversal of a smaller cycle was not enough
/// after a larger chase had filled the L3 (the same section).
pub fn warm_loads(lines: usize, machine: &crate::machine::Fingerprint, warm: Warm) -> u64 {
    let cap = (2 * machine.cached_bytes().0 / 64).max(1 << 16);
    match warm {
        Warm::Caches if (lines as u64) < held_lines(machine) => (CLEARING_TRAVERSALS * lines as u64).min(cap),
        Warm::Cycle | Warm::Caches => (lines as u64).min(cap),
    }
}

/// Traversals of a cycle the caches hold before each of `latency`'s
/// samples: after a larger chase, two left the suite's 8 MiB point ×4 too
/// slow in one round of five, eight (the cap there) none in thirteen
/// (docs/validation.md, "Figures behind constants").
pub const CLEARING_TRAVERSALS: u64 = 8;

/// Lines of the largest cycle the caches hold: below where the probe found
/// the far level, or, unmeasured, the last-level cache.
fn held_lines(machine: &crate::machine::Fingerprint) -> u64 {
    let far = machine.measured_levels.as_ref().and_then(|l| l.found.far_from);
    far.unwrap_or(machine.sizing_llc().0).0 / 64
}

/// The scheduler's plan for chases: warm before every sample, and sample
/// at least half as long as the warm-up's last traversal (a large working
/// set's warm-up is tens of times the shortest sample: sampling longer averages the host's
/// noise over a longer stretch; half keeps the quick suite's DRAM points
/// within its minute).
pub fn plan(repetitions: usize, min_sample_s: f64, seed: u64) -> schedule::Plan {
    let mut p = schedule::Plan::new(repetitions, min_sample_s);
    p.warm_each_sample = true;
    p.sample_over_warm = 0.5;
    p.seed = seed;
    p
}

/// Measures single-chain `chases` interleaved, each sample after a
/// warm-up as far as `warm`; an iteration is one load.
pub fn measure(chases: &[RefCell<Chase>], plan: &schedule::Plan, ctx: &Bench, warm: Warm) -> Result<Vec<Series>> {
    let k1 = chase_kernel(1).expect("one chain");
    let clock = ctx.clock;
    let mut variants: Vec<schedule::Variant> = chases
        .iter()
        .map(|c| {
            let traversal = warm_loads(c.borrow().len(), ctx.machine, Warm::Cycle);
            let clear = warm_loads(c.borrow().len(), ctx.machine, warm) - traversal;
            Box::new(move |step: Step| {
                let mut chase = c.borrow_mut();
                chase.set_chains(1);
                if step != Step::WarmUp || clear == 0 {
                    // SAFETY: the chase's memory outlives this call (the caller owns both).
                    return StepReport::valid(unsafe { chase.run(k1, step.iterations(traversal)) });
                }
                // Loads past one traversal only clear what other chases
                // left in the last level: the warm-up reports the
                // traversal's time, which a sample's length follows.
                // SAFETY: as above.
                let cleared = unsafe { chase.run(k1, clear) };
                let t0 = clock.now_ns();
                // SAFETY: as above.
                let ok = unsafe { chase.run(k1, traversal) };
                StepReport::timed(cleared && ok, clock.now_ns().saturating_sub(t0))
            }) as schedule::Variant
        })
        .collect();
    let (series, _) = schedule::measure(plan, ctx.clock, &mut variants, &mut || ctx.check_interrupt())?;
    Ok(series)
}

/// Nanoseconds per load of each sample.
pub fn ns_per_load(s: &Series) -> Vec<f64> {
    s.per_iter_s().iter().map(|x| x * 1e9).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On every recorded machine: a cycle the caches hold (an eighth of
    /// where its probe found the far level, and half of it) goes round
    /// several times before `latency`'s samples, up to the cap; one past
    /// it, and every cycle of `tlb` and `numa`, once (capped alike).
    #[test]
    fn a_cycle_the_caches_hold_goes_round_several_times() {
        for (name, doc) in crate::test_support::recorded_suites() {
            let m = &doc.machine;
            let held = held_lines(m) as usize;
            let cap = warm_loads(usize::MAX, m, Warm::Cycle);
            let eighth = held / 8;
            assert_eq!(warm_loads(eighth, m, Warm::Cycle), eighth as u64, "{name}");
            assert_eq!(warm_loads(eighth, m, Warm::Caches), CLEARING_TRAVERSALS * eighth as u64, "{name}");
            let half = held / 2;
            assert_eq!(warm_loads(half, m, Warm::Caches), cap.min(CLEARING_TRAVERSALS * half as u64), "{name}");
            assert!(warm_loads(half, m, Warm::Caches) >= 2 * half as u64, "{name}: cap {cap} under two traversals");
            assert_eq!(warm_loads(2 * held, m, Warm::Caches), warm_loads(2 * held, m, Warm::Cycle), "{name}");
        }
    }
}
