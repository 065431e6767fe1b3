//! A thread's counted window: work repeated back to back (with an optional
//! wait after each call) until a deadline, counting only the calls that
//! start inside the window after a warm-up. The chaser and the loading
//! threads of `loaded-latency` and `curves` run through it, so a fake clock
//! gives exact counts.

use super::Clock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one thread did inside the counted window: calls counted, the span
/// they took (from the first counted call's start to the start of the call
/// that found the window over), and whether every call validated.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Window {
    pub calls: u64,
    pub span_ns: u64,
    pub ok: bool,
}

/// Calls `work(i)` back to back until the clock reaches `end_ns`, waiting
/// `delay_ns` (read on `clock`) after each call; counts the calls that
/// start at or after `count_from_ns`. Both the chaser (no delay) and the
/// loaders run through this loop, so a fake clock gives exact counts.
pub fn repeat_until(
    clock: &dyn Clock,
    delay_ns: u64,
    count_from_ns: u64,
    end_ns: u64,
    work: impl FnMut(u64) -> bool,
) -> Window {
    repeat(clock, count_from_ns, end_ns, work, || {
        if delay_ns > 0 {
            let until = clock.now_ns() + delay_ns;
            while clock.now_ns() < until {
                std::hint::spin_loop();
            }
        }
    })
}

/// As [`repeat_until`], but the wait after each call is `pause_iters`
/// turns of [`pause`] (calibrated by [`pause_ns_per_iteration`]) instead of
/// clock reads: a wait far shorter than a clock read can be set, and the
/// clock is read once per call.
pub fn repeat_pausing(
    clock: &dyn Clock,
    pause_iters: u64,
    count_from_ns: u64,
    end_ns: u64,
    work: impl FnMut(u64) -> bool,
) -> Window {
    repeat(clock, count_from_ns, end_ns, work, || pause(pause_iters))
}

/// The counted window both loops share: `work(i)`, then `wait()`, until
/// the clock reaches `end_ns`; the calls that start at or after
/// `count_from_ns` counted.
fn repeat(
    clock: &dyn Clock,
    count_from_ns: u64,
    end_ns: u64,
    mut work: impl FnMut(u64) -> bool,
    mut wait: impl FnMut(),
) -> Window {
    let mut w = Window { ok: true, ..Window::default() };
    let mut first = None;
    for i in 0.. {
        let t0 = clock.now_ns();
        if t0 >= end_ns {
            w.span_ns = first.map_or(0, |f| t0 - f);
            break;
        }
        w.ok &= work(i);
        if t0 >= count_from_ns {
            w.calls += 1;
            first.get_or_insert(t0);
        }
        wait();
    }
    w
}

/// How many times a point's run is tried before a window that counted
/// nothing is kept.
pub const TRIES: usize = 3;

/// Runs `once` until `counted` says its chaser's window counted a call, at
/// most [`TRIES`] times, and returns the last run. The deadlines are
/// absolute (from the team's release, every thread awake), so a thread the
/// host (or a neighbour on its CPU) stalled past its whole window counts
/// nothing: that run lost its sample, it did not fail, and is run again.
/// Also returns how it went (a [`WindowAttempt`]), for a [`Tally`] the document
/// reports.
pub fn until_counted<T>(mut once: impl FnMut() -> T, counted: impl Fn(&T) -> bool) -> (T, WindowAttempt) {
    let mut run = once();
    let mut runs = 1;
    while runs < TRIES && !counted(&run) {
        run = once();
        runs += 1;
    }
    let counted = counted(&run);
    (run, WindowAttempt { runs, counted })
}

/// How one window went: how many times it was run, and whether the run
/// kept counted (after [`TRIES`] runs one that did not is kept, as it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowAttempt {
    pub runs: usize,
    pub counted: bool,
}

impl Default for WindowAttempt {
    /// Run once, counted: what a window outside [`until_counted`] is.
    fn default() -> WindowAttempt {
        WindowAttempt { runs: 1, counted: true }
    }
}

/// Windows kept by one measurement (warm-ups and probes among them), how
/// many of them had to be run again, and how many never counted: shared
/// by the closures that run them.
#[derive(Debug, Default)]
pub struct Tally {
    windows: AtomicUsize,
    rerun: AtomicUsize,
    never: AtomicUsize,
}

impl Tally {
    pub fn add(&self, t: WindowAttempt) {
        self.windows.fetch_add(1, Ordering::Relaxed);
        self.rerun.fetch_add(usize::from(t.runs > 1), Ordering::Relaxed);
        self.never.fetch_add(usize::from(!t.counted), Ordering::Relaxed);
    }

    /// (windows run again, windows that never counted, windows kept).
    pub fn again(&self) -> (usize, usize, usize) {
        let get = |a: &AtomicUsize| a.load(Ordering::Relaxed);
        (get(&self.rerun), get(&self.never), get(&self.windows))
    }
}

/// Spins `iters` turns of a dependent add the compiler cannot remove: a
/// pause that uses no memory.
#[inline(never)]
pub fn pause(iters: u64) {
    let mut x = 0u64;
    for i in 0..iters {
        x = std::hint::black_box(x.wrapping_add(i));
    }
    std::hint::black_box(x);
}

/// What one turn of [`pause`] costs on this CPU, timed on `clock` over
/// about `span_ns` (the median of five tries).
pub fn pause_ns_per_iteration(clock: &dyn Clock, span_ns: u64) -> f64 {
    let mut n = 1_000u64;
    loop {
        let t0 = clock.now_ns();
        pause(n);
        let dt = clock.now_ns().saturating_sub(t0);
        if dt >= span_ns / 5 || n >= 1 << 40 {
            let mut per: Vec<f64> = (0..5)
                .map(|_| {
                    let t0 = clock.now_ns();
                    pause(n);
                    clock.now_ns().saturating_sub(t0) as f64 / n as f64
                })
                .collect();
            per.sort_by(f64::total_cmp);
            return per[2].max(1e-3);
        }
        n *= 4;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::FakeClock;

    /// On a clock that advances 100 ns per read, the loop's counts are
    /// exact: a call costs one read, a delay one read plus the reads that
    /// reach it; so the blocks counted, and the bandwidth, fall as the
    /// delay grows.
    #[test]
    fn the_loader_obeys_its_delay_on_a_fake_clock() {
        let mut bandwidths = Vec::new();
        for (delay, calls, span) in [(0u64, 99u64, 9_900u64), (100, 33, 9_900), (1_000, 9, 10_800), (5_000, 2, 10_400)]
        {
            let clock = FakeClock::stepping(vec![100]);
            let mut ran = 0;
            let w = repeat_until(&clock, delay, 0, 10_000, |_| {
                ran += 1;
                true
            });
            assert_eq!((w.calls, w.span_ns), (calls, span), "delay {delay}");
            assert_eq!(ran, calls, "every call before the end counted (counting from 0)");
            bandwidths.push(w.calls as f64 * 16384.0 / (w.span_ns as f64 * 1e-9));
        }
        assert!(bandwidths.windows(2).all(|b| b[1] < b[0]), "{bandwidths:?}");
    }

    #[test]
    fn only_calls_inside_the_window_count() {
        let clock = FakeClock::stepping(vec![100]);
        let w = repeat_until(&clock, 0, 5_000, 10_000, |_| true);
        // starts at 100, 200, … 9900: those from 5000 on are counted.
        assert_eq!((w.calls, w.span_ns), (50, 5_000));
        let clock = FakeClock::stepping(vec![100]);
        assert!(!repeat_until(&clock, 0, 0, 1_000, |i| i != 3).ok, "a failed call makes the window invalid");
    }

    #[test]
    fn a_pausing_loop_counts_exactly_on_a_fake_clock() {
        // One clock read per call: starts at 100, 200 … 9,900.
        let clock = FakeClock::stepping(vec![100]);
        let w = repeat_pausing(&clock, 1000, 5_000, 10_000, |_| true);
        assert_eq!((w.calls, w.span_ns), (50, 5_000));
        let clock = FakeClock::stepping(vec![100]);
        assert!(!repeat_pausing(&clock, 0, 0, 1_000, |i| i != 3).ok);
    }

    /// A window that counted nothing (its thread woke after the deadline)
    /// is run again, up to [`TRIES`] times; one that counted is kept at once.
    #[test]
    fn a_missed_window_is_run_again_a_few_times() {
        let clock = FakeClock::stepping(vec![100]);
        let mut tries = 0;
        // The first two runs start after their window ended: nothing counted.
        let tally = Tally::default();
        let (w, ran) = until_counted(
            || {
                tries += 1;
                let end = if tries < 3 { 0 } else { 1_000 };
                repeat_until(&clock, 0, 0, end, |_| true)
            },
            |w| w.calls > 0,
        );
        tally.add(ran);
        assert_eq!((tries, ran, w.calls > 0), (3, WindowAttempt { runs: 3, counted: true }, true));
        let mut tries = 0;
        let (w, ran) = until_counted(
            || {
                tries += 1;
                Window::default()
            },
            |w| w.calls > 0,
        );
        tally.add(ran);
        let never = WindowAttempt { runs: TRIES, counted: false };
        assert_eq!((tries, ran, w.calls), (TRIES, never, 0), "never counted: the last run is kept, as it is");
        let (_, ran) = until_counted(|| Window { calls: 1, ..Window::default() }, |w| w.calls > 0);
        tally.add(ran);
        assert_eq!(ran, WindowAttempt::default(), "counted at once: run once");
        assert_eq!(tally.again(), (2, 1, 3), "windows run again, never counted, kept: tallied");
    }

    /// The calibration on a clock that advances 100 ns per read: the first
    /// 1,000 turns already span a fifth of 500 ns, so five timed tries of
    /// 1,000 turns each read 100 ns, 0.1 ns a turn.
    #[test]
    fn the_pause_is_calibrated_on_the_clock_it_is_given() {
        let clock = FakeClock::stepping(vec![100]);
        assert_eq!(pause_ns_per_iteration(&clock, 500), 0.1);
    }
}
