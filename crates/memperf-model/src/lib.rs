//! memperf's model: the contract between measuring and rendering.
//!
//! [`Document`] and [`ExperimentRecord`], the typed [`Outcome`] of each
//! experiment, the catalogue of [`warnings`], and the value types they are
//! made of (summaries and ratios, page policies and backings, kernel names
//! and traffic, the machine fingerprint, counter statuses, knee
//! attributions). Experiments build it; every renderer (table, plots,
//! HTML, compare, merge) reads it and nothing else.
//!
//! This crate is the bottom of memperf: it depends on serde alone and
//! imports nothing of memperf. The modules named after a measuring layer
//! (`timing`, `memory`, `kernels`, `process`, `counters`, `analysis`,
//! `machine`) hold only what that layer writes into the document; the
//! layer re-exports them.

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
