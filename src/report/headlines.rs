//! The figures a reader wants first, derived from the document alone: the
//! headline metrics (with their raw samples, for `compare`) and the advice
//! they imply (for the top of the report).

use crate::model::document::Document;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One headline metric and the raw samples behind it. `id` and `labels`
/// are its identity (what compare, merge, references and OpenMetrics join
/// on); `name` is how a person reads it, and `unit` says both how its
/// value is shown and what it is in SI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// `experiment.quantity`, lower case: `bandwidth.read`, `latency.random`.
    pub id: String,
    /// What tells it apart from the other figures of its id: `pages`,
    /// `threads`, `kernel`, `size_bytes` …
    pub labels: BTreeMap<String, String>,
    pub name: String,
    pub unit: Unit,
    pub value: f64,
    pub samples: Vec<f64>,
    pub higher_is_better: bool,
}

/// A headline's unit: the scale its value is shown in, and through that
/// its SI form. Written as its symbol ("GB/s", "ns/page").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Unit {
    /// GB/s: 1e9 bytes per second.
    GigabytesPerSecond,
    /// ns, or ns per one of something (`ns/page`: `Some("page")`).
    Nanoseconds(Option<String>),
    Seconds,
    /// MiB: 2^20 bytes.
    Mebibytes,
    /// How many times something happened.
    Count,
    /// A derived metric's own unit (a ratio, a percentage, a user's
    /// definition): shown as given, with no SI form.
    Other(String),
}

impl Unit {
    /// `ns/page`.
    pub fn ns_per(what: &str) -> Unit {
        Unit::Nanoseconds(Some(what.to_string()))
    }

    /// (scale to the SI base unit, that unit's OpenMetrics name, what one
    /// figure is per): GB/s are 1e9 bytes_per_second, ns/page 1e-9
    /// seconds per page; a unit without an SI form is its own.
    pub fn si(&self) -> (f64, Option<&'static str>, Option<String>) {
        let per =
            |u: &str| u.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
        match self {
            Unit::GigabytesPerSecond => (1e9, Some("bytes_per_second"), None),
            Unit::Nanoseconds(each) => (1e-9, Some("seconds"), each.as_deref().map(per)),
            Unit::Seconds => (1.0, Some("seconds"), None),
            Unit::Mebibytes => (1048576.0, Some("bytes"), None),
            Unit::Count | Unit::Other(_) => (1.0, None, None),
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unit::GigabytesPerSecond => f.write_str("GB/s"),
            Unit::Nanoseconds(None) => f.write_str("ns"),
            Unit::Nanoseconds(Some(each)) => write!(f, "ns/{each}"),
            Unit::Seconds => f.write_str("s"),
            Unit::Mebibytes => f.write_str("MiB"),
            Unit::Count => f.write_str("count"),
            Unit::Other(u) => f.write_str(u),
        }
    }
}

impl From<Unit> for String {
    fn from(u: Unit) -> String {
        u.to_string()
    }
}

/// A symbol read back from a document written before (compare and merge
/// JSON): the symbols memperf writes are its own units again.
impl From<String> for Unit {
    fn from(s: String) -> Unit {
        match s.as_str() {
            "GB/s" => Unit::GigabytesPerSecond,
            "ns" => Unit::Nanoseconds(None),
            "s" => Unit::Seconds,
            "MiB" => Unit::Mebibytes,
            "count" => Unit::Count,
            u => match u.strip_prefix("ns/") {
                Some(each) if !each.is_empty() => Unit::ns_per(each),
                _ => Unit::Other(s),
            },
        }
    }
}

/// A metric: its identity, its display name and unit, its samples and
/// central value, and which way is better.
pub(crate) fn metric(
    id: &str,
    labels: &[(&str, String)],
    name: String,
    unit: Unit,
    samples: Vec<f64>,
    value: f64,
    higher: bool,
) -> Metric {
    Metric {
        id: id.into(),
        labels: labels.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        name,
        unit,
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
            Unit::Nanoseconds(None),
            vec![],
            1.0,
            false,
        );
        assert_eq!(m.key(), "latency.random{pages=4k,size_bytes=64}");
        assert_eq!(metric("tlb.walk", &[], "x".into(), Unit::Nanoseconds(None), vec![], 1.0, false).key(), "tlb.walk");
        assert_eq!(id_part("CPU time"), "cpu_time");
    }

    /// Every unit is written as its symbol and read back as itself, and its
    /// SI form is the one OpenMetrics names.
    #[test]
    fn units_round_trip_through_their_symbols_and_know_their_si_form() {
        let all = [
            Unit::GigabytesPerSecond,
            Unit::Nanoseconds(None),
            Unit::ns_per("page"),
            Unit::Seconds,
            Unit::Mebibytes,
            Unit::Count,
            Unit::Other("%".into()),
        ];
        for u in all {
            let json = serde_json::to_string(&u).unwrap();
            assert_eq!(serde_json::from_str::<Unit>(&json).unwrap(), u, "{json}");
        }
        assert_eq!(Unit::ns_per("page").to_string(), "ns/page");
        assert_eq!(Unit::ns_per("call").si(), (1e-9, Some("seconds"), Some("call".into())));
        assert_eq!(Unit::GigabytesPerSecond.si(), (1e9, Some("bytes_per_second"), None));
        assert_eq!(Unit::Mebibytes.si().0, 1048576.0);
        assert_eq!(Unit::Other("ratio".into()).si(), (1.0, None, None));
    }
}
