//! The machine fingerprint as a table: CPU, caches, TLB reach, pools.

use crate::machine::Fingerprint;
use crate::model::document::Document;
use crate::model::outcome::info;
use crate::report::table::Table;

pub fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "unknown".into())
}

pub fn machine(m: &Fingerprint, info: Option<&info::Outcome>) -> String {
    let mut out = identity_table(m);
    out.push('\n');
    out.push_str(&caches_table(m));
    out.push_str(&measured_levels(m));
    out.push_str(&tlb_table(m, info));
    out.push_str(&pools_table(m));
    out
}

/// The CPU's names and numbers: CPUID's family, model and stepping on
/// x86; on aarch64 the first CPU's MIDR fields (implementer, part,
/// r<variant>p<revision>).
fn cpu_line(m: &Fingerprint) -> String {
    let id = &m.cpu.identity;
    if m.arch == "aarch64" {
        return format!(
            "{} {} (implementer {:#04x}, part {:#05x}, r{}p{})",
            id.vendor,
            id.model_name,
            id.family,
            id.model,
            id.stepping / 16,
            id.stepping % 16
        );
    }
    format!("{} {} (family {}, model {}, stepping {})", id.vendor, id.model_name, id.family, id.model, id.stepping)
}

/// One kind of core: its name, CPUs and caches per cluster, or "caches not
/// reported" where the kernel exports none.
fn core_kind_line(k: &memperf_model::machine::CoreKind) -> String {
    let clusters: Vec<String> = k
        .clusters
        .iter()
        .map(|(cpus, caches)| {
            let said = if caches.is_empty() { "caches not reported".to_string() } else { caches.join(", ") };
            if k.clusters.len() > 1 {
                format!("CPUs {cpus}: {said}")
            } else {
                said
            }
        })
        .collect();
    let tlbs = if k.tlbs.is_empty() { String::new() } else { format!("; TLBs {}", k.tlbs.join(", ")) };
    format!("{} (CPUs {}): {}{tlbs}", k.name, k.cpus, clusters.join("; "))
}

/// The machine as a two-column table without a header: host, kernel, CPU,
/// cores, clocks, ISA, memory, THP, cpufreq, topology, counters.
fn identity_table(m: &Fingerprint) -> String {
    let mut t = Table::new(["", ""]);
    let c = &m.cpu;
    t.row(["host".into(), m.hostname.clone()]);
    t.row(["kernel".into(), format!("{} ({})", m.kernel, m.arch)]);
    t.row(["cpu".into(), cpu_line(m)]);
    for k in &m.core_kinds {
        t.row(["core kind".into(), core_kind_line(k)]);
    }
    t.row([
        "cores".into(),
        format!("{} logical, {} physical, {} socket(s)", c.logical_cpus, c.physical_cores, c.sockets),
    ]);
    t.row(["hypervisor".into(), c.identity.hypervisor.clone().unwrap_or_else(|| "none".into())]);
    t.row(["nominal clock".into(), nominal(c)]);
    if let Some(r) = &m.core_clock {
        t.row(["core clock".into(), core_clock(r)]);
    }
    t.row(["vector isa".into(), c.identity.vector_isa.join(", ")]);
    t.row([
        "memory".into(),
        format!("{} total, {} available", opt(m.memory_total_bytes), opt(m.memory_available_bytes)),
    ]);
    t.row(["prefetch".into(), m.prefetch_instructions.join(", ")]);
    t.row(["thp".into(), format!("enabled={}, defrag={}", m.thp.enabled, m.thp.defrag)]);
    system_rows(m, &mut t);
    t.render().lines().skip(1).map(|l| format!("{l}\n")).collect::<String>()
}

/// cpufreq, topology, meltdown and the counters.
fn system_rows(m: &Fingerprint, t: &mut Table) {
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
}

/// The caches as claimed, each beside CPUID's claim and its plausibility.
fn caches_table(m: &Fingerprint) -> String {
    if m.caches.is_empty() {
        // Many Arm kernels export no cache folders: nothing is claimed, and
        // the level probe measures where the levels end.
        return "caches: not reported (the kernel exports no cache folders, and no CPUID describes them): \
                memperf measures where the levels end\n"
            .into();
    }
    let mut caches = Table::new(["cache", "claimed", "line", "ways", "shared by", "CPUID says", "claim"]);
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
            if k.plausible() { "plausible".into() } else { "implausible (see warnings)".into() },
        ]);
    }
    caches.render()
}

/// The data TLBs as claimed, or that no leaf describes them.
fn tlb_table(m: &Fingerprint, info: Option<&info::Outcome>) -> String {
    if m.tlbs.is_empty() && !m.tlb_source.is_empty() {
        return "\ndTLB: not reported by CPUID (no leaf describes it): `memperf tlb` measures its reach\n".into();
    }
    let Some(info) = info else { return String::new() };
    let mut tlb = Table::new(["dTLB (claimed)", "page", "entries", "reach"]);
    for r in &info.tlb_reach {
        tlb.row([format!("L{} {}", r.level, r.kind), r.page_size_bytes.to_string(), opt(r.entries), opt(r.reach_bytes)]);
    }
    format!("\n{}", tlb.render())
}

/// The hugetlb pools, where the kernel has any.
fn pools_table(m: &Fingerprint) -> String {
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
    if pools.is_empty() {
        return String::new();
    }
    format!("\n{}", pools.render())
}

/// "2.60 GHz (tsc), 2.60 GHz (cpuinfo)", or "unknown".
fn nominal(c: &crate::machine::Cpu) -> String {
    if c.nominal_clocks.is_empty() {
        return c.nominal_frequency_hz.map(|f| format!("{:.2} GHz", f / 1e9)).unwrap_or_else(|| "unknown".into());
    }
    c.nominal_clocks.iter().map(|n| format!("{:.2} GHz ({})", n.ghz, n.source)).collect::<Vec<_>>().join(", ")
}

/// "3.59 GHz measured (add-reg-reg 3.56, imul-reg-reg 3.61 GHz agree)", or
/// "not measured — why".
pub fn core_clock(r: &crate::timing::core_clock::ClockReading) -> String {
    let chains = r.methods.iter().map(|m| format!("{} {:.2}", m.method, m.ghz)).collect::<Vec<_>>().join(", ");
    match (&r.clock, &r.not_measured) {
        (Some(c), _) => format!("{:.2} GHz measured ({chains} GHz agree)", c.ghz),
        (None, Some(why)) => format!("not measured — {why}"),
        (None, None) => "not measured".into(),
    }
}

/// What the latency probe measured: where the last cache ends and the far
/// level begins, beside the claims above.
fn measured_levels(m: &Fingerprint) -> String {
    let Some(l) = &m.measured_levels else { return String::new() };
    let f = &l.found;
    let curve = l.points.iter().map(|p| format!("{} {:.1}", p.size_bytes, p.latency_ns)).collect::<Vec<_>>().join(", ");
    let mut out = format!("measured (random chase, {} pages, ns per load): {curve}\n", l.pages);
    match (f.last_cache_end, f.far_from, f.far_ns) {
        (Some((inside, past)), Some(from), Some(ns)) => out.push_str(&format!(
            "  the last cache level ends between {inside} and {past}; the far level ({ns:.0} ns) starts at {from}: sizes meant to reach memory start from it\n"
        )),
        _ => out.push_str(&format!(
            "  no far level confirmed ({}): sizes come from plausible claims\n",
            f.far_not_reached.as_deref().unwrap_or("unknown")
        )),
    }
    out.push_str(&memory_verified(l, m.memory_by_size()));
    out.push_str(&doublings(l, m));
    out
}

/// Why a chase past the far level still rises on huge pages.
const WALKS: &str = "; past the far level no cache is left to fill, so a latency that keeps rising there is page walks \
                     (on a guest, through the host's page tables too), which grow with the working set";

/// Every chase doubling measured rose (its whole interval above no
/// change), on a probe that got huge pages (90% or more): page walks.
fn rising_on_huge_pages(l: &crate::machine::levels::MeasuredLevels) -> bool {
    let chases: Vec<_> =
        l.doublings.iter().flatten().filter(|d| d.kind == crate::machine::levels::DoublingKind::Chase).collect();
    let huge = l.pages != crate::memory::PagePolicy::Small && l.huge_fraction.is_some_and(|f| f >= 0.9);
    huge && !chases.is_empty() && chases.iter().all(|d| d.ratio.verdict().call == crate::timing::schedule::Call::Above)
}

/// Where the doublings place memory: each pair measured, and where each
/// kind's memory begins (at the first pair that agrees, else by size).
fn doublings(l: &crate::machine::levels::MeasuredLevels, m: &crate::machine::Fingerprint) -> String {
    use crate::machine::levels::DoublingKind;
    let Some(pairs) = &l.doublings else { return String::new() };
    let mut out = format!(
        "  where memory begins, by each working set against twice it and memory by size, measured in the same \
         repetitions ({} pages):\n",
        l.pages
    );
    for kind in DoublingKind::ALL {
        let of: Vec<String> = pairs
            .iter()
            .filter(|d| d.kind == kind)
            .map(|d| {
                let ratio = crate::report::text::ratio_text(&d.ratio);
                let to = d.to_memory.as_ref().map_or(String::new(), |(at, r)| {
                    format!(" and →{at} {}", crate::report::text::ratio_text(r))
                });
                format!("{}→{} {ratio}{to}", d.size_bytes, crate::units::Bytes(2 * d.size_bytes.0))
            })
            .collect();
        let from = match kind {
            DoublingKind::Chase => m.chase_in_memory_from(),
            DoublingKind::Read => m.read_in_memory_from_on(1),
        };
        let why = match l.memory_by_doublings(kind) {
            Some(at) => format!(
                "memory from {at}, where the doubling agrees within {:.0}% and memory by size within that per doubling",
                kind.flat() * 100.0
            ),
            None => format!(
                "none agrees within {:.0}% a doubling: memory from {from}, by size{}",
                kind.flat() * 100.0,
                if kind == DoublingKind::Chase && rising_on_huge_pages(l) { WALKS } else { "" }
            ),
        };
        let measured = if of.is_empty() { "no pair measured".to_string() } else { of.join("; ") };
        out.push_str(&format!("    {kind}: {measured}: {why}\n", kind = kind.name()));
    }
    out
}

/// Where memory was verified: by latency (flat past every cache, the
/// looks agreeing) and by one thread's sequential read (flat rate); and
/// from where figures are memory's by size alone (`by_size`). A latency
/// still rising past the far level on huge pages is page walks, not a
/// cache: said so.
fn memory_verified(l: &crate::machine::levels::MeasuredLevels, by_size: crate::units::Bytes) -> String {
    let looks = 1 + l.looks.len();
    let mut out = match (l.found.memory_from, &l.found.memory_not_verified) {
        (Some(from), _) => format!(
            "  {} from {from}: latency changes under {:.0}% at its doubling and under {:.0}% per doubling to {} ({looks} looks, each point their median)\n",
            if l.doublings.is_some() { "the probe's sweep (sizes one after another) flattens" } else { "memory verified" },
            crate::analysis::levels::MEMORY_STEP * 100.0,
            crate::analysis::levels::MEMORY_FLAT * 100.0,
            l.points.last().map_or(from, |p| p.size_bytes)
        ),
        (None, Some(why)) => {
            let walks = if l.pages != crate::memory::PagePolicy::Small && l.found.far_from.is_some() {
                " Past the far level no cache is left to fill: a latency that keeps rising there is page walks \
                 (on a guest, through the host's page tables too), which grow with the working set."
            } else {
                ""
            };
            format!(
                "  memory not verified by the probe ({why}); from {by_size}, eight times the last-level cache, \
                 figures are memory's by size alone.{walks}\n"
            )
        }
        (None, None) => String::new(),
    };
    if l.found.memory_from.is_some_and(|from| from > by_size) {
        out.push_str(&format!("  from {by_size}, eight times the last-level cache, figures are memory's by size alone\n"));
    }
    if !l.read_rates.is_empty() {
        let rates: Vec<String> =
            l.read_rates.iter().map(|r| format!("{} {:.1}", r.size_bytes, r.bytes_per_s / 1e9)).collect();
        let verdict = match l.read_memory_from(crate::machine::READ_FLAT) {
            Some(from) => format!(
                "in memory from {from} (the rate changes under {:.0}% when it doubles, and on average to the largest size)",
                crate::machine::READ_FLAT * 100.0
            ),
            None => format!(
                "memory not verified for reads (no doubling leaves the rate within {:.0}%, at it and on average to the largest size)",
                crate::machine::READ_FLAT * 100.0
            ),
        };
        out.push_str(&format!("  one thread reading (simd, GB/s): {}: {verdict}\n", rates.join(", ")));
    }
    out
}

/// "93% on huge pages (page size 2MiB)" or "partly huge: no single page size".
pub fn coverage(b: &crate::memory::Backing) -> String {
    let f = b
        .huge_fraction
        .map(|f| format!("{:.0}% on huge pages", f * 100.0))
        .unwrap_or_else(|| "coverage unknown".into());
    match b.page_size_bytes {
        Some(p) => format!("{f} (page size {p})"),
        None => format!("{f} (partly huge: no single page size)"),
    }
}

impl super::Render for crate::model::outcome::info::Outcome {
    fn text(&self, doc: &Document) -> String {
        let mut out = machine(&doc.machine, Some(self));
        out += &self.gpus.iter().map(|d| super::gpu::device_lines(d, None)).collect::<String>();
        if let Some(why) = &self.no_gpu {
            out += &format!("GPU: none ({why})\n");
        }
        out
    }
    /// The machine's levels are drawn on the latency chart, where they are
    /// measured.
    fn plots(&self, _doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        Ok(Vec::new())
    }
    /// What the machine claims is no measured figure.
    fn metrics(&self, _doc: &Document) -> Vec<crate::report::headlines::Headline> {
        Vec::new()
    }
    /// What the machine refused is said as warnings, each with its fix.
    fn advice(&self, _doc: &Document) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::levels::{Doubling, DoublingKind};
    use crate::timing::Ratio;
    use crate::units::{Bytes, MIB};

    /// The Zen 3 recording with doublings: a read that agrees with its
    /// doubling and with memory by size begins memory there; a chase that
    /// rises at every doubling on huge pages leaves memory by size, named
    /// page walks.
    #[test]
    fn the_doublings_say_where_memory_begins_and_name_page_walks() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/amd-epyc-zen3-kvm-2vcpu/run-quick.json");
        let mut doc = crate::model::document_from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
        let by_size = doc.machine.memory_by_size();
        let at = |mib: u64, kind, e: f64| Doubling {
            kind,
            size_bytes: Bytes(mib * MIB),
            ratio: Ratio::stated(20, e, e - 0.02, e + 0.02, 0.99),
            to_memory: Some((by_size, Ratio::stated(20, e, e - 0.02, e + 0.02, 0.99))),
        };
        let levels = doc.machine.measured_levels.as_mut().unwrap();
        levels.doublings = Some(vec![at(32, DoublingKind::Chase, 1.09), at(32, DoublingKind::Read, 1.0)]);
        assert_eq!(doc.machine.chase_in_memory_from(), by_size);
        assert_eq!(doc.machine.read_in_memory_from_on(1), Bytes(32 * MIB));
        let text = super::machine(&doc.machine, None);
        assert!(text.contains("    chase: 32MiB→64MiB ×1.090 [×1.070, ×1.110] (n = 20) and →"), "{text}");
        assert!(text.contains(&format!("memory from {by_size}, by size; past the far level")));
        assert!(text.contains("    read: 32MiB→64MiB ×1.000 [×0.980, ×1.020] (n = 20) and →"), "{text}");
        assert!(text.contains("memory from 32MiB, where the doubling agrees within 5% and memory by size within that"));
    }
}
