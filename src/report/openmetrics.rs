//! The headlines as OpenMetrics text (which Prometheus' text parser and
//! node_exporter's textfile collector also read): one gauge family per
//! experiment and unit, the unit in the name and in `# UNIT`, SI base
//! units (bytes per second, seconds, bytes), `host` and `rank` labels on
//! every sample, and `# EOF` last. Bandwidth gets structured labels
//! (`pages`, `threads`, `kernel`); other headlines carry their name in a
//! `case` label. An unmeasured figure (not finite) is left out, never 0.

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

/// (scale to the base unit, unit, what one figure is per) of a headline unit.
fn base_unit(unit: &str) -> (f64, Option<&'static str>, Option<String>) {
    match unit {
        "GB/s" => (1e9, Some("bytes_per_second"), None),
        "ns" => (1e-9, Some("seconds"), None),
        "s" => (1.0, Some("seconds"), None),
        "MiB" => (1048576.0, Some("bytes"), None),
        u if u.starts_with("ns/") => (1e-9, Some("seconds"), Some(sanitize(&u[3..]))),
        _ => (1.0, None, None),
    }
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
    for m in headlines::metrics(doc).into_iter().filter(|m| !m.name.starts_with("bandwidth ")) {
        let (experiment, case) = m.name.split_once(' ').unwrap_or((m.name.as_str(), ""));
        let (scale, unit, per) = base_unit(&m.unit);
        let mut name = format!("memperf_{}", sanitize(experiment));
        if let Some(p) = per {
            name.push_str(&format!("_per_{p}"));
        }
        let mut labels = vec![("case".to_string(), case.to_string())];
        match unit {
            Some(u) => name.push_str(&format!("_{u}")),
            None => labels.push(("unit".into(), m.unit.clone())),
        }
        add(name, format!("memperf {experiment}: headline figures (case: which one)"), unit, labels, m.value * scale);
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
        assert_eq!(base_unit("GB/s").1, Some("bytes_per_second"));
        assert_eq!(base_unit("ns/row"), (1e-9, Some("seconds"), Some("row".into())));
        assert_eq!(base_unit("CPI").1, None);
    }

    /// The version-2 fixture: read bandwidth in bytes per second with its
    /// labels, every family typed, `# EOF` last, no NaN anywhere.
    #[test]
    fn a_document_renders_with_units_in_names_and_eof_last() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minimal-bandwidth.json");
        let doc = Document::from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
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
