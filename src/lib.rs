//! memperf: measures and explains the memory system of a Linux machine.
//!
//! Data flows one way: CLI → experiment → (memory, kernels, timing,
//! counters) → result document → exporters. Nothing below the experiment
//! layer prints.

/// Whether tests/data/machines holds a recorded run of a real aarch64
/// machine (build.rs looks): until it does, `info` and the report say on
/// aarch64 that memperf's figures there are unchecked.
pub const ARM_HARDWARE_RECORDED: bool = matches!(env!("MEMPERF_ARM_RECORDED").as_bytes(), b"1");

pub mod analysis;
pub mod cli;
pub mod counters;
pub use memperf_model::error;
pub mod experiments;
pub mod fleet;
pub mod gpu;
pub mod input;
pub mod interrupt;
pub mod kernels;
pub mod machine;
pub mod memory;
pub mod model;
pub mod process;
pub mod region;
pub mod report;
pub mod rng;
pub mod sink;
pub mod terminal;
#[cfg(test)]
pub(crate) mod test_support;
pub mod timing;
pub use memperf_model::units;

pub use region::Region;
