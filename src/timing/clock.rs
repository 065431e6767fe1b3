//! The clock behind every timed region, and a check of its granularity.

use crate::units::Nanos;
use std::time::Instant;

/// A monotonic source of time in nanoseconds since an arbitrary origin.
pub trait Clock: Sync {
    fn now_ns(&self) -> u64;

    /// Smallest non-zero step observed between consecutive reads, in ns.
    fn granularity(&self) -> Nanos {
        let mut best = u64::MAX;
        let mut prev = self.now_ns();
        for _ in 0..20_000 {
            let t = self.now_ns();
            if t > prev {
                best = best.min(t - prev);
            }
            prev = t;
        }
        Nanos(if best == u64::MAX { f64::INFINITY } else { best as f64 })
    }
}

/// CLOCK_MONOTONIC through `Instant`.
pub struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    pub fn new() -> Self {
        Self { origin: Instant::now() }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }
}

/// A test double: each read advances time by a fixed step (or a scripted
/// sequence of steps), so timed results are exact.
pub struct FakeClock {
    now: std::sync::atomic::AtomicU64,
    steps: Vec<u64>,
    index: std::sync::atomic::AtomicUsize,
}

impl FakeClock {
    /// Each read returns the previous value plus the next step (cycled).
    pub fn stepping(steps: Vec<u64>) -> Self {
        assert!(!steps.is_empty());
        Self { now: 0.into(), steps, index: 0.into() }
    }
}

impl Clock for FakeClock {
    fn now_ns(&self) -> u64 {
        use std::sync::atomic::Ordering::SeqCst;
        let i = self.index.fetch_add(1, SeqCst) % self.steps.len();
        self.now.fetch_add(self.steps[i], SeqCst) + self.steps[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_advances_by_its_steps() {
        let c = FakeClock::stepping(vec![10, 30]);
        assert_eq!(c.now_ns(), 10);
        assert_eq!(c.now_ns(), 40);
        assert_eq!(c.now_ns(), 50);
        assert_eq!(c.granularity(), Nanos(10.0));
    }

    #[test]
    fn granularity_is_the_smallest_step_and_infinite_for_a_stopped_clock() {
        assert_eq!(FakeClock::stepping(vec![0, 0, 7, 3]).granularity(), Nanos(3.0));
        assert_eq!(FakeClock::stepping(vec![0]).granularity(), Nanos(f64::INFINITY));
        // The real clock: steps well under the 10 ms samples it times.
        let g = MonotonicClock::new().granularity();
        assert!(g.0 < 10_000.0, "{g:?}");
    }
}
