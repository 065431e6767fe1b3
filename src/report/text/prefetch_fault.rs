//! `prefetch-fault` as text: targets, cells, findings, lists, TLB walk.

use super::super::table::Table;
use crate::model::outcome::prefetch_fault;

pub fn prefetch_fault_text(o: &prefetch_fault::Outcome) -> String {
    use prefetch_fault::{LoopKind, Target};
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
    let interval = |r: &Option<crate::timing::Ratio>| {
        r.map(|r| format!("{:+.2} [{:+.2}, {:+.2}]", r.median, r.low, r.high)).unwrap_or_else(|| "-".into())
    };
    let mut t =
        Table::new(["instruction", "target", "loop", "ns/prefetch", "vs mapped (ns, interval)", "sys s", "faults"]);
    for c in &o.cells {
        t.row([
            c.instruction.clone(),
            c.target.name().into(),
            format!("{:?}", c.loop_kind).to_lowercase(),
            format!("{:.2}", c.ns_per_prefetch.median),
            if c.target == Target::Mapped { "reference".into() } else { interval(&c.over_mapped_ns) },
            c.system_s.map(|s| format!("{s:.3}")).unwrap_or_else(|| "below resolution".into()),
            c.page_faults.to_string(),
        ]);
    }
    out.push('\n');
    out.push_str(&t.render());
    out.push('\n');
    for v in &o.verdicts {
        let kind = if v.loop_kind == LoopKind::Throughput { "throughput" } else { "latency-bound" };
        out.push_str(&format!("{} ({kind} loop): {}\n", v.instruction, v.finding.describe()));
    }
    let mut l = Table::new(["list length", "none ns/node", "unguarded vs none", "guarded vs none", "NULL prefetches"]);
    let mut lens: Vec<usize> = o.lists.iter().map(|c| c.length).collect();
    lens.sort();
    lens.dedup();
    for len in lens {
        let get = |v: &str| o.lists.iter().find(|c| c.length == len && c.variant == v);
        l.row([
            len.to_string(),
            get("none").map(|c| format!("{:.2}", c.ns_per_node.median)).unwrap_or_else(|| "-".into()),
            get("unguarded").map(|c| interval(&c.over_none_ns)).unwrap_or_else(|| "-".into()),
            get("guarded").map(|c| interval(&c.over_none_ns)).unwrap_or_else(|| "-".into()),
            get("unguarded").map(|c| c.null_prefetches.to_string()).unwrap_or_default(),
        ]);
    }
    out.push_str("\nlinked lists, prefetching the node two ahead (NULL near each end):\n");
    out.push_str(&l.render());
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
    out.push_str("\none line per 4 KiB in random page order, dependent loads, prefetch D pages ahead:\n");
    out.push_str(&s.render());
    out.push_str(&format!("{}\n", o.tlb_miss_verdict.describe()));
    out
}
