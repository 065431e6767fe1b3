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
    /// Its plots (every renderer says, an empty list with the reason).
    fn plots(&self, doc: &Document) -> Result<Vec<Plot>>;
    /// Its headline metrics, with their raw samples.
    fn metrics(&self, doc: &Document) -> Vec<Headline>;
    /// The advice its figures imply.
    fn advice(&self, doc: &Document) -> Vec<String>;
    /// Whether its text gives figures in cycles, so the clock it measured
    /// around itself is said after it (else only where the clock moved).
    fn in_cycles(&self) -> bool {
        false
    }
    /// Why it measured nothing, where it did not (one node, no GPU): the
    /// suite's line for it says so in place of a figure.
    fn nothing_measured(&self) -> Option<String> {
        None
    }
    /// HTML its section shows beside its charts that no chart draws (a
    /// matrix as a shaded table).
    fn html_extra(&self) -> Option<String> {
        None
    }
    /// Text that the table line a line of advice rests on contains, for
    /// the report's link from the advice to its evidence.
    fn advice_row(&self, _advice: &str) -> Option<String> {
        None
    }
    /// Its paired comparisons (ratios measured within the run), for
    /// `compare`: each with its identity and name; none by default.
    fn paired(&self, _doc: &Document) -> Vec<PairedRatio> {
        Vec::new()
    }
    /// Its outcome as the tidy CSV's raw tables read it (`v`, serialised),
    /// with what the document's other findings refuse taken out; by
    /// default, as recorded.
    fn refuse_in_tables(&self, _doc: &Document, _v: &mut serde_json::Value) {}
    /// Its own CSV, where the tidy CSV of the whole document would lose
    /// what a row needs (a nested sample's time); `None`: the tidy one.
    fn csv(&self, _doc: &Document) -> Option<String> {
        None
    }
}

/// A paired comparison of one run as `compare` joins it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedRatio {
    /// `experiment.quantity{label=value,…}`: the same in every run.
    pub key: String,
    /// What is set against what, as a person reads it.
    pub name: String,
    pub ratio: crate::timing::Ratio,
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
