//! How a team's threads wait: awake between the runs of one measurement,
//! and all leaving the start line at once. An idle CPU is clocked down,
//! parked in a deep C-state or, in a guest, descheduled, so a worker stays
//! awake ([`hot_wait`]) for [`HOT_WAIT`] after each run, and a run's threads
//! meet at a spinning [`SpinBarrier`] (as likwid-bench's barrier and
//! OpenMP's active wait do). A spinning worker's loop is `pause` and
//! `sched_yield`, which leave an SMT sibling the core.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a worker stays awake for its team's next run.
pub const HOT_WAIT: Duration = Duration::from_millis(20);

/// Runs started by every team of this process: a worker of one team stops
/// spinning as soon as another team starts a run, so it never competes
/// with that run for a CPU.
pub static RUNS_STARTED: AtomicU64 = AtomicU64::new(0);

/// Counts a run about to start (call before publishing it).
pub fn run_starting() {
    RUNS_STARTED.fetch_add(1, Ordering::AcqRel);
}

/// Why [`hot_wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woke {
    /// `published` moved past what the worker had seen: its next run.
    Published,
    /// Some team started a run (maybe another team's: go to sleep).
    RunStarted,
    /// Nothing happened for [`HOT_WAIT`].
    TimedOut,
}

/// Spins, yielding the CPU to any other runnable thread, until `published`
/// moves past `seen`, `runs_started` (a team's: [`RUNS_STARTED`]) moves, or
/// `limit` passes.
pub fn hot_wait(published: &AtomicU64, seen: u64, runs_started: &AtomicU64, limit: Duration) -> Woke {
    let runs = runs_started.load(Ordering::Acquire);
    let since = Instant::now();
    loop {
        if published.load(Ordering::Acquire) != seen {
            return Woke::Published;
        }
        if runs_started.load(Ordering::Acquire) != runs {
            return Woke::RunStarted;
        }
        if since.elapsed() >= limit {
            return Woke::TimedOut;
        }
        for _ in 0..64 {
            std::hint::spin_loop();
        }
        std::thread::yield_now();
    }
}

/// A one-shot barrier whose waiters spin: they leave within a few hundred
/// nanoseconds of the last arrival, where a futex barrier wakes each
/// sleeper in turn, microseconds apart, a skew that counts against a run's
/// elapsed time (`cargo run --release --example start_skew` measures both;
/// docs/validation.md, "Figures behind constants").
pub struct SpinBarrier {
    arrived: AtomicUsize,
    parties: usize,
}

impl SpinBarrier {
    pub fn new(parties: usize) -> SpinBarrier {
        SpinBarrier { arrived: AtomicUsize::new(0), parties }
    }

    /// Returns once all `parties` have called it. Yields the CPU now and
    /// then, in case a party waits for this one.
    pub fn wait(&self) {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        let mut spins = 0u32;
        while self.arrived.load(Ordering::Acquire) < self.parties {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(4096) {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn nobody_leaves_the_barrier_before_everyone_arrived() {
        for _ in 0..200 {
            let parties = 4;
            let barrier = Arc::new(SpinBarrier::new(parties));
            let arrived = Arc::new(AtomicUsize::new(0));
            let seen: Vec<usize> = (0..parties)
                .map(|i| {
                    let (barrier, arrived) = (Arc::clone(&barrier), Arc::clone(&arrived));
                    std::thread::spawn(move || {
                        // Arrive in a scattered order.
                        std::thread::sleep(Duration::from_micros(50 * (i as u64 % 3)));
                        arrived.fetch_add(1, Ordering::SeqCst);
                        barrier.wait();
                        arrived.load(Ordering::SeqCst)
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect();
            assert!(seen.iter().all(|&n| n == parties), "left before all arrived: {seen:?}");
        }
    }

    #[test]
    fn a_hot_worker_wakes_for_its_next_run() {
        let published = Arc::new(AtomicU64::new(7));
        let p = Arc::clone(&published);
        let publisher = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(2));
            p.store(8, Ordering::Release);
        });
        let runs = AtomicU64::new(0);
        assert_eq!(hot_wait(&published, 7, &runs, Duration::from_secs(60)), Woke::Published);
        publisher.join().unwrap();
    }

    #[test]
    fn a_hot_worker_gives_up_after_the_limit() {
        let published = AtomicU64::new(3);
        let runs = AtomicU64::new(0);
        let t = Instant::now();
        assert_eq!(hot_wait(&published, 3, &runs, Duration::from_millis(5)), Woke::TimedOut);
        assert!(t.elapsed() >= Duration::from_millis(5), "gave up after {:?}", t.elapsed());
    }

    #[test]
    fn another_teams_run_sends_a_hot_worker_to_sleep() {
        let published = AtomicU64::new(0);
        let runs = Arc::new(AtomicU64::new(0));
        let r = Arc::clone(&runs);
        let starter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(2));
            r.fetch_add(1, Ordering::AcqRel);
        });
        assert_eq!(hot_wait(&published, 0, &runs, Duration::from_secs(60)), Woke::RunStarted);
        starter.join().unwrap();
        // Teams count their runs in the process-wide counter workers watch.
        let before = RUNS_STARTED.load(Ordering::Acquire);
        run_starting();
        assert!(RUNS_STARTED.load(Ordering::Acquire) > before);
    }
}
