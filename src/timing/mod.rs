//! Clocks, repetitions and statistics.
//!
//! Every measurement goes through a [`Clock`] so that tests can substitute a
//! deterministic double; the real clock is CLOCK_MONOTONIC (`Instant`) on
//! x86-64 and the generic timer (CNTVCT_EL0) on aarch64.
//! Samples are never thrown away: the document keeps each one, and the
//! summary ([`Summary`]) is min, median, MAD, CV over them.

pub mod clock;
pub mod core_clock;
pub mod schedule;
#[cfg(test)]
mod simulation;
pub use memperf_model::timing::stats;
pub mod team;
pub mod usage;
pub mod wait;
pub mod window;

pub use clock::{Clock, FakeClock, MonotonicClock};
pub use schedule::{Ratio, Step, StepReport};
pub use stats::Summary;
pub use team::{pin_current_thread, Team};
