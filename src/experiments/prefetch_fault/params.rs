//! What `prefetch-fault` measures: the instructions, the bad targets, the
//! list walks and the page-stride walk, at each preset, checked for range.

use super::Target;
use crate::error::{Error, Result};
use crate::experiments::Preset;
use crate::kernels::Hint;
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};

/// A document from before the walk was split among mappings walked one.
fn one() -> usize {
    1
}

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
    /// Fresh mappings the page-stride walk's repetitions are split among
    /// (where its pages and page tables land moves the 4 KiB walk).
    #[serde(default = "one")]
    pub stride_allocations: usize,
    pub stride_hint: Hint,
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: Preset) -> Params {
        // Full: 100 ms samples, so that each cell runs ≥ 1 s and its system
        // time is resolved by the clock tick.
        // The walk maps anew every repetition: where its pages and page
        // tables land is a level of its own, and repetitions sharing a
        // mapping count as one unit of evidence.
        let (sample, reps, nodes, region, pages) = match preset {
            Preset::Quick => (0.003, 10, 1 << 16, 64 * MIB, 1 << 14),
            Preset::Default => (0.01, 10, 1 << 18, 256 * MIB, 1 << 16),
            Preset::Full => (0.1, 10, 1 << 20, 1024 * MIB, 1 << 17),
        };
        let allocations = reps;
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
            stride_allocations: allocations,
            stride_hint: Hint::T0,
            seed: 0x7072_6566,
        }
    }

    /// The walk's repetitions of each fresh mapping: split as evenly as
    /// they go among `stride_allocations` (one repetition each at least).
    pub fn groups(&self) -> Vec<usize> {
        crate::timing::schedule::shares(self.repetitions, self.stride_allocations)
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


#[cfg(test)]
mod tests {
    use super::*;

    /// The walk's repetitions split among its mappings; a document from
    /// before the split walked one mapping.
    #[test]
    fn the_walks_repetitions_are_shared_among_its_mappings() {
        let mut p = Params::preset(Preset::Quick);
        (p.repetitions, p.stride_allocations) = (10, 3);
        assert_eq!(p.groups(), vec![4, 3, 3]);
        let old: Params = serde_json::from_value({
            let mut v = serde_json::to_value(Params::preset(Preset::Quick)).unwrap();
            v.as_object_mut().unwrap().remove("stride_allocations");
            v
        })
        .unwrap();
        assert_eq!(old.stride_allocations, 1, "a document from before walked one mapping");
    }
}
