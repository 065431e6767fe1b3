//! `prefetch-fault` as text: targets, cells, findings, lists, TLB walk.

use crate::error::Result;
use crate::model::document::Document;
use crate::model::kernels::prefetch::Guard;
use crate::model::outcome::prefetch_fault;
use crate::model::outcome::prefetch_fault::Outcome;
use crate::report::barchart::{self, Bar, BarChart};
use crate::report::headlines::{headline, Headline};
use crate::report::plot::{Figure, Plot};
use crate::report::table::Table;

pub fn prefetch_fault_text(o: &prefetch_fault::Outcome) -> String {
    use prefetch_fault::LoopKind;
    let mut out = String::from("prefetch of bad addresses, each rotated over distinct pages and verified first\n");
    for t in &o.targets {
        out.push_str(&format!(
            "  {} ({} addresses, {}..{}): {}{}\n",
            t.target.name(),
            t.addresses,
            t.first,
            t.last,
            t.check,
            if t.ok { "" } else { " (CHECK FAILED)" }
        ));
    }
    out.push('\n');
    out.push_str(&cells_table(o));
    out.push('\n');
    for v in &o.verdicts {
        let kind = if v.loop_kind == LoopKind::Throughput { "throughput" } else { "latency-bound" };
        out.push_str(&format!("{} ({kind} loop): {}\n", v.instruction, v.finding.describe()));
    }
    out.push_str("\nlinked lists, prefetching the node two ahead (NULL near each end):\n");
    out.push_str(&lists_table(o));
    out.push_str("\none line per 4 KiB in random page order, dependent loads, prefetch D pages ahead:\n");
    out.push_str(&stride_table(o));
    out.push_str(&format!("{}\n", o.tlb_miss_verdict.describe()));
    out
}

/// A paired difference in ns with its interval, or "-".
fn interval(r: &Option<crate::timing::Ratio>) -> String {
    r.map(|r| format!("{:+.2} [{:+.2}, {:+.2}]", r.median, r.low, r.high)).unwrap_or_else(|| "-".into())
}

/// Each instruction on each target in each loop, against mapped lines.
fn cells_table(o: &Outcome) -> String {
    let mut t =
        Table::new(["instruction", "target", "loop", "ns/prefetch", "vs mapped (ns, interval)", "sys s", "faults"]);
    for c in &o.cells {
        t.row([
            c.instruction.clone(),
            c.target.name().into(),
            format!("{:?}", c.loop_kind).to_lowercase(),
            format!("{:.2}", c.ns_per_prefetch.median),
            if c.target == prefetch_fault::Target::Mapped { "reference".into() } else { interval(&c.over_mapped_ns) },
            c.system_s.map(|s| format!("{s:.3}")).unwrap_or_else(|| "below resolution".into()),
            c.page_faults.to_string(),
        ]);
    }
    t.render()
}

/// Per list length: no prefetch, and the unguarded and guarded prefetch
/// two nodes ahead against it.
fn lists_table(o: &Outcome) -> String {
    let mut l = Table::new(["list length", "none ns/node", "unguarded vs none", "guarded vs none", "NULL prefetches"]);
    let mut lens: Vec<usize> = o.lists.iter().map(|c| c.length).collect();
    lens.sort();
    lens.dedup();
    for len in lens {
        let get = |v: Guard| o.lists.iter().find(|c| c.length == len && c.variant == v);
        l.row([
            len.to_string(),
            get(Guard::None).map(|c| format!("{:.2}", c.ns_per_node.median)).unwrap_or_else(|| "-".into()),
            get(Guard::Unguarded).map(|c| interval(&c.over_none_ns)).unwrap_or_else(|| "-".into()),
            get(Guard::Guarded).map(|c| interval(&c.over_none_ns)).unwrap_or_else(|| "-".into()),
            get(Guard::Unguarded).map(|c| c.null_prefetches.to_string()).unwrap_or_default(),
        ]);
    }
    l.render()
}

/// Per page policy: ns per access with and without the prefetch D pages ahead.
fn stride_table(o: &Outcome) -> String {
    let mut s =
        Table::new(["pages", "on huge pages", "ahead (pages)", "ns/access without", "with", "speed-up [interval]"]);
    for r in &o.stride {
        s.row([
            r.pages.to_string(),
            r.huge_fraction.map(|f| format!("{:.0}%", f * 100.0)).unwrap_or_else(|| "-".into()),
            r.ahead_pages.to_string(),
            format!("{:.1}", r.ns_per_access_without),
            format!("{:.1}", r.ns_per_access_with),
            format!("×{:.2} [×{:.2}, ×{:.2}]", r.speedup.median, r.speedup.low, r.speedup.high),
        ]);
    }
    s.render()
}

/// What each prefetch instruction costs on each target: for a bad target,
/// ns over the same instruction on mapped lines; for mapped lines, ns over
/// the loop without prefetch; with the paired interval; one bar per loop kind.
fn prefetch_fault_plot(o: &prefetch_fault::Outcome) -> Result<Plot> {
    use prefetch_fault::{LoopKind, Target};
    let mut rows: Vec<(String, Target)> =
        o.cells.iter().filter(|c| c.instruction != "none").map(|c| (c.instruction.clone(), c.target)).collect();
    rows.sort();
    rows.dedup();
    let groups = [LoopKind::Throughput, LoopKind::Latency]
        .iter()
        .map(|&k| {
            let bars = rows
                .iter()
                .map(|(ins, t)| {
                    let cell = o.cells.iter().find(|c| &c.instruction == ins && c.target == *t && c.loop_kind == k)?;
                    let r = if *t == Target::Mapped { cell.over_baseline_ns } else { cell.over_mapped_ns }?;
                    Some(Bar { value: r.median, interval: Some((r.low, r.high)) })
                })
                .collect();
            (format!("{k:?} loop").to_lowercase(), bars)
        })
        .collect();
    let title = "Prefetching bad addresses: extra ns per prefetch".to_string();
    let chart = BarChart {
        title: title.clone(),
        value_label: "ns per prefetch over the mapped line (mapped: over no prefetch)".into(),
        whisker: interval_words(o),
        categories: rows.iter().map(|(i, t)| format!("{i} {}", t.name())).collect(),
        groups,
        reference: Some(("0 ns: no extra cost".into(), 0.0)),
    };
    Ok(Plot {
        file_name: "prefetch-fault.svg".into(),
        title,
        experiment: "prefetch-fault".into(),
        svg: barchart::render(&chart)?,
        figure: Figure::Bars(chart),
    })
}

/// What the whiskers span: the paired median's interval at the lowest
/// confidence any cell reached (cells with fewer pairs reach less).
fn interval_words(o: &prefetch_fault::Outcome) -> String {
    let lowest = o
        .cells
        .iter()
        .flat_map(|c| [c.over_baseline_ns, c.over_mapped_ns])
        .flatten()
        .map(|r| r.confidence)
        .fold(f64::INFINITY, f64::min);
    if lowest.is_finite() {
        format!("≥{:.0}% interval of the paired median", lowest * 100.0)
    } else {
        "interval of the paired median".into()
    }
}

fn prefetch_fault_advice(doc: &Document) -> Vec<String> {
    let lines = doc.outcome::<prefetch_fault::Outcome>().map(advice_of).unwrap_or_default();
    lines.into_iter().map(|(line, _)| line).collect()
}

/// The lines of advice `pf` gives, each with whether it rests on 4 KiB
/// walks: a trap (counted, not timed: no), or no cost on bad addresses
/// (timed prefetches whose translation misses and walks: yes); then its
/// TLB-miss verdict (a 4 KiB walk with and without a prefetch ahead: yes,
/// unless inconclusive).
fn advice_of(pf: &Outcome) -> Vec<(String, bool)> {
    use prefetch_fault::Finding;
    let mut out = Vec::new();
    let mut traps: Vec<&str> = pf
        .verdicts
        .iter()
        .filter(|v| matches!(v.finding, Finding::Traps { .. }))
        .map(|v| v.instruction.as_str())
        .collect();
    traps.dedup();
    let free: Vec<&str> = pf
        .verdicts
        .iter()
        .filter(|v| matches!(v.finding, Finding::NoCostBeyondNoise { .. }))
        .map(|v| v.instruction.as_str())
        .collect();
    if !traps.is_empty() {
        out.push((
            format!("Prefetches of bad addresses trap here ({}): guard them with a NULL test.", traps.join(", ")),
            false,
        ));
    } else if pf.verdicts.iter().all(|v| matches!(v.finding, Finding::NoCostBeyondNoise { .. })) && !free.is_empty()
    {
        out.push(("No prefetch instruction traps or costs more than the noise on a bad address here: prefetching NULL at the end of a list is harmless.".into(), true));
    }
    let mut v = pf.tlb_miss_verdict.describe();
    if let Some(c) = v.get_mut(0..1) {
        c.make_ascii_uppercase();
    }
    let walks = !matches!(pf.tlb_miss_verdict, prefetch_fault::TlbMissVerdict::Inconclusive { .. });
    out.push((format!("{v}."), walks));
    out
}

/// ns per prefetch of each instruction on each target, in each loop (the
/// cells' raw samples): what a compare or a fleet joins on.
fn prefetch_fault_metrics(o: &Outcome) -> Vec<Headline> {
    o.cells
        .iter()
        .map(|c| {
            let loop_kind = match c.loop_kind {
                prefetch_fault::LoopKind::Throughput => "throughput",
                prefetch_fault::LoopKind::Latency => "latency",
            };
            headline(
                "prefetch_fault.ns_per_prefetch",
                &[
                    ("instruction", c.instruction.clone()),
                    ("target", c.target.name().to_string()),
                    ("loop", loop_kind.to_string()),
                ],
                format!("prefetch-fault {} of {}, {loop_kind} loop", c.instruction, c.target.name()),
                crate::report::headlines::Unit::ns_per("prefetch"),
                c.samples_ns.clone(),
                c.ns_per_prefetch.median,
                false,
            )
        })
        .collect()
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        prefetch_fault_text(self)
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        prefetch_fault_metrics(self)
    }
    fn plots(&self, _doc: &Document) -> Result<Vec<Plot>> {
        prefetch_fault_plot(self).map(|p| vec![p])
    }
    fn advice(&self, doc: &Document) -> Vec<String> {
        prefetch_fault_advice(doc)
    }
    fn advice_row(&self, advice: &str) -> Option<String> {
        advice.starts_with("Prefetches that miss the TLB").then(|| "prefetches that miss the TLB".into())
    }
    /// The lines resting on 4 KiB walks (as [`advice_of`] tags them), which
    /// the host moves apart from the reference's read and chase.
    fn advice_side_references(&self, line: Option<&str>) -> &'static [super::SideReference] {
        if advice_of(self).iter().filter(|(_, walks)| *walks).any(|(l, _)| line.is_none_or(|t| t == l)) {
            &[super::SideReference::Walks4k]
        } else {
            &[]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Render, SideReference};
    use super::*;
    use prefetch_fault::{Finding, TlbMissVerdict};

    /// Each line of its advice and what it rests on: the TLB-miss walk and
    /// "no cost on a bad address" on 4 KiB walks, a trap (counted) and an
    /// inconclusive verdict on nothing. The recordings give only the first.
    #[test]
    fn the_lines_resting_on_4k_walks_say_so_and_no_others() {
        let (_, doc) = crate::test_support::recorded_suites().into_iter().next().expect("a recording");
        let recorded = doc.outcome::<Outcome>().expect("its prefetch-fault").clone();
        let rests = |o: &Outcome, starts: &str| {
            let lines: Vec<String> = advice_of(o).into_iter().map(|(l, _)| l).collect();
            let line = lines.iter().find(|l| l.starts_with(starts)).unwrap_or_else(|| panic!("{starts}: {lines:?}"));
            o.advice_side_references(Some(line)).to_vec()
        };
        assert!(matches!(recorded.tlb_miss_verdict, TlbMissVerdict::Walks { .. }), "{:?}", recorded.tlb_miss_verdict);
        assert_eq!(rests(&recorded, "Prefetches that miss the TLB walk"), [SideReference::Walks4k]);
        let with = |finding: Finding| {
            let mut o = recorded.clone();
            o.verdicts.iter_mut().for_each(|v| v.finding = finding.clone());
            o
        };
        let free = with(Finding::NoCostBeyondNoise { widest_high_ns: 0.1 });
        assert_eq!(rests(&free, "No prefetch instruction traps"), [SideReference::Walks4k]);
        let target = recorded.cells[0].target;
        let traps = with(Finding::Traps { target, faults_per_prefetch: 1.0 });
        assert_eq!(rests(&traps, "Prefetches of bad addresses trap"), []);
        assert_eq!(traps.advice_side_references(None), [SideReference::Walks4k], "its TLB-miss line");
        let mut nothing = traps.clone();
        nothing.tlb_miss_verdict = TlbMissVerdict::Inconclusive { reason: "too few pairs".into() };
        assert_eq!(rests(&nothing, "Inconclusive: too few pairs"), []);
        assert_eq!(nothing.advice_side_references(None), [], "a trap and an inconclusive verdict rest on no walk");
    }
}
