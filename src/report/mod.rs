//! The result document and everything rendered from it: terminal tables,
//! SVG plots, and the files written to disk.

pub mod concurrency;
pub mod export;
pub mod headlines;
pub mod html;
pub mod journal;
pub mod plots;
pub mod sink;
pub mod svg;
pub mod table;
pub mod text;

pub use crate::model::{Document, Warning};
