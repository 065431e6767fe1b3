//! Whether a PMU can be trusted: count the instructions of a loop whose
//! instruction count is known exactly. A virtual PMU that is off by more
//! than a few percent is reported as suspect, and every metric computed
//! from its hardware counts is marked.

use super::{count, events, CounterBackend, CounterStatus};
pub use memperf_model::counters::sanity::PmuCheck;

/// Iterations of the calibrated loop (two instructions each).
pub const ITERATIONS: u64 = 10_000_000;
/// Beyond this relative error the PMU is suspect.
pub const TOLERANCE: f64 = 0.02;

/// Runs `iterations` of a two-instruction loop (x86-64: `dec; jnz`;
/// aarch64: `subs; b.ne`): exactly 2 × iterations user-mode instructions.
#[inline(never)]
pub fn calibrated_loop(iterations: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: only rcx is used, declared as clobbered; no memory is touched.
    unsafe {
        std::arch::asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) iterations => _, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: only the declared register and the flags are used; no memory.
    unsafe {
        std::arch::asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) iterations.max(1) => _,
            options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for i in 0..iterations {
        std::hint::black_box(i);
    }
}

/// The verdict on `counted` instructions for `expected`.
pub fn judge(expected: u64, status: &CounterStatus) -> PmuCheck {
    let counted = match status {
        CounterStatus::Measured { count } => *count,
        CounterStatus::Multiplexed { estimate, .. } => *estimate as u64,
        CounterStatus::NotCounted { reason } => return PmuCheck::Unavailable { reason: reason.clone() },
        CounterStatus::Unavailable { reason, .. } => return PmuCheck::Unavailable { reason: reason.clone() },
    };
    let error = counted as f64 / expected as f64 - 1.0;
    if error.abs() <= TOLERANCE {
        PmuCheck::Trusted { expected, counted, error }
    } else {
        PmuCheck::Suspect { expected, counted, error }
    }
}

/// Counts the calibrated loop's instructions and judges the PMU.
pub fn check(backend: &dyn CounterBackend) -> PmuCheck {
    if cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64"))) {
        return PmuCheck::Unavailable { reason: "the calibrated loop is written for x86-64 and aarch64 only".into() };
    }
    let (_, status) = count(backend, &events::generic("instructions"), || calibrated_loop(ITERATIONS));
    judge(2 * ITERATIONS, &status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::double::ScriptedBackend;
    use crate::counters::Reading;

    #[test]
    fn verdicts() {
        let r = |count| Ok(Reading { count, time_enabled_ns: 1, time_running_ns: 1 });
        let good = ScriptedBackend::new(&[("instructions", r(2 * ITERATIONS + 300))]);
        assert!(matches!(check(&good), PmuCheck::Trusted { counted, .. } if counted == 2 * ITERATIONS + 300));
        let off = ScriptedBackend::new(&[("instructions", r(ITERATIONS * 21 / 10))]);
        match check(&off) {
            PmuCheck::Suspect { error, .. } => assert!((error - 0.05).abs() < 1e-9),
            other => panic!("{other:?}"),
        }
        assert!(check(&off).suspect());
        let none = ScriptedBackend::new(&[]);
        assert!(matches!(check(&none), PmuCheck::Unavailable { reason } if reason.contains("no hardware PMU")));
    }

    /// The loop is what the check assumes: a decrement and a conditional
    /// branch back to it.
    #[test]
    fn the_loop_is_two_instructions() {
        let body = crate::kernels::disasm::mnemonics(calibrated_loop as *const u8);
        let (dec, branch) = if cfg!(target_arch = "aarch64") { ("subs", "b.c") } else { ("dec", "jne") };
        assert!(body.windows(2).any(|w| w[0] == dec && w[1] == branch), "{body:?}");
    }
}
