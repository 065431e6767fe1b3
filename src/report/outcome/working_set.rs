//! `working-set` as text: per page policy the time per row, FLOP/s, the
//! speed-up over 4 KiB pages, the coverage read back and the counters; the
//! translation time beside the walk cost's prediction; the article's
//! figures beside today's.

use crate::model::document::Document;
use crate::model::outcome::working_set;
use crate::model::outcome::working_set::Outcome;
use crate::report::headlines::{headline, Headline};
use crate::report::table::Table;
use crate::units::Bytes;

pub fn working_set_text(o: &Outcome) -> String {
    let mut out = format!(
        "working-set: random rows ({} floats, {} B) of three float arrays, {} in all ({} rows each), index of {} rows (seed {:#x})\n",
        o.row_floats,
        o.row_floats * 4,
        Bytes(o.total_bytes),
        o.rows,
        o.index_len,
        o.seed
    );
    out.push_str(&policy_table(o));
    out.push_str(&format!(
        "validation: the f32 sums agree with an f64 recomputation within {:e} of the terms' magnitude; every policy's sum {}\n",
        crate::kernels::working_set::TOLERANCE,
        if o.sums_agree { "is the same, bit for bit" } else { "is NOT the same: INVALID" }
    ));
    out.push_str("  4k − huge is the time attributable to address translation (measured, not counted)");
    match (o.walk_ns, o.predicted_translation_ns_per_row) {
        (Some(w), Some(p)) => out.push_str(&format!(
            "; the walk cost memperf tlb measured ({w:.1} ns, {}) predicts {p:.1} ns per row (3 arrays × walk × the drop in miss chance)\n",
            o.walk_cost_source.as_deref().unwrap_or("a saved result")
        )),
        _ => out.push_str("; no walk cost of this machine to predict it (memperf tlb found none, or none is saved)\n"),
    }
    out.push_str(&article_beside_today(o));
    for a in &o.advice {
        out.push_str(&format!("  → {a}\n"));
    }
    out
}

/// Per page policy: coverage, ns per row, GFLOP/s, speed-up, translation
/// time and the counters' figures.
fn policy_table(o: &Outcome) -> String {
    let mut t =
        Table::new(["pages", "on huge pages", "ns/row", "GFLOP/s", "speed-up vs 4k", "4k − this, ns/row", "counters"]);
    for r in &o.results {
        let counted: Vec<String> =
            r.metrics.iter().filter(|m| m.value().is_some()).map(|m| format!("{} {}", m.name, m.display())).collect();
        t.row([
            r.pages.to_string(),
            r.backing.huge_fraction.map(|f| format!("{:.0}%", f * 100.0)).unwrap_or_else(|| "unknown".into()),
            format!("{:.1}", r.ns_per_row.median),
            format!("{:.2}", r.flops_per_s / 1e9),
            r.speedup_vs_4k
                .as_ref()
                .map(|s| format!("×{:.2} [×{:.2}, ×{:.2}]", s.estimate, s.low, s.high))
                .unwrap_or_else(|| "-".into()),
            r.translation_ns_per_row.map(|d| format!("{d:.1}")).unwrap_or_else(|| "-".into()),
            if counted.iter().all(|c| c.ends_with("not measured")) {
                "not measured".into()
            } else {
                counted.join(", ")
            },
        ]);
    }
    t.render()
}

/// The 2002 article's figures, and this machine's speed-ups beside them.
fn article_beside_today(o: &Outcome) -> String {
    let a = &o.article;
    let mut out = format!(
        "2002 ({}): {:.0} s → {:.0} s on large pages, ×{:.1}; DTLB miss rate {:.0}% → {:.2}%; CPI {:.2} → {:.2}\n",
        a.machine,
        a.seconds_small_pages,
        a.seconds_large_pages,
        a.speedup,
        a.dtlb_miss_rate_small * 100.0,
        a.dtlb_miss_rate_large * 100.0,
        a.cpi_small,
        a.cpi_large
    );
    let today: Vec<String> = o
        .results
        .iter()
        .filter_map(|r| r.speedup_vs_4k.as_ref().map(|s| format!("{} ×{:.2}", r.pages, s.estimate)))
        .collect();
    out.push_str(&format!(
        "today (this machine): {}\n",
        if today.is_empty() { "no huge-page policy measured".into() } else { today.join(", ") }
    ));
    out
}

/// ns per row of the sample application on each page policy.
fn working_set_metrics(w: &working_set::Outcome) -> Vec<Headline> {
    w.results
        .iter()
        .map(|r| {
            let samples = r.samples_s.iter().map(|s| s * 1e9 / r.rows_per_sample as f64).collect();
            let h = headline(
                "working_set.row",
                &[("pages", r.pages.to_string())],
                format!("working-set {} pages", r.pages),
                crate::report::headlines::Unit::ns_per("row"),
                samples,
                r.ns_per_row.median,
                false,
            );
            // Its loads on 4 KiB pages walk their tables.
            if r.pages == crate::memory::PagePolicy::Small {
                h.walks_4k()
            } else {
                h
            }
        })
        .collect()
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        working_set_text(self)
    }
    /// One time per page policy: a table, with the article's figures beside.
    fn plots(&self, _doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        Ok(Vec::new())
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        working_set_metrics(self)
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        self.advice.clone()
    }
    /// Each huge policy against 4 KiB pages.
    fn paired(&self, _doc: &Document) -> Vec<super::PairedRatio> {
        self.results
            .iter()
            .filter_map(|r| {
                Some(super::PairedRatio {
                    key: format!("working_set.speedup{{pages={}}}", r.pages),
                    name: format!("sample application, 4k / {} time", r.pages),
                    ratio: r.speedup_vs_4k.clone()?,
                })
            })
            .collect()
    }
}
