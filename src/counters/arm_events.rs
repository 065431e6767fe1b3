//! Arm's architected PMU events (PMUv3 common events, the same number on
//! every Armv8/Armv9 core), under memperf's event names, so the derived
//! metrics of `metrics.json` hold on Arm as on x86: `dtlb-walks` is
//! DTLB_WALK, `dtlb-walk-cycles` Armv9's DTLB_WALK_PERCYC, `loads`
//! MEM_ACCESS_RD.
//!
//! They open through the core PMU's sysfs entry (`armv8_pmuv3_*` under
//! /sys/bus/event_source/devices, its type and `event` field from there).
//! An event the PMU does not list under its `events/` reads "not measured
//! — no encoding"; without such a PMU every one does.

use std::path::Path;

/// (memperf's name, the architecture's name, event number, what it counts).
pub const EVENTS: &[(&str, &str, u64, &str)] = &[
    ("dtlb-misses", "l1d_tlb_refill", 0x05, "L1 data TLB refills (L1D_TLB_REFILL)"),
    ("l2-dtlb-misses", "l2d_tlb_refill", 0x2d, "L2 data TLB refills (L2D_TLB_REFILL)"),
    ("dtlb-walks", "dtlb_walk", 0x34, "data page-table walks (DTLB_WALK)"),
    ("dtlb-walk-cycles", "dtlb_walk_percyc", 0x8128, "cycles with a walk in flight (DTLB_WALK_PERCYC, Armv9)"),
    ("l1d-refills", "l1d_cache_refill", 0x03, "L1 data cache refills (L1D_CACHE_REFILL)"),
    ("llc-read-misses", "ll_cache_miss_rd", 0x37, "last-level cache read misses (LL_CACHE_MISS_RD)"),
    ("mem-accesses", "mem_access", 0x13, "data memory accesses (MEM_ACCESS)"),
    ("loads", "mem_access_rd", 0x66, "data memory reads (MEM_ACCESS_RD)"),
    ("mem-read-cycles", "mem_access_rd_percyc", 0x8121, "reads in flight, summed per cycle (MEM_ACCESS_RD_PERCYC, v9)"),
    ("stall-backend", "stall_backend", 0x24, "cycles the back end stalled (STALL_BACKEND)"),
    ("bus-accesses", "bus_access", 0x19, "bus accesses (BUS_ACCESS)"),
];

/// The core PMUs under `devices`, sorted: `armv8_pmuv3*`, and the names
/// big.LITTLE kernels give each cluster's (`armv8_cortex_a55`,
/// `armv9_cortex_x925` …).
pub fn core_pmus(devices: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(devices)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("armv8_") || n.starts_with("armv9_"))
        .collect();
    v.sort();
    v
}

/// How one of [`EVENTS`] opens here: its PMU and event number, or why it
/// cannot ("not measured — no encoding: …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArmEvent {
    pub open: Result<(String, u64), String>,
    pub description: String,
}

/// `name` as an event of the first core PMU under `devices`, if it is one
/// of [`EVENTS`]: opened through the PMU where it lists the event, else
/// "no encoding" with why.
pub fn resolve(name: &str, devices: &Path) -> Option<ArmEvent> {
    let &(_, arch_name, number, description) = EVENTS.iter().find(|e| e.0 == name)?;
    let open = match core_pmus(devices).first() {
        None => Err(format!(
            "not measured — no encoding: no Arm core PMU (armv8_pmuv3_*) in {} for {arch_name}",
            devices.display()
        )),
        Some(pmu) if !devices.join(pmu).join("events").join(arch_name).exists() => {
            Err(format!("not measured — no encoding: this CPU's PMU ({pmu}) does not list {arch_name}"))
        }
        Some(pmu) => Ok((pmu.clone(), number)),
    };
    Some(ArmEvent { open, description: format!("{description} [Arm architected event {number:#x}]") })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /sys/bus/event_source/devices: a core PMU listing `events`.
    fn devices(pmu: &str, events: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for dir in ["software", pmu] {
            std::fs::create_dir_all(d.path().join(dir).join("events")).unwrap();
        }
        std::fs::write(d.path().join(pmu).join("type"), "8\n").unwrap();
        for e in events {
            std::fs::write(d.path().join(pmu).join("events").join(e), "event=0x34\n").unwrap();
        }
        d
    }

    #[test]
    fn listed_events_open_through_the_core_pmu_and_others_have_no_encoding() {
        let d = devices("armv8_pmuv3_0", &["dtlb_walk", "mem_access_rd"]);
        assert_eq!(resolve("dtlb-walks", d.path()).unwrap().open, Ok(("armv8_pmuv3_0".into(), 0x34)));
        assert_eq!(resolve("loads", d.path()).unwrap().open, Ok(("armv8_pmuv3_0".into(), 0x66)));
        let percyc = resolve("dtlb-walk-cycles", d.path()).unwrap();
        assert!(percyc.open.as_ref().is_err_and(|r| r.contains("does not list dtlb_walk_percyc")), "{percyc:?}");
        assert!(resolve("cycles", d.path()).is_none(), "not an Arm table event");
    }

    #[test]
    fn without_a_core_pmu_every_event_reads_not_measured() {
        let d = tempfile::tempdir().unwrap();
        for (name, ..) in EVENTS {
            let e = resolve(name, d.path()).unwrap();
            assert!(e.open.as_ref().is_err_and(|r| r.starts_with("not measured — no encoding")), "{e:?}");
        }
        let big_little = devices("armv9_cortex_x925", &["dtlb_walk"]);
        assert_eq!(core_pmus(big_little.path()), ["armv9_cortex_x925"]);
    }

    /// The numbers are the architecture's (Arm ARM, "common event numbers").
    #[test]
    fn event_numbers_are_the_architected_ones() {
        let n = |a: &str| EVENTS.iter().find(|e| e.1 == a).unwrap().2;
        assert_eq!(
            [n("l1d_tlb_refill"), n("l2d_tlb_refill"), n("dtlb_walk"), n("l1d_cache_refill")],
            [0x05, 0x2d, 0x34, 0x03]
        );
        assert_eq!(
            [n("ll_cache_miss_rd"), n("mem_access"), n("stall_backend"), n("bus_access")],
            [0x37, 0x13, 0x24, 0x19]
        );
    }
}
