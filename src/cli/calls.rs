//! Options of `memperf calls` and `memperf context`.

use super::{list_or, positive_arg, thread_counts, CommonArgs, PresetArgs};
use crate::error::{Error, Result};
use crate::experiments::{calls, context, Preset};
use crate::kernels::calls::Linkage;
use crate::kernels::context::SaveOp;
use clap::Args;

/// Thread counts and samples per cell, shared by `calls` and `context`.
#[derive(Debug, Args)]
pub struct CellArgs {
    /// Thread counts, pinned one per CPU; `all` for every CPU [default: 1, 2, 4 … all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_delimiter = ',', value_parser = super::thread_arg)]
    pub threads: Option<Vec<usize>>,
    /// Samples per cell.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
}

impl CellArgs {
    /// (threads, repetitions) with the preset's as defaults.
    fn apply(&self, threads: Vec<usize>, repetitions: usize) -> Result<(Vec<usize>, usize)> {
        let reps = self.repetitions.unwrap_or(repetitions);
        Ok((thread_counts(&self.threads, threads)?, reps))
    }
}

#[derive(Debug, Args)]
pub struct CallsArgs {
    /// Linkages, comma-separated [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::linkages))]
    pub variants: Option<String>,
    /// Chain depths: a list (1,2,4) or ranges START:END:STEP, comma-separated [default: 1..4096, dense around 4..128]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub depths: Option<String>,
    #[command(flatten)]
    pub cells: CellArgs,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl CallsArgs {
    pub fn params(&self) -> Result<calls::Params> {
        let mut p = calls::Params::preset(self.preset.preset(Preset::Default));
        p.linkages = list_or(&self.variants, p.linkages, Linkage::parse)?;
        if let Some(d) = &self.depths {
            p.depths = depths(d)?;
        }
        (p.threads, p.repetitions) = self.cells.apply(p.threads, p.repetitions)?;
        p.check()?;
        Ok(p)
    }
}

/// `1,2,4,8:64:8,4096`: single depths and START:END:STEP ranges, sorted.
pub fn depths(text: &str) -> Result<Vec<u64>> {
    let mut out: Vec<u64> = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.contains(':') {
            let s = crate::units::named("--depths", crate::units::parse_sweep(item))?;
            if s.end > calls::MAX_DEPTH {
                return Err(Error::usage(format!("--depths {item}: a depth lies in 1..={}", calls::MAX_DEPTH)));
            }
            out.extend(s.values());
        } else {
            let d = item.parse::<u64>().map_err(|_| {
                Error::usage(format!("--depths '{item}': use depths like 1,2,4 or ranges like 4:128:4"))
            })?;
            out.push(d);
        }
    }
    out.sort();
    if let Some(w) = out.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::usage(format!("--depths: depth {} appears twice in '{text}': give each depth once", w[0])));
    }
    Ok(out)
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Saves, comma-separated [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::saves))]
    pub ops: Option<String>,
    #[command(flatten)]
    pub cells: CellArgs,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl ContextArgs {
    pub fn params(&self) -> Result<context::Params> {
        let mut p = context::Params::preset(self.preset.preset(Preset::Default));
        p.ops = list_or(&self.ops, p.ops, SaveOp::parse)?;
        (p.threads, p.repetitions) = self.cells.apply(p.threads, p.repetitions)?;
        p.check()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_mix_lists_and_ranges() {
        assert_eq!(depths("1,2,8:16:4,4096").unwrap(), vec![1, 2, 8, 12, 16, 4096]);
        assert!(depths("0").is_ok(), "0 parses; Params::check refuses it");
        assert!(depths("x").unwrap_err().message.contains("--depths"));
        assert!(depths("1:99999:1").unwrap_err().message.contains("1..=16384"));
    }
}
