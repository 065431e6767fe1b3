//! `tlb` as text: the sweeps, the control, reaches beside CPUID, walk cost.

use super::info::coverage;
use crate::analysis::attribution::Attribution;
use crate::error::Result;
use crate::model::document::Document;
use crate::model::outcome::tlb;
use crate::model::outcome::tlb::Outcome;
use crate::report::headlines::{headline, Headline};
use crate::report::linechart::{render, Axis, LineChart, Marker, Ticks};
use crate::report::plot::Plot;
use crate::report::plot::{lines_by, Figure};
use crate::report::table::Table;

pub fn tlb_text(o: &tlb::Outcome) -> String {
    let mut out = String::from("TLB reach: one line per page, pages in random order\n");
    for r in &o.regions {
        out.push_str(&format!("  {} region: {}\n", r.requested, coverage(r)));
    }
    out.push_str(&points_table(o));
    out.push_str(&control_text(&o.control));
    out.push_str(&reaches_table(o));
    match &o.walk_ns {
        Some(w) => out.push_str(&format!(
            "\npage walk beyond the 4 KiB reach: {:.1} ns [{:.1}, {:.1}]{}\n",
            w.estimate,
            w.low,
            w.high,
            o.walk_cycles.map(|c| format!(" ({c:.0} cycles at the measured clock)")).unwrap_or_default()
        )),
        None => out.push_str("\npage walk cost: not measured (needs a valid control and a 4 KiB reach)\n"),
    }
    for a in &o.advice {
        out.push_str(&format!("{a}\n"));
    }
    out
}

/// ns per access at each page count, one column per policy and sweep, and
/// the walk cost beside them.
fn points_table(o: &tlb::Outcome) -> String {
    use tlb::Sweep;
    let mut keys: Vec<_> = o.points.iter().map(|p| (p.sweep, p.pages)).collect();
    keys.sort();
    keys.dedup();
    let mut header = vec!["pages".to_string()];
    for (sweep, p) in &keys {
        header.push(match sweep {
            Sweep::Own => format!("{p} ns"),
            Sweep::Control => format!("{p}@4KiB ns (control)"),
        });
    }
    header.push("walk ns (4k − control)".into());
    let mut t = Table::new(header);
    let mut counts: Vec<u64> = o.points.iter().map(|p| p.page_count).collect();
    counts.sort();
    counts.dedup();
    for c in counts {
        let mut row = vec![c.to_string()];
        for (sweep, pol) in &keys {
            let pt = o.points.iter().find(|p| p.page_count == c && p.pages == *pol && p.sweep == *sweep);
            row.push(pt.map(|p| format!("{:.1}", p.ns_per_access.median)).unwrap_or_else(|| "-".into()));
        }
        let walk = o.walk_costs.iter().find(|w| w.page_count == c);
        row.push(walk.map(|w| format!("{:.1}", w.ns_median)).unwrap_or_else(|| "-".into()));
        t.row(row);
    }
    t.render()
}

/// What the huge-page control showed, and so whether walks are costed.
fn control_text(control: &tlb::Control) -> String {
    use tlb::Control;
    match control {
        Control::Valid { policy, huge_fraction } => format!(
            "\ncontrol: {policy} region ({:.0}% huge) at a 4 KiB stride steps only where caches do: walk costs are derived from it\n",
            huge_fraction * 100.0
        ),
        Control::SameReach { policy, pages } => format!(
            "\ncontrol: {policy} pages step at ~{pages} pages, where the lines still fit in L1, as 4 KiB pages do: they use small TLB entries here, so no walk cost is derived and huge-page reaches are not given in bytes\n"
        ),
        Control::NotHuge { policy, huge_fraction } => format!(
            "\ncontrol: the {policy} region is only {} on huge pages: no walk cost is derived\n",
            huge_fraction.map(|f| format!("{:.0}%", f * 100.0)).unwrap_or_else(|| "an unknown fraction".into())
        ),
        Control::Unavailable { reason } => format!("\ncontrol: not measured ({reason}): no walk cost is derived\n"),
    }
}

/// Each knee found: where it lies, its reach, what it is, CPUID's claims
/// beside it, and its second look.
fn reaches_table(o: &tlb::Outcome) -> String {
    if o.reaches.is_empty() {
        return String::new();
    }
    let mut r = Table::new([
        "pages",
        "knee between (pages)",
        "reach",
        "is",
        "CPUID L1",
        "CPUID L2",
        "ns within",
        "ns beyond",
        "second look",
    ]);
    let unknown = |e: Option<u32>| e.map(|e| e.to_string()).unwrap_or_else(|| "unknown".into());
    for x in &o.reaches {
        r.row([
            x.pages.to_string(),
            knee_span(o, x),
            x.measured_reach_bytes.map(|b| b.to_string()).unwrap_or_else(|| "not in bytes".into()),
            match &x.attribution {
                Attribution::Level { name, .. } => format!("{name} DTLB"),
                Attribution::Unattributed if x.confounded_with_cache => "unattributed (may be a cache step)".into(),
                Attribution::Unattributed => "unattributed (no CPUID level within ×2)".into(),
            },
            unknown(x.cpuid_l1_entries),
            unknown(x.cpuid_l2_entries),
            format!("{:.1}", x.ns_within),
            format!("{:.1}", x.ns_beyond),
            super::latency::second_look_cell(x.second_look.as_ref()),
        ]);
    }
    format!("\n{}", r.render())
}

/// ns per access against the pages touched, one line per policy and sweep,
/// with CPUID's 4 KiB TLB entries marked (in a VM they may be the
/// hypervisor's table: the curve is the measurement).
fn tlb_plot(o: &tlb::Outcome) -> Result<Plot> {
    let lines = lines_by(
        &o.points,
        |p| (p.pages, p.sweep),
        |(pol, sweep)| match sweep {
            tlb::Sweep::Own => format!("{pol} pages, a line per page"),
            tlb::Sweep::Control => format!("{pol}, a line every 4 KiB (control)"),
        },
        |p| (p.page_count as f64, p.ns_per_access.median),
        |p| (p.ns_per_access.min, p.ns_per_access.max),
    );
    let title = "TLB: ns per access vs pages touched".to_string();
    let chart = LineChart {
        title: title.clone(),
        x: Axis::new("pages touched (count; the control: 4 KiB strides)", Ticks::Integer),
        y: Axis::new("ns per access (median; band: min–max)", Ticks::Number),
        lines,
        references: vec![],
        markers: knee_markers(o),
        spans: vec![],
    };
    Ok(Plot {
        file_name: "tlb.svg".into(),
        title,
        experiment: "tlb".into(),
        svg: render(&chart)?,
        figure: Figure::Line(chart),
    })
}

fn tlb_advice(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = doc.outcome::<tlb::Outcome>() {
        for a in &t.advice {
            let mut s = a.clone();
            if let Some(c) = s.get_mut(0..1) {
                c.make_ascii_uppercase();
            }
            out.push(format!("{s}."));
        }
    }
    out
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        tlb_text(self)
    }
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        tlb_plot(self).map(|p| vec![p])
    }
    /// The walk cost beyond the 4 KiB reach.
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        let Some(w) = &self.walk_ns else { return Vec::new() };
        let samples: Vec<f64> = self.walk_costs.iter().map(|c| c.ns_median).collect();
        vec![headline(
            "tlb.walk",
            &[],
            "page walk beyond the 4 KiB reach".into(),
            crate::report::headlines::Unit::Nanoseconds(None),
            samples,
            w.estimate,
            false,
        )
        .walks_4k()]
    }
    fn advice(&self, doc: &Document) -> Vec<String> {
        tlb_advice(doc)
    }
    fn advice_row(&self, advice: &str) -> Option<String> {
        Some(advice.trim_end_matches('.').to_lowercase().chars().take(40).collect())
    }
    /// Its figures in cycles are the clock's: the clock is said after it.
    fn in_cycles(&self) -> bool {
        true
    }
}

/// Where a knee lies: after the last page count still within the reach and
/// up to the next count measured ("64–80"), so neither reads as the entry
/// count (a 72-entry TLB steps between 64 and 80 pages on this sweep).
fn knee_span(o: &tlb::Outcome, r: &tlb::Reach) -> String {
    let next = o
        .points
        .iter()
        .filter(|p| p.pages == r.pages && p.sweep == tlb::Sweep::Own && p.page_count > r.measured_entries)
        .map(|p| p.page_count)
        .min();
    let n = crate::units::group_thousands;
    match next {
        Some(next) => format!("{}–{}", n(r.measured_entries), n(next)),
        None => format!("after {}", n(r.measured_entries)),
    }
}

/// The 4 KiB knees memperf found and confirmed on a second look, as
/// markers (CPUID's entries are in the table beside them, not drawn).
fn knee_markers(o: &tlb::Outcome) -> Vec<Marker> {
    o.reaches
        .iter()
        .filter(|r| r.pages == crate::memory::PagePolicy::Small)
        .filter(|r| !r.second_look.as_ref().is_some_and(|s| s.is_unstable()))
        .map(|r| {
            // Said as the table says it, the count as the axis writes it.
            let what = match &r.attribution {
                Attribution::Level { name, .. } => format!("{name} DTLB"),
                Attribution::Unattributed if r.confounded_with_cache => "may be a cache step".into(),
                Attribution::Unattributed => "unattributed".into(),
            };
            Marker { x: r.measured_entries as f64, label: format!("knee: {} pages ({what})", knee_span(o, r)) }
        })
        .collect()
}
