//! `latency` as text: the curve, its levels, ratios and the K-chain sweep.

use super::super::table::Table;
use super::machine::coverage;
use super::ratio_text;
use crate::analysis::attribution::Attribution;
use crate::model::outcome::latency;
use crate::units::Bytes;

pub fn latency_text(o: &latency::Outcome) -> String {
    let mut out = format!("load-to-use latency, dependent random chase (seed {:#x})\n", o.seed);
    for r in &o.regions {
        out.push_str(&format!("  {} region: {}\n", r.requested, coverage(r)));
    }
    match o.core_clock.first() {
        Some(_) if o.core_clock.iter().all(|c| c.two_chains()) => out.push_str(&format!(
            "  core clock (two dependent chains): {}\n",
            o.core_clock.iter().map(|c| format!("{:.2} GHz", c.ghz)).collect::<Vec<_>>().join(" before, ") + " after"
        )),
        Some(_) => out.push_str("  core clock: not measured (one folding chain); no figures in cycles\n"),
        None => out.push_str("  core clock: not measured; no figures in cycles\n"),
    }
    let mut pols: Vec<_> = o.points.iter().map(|p| p.pages).collect();
    pols.sort();
    pols.dedup();
    let mut header = vec!["working set".to_string()];
    for p in &pols {
        header.push(format!("{p} ns"));
        header.push(format!("{p} spread"));
        header.push(format!("{p} local"));
    }
    let mut t = Table::new(header);
    let mut sizes: Vec<Bytes> = o.points.iter().map(|p| p.size_bytes).collect();
    sizes.sort();
    sizes.dedup();
    for size in sizes {
        let mut row = vec![size.to_string()];
        for pol in &pols {
            let get =
                |order: &str| o.points.iter().find(|p| p.size_bytes == size && p.pages == *pol && p.order == order);
            row.push(get("random").map(|p| format!("{:.1}", p.latency_ns.median)).unwrap_or_else(|| "-".into()));
            row.push(
                get("random")
                    .map(|p| format!("{:.1}..{:.1}", p.latency_ns.min, p.latency_ns.max))
                    .unwrap_or_else(|| "-".into()),
            );
            row.push(get("page-local").map(|p| format!("{:.1}", p.latency_ns.median)).unwrap_or_else(|| "-".into()));
        }
        t.row(row);
    }
    out.push_str("\n(spread: lowest..highest sample mean; each sample ≥ 10 ms after a warm-up traversal)\n");
    out.push_str(&t.render());
    if !o.levels.is_empty() {
        let mut lv = Table::new(["pages", "level", "latency ns", "cycles", "working sets", "knee after it"]);
        for l in &o.levels {
            lv.row([
                l.pages.to_string(),
                l.name.clone(),
                format!("{:.1}", l.latency_ns),
                l.cycles.map(|c| format!("{c:.0}")).unwrap_or_else(|| "-".into()),
                format!("{}..{}", l.from_bytes, l.up_to_bytes),
                match &l.knee_after {
                    None => "-".into(),
                    Some(Attribution::Level { name, size }) => format!("{name} ({})", Bytes(*size as u64)),
                    Some(Attribution::Unattributed) => "unattributed (no cache within ×2)".into(),
                },
            ]);
        }
        out.push_str("\nlevels (cycles at the measured core clock):\n");
        out.push_str(&lv.render());
    }
    // The largest working set of each pair (every size is in the document).
    let largest = o.ratios.iter().map(|r| r.size_bytes).max();
    for r in o.ratios.iter().filter(|r| Some(r.size_bytes) == largest) {
        out.push_str(&format!("{} / {} latency at {}: {}\n", r.b, r.a, r.size_bytes, ratio_text(&r.ratio)));
    }
    if !o.mlp.is_empty() {
        let mut m = Table::new(["pages", "working set", "chains", "ns per load", "speed-up"]);
        for x in &o.mlp {
            m.row([
                x.pages.to_string(),
                x.size_bytes.to_string(),
                x.chains.to_string(),
                format!("{:.1}", x.ns_per_load),
                format!("{:.2}", x.speedup),
            ]);
        }
        out.push_str("\nmemory-level parallelism (independent chases in flight, policies alternated):\n");
        out.push_str(&m.render());
    }
    out
}
