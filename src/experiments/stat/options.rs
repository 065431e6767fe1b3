//! Options of `memperf stat -- CMD`.

use crate::error::{Error, Result};
use super::Params;
use crate::machine::saved as figures;
use crate::machine::Fingerprint;
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct Options {
    /// Events to count: perf names (cycles, instructions, dTLB-load-misses, page-faults …),
    /// this CPU's named events (dtlb-walks, loads), rNNNN, or pmu/event=…,umask=…/
    /// [default: the events the derived metrics use, and the software events]
    #[arg(short = 'e', long = "events", value_name = "LIST", allow_hyphen_values = true,
          value_parser = crate::experiments::options::offers::Offers(crate::experiments::options::offers::events), hide_possible_values = true)]
    pub events: Option<String>,
    /// Also print the counts of every interval of MS milliseconds while CMD runs (at least 10).
    #[arg(short = 'I', long = "interval", value_name = "MS", allow_hyphen_values = true,
          value_parser = crate::experiments::options::millis_arg(10, 3_600_000))]
    pub interval: Option<u64>,
    /// More derived metrics (a JSON list of {name, formula: [..], unit, description})
    /// [default: ~/.config/memperf/metrics.json when it exists]
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// A memperf result with a tlb run, for the page-walk cost
    /// [default: the newest of this host under $MEMPERF_RESULTS, else ./memperf-results and ~/memperf-results]
    #[arg(long, value_name = "PATH")]
    pub machine_results: Option<PathBuf>,
    /// Also sample the program's hot working set, as `memperf wss` does, every MS milliseconds,
    /// and set it beside the TLB's reach [default: 1000, growing so that sampling costs under 5%]
    #[arg(long, value_name = "MS", num_args = 0..=1, require_equals = true, allow_hyphen_values = true,
          value_parser = crate::experiments::options::interval_arg)]
    pub wss: Option<Option<u64>>,
    /// With --wss, set the hot set beside CPUID's TLB claim instead of measuring the reach first
    /// when no saved result has it.
    #[arg(long, requires = "wss")]
    pub no_probe: bool,
    #[command(flatten)]
    pub out: crate::experiments::observe::Outputs,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

impl Options {
    /// `--wss[=MS]`: the hot set's sampling, as `memperf wss -I MS` would.
    fn wss_params(&self) -> Result<Option<crate::process::hot_set::Params>> {
        let Some(asked) = &self.wss else { return Ok(None) };
        let interval_ms = asked.unwrap_or(crate::process::hot_set::DEFAULT_INTERVAL_MS);
        Ok(Some(crate::process::hot_set::Params {
            command: self.command.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            pid: None,
            interval_ms,
            adaptive: asked.is_none(),
            machine_results: self.machine_results.clone(),
            probe: !self.no_probe,
            children: false,
            pages: false,
            reach: None,
        }))
    }

    pub fn params(&self, machine: &Fingerprint) -> Result<Params> {
        let events = match &self.events {
            Some(list) => crate::counters::events::resolve_list(list, &machine.cpu.identity)
                .map_err(|e| Error::usage(format!("-e: {e}")))?,
            None => crate::counters::events::default_set(&machine.cpu.identity),
        };
        let interval_ms = self.interval;
        let metrics = crate::counters::metrics::load(self.metrics.as_deref()).map_err(Error::usage)?;
        Ok(Params {
            command: self.command.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            events,
            interval_ms,
            metrics,
            figures: figures::gather(machine, self.machine_results.as_deref())?,
            thp_mode: machine.thp.enabled.clone(),
            wss: self.wss_params()?,
        })
    }
}
