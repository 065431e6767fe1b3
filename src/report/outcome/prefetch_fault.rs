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
    r.as_ref().map(|r| format!("{:+.2} [{:+.2}, {:+.2}]", r.estimate, r.low, r.high)).unwrap_or_else(|| "-".into())
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
            format!("×{:.2} [×{:.2}, ×{:.2}]", r.speedup.estimate, r.speedup.low, r.speedup.high),
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
                    let r = if *t == Target::Mapped { cell.over_baseline_ns.as_ref() } else { cell.over_mapped_ns.as_ref() }?;
                    Some(Bar { value: r.estimate, interval: Some((r.low, r.high)) })
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
        .flat_map(|c| [c.over_baseline_ns.as_ref(), c.over_mapped_ns.as_ref()])
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
    doc.outcome::<prefetch_fault::Outcome>().map(advice_of).unwrap_or_default()
}

/// The lines of advice `pf` gives: traps (counted, not timed), else each
/// instruction's verdict on its bad targets against a mapped line, then
/// the TLB-miss verdict.
fn advice_of(pf: &Outcome) -> Vec<String> {
    use crate::report::verdict::{said, SPEED};
    use prefetch_fault::{Finding, TlbMissVerdict};
    let mut out = Vec::new();
    let mut traps: Vec<&str> = pf
        .verdicts
        .iter()
        .filter(|v| matches!(v.finding, Finding::Traps { .. }))
        .map(|v| v.instruction.as_str())
        .collect();
    traps.dedup();
    if !traps.is_empty() {
        out.push(format!("Prefetches of bad addresses trap here ({}): guard them with a NULL test.", traps.join(", ")));
    } else if !pf.verdicts.is_empty()
        && pf.verdicts.iter().all(|v| matches!(v.finding, Finding::NoCostBeyondNoise { .. }))
    {
        out.push(format!(
            "Prefetches of bad addresses (NULL, unmapped, PROT_NONE, kernel) against a mapped line, every instruction \
             and loop: no change, each within ±{:.0}% of a mapped prefetch's cost or less: prefetching NULL at the end \
             of a list is harmless.",
            crate::report::text::MIN_ADVISED_CHANGE * 100.0
        ));
    } else if let Some(line) = costs_line(pf) {
        out.push(line);
    }
    out.push(match &pf.tlb_miss_verdict {
        TlbMissVerdict::Walks { ahead_pages, speedup_small } => format!(
            "Prefetching {ahead_pages} pages ahead of a 4 KiB page walk against none: {}: prefetches that miss the \
             TLB walk the page table here, so a prefetch far enough ahead hides a page walk.",
            said(&speedup_small.verdict(), SPEED)
        ),
        other => {
            let mut v = other.describe();
            if let Some(c) = v.get_mut(0..1) {
                c.make_ascii_uppercase();
            }
            format!("{v}.")
        }
    });
    out
}

/// The instruction and loop pairs whose bad targets are not free, in one
/// line: the costliest pair's verdict (else the least resolved one's), and
/// how many pairs cost more, are not resolved, or cost no more.
fn costs_line(pf: &Outcome) -> Option<String> {
    use crate::report::verdict::{said, COST_NS};
    use prefetch_fault::Finding;
    let count = |f: fn(&Finding) -> bool| pf.verdicts.iter().filter(|v| f(&v.finding)).count();
    let costs = count(|f| matches!(f, Finding::Costs { .. }));
    let open = count(|f| matches!(f, Finding::NotResolved { .. }));
    let free = count(|f| matches!(f, Finding::NoCostBeyondNoise { .. }));
    let pick = |want: fn(&Finding) -> bool| {
        pf.verdicts
            .iter()
            .filter(|v| want(&v.finding))
            .filter_map(|v| match &v.finding {
                Finding::Costs { target, over_mapped_ns } | Finding::NotResolved { target, over_mapped_ns } => {
                    Some((v, *target, over_mapped_ns))
                }
                _ => None,
            })
            .max_by(|a, b| a.2.estimate.total_cmp(&b.2.estimate))
    };
    let (v, target, r) = pick(|f| matches!(f, Finding::Costs { .. })).or_else(|| pick(|_| true))?;
    let kind = match v.loop_kind {
        prefetch_fault::LoopKind::Throughput => "throughput",
        prefetch_fault::LoopKind::Latency => "dependent",
    };
    Some(format!(
        "A prefetch of a bad address ({}, {} in the {kind} loop) against one of a mapped line: {}. Of {} instruction \
         and loop pairs, {costs} cost more, {open} are not resolved and {free} cost no more: prefetches of such \
         addresses do not trap here, and cost what they cost only where they are frequent.",
        target.name(),
        v.instruction,
        said(&r.verdict(), COST_NS),
        pf.verdicts.len()
    ))
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
    /// The page walk with a prefetch ahead against none, per policy and
    /// distance.
    fn paired(&self, _doc: &Document) -> Vec<super::PairedRatio> {
        self.stride
            .iter()
            .map(|s| super::PairedRatio {
                key: format!("prefetch_fault.walk{{ahead_pages={},pages={}}}", s.ahead_pages, s.pages),
                name: format!("page walk on {} pages, none / {} pages ahead", s.pages, s.ahead_pages),
                ratio: s.speedup.clone(),
            })
            .collect()
    }
    fn advice_row(&self, advice: &str) -> Option<String> {
        advice.starts_with("Prefetches that miss the TLB").then(|| "prefetches that miss the TLB".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prefetch_fault::{Finding, TlbMissVerdict};

    /// Each finding's line: a trap, no cost on any bad address, a cost
    /// in the verdicts' words; and the TLB-miss verdict after them.
    #[test]
    fn each_finding_is_said_in_the_verdicts_words() {
        let (_, doc) = crate::test_support::recorded_suites().into_iter().next().expect("a recording");
        let recorded = doc.outcome::<Outcome>().expect("its prefetch-fault").clone();
        let with = |finding: Finding| {
            let mut o = recorded.clone();
            o.verdicts.iter_mut().for_each(|v| v.finding = finding.clone());
            o
        };
        let free = advice_of(&with(Finding::NoCostBeyondNoise { widest_high_ns: 0.1 }));
        assert!(free[0].contains("no change, each within ±5%") && free[0].contains("harmless"), "{free:?}");
        let target = recorded.cells[0].target;
        let traps = advice_of(&with(Finding::Traps { target, faults_per_prefetch: 1.0 }));
        assert!(traps[0].starts_with("Prefetches of bad addresses trap here"), "{traps:?}");
        let cost = crate::timing::Ratio::differences(&[5.0, 5.5, 4.8, 5.2, 5.1, 4.9, 5.3, 5.0, 5.2, 4.7, 5.0, 5.1])
            .unwrap()
            .relative_to(10.0);
        let costs = advice_of(&with(Finding::Costs { target, over_mapped_ns: cost }));
        assert!(costs[0].contains(": costs more +5.") && costs[0].contains("] ns"), "{costs:?}");
        assert_eq!(costs.len(), 2, "one line for every pair, and the TLB-miss verdict: {costs:?}");
        let mut nothing = recorded.clone();
        nothing.tlb_miss_verdict = TlbMissVerdict::Inconclusive { reason: "too few pairs".into() };
        assert_eq!(advice_of(&nothing).last().map(String::as_str), Some("Inconclusive: too few pairs."));
    }
}
