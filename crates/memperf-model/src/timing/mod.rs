//! What timing gives the document: summaries of samples, paired ratios,
//! and the core clock.

pub mod core_clock;
pub mod drift;
pub mod ratio;
pub mod stats;

pub use core_clock::CoreClock;
pub use ratio::{Direction, Ratio};
pub use stats::Summary;
