//! Options of `memperf tlb`.

use super::{Params, Tlb};
use crate::error::Result;
use crate::experiments::options::{self, list, offers, positive_arg, size_arg, Request, List};
use crate::memory::PagePolicy;
use crate::units::Bytes;
use clap::Args;

#[derive(Debug, Args)]
pub struct Options {
    /// Page policies, comma-separated, measured alternately [default: 4k,thp]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list(PagePolicy::parse, offers::pages))]
    pub pages: Option<List<PagePolicy>>,
    /// Most pages per policy [default: 65536]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--max-pages"))]
    pub max_pages: Option<usize>,
    /// Most memory per policy [default: 2GiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub max_bytes: Option<Bytes>,
}

impl options::Options for Options {
    type Experiment = Tlb;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--pages", "4k", "--max-pages", "64", "--max-bytes", "1MiB"],
    ];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset);
        p.pages = List::or(&self.pages, p.pages);
        if let Some(n) = self.max_pages {
            p.max_pages = n as u64;
        }
        if let Some(b) = self.max_bytes {
            p.max_bytes = b;
        }
        Ok(p)
    }
}
