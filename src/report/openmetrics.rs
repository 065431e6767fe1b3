//! The headlines as OpenMetrics text (which Prometheus' text parser and
//! node_exporter's textfile collector also read): one gauge family per
//! experiment and unit, the unit in the name and in `# UNIT`, SI base
//! units (bytes per second, seconds, bytes), `host` and `rank` labels on
//! every sample, and `# EOF` last. Each headline's family is named from
//! its id (`latency.random` → `memperf_latency_random_seconds`) and its
//! labels are the metric's own (`pages`, `threads`, `size_bytes` …); the
//! read and write bandwidth of every kernel run are families of their own.
//! An unmeasured figure (not finite) is left out, never 0.

use super::headlines;
use crate::model::document::Document;
use crate::model::outcome::bandwidth;
use std::collections::BTreeMap;

/// One family: its help text, unit, and samples (labels, value).
#[derive(Default)]
struct Family {
    help: String,
    unit: Option<&'static str>,
    samples: Vec<(Vec<(String, String)>, f64)>,
}

/// Letters, digits and `_` only, no leading digit.
fn sanitize(text: &str) -> String {
    let s: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    let s = s.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_");
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{s}")
    } else {
        s
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

pub fn render(doc: &Document) -> String {
    render_all(&[doc])
}

/// Several documents (a fleet) in one exposition: each sample carries its
/// document's host and rank.
pub fn render_all(docs: &[&Document]) -> String {
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    for doc in docs {
        add_document(doc, &mut families);
    }
    format(&families)
}

fn add_document(doc: &Document, families: &mut BTreeMap<String, Family>) {
    let mut base = vec![("host".to_string(), doc.origin.hostname.clone())];
    if let Some(r) = doc.origin.rank {
        base.push(("rank".into(), r.to_string()));
    }
    let mut add = |name: String, help: String, unit, labels: Vec<(String, String)>, v: f64| {
        if !v.is_finite() {
            return;
        }
        let f = families.entry(name).or_default();
        f.help = help;
        f.unit = unit;
        f.samples.push((base.iter().cloned().chain(labels).collect(), v));
    };
    if let Some(bw) = doc.outcome::<bandwidth::Outcome>() {
        for r in bw.results.iter().filter(|r| r.variant.hint.is_none()) {
            let dir = if r.variant.kernel.writes() { "write" } else { "read" };
            let labels = vec![
                ("pages".to_string(), r.variant.pages.to_string()),
                ("threads".to_string(), r.variant.threads.to_string()),
                ("kernel".to_string(), r.variant.kernel.to_string()),
            ];
            add(
                format!("memperf_{dir}_bandwidth_bytes_per_second"),
                format!("memperf bandwidth: median bytes per second the {dir} kernel moved (program bytes)"),
                Some("bytes_per_second"),
                labels,
                r.bytes_per_s.median,
            );
        }
    }
    for m in headlines::metrics(doc).into_iter().filter(|m| !m.id.starts_with("bandwidth.")) {
        let (scale, unit, per) = m.unit.si();
        let mut name = format!("memperf_{}", sanitize(&m.id));
        if let Some(p) = per {
            name.push_str(&format!("_per_{p}"));
        }
        let mut labels: Vec<(String, String)> = m.labels.iter().map(|(k, v)| (sanitize(k), v.clone())).collect();
        match unit {
            Some(u) => name.push_str(&format!("_{u}")),
            None => labels.push(("unit".into(), m.unit.to_string())),
        }
        add(name, format!("memperf {}: headline figure", m.id), unit, labels, m.value * scale);
    }
}

fn format(families: &BTreeMap<String, Family>) -> String {
    let mut out = String::new();
    for (name, f) in families {
        out.push_str(&format!("# HELP {name} {}\n# TYPE {name} gauge\n", escape(&f.help)));
        if let Some(u) = f.unit {
            out.push_str(&format!("# UNIT {name} {u}\n"));
        }
        for (labels, v) in &f.samples {
            let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
            out.push_str(&format!("{name}{{{}}} {v:e}\n", l.join(",")));
        }
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_units_and_labels_follow_the_format() {
        assert_eq!(sanitize("loaded-latency"), "loaded_latency");
        assert_eq!(sanitize("4k pages"), "_4k_pages");
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        // Units read back from an older document's symbols.
        let si = |unit: &str| crate::report::headlines::Unit::from(unit.to_string()).si();
        assert_eq!(si("GB/s").1, Some("bytes_per_second"));
        assert_eq!(si("ns/row"), (1e-9, Some("seconds"), Some("row".into())));
        assert_eq!(si("CPI").1, None);
    }

    /// A recorded quick suite: every headline in a family named from its
    /// id, with the metric's own labels and no free-text `case`.
    #[test]
    fn headlines_are_families_of_their_ids_with_structured_labels() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen4-kvm-2vcpu/run-quick.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let text = render(&doc);
        assert!(!text.contains("case=\""), "{text}");
        let lat = text.lines().find(|l| l.starts_with("memperf_latency_random_seconds{")).expect(&text);
        assert!(lat.contains("pages=\"4k\"") && lat.contains("size_bytes=\""), "{lat}");
        assert!(text.contains("\nmemperf_loaded_latency_saturated_latency_seconds{"), "{text}");
        let c2c = text.lines().find(|l| l.starts_with("memperf_c2c_one_way_seconds{")).expect(&text);
        assert!(c2c.contains("relation=\"") && c2c.contains("handoff=\""), "{c2c}");
    }

    /// The version-2 fixture: read bandwidth in bytes per second with its
    /// labels, every family typed, `# EOF` last, no NaN anywhere.
    #[test]
    fn a_document_renders_with_units_in_names_and_eof_last() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minimal-bandwidth.json");
        let doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let text = render(&doc);
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert!(text.contains("# TYPE memperf_read_bandwidth_bytes_per_second gauge\n"), "{text}");
        assert!(text.contains("# UNIT memperf_read_bandwidth_bytes_per_second bytes_per_second\n"), "{text}");
        let sample = text.lines().find(|l| l.starts_with("memperf_read_bandwidth_bytes_per_second{")).unwrap();
        assert!(sample.contains("kernel=\"simd\"") && sample.contains(&format!("host=\"{}\"", doc.origin.hostname)));
        let v: f64 = sample.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(v > 1e8, "bytes per second, not GB/s: {v}");
        assert!(!text.to_lowercase().contains("nan"));
    }
}
