//! The model: the contract between measuring and rendering.
//!
//! [`Document`] and [`ExperimentRecord`], the typed [`Outcome`] of each
//! experiment, and the catalogue of [`warnings`]. Experiments build it;
//! every renderer (table, plots, HTML, compare) reads it and nothing else.
//! It imports only plain data types from the layers below (units, page
//! policies, kernel names, summaries, the machine fingerprint, analysis
//! results) and nothing above.

pub mod about;
pub mod cpu;
pub mod document;
pub mod journal;
pub mod launcher;
pub mod outcome;
pub mod warnings;

pub use document::{Document, ExperimentRecord, Status, Warning};
pub use outcome::Outcome;
pub use warnings::Caution;
