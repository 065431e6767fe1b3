//! `wss` as text, a chart and headlines: the hot set over time per kind of
//! mapping, the phases, the mappings of the longest phase, the verdict.

use crate::error::Result;
use crate::experiments::wss::mapping_name;
use crate::model::document::Document;
use crate::model::outcome::wss::Outcome;
use crate::report::headlines::{metric, Metric};
use crate::report::linechart::{render, Axis, Line, LineChart, Ticks};
use crate::report::plots::{Figure, Plot};
use crate::report::table::Table;
use crate::units::Bytes;

pub fn wss_text(o: &Outcome) -> String {
    let what = match o.pid {
        Some(pid) => format!("pid {pid}"),
        None => format!("`{}`", o.command.join(" ")),
    };
    let ended = o.exit.map(|e| format!(", {}", e.describe())).unwrap_or_default();
    let mut out = format!(
        "wss: {what}, {} interval(s) of {} ms{} over {:.1} s{ended}; peak RSS {}\n  method: {}\n",
        o.intervals.len(),
        o.interval_ms,
        if o.adaptive { " and longer as the hot set grew (sampling kept under 5% of the program's time)" } else { "" },
        o.wall_s,
        Bytes(o.peak_rss_bytes),
        o.method
    );
    if let Some(w) = &o.written_not_measured {
        out.push_str(&format!("  bytes written per interval: {w}\n"));
    }
    let mut t = Table::new([
        "phase",
        "from s",
        "to s",
        "intervals",
        "hot set",
        "in mappings huge pages can cover",
        "2 MiB pages to map it",
        "mostly in",
    ]);
    for (i, p) in o.phases.iter().enumerate() {
        t.row([
            (i + 1).to_string(),
            format!("{:.1}", p.from_s),
            format!("{:.1}", p.to_s),
            p.intervals.to_string(),
            Bytes(p.hot_bytes).to_string(),
            Bytes(p.coverable_bytes).to_string(),
            format!("{}–{}", p.huge_pages_min, p.huge_pages_max),
            p.top_mapping
                .and_then(|m| o.mappings.get(m))
                .map(|m| format!("{} ({:.0}%)", mapping_name(m), p.top_share * 100.0))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    if !o.phases.is_empty() {
        out.push_str("\nphases (hot set: bytes referenced per interval, median over the phase):\n");
        out.push_str(&t.render());
    }
    out.push_str(&intervals_text(o));
    for v in &o.verdict {
        out.push_str(&format!("  → {v}\n"));
    }
    out
}

/// The hot set of each interval, by kind of mapping.
fn intervals_text(o: &Outcome) -> String {
    let mut kinds: Vec<_> = o.mappings.iter().map(|m| m.kind).collect();
    kinds.sort();
    kinds.dedup();
    let mut header = vec!["t s".to_string(), "hot set".to_string(), "resident".to_string()];
    header.extend(kinds.iter().map(|k| format!("{} hot", k.name())));
    let mut t = Table::new(header);
    for i in &o.intervals {
        let mut row = vec![format!("{:.2}", i.t_s), Bytes(i.hot_bytes()).to_string(), Bytes(i.rss_bytes()).to_string()];
        for k in &kinds {
            let b: u64 =
                i.mappings.iter().filter(|m| o.mappings[m.mapping].kind == *k).map(|m| m.referenced_bytes).sum();
            row.push(Bytes(b).to_string());
        }
        t.row(row);
    }
    if o.intervals.is_empty() {
        return String::new();
    }
    format!("\nintervals:\n{}", t.render())
}

/// The hot set and the resident set over time.
fn wss_plot(o: &Outcome) -> Result<Option<Plot>> {
    if o.intervals.len() < 2 {
        return Ok(None);
    }
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let line = |name: &str, f: &dyn Fn(&crate::model::outcome::wss::Interval) -> u64| Line {
        name: name.into(),
        points: o.intervals.iter().map(|i| (i.t_s, mib(f(i)).max(1e-3))).collect(),
        ..Line::default()
    };
    let title = "Hot working set over time".to_string();
    let chart = LineChart {
        title: title.clone(),
        x: Axis { linear: true, ..Axis::new("seconds since the program started", Ticks::Number) },
        y: Axis::new("MiB (hot: referenced in the interval)", Ticks::Number),
        lines: vec![line("hot set", &|i| i.hot_bytes()), line("resident", &|i| i.rss_bytes())],
        references: vec![],
        markers: vec![],
        spans: vec![],
    };
    Ok(Some(Plot {
        file_name: "wss.svg".into(),
        title,
        experiment: "wss".into(),
        svg: render(&chart)?,
        figure: Figure::Line(chart),
    }))
}

/// The hot set of each phase.
fn wss_metrics(o: &Outcome) -> Vec<Metric> {
    o.phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v = p.hot_bytes as f64 / (1u64 << 20) as f64;
            let name = format!("wss phase {} hot set", i + 1);
            metric("wss.hot_set", &[("phase", (i + 1).to_string())], name, "MiB", vec![v], v, false)
        })
        .collect()
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        wss_text(self)
    }
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        Ok(wss_plot(self)?.into_iter().collect())
    }
    fn metrics(&self, _doc: &Document) -> Vec<Metric> {
        wss_metrics(self)
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        self.verdict.clone()
    }
}
