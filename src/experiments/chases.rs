//! Measuring pointer chases through the scheduler, for `latency` and
//! `tlb`: every chase of one working set is a variant; each sample is
//! preceded by an untimed warm-up traversal (the whole cycle, or as much
//! of it as refills every cache level when the cycle is larger), because
//! chases measured in turn evict each other's lines and translations.

use super::Bench;
use crate::error::Result;
use crate::kernels::chase::{chase_kernel, Chase};
use crate::timing::schedule::{self, Ran, Series, Step};
use std::cell::RefCell;

/// Loads of the warm-up before each sample: one traversal of the cycle,
/// capped at twice the lines of the data caches (one of each level, or the
/// whole last-level cache where that is larger): after that many loads the
/// caches hold what a steady-state chase leaves in them (the measurement
/// that set the cap: BENCHMARKS.md, "Figures behind constants").
pub fn warm_loads(lines: usize, machine: &crate::machine::Fingerprint) -> u64 {
    let cap = 2 * machine.cached_bytes().0 / 64;
    (lines as u64).min(cap.max(1 << 16))
}

/// The scheduler's plan for chases: warm before every sample, and sample
/// at least half as long as the warm-up (a large working set's warm-up is
/// tens of times the shortest sample: sampling longer averages the host's
/// noise over a longer stretch; half keeps the quick suite's DRAM points
/// within its minute).
pub fn plan(repetitions: usize, min_sample_s: f64, seed: u64) -> schedule::Plan {
    let mut p = schedule::Plan::new(repetitions, min_sample_s);
    p.warm_each_sample = true;
    p.sample_over_warm = 0.5;
    p.seed = seed;
    p
}

/// Measures single-chain `chases` interleaved; an iteration is one load.
pub fn measure(chases: &[RefCell<Chase>], plan: &schedule::Plan, ctx: &Bench) -> Result<Vec<Series>> {
    let k1 = chase_kernel(1).expect("one chain");
    let mut variants: Vec<schedule::Variant> = chases
        .iter()
        .map(|c| {
            let warm = warm_loads(c.borrow().len(), ctx.machine);
            Box::new(move |step: Step| {
                let n = step.iterations(warm);
                let mut chase = c.borrow_mut();
                chase.set_chains(1);
                // SAFETY: the chase's memory outlives this call (the caller owns both).
                Ran::valid(unsafe { chase.run(k1, n) })
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
