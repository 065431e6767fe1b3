//! What the CPU says of itself through CPUID: identity, vector ISA, caches
//! (leaf 4 on Intel, 0x8000001D on AMD), data TLBs per page size (Intel
//! leaves 0x18 and 2; AMD leaves 0x80000005/6/19) and the prefetch
//! instructions it implements. Read through a [`CpuidSource`], so a
//! recorded dump goes through the same code as the CPU. A TLB the CPU does
//! not describe is absent ("not reported"), never 0 entries.

use super::source::CpuidSource;
use crate::units::Bytes;
pub use memperf_model::machine::cpuid::{CpuIdentity, CpuidCache, TlbLevel, PAGE_1G, PAGE_2M, PAGE_4K};
use raw_cpuid::{CacheType, CpuId, DatType};

type Cpu = CpuId<CpuidSource>;

/// The identity of the CPU this runs on.
pub fn this_identity() -> CpuIdentity {
    if cfg!(target_arch = "aarch64") {
        let src = super::source::Source::live();
        let cpuinfo = src.read("proc/cpuinfo").unwrap_or_default();
        return super::arm::identity(&src, &cpuinfo);
    }
    identity(&CpuId::with_cpuid_reader(CpuidSource::native()), true)
}

/// The CPU's identity. `live`: the running CPU, whose vector extensions are
/// also checked against what the OS enables; a recording has CPUID's word.
pub fn identity(c: &Cpu, live: bool) -> CpuIdentity {
    let fi = c.get_feature_info();
    let Some(vendor) = c.get_vendor_info() else {
        return CpuIdentity { vendor: std::env::consts::ARCH.into(), ..Default::default() };
    };
    CpuIdentity {
        vendor: vendor.as_str().to_string(),
        model_name: c.get_processor_brand_string().map(|b| b.as_str().trim().to_string()).unwrap_or_default(),
        family: fi.as_ref().map(|f| f.family_id() as u32).unwrap_or(0),
        model: fi.as_ref().map(|f| f.model_id() as u32).unwrap_or(0),
        stepping: fi.as_ref().map(|f| f.stepping_id() as u32).unwrap_or(0),
        hypervisor: c.get_hypervisor_info().map(|h| format!("{:?}", h.identify())),
        vector_isa: vector_isa(c, live),
        base_frequency_hz: c
            .get_processor_frequency_info()
            .map(|f| f.processor_base_frequency() as f64 * 1e6)
            .filter(|&hz| hz > 0.0),
    }
}

fn vector_isa(c: &Cpu, live: bool) -> Vec<String> {
    let ext = c.get_extended_feature_info();
    let fi = c.get_feature_info();
    let claims = [
        ("avx512f", ext.as_ref().is_some_and(|e| e.has_avx512f())),
        ("avx2", ext.as_ref().is_some_and(|e| e.has_avx2())),
        ("sse2", fi.as_ref().is_some_and(|f| f.has_sse2())),
    ];
    claims
        .iter()
        .filter(|(name, claimed)| *claimed && (!live || os_enables(name)))
        .map(|(n, _)| n.to_string())
        .collect()
}

/// Whether the OS saves the vector state this extension needs.
#[cfg(target_arch = "x86_64")]
fn os_enables(name: &str) -> bool {
    match name {
        "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
        "avx2" => std::arch::is_x86_feature_detected!("avx2"),
        _ => std::arch::is_x86_feature_detected!("sse2"),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn os_enables(_name: &str) -> bool {
    false
}

/// Caches as CPUID describes them (leaf 4, or AMD's 0x8000001D).
pub fn caches(c: &Cpu) -> Vec<CpuidCache> {
    let Some(params) = c.get_cache_parameters() else { return Vec::new() };
    params
        .map(|p| CpuidCache {
            level: p.level(),
            kind: match p.cache_type() {
                CacheType::Data => "Data",
                CacheType::Instruction => "Instruction",
                CacheType::Unified => "Unified",
                _ => "Other",
            }
            .to_string(),
            size_bytes: Bytes(
                (p.associativity() * p.physical_line_partitions() * p.coherency_line_size() * p.sets()) as u64,
            ),
            line_bytes: p.coherency_line_size() as u64,
            ways: p.associativity() as u64,
            sets: p.sets() as u64,
            partitions: p.physical_line_partitions() as u64,
            max_sharing: p.max_cores_for_cache() as u64,
        })
        .collect()
}

/// The data TLBs and the CPUID leaf that described them ("not reported"
/// with none when no leaf does).
pub fn tlbs(c: &Cpu) -> (Vec<TlbLevel>, &'static str) {
    let leaf18 = leaf18_tlbs(c);
    if !leaf18.is_empty() {
        return (leaf18, "CPUID leaf 0x18");
    }
    let leaf2: Vec<TlbLevel> = c.get_cache_info().into_iter().flatten().flat_map(|d| leaf2_dtlb(d.num)).collect();
    if !leaf2.is_empty() {
        return (leaf2, "CPUID leaf 2");
    }
    // AMD's leaves: Intel CPUs answer them with zeros in the TLB fields.
    let is_amd = c.get_vendor_info().is_some_and(|v| matches!(v.as_str(), "AuthenticAMD" | "HygonGenuine"));
    let amd = if is_amd { amd_tlbs(c) } else { Vec::new() };
    if amd.iter().any(|t| t.entries.is_some()) {
        return (amd, "CPUID leaves 0x80000005/6/19");
    }
    (Vec::new(), "not reported")
}

fn leaf18_tlbs(c: &Cpu) -> Vec<TlbLevel> {
    let mut out = Vec::new();
    for d in c.get_deterministic_address_translation_info().into_iter().flatten() {
        let kind = match d.cache_type() {
            DatType::DataTLB => "data",
            DatType::LoadOnly => "load",
            DatType::StoreOnly => "store",
            DatType::UnifiedTLB => "unified",
            _ => continue,
        };
        let entries = d.ways() as u32 * d.sets();
        let sizes = [(d.has_4k_entries(), PAGE_4K), (d.has_2mb_entries(), PAGE_2M), (d.has_1gb_entries(), PAGE_1G)];
        let n_sizes = sizes.iter().filter(|s| s.0).count();
        for (has, size) in sizes {
            if has && entries > 0 {
                out.push(TlbLevel {
                    level: d.cache_level(),
                    kind: kind.into(),
                    page_size_bytes: size,
                    entries: Some(entries),
                    shared_with_other_sizes: n_sizes > 1,
                });
            }
        }
    }
    out
}

fn amd_tlbs(c: &Cpu) -> Vec<TlbLevel> {
    let mut out = Vec::new();
    let mut push = |level: u8, page: Bytes, entries: u32| {
        if entries > 0 {
            out.push(TlbLevel {
                level,
                kind: "data".into(),
                page_size_bytes: page,
                entries: Some(entries),
                shared_with_other_sizes: false,
            })
        }
    };
    if let Some(l1) = c.get_l1_cache_and_tlb_info() {
        push(1, PAGE_4K, l1.dtlb_4k_size() as u32);
        push(1, PAGE_2M, l1.dtlb_2m_4m_size() as u32);
    }
    if let Some(l2) = c.get_l2_l3_cache_and_tlb_info() {
        push(2, PAGE_4K, l2.dtlb_4k_size() as u32);
        push(2, PAGE_2M, l2.dtlb_2m_4m_size() as u32);
    }
    if let Some(g) = c.get_tlb_1gb_page_info() {
        push(1, PAGE_1G, g.dtlb_l1_1gb_size() as u32);
        push(2, PAGE_1G, g.dtlb_l2_1gb_size() as u32);
    }
    out
}

/// The prefetch instructions this CPU implements.
pub fn prefetch_instructions(c: &Cpu) -> Vec<String> {
    if c.get_vendor_info().is_none() {
        return if cfg!(target_arch = "aarch64") {
            ["prfm pldl1keep", "prfm pldl2keep", "prfm pldl3keep", "prfm pldl1strm", "prfm pstl1keep"]
                .map(String::from)
                .to_vec()
        } else {
            Vec::new()
        };
    }
    let mut v = Vec::new();
    if c.get_feature_info().is_some_and(|f| f.has_sse()) {
        v.extend(["prefetcht0", "prefetcht1", "prefetcht2", "prefetchnta"].map(String::from));
    }
    // PREFETCHW is advertised by the 3DNowPrefetch bit on Intel and AMD.
    if c.get_extended_processor_and_feature_identifiers().is_some_and(|e| e.has_prefetchw()) {
        v.push("prefetchw".into());
    }
    if c.get_extended_feature_info().is_some_and(|e| e.has_prefetchwt1()) {
        v.push("prefetchwt1".into());
    }
    v
}

/// Whether the TSC runs at a constant rate whatever the core's clock
/// (CPUID 0x80000007 EDX bit 8).
pub fn invariant_tsc(c: &Cpu) -> bool {
    c.get_advanced_power_mgmt_info().is_some_and(|a| a.has_invariant_tsc())
}

/// Data-TLB descriptors of Intel CPUID leaf 2 (SDM vol. 2, table 3-12):
/// (descriptor, level, kind, [(page size, entries)]). 4 MiB entries are
/// listed as 2 MiB, the size long mode uses.
type Leaf2Dtlb = (u8, u8, &'static str, &'static [(Bytes, u32)]);

const LEAF2_DTLB: &[Leaf2Dtlb] = &[
    (0x03, 1, "data", &[(PAGE_4K, 64)]),
    (0x04, 1, "data", &[(PAGE_2M, 8)]),
    (0x56, 1, "data", &[(PAGE_2M, 16)]),
    (0x57, 1, "data", &[(PAGE_4K, 16)]),
    (0x59, 1, "data", &[(PAGE_4K, 16)]),
    (0x5A, 1, "data", &[(PAGE_2M, 32)]),
    (0x5B, 1, "data", &[(PAGE_4K, 64), (PAGE_2M, 64)]),
    (0x5C, 1, "data", &[(PAGE_4K, 128), (PAGE_2M, 128)]),
    (0x5D, 1, "data", &[(PAGE_4K, 256), (PAGE_2M, 256)]),
    (0x63, 1, "data", &[(PAGE_2M, 32), (PAGE_1G, 4)]),
    (0x64, 1, "data", &[(PAGE_4K, 512)]),
    (0x6B, 1, "data", &[(PAGE_4K, 256)]),
    (0x6C, 1, "data", &[(PAGE_2M, 128)]),
    (0x6D, 1, "data", &[(PAGE_1G, 16)]),
    (0xA0, 1, "data", &[(PAGE_4K, 32)]),
    (0xB3, 1, "data", &[(PAGE_4K, 128)]),
    (0xB4, 1, "data", &[(PAGE_4K, 256)]),
    (0xBA, 1, "data", &[(PAGE_4K, 64)]),
    (0xC0, 1, "data", &[(PAGE_4K, 8), (PAGE_2M, 8)]),
    (0xC1, 2, "unified", &[(PAGE_4K, 1024), (PAGE_2M, 1024)]),
    (0xC2, 1, "data", &[(PAGE_2M, 16)]),
    (0xC3, 2, "unified", &[(PAGE_4K, 1536), (PAGE_2M, 1536), (PAGE_1G, 16)]),
    (0xC4, 1, "data", &[(PAGE_2M, 32)]),
    (0xCA, 2, "unified", &[(PAGE_4K, 512)]),
];

/// The data TLBs one leaf-2 descriptor byte describes (none for others).
pub fn leaf2_dtlb(descriptor: u8) -> Vec<TlbLevel> {
    LEAF2_DTLB
        .iter()
        .filter(|d| d.0 == descriptor)
        .flat_map(|&(_, level, kind, sizes)| {
            let shared = sizes.iter().filter(|s| s.0 != PAGE_1G).count() > 1;
            sizes.iter().map(move |&(page, entries)| TlbLevel {
                level,
                kind: kind.into(),
                page_size_bytes: page,
                entries: Some(entries),
                shared_with_other_sizes: shared && page != PAGE_1G,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_is_entries_times_page() {
        let t = TlbLevel {
            level: 2,
            kind: "unified".into(),
            page_size_bytes: PAGE_2M,
            entries: Some(1024),
            shared_with_other_sizes: true,
        };
        assert_eq!(t.reach(), Some(Bytes(2 << 30)));
        let unknown = TlbLevel { entries: None, ..t };
        assert_eq!(unknown.reach(), None);
    }

    #[test]
    fn leaf2_descriptors_decode() {
        let c3 = leaf2_dtlb(0xC3);
        assert_eq!(c3.len(), 3);
        assert_eq!(c3[2].page_size_bytes, PAGE_1G);
        assert_eq!(c3[2].entries, Some(16));
        assert!(c3[0].shared_with_other_sizes && !c3[2].shared_with_other_sizes);
        assert!(leaf2_dtlb(0xFF).is_empty());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn this_cpu_describes_itself() {
        let c = CpuId::with_cpuid_reader(CpuidSource::native());
        let id = identity(&c, true);
        assert!(!id.vendor.is_empty());
        assert!(id.vector_isa.contains(&"sse2".to_string()));
        assert!(prefetch_instructions(&c).contains(&"prefetcht0".to_string()));
        for t in tlbs(&c).0 {
            assert_ne!(t.entries, Some(0), "zero entries must be reported as unknown");
        }
        for k in caches(&c) {
            assert_eq!(k.size_bytes.0, k.sets * k.ways * k.partitions * k.line_bytes);
        }
    }
}
