//! The machine fingerprint: CPU, caches, TLBs per page size, huge-page
//! pools, THP mode, PMU availability, prefetch instructions, kernel, host.
//!
//! Caches come from sysfs (what the OS, and so this VM, sees) cross-checked
//! against CPUID; where they disagree the fingerprint keeps both and says so.

pub mod cpuid;
pub mod sysfs;
pub mod system;

use crate::counters::{self, PmuStatus};
use crate::units::Bytes;
use cpuid::{CpuIdentity, TlbLevel};
use serde::{Deserialize, Serialize};
use std::path::Path;
use sysfs::{HugePagePool, ThpSettings};

/// One cache level as reported, with the CPUID cross-check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u8,
    pub kind: String,
    pub size_bytes: Bytes,
    pub line_bytes: u64,
    pub ways: Option<u64>,
    pub shared_by_cpus: usize,
    /// The size CPUID reports for the same level and kind, if any.
    pub cpuid_size_bytes: Option<Bytes>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    #[serde(flatten)]
    pub identity: CpuIdentity,
    pub logical_cpus: usize,
    pub physical_cores: usize,
    pub sockets: usize,
    /// Nominal frequency used to convert ns to cycles (CPUID base frequency,
    /// else /proc/cpuinfo); turbo and power states make this approximate.
    pub nominal_frequency_hz: Option<f64>,
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
    pub hugepage_pools: Vec<HugePagePool>,
    pub thp: ThpSettings,
    pub pmu: PmuStatus,
    pub prefetch_instructions: Vec<String>,
    /// Governor, boost, SMT, NUMA nodes, KPTI and the kernel command line.
    pub system: system::SystemState,
}

impl Fingerprint {
    /// Reads the fingerprint of the machine this runs on.
    pub fn collect() -> Fingerprint {
        let cpu_root = Path::new("/sys/devices/system/cpu");
        let identity = cpuid::identity();
        let (logical, cores, sockets) = sysfs::topology(cpu_root);
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let freq = identity.base_frequency_hz.or_else(|| sysfs::cpuinfo_mhz(&cpuinfo));
        let (total, available) = sysfs::meminfo(&std::fs::read_to_string("/proc/meminfo").unwrap_or_default());
        Fingerprint {
            hostname: sysfs::hostname(),
            kernel: sysfs::kernel_release(),
            arch: std::env::consts::ARCH.into(),
            cpu: Cpu { identity, logical_cpus: logical, physical_cores: cores, sockets, nominal_frequency_hz: freq },
            memory_total_bytes: total,
            memory_available_bytes: available,
            caches: merge_caches(sysfs::caches(cpu_root), cpuid::caches()),
            tlbs: cpuid::tlbs(),
            hugepage_pools: sysfs::hugepage_pools(Path::new("/sys/kernel/mm/hugepages")),
            thp: sysfs::thp(Path::new("/sys/kernel/mm/transparent_hugepage")),
            pmu: counters::probe(&counters::PerfBackend, counters::read_paranoid()),
            prefetch_instructions: cpuid::prefetch_instructions(),
            system: system::collect(Path::new("/sys"), Path::new("/proc")),
        }
    }

    /// The last-level data (or unified) cache.
    fn llc(&self) -> Option<&Cache> {
        self.caches.iter().filter(|c| c.kind != "Instruction").max_by_key(|c| c.level)
    }

    /// The size of one instance of the last-level cache.
    pub fn llc_bytes(&self) -> Option<Bytes> {
        self.llc().map(|c| c.size_bytes)
    }

    /// The last-level cache of the whole machine: one instance's size times
    /// the instances (logical CPUs over the CPUs sharing one).
    pub fn llc_total_bytes(&self) -> Option<Bytes> {
        let c = self.llc()?;
        let instances = (self.cpu.logical_cpus as u64).div_ceil(c.shared_by_cpus.max(1) as u64).max(1);
        Some(Bytes(c.size_bytes.0 * instances))
    }

    pub fn line_bytes(&self) -> u64 {
        self.caches.first().map(|c| c.line_bytes).unwrap_or(64)
    }

    /// The hugetlb pool for `page`, if the kernel has one.
    pub fn pool(&self, page: Bytes) -> Option<&HugePagePool> {
        self.hugepage_pools.iter().find(|p| p.page_size_bytes == page)
    }

    /// Data TLB entries per level for `page`: the load (or data, or unified)
    /// structure's entries, largest first-level figure wins.
    pub fn dtlb_entries(&self, level: u8, page: Bytes) -> Option<u32> {
        self.tlbs
            .iter()
            .filter(|t| t.level == level && t.page_size_bytes == page && t.kind != "store")
            .filter_map(|t| t.entries)
            .max()
    }

    /// Caches whose sysfs and CPUID sizes disagree.
    pub fn cache_disagreements(&self) -> Vec<&Cache> {
        self.caches.iter().filter(|c| c.cpuid_size_bytes.is_some_and(|s| s != c.size_bytes)).collect()
    }
}

/// sysfs is authoritative (it is what this VM was given); CPUID's figure is
/// kept beside it. Without sysfs, CPUID alone.
pub fn merge_caches(sys: Vec<sysfs::SysfsCache>, cpu: Vec<cpuid::CpuidCache>) -> Vec<Cache> {
    if sys.is_empty() {
        return cpu
            .into_iter()
            .map(|c| Cache {
                level: c.level,
                kind: c.kind,
                size_bytes: c.size_bytes,
                line_bytes: c.line_bytes,
                ways: Some(c.ways),
                shared_by_cpus: 1,
                cpuid_size_bytes: Some(c.size_bytes),
            })
            .collect();
    }
    sys.into_iter()
        .map(|s| {
            let cpuid_size = cpu.iter().find(|c| c.level == s.level && c.kind == s.kind).map(|c| c.size_bytes);
            Cache {
                level: s.level,
                kind: s.kind,
                size_bytes: s.size_bytes,
                line_bytes: s.line_bytes,
                ways: s.ways,
                shared_by_cpus: s.shared_by_cpus,
                cpuid_size_bytes: cpuid_size,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_both_sizes() {
        let sys = vec![sysfs::SysfsCache {
            level: 3,
            kind: "Unified".into(),
            size_bytes: Bytes(32 << 20),
            line_bytes: 64,
            ways: Some(16),
            shared_cpu_list: "0-1".into(),
            shared_by_cpus: 2,
        }];
        let cpu = vec![cpuid::CpuidCache {
            level: 3,
            kind: "Unified".into(),
            size_bytes: Bytes(384 << 20),
            line_bytes: 64,
            ways: 16,
        }];
        let merged = merge_caches(sys, cpu);
        assert_eq!(merged[0].size_bytes, Bytes(32 << 20));
        assert_eq!(merged[0].cpuid_size_bytes, Some(Bytes(384 << 20)));
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
