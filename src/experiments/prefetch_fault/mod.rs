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

use super::{Bench, Experiment};
use crate::error::{Error, Result};
pub use crate::model::outcome::prefetch_fault::*;

pub struct PrefetchFault;

impl Experiment for PrefetchFault {
    const NAME: &'static str = "prefetch-fault";
    const SHARE: f64 = 4.5;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        p.check()?;
        Ok(Default::default())
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
    // In order of value, while the share lasts: the cells (the bad-address
    // verdicts), the walk past the TLB (its verdict), the lists. Each is a
    // kind of its own: one starts while any of the share is left.
    let (mut cells, mut cells_ok) = (Vec::new(), true);
    let (mut lists, mut stride, mut stride_ok) = (Vec::new(), Vec::new(), true);
    let parts = vec![(Part::Cells, 2.0), (Part::Walk, 1.0), (Part::Lists, 0.5)];
    ctx.sweep("prefetch-fault's cells, TLB walk and lists", parts, |part| {
        match part {
            Part::Cells => {
                (cells, cells_ok) = cells::measure(p, ctx, &targets)?;
                let moved = targets.recheck();
                if !moved.is_empty() {
                    return Err(Error::validation(format!(
                        "targets {} changed while they were measured (a new mapping landed on them); rerun",
                        moved.join(", ")
                    )));
                }
            }
            Part::Walk => (stride, stride_ok) = tlb_walk::measure(p, ctx)?,
            Part::Lists => lists = lists::measure(p, ctx)?,
        }
        ctx.progress.advance(1);
        Ok(())
    })?;
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

/// A part of prefetch-fault's sweep.
enum Part {
    Cells,
    Walk,
    Lists,
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
