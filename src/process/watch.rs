//! Watching a program run, for the commands around a program: fork it held,
//! attach its counters (inherited by its threads and children, enabled at
//! its exec), pass signals on, release it, and until it ends wake every
//! period to sample /proc/PID/smaps_rollup (and, when asked, read interval
//! rows of the counters); otherwise sleep in poll on its pidfd, so it costs
//! the program nothing between samples.

use crate::counters::{CounterBackend, CounterStatus, EventSpec, Reading, RunningCounter, Target, Unavailable};
use crate::error::Result;
use crate::process::memory::{self, MemorySample};
use crate::process::{signals::Forwarding, ChildUsage, Exit, Program};
use memperf_model::outcome::stat::{EventCount, Interval};
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

/// How to watch one run.
pub struct Watch<'a> {
    pub events: &'a [EventSpec],
    /// Added to the program's environment.
    pub env: &'a [(OsString, OsString)],
    /// Where its stdout and stderr go instead of memperf's.
    pub output: Option<&'a OwnedFd>,
    pub period: Duration,
    /// Read the counters at every period, as interval rows.
    pub interval_rows: bool,
    /// Sample the memory of its child processes too.
    pub children: bool,
    /// Also sample its hot set at these intervals (`stat --wss`).
    pub wss: Option<&'a super::hot_set::Params>,
}

/// What the run collected.
pub struct Observation {
    pub exit: Exit,
    pub usage: ChildUsage,
    pub wall_s: f64,
    pub intervals: Vec<Interval>,
    pub memory_samples: Vec<MemorySample>,
    /// Each event's total: measured, scaled, or why not.
    pub events: Vec<EventCount>,
    /// The hot set's intervals, when asked for.
    pub wss: Option<super::hot_set::SamplingRecord>,
}

type Opened = std::result::Result<Box<dyn RunningCounter>, Unavailable>;
type Read = std::result::Result<Reading, String>;

/// Reads every opened counter; an unreadable one is `Err` with the reason.
fn read_all(counters: &mut [Opened]) -> Vec<Read> {
    counters
        .iter_mut()
        .map(|c| match c {
            Ok(c) => c.read().map_err(|e| format!("counter read failed: {e}")),
            Err(u) => Err(u.reason.clone()),
        })
        .collect()
}

/// What the next row counts from: each counter's reading now, or, where
/// this read failed, the last that did (from zero there, the next row would
/// count the whole run again).
fn carried(now: &[Read], before: &[Option<Reading>]) -> Vec<Option<Reading>> {
    now.iter().zip(before).map(|(n, b)| n.as_ref().ok().copied().or(*b)).collect()
}

/// The change of each counter since `before`, as an interval row.
fn interval_counts(now: &[Read], before: &[Option<Reading>]) -> Vec<Option<f64>> {
    now.iter()
        .zip(before)
        .map(|(n, b)| {
            let n = *n.as_ref().ok()?;
            let delta = n - b.unwrap_or(Reading { count: 0, time_enabled_ns: 0, time_running_ns: 0 });
            if delta.time_enabled_ns == 0 {
                // A task's counters advance only while it is on a CPU: an
                // interval in which it never ran counted exactly nothing.
                return Some(delta.count as f64);
            }
            delta.status().value().map(|v| v.0)
        })
        .collect()
}

/// The status of each event's total.
fn totals(events: &[EventSpec], totals: &[Read], opened: &[Opened]) -> Vec<EventCount> {
    events
        .iter()
        .zip(totals.iter().zip(opened))
        .map(|(spec, (total, open))| {
            let status = match (open, total) {
                (Err(u), _) => u.clone().into(),
                (Ok(_), Ok(r)) => r.status(),
                (Ok(_), Err(reason)) => CounterStatus::Unavailable { reason: reason.clone(), fix: None },
            };
            let mut e = crate::counters::event_count(spec, status);
            if matches!(open, Ok(c) if !c.counts_kernel()) {
                e.description.push_str(" (user mode only: perf_event_paranoid keeps kernel-mode counts out)");
            }
            e
        })
        .collect()
}

/// Runs the program to its end under `watch`; `on_interval` sees each
/// interval row as it is made.
pub fn observe(
    program: &Program,
    watch: &Watch,
    backend: &dyn CounterBackend,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<Observation> {
    let held = crate::process::spawn_held(program, watch.env, watch.output)?;
    let mut counters: Vec<Opened> =
        watch.events.iter().map(|e| backend.open_event(e, Target::Child(held.pid))).collect();
    let _forwarding = Forwarding::install(held.pid);
    // An interrupt that came before the signals were passed on to the
    // program: it never starts (the held child exits when dropped).
    if crate::interrupt::requested() {
        return Err(crate::error::Error::interrupted());
    }
    let shown = program.argv[0].to_string_lossy().into_owned();
    let t0 = Instant::now();
    let running = held.release(&shown)?;
    let mut hot = watch.wss.map(|p| super::hot_set::Sampler::start(running.pid, p, t0)).transpose()?;
    let mut previous: Vec<Option<Reading>> = vec![None; counters.len()];
    let mut intervals = Vec::new();
    let mut memory_samples = Vec::new();
    let mut tick = 1u32;
    let (exit, usage) = loop {
        let tick_at = t0 + watch.period * tick;
        let wake = hot.as_ref().filter(|h| !h.over()).map_or(tick_at, |h| h.due().min(tick_at));
        if let Some(done) = running.wait_for(wake.saturating_duration_since(Instant::now())) {
            break done;
        }
        if let Some(h) = hot.as_mut().filter(|h| Instant::now() >= h.due()) {
            h.sample();
        }
        if Instant::now() < tick_at {
            continue;
        }
        let t_s = t0.elapsed().as_secs_f64();
        let mem = if watch.children { memory::sample_tree(running.pid, t_s) } else { memory::sample(running.pid, t_s) };
        memory_samples.extend(mem);
        if watch.interval_rows {
            let now = read_all(&mut counters);
            intervals.push(Interval { t_s, counts: interval_counts(&now, &previous), memory: mem });
            on_interval(intervals.last().expect("just pushed"));
            previous = carried(&now, &previous);
        }
        tick += 1;
    };
    let wall_s = t0.elapsed().as_secs_f64();
    let last = read_all(&mut counters);
    if watch.interval_rows {
        intervals.push(Interval { t_s: wall_s, counts: interval_counts(&last, &previous), memory: None });
    }
    let events = totals(watch.events, &last, &counters);
    Ok(Observation { exit, usage, wall_s, intervals, memory_samples, events, wss: hot.map(|h| h.finish()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read that fails gives its row no count, and the next row counts
    /// from the last reading that came, so the rows still add up to the
    /// total (counting from zero, the third row would read 30).
    #[test]
    fn a_failed_read_does_not_make_the_next_row_count_from_zero() {
        let r = |count| Ok(Reading { count, time_enabled_ns: count, time_running_ns: count });
        let reads: [Read; 3] = [r(10), Err("the counter went away".into()), r(30)];
        let mut previous = vec![None];
        let mut rows = Vec::new();
        for now in reads {
            let now = [now];
            rows.push(interval_counts(&now, &previous)[0]);
            previous = carried(&now, &previous);
        }
        assert_eq!(rows, [Some(10.0), None, Some(20.0)]);
    }
}
