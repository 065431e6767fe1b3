//! Terminal rendering of a document: one section per experiment, each a
//! table plus the sentences a user acts on. Rendered from the document alone.

use super::table::{gbps, Table};
use crate::analysis::attribution::Attribution;
use crate::machine::Fingerprint;
use crate::model::document::{Document, Status, Warning};
use crate::model::outcome::{bandwidth, info, latency, page_init, prefetch_fault, tlb};
use crate::units::Bytes;

pub fn render(doc: &Document) -> String {
    let mut out = String::new();
    for rec in &doc.experiments {
        out.push_str(&experiment(doc, rec));
        out.push('\n');
    }
    out.push_str(&derived(doc));
    out
}

/// The text of one experiment's record (its status when it did not complete).
pub fn experiment(doc: &Document, rec: &crate::model::document::ExperimentRecord) -> String {
    if rec.status != Status::Completed {
        return format!(
            "{}: {}\n",
            rec.name,
            rec.skip_reason.clone().unwrap_or_else(|| format!("{:?}", rec.status).to_lowercase())
        );
    }
    use crate::model::Outcome;
    let mut out = match &rec.outcome {
        Some(Outcome::Info(o)) => machine(&doc.machine, Some(o)),
        Some(Outcome::Bandwidth(o)) => bandwidth_text(o),
        Some(Outcome::Latency(o)) => latency_text(o),
        Some(Outcome::Tlb(o)) => tlb_text(o),
        Some(Outcome::PrefetchFault(o)) => prefetch_fault_text(o),
        Some(Outcome::PageInit(o)) => page_init_text(o),
        None => format!("{}: completed without an outcome\n", rec.name),
    };
    if !rec.valid {
        out.push_str(&format!("{}: INVALID — a result failed validation (see the warnings)\n", rec.name));
    }
    out
}

/// Little's law, where the document has both a bandwidth and a latency.
pub fn derived(doc: &Document) -> String {
    let both = doc.experiment("bandwidth").is_some() && doc.experiment("latency").is_some();
    if !both {
        return String::new();
    }
    let c = super::concurrency::concurrency(doc);
    let mut out = String::from("effective concurrency (Little's law: bandwidth × latency / line size)\n");
    if c.is_empty() {
        out.push_str("  not measured: needs a DRAM latency on huge pages (≥ 90% coverage, working set ≥ 4× the last-level cache)\n");
    }
    for x in c {
        out.push_str(&format!("  {} pages, {} thread(s): {}\n", x.pages, x.threads, x.formula));
        if let Some(k) = x.chase_saturation_chains {
            out.push_str(&format!(
                "    cross-check: independent chases stop gaining at {k} chains (demand misses alone)\n"
            ));
        }
    }
    out.push('\n');
    out
}

/// Warnings, one per line with the fix, for stderr.
pub fn warnings(doc: &Document) -> String {
    let all = doc.warnings.iter().chain(doc.experiments.iter().flat_map(|e| e.warnings.iter()));
    all.map(warning_line).collect()
}

pub fn warning_line(w: &Warning) -> String {
    match &w.fix {
        Some(fix) => format!("warning: {} (fix: {fix})\n", w.message),
        None => format!("warning: {}\n", w.message),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "unknown".into())
}

pub fn machine(m: &Fingerprint, info: Option<&info::Outcome>) -> String {
    let mut t = Table::new(["", ""]);
    let c = &m.cpu;
    t.row(["host".into(), m.hostname.clone()]);
    t.row(["kernel".into(), format!("{} ({})", m.kernel, m.arch)]);
    t.row([
        "cpu".into(),
        format!(
            "{} {} (family {}, model {}, stepping {})",
            c.identity.vendor, c.identity.model_name, c.identity.family, c.identity.model, c.identity.stepping
        ),
    ]);
    t.row([
        "cores".into(),
        format!("{} logical, {} physical, {} socket(s)", c.logical_cpus, c.physical_cores, c.sockets),
    ]);
    t.row(["hypervisor".into(), c.identity.hypervisor.clone().unwrap_or_else(|| "none".into())]);
    t.row([
        "frequency".into(),
        c.nominal_frequency_hz.map(|f| format!("{:.2} GHz nominal", f / 1e9)).unwrap_or_else(|| "unknown".into()),
    ]);
    t.row(["vector isa".into(), c.identity.vector_isa.join(", ")]);
    t.row([
        "memory".into(),
        format!("{} total, {} available", opt(m.memory_total_bytes), opt(m.memory_available_bytes)),
    ]);
    t.row(["prefetch".into(), m.prefetch_instructions.join(", ")]);
    t.row(["thp".into(), format!("enabled={}, defrag={}", m.thp.enabled, m.thp.defrag)]);
    let sys = &m.system;
    t.row([
        "cpufreq".into(),
        format!(
            "governor {}, boost {}",
            opt(sys.governor.clone()),
            sys.boost.map(|b| if b { "on" } else { "off" }.to_string()).unwrap_or_else(|| "unknown".into())
        ),
    ]);
    t.row(["topology".into(), format!("SMT {}, {} NUMA node(s)", opt(sys.smt.clone()), opt(sys.numa_nodes))]);
    t.row(["meltdown".into(), opt(sys.meltdown.clone())]);
    t.row([
        "counters".into(),
        if m.pmu.hardware_counters {
            "hardware counters available".to_string()
        } else {
            format!("no hardware counters: {}", opt(m.pmu.reason.clone()))
        },
    ]);
    let mut out = t.render().lines().skip(1).map(|l| format!("{l}\n")).collect::<String>();

    let mut caches = Table::new(["cache", "size", "line", "ways", "shared by", "CPUID says"]);
    for k in &m.caches {
        caches.row([
            format!("L{} {}", k.level, k.kind),
            k.size_bytes.to_string(),
            format!("{}B", k.line_bytes),
            opt(k.ways),
            format!("{} cpu", k.shared_by_cpus),
            k.cpuid_size_bytes
                .map(|s| if s == k.size_bytes { "same".to_string() } else { s.to_string() })
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    out.push('\n');
    out.push_str(&caches.render());

    if let Some(info) = info {
        let mut tlb = Table::new(["dTLB", "page", "entries", "reach"]);
        for r in &info.tlb_reach {
            tlb.row([
                format!("L{} {}", r.level, r.kind),
                r.page_size_bytes.to_string(),
                opt(r.entries),
                opt(r.reach_bytes),
            ]);
        }
        out.push('\n');
        out.push_str(&tlb.render());
    }

    let mut pools = Table::new(["hugetlb pool", "total", "free", "reserved", "surplus"]);
    for p in &m.hugepage_pools {
        pools.row([
            p.page_size_bytes.to_string(),
            p.total.to_string(),
            p.free.to_string(),
            p.reserved.to_string(),
            p.surplus.to_string(),
        ]);
    }
    if !pools.is_empty() {
        out.push('\n');
        out.push_str(&pools.render());
    }
    out
}

fn bandwidth_text(o: &bandwidth::Outcome) -> String {
    let mut out = format!("read bandwidth over {} ({}), GB/s = 1e9 B/s\n", o.size_bytes, o.isa);
    for r in &o.regions {
        out.push_str(&format!(
            "  {} array: {} on huge pages\n",
            r.requested,
            r.huge_fraction.map(|f| format!("{:.0}%", f * 100.0)).unwrap_or_else(|| "unknown".into())
        ));
    }
    let mut t = Table::new(["pages", "threads", "kernel", "median", "min", "max", "CV", "check"]);
    for r in o.results.iter().filter(|r| r.variant.hint.is_none()) {
        let s = &r.bytes_per_s;
        t.row([
            r.variant.pages.to_string(),
            r.variant.threads.to_string(),
            r.variant.label(),
            gbps(s.median),
            gbps(s.min),
            gbps(s.max),
            format!("{:.1}%", s.cv * 100.0),
            if r.checksum_ok { "ok" } else { "FAIL" }.into(),
        ]);
    }
    out.push('\n');
    out.push_str(&t.render());

    // The distance sweep: one column per hint.
    let mut keys: Vec<_> =
        o.results.iter().filter_map(|r| r.variant.hint.map(|_| (r.variant.pages, r.variant.threads))).collect();
    keys.dedup();
    for (pages, threads) in keys {
        let mut hints: Vec<_> = o.results.iter().filter_map(|r| r.variant.hint).collect();
        hints.sort();
        hints.dedup();
        let mut header = vec!["D (elements)".to_string(), "bytes".into()];
        header.extend(hints.iter().map(|h| format!("{h} GB/s")));
        let mut sweep = Table::new(header);
        let mut ds: Vec<u64> = o.results.iter().filter_map(|r| r.variant.distance_elements).collect();
        ds.sort();
        ds.dedup();
        for d in ds {
            let mut row = vec![d.to_string(), Bytes(d * 8).to_string()];
            for h in &hints {
                let r = o.results.iter().find(|r| {
                    r.variant.pages == pages
                        && r.variant.threads == threads
                        && r.variant.hint == Some(*h)
                        && r.variant.distance_elements == Some(d)
                });
                row.push(r.map(|r| gbps(r.bytes_per_s.median)).unwrap_or_else(|| "-".into()));
            }
            sweep.row(row);
        }
        out.push_str(&format!("\nprefetch distance sweep, {pages} pages, {threads} thread(s):\n"));
        out.push_str(&sweep.render());
    }
    if !o.plateaus.is_empty() {
        out.push('\n');
    }
    for p in &o.plateaus {
        out.push_str(&format!(
            "plateau {} pages, {} thread(s), hint {}: {}\n",
            p.pages,
            p.threads,
            p.hint,
            plateau_text(&p.plateau)
        ));
    }
    for e in &o.prefetch_effects {
        out.push_str(&format!(
            "prefetch {} at D = {} (chosen on even repetitions) vs adjacent simd, {} pages, {} thread(s): {} on the odd repetitions: {}\n",
            e.hint, e.distance_elements, e.pages, e.threads, ratio_text(&e.confirmed), e.verdict.describe()
        ));
    }
    out.push('\n');
    for h in &o.headlines {
        out.push_str(&format!(
            "{} pages, {} thread(s): simd {} GB/s; best variant {} ({} GB/s on repetitions that did not choose it)\n",
            h.pages,
            h.threads,
            gbps(h.simd_bytes_per_s),
            h.best,
            gbps(h.best_holdout_bytes_per_s)
        ));
    }
    out
}

/// "D = 96..160 (3 points): 6.07 GB/s", or why there is no plateau.
pub fn plateau_text(p: &crate::analysis::plateau::Plateau) -> String {
    use crate::analysis::plateau::Plateau;
    match p {
        Plateau::Found { start, end, points, value, tolerance } => {
            format!("D = {start}..{end} ({points} points within {:.1}%): {} GB/s", tolerance * 100.0, gbps(*value))
        }
        Plateau::NoPlateau { longest_run, tolerance } => format!(
            "no plateau (at most {longest_run} adjacent point(s) within {:.1}% of the best; a plateau needs {})",
            tolerance * 100.0,
            crate::analysis::plateau::MIN_POINTS
        ),
    }
}

/// "×1.034 [×1.010, ×1.050] (n = 5, 94%)".
pub fn ratio_text(r: &crate::timing::Ratio) -> String {
    format!("×{:.3} [×{:.3}, ×{:.3}] (n = {}, {:.0}% interval)", r.median, r.low, r.high, r.n, r.confidence * 100.0)
}

fn latency_text(o: &latency::Outcome) -> String {
    let mut out = format!("load-to-use latency, dependent random chase (seed {:#x})\n", o.seed);
    for r in &o.regions {
        out.push_str(&format!("  {} region: {}\n", r.requested, coverage(r)));
    }
    match o.core_clock.first() {
        Some(_) => out.push_str(&format!(
            "  core clock (dependent adds): {}\n",
            o.core_clock.iter().map(|c| format!("{:.2} GHz", c.ghz)).collect::<Vec<_>>().join(" before, ") + " after"
        )),
        None => out.push_str("  core clock: not measured on this architecture; no figures in cycles\n"),
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
    for r in &o.ratios {
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

/// "93% on huge pages (page size 2MiB)" or "partly huge: no single page size".
fn coverage(b: &crate::memory::Backing) -> String {
    let f = b
        .huge_fraction
        .map(|f| format!("{:.0}% on huge pages", f * 100.0))
        .unwrap_or_else(|| "coverage unknown".into());
    match b.page_size_bytes {
        Some(p) => format!("{f} (page size {p})"),
        None => format!("{f} (partly huge: no single page size)"),
    }
}

fn tlb_text(o: &tlb::Outcome) -> String {
    use tlb::{Control, Sweep};
    let mut out = String::from("TLB reach: one line per page, pages in random order\n");
    for r in &o.regions {
        out.push_str(&format!("  {} region: {}\n", r.requested, coverage(r)));
    }
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
    out.push_str(&t.render());
    out.push_str(&match &o.control {
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
    });
    if !o.reaches.is_empty() {
        let mut r =
            Table::new(["pages", "knee at (entries)", "reach", "is", "CPUID L1", "CPUID L2", "ns within", "ns beyond"]);
        for x in &o.reaches {
            r.row([
                x.pages.to_string(),
                x.measured_entries.to_string(),
                x.measured_reach_bytes.map(|b| b.to_string()).unwrap_or_else(|| "not in bytes".into()),
                match &x.attribution {
                    Attribution::Level { name, .. } => format!("{name} DTLB"),
                    Attribution::Unattributed if x.confounded_with_cache => "unattributed (may be a cache step)".into(),
                    Attribution::Unattributed => "unattributed (no CPUID level within ×2)".into(),
                },
                x.cpuid_l1_entries.map(|e| e.to_string()).unwrap_or_else(|| "unknown".into()),
                x.cpuid_l2_entries.map(|e| e.to_string()).unwrap_or_else(|| "unknown".into()),
                format!("{:.1}", x.ns_within),
                format!("{:.1}", x.ns_beyond),
            ]);
        }
        out.push('\n');
        out.push_str(&r.render());
    }
    match &o.walk_ns {
        Some(w) => out.push_str(&format!(
            "\npage walk beyond the 4 KiB reach: {:.1} ns [{:.1}, {:.1}]{}\n",
            w.median,
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

fn prefetch_fault_text(o: &prefetch_fault::Outcome) -> String {
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

fn page_init_text(o: &page_init::Outcome) -> String {
    let mut out = format!(
        "page-descriptor initialisation: {} pages ({} large), {} of 128-byte descriptors in {} segments\n",
        o.pages,
        o.large_pages,
        Bytes(o.descriptor_bytes),
        o.segments.len()
    );
    out.push_str(&format!("  descriptors: {}\n", coverage(&o.descriptors)));
    let kernels: Vec<String> = o
        .store_kernels
        .iter()
        .map(|k| format!("{} {}t {} GB/s", k.kernel, k.threads, gbps(k.bytes_per_s.median)))
        .collect();
    out.push_str(&format!(
        "store kernels over the same array, interleaved with the variants: {}\n",
        kernels.join(", ")
    ));
    out.push_str(&format!(
        "store-bandwidth limit (best store kernel): {} GB/s one thread → {:.2} ns/page; {} GB/s all threads → {:.2} ns/page\n",
        gbps(o.store_bytes_per_s_1t),
        o.limit_ns_per_page_1t,
        gbps(o.store_bytes_per_s_all),
        o.limit_ns_per_page_all
    ));
    if o.limit_broken {
        out.push_str("LIMIT BROKEN: a variant ran faster than every store kernel, so the limit is not one and the fractions below mean nothing\n");
    }
    out.push_str(&format!(
        "parallel uses ahead = {} (chosen on the even repetitions of the single-thread sweep)\n\n",
        o.best_ahead
    ));
    let mut t =
        Table::new(["variant", "threads", "ahead", "ns/page", "Mpages/s", "vs locked [interval]", "of limit", "lists"]);
    for r in &o.results {
        t.row([
            r.variant.clone(),
            r.threads.to_string(),
            r.ahead.to_string(),
            format!("{:.2}", r.ns_per_page.median),
            format!("{:.1}", r.pages_per_s / 1e6),
            r.speedup_vs_locked
                .map(|x| format!("×{:.2} [×{:.2}, ×{:.2}]", x.median, x.low, x.high))
                .unwrap_or_else(|| "reference".into()),
            format!("{:.0}%", r.fraction_of_store_limit * 100.0),
            r.validation.clone(),
        ]);
    }
    out.push_str(&t.render());
    if let Some(best) = o.results.iter().min_by(|a, b| a.ns_per_page.median.total_cmp(&b.ns_per_page.median)) {
        out.push_str(&format!("\nbest: {} — Solaris 10 (2005) went from 1.785 to 0.388 µs per page (×4.6)\n", o.best));
        for (what, s) in &best.extrapolated_s {
            out.push_str(&format!("  initialising {what}: {s:.3} s\n"));
        }
    }
    out
}
