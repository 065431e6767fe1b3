//! Options of `memperf tlb`.

use super::{list_or, positive, CommonArgs, PresetArgs};
use crate::error::Result;
use crate::experiments::Preset;
use clap::Args;

#[derive(Debug, Args)]
pub struct TlbArgs {
    /// Page policies, comma-separated, measured alternately [default: 4k,thp]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::pages))]
    pub pages: Option<String>,
    /// Most pages per policy [default: 65536]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_pages: Option<String>,
    /// Most memory per policy [default: 2GiB]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = super::size_arg)]
    pub max_bytes: Option<crate::units::Bytes>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TlbArgs {
    pub fn params(&self) -> Result<crate::experiments::tlb::Params> {
        let mut p = crate::experiments::tlb::Params::preset(self.preset.preset(Preset::Default));
        p.pages = list_or(&self.pages, p.pages, crate::memory::PagePolicy::parse)?;
        if let Some(n) = &self.max_pages {
            p.max_pages = positive("--max-pages", n)? as u64;
        }
        if let Some(b) = self.max_bytes {
            p.max_bytes = b;
        }
        Ok(p)
    }
}
