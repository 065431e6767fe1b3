//! Options of `memperf prefetch-fault`.

use super::{Params, PrefetchFault, Target};
use crate::error::Result;
use crate::experiments::options::{self, list, list_free, list_or_all, offers, positive, positive_arg, Request, List};
use crate::kernels::Hint;
use clap::Args;

#[derive(Debug, Args)]
pub struct Options {
    /// Prefetch hints, comma-separated [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list_or_all(Hint::parse, offers::hints, || Hint::ALL.to_vec()))]
    pub hint: Option<List<Hint>>,
    /// Targets, comma-separated [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list(Target::parse, offers::targets))]
    pub targets: Option<List<Target>>,
    /// Linked-list lengths [default: 1,2,4,8,16,32,64]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list_free(|t| positive("--lengths", t)))]
    pub lengths: Option<List<usize>>,
    /// Pages ahead for the TLB-miss walk [default: 1,4,16]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list_free(|t| positive("--ahead", t)))]
    pub ahead: Option<List<usize>>,
    /// Samples per variant.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    /// Fresh mappings the TLB-miss walk's repetitions are split among (where its pages and page tables land moves the 4 KiB walk; repetitions sharing a mapping count as one) [default: one per repetition]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--allocations"))]
    pub allocations: Option<usize>,
}

impl options::Options for Options {
    type Experiment = PrefetchFault;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--hint", "t0", "--targets", "null,mapped", "--lengths", "1,2", "--ahead", "1,4", "--repetitions", "2", "--allocations", "2"],
    ];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset);
        p.instructions = List::or(&self.hint, p.instructions);
        p.targets = List::or(&self.targets, p.targets);
        p.list_lengths = List::or(&self.lengths, p.list_lengths);
        p.stride_ahead_pages = List::or(&self.ahead, p.stride_ahead_pages);
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        p.stride_allocations = self.allocations.unwrap_or(p.repetitions);
        Ok(p)
    }
}
