//! `memperf wss -- CMD`: a program's hot working set over time, per
//! mapping, against the TLB's reach — the large-working-set diagnosis
//! without a PMU.
//!
//! The program runs (or `--pid` is watched) to its end while its hot set
//! is sampled (`process::hot_set`: DAMON, or the accessed bits; the
//! document says which and why), and its phases and verdict are drawn
//! (`analysis::hot_set`) beside the TLB's reach (`machine::reach`).

pub mod options;

pub use options::Options;

use crate::error::{Error, Result};
use crate::model::outcome::wss::{Interval, Outcome, Reach};
use crate::process::hot_set::{sample_until, Params};
use crate::process::{Exit, Program};
use std::time::{Duration, Instant};

pub use crate::analysis::hot_set::{conclude, verdict};
pub use crate::process::hot_set::{check_pid, DEFAULT_INTERVAL_MS, MIN_INTERVAL_MS};

/// Runs the program (or watches `--pid`) to its end and draws the phases
/// and the verdict.
pub fn run(
    program: Option<&Program>,
    p: &Params,
    reach: Option<Reach>,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<Outcome> {
    let t0 = Instant::now();
    let (sampled, exit, wall_s, usage_peak) = match (program, p.pid) {
        (Some(program), _) => {
            let held = crate::process::spawn_held(program, &[], None)?;
            let shown = program.argv[0].to_string_lossy().into_owned();
            let running = held.release(&shown)?;
            let mut ended: Option<(Exit, crate::process::ChildUsage)> = None;
            let mut done = |left: Duration| {
                ended = running.wait_for(left);
                ended.is_some()
            };
            let sampled = sample_until(running.pid, p, t0, &mut done, on_interval);
            let (exit, usage) = match ended {
                Some(e) => e,
                None => running.wait_blocking(),
            };
            (sampled?, Some(exit), t0.elapsed().as_secs_f64(), usage.max_rss_bytes)
        }
        (None, Some(pid)) => {
            let mut done = |left: Duration| {
                std::thread::sleep(left);
                !std::path::Path::new(&format!("/proc/{pid}")).exists()
            };
            let sampled = sample_until(pid, p, t0, &mut done, on_interval)?;
            (sampled, None, t0.elapsed().as_secs_f64(), 0)
        }
        (None, None) => return Err(Error::usage("no program to watch: give it after --, or a running one with --pid")),
    };
    Ok(conclude(sampled, p, reach, exit, wall_s, usage_peak))
}

/// `memperf wss -- CMD` (or `--pid PID`): the hot set each interval said as
/// it is sampled, the report on stdout after the program ends; memperf
/// exits with the program's status (0 for a watched pid).
pub struct Wss;

impl crate::experiments::observe::Observe for Wss {
    const NAME: &'static str = "wss";
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--interval", "100", "--pid", "1", "--machine-results", "r"],
    ];
    type Options = Options;
    type Params = Params;
    type Outcome = Outcome;
    const MISSING_PROGRAM_IS_BAD_INPUT: bool = true;
    const REPORT_ON_STDERR: bool = false;

    /// A pid this user may not watch is refused here, before anything runs.
    fn params(o: &Options, _machine: &crate::machine::Fingerprint) -> Result<Params> {
        let p = o.params()?;
        if let Some(pid) = p.pid {
            check_pid(pid)?;
        }
        Ok(p)
    }
    fn outputs(o: &Options) -> &crate::experiments::observe::Outputs {
        &o.out
    }
    fn inputs(o: &Options) -> Vec<&std::path::Path> {
        o.machine_results.as_deref().into_iter().collect()
    }
    fn command(o: &Options) -> Option<&[std::ffi::OsString]> {
        o.pid.is_none().then_some(o.command.as_slice())
    }
    /// The TLB reach its hot set is set beside.
    fn prepare(
        p: &mut Params,
        machine: &crate::machine::Fingerprint,
        probe: crate::machine::reach::Probe,
    ) -> Result<Vec<String>> {
        let (reach, said) = crate::machine::reach::decide(machine, p.machine_results.as_deref(), p.probe.then_some(probe))?;
        p.reach = reach;
        Ok(vec![said])
    }
    fn observe(
        p: &Params,
        program: Option<&Program>,
        _machine: &crate::machine::Fingerprint,
        say: &mut dyn FnMut(&str),
    ) -> Result<Outcome> {
        let mut live = |i: &Interval| {
            let (hot, resident) = (crate::units::Bytes(i.hot_bytes()), crate::units::Bytes(i.rss_bytes()));
            say(&format!("memperf wss: {:>7.2} s  hot {:>10}  resident {:>10}", i.t_s, hot.to_string(), resident.to_string()));
        };
        run(program, p, p.reach.clone(), &mut live)
    }
    fn status(o: &Outcome, _valid: bool) -> u8 {
        o.exit.map_or(0, |e| e.shell_status())
    }
}

/// `report --reanalyze` draws none of its stored claims again.
impl crate::model::Redraw for Outcome {}
