//! Options of `memperf prefetch-fault`.

use super::{list_or, positive, positive_arg, CommonArgs, PresetArgs};
use crate::error::{Error, Result};
use crate::experiments::Preset;
use clap::Args;

#[derive(Debug, Args)]
pub struct PrefetchFaultArgs {
    /// Prefetch hints, comma-separated [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::hints))]
    pub hint: Option<String>,
    /// Targets, comma-separated [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::targets))]
    pub targets: Option<String>,
    /// Linked-list lengths [default: 1,2,4,8,16,32,64]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub lengths: Option<String>,
    /// Pages ahead for the TLB-miss walk [default: 1,4,16]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub ahead: Option<String>,
    /// Samples per variant.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl PrefetchFaultArgs {
    pub fn params(&self) -> Result<crate::experiments::prefetch_fault::Params> {
        use crate::experiments::prefetch_fault::{Params, Target};
        let mut p = Params::preset(self.preset.preset(Preset::Default));
        p.instructions = match self.hint.as_deref().map(str::trim) {
            Some("all") => crate::kernels::Hint::ALL.to_vec(),
            _ => list_or(&self.hint, p.instructions, crate::kernels::Hint::parse)?,
        };
        p.targets = list_or(&self.targets, p.targets, |t| {
            serde_json::from_value::<Target>(serde_json::Value::String(t.to_string())).map_err(|_| {
                Error::usage(format!(
                    "unknown target '{t}': use mapped, null, unmapped, prot-none, kernel or non-canonical"
                ))
            })
        })?;
        p.list_lengths = list_or(&self.lengths, p.list_lengths, |t| positive("--lengths", t))?;
        p.stride_ahead_pages = list_or(&self.ahead, p.stride_ahead_pages, |t| positive("--ahead", t))?;
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        Ok(p)
    }
}
