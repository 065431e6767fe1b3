//! memperf's model: the contract between measuring and rendering.
//! [`Document`] and [`ExperimentRecord`], the typed [`Outcome`] of each
//! experiment, the catalogue of [`warnings`], and the value types they are
//! made of. Experiments build it; every renderer (table, plots, HTML,
//! compare, merge) reads it and nothing else. It is the bottom of memperf:
//! it depends on serde alone and imports nothing of memperf; the modules
//! named after a measuring layer (`timing`, `memory`, `kernels`, …) hold
//! only what that layer writes into the document, and the layer re-exports
//! them.

pub mod about;
pub mod analysis;
pub mod counters;
pub mod cpu;
pub mod document;
pub mod error;
pub mod fleet;
pub mod headline;
pub mod journal;
pub mod kernels;
pub mod launcher;
pub mod machine;
pub mod memory;
pub mod named;
pub mod outcome;
pub mod process;
pub mod schema;
pub mod text;
pub mod timing;
pub mod units;
pub mod warnings;

pub use document::{Document, ExperimentRecord, Status, Warning};
pub use outcome::Outcome;
pub use warnings::Caution;
