//! Options of `memperf page-init`.

use super::{PageInit, Params};
use crate::error::{Error, Result};
use crate::experiments::options::{self, list_free, positive_arg, size_arg, sweep_arg, Request, List};
use crate::units::{Bytes, Sweep};
use clap::Args;

#[derive(Debug, Args)]
pub struct Options {
    /// Physical memory to model [default: 16GiB; quick 1GiB, full 64GiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub memory: Option<Bytes>,
    /// Base page size: 4KiB or 8KiB [default: 4KiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub base_page: Option<Bytes>,
    /// Large page size: 2MiB or 4MiB [default: 2MiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub large_page: Option<Bytes>,
    /// Memory layout, BASE:SIZE,… [default: generated from --memory, with holes]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list_free(super::parse_range))]
    pub layout: Option<List<(Bytes, Bytes)>>,
    /// Prefetch distances in descriptors, START:END:STEP [default: 8:24:8]
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true, value_parser = sweep_arg)]
    pub ahead: Option<Sweep>,
    /// Threads of the parallel variant [default: all CPUs]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--threads"))]
    pub threads: Option<usize>,
    /// Samples per variant.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
}

impl options::Options for Options {
    type Experiment = PageInit;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--memory", "1GiB", "--base-page", "4KiB", "--large-page", "2MiB", "--ahead", "8:16:8"],
        &["--layout", "0:512MiB,4GiB:512MiB", "--threads", "1", "--repetitions", "2"],
    ];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset);
        if let Some(m) = self.memory {
            p.memory_bytes = m;
        }
        if let Some(b) = self.base_page {
            p.base_page_bytes = b;
            if !matches!(b.0, 4096 | 8192) {
                return Err(Error::usage(format!("--base-page {b}: use 4KiB or 8KiB")));
            }
        }
        if let Some(l) = self.large_page {
            p.large_page_bytes = l;
            if !matches!(l.0, 0x20_0000 | 0x40_0000) {
                return Err(Error::usage(format!("--large-page {l}: use 2MiB or 4MiB")));
            }
        }
        if let Some(l) = &self.layout {
            p.layout = l.0.clone();
        }
        if let Some(a) = self.ahead {
            p.ahead = a;
        }
        if let Some(t) = self.threads {
            p.threads = t;
        }
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        Ok(p)
    }
}
