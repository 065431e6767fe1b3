//! One renderer per outcome, a file each: that experiment's text, plots,
//! headline metrics and advice behind [`Render`]. The format writers
//! (text, HTML, CSV, OpenMetrics, compare) go through [`of`] and never
//! match on experiments themselves.

pub use bandwidth::plateau_text;

use super::headlines::Headline;
use super::plot::Plot;
use crate::error::Result;
use crate::model::document::{Document, Status};
use crate::model::Outcome;

/// What a report shows of one outcome. `doc` is the whole document, for
/// what an outcome's figures are read against (the machine, another
/// experiment's control).
pub trait Render {
    /// Its section of the terminal report.
    fn text(&self, doc: &Document) -> String;
    /// Its plots.
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        Ok(Vec::new())
    }
    /// Its headline metrics, with their raw samples.
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        Vec::new()
    }
    /// The advice its figures imply.
    fn advice(&self, _doc: &Document) -> Vec<String> {
        Vec::new()
    }
    /// Text that the table line a line of advice rests on contains, for
    /// the report's link from the advice to its evidence.
    fn advice_row(&self, _advice: &str) -> Option<String> {
        None
    }
    /// Its own CSV, where the tidy CSV of the whole document would lose
    /// what a row needs (a nested sample's time); `None`: the tidy one.
    fn csv(&self) -> Option<String> {
        None
    }
}

/// A renderer module per experiment and [`of`], from the model's list.
macro_rules! renderers {
    ($($group:ident { $($m:ident : $V:ident = $name:literal,)* })*) => {
        $($(pub mod $m;)*)*

        /// The renderer of an outcome: the one place that matches on them.
        pub fn of(o: &Outcome) -> &dyn Render {
            match o {
                $($(Outcome::$V(x) => x,)*)*
            }
        }
    };
}
memperf_model::experiments!(renderers);

/// The outcome of each experiment in the document, in its order: the
/// first completed record of each name, as `Document::outcome` reads them.
pub fn outcomes(doc: &Document) -> Vec<&Outcome> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for rec in doc.experiments.iter().filter(|r| r.status == Status::Completed) {
        if let Some(o) = rec.outcome.as_ref().filter(|o| !seen.contains(&o.name())) {
            seen.push(o.name());
            out.push(o);
        }
    }
    out
}
