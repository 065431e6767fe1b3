//! Tidy CSV (one row per measurement, one column per parameter) that
//! pandas, R and gnuplot read directly. A value that was not measured is an
//! empty cell with its status, never a 0.

use crate::counters::CounterStatus;
use crate::model::outcome::{regions, stat, wss};

pub const STAT_HEADER: &str = "record,t_s,region,name,value,unit,status";

/// A cell safe for a spreadsheet and a terminal: control characters (ESC,
/// BEL, line breaks) become `?`; text that a spreadsheet would run as a
/// formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return,
/// OWASP's rule) gets a leading `'`, numbers excepted; then quoted when it
/// holds a comma, a quote or the `'`.
pub fn cell(text: &str) -> String {
    let mut t: String = text.chars().map(|c| if c.is_control() { '?' } else { c }).collect();
    let formula = text.starts_with(['=', '+', '-', '@', '\t', '\r']) && text.trim().parse::<f64>().is_err();
    if formula {
        t.insert(0, '\'');
    }
    if t.contains([',', '"']) || formula {
        format!("\"{}\"", t.replace('"', "\"\""))
    } else {
        t
    }
}

fn row(out: &mut String, cells: [&str; 7]) {
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    out.push_str(&cells.join(","));
    out.push('\n');
}

fn status_word(s: &CounterStatus) -> &'static str {
    match s {
        CounterStatus::Measured { .. } => "measured",
        CounterStatus::Multiplexed { .. } => "scaled",
        CounterStatus::NotCounted { .. } => "not counted",
        CounterStatus::Unavailable { .. } => "not measured",
    }
}

fn totals(out: &mut String, region: &str, events: &[stat::EventCount], metrics: &[crate::counters::metrics::Metric]) {
    for e in events {
        let v = e.status.value().map(|v| format!("{}", v.0)).unwrap_or_default();
        row(out, ["total", "", region, &e.name, &v, crate::counters::events::unit_of(&e.name), status_word(&e.status)]);
    }
    for m in metrics {
        let v = m.value().map(|v| format!("{v}")).unwrap_or_default();
        let status = match &m.outcome {
            crate::counters::metrics::Outcome::Computed { scaled: true, .. } => "scaled",
            crate::counters::metrics::Outcome::Computed { .. } => "measured",
            crate::counters::metrics::Outcome::NotMeasured { .. } => "not measured",
            crate::counters::metrics::Outcome::Undefined { .. } => "undefined",
        };
        row(out, ["metric", "", region, &m.name, &v, &m.unit, status]);
    }
}

/// Totals, metrics, interval counts and memory samples of a `stat` run.
pub fn stat(o: &stat::Outcome) -> String {
    let mut out = format!("{STAT_HEADER}\n");
    row(&mut out, ["run", "", "", "wall", &format!("{}", o.wall_s), "s", "measured"]);
    totals(&mut out, "", &o.events, &o.metrics);
    for r in &o.intervals {
        let t = format!("{}", r.t_s);
        for (e, c) in o.events.iter().zip(&r.counts) {
            let (v, s) = match c {
                Some(v) => (format!("{v}"), "measured"),
                None => (String::new(), "not counted"),
            };
            row(&mut out, ["interval", &t, "", &e.name, &v, crate::counters::events::unit_of(&e.name), s]);
        }
    }
    for m in &o.memory_samples {
        let t = format!("{}", m.t_s);
        for (name, v) in [("rss", m.rss_bytes), ("thp", m.thp_bytes), ("hugetlb", m.hugetlb_bytes)] {
            row(&mut out, ["memory", &t, "", name, &v.to_string(), "B", "measured"]);
        }
    }
    out
}

/// The columns of [`wss`].
pub const WSS_HEADER: &str =
    "t_s,process,mapping,kind,path,start,end,rss_bytes,referenced_bytes,anon_huge_bytes,resident_spans,hot_spans,written_bytes";

/// One row per mapping per interval of a `wss` run: its resident bytes,
/// the bytes referenced in the interval and those on huge pages.
pub fn wss(o: &wss::Outcome) -> String {
    let mut out = format!("{WSS_HEADER}\n");
    for i in &o.intervals {
        for s in &i.mappings {
            let m = &o.mappings[s.mapping];
            let cells = [
                format!("{}", i.t_s),
                m.process.map(|p| p.to_string()).unwrap_or_default(),
                s.mapping.to_string(),
                m.kind.name().to_string(),
                m.path.clone(),
                format!("{:#x}", m.start),
                format!("{:#x}", m.end),
                s.rss_bytes.to_string(),
                s.referenced_bytes.to_string(),
                s.anon_huge_bytes.to_string(),
                s.resident_spans.map(|v| v.to_string()).unwrap_or_default(),
                s.hot_spans.map(|v| v.to_string()).unwrap_or_default(),
                s.written_bytes.map(|v| v.to_string()).unwrap_or_default(),
            ];
            out.push_str(&cells.iter().map(|c| cell(c)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
    }
    out
}

/// Per region: entries, wall time, counts and metrics.
pub fn regions(o: &regions::Outcome) -> String {
    let mut out = format!("{STAT_HEADER}\n");
    for r in &o.regions {
        row(&mut out, ["region", "", &r.name, "entries", &r.entries.to_string(), "count", "measured"]);
        row(&mut out, ["region", "", &r.name, "wall", &r.wall_ns.to_string(), "ns", "measured"]);
        totals(&mut out, &r.name, &r.events, &r.metrics);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_carry_formulas_or_control_bytes() {
        assert_eq!(cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(cell("@SUM(A1)"), "\"'@SUM(A1)\"");
        assert_eq!(cell("-1.5"), "-1.5");
        assert_eq!(cell("+cmd|' /C calc'!A0"), "\"'+cmd|' /C calc'!A0\"");
        assert_eq!(cell("a\u{1b}]0;x\u{7}"), "a?]0;x?");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("line\nbreak"), "line?break");
    }

    #[test]
    fn cells_are_quoted_when_they_must_be() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("cpu/event=1,umask=2/"), "\"cpu/event=1,umask=2/\"");
        assert_eq!(cell("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
