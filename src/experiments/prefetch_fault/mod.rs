//! `memperf prefetch-fault`: what a software prefetch of a bad address
//! costs, and whether a prefetch that misses the TLB walks the page table.
//! [`cells`]: every prefetch instruction against mapped lines, NULL, holes,
//! PROT_NONE, kernel and non-canonical addresses (each verified by
//! [`targets`]), beside the same instruction on mapped lines, in a throughput
//! and a latency-bound loop. [`lists`]: short NULL-ended lists prefetching k
//! ahead. [`tlb_walk`]: a 4 KiB walk prefetching D pages ahead, against huge
//! pages. [`verdict`] turns them into one finding per instruction and loop.
//! The method, step by step: docs/methods/prefetch-fault.md.

mod cells;
mod lists;
pub mod options;
mod params;

pub use options::Options;
pub use params::Params;
pub mod targets;
mod tlb_walk;
pub mod verdict;

use super::estimate::Rates;
use super::{Bench, Experiment};
use crate::error::{Error, Result};
pub use crate::model::outcome::prefetch_fault::*;
use crate::timing::schedule;
use crate::units::Bytes;

/// Seconds the experiment takes: the cells (each instruction on each
/// target in two loops, beside the same loop on mapped lines; a warm-up of
/// 2^16 prefetches each), the list walks (three variants per length, a
/// list set of `list_nodes` nodes each), and the page-stride walk (4 KiB
/// and THP, each distance beside none; one walk of `stride_pages` pages is
/// an iteration; each share of its repetitions on regions of its own).
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
    // Each share of the repetitions maps, fills and warms its own regions.
    let bytes = Bytes(p.stride_pages as u64 * 4096);
    let stride_s: f64 = p
        .groups()
        .into_iter()
        .map(|repetitions| {
            let mut stride_plan = schedule::Plan::new(repetitions, p.min_sample_s);
            stride_plan.reference_of = reference_of.clone();
            schedule::estimate_s(&stride_plan, &unit, &unit)
                + r.fault_s(bytes, Small)
                + r.fault_s(bytes, Thp)
                + 2.0 * bytes.0 as f64 / r.read_bps(1)
        })
        .sum();
    cells_s + lists_s + stride_s
}

pub struct PrefetchFault;

impl Experiment for PrefetchFault {
    const NAME: &'static str = "prefetch-fault";
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    fn estimate_s(p: &Params, m: &crate::machine::Fingerprint, r: &super::estimate::Rates) -> f64 {
        estimate_s(p, m, r)
    }
    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        p.check()?;
        Ok(Default::default())
    }
    fn shrink(p: &mut Params, _: &crate::machine::Fingerprint) -> bool {
        use super::fit::{fewer, halve_sample, step};
        step(p.stride_pages > 1 << 14, || p.stride_pages /= 2)
            || fewer(&mut p.repetitions, crate::timing::schedule::MIN_PAIRS_FOR_VERDICT, 2)
            || halve_sample(&mut p.min_sample_s, 0.002)
    }
    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
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
        verdicts: verdict::verdicts(&cells, ctx.machine.core_ghz()),
        tlb_miss_verdict: verdict::tlb_miss(&stride),
        valid: cells_ok && stride_ok && lists.iter().all(|l| l.checksum_ok),
        cells,
        lists,
        stride,
    })
}

/// `report --reanalyze` draws none of its stored claims again.
impl crate::model::Redraw for Outcome {
    /// `report --reanalyze`: the verdicts drawn again from the cells, each
    /// mapped-line reference checked first (at the clock of its record).
    fn reanalyse(&mut self, _: &crate::machine::Fingerprint, ghz: Option<f64>) -> Vec<&'static str> {
        self.verdicts = verdict::verdicts(&self.cells, ghz);
        vec!["verdicts"]
    }
}
