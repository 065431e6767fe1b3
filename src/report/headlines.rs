//! The figures a reader wants first, derived from the document alone: the
//! headline metrics (with their raw samples, for `compare`) and the advice
//! they imply (for the top of the report).

use crate::model::document::Document;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One headline metric and the raw samples behind it. `id` and `labels`
/// are its identity (what compare, merge, references and OpenMetrics join
/// on); `name` and `unit` are how a person reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// `experiment.quantity`, lower case: `bandwidth.read`, `latency.random`.
    pub id: String,
    /// What tells it apart from the other figures of its id: `pages`,
    /// `threads`, `kernel`, `size_bytes` …
    pub labels: BTreeMap<String, String>,
    pub name: String,
    pub unit: String,
    pub value: f64,
    pub samples: Vec<f64>,
    pub higher_is_better: bool,
}

/// A metric: its identity, its display name and unit, its samples and
/// central value, and which way is better.
pub(crate) fn metric(
    id: &str,
    labels: &[(&str, String)],
    name: String,
    unit: &str,
    samples: Vec<f64>,
    value: f64,
    higher: bool,
) -> Metric {
    Metric {
        id: id.into(),
        labels: labels.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        name,
        unit: unit.into(),
        value,
        samples,
        higher_is_better: higher,
    }
}

impl Metric {
    /// The join key: `id{label=value,…}`, labels in name order.
    pub fn key(&self) -> String {
        if self.labels.is_empty() {
            return self.id.clone();
        }
        let labels: Vec<String> = self.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}{{{}}}", self.id, labels.join(","))
    }

    /// (scale to the SI base unit, that unit, what one figure is per) of
    /// its display unit: GB/s are 1e9 bytes_per_second, ns/page 1e-9
    /// seconds per page; a unit without an SI form (a count, a ratio) is
    /// its own.
    pub fn si(&self) -> (f64, Option<&'static str>, Option<String>) {
        let per =
            |u: &str| u.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
        match self.unit.as_str() {
            "GB/s" => (1e9, Some("bytes_per_second"), None),
            "ns" => (1e-9, Some("seconds"), None),
            "s" => (1.0, Some("seconds"), None),
            "MiB" => (1048576.0, Some("bytes"), None),
            u if u.starts_with("ns/") => (1e-9, Some("seconds"), Some(per(&u[3..]))),
            _ => (1.0, None, None),
        }
    }
}

/// The lower-case, `_`-joined form of a name, for an id.
pub(crate) fn id_part(text: &str) -> String {
    let s: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    s.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every headline of both recorded quick suites has an id of the form
    /// `experiment.quantity`, lower-case labels, and a key no other
    /// headline of its document shares (the joins would mix them up).
    #[test]
    fn every_headline_has_an_identity_of_its_own() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path().join("run-quick.json");
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let doc = crate::model::document_from_json(&text).unwrap();
            let ms = metrics(&doc);
            assert!(ms.len() > 20, "{}: {} headlines", path.display(), ms.len());
            let mut keys: Vec<String> = Vec::new();
            for m in &ms {
                let (exp, quantity) = m.id.split_once('.').unwrap_or_else(|| panic!("{}: no quantity", m.id));
                let word = |t: &str| {
                    t.starts_with(|c: char| c.is_ascii_lowercase())
                        && t.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                };
                assert!(word(exp) && word(quantity), "{}", m.id);
                assert!(m.labels.keys().all(|k| word(k)), "{:?}", m.labels);
                assert!(!keys.contains(&m.key()), "{} twice in {}", m.key(), path.display());
                keys.push(m.key());
            }
            seen += 1;
        }
        assert!(seen >= 2, "both recorded machines' documents were read");
    }

    #[test]
    fn a_key_is_the_id_and_its_labels_in_name_order() {
        let m = metric(
            "latency.random",
            &[("size_bytes", "64".into()), ("pages", "4k".into())],
            "x".into(),
            "ns",
            vec![],
            1.0,
            false,
        );
        assert_eq!(m.key(), "latency.random{pages=4k,size_bytes=64}");
        assert_eq!(metric("tlb.walk", &[], "x".into(), "ns", vec![], 1.0, false).key(), "tlb.walk");
        assert_eq!(id_part("CPU time"), "cpu_time");
    }
}
