//! `memperf prefetch-fault`: what a software prefetch of a bad address
//! costs, and whether a prefetch that misses the TLB walks the page table.
//!
//! Part 1 ([`cells`]): every prefetch instruction against mapped lines,
//! NULL, unmapped holes, PROT_NONE pages, kernel and non-canonical
//! addresses — 256 distinct pages of each, rotated, each verified to be
//! what it claims ([`targets`]) — in a throughput loop and in a latency-
//! bound loop. Each bad target is measured next to the same instruction on
//! mapped lines, through the scheduler (warm-up, ≥ 10 ms samples, shuffled,
//! ≥ 10 repetitions); page faults and CPU time are counted over the timed
//! samples only. (UltraSPARC IV+'s "strong" prefetch of address 0 trapped:
//! 1.34 s of system time per 10^6.)
//! Part 2 ([`lists`]): many short linked lists whose walk prefetches the
//! node k ahead, which is NULL near each end: no prefetch, unguarded, guarded.
//! Part 3 ([`tlb_walk`]): a dependent walk touching one line per 4 KiB over
//! far more memory than the last-level cache, prefetching D pages ahead,
//! on 4 KiB and on huge pages: if prefetches were dropped on a TLB miss,
//! the speed-up on 4 KiB pages would vanish.
//! [`verdict`] turns the figures into one finding per instruction and loop.

#[cfg(target_arch = "x86_64")]
mod cells;
#[cfg(target_arch = "x86_64")]
mod lists;
pub mod options;
pub mod targets;
#[cfg(target_arch = "x86_64")]
mod tlb_walk;
pub mod verdict;

use super::estimate::Rates;
use super::{Context, Experiment, Preset};
use crate::error::{Error, Result};
use crate::kernels::Hint;
pub use crate::model::outcome::prefetch_fault::*;
use crate::timing::schedule;
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub instructions: Vec<Hint>,
    /// Bad targets to measure; mapped lines are always measured beside them.
    pub targets: Vec<Target>,
    pub repetitions: usize,
    pub min_sample_s: f64,
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
    pub fn preset(preset: Preset) -> Params {
        // Full: 100 ms samples, so that each cell runs ≥ 1 s and its system
        // time is resolved by the clock tick.
        let (sample, reps, nodes, region, pages) = match preset {
            Preset::Quick => (0.006, 10, 1 << 16, 64 * MIB, 1 << 16),
            Preset::Default => (0.01, 10, 1 << 18, 256 * MIB, 1 << 16),
            Preset::Full => (0.1, 10, 1 << 20, 1024 * MIB, 1 << 17),
        };
        Params {
            // Quick: t1 and t2 behave like t0 on current x86 cores.
            instructions: if preset == Preset::Quick { vec![Hint::T0, Hint::Nta, Hint::W] } else { Hint::ALL.to_vec() },
            targets: Target::ALL.to_vec(),
            repetitions: reps,
            min_sample_s: sample,
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

    /// Every parameter within a range that makes physical sense, before
    /// anything is allocated.
    pub fn check(&self) -> Result<()> {
        if self.instructions.is_empty() || self.targets.is_empty() {
            return Err(Error::usage("prefetch-fault needs at least one --hint and one --targets entry"));
        }
        if self.repetitions < 2 {
            return Err(Error::usage("--repetitions must be at least 2 (pairs need two samples to mean anything)"));
        }
        let nodes = self.list_nodes.min(self.list_region_bytes.0 as usize / 64);
        if let Some(l) = self.list_lengths.iter().find(|&&l| l == 0 || l > nodes / 16) {
            return Err(Error::usage(format!(
                "--lengths {l} is out of range: use 1 to {} (16 lists of at least one node each)",
                nodes / 16
            )));
        }
        if !(1..=64).contains(&self.list_ahead) {
            return Err(Error::usage("the list look-ahead must be 1 to 64 nodes"));
        }
        if let Some(d) = self.stride_ahead_pages.iter().find(|&&d| d == 0 || d >= self.stride_pages / 2) {
            return Err(Error::usage(format!(
                "--ahead {d} is out of range: use 1 to {} pages (less than half the walk)",
                self.stride_pages / 2 - 1
            )));
        }
        Ok(())
    }
}

/// Seconds the experiment takes: the cells (each instruction on each
/// target in two loops, beside the same loop on mapped lines; a warm-up of
/// 2^16 prefetches each), the list walks (three variants per length, a
/// list set of `list_nodes` nodes each), and the page-stride walk (4 KiB
/// and THP, each distance beside none; one walk of `stride_pages` pages is
/// an iteration).
pub fn estimate_s(p: &Params, _: &crate::machine::Fingerprint, r: &Rates) -> f64 {
    // Per loop: the baseline alone, then per instruction its mapped cell
    // and each bad target measured beside it.
    let bad = p.targets.iter().filter(|t| **t != Target::Mapped).count();
    let mut reference_of = Vec::new();
    for _ in 0..2 {
        reference_of.push(None);
        for _ in &p.instructions {
            let mapped = reference_of.len();
            reference_of.push(None);
            reference_of.extend(std::iter::repeat_n(Some(mapped), bad));
        }
    }
    let cells = reference_of.len();
    let mut cell_plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
    cell_plan.reference_of = reference_of;
    use crate::memory::PagePolicy::{Small, Thp};
    let far = |pages| r.ns_per_load(Bytes(1 << 30), pages) * 1e-9;
    let cells_s = schedule::estimate_s(&cell_plan, &vec![1e-9; cells], &vec![65536.0 * 20e-9; cells]);
    // A node costs what its lines cost: the lists' nodes fit the caches.
    let nodes = p.list_nodes.min(p.list_region_bytes.0 as usize / 64) as f64;
    let node = r.ns_per_load(Bytes(nodes as u64 * 64), Small) * 1e-9;
    let list_plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
    let lists_s: f64 =
        p.list_lengths.iter().map(|_| schedule::estimate_s(&list_plan, &[nodes * node; 3], &[0.0; 3])).sum::<f64>()
            + r.fault_s(p.list_region_bytes, Small)
            + p.list_lengths.len() as f64 * r.link_s(nodes as u64);
    // The walk: the far level per access on THP, and about 1.8 times that
    // on 4 KiB pages (a page walk more, two-dimensional in a guest), 4 KiB
    // first; prefetching D pages ahead divides
    // it by about 1 + D, at most by 8 (the misses a core keeps in flight).
    let mut unit = Vec::new();
    let mut reference_of = Vec::new();
    for per_access in [1.8 * far(Thp), far(Thp)] {
        let without = unit.len();
        unit.push(p.stride_pages as f64 * per_access);
        reference_of.push(None);
        for &d in &p.stride_ahead_pages {
            unit.push(p.stride_pages as f64 * per_access / (1.0 + d as f64).min(8.0));
            reference_of.push(Some(without));
        }
    }
    let mut stride_plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
    stride_plan.reference_of = reference_of;
    let bytes = Bytes(p.stride_pages as u64 * 4096);
    let stride_s = schedule::estimate_s(&stride_plan, &unit, &unit)
        + r.fault_s(bytes, Small)
        + r.fault_s(bytes, Thp)
        + 2.0 * bytes.0 as f64 / r.read_bps(1);
    cells_s + lists_s + stride_s
}

pub struct PrefetchFault;

impl Experiment for PrefetchFault {
    const NAME: &'static str = "prefetch-fault";
    type Params = Params;
    type Outcome = Outcome;

    fn estimate_s(p: &Params, m: &crate::machine::Fingerprint, r: &super::estimate::Rates) -> f64 {
        estimate_s(p, m, r)
    }
    fn check(p: &Params) -> Result<()> {
        p.check()
    }
    fn shrink(p: &mut Params, _: &crate::machine::Fingerprint) -> bool {
        use super::fit::{fewer, halve_sample, step};
        step(p.stride_pages > 1 << 14, || p.stride_pages /= 2)
            || fewer(&mut p.repetitions, 6, 2)
            || halve_sample(&mut p.min_sample_s, 0.002)
    }
    fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
        run(p, ctx)
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn run(p: &Params, _: &Context) -> Result<Outcome> {
    p.check()?;
    Err(Error::unsatisfiable("prefetch-fault is implemented for x86_64 only", "run it on an x86_64 machine"))
}

#[cfg(target_arch = "x86_64")]
fn run(p: &Params, ctx: &Context) -> Result<Outcome> {
    p.check()?;
    let _pin = crate::timing::team::PinGuard::first_cpu();
    let targets = targets::Targets::new()?;
    if let Some(bad) = targets.checks.iter().find(|c| !c.ok) {
        return Err(Error::validation(format!(
            "target {} ({}..{}) is not what it claims: {}",
            bad.target.name(),
            bad.first,
            bad.last,
            bad.check
        )));
    }
    ctx.progress.start("prefetch-fault", 3);
    let (cells, cells_ok) = cells::measure(p, ctx, &targets)?;
    let moved = targets.recheck();
    if !moved.is_empty() {
        return Err(Error::validation(format!(
            "targets {} changed while they were measured (a new mapping landed on them); rerun",
            moved.join(", ")
        )));
    }
    ctx.progress.advance(1);
    let lists = lists::measure(p, ctx)?;
    ctx.progress.advance(1);
    let (stride, stride_ok) = tlb_walk::measure(p, ctx)?;
    ctx.progress.advance(1);
    Ok(Outcome {
        targets: targets.checks.clone(),
        verdicts: verdict::verdicts(&cells),
        tlb_miss_verdict: verdict::tlb_miss(&stride),
        valid: cells_ok && stride_ok && lists.iter().all(|l| l.checksum_ok),
        cells,
        lists,
        stride,
    })
}
