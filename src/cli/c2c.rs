//! Options of `memperf c2c`.

use super::{list_or, positive_arg, CommonArgs, PresetArgs};
use crate::error::{Error, Result};
use crate::experiments::Preset;
use crate::kernels::c2c::Handoff;
use clap::Args;

#[derive(Debug, Args)]
pub struct C2cArgs {
    /// CPUs whose pairs to measure [default: the CPUs this process may use, the first 16]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub cpus: Option<String>,
    /// How the line changes hands, comma-separated [default: both]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = super::offers::Offers(super::offers::handoffs))]
    pub handoff: Option<String>,
    /// Samples per pair [default: 7]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl C2cArgs {
    pub fn params(&self) -> Result<crate::experiments::c2c::Params> {
        let mut p = crate::experiments::c2c::Params::preset(self.preset.preset(Preset::Default));
        if let Some(list) = &self.cpus {
            let allowed = crate::timing::team::allowed_cpus();
            let cpus = crate::machine::sysfs::cpu_list(list);
            if let Some(c) = cpus.iter().enumerate().find_map(|(i, c)| cpus[..i].contains(c).then_some(c)) {
                return Err(Error::usage(format!("--cpus: CPU {c} appears twice in '{list}': give each CPU once")));
            }
            if cpus.is_empty() {
                return Err(Error::usage(format!("--cpus '{list}': give CPU numbers, e.g. --cpus 0-3 or --cpus 0,8")));
            }
            if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
                return Err(Error::usage(format!(
                    "--cpus: CPU {c} is not one this process may use ({}); pick from those",
                    allowed.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
                )));
            }
            p.cpus = cpus;
        }
        p.handoffs = list_or(&self.handoff, p.handoffs, Handoff::parse)?;
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        Ok(p)
    }
}
