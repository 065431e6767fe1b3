//! The clock behind every timed region, and a check of its granularity.
//!
//! On x86-64 it is CLOCK_MONOTONIC (`Instant`); on aarch64 the generic
//! timer's virtual count (CNTVCT_EL0, read behind an ISB so earlier
//! instructions finish first) at CNTFRQ_EL0's rate, which is 25 MHz on some
//! machines and 1 GHz on others. Either way a sample lasts at least 1,000
//! of the timer's ticks ([`min_sample_floor_s`]).

use crate::units::Nanos;
#[cfg(any(test, not(target_arch = "aarch64")))]
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

/// The monotonic clock of this architecture (see the module's doc).
pub struct MonotonicClock {
    #[cfg(not(target_arch = "aarch64"))]
    origin: Instant,
    #[cfg(target_arch = "aarch64")]
    origin_ticks: u64,
    /// CNTFRQ_EL0, read once: it is fixed from boot.
    #[cfg(target_arch = "aarch64")]
    hz: u128,
}

impl MonotonicClock {
    pub fn new() -> Self {
        Self {
            #[cfg(not(target_arch = "aarch64"))]
            origin: Instant::now(),
            #[cfg(target_arch = "aarch64")]
            origin_ticks: generic_timer::ticks(),
            #[cfg(target_arch = "aarch64")]
            hz: generic_timer::frequency_hz() as u128,
        }
    }
}

/// The fewest timer ticks one sample lasts.
pub const MIN_TICKS_PER_SAMPLE: f64 = 1000.0;

/// One tick of the timer behind [`MonotonicClock`], in seconds: 1/CNTFRQ
/// on aarch64, CLOCK_MONOTONIC's stated resolution elsewhere.
pub fn tick_s() -> f64 {
    #[cfg(target_arch = "aarch64")]
    return 1.0 / generic_timer::frequency_hz() as f64;
    #[cfg(not(target_arch = "aarch64"))]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_getres writes one timespec, which `ts` is.
        let ok = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) } == 0;
        if ok {
            ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
        } else {
            1e-9
        }
    }
}

/// The shortest sample the scheduler takes: [`MIN_TICKS_PER_SAMPLE`] ticks.
pub fn min_sample_floor_s() -> f64 {
    MIN_TICKS_PER_SAMPLE * tick_s()
}

/// Arm's generic timer as user space reads it.
#[cfg(target_arch = "aarch64")]
pub mod generic_timer {
    /// CNTVCT_EL0, behind an ISB (without it the read may happen before
    /// instructions that precede it).
    #[inline(always)]
    pub fn ticks() -> u64 {
        let t: u64;
        // SAFETY: Linux lets EL0 read CNTVCT_EL0; ISB only orders the pipeline.
        unsafe { std::arch::asm!("isb", "mrs {0}, cntvct_el0", out(reg) t, options(nomem, nostack, preserves_flags)) };
        t
    }

    /// CNTFRQ_EL0: the counter's rate in Hz (never 0: 1 GHz if unset).
    pub fn frequency_hz() -> u64 {
        let f: u64;
        // SAFETY: Linux lets EL0 read CNTFRQ_EL0.
        unsafe { std::arch::asm!("mrs {0}, cntfrq_el0", out(reg) f, options(nomem, nostack, preserves_flags)) };
        if f == 0 {
            1_000_000_000
        } else {
            f
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    #[cfg(not(target_arch = "aarch64"))]
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    #[cfg(target_arch = "aarch64")]
    fn now_ns(&self) -> u64 {
        let ticks = generic_timer::ticks().wrapping_sub(self.origin_ticks) as u128;
        (ticks * 1_000_000_000 / self.hz) as u64
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

    /// Moves time on by `ns` without a read (a step of simulated work).
    pub fn advance_ns(&self, ns: u64) {
        self.now.fetch_add(ns, std::sync::atomic::Ordering::SeqCst);
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

    /// A sample lasts 1,000 ticks at least, and the tick is the real
    /// clock's: no step it takes is shorter than one tick (a rounding
    /// nanosecond aside).
    #[test]
    fn the_sample_floor_is_a_thousand_ticks_of_the_real_clock() {
        let tick = tick_s();
        assert!(tick > 0.0 && tick <= 1e-4, "{tick}");
        assert_eq!(min_sample_floor_s(), 1000.0 * tick);
        let g = MonotonicClock::new().granularity();
        assert!(g.0 + 1.0 >= tick * 1e9, "steps of {g:?} under a tick of {tick} s");
        let plan = crate::timing::schedule::Plan::new(3, 0.0);
        assert_eq!(plan.min_sample_s, min_sample_floor_s());
    }

    /// On aarch64 the clock is the generic timer, converted at CNTFRQ: it
    /// agrees with CLOCK_MONOTONIC over a sleep.
    #[cfg(target_arch = "aarch64")]
    #[test]
    fn the_generic_timer_keeps_time_with_the_monotonic_clock() {
        let (c, t0) = (MonotonicClock::new(), Instant::now());
        let a = c.now_ns();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (b, wall) = (c.now_ns(), t0.elapsed().as_nanos() as f64);
        let ratio = (b - a) as f64 / wall;
        assert!((0.9..1.1).contains(&ratio), "{ratio}");
    }
}
