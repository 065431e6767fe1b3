//! Options of `memperf page-init`.

use super::{positive_arg, CommonArgs, PresetArgs};
use crate::error::{Error, Result};
use crate::experiments::Preset;
use clap::Args;

#[derive(Debug, Args)]
pub struct PageInitArgs {
    /// Physical memory to model [default: 32GiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = super::size_arg)]
    pub memory: Option<crate::units::Bytes>,
    /// Base page size: 4KiB or 8KiB [default: 4KiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = super::size_arg)]
    pub base_page: Option<crate::units::Bytes>,
    /// Large page size: 2MiB or 4MiB [default: 2MiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = super::size_arg)]
    pub large_page: Option<crate::units::Bytes>,
    /// Memory layout, BASE:SIZE,… [default: generated from --memory, with holes]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub layout: Option<String>,
    /// Prefetch distances in descriptors, START:END:STEP [default: 8:24:8]
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub ahead: Option<String>,
    /// Threads of the parallel variant [default: all CPUs]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--threads"))]
    pub threads: Option<usize>,
    /// Samples per variant.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl PageInitArgs {
    pub fn params(&self) -> Result<crate::experiments::page_init::Params> {
        use crate::units::parse_sweep;
        let mut p = crate::experiments::page_init::Params::preset(self.preset.preset(Preset::Default));
        if let Some(m) = self.memory {
            p.memory_bytes = m;
        }
        if let Some(b) = self.base_page {
            p.base_page_bytes = b;
            if !matches!(p.base_page_bytes.0, 4096 | 8192) {
                return Err(Error::usage(format!("--base-page {b}: use 4KiB or 8KiB")));
            }
        }
        if let Some(l) = self.large_page {
            p.large_page_bytes = l;
            if !matches!(p.large_page_bytes.0, 0x20_0000 | 0x40_0000) {
                return Err(Error::usage(format!("--large-page {l}: use 2MiB or 4MiB")));
            }
        }
        if let Some(l) = &self.layout {
            p.layout = crate::experiments::page_init::parse_layout(l)?;
        }
        if let Some(a) = &self.ahead {
            p.ahead = crate::units::named("--ahead", parse_sweep(a))?;
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
