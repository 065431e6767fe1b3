//! Options of `memperf bandwidth`.

use super::{Bandwidth, Params};
use crate::error::Result;
use crate::experiments::options::{
    self, list, list_or_all, offers, positive_arg, size_arg, sweep_arg, thread_arg, thread_counts, Request, List,
};
use crate::kernels::{Hint, StreamShape};
use crate::machine::Fingerprint;
use crate::memory::PagePolicy;
use crate::units::Bytes;
use clap::Args;

#[derive(Debug, Args)]
pub struct Options {
    /// Loop shapes, comma-separated: read (sum1, sum4, simd, simd-prefetch), write, and read:write mixes (mix-R:W) [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list(StreamShape::parse, offers::kernels))]
    pub kernel: Option<List<StreamShape>>,
    /// Page policies, comma-separated [default: 4k]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list(PagePolicy::parse, offers::pages))]
    pub pages: Option<List<PagePolicy>>,
    /// Thread counts, pinned one per CPU; `all` for every CPU [default: 1,all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_delimiter = ',', value_parser = thread_arg)]
    pub threads: Option<Vec<usize>>,
    /// Size of each array (write kernels use four: A, B, C, D) [default: max(1GiB, 8 × last-level cache)]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub size: Option<Bytes>,
    /// Prefetch distances in 8-byte elements, START:END:STEP [default: 0:1024:64; quick 0:1024:512, full 0:1024:32]
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true, value_parser = sweep_arg)]
    pub distance: Option<crate::units::Sweep>,
    /// Prefetch hints, comma-separated, or all [default: t0,nta; quick t0]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list_or_all(Hint::parse, offers::hints_or_all, || Hint::ALL.to_vec()))]
    pub hint: Option<List<Hint>>,
    /// Samples per variant.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    /// 2: simd also reads fragmented memory (4 KiB pages first touched in a shuffled order) beside the read array, a figure and a verdict of its own; 1: the read array alone [default: 2]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--frame-sets"))]
    pub frame_sets: Option<usize>,
}

impl options::Options for Options {
    type Experiment = Bandwidth;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--kernel", "sum1,mix-2:1", "--pages", "4k", "--threads", "1,all", "--size", "1MiB"],
        &["--distance", "0:64:32", "--hint", "all", "--repetitions", "2", "--frame-sets", "2"],
    ];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset, asked.machine);
        p.kernels = List::or(&self.kernel, p.kernels);
        p.pages = List::or(&self.pages, p.pages);
        p.threads = thread_counts(&self.threads, p.threads)?;
        if let Some(s) = self.size {
            p.size_bytes = s;
        }
        if let Some(d) = &self.distance {
            p.distance_elements = *d;
        }
        p.hints = List::or(&self.hint, p.hints);
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        if let Some(f) = self.frame_sets {
            p.frame_sets = f;
        }
        // The ranges first: a count out of range would make no sense of memory.
        super::check(&p)?;
        check_memory(&p, asked.machine)?;
        Ok(p)
    }
}

/// The arrays of all base-page policies must fit in available memory: one
/// per policy, four more when a write kernel is asked for, and the
/// fragmented array beside the read array.
fn check_memory(p: &Params, machine: &Fingerprint) -> Result<()> {
    let per_policy = if p.kernels.iter().any(|k| k.writes()) { 5 } else { 1 };
    let frames = super::frames::extra_small_arrays(p);
    let arrays = (per_policy * p.pages.iter().filter(|pol| !pol.uses_hugetlb_pool()).count() as u64).saturating_add(frames);
    let avail = machine.memory_available_bytes;
    crate::memory::check_fits(
        Bytes(p.size_bytes.0.saturating_mul(arrays)),
        avail,
        &format!("--size {} × {arrays} array(s)", p.size_bytes),
        format!("use --size {} or less", Bytes(avail.map_or(0, |a| a.0) / arrays.max(1) / 2)),
    )
}
