//! Options of `memperf hugepages -- CMD`.

use crate::error::{Error, Result};
use super::Params;
use crate::model::outcome::hugepages::Arm;
use clap::Args;
use std::ffi::OsString;

#[derive(Debug, Args)]
pub struct Options {
    /// Runs per arm, alternated (10 pairs at least give a verdict) [default: 10]
    #[arg(short = 'n', long = "runs", value_name = "N", allow_hyphen_values = true, value_parser = crate::experiments::options::positive_arg("-n"))]
    pub runs: Option<usize>,
    /// thp (glibc.malloc.hugetlb=1), hugetlb (=2, needs reserved pages) or both [default: thp]
    #[arg(long, value_name = "MODE", value_enum)]
    pub mode: Option<Mode>,
    /// Pass the program's output through (else it is kept and shown only for a failed run).
    #[arg(long)]
    pub show_output: bool,
    /// Also sample the memory of the program's child processes.
    #[arg(long)]
    pub children: bool,
    /// Reserve the 2 MiB pages the hugetlb arm needs (root), and give them back at the end.
    #[arg(long)]
    pub reserve_hugepages: bool,
    #[command(flatten)]
    pub out: crate::experiments::observe::Outputs,
    /// The program and its arguments, after `--` (run without a shell).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// `--mode`: which huge-page arms run beside the run without.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    Thp,
    Hugetlb,
    Both,
}

impl Options {
    pub fn params(&self) -> Result<Params> {
        let rounds = self.runs.unwrap_or(10);
        let arms = match self.mode.unwrap_or(Mode::Thp) {
            Mode::Thp => vec![Arm::Without, Arm::Thp],
            Mode::Hugetlb => vec![Arm::Without, Arm::Hugetlb],
            Mode::Both => vec![Arm::Without, Arm::Thp, Arm::Hugetlb],
        };
        if self.command.is_empty() {
            return Err(Error::usage("no command to run: give it after --, e.g. memperf hugepages -- ./app"));
        }
        Ok(Params {
            command: self.command.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            rounds,
            arms,
            show_output: self.show_output,
            children: self.children,
            reserve_hugepages: self.reserve_hugepages,
        })
    }
}
