//! The figures a reader wants first, derived from the document alone: the
//! headline metrics (with their raw samples, for `compare`) and the advice
//! they imply (for the top of the report).

use crate::model::document::Document;
use serde::{Deserialize, Serialize};

/// One headline metric and the raw samples behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub value: f64,
    pub samples: Vec<f64>,
    pub higher_is_better: bool,
}

pub(crate) fn metric(name: String, unit: &str, samples: Vec<f64>, value: f64, higher: bool) -> Metric {
    Metric { name, unit: unit.into(), value, samples, higher_is_better: higher }
}

/// Every headline metric of the document, each outcome's in turn.
pub fn metrics(doc: &Document) -> Vec<Metric> {
    super::outcome::outcomes(doc).into_iter().flat_map(|o| super::outcome::of(o).metrics(doc)).collect()
}

/// Advice sentences for the top of the report.
pub fn advice(doc: &Document) -> Vec<String> {
    advice_items(doc).into_iter().map(|a| a.text).collect()
}

/// One line of advice and the experiment whose figures it rests on (the
/// report links it to that evidence).
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub experiment: &'static str,
    pub text: String,
    /// Text that the line of the experiment's table this advice rests on
    /// contains (the report links to that line), where there is one.
    pub row: Option<String>,
}

/// Every line of advice, tagged with the experiment it rests on.
pub fn advice_items(doc: &Document) -> Vec<Advice> {
    let mut out = Vec::new();
    for o in super::outcome::outcomes(doc) {
        let r = super::outcome::of(o);
        for text in r.advice(doc) {
            out.push(Advice { experiment: o.name(), row: r.advice_row(&text), text });
        }
    }
    out
}
