//! The machine fingerprint: CPU, caches, TLBs per page size, huge-page
//! pools, THP mode, PMU availability, prefetch instructions, kernel, host —
//! what the machine claims, each claim checked for plausibility
//! ([`claims`]), and beside it what memperf measured: the core clock
//! ([`crate::timing::core_clock`]), where the cache levels end ([`levels`])
//! and where memory begins ([`doublings`]). Sizes come from the measured
//! levels, else from plausible claims, never from an implausible one. It is
//! read through a [`source::Source`]: this machine or a recording, by the
//! same code.

pub use memperf_model::machine::claims;
pub mod arm;
pub mod cpuid;
pub mod doublings;
pub mod elsewhere;
pub mod kinds;
pub mod levels;
pub mod midr;
pub mod reach;
pub mod record;
pub mod saved;
pub mod source;
pub mod sysfs;
pub mod system;
pub mod tree;

pub use memperf_model::machine::{Cache, Cpu, Fingerprint, LlcSource, ASSUMED_LLC, READ_FLAT};

use crate::counters::{self, PmuStatus};
use crate::timing::core_clock::Nominal;
use cpuid::CpuIdentity;
use memperf_model::machine::problems_of;
use source::Source;

/// Reads the fingerprint of the machine this runs on.
pub fn collect() -> Fingerprint {
    read(&Source::live())
}

/// Reads the fingerprint of `src`: this machine or a recording.
pub fn read(src: &Source) -> Fingerprint {
    let c = src.cpuid();
    let arch: String =
        if src.live { std::env::consts::ARCH.into() } else { src.read("arch").unwrap_or("x86_64".into()) };
    let cpuinfo = src.read("proc/cpuinfo").unwrap_or_default();
    let identity = if arch == "aarch64" { arm::identity(src, &cpuinfo) } else { cpuid::identity(&c, src.live) };
    let (logical, cores, sockets) = sysfs::topology(&src.path("sys/devices/system/cpu"));
    let nominal = nominal_clocks(src, &c, &identity, &cpuinfo);
    let freq = identity.base_frequency_hz.or_else(|| sysfs::cpuinfo_mhz(&cpuinfo));
    let (total, available) = sysfs::meminfo(&src.read("proc/meminfo").unwrap_or_default());
    let caches = merge_caches(sysfs::caches(&src.path("sys/devices/system/cpu")), cpuid::caches(&c), logical);
    let (tlbs, tlb_source) = cpuid::tlbs(&c);
    Fingerprint {
        hostname: src.read("proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
        kernel: src.read("proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        emulation: if src.live {
            arm::emulation(&cpuinfo, src.read("sys/devices/system/cpu/modalias").as_deref())
        } else {
            None
        },
        core_kinds: kinds::read(src),
        arch,
        cpu: Cpu {
            identity,
            logical_cpus: logical,
            physical_cores: cores,
            sockets,
            nominal_frequency_hz: freq,
            nominal_clocks: nominal,
        },
        memory_total_bytes: total,
        memory_available_bytes: available,
        caches,
        tlbs,
        tlb_source: tlb_source.into(),
        hugepage_pools: sysfs::hugepage_pools(&src.path("sys/kernel/mm/hugepages")),
        thp: sysfs::thp(&src.path("sys/kernel/mm/transparent_hugepage")),
        pmu: if src.live {
            counters::probe(&counters::PerfBackend, counters::read_paranoid())
        } else {
            PmuStatus::not_probed("a recording: counters can only be probed on the machine itself")
        },
        prefetch_instructions: cpuid::prefetch_instructions(&c),
        system: system::collect(&src.path("sys"), &src.path("proc")),
        core_clock: None,
        measured_levels: None,
    }
}

/// Every clock the machine states: the TSC's rate where it is invariant
/// (measured on the live machine), CPUID leaf 0x16's base, the brand
/// string's "@ 2.60GHz", /proc/cpuinfo's MHz.
fn nominal_clocks(
    src: &Source,
    c: &raw_cpuid::CpuId<source::CpuidSource>,
    id: &CpuIdentity,
    cpuinfo: &str,
) -> Vec<Nominal> {
    let mut out = Vec::new();
    let flags = cpuinfo.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    let invariant = cpuid::invariant_tsc(c) || (flags.contains(" constant_tsc") && flags.contains(" nonstop_tsc"));
    if src.live && invariant {
        if let Some(g) = crate::timing::core_clock::tsc_ghz(0.02) {
            out.push(Nominal { source: "tsc".into(), ghz: g });
        }
    }
    if let Some(hz) = id.base_frequency_hz {
        out.push(Nominal { source: "cpuid-0x16".into(), ghz: hz / 1e9 });
    }
    if let Some(g) = brand_ghz(&id.model_name) {
        out.push(Nominal { source: "brand-string".into(), ghz: g });
    }
    if let Some(hz) = sysfs::cpuinfo_mhz(cpuinfo) {
        out.push(Nominal { source: "cpuinfo".into(), ghz: hz / 1e9 });
    }
    out
}

/// "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz" → 2.6.
pub fn brand_ghz(brand: &str) -> Option<f64> {
    let at = brand.rfind('@')?;
    let rest = brand[at + 1..].trim();
    let (num, unit) = rest.split_at(rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?);
    let v: f64 = num.parse().ok()?;
    match unit.trim().to_ascii_lowercase().as_str() {
        "ghz" => Some(v),
        "mhz" => Some(v / 1000.0),
        _ => None,
    }
}

/// sysfs is authoritative (it is what this VM was given); CPUID's figure is
/// kept beside it. Without sysfs, CPUID alone. Every claim is checked.
pub fn merge_caches(sys: Vec<sysfs::SysfsCache>, cpu: Vec<cpuid::CpuidCache>, logical_cpus: usize) -> Vec<Cache> {
    let out: Vec<(Cache, Option<cpuid::CpuidCache>)> = if sys.is_empty() {
        cpu.into_iter()
            .map(|c| {
                let cache = Cache {
                    level: c.level,
                    kind: c.kind.clone(),
                    size_bytes: c.size_bytes,
                    line_bytes: c.line_bytes,
                    ways: Some(c.ways),
                    sets: Some(c.sets * c.partitions),
                    shared_by_cpus: (c.max_sharing as usize).clamp(1, logical_cpus.max(1)),
                    cpuid_size_bytes: Some(c.size_bytes),
                    implausible: Vec::new(),
                };
                (cache, Some(c))
            })
            .collect()
    } else {
        sys.into_iter()
            .map(|s| {
                let c = cpu.iter().find(|c| c.level == s.level && c.kind == s.kind).cloned();
                let cache = Cache {
                    level: s.level,
                    kind: s.kind,
                    size_bytes: s.size_bytes,
                    line_bytes: s.line_bytes,
                    ways: s.ways,
                    sets: s.sets,
                    shared_by_cpus: s.shared_by_cpus,
                    cpuid_size_bytes: c.as_ref().map(|c| c.size_bytes),
                    implausible: Vec::new(),
                };
                (cache, c)
            })
            .collect()
    };
    let (mut caches, cpuid): (Vec<Cache>, Vec<Option<cpuid::CpuidCache>>) = out.into_iter().unzip();
    let problems = problems_of(&caches, &cpuid, logical_cpus);
    for (cache, found) in caches.iter_mut().zip(problems) {
        cache.implausible = found;
    }
    caches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    fn sys_l3(size: Bytes, sets: u64) -> sysfs::SysfsCache {
        sysfs::SysfsCache {
            level: 3,
            kind: "Unified".into(),
            size_bytes: size,
            line_bytes: 64,
            ways: Some(16),
            sets: Some(sets),
            shared_cpu_list: "0-1".into(),
            shared_by_cpus: 2,
        }
    }

    #[test]
    fn merge_keeps_both_sizes() {
        let cpu = vec![cpuid::CpuidCache {
            level: 3,
            kind: "Unified".into(),
            size_bytes: Bytes(384 << 20),
            line_bytes: 64,
            ways: 16,
            sets: 393216,
            partitions: 1,
            max_sharing: 2,
        }];
        let merged = merge_caches(vec![sys_l3(Bytes(32 << 20), 32768)], cpu, 2);
        assert_eq!(merged[0].size_bytes, Bytes(32 << 20));
        assert_eq!(merged[0].cpuid_size_bytes, Some(Bytes(384 << 20)));
        assert!(merged[0].plausible(), "{:?}", merged[0].implausible);
    }

    #[test]
    fn the_brand_string_states_a_clock() {
        assert_eq!(brand_ghz("Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz"), Some(2.6));
        assert_eq!(brand_ghz("Intel(R) Xeon(R) Processor"), None);
        assert_eq!(brand_ghz("AMD EPYC 9654 96-Core Processor"), None);
        assert_eq!(brand_ghz("Something @ 800MHz"), Some(0.8));
    }

    #[test]
    fn sizes_come_from_measurement_then_plausible_claims_never_implausible_ones() {
        let mut f = crate::machine::collect();
        f.measured_levels = None;
        f.caches = merge_caches(vec![sys_l3(Bytes(480 << 20), 491520)], vec![], 2);
        f.cpu.logical_cpus = 2;
        assert!(!f.caches[0].plausible());
        assert_eq!(f.sizing_llc(), (ASSUMED_LLC, LlcSource::Assumed), "the 480 MiB claim is not used");
        assert_eq!(f.plausible_llc_total(), None, "nor by the reference or the all-thread DRAM rule");
        f.caches = merge_caches(vec![sys_l3(Bytes(32 << 20), 32768)], vec![], 2);
        assert_eq!(f.sizing_llc(), (Bytes(32 << 20), LlcSource::Claimed));
        assert_eq!(f.plausible_llc_total(), Some(Bytes(32 << 20)));
    }

    #[test]
    fn fingerprint_of_this_machine_is_coherent() {
        let f = crate::machine::collect();
        assert!(f.cpu.logical_cpus >= 1);
        assert!(f.llc_bytes().is_some_and(|b| b.0 >= 1 << 16), "{:?}", f.caches);
        assert!(f.line_bytes().is_power_of_two());
        assert!(!f.thp.enabled.is_empty());
        if !f.pmu.hardware_counters {
            assert!(f.pmu.reason.is_some() && f.pmu.fix.is_some());
        }
    }
}
