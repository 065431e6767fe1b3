//! The clock the core really runs at, measured: a chain of dependent
//! integer adds (one cycle each on every x86-64 and Arm core memperf
//! meets) is timed on the monotonic clock. Figures in cycles use this
//! clock, not the nominal frequency (turbo, power capping and a
//! hypervisor's CPU model all move the two apart).

use super::Clock;
use serde::{Deserialize, Serialize};

/// Adds per loop iteration (the loop's own counter runs in parallel).
const ADDS_PER_ITER: u64 = 16;

/// A measurement of the core clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CoreClock {
    /// Median of the samples, in GHz (cycles per ns).
    pub ghz: f64,
    pub min_ghz: f64,
    pub max_ghz: f64,
    pub samples: usize,
}

/// `iters` × 16 dependent adds; returns the sum so the chain is live.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    let n = iters.max(1);
    // SAFETY: register arithmetic only; no memory is touched.
    unsafe {
        std::arch::asm!(
            "2:",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) n => _,
            options(nomem, nostack),
        );
    }
    x
}

#[cfg(target_arch = "aarch64")]
#[inline(never)]
pub fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    let n = iters.max(1);
    // SAFETY: register arithmetic only; no memory is touched.
    unsafe {
        std::arch::asm!(
            "2:",
            "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1",
            "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1",
            "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1",
            "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            x = inout(reg) x,
            n = inout(reg) n => _,
            options(nomem, nostack),
        );
    }
    x
}

/// No add chain is written for this architecture: no core clock.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn add_chain(_iters: u64) -> u64 {
    0
}

const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// Measures the core clock on the calling thread: `samples` runs of at
/// least `min_sample_s` each, every one checked to have added what it
/// should. `None` where no add chain is written for this architecture, or
/// when a chain's sum is wrong (then its time means nothing).
pub fn measure(clock: &dyn Clock, samples: usize, min_sample_s: f64) -> Option<CoreClock> {
    if !SUPPORTED {
        return None;
    }
    let mut iters = 1000u64;
    let mut ghz = Vec::with_capacity(samples);
    while ghz.len() < samples.max(1) {
        let t0 = clock.now_ns();
        let sum = add_chain(iters);
        let ns = clock.now_ns().saturating_sub(t0);
        if sum != iters * ADDS_PER_ITER {
            return None;
        }
        if (ns as f64) < min_sample_s * 1e9 {
            let grow =
                if ns == 0 { 10 } else { ((min_sample_s * 1.2e9) / ns as f64).ceil().clamp(1.1, 10.0) as u64 + 1 };
            iters = iters.saturating_mul(grow);
            continue;
        }
        ghz.push((iters * ADDS_PER_ITER) as f64 / ns as f64);
    }
    let s = super::Summary::of(&ghz)?;
    Some(CoreClock { ghz: s.median, min_ghz: s.min, max_ghz: s.max, samples: s.count })
}

/// The clock as experiments take it, before and after their sweep: five
/// runs of at least 10 ms.
pub fn sample(clock: &dyn Clock) -> Option<CoreClock> {
    measure(clock, 5, 0.01)
}

/// The mean of the measured clocks (before and after), for figures in
/// cycles; `None` when none was measured.
pub fn mean_ghz(clocks: &[CoreClock]) -> Option<f64> {
    (!clocks.is_empty()).then(|| clocks.iter().map(|c| c.ghz).sum::<f64>() / clocks.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_adds_what_it_says() {
        assert_eq!(add_chain(10), 160);
        assert_eq!(add_chain(1), 16);
    }

    #[test]
    fn clock_from_a_fake_clock_is_exact() {
        // Every read advances 10 ms: each timed run lasts 10 ms, whatever
        // its length; 1000 iterations × 16 adds / 1e7 ns = 0.0016 GHz.
        let clock = crate::timing::FakeClock::stepping(vec![10_000_000]);
        let c = measure(&clock, 3, 0.01).unwrap();
        assert_eq!(c.samples, 3);
        assert_eq!(c.ghz, 16_000.0 / 1e7);
    }

    #[test]
    fn the_real_clock_is_plausible() {
        let c = measure(&crate::timing::MonotonicClock::new(), 3, 0.005).unwrap();
        assert!(c.ghz > 0.2 && c.ghz < 8.0, "{c:?}");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_chain_is_dependent_adds_in_a_loop() {
        let m = crate::kernels::disasm::mnemonics(add_chain as *const u8);
        assert!(m.iter().filter(|m| m.as_str() == "add").count() >= 16, "{m:?}");
        assert!(m.iter().any(|m| m == "jne"), "{m:?}");
    }
}
