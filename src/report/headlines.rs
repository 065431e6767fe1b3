//! The figures a reader wants first, derived from the document alone: the
//! headline metrics (with their raw samples, for `compare`) and the advice
//! they imply (for the top of the report).

use crate::model::document::Document;

pub use memperf_model::headline::{headline, Headline, Unit};

/// The lower-case, `_`-joined form of a name, for an id.
pub(crate) fn id_part(text: &str) -> String {
    let s: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    s.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_")
}

/// What a figure measured at `size` is, by where memory begins (`from`:
/// where this run verified it, at the latest eight times the last-level
/// cache): "DRAM" at or past it; else the name says caches answer part.
pub(crate) fn in_memory(size: crate::units::Bytes, from: crate::units::Bytes) -> (&'static str, String) {
    if size >= from {
        ("DRAM ", String::new())
    } else {
        ("", format!("; below {from}, where memory begins here, so caches answer part of it"))
    }
}

/// "1 thread", "2 threads".
pub(crate) fn threads(n: usize) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

/// Every headline metric of the document, each outcome's in turn.
pub fn metrics(doc: &Document) -> Vec<Headline> {
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

/// Every line of advice, tagged with the experiment it rests on. A
/// paired verdict is never withheld for the host's drift: its repetitions
/// interleave the arms, and its own interval says whether it resolves.
pub fn advice_items(doc: &Document) -> Vec<Advice> {
    let mut out = Vec::new();
    for o in super::outcome::outcomes(doc) {
        let r = super::outcome::of(o);
        for text in r.advice(doc) {
            let row = r.advice_row(&text);
            out.push(Advice { experiment: o.name(), row, text });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host that moved, by however much and in whichever reference
    /// (one thread, every CPU, the call chain, the system call, the chase
    /// on 4 KiB pages), withholds no line of advice: each recording gives
    /// the same lines with a still reference and with one that moved 50%.
    #[test]
    fn a_host_that_moved_withholds_no_verdict() {
        use memperf_model::timing::drift::HostDrift;
        for (name, mut doc) in crate::test_support::recorded_suites() {
            let drift = |k: f64| HostDrift {
                size_bytes: crate::units::Bytes(1 << 28),
                all_threads: Some(2),
                points: (0..3)
                    .map(|i| {
                        let f = if i == 1 { k } else { 1.0 };
                        let mut p = crate::test_support::core_point(6 * i, 5.0 * f, 200.0 * f);
                        p.read_bytes_per_s = vec![40e9 / f];
                        p.chase_ns = vec![140.0 * f];
                        p.all_read_bytes_per_s = vec![80e9 / f];
                        p.chase_4k_ns = vec![180.0 * f];
                        p
                    })
                    .collect(),
            };
            doc.host_drift = Some(drift(1.0));
            let still = advice_items(&doc);
            doc.host_drift = Some(drift(1.5));
            let moved = advice_items(&doc);
            assert!(doc.host_drift.as_ref().unwrap().moved_most().unwrap() >= 0.5);
            assert_eq!(still, moved, "{name}");
            assert!(!moved.is_empty(), "{name}: no advice at all");
            assert!(moved.iter().all(|a| !a.text.contains("not judged") && !a.text.contains("No verdict")), "{name}");
        }
    }

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
        let m = headline(
            "latency.random",
            &[("size_bytes", "64".into()), ("pages", "4k".into())],
            "x".into(),
            Unit::Nanoseconds(None),
            vec![],
            1.0,
            false,
        );
        assert_eq!(m.key(), "latency.random{pages=4k,size_bytes=64}");
        assert_eq!(
            headline("tlb.walk", &[], "x".into(), Unit::Nanoseconds(None), vec![], 1.0, false).key(),
            "tlb.walk"
        );
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
