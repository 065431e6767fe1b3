//! `memperf info`: the machine fingerprint, and the warnings it implies
//! for every measurement (no PMU, no huge pages reserved, THP off, caches
//! that CPUID and the OS disagree on).

pub use crate::model::outcome::info::*;
use super::{Context, Experiment};
use crate::error::Result;
use crate::machine::cpuid::{PAGE_1G, PAGE_2M, PAGE_4K};
use crate::machine::Fingerprint;
use crate::model::document::Warning;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Params {}

pub struct Info;

impl Experiment for Info {
    const NAME: &'static str = "info";
    type Params = Params;
    type Outcome = Outcome;

    fn run(_: &Params, ctx: &Context) -> Result<Outcome> {
        Ok(Outcome { tlb_reach: tlb_reach(ctx.machine) })
    }
}

/// Data-TLB reach for L1 and L2 and each common page size.
pub fn tlb_reach(m: &Fingerprint) -> Vec<TlbReach> {
    let mut out = Vec::new();
    for level in [1u8, 2] {
        for page in [PAGE_4K, PAGE_2M, PAGE_1G] {
            let t = m.tlbs.iter().filter(|t| t.level == level && t.page_size_bytes == page && t.kind != "store");
            let best = t.max_by_key(|t| t.entries);
            let entries = best.and_then(|t| t.entries);
            out.push(TlbReach {
                level,
                kind: best.map(|t| t.kind.clone()).unwrap_or_else(|| "data".into()),
                page_size_bytes: page,
                entries,
                reach_bytes: entries.map(|e| Bytes(e as u64 * page.0)),
            });
        }
    }
    out
}

/// What the machine refuses or hides, each with its fix.
pub fn machine_warnings(m: &Fingerprint) -> Vec<Warning> {
    let mut w = Vec::new();
    if !m.pmu.hardware_counters {
        w.push(Warning::new(
            "no-pmu",
            format!(
                "hardware counters unavailable: {}",
                m.pmu.reason.clone().unwrap_or_else(|| "unknown reason".into())
            ),
            m.pmu.fix.clone(),
        ));
    }
    for pool in &m.hugepage_pools {
        if pool.available() == 0 {
            let fix = if pool.page_size_bytes.0 == 2 << 20 {
                "echo 1024 > /proc/sys/vm/nr_hugepages (as root), or pass --reserve-hugepages".to_string()
            } else {
                format!(
                    "echo 2 > /sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages (as root)",
                    pool.page_size_bytes.0 / 1024
                )
            };
            w.push(Warning::new(
                "no-hugepages",
                format!("no {} hugetlb pages are free: hugetlb page policies cannot be measured", pool.page_size_bytes),
                Some(fix),
            ));
        }
    }
    if m.thp.enabled == "never" || m.thp.enabled == "unavailable" {
        w.push(Warning::new(
            "thp-off",
            format!("transparent huge pages are {}: the thp policy gets base pages", m.thp.enabled),
            Some("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (as root)".into()),
        ));
    }
    for c in m.cache_disagreements() {
        w.push(Warning::new(
            "cache-size-disagreement",
            format!(
                "L{} {} cache: the OS reports {}, CPUID {}; memperf uses the OS figure (what this system may use)",
                c.level,
                c.kind,
                c.size_bytes,
                c.cpuid_size_bytes.map(|b| b.to_string()).unwrap_or_default()
            ),
            None,
        ));
    }
    if cfg!(debug_assertions) {
        w.push(Warning::new(
            "debug-build",
            "this is a debug build: its kernels are not optimised and its figures are meaningless",
            Some("cargo run --release".into()),
        ));
    }
    w
}
