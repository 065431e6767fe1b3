//! The result document and everything rendered from it: terminal tables,
//! SVG plots, and the files written to disk.

pub mod barchart;
pub mod compare;
pub mod concurrency;
pub mod csv;
pub mod headlines;
pub mod heatmap;
pub mod html;
pub mod linechart;
pub mod openmetrics;
pub mod outcome;
pub mod placement;
pub mod plot;
pub mod plots;
pub mod screen;
pub use crate::sink;
pub mod table;
pub mod text;
pub mod tidy;
pub mod verdict;

pub use crate::model::{Document, Warning};
