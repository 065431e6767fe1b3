//! Options of `memperf loaded-latency`.

use super::{LoadedLatency, Params};
use crate::error::Result;
use crate::experiments::options::{self, list_free, offers, one, positive_arg, size_arg, Request, List};
use crate::kernels::StreamShape;
use crate::memory::PagePolicy;
use crate::experiments::chase_under_load::{check_memory, kernel_parts};
use crate::units::Bytes;
use clap::Args;

#[derive(Debug, Args)]
pub struct Options {
    /// What the loading CPUs run: simd (read) or a write kernel [default: simd]
    #[arg(long, value_name = "KERNEL", allow_hyphen_values = true, value_parser = one(loader_arg, offers::loaders))]
    pub loader: Option<StreamShape>,
    /// Delays each loader waits after each block, swept: a list with units (0,100ns,1us,20us) [default: 0 to 51.2us, doubling]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = list_free(|t| options::duration_ns("--delays", t)))]
    pub delays: Option<List<u64>>,
    /// Bytes of each loader array a block covers, between two delays (copy moves twice that: it reads one array and writes another) [default: 16KiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub block: Option<Bytes>,
    /// Size of the chase, and of each loader array [default: max(64MiB, 8 × last-level cache)]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub size: Option<Bytes>,
    /// Pages of the chase (4k adds page walks to every load) [default: thp]
    #[arg(long, value_name = "POLICY", allow_hyphen_values = true, value_parser = one(PagePolicy::parse, offers::pages))]
    pub pages: Option<PagePolicy>,
    /// Counted window of each point, after a warm-up of a quarter of it [default: 100ms]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, value_parser = |t: &str| options::duration_ns("--window", t).map_err(|e| e.message))]
    pub window: Option<u64>,
    /// Times each point is measured (every point once per repetition, in a new shuffled order each) [default: 5]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
}

/// clap's parser of `--loader`.
fn loader_arg(text: &str) -> Result<StreamShape> {
    super::loader(StreamShape::parse(text)?)
}

impl options::Options for Options {
    type Experiment = LoadedLatency;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--loader", "triad", "--delays", "0,1us", "--block", "16KiB", "--size", "1MiB"],
        &["--pages", "4k", "--window", "10ms", "--repetitions", "2"],
    ];

    fn params(&self, asked: &Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset, asked.machine);
        p.loader_kernel = self.loader.unwrap_or(p.loader_kernel);
        p.delays_ns = List::or(&self.delays, p.delays_ns);
        let l = &mut p.load;
        l.block_bytes = self.block.unwrap_or(l.block_bytes);
        (l.chase_bytes, p.loader_bytes) = self.size.map_or((l.chase_bytes, p.loader_bytes), |s| (s, s));
        l.pages = self.pages.unwrap_or(l.pages);
        if let Some(w) = self.window {
            (l.window_s, l.warm_s) = (w as f64 * 1e-9, w as f64 * 0.25e-9);
        }
        l.repetitions = self.repetitions.unwrap_or(l.repetitions);
        let parts = kernel_parts(p.loader_kernel);
        check_memory(l.chase_bytes, parts, asked.machine, &format!("the chase and {parts} loader array(s)"))?;
        Ok(p)
    }
}
