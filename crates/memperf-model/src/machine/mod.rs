//! The machine fingerprint as the document holds it: CPU, caches, TLBs,
//! huge-page pools, THP mode, PMU, system state, and beside the claims what
//! memperf measured (the core clock, where the cache levels end). What
//! each figure means for sizing is here; reading it from a machine is
//! `memperf::machine`.

pub mod claims;
pub mod cpuid;
pub mod levels;
pub mod sysfs;
pub mod system;

use crate::counters::PmuStatus;
use crate::timing::core_clock::{ClockReading, Nominal};
use crate::units::{Bytes, MIB};
use cpuid::{CpuIdentity, TlbLevel};
use serde::{Deserialize, Serialize};
use sysfs::{HugePagePool, ThpSettings};

/// One cache level as reported, with the CPUID cross-check and the
/// plausibility of the claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cpu {
    #[serde(flatten)]
    pub identity: CpuIdentity,
    #[schemars(range(min = 1))]
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

/// One kind of core of the machine (a MIDR part on Arm, a core type on
/// x86 hybrids, else told apart by private caches), with its CPUs and the
/// caches the kernel reports for each cluster of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CoreKind {
    pub name: String,
    /// The kind's CPUs (`0-3,8`).
    pub cpus: String,
    /// (CPUs of a cluster, its caches such as "L2 1MiB"; empty: not reported).
    pub clusters: Vec<(String, Vec<String>)>,
    /// The data TLBs this kind's CPUID claims, read on one of its CPUs
    /// ("L1 load 4KiB: 64 entries"); empty where none is readable (Arm has
    /// no such register; a recording holds one CPU's CPUID only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tlbs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fingerprint {
    pub hostname: String,
    pub kernel: String,
    pub arch: String,
    /// Why the figures are not this CPU's, where memperf ran under
    /// emulation (built for another architecture than /proc/cpuinfo's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<String>,
    pub cpu: Cpu,
    /// The kinds of core, where they could be read (one on most machines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub core_kinds: Vec<CoreKind>,
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

/// Inside memory, doubling a sequential read changes its rate by less than
/// this (at that doubling, and on average to the probe's largest size).
pub const READ_FLAT: f64 = 0.05;
/// Inside memory, doubling a random chase's working set changes its
/// latency by less than this.
pub const CHASE_FLAT: f64 = 0.07;

/// When nothing is known: 32 MiB.
pub const ASSUMED_LLC: Bytes = Bytes(32 * MIB);

impl Fingerprint {
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

    /// The claimed last-level cache, all its instances, where the claim is
    /// plausible (never a host's cache described to a guest).
    pub fn plausible_llc_total(&self) -> Option<Bytes> {
        self.llc().filter(|c| c.plausible())?;
        self.llc_total_bytes()
    }

    /// [`plausible_llc_total`](Self::plausible_llc_total), else
    /// [`ASSUMED_LLC`]: the cache a region read from the claims alone
    /// must outgrow (never the probe, which moves from run to run).
    pub fn claimed_llc_or_assumed(&self) -> Bytes {
        self.plausible_llc_total().unwrap_or(ASSUMED_LLC)
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
        let claimed = self.plausible_llc_total();
        match (far, claimed) {
            (Some(m), Some(c)) if c > m => (c, LlcSource::Claimed),
            (Some(m), _) => (m, LlcSource::Measured),
            (None, Some(c)) => (c, LlcSource::Claimed),
            (None, None) => (ASSUMED_LLC, LlcSource::Assumed),
        }
    }

    /// Where the probe verified that a random chase is in memory (its
    /// latency flat from there past every plausible cache), if it did:
    /// what sizes working sets.
    pub fn chase_memory_from(&self) -> Option<Bytes> {
        self.measured_levels.as_ref().and_then(|m| m.found.memory_from)
    }

    /// Where a random chase is called memory's: from the first size whose
    /// doubling agreed within [`CHASE_FLAT`], the two measured in the same
    /// repetitions, and at the latest from [`Self::memory_by_size`].
    pub fn chase_in_memory_from(&self) -> Bytes {
        let by_size = self.memory_by_size();
        self.memory_evidence(levels::DoublingKind::Chase, self.chase_memory_from()).map_or(by_size, |p| p.min(by_size))
    }

    /// Where this run verified one thread's read in memory: by its
    /// doublings, or, in a document recorded before them, by the sweep.
    pub fn read_verified_from(&self) -> Option<Bytes> {
        self.memory_evidence(levels::DoublingKind::Read, self.read_memory_from())
    }

    /// Where this run's doublings say memory begins for `kind`; in a
    /// document recorded before them, `before` (the probe's own finding).
    fn memory_evidence(&self, kind: levels::DoublingKind, before: Option<Bytes>) -> Option<Bytes> {
        let m = self.measured_levels.as_ref()?;
        if m.doublings.is_some() {
            m.memory_by_doublings(kind)
        } else {
            before
        }
    }

    /// Where memory begins by size alone: eight times the larger of the
    /// plausible last-level cache (else the assumed one) and the far level
    /// the probe measured. Past it no cache a host hands a guest holds a
    /// working set, whatever a moving host did to the probe's points, so
    /// reads and chases there are memory's.
    pub fn memory_by_size(&self) -> Bytes {
        let far = self.measured_levels.as_ref().and_then(|m| m.found.far_from).unwrap_or_default();
        Bytes(8 * self.claimed_llc_or_assumed().0.max(far.0))
    }

    /// Where the probe verified that one thread's sequential read is in
    /// memory (its rate changing by under 5% when the size doubles), if it
    /// did: what sizes arrays.
    pub fn read_memory_from(&self) -> Option<Bytes> {
        self.measured_levels.as_ref().and_then(|m| m.read_memory_from(READ_FLAT))
    }

    /// Where a read by `threads` threads at once is in memory by this
    /// run's evidence: one thread's from where the probe verified it; many
    /// threads reach every instance of the last-level cache, so their
    /// array must also outgrow all of them twice over (a plausible claim,
    /// else the assumed one; never a host's cache described to a guest).
    pub fn read_memory_from_on(&self, threads: usize) -> Option<Bytes> {
        let one = self.read_memory_from()?;
        Some(if threads > 1 { one.max(Bytes(2 * self.claimed_llc_or_assumed().0)) } else { one })
    }

    /// Where a read by `threads` threads is called memory's: one thread's
    /// from the first size whose doubling agreed within [`READ_FLAT`] in the
    /// same repetitions (many threads' also past twice every instance of
    /// the last-level cache, as [`Self::read_memory_from_on`] sizes them),
    /// and at the latest from [`Self::memory_by_size`].
    pub fn read_in_memory_from_on(&self, threads: usize) -> Bytes {
        let by_size = self.memory_by_size();
        let one = self.read_verified_from();
        let many = |one: Bytes| if threads > 1 { one.max(Bytes(2 * self.claimed_llc_or_assumed().0)) } else { one };
        one.map(many).map_or(by_size, |p| p.min(by_size))
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

/// Each cache's problems, checked against CPUID's description of it (where
/// given) and the data or unified level below it.
pub fn problems_of(caches: &[Cache], cpuid: &[Option<cpuid::CpuidCache>], logical_cpus: usize) -> Vec<Vec<String>> {
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
