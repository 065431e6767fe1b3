//! The machine fingerprint: CPU, caches, TLBs per page size, huge-page
//! pools, THP mode, PMU availability, prefetch instructions, kernel, host —
//! what the machine claims, each claim checked for plausibility
//! ([`claims`]), and beside it what memperf measured: the core clock
//! ([`crate::timing::core_clock`]) and where the cache levels really end
//! ([`levels`]). Sizes are taken from the measured levels where there are
//! some, from plausible claims otherwise, never from an implausible one.
//!
//! The fingerprint is read through a [`source::Source`]: the running
//! machine, or a recording of another (a CPUID dump and a `sys`/`proc`
//! tree), by the same code.

pub mod claims;
pub mod cpuid;
pub mod kernel_config;
pub mod levels;
pub mod record;
pub mod source;
pub mod sysfs;
pub mod system;

use crate::counters::{self, PmuStatus};
use crate::timing::core_clock::{ClockReading, Nominal};
use crate::units::{Bytes, MIB};
use cpuid::{CpuIdentity, TlbLevel};
use serde::{Deserialize, Serialize};
use source::Source;
use sysfs::{HugePagePool, ThpSettings};

/// One cache level as reported, with the CPUID cross-check and the
/// plausibility of the claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u8,
    pub kind: String,
    pub size_bytes: Bytes,
    pub line_bytes: u64,
    pub ways: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sets: Option<u64>,
    pub shared_by_cpus: usize,
    /// The size CPUID reports for the same level and kind, if any.
    pub cpuid_size_bytes: Option<Bytes>,
    /// Why this claim cannot be what it says (empty: plausible).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub implausible: Vec<String>,
}

impl Cache {
    pub fn is_data(&self) -> bool {
        self.kind != "Instruction"
    }
    pub fn plausible(&self) -> bool {
        self.implausible.is_empty()
    }
    pub fn name(&self) -> String {
        format!("L{}", self.level)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    #[serde(flatten)]
    pub identity: CpuIdentity,
    pub logical_cpus: usize,
    pub physical_cores: usize,
    pub sockets: usize,
    /// The nominal frequency (CPUID base frequency, else /proc/cpuinfo).
    /// Figures in cycles use the measured core clock, never this.
    pub nominal_frequency_hz: Option<f64>,
    /// Every nominal clock the machine states, by source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nominal_clocks: Vec<Nominal>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub hostname: String,
    pub kernel: String,
    pub arch: String,
    pub cpu: Cpu,
    pub memory_total_bytes: Option<Bytes>,
    pub memory_available_bytes: Option<Bytes>,
    pub caches: Vec<Cache>,
    pub tlbs: Vec<TlbLevel>,
    /// Which CPUID leaf described the TLBs, or "not reported".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tlb_source: String,
    pub hugepage_pools: Vec<HugePagePool>,
    pub thp: ThpSettings,
    pub pmu: PmuStatus,
    pub prefetch_instructions: Vec<String>,
    /// Governor, boost, SMT, NUMA nodes, KPTI and the kernel command line.
    pub system: system::SystemState,
    /// The core clock measured at the start of the run, with each chain's
    /// figure (or why it is not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_clock: Option<ClockReading>,
    /// Where the cache levels end, measured at the start of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_levels: Option<levels::MeasuredLevels>,
}

/// The size used where a working set must outgrow the caches, and where it
/// came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlcSource {
    /// The measured start of the far (memory) level.
    Measured,
    /// A plausible claim of CPUID or sysfs.
    Claimed,
    /// Neither: a default.
    Assumed,
}

/// When nothing is known: 32 MiB.
pub const ASSUMED_LLC: Bytes = Bytes(32 * MIB);

impl Fingerprint {
    /// Reads the fingerprint of the machine this runs on.
    pub fn collect() -> Fingerprint {
        Fingerprint::read(&Source::live())
    }

    /// Reads the fingerprint of `src`: this machine or a recording.
    pub fn read(src: &Source) -> Fingerprint {
        let c = src.cpuid();
        let identity = cpuid::identity(&c, src.live);
        let (logical, cores, sockets) = sysfs::topology(&src.path("sys/devices/system/cpu"));
        let cpuinfo = src.read("proc/cpuinfo").unwrap_or_default();
        let nominal = nominal_clocks(src, &c, &identity, &cpuinfo);
        let freq = identity.base_frequency_hz.or_else(|| sysfs::cpuinfo_mhz(&cpuinfo));
        let (total, available) = sysfs::meminfo(&src.read("proc/meminfo").unwrap_or_default());
        let caches = merge_caches(sysfs::caches(&src.path("sys/devices/system/cpu")), cpuid::caches(&c), logical);
        let (tlbs, tlb_source) = cpuid::tlbs(&c);
        Fingerprint {
            hostname: src.read("proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
            kernel: src.read("proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            arch: if src.live { std::env::consts::ARCH.into() } else { src.read("arch").unwrap_or("x86_64".into()) },
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

    /// The last-level data (or unified) cache, as claimed.
    fn llc(&self) -> Option<&Cache> {
        self.caches.iter().filter(|c| c.is_data()).max_by_key(|c| c.level)
    }

    /// The size of one instance of the claimed last-level cache.
    pub fn llc_bytes(&self) -> Option<Bytes> {
        self.llc().map(|c| c.size_bytes)
    }

    /// The claimed last-level cache of the whole machine: one instance's
    /// size times the instances (logical CPUs over the CPUs sharing one).
    pub fn llc_total_bytes(&self) -> Option<Bytes> {
        let c = self.llc()?;
        let instances = (self.cpu.logical_cpus as u64).div_ceil(c.shared_by_cpus.max(1) as u64).max(1);
        Some(Bytes(c.size_bytes.0 * instances))
    }

    /// The size a working set must outgrow to reach memory, and its
    /// source: the measured start of the far level; else the claimed
    /// last-level cache (all instances) where the claim is plausible; else
    /// [`ASSUMED_LLC`]. An implausible claim is never used.
    ///
    /// A plausible claim larger than the measured far level wins: a guest
    /// shares its host's cache, and a cache full of a neighbour's lines
    /// now may be free for the next experiment, so a working set that must
    /// outgrow the cache outgrows the claim too.
    pub fn sizing_llc(&self) -> (Bytes, LlcSource) {
        let far = self.measured_levels.as_ref().and_then(|m| m.found.far_from);
        let claimed = match self.llc() {
            Some(c) if c.plausible() => Some(self.llc_total_bytes().unwrap_or(ASSUMED_LLC)),
            _ => None,
        };
        match (far, claimed) {
            (Some(m), Some(c)) if c > m => (c, LlcSource::Claimed),
            (Some(m), _) => (m, LlcSource::Measured),
            (None, Some(c)) => (c, LlcSource::Claimed),
            (None, None) => (ASSUMED_LLC, LlcSource::Assumed),
        }
    }

    /// The data caches a working set's steady state fills, summed: the
    /// measured far level's start where measured, else the plausible claims.
    pub fn cached_bytes(&self) -> Bytes {
        let (llc, source) = self.sizing_llc();
        if source == LlcSource::Measured {
            return llc;
        }
        let claimed: u64 = self.caches.iter().filter(|c| c.is_data() && c.plausible()).map(|c| c.size_bytes.0).sum();
        Bytes(claimed.max(llc.0))
    }

    /// Plausible data caches as (name, size) for naming knees.
    pub fn plausible_data_caches(&self) -> Vec<(String, Bytes)> {
        self.caches.iter().filter(|c| c.is_data() && c.plausible()).map(|c| (c.name(), c.size_bytes)).collect()
    }

    pub fn line_bytes(&self) -> u64 {
        self.caches.first().map(|c| c.line_bytes).unwrap_or(64)
    }

    /// The hugetlb pool for `page`, if the kernel has one.
    pub fn pool(&self, page: Bytes) -> Option<&HugePagePool> {
        self.hugepage_pools.iter().find(|p| p.page_size_bytes == page)
    }

    /// Data TLB entries per level for `page`: the load (or data, or unified)
    /// structure's entries, largest first-level figure wins. Implausible
    /// figures are left out.
    pub fn dtlb_entries(&self, level: u8, page: Bytes) -> Option<u32> {
        self.tlbs
            .iter()
            .filter(|t| t.level == level && t.page_size_bytes == page && t.kind != "store")
            .filter(|t| claims::tlb_problems(t).is_empty())
            .filter_map(|t| t.entries)
            .max()
    }

    /// Caches whose sysfs and CPUID sizes disagree.
    pub fn cache_disagreements(&self) -> Vec<&Cache> {
        self.caches.iter().filter(|c| c.cpuid_size_bytes.is_some_and(|s| s != c.size_bytes)).collect()
    }

    /// The nominal clocks, for judging a measured core clock.
    pub fn nominal_clocks(&self) -> &[Nominal] {
        &self.cpu.nominal_clocks
    }

    /// Checks the recorded cache claims again (CPUID's own geometry is not
    /// recorded, so only what the document holds), adding any problem the
    /// document lacks: an old document's 480 MiB L3 is implausible too.
    pub fn recheck_claims(&mut self) {
        let problems = problems_of(&self.caches, &[], self.cpu.logical_cpus);
        for (cache, found) in self.caches.iter_mut().zip(problems) {
            for p in found {
                if !cache.implausible.contains(&p) {
                    cache.implausible.push(p);
                }
            }
        }
    }

    /// The believed core clock measured at the start of the run, in GHz.
    pub fn core_ghz(&self) -> Option<f64> {
        self.core_clock.as_ref().and_then(|r| r.clock.as_ref()).map(|c| c.ghz)
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

/// Each cache's problems, checked against CPUID's description of it (where
/// given) and the data or unified level below it.
fn problems_of(caches: &[Cache], cpuid: &[Option<cpuid::CpuidCache>], logical_cpus: usize) -> Vec<Vec<String>> {
    caches
        .iter()
        .enumerate()
        .map(|(i, cache)| {
            let lower = caches.iter().filter(|c| c.is_data() && c.level + 1 == cache.level).map(|c| c.size_bytes).max();
            let own = cpuid.get(i).and_then(|c| c.as_ref());
            claims::cache_problems(cache, own, logical_cpus, lower.filter(|_| cache.is_data()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut f = Fingerprint::collect();
        f.measured_levels = None;
        f.caches = merge_caches(vec![sys_l3(Bytes(480 << 20), 491520)], vec![], 2);
        f.cpu.logical_cpus = 2;
        assert!(!f.caches[0].plausible());
        assert_eq!(f.sizing_llc(), (ASSUMED_LLC, LlcSource::Assumed), "the 480 MiB claim is not used");
        f.caches = merge_caches(vec![sys_l3(Bytes(32 << 20), 32768)], vec![], 2);
        assert_eq!(f.sizing_llc(), (Bytes(32 << 20), LlcSource::Claimed));
    }

    #[test]
    fn fingerprint_of_this_machine_is_coherent() {
        let f = Fingerprint::collect();
        assert!(f.cpu.logical_cpus >= 1);
        assert!(f.llc_bytes().is_some_and(|b| b.0 >= 1 << 16), "{:?}", f.caches);
        assert!(f.line_bytes().is_power_of_two());
        assert!(!f.thp.enabled.is_empty());
        if !f.pmu.hardware_counters {
            assert!(f.pmu.reason.is_some() && f.pmu.fix.is_some());
        }
    }
}
