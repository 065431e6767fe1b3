//! Core-to-core latency: two threads hand one cache line back and forth.
//! Side A waits for an even value and writes the next odd one; side B waits
//! for the odd value and writes the next even one. `n` round trips move
//! the line 2n times; the final value is 2n (the validation).
//!
//! `load-store` waits with plain loads and hands over with a store;
//! `cas` hands over with a compare-and-exchange (a locked read-modify-write,
//! as a lock or an atomic counter does). Neither side can hang: every
//! 65,536 spins each checks a deadline and a shared abort flag.

pub use memperf_model::kernels::c2c::Handoff;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The bounced line, alone in its 128 bytes (two lines: no neighbour
/// prefetch pulls anything else in).
#[repr(align(128))]
#[derive(Default)]
pub struct Line {
    pub value: AtomicU64,
}

/// A side gives up after this long without the line.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// One side's `n` handoffs; `first` is 0 for side A, 1 for side B. False
/// when it gave up (the deadline, or the other side gave up).
pub fn side(line: &Line, abort: &AtomicBool, handoff: Handoff, first: u64, n: u64) -> bool {
    let started = Instant::now();
    for k in 0..n {
        let want = 2 * k + first;
        let mut spins = 0u32;
        loop {
            let done = match handoff {
                Handoff::LoadStore => {
                    if line.value.load(Ordering::Acquire) == want {
                        line.value.store(want + 1, Ordering::Release);
                        true
                    } else {
                        false
                    }
                }
                Handoff::Cas => {
                    line.value.compare_exchange_weak(want, want + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok()
                }
            };
            if done {
                break;
            }
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins & 0xffff == 0 && (abort.load(Ordering::Relaxed) || started.elapsed() > DEADLINE) {
                abort.store(true, Ordering::Relaxed);
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each side on a CPU of its own where there are two (on one, every
    /// handoff waits for a time slice: a few, within the deadline).
    #[test]
    fn two_sides_hand_the_line_over_n_times() {
        use crate::timing::team::{allowed_cpus, PinGuard};
        let cpus = allowed_cpus();
        for h in Handoff::ALL {
            let line = Line::default();
            let abort = AtomicBool::new(false);
            let n = if cpus.len() > 1 { 10_000 } else { 50 };
            let (a, b) = std::thread::scope(|s| {
                let b = s.spawn(|| {
                    let _pin = cpus.get(1).map(|&c| PinGuard::pin(c));
                    side(&line, &abort, h, 1, n)
                });
                let _pin = PinGuard::pin(cpus[0]);
                (side(&line, &abort, h, 0, n), b.join().unwrap())
            });
            assert!(a && b);
            assert_eq!(line.value.load(Ordering::Relaxed), 2 * n, "{h:?}");
        }
    }

    #[test]
    fn a_side_alone_gives_up_instead_of_hanging() {
        let line = Line::default();
        let abort = AtomicBool::new(true);
        // Side B waits for a 1 that never comes; the abort flag ends it.
        assert!(!side(&line, &abort, Handoff::LoadStore, 1, 1));
        assert_eq!(Handoff::parse("cas").unwrap(), Handoff::Cas);
        assert!(Handoff::parse("xchg").is_err());
    }
}
