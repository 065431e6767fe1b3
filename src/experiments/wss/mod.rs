//! `memperf wss -- CMD`: a program's hot working set over time, per
//! mapping, against the TLB's reach — the large-working-set diagnosis
//! without a PMU.
//!
//! The program runs (or `--pid` is watched) to its end while its hot set
//! is sampled (`process::hot_set`: DAMON, or the accessed bits; the
//! document says which and why), and its phases and verdict are drawn
//! (`analysis::hot_set`) beside the TLB's reach (`machine::reach`).

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
