//! What timing gives the document: summaries of samples and their steady
//! stretches, paired comparisons and their verdicts, and the core clock.

pub mod core_clock;
pub mod drift;
pub mod ratio;
pub mod said;
pub mod stats;
pub mod steady;
pub mod verdict;

pub use core_clock::CoreClock;
pub use ratio::Ratio;
pub use stats::Summary;
pub use verdict::{Call, Verdict};
