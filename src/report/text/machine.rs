//! The machine fingerprint as a table: CPU, caches, TLB reach, pools.

use super::super::table::Table;
use crate::machine::Fingerprint;
use crate::model::outcome::info;

pub fn opt<T: ToString>(v: Option<T>) -> String {
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
