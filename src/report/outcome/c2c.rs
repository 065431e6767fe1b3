//! `c2c` as text: per handoff the N×N matrix of median one-way ns (none on
//! the diagonal), then the pairs grouped by topology.

use crate::model::document::Document;
use crate::model::outcome::c2c;
use crate::model::outcome::c2c::Outcome;
use crate::report::headlines::{headline, Headline};
use crate::report::table::Table;

pub fn c2c_text(o: &Outcome) -> String {
    let mut out =
        String::from("c2c: one-way ns of a cache line between two CPUs (median; each pair timed from the lower CPU)\n");
    for &h in &o.handoffs {
        out.push_str(&format!("{} handoff\n", h.name()));
        let mut head = vec!["CPU".to_string()];
        head.extend(o.cpus.iter().map(|c| c.to_string()));
        let mut t = Table::new(head);
        for (i, row) in o.matrix(h).iter().enumerate() {
            let mut cells = vec![o.cpus[i].to_string()];
            cells.extend(row.iter().map(|c| c.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into())));
            t.row(cells);
        }
        out.push_str(&t.render());
    }
    let mut g = Table::new(["relation", "handoff", "pairs", "median ns", "range of pair medians"]);
    for x in &o.groups {
        g.row([
            x.relation.name().to_string(),
            x.handoff.name().to_string(),
            x.pairs.to_string(),
            format!("{:.1}", x.median_ns),
            format!("{:.1} .. {:.1}", x.min_ns, x.max_ns),
        ]);
    }
    out.push_str(&g.render());
    if let Some(n) = &o.note {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

/// Core-to-core one-way ns per topology relation and handoff (samples:
/// the pairs' medians).
fn c2c_metrics(c: &c2c::Outcome) -> Vec<Headline> {
    c.groups
        .iter()
        .map(|g| {
            let samples = c
                .pairs
                .iter()
                .filter(|p| p.relation == g.relation && p.handoff == g.handoff)
                .flat_map(|p| p.samples_ns.iter().copied())
                .collect();
            headline(
                "c2c.one_way",
                &[("relation", g.relation.name().to_string()), ("handoff", g.handoff.name().to_string())],
                format!("c2c {}, {}", g.relation.name(), g.handoff.name()),
                crate::report::headlines::Unit::Nanoseconds(None),
                samples,
                g.median_ns.0,
                false,
            )
            .on_cpus(2)
        })
        .collect()
}

/// The c2c matrix as a heat map: one table per handoff, each cell shaded
/// from light (fast) to deeper (slow) on the scale of that table, dark text
/// on every shade (contrast holds in light and dark mode).
fn heat_map(o: &Outcome) -> String {
    let mut s = String::new();
    for &h in &o.handoffs {
        let m = o.matrix(h);
        let values: Vec<f64> = m.iter().flatten().flatten().copied().collect();
        let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        s.push_str(&format!(
            "<table class=\"heat\"><caption>{} handoff: one-way ns, CPU by CPU (lighter is faster)</caption><tr><th>CPU</th>",
            crate::report::html::escape(h.name())
        ));
        for c in &o.cpus {
            s.push_str(&format!("<th>{c}</th>"));
        }
        s.push_str("</tr>\n");
        for (i, row) in m.iter().enumerate() {
            s.push_str(&format!("<tr><th>{}</th>", o.cpus[i]));
            for cell in row {
                match cell {
                    Some(v) => {
                        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
                        let light = 96.0 - 24.0 * t;
                        s.push_str(&format!("<td style=\"background:hsl(28,85%,{light:.0}%);color:#111\">{v:.1}</td>"));
                    }
                    None => s.push_str("<td style=\"background:#fff;color:#111\">–</td>"),
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
    }
    s
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        c2c_text(self)
    }
    /// Its matrix is shown as a shaded table ([`heat_map`]), every pair's
    /// figure readable.
    fn plots(&self, _doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        Ok(Vec::new())
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        c2c_metrics(self)
    }
    /// Which CPUs share a cache is the machine's; the groups say the cost.
    fn advice(&self, _doc: &Document) -> Vec<String> {
        Vec::new()
    }
    fn html_extra(&self) -> Option<String> {
        Some(heat_map(self))
    }
}
