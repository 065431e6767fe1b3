//! Options of `memperf wss -- CMD`.

use crate::error::{Error, Result};
use crate::process::hot_set::{Params, DEFAULT_INTERVAL_MS};
use clap::Args;
use std::ffi::OsString;

#[derive(Debug, Args)]
pub struct Options {
    /// Sample the hot set every MS milliseconds (at least 10) [default: 1000, growing with the hot set so that sampling costs the program under 5%]
    #[arg(short = 'I', long = "interval", value_name = "MS", allow_hyphen_values = true, value_parser = crate::experiments::options::interval_arg)]
    pub interval: Option<u64>,
    /// Watch a running process instead of starting one (until it ends or Ctrl-C).
    #[arg(long, value_name = "PID", allow_hyphen_values = true, value_parser = pid_arg)]
    pub pid: Option<i32>,
    /// A memperf result with a tlb run, for the TLB reach
    /// [default: the newest of this host under $MEMPERF_RESULTS, else ./memperf-results and ~/memperf-results, else a quick probe]
    #[arg(long, value_name = "PATH")]
    pub machine_results: Option<std::path::PathBuf>,
    /// Watch the program's child processes too (each mapping under its pid): for shells, make and launchers.
    #[arg(long)]
    pub children: bool,
    /// Also read each mapping page by page (/proc/PID/pagemap) each interval: the 2 MiB spans its
    /// resident pages lie in, with idle-page tracking (root) those accessed, and with soft-dirty
    /// bits the bytes written; costs a read of 8 bytes per resident page per interval (and, with
    /// soft-dirty bits, a fault on each page's first write per interval).
    #[arg(long)]
    pub pages: bool,
    /// Set the hot set beside CPUID's TLB claim instead of measuring the reach first when no saved result has it.
    #[arg(long)]
    pub no_probe: bool,
    #[command(flatten)]
    pub out: crate::experiments::observe::Outputs,
    /// The program and its arguments, after `--` (run without a shell).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// clap's parser of `--pid`: a running process.
fn pid_arg(t: &str) -> std::result::Result<i32, String> {
    match t.trim().parse::<i32>() {
        Ok(p) if p > 0 && std::path::Path::new(&format!("/proc/{p}")).exists() => Ok(p),
        Ok(p) if p > 0 => Err(format!("no such process as {p}")),
        _ => Err("must be a process id".into()),
    }
}

impl Options {
    pub fn params(&self) -> Result<Params> {
        let interval_ms = self.interval.unwrap_or(DEFAULT_INTERVAL_MS);
        let pid = self.pid;
        match (pid.is_some(), self.command.is_empty()) {
            (true, false) => return Err(Error::usage("give either --pid or a command after --, not both")),
            (false, true) => {
                return Err(Error::usage(
                    "no command to watch: give it after --, e.g. memperf wss -- ./app, or --pid PID",
                ))
            }
            _ => {}
        }
        Ok(Params {
            command: self.command.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            pid,
            interval_ms,
            adaptive: self.interval.is_none(),
            machine_results: self.machine_results.clone(),
            probe: !self.no_probe,
            children: self.children,
            pages: self.pages,
            reach: None,
        })
    }
}
