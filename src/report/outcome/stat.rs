//! `stat` as text: the exit, each counter (or why it is
//! not measured, once per reason), derived metrics with their formulas,
//! memory and huge-page coverage, what cannot be known, advice, intervals.

use crate::counters::sanity::PmuCheck;
use crate::counters::CounterStatus;
use crate::model::document::Document;
use crate::model::outcome::stat::{EventCount, Outcome};
use crate::model::outcome::stat;
use crate::report::headlines::{headline, Headline};
use crate::report::table::Table;
use crate::units::Bytes;

pub fn stat_text(o: &Outcome) -> String {
    let mut out = format!(
        "stat: `{}` {} after {:.3} s (user {:.3} s, system {:.3} s, peak RSS {})\n",
        o.command.join(" "),
        o.exit.describe(),
        o.wall_s,
        o.usage.user_s,
        o.usage.system_s,
        Bytes(o.usage.max_rss_bytes)
    );
    out.push_str(&format!("PMU check: {}\n", pmu_check(&o.pmu_check)));
    out.push_str(&events_text(&o.events));
    out.push_str(&metrics_text(&o.metrics));
    out.push_str(&memory_text(o));
    out.push_str(&figures_text(&o.machine_figures));
    for line in o.cannot_know.iter().chain(&o.advice) {
        out.push_str(&format!("  → {line}\n"));
    }
    out.push_str(&intervals_text(o));
    out
}

pub fn pmu_check(c: &PmuCheck) -> String {
    match c {
        PmuCheck::Trusted { expected, counted, error } => format!(
            "trusted ({} instructions counted for a loop of {}, {:+.2}%)",
            crate::units::group_thousands(*counted),
            crate::units::group_thousands(*expected),
            error * 100.0
        ),
        PmuCheck::Suspect { expected, counted, error } => format!(
            "SUSPECT: {} instructions counted for a loop of exactly {} ({:+.1}%): metrics from hardware counts are marked",
            crate::units::group_thousands(*counted),
            crate::units::group_thousands(*expected),
            error * 100.0
        ),
        PmuCheck::Unavailable { reason } => format!("not made ({reason})"),
    }
}

/// Counts, then each distinct reason for the ones not measured.
pub fn events_text(events: &[EventCount]) -> String {
    let mut t = Table::new(["event", "count", "what it counts"]);
    let mut reasons: Vec<(String, Vec<&str>)> = Vec::new();
    for e in events {
        t.row([e.name.clone(), e.status.display(), e.description.clone()]);
        let why = match &e.status {
            CounterStatus::Unavailable { reason, fix } => {
                Some(format!("{reason}{}", fix.as_ref().map(|f| format!(" (fix: {f})")).unwrap_or_default()))
            }
            CounterStatus::NotCounted { reason } => Some(reason.clone()),
            _ => None,
        };
        if let Some(why) = why {
            match reasons.iter_mut().find(|r| r.0 == why) {
                Some(r) => r.1.push(&e.name),
                None => reasons.push((why, vec![&e.name])),
            }
        }
    }
    let mut out = t.render();
    for (why, names) in reasons {
        out.push_str(&format!("  not measured: {}: {why}\n", names.join(", ")));
    }
    out
}

pub fn metrics_text(metrics: &[crate::counters::metrics::Metric]) -> String {
    if metrics.is_empty() {
        return String::new();
    }
    let mut t = Table::new(["derived metric", "value", "formula"]);
    for m in metrics {
        t.row([m.name.clone(), m.display(), m.formula.clone()]);
    }
    t.render()
}

fn memory_text(o: &Outcome) -> String {
    let c = &o.coverage;
    if c.samples == 0 {
        return "memory: no sample of /proc/PID/smaps_rollup (the program ended within the first period)\n".into();
    }
    format!(
        "memory: peak RSS {}, peak on huge pages {}, time-weighted huge-page coverage {} ({} samples of /proc/PID/smaps_rollup; child processes not included)\n",
        Bytes(c.peak_rss_bytes),
        Bytes(c.peak_huge_bytes),
        c.time_weighted_huge_fraction.map(|f| format!("{:.1}%", f * 100.0)).unwrap_or_else(|| "not measured (one sample)".into()),
        c.samples
    )
}

fn figures_text(f: &stat::MachineFigures) -> String {
    let mut out = match (f.walk_ns, &f.source) {
        (Some(w), Some(s)) => format!("page-walk cost {w:.1} ns (memperf tlb, {s})\n"),
        (Some(w), None) => format!("page-walk cost {w:.1} ns\n"),
        (None, _) => "page-walk cost: not measured\n".into(),
    };
    for n in &f.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

fn intervals_text(o: &Outcome) -> String {
    let Some(ms) = o.interval_ms else { return String::new() };
    let counted: Vec<usize> =
        (0..o.events.len()).filter(|&i| o.intervals.iter().any(|r| r.counts[i].is_some())).collect();
    let mut head = vec!["t s".to_string()];
    head.extend(counted.iter().map(|&i| o.events[i].name.clone()));
    head.push("RSS".into());
    head.push("on huge pages".into());
    let mut t = Table::new(head);
    for r in &o.intervals {
        let mut row = vec![format!("{:.3}", r.t_s)];
        row.extend(counted.iter().map(|&i| match r.counts[i] {
            Some(v) => crate::units::group_thousands(v.round() as u64),
            None => "not counted".into(),
        }));
        row.push(r.memory.map(|m| Bytes(m.rss_bytes).to_string()).unwrap_or_else(|| "-".into()));
        row.push(r.memory.map(|m| Bytes(m.huge_bytes()).to_string()).unwrap_or_else(|| "-".into()));
        t.row(row);
    }
    format!("intervals of {ms} ms (counts during each; the last row ends at exit)\n{}", t.render())
}

fn stat_metrics(s: &stat::Outcome) -> Vec<Headline> {
    let one = |name: &str, unit: crate::report::headlines::Unit, v: f64, higher: bool| {
        let id = format!("stat.{}", crate::report::headlines::id_part(name));
        headline(&id, &[], format!("stat {name}"), unit, vec![v], v, higher)
    };
    let mut out = vec![
        one("wall time", crate::report::headlines::Unit::Seconds, s.wall_s, false),
        one("CPU time", crate::report::headlines::Unit::Seconds, s.usage.user_s + s.usage.system_s, false),
        one(
            "peak RSS",
            crate::report::headlines::Unit::Mebibytes,
            s.usage.max_rss_bytes as f64 / (1 << 20) as f64,
            false,
        ),
    ];
    if let Some((faults, _)) = s.event("page-faults").and_then(|e| e.status.value()) {
        out.push(one("page faults", crate::report::headlines::Unit::Count, faults, false));
    }
    for (name, higher) in [("CPI", false), ("IPC", true), ("estimated time in page walks", false)] {
        if let Some(m) = s.metric(name) {
            if let Some(v) = m.value() {
                out.push(one(name, crate::report::headlines::Unit::from(m.unit.clone()), v, higher));
            }
        }
    }
    out
}

/// With `--wss`, the hot set's own section, plots, metrics and verdict
/// follow stat's.
impl super::Render for Outcome {
    fn text(&self, doc: &Document) -> String {
        let mut out = stat_text(self);
        if let Some(h) = &self.hot_set {
            out.push_str(
                "
hot set (--wss; clearing the accessed bits makes the program refill its TLB, which the counts above include):\n",
            );
            out.push_str(&h.text(doc));
        }
        out
    }
    fn plots(&self, doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        self.hot_set.as_ref().map_or(Ok(Vec::new()), |h| h.plots(doc))
    }
    fn metrics(&self, doc: &Document) -> Vec<Headline> {
        let hot = self.hot_set.as_ref().map(|h| h.metrics(doc)).unwrap_or_default();
        stat_metrics(self).into_iter().chain(hot).collect()
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        self.advice.iter().chain(self.hot_set.iter().flat_map(|h| &h.verdict)).cloned().collect()
    }
    /// Totals, metrics, interval counts and memory samples.
    fn csv(&self, _doc: &Document) -> Option<String> {
        Some(crate::report::csv::stat(self))
    }
}

