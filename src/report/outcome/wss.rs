//! `wss` as text, a chart and headlines: the hot set over time per kind of
//! mapping, the phases, the mappings of the longest phase, the verdict.

use crate::error::Result;
use crate::model::document::Document;
use crate::model::outcome::wss::{judged_phase, mapping_name};
use crate::model::outcome::wss::{Outcome, Phase, Reach};
use crate::report::headlines::{headline, Headline};
use crate::report::heatmap::{HeatMap, Row};
use crate::report::linechart::{render, Axis, AxisScale, Line, LineChart, Ticks};
use crate::report::plot::{Figure, Plot};
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
    if let Some(m) = &o.pages_method {
        out.push_str(&format!("  page by page (--pages): {m}\n"));
    }
    if let Some(w) = &o.written_not_measured {
        out.push_str(&format!("  bytes written per interval: {w}\n"));
    }
    out.push_str(&format!("  TLB reach: {}\n", reach_text(o.reach.as_ref())));
    if !o.phases.is_empty() {
        out.push_str("\nphases (hot set: bytes referenced per interval, median over the phase):\n");
        out.push_str(&phases_table(o));
    }
    out.push_str(&intervals_text(o));
    for v in &o.verdict {
        out.push_str(&format!("  → {v}\n"));
    }
    out
}

/// One row per phase: its time, its hot set, how much of it huge pages
/// can cover and how many 2 MiB pages would map it, its main mapping.
fn phases_table(o: &Outcome) -> String {
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
            huge_pages_cell(p),
            p.top_mapping
                .and_then(|m| o.mappings.get(m))
                .map(|m| format!("{} ({:.0}%)", mapping_name(m), p.top_share * 100.0))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    t.render()
}

/// 2 MiB pages to map a phase: counted, or the range its bytes allow.
fn huge_pages_cell(p: &Phase) -> String {
    if p.huge_pages_counted && p.huge_pages_min < p.huge_pages_max {
        format!("{}–{} (bounded)", p.huge_pages_min, p.huge_pages_max)
    } else if p.huge_pages_counted {
        format!("{} (counted)", p.huge_pages_min)
    } else if p.huge_pages_min == p.huge_pages_max {
        p.huge_pages_min.to_string()
    } else {
        format!("{}–{}", p.huge_pages_min, p.huge_pages_max)
    }
}

/// "L1 DTLB 64 entries (256KiB of 4 KiB pages), L2 not measured, from
/// …; CPUID claims 72 and 3072".
fn reach_text(r: Option<&Reach>) -> String {
    let Some(r) = r else { return "not known (none measured, and CPUID reports no TLB)".into() };
    let l2 = match r.l2_entries {
        Some(e) => format!("second level {e} entries ({})", Bytes(e * 4096)),
        None => "second level not measured".into(),
    };
    let claims = match (r.measured, r.cpuid_entries, r.cpuid_l2_entries) {
        (false, ..) => String::new(),
        (true, None, None) => "; CPUID claims none".into(),
        (true, a, b) => format!(
            "; CPUID claims {} and {}",
            a.map_or("-".into(), |v| v.to_string()),
            b.map_or("-".into(), |v| v.to_string())
        ),
    };
    let place = r.measured_on.as_ref().map_or("here".to_string(), |h| format!("on {h}"));
    let same = r.huge_same_reach.map(|n| format!("; huge pages step at {n} pages {place} too")).unwrap_or_default();
    format!(
        "L1 DTLB {} entries ({} of 4 KiB pages), {l2}, from {}{claims}{same}",
        r.entries,
        Bytes(r.entries * 4096),
        r.source
    )
}

/// The hot set of each interval, by kind of mapping.
fn intervals_text(o: &Outcome) -> String {
    let mut kinds: Vec<_> = o.mappings.iter().map(|m| m.kind).collect();
    kinds.sort();
    kinds.dedup();
    let written = o.intervals.iter().flat_map(|i| &i.mappings).any(|m| m.written_bytes.is_some());
    let mut header = vec!["t s".to_string(), "hot set".to_string(), "resident".to_string()];
    if written {
        header.push("written".into());
    }
    header.extend(kinds.iter().map(|k| format!("{} hot", k.name())));
    let mut t = Table::new(header);
    for i in &o.intervals {
        let mut row = vec![format!("{:.2}", i.t_s), Bytes(i.hot_bytes()).to_string(), Bytes(i.rss_bytes()).to_string()];
        if written {
            let w: Option<u64> = i.mappings.iter().filter_map(|m| m.written_bytes).reduce(|a, b| a + b);
            row.push(w.map_or("-".into(), |w| Bytes(w).to_string()));
        }
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
        x: Axis { scale: AxisScale::Linear, ..Axis::new("seconds since the program started", Ticks::Number) },
        y: Axis::new("MiB (hot: referenced in the interval)", Ticks::Number),
        lines: vec![line("hot set", &|i| i.hot_bytes()), line("resident", &|i| i.rss_bytes())],
        references: reach_references(o),
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

/// The TLB reaches as horizontal lines: where the hot set leaves them.
fn reach_references(o: &Outcome) -> Vec<crate::report::linechart::Reference> {
    let Some(r) = &o.reach else { return vec![] };
    let how = if r.measured { "measured" } else { "CPUID" };
    let mib = |e: u64| (e * 4096) as f64 / (1u64 << 20) as f64;
    let mut out = vec![crate::report::linechart::Reference {
        name: format!("L1 DTLB reach ({how})"),
        y: mib(r.entries),
        band: None,
    }];
    out.extend(r.l2_entries.map(|e| crate::report::linechart::Reference {
        name: format!("L2 TLB reach ({how})"),
        y: mib(e),
        band: None,
    }));
    out
}

/// Most rows a heat map draws; the rest are summed into one.
const HEAT_ROWS: usize = 16;

/// Mappings (rows) against time: the bytes each referenced per interval.
fn wss_heatmap(o: &Outcome) -> Option<Plot> {
    if o.intervals.len() < 2 {
        return None;
    }
    let n = o.intervals.len();
    // One row per name: a file's segments (text, data, …) are one row.
    let names: Vec<String> = o.mappings.iter().map(mapping_name).collect();
    let mut labels: Vec<String> = names.clone();
    labels.sort();
    labels.dedup();
    let row_of = |m: usize| labels.binary_search(&names[m]).expect("every name is a label");
    let mut per = vec![(vec![None; n], vec![0u64; n], 0u64); labels.len()];
    for (c, i) in o.intervals.iter().enumerate() {
        for m in &i.mappings {
            let row = &mut per[row_of(m.mapping)];
            row.0[c] = Some(row.0[c].unwrap_or(0) + m.referenced_bytes);
            row.1[c] += m.rss_bytes;
            row.2 += m.referenced_bytes;
        }
    }
    let mut order: Vec<usize> = (0..per.len()).filter(|&i| per[i].2 > 0).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(per[i].2));
    let mut rows: Vec<Row> = order
        .iter()
        .take(HEAT_ROWS)
        .map(|&i| Row {
            label: labels[i].clone(),
            values: per[i].0.clone(),
            notes: per[i].1.iter().map(|&r| format!("{} resident", Bytes(r))).collect(),
        })
        .collect();
    if order.len() > HEAT_ROWS {
        let rest = &order[HEAT_ROWS..];
        let values = (0..n).map(|c| Some(rest.iter().filter_map(|&i| per[i].0[c]).sum())).collect();
        rows.push(Row { label: format!("{} other mappings", rest.len()), values, notes: vec![] });
    }
    if rows.is_empty() {
        return None;
    }
    let columns =
        o.intervals.iter().enumerate().map(|(c, i)| (if c == 0 { 0.0 } else { o.intervals[c - 1].t_s }, i.t_s));
    let heat = HeatMap {
        title: "Bytes referenced per interval, by mapping".into(),
        x_label: "seconds since the program started".into(),
        columns: columns.collect(),
        rows,
    };
    Some(Plot {
        file_name: "wss-heatmap.svg".into(),
        title: heat.title.clone(),
        experiment: "wss".into(),
        svg: crate::report::heatmap::render(&heat),
        figure: Figure::Heat(heat),
    })
}

/// The hot set of the phase the verdict judges, and of each phase; each
/// with the hot sets of its intervals as samples, so that `compare` can
/// test a difference.
fn wss_metrics(o: &Outcome) -> Vec<Headline> {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let samples = |p: &Phase| -> Vec<f64> {
        o.intervals.iter().filter(|i| i.t_s > p.from_s && i.t_s <= p.to_s).map(|i| mib(i.hot_bytes())).collect()
    };
    let judged = judged_phase(o).map(|p| {
        let name = "wss hot set of the largest lasting phase".to_string();
        headline(
            "wss.hot_set_judged",
            &[],
            name,
            crate::report::headlines::Unit::Mebibytes,
            samples(p),
            mib(p.hot_bytes),
            false,
        )
    });
    let each = o.phases.iter().enumerate().map(|(i, p)| {
        let name = format!("wss phase {} hot set", i + 1);
        headline(
            "wss.hot_set",
            &[("phase", (i + 1).to_string())],
            name,
            crate::report::headlines::Unit::Mebibytes,
            samples(p),
            mib(p.hot_bytes),
            false,
        )
    });
    judged.into_iter().chain(each).collect()
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        wss_text(self)
    }
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        Ok(wss_plot(self)?.into_iter().chain(wss_heatmap(self)).collect())
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        wss_metrics(self)
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        self.verdict.clone()
    }
    /// A row per mapping per interval, the interval's time on each.
    fn csv(&self, _doc: &Document) -> Option<String> {
        Some(crate::report::csv::wss(self))
    }
}
